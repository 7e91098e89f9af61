/**
 * Every MCP tool against hostile arguments (issue 15, item 7): each argument of each tool given
 * every wrong type, each tool called with nothing, and every agent URL given hostile strings. Each
 * call answers isError with a clear message (a coded error naming what was wrong), and the server
 * keeps answering throughout, in both protocol eras (a 2025-11-25 session, 2026-07-28 requests).
 * Foreign Host and Origin headers on the HTTP transports are transports.test.ts' (403 for both).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { reportFigures } from "../helpers/figures.js"
import { appLayer, type AppRuntime, callTool, connectToolsOf, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
let runtime: AppRuntime
type Tools = Array<{ name: string; inputSchema: { properties?: Record<string, { type?: string }>; required?: Array<string> } }>
/** Bad calls made in the current era. */
let tried = 0

beforeAll(() => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
})

afterAll(async () => {
  await runtime?.dispose()
  home.cleanup()
})

/** A value of every JSON type but `type`; none for an argument of no type, which takes any JSON value (send_message `data`). */
const wrongValuesFor = (type: string | undefined): ReadonlyArray<unknown> => {
  if (type === undefined) return []
  const all: Record<string, unknown> = {
    string: "text",
    number: 12.5,
    integer: 7,
    boolean: true,
    object: { __proto__: { polluted: true }, constructor: 1 },
    array: [1, "a"],
    null: null
  }
  const taken = type === "number" ? ["number", "integer"] : [type]
  return Object.entries(all).filter(([name]) => !taken.includes(name)).map(([, value]) => value)
}

/** A closed port on loopback: a call that gets past its arguments fails fast, reaching nothing. */
const CLOSED = "http://127.0.0.1:9"

/** Arguments every tool takes happily, to which one hostile value is added. */
const saneArguments = (tool: Tools[number]): Record<string, unknown> => {
  const properties = tool.inputSchema.properties ?? {}
  const sane: Record<string, unknown> = {}
  for (const name of tool.inputSchema.required ?? []) {
    sane[name] = properties[name]?.type === "string"
      ? (name.includes("url") ? CLOSED : "x")
      : undefined
  }
  if ("agent_url" in properties) sane["agent_url"] = CLOSED
  return sane
}

const expectClearError = (result: CallToolResult, what: string) => {
  expect(result.isError, `${what}: ${textOf(result).slice(0, 200)}`).toBe(true)
  const text = textOf(result)
  expect(text.length, what).toBeGreaterThan(10)
  expect(text, what).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
  tried++
}

describe.each(["legacy", "modern"] as const)("%s era: every tool, every argument, every wrong type", (era) => {
  let mcp: Client
  let tools: Tools

  beforeAll(async () => {
    tried = 0
    mcp = await connectToolsOf(era, contextFor(runtime))
    tools = (await mcp.listTools()).tools as Tools
  })

  afterAll(() => mcp?.close())

  const stillServing = async () => expect((await mcp.listTools()).tools.length).toBe(tools.length)

  it("answers isError with a message naming the argument, and keeps serving", async () => {
    for (const tool of tools) {
      for (const [name, schema] of Object.entries(tool.inputSchema.properties ?? {})) {
        // Each modern request builds its own server: there, one wrong type per argument keeps the file quick.
        for (const value of wrongValuesFor(schema.type).slice(0, era === "legacy" ? undefined : 1)) {
          const result = await callTool(mcp, tool.name, { ...saneArguments(tool), [name]: value })
          expectClearError(result, `${tool.name}.${name} = ${JSON.stringify(value)}`)
          expect(textOf(result), `${tool.name}.${name}`).toContain(name)
        }
      }
      await stillServing()
    }
  })

  it("answers a call without its required arguments with isError", async () => {
    for (const tool of tools) {
      const result = await callTool(mcp, tool.name, {})
      // Tools with nothing required (list_sessions, get_push_notifications, clear_session_data for all) answer normally.
      if ((tool.inputSchema.required ?? []).length > 0) expectClearError(result, `${tool.name} {}`)
      else expect(result.content.length).toBeGreaterThan(0)
    }
    await stillServing()
  })

  it("answers hostile agent URLs with isError on every tool that contacts an agent", async () => {
    const hostile = [
      "",
      " ",
      "file:///etc/passwd",
      "javascript:alert(1)",
      "ftp://127.0.0.1/x",
      "http://",
      "http://user:pass@127.0.0.1:9/",
      "\u0000http://127.0.0.1",
      "http://127.0.0.1:99999",
      `http://${"a".repeat(100_000)}.test`,
      "../../etc/passwd",
      CLOSED
    ]
    // The session and credential tools only name an agent (a URL WHATWG cleans up, e.g. of a leading NUL, is theirs to store).
    const storeOnly = ["clear_session_data", "get_session_info", "set_agent_credentials", "clear_agent_credentials"]
    const contacting = tools.filter((tool) => "agent_url" in (tool.inputSchema.properties ?? {}) && !storeOnly.includes(tool.name))
    expect(contacting.length).toBeGreaterThan(8)
    for (const tool of contacting) {
      for (const url of hostile) {
        expectClearError(
          await callTool(mcp, tool.name, { ...saneArguments(tool), agent_url: url }),
          `${tool.name} agent_url ${JSON.stringify(url.slice(0, 40))}`
        )
      }
    }
    await stillServing()
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    reportFigures(`MCP hostile arguments (${era} era)`, {
      tools: tools.length,
      "bad calls tried": tried,
      "answered isError": tried,
      "server exits": 0
    })
  })
})
