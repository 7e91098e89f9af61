/**
 * A task the agent forgot reports `not_found` at every door (issue 27, item 18). relay's own
 * agent server forgets old tasks past its tasks-kept bound (here 1); the saved task of a
 * conversation is then asked for over each binding and generation, at the terminal (task get,
 * task cancel, task resubscribe, message send --continue) and through the MCP tools, and every
 * one answers not_found with a hint that fits (not protocol_error, nor saved_task_refused).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ERROR_META_KEY } from "../../src/mcp/toolResult.js"
import { type CardServer, startCardServer, startTaskOn } from "../helpers/a2aPrograms.js"
import { runRelay } from "../helpers/cli.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, toolOk } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const INTERFACES = [
  { protocol: "1.0", binding: "jsonrpc", wire: "JSONRPC" },
  { protocol: "1.0", binding: "rest", wire: "HTTP+JSON" },
  { protocol: "0.3", binding: "jsonrpc", wire: "JSONRPC" },
  { protocol: "0.3", binding: "rest", wire: "HTTP+JSON" }
] as const
type Interface = (typeof INTERFACES)[number]

let agent: AgentHandle
const home = tempHome()
const terminalHomes: Array<ReturnType<typeof tempHome>> = []
let runtime: AppRuntime
let tools: Client
/** A card for each interface that lists only that one of the agent's interfaces (for MCP, which takes no pins). */
const cards = new Map<Interface, CardServer>()

beforeAll(async () => {
  // The mock model asks for input on "input-required"; one task kept, so the next one forgets it.
  agent = await startAgent({ model: "mock", store: { maxTasks: 1 } })
  const card = (await (await fetch(`${agent.baseUrl}/.well-known/agent-card.json`)).json()) as {
    supportedInterfaces: Array<Record<string, string>>
  }
  for (const entry of INTERFACES) {
    const only = card.supportedInterfaces.filter((i) => i["protocolVersion"] === entry.protocol && i["protocolBinding"] === entry.wire)
    expect(only).toHaveLength(1)
    cards.set(entry, await startCardServer({ ...card, supportedInterfaces: only }))
  }
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  tools = await connectTools(contextFor(runtime))
})

afterAll(async () => {
  await tools?.close()
  await runtime?.dispose()
  await Promise.allSettled([agent?.close(), ...[...cards.values()].map((server) => server.close())])
  for (const each of [home, ...terminalHomes]) each.cleanup()
})

/** Starts a task of someone else's: past the bound of one, the agent forgets the waiting one. */
const forgetEarlierTasks = () => startTaskOn(`${agent.baseUrl}/`, "another conversation")

const errorOf = (result: CallToolResult) => result._meta?.[ERROR_META_KEY] as { code: string; hint: string } | undefined

describe.each(INTERFACES)("a forgotten task over $protocol $binding", (entry) => {
  const pins = ["--protocol", entry.protocol, "--binding", entry.binding]

  it("is not_found at the terminal: task get, task cancel, task resubscribe, message send --continue", async () => {
    const terminalHome = tempHome()
    terminalHomes.push(terminalHome)
    const stateDir = terminalHome.stateDir
    const asked = await runRelay(["message", "send", "--url", agent.baseUrl, ...pins, "input-required", "--json"], { stateDir })
    expect(asked.code, asked.stderr).toBe(0)
    const taskId = String(JSON.parse(asked.stdout)["task_id"])
    await forgetEarlierTasks()

    const commands = [
      ["task", "get", "--url", agent.baseUrl, ...pins, taskId],
      ["task", "cancel", "--url", agent.baseUrl, ...pins, taskId],
      ["task", "resubscribe", "--url", agent.baseUrl, ...pins, taskId],
      ["message", "send", "--url", agent.baseUrl, ...pins, "--continue", "one more thing"]
    ]
    const results = await Promise.all(commands.map((args) => runRelay([...args, "--json"], { stateDir })))
    for (const [index, result] of results.entries()) {
      const what = `relay ${commands[index]!.join(" ")}: ${result.stderr}`
      expect(result.code, what).toBe(1)
      expect(JSON.parse(result.stderr).error, what).toMatchObject({ code: "not_found" })
    }
    // In words: the saved task is gone, so forget it or start anew.
    const human = await runRelay(["task", "get", "--url", agent.baseUrl, ...pins, taskId], { stateDir })
    expect(human.stderr).toContain(`does not have task ${taskId}`)
    expect(human.stderr).toContain(`relay session clear --url ${agent.baseUrl}`)
  })

  it("is not_found through the MCP tools", async () => {
    const access = { agent_url: agent.baseUrl, card_url: `${cards.get(entry)!.baseUrl}/.well-known/agent-card.json` }
    const asked = await toolOk(tools, "send_message", { ...access, message: "input-required" })
    expect(asked).toMatchObject({ state: "input-required" })
    const taskId = String(asked["task_id"])
    await forgetEarlierTasks()

    const calls: ReadonlyArray<readonly [string, Record<string, unknown>]> = [
      ["get_task", { task_id: taskId }],
      ["cancel_task", { task_id: taskId }],
      ["wait_for_task", { task_id: taskId, timeout_seconds: 5 }],
      ["send_message", { message: "one more thing", use_session: true }],
      ["send_message", { message: "one more thing", task_id: taskId }],
      ["set_task_notification", { task_id: taskId, webhook_url: "http://127.0.0.1:9/hook" }],
      ["list_task_notifications", { task_id: taskId }]
    ]
    for (const [name, args] of calls) {
      const result = await callTool(tools, name, { ...access, ...args })
      expect(result.isError, `${name}: ${JSON.stringify(result.content)}`).toBe(true)
      expect(errorOf(result), name).toMatchObject({ code: "not_found" })
    }
    expect(errorOf(await callTool(tools, "get_task", { ...access, task_id: taskId }))?.hint).toContain(
      `clear_session_data (agent_url ${agent.baseUrl})`
    )
  })
})
