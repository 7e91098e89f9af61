/**
 * Agents by name under MCP: list_agents (what an assistant picks from), add_agent and remove_agent,
 * in process (an SDK Client over InMemoryTransport, real layers on a temp store) against relay's own
 * agent, an SDK peer, an agent whose card is off the well-known path and one whose card is hostile.
 * The client validates every structured result against the tool's outputSchema. Every tool that
 * takes agent_url takes a name.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CARD_SUMMARY_LIMITS } from "../../src/domain/limits.js"
import { ERROR_META_KEY } from "../../src/mcp/toolResult.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { hostileCard, type JsonSite, startJsonSite } from "../peers/catalogSite.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const home = tempHome()
let runtime: AppRuntime
let mcp: Client
let relayAgent: AgentHandle
let sdk: SdkAgentHandle
let mastra: V03AgentHandle
let hostile: JsonSite

const MASTRA_CARD_PATH = "/api/.well-known/weather/agent-card.json"

beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  ;[relayAgent, sdk, mastra, hostile] = await Promise.all([
    startAgent({ model: "echo" }),
    startSdkAgent(),
    startV03Agent({ cardPath: MASTRA_CARD_PATH }),
    startJsonSite((baseUrl) => ({ "/.well-known/agent-card.json": hostileCard(baseUrl) }))
  ])
  mcp = await connectTools(contextFor(runtime))
})

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([relayAgent?.close(), sdk?.close(), mastra?.close(), hostile?.close()])
  await runtime?.dispose()
  home.cleanup()
})

const ok = (result: CallToolResult) => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  return result.structuredContent as Record<string, any>
}
const errorCode = (result: CallToolResult) => (result._meta?.[ERROR_META_KEY] as { code: string } | undefined)?.code

/** What an assistant reads in a tool's text: no control character is ever left raw (ESC, CR, BEL, …). */
const RAW_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

describe("the agent tools", () => {
  it("are listed with when-and-next descriptions and annotations: list reads local state, add reads a card and changes it, remove changes it", async () => {
    const { tools } = await mcp.listTools()
    const byName = new Map(tools.map((tool) => [tool.name, tool]))
    expect(byName.get("list_agents")?.annotations).toEqual({ readOnlyHint: true, idempotentHint: true, openWorldHint: false })
    expect(byName.get("add_agent")?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: false,
      idempotentHint: false,
      openWorldHint: true
    })
    expect(byName.get("remove_agent")?.annotations).toEqual({
      readOnlyHint: false,
      destructiveHint: true,
      idempotentHint: true,
      openWorldHint: false
    })
    expect(byName.get("add_agent")?.inputSchema.required?.sort()).toEqual(["name", "url"])
    expect(byName.get("list_agents")?.outputSchema?.properties).toHaveProperty("agents")
    for (const name of ["list_agents", "add_agent", "remove_agent"]) expect(byName.get(name)?.description).toMatch(/\bUse\b.*Next: /s)
  })

  it("list_agents gives what an assistant chooses by: skills with descriptions, tags and modes, from relay's own agent and an SDK agent", async () => {
    expect(ok(await callTool(mcp, "list_agents"))).toEqual({ count: 0, default_agent: null, agents: [] })
    const added = ok(await callTool(mcp, "add_agent", { name: "relay", url: relayAgent.baseUrl }))
    expect(added["card_check"]).toMatchObject({ valid: true, error_count: 0 })
    ok(await callTool(mcp, "add_agent", { name: "SDK", url: sdk.baseUrl, description: "Scripted test flows" }))
    const listed = await callTool(mcp, "list_agents")
    const { agents, count } = ok(listed)
    expect(count).toBe(2)
    expect(agents[0]).toMatchObject({
      name: "relay",
      url: relayAgent.baseUrl,
      card_name: "relay agent",
      has_credentials: false,
      skills: [{ id: "chat", name: "Chat", tags: expect.arrayContaining(["chat"]), input_modes: expect.arrayContaining(["text/plain"]) }]
    })
    expect(agents[1]).toMatchObject({
      name: "sdk",
      description: "Scripted test flows",
      card_name: "SDK Test Agent",
      skills: [{ id: "scripted", name: "Scripted behaviours", description: expect.stringContaining("behaviour:"), tags: ["test"] }]
    })
    expect(textOf(listed)).toContain("relay: ")
    expect(textOf(listed)).toContain("[skills: Scripted behaviours]")
  })

  it("add_agent validates first: an unreachable agent, a taken name or a name that is no name adds nothing", async () => {
    expect(errorCode(await callTool(mcp, "add_agent", { name: "relay", url: sdk.baseUrl }))).toBe("agent_exists")
    expect(errorCode(await callTool(mcp, "add_agent", { name: "a b", url: sdk.baseUrl }))).toBe("invalid_agent_name")
    expect(errorCode(await callTool(mcp, "add_agent", { name: "down", url: "http://127.0.0.1:9" }))).toBe("agent_unreachable")
    expect(errorCode(await callTool(mcp, "add_agent", { name: "noscheme", url: "sdk" }))).toBe("invalid_agent_url")
    expect(ok(await callTool(mcp, "list_agents"))["count"]).toBe(2)
  })

  it("an agent whose card is off the well-known path is added once with card_url, then reached by its name alone", async () => {
    ok(await callTool(mcp, "add_agent", { name: "weather", url: mastra.baseUrl, card_url: `${mastra.baseUrl}${MASTRA_CARD_PATH}` }))
    const answer = ok(await callTool(mcp, "send_message", { agent_url: "weather", text: "hello by name" }))
    expect(answer).toMatchObject({ state: "completed", text: expect.stringContaining("hello by name") })
    // validate_agent_card takes the name too, as the terminal's card validate does.
    expect(ok(await callTool(mcp, "validate_agent_card", { source: "weather" }))).toMatchObject({ valid: true, source: mastra.baseUrl })
    expect(ok(await callTool(mcp, "list_agents"))["agents"].find((agent: { name: string }) => agent.name === "weather"))
      .toMatchObject({ card_url: `${mastra.baseUrl}${MASTRA_CARD_PATH}` })
    ok(await callTool(mcp, "remove_agent", { name: "weather" }))
  })

  it("a hostile card (10 000 skills, control characters, huge texts) is kept bounded, and escaped in every text", async () => {
    const added = await callTool(mcp, "add_agent", { name: "hostile", url: hostile.baseUrl })
    const { agent } = ok(added)
    expect(agent.skills).toHaveLength(CARD_SUMMARY_LIMITS.skills)
    expect(agent.skills_omitted).toBe(10_000 - CARD_SUMMARY_LIMITS.skills)
    expect(agent.description.length).toBeLessThanOrEqual(CARD_SUMMARY_LIMITS.descriptionChars)
    const listed = await callTool(mcp, "list_agents")
    for (const result of [added, listed]) {
      expect(textOf(result)).not.toMatch(RAW_CONTROLS)
      expect(textOf(result)).toContain("\\u001b")
    }
    expect(textOf(listed).length).toBeLessThan(4000)
    expect(JSON.stringify(listed.structuredContent).length).toBeLessThan(400_000)
    expect(ok(await callTool(mcp, "remove_agent", { name: "hostile" }))).toEqual({ name: "hostile", removed: true, url: hostile.baseUrl })
    expect(ok(await callTool(mcp, "remove_agent", { name: "hostile" }))).toEqual({ name: "hostile", removed: false, url: null })
  })
})

/** Sane values for the parameters a tool requires besides agent_url. */
const REQUIRED_SAMPLES: Record<string, unknown> = { task_id: "no-such-task", config_id: "no-such-config" }

/** What some tools need besides, to get past their own arguments (or, for check_agent and wait_for_task, to be quick). */
const EXTRAS: Record<string, Record<string, unknown>> = {
  send_message: { text: "hello by name" },
  set_task_notification: { webhook_url: "http://127.0.0.1:9/hook" },
  set_agent_credentials: { bearer_token: "saved-by-name-0123456789" },
  check_agent: { only: ["card"] },
  wait_for_task: { timeout_seconds: 1 }
}

const argumentsFor = (tool: { name: string; inputSchema: { required?: Array<string> | undefined } }, agent: string) => ({
  ...Object.fromEntries(
    (tool.inputSchema.required ?? []).filter((name) => name !== "agent_url").map((name) => [name, REQUIRED_SAMPLES[name]])
  ),
  ...EXTRAS[tool.name],
  agent_url: agent
})

describe("every agent_url takes a name", () => {
  it("each tool with agent_url resolves the name to its URL; an unknown name is unknown_agent, never a bad URL", async () => {
    const tools = (await mcp.listTools()).tools.filter((tool) => "agent_url" in (tool.inputSchema.properties ?? {}))
    expect(tools.length).toBeGreaterThanOrEqual(14)
    for (const tool of tools) {
      const unknown = await callTool(mcp, tool.name, argumentsFor(tool, "nobody"))
      expect(errorCode(unknown), `${tool.name}: ${textOf(unknown)}`).toBe("unknown_agent")
      const before = sdk.requests.length
      const named = await callTool(mcp, tool.name, argumentsFor(tool, "sdk"))
      // Whatever the tool's own outcome (a task that does not exist is not_found), the name was the agent's URL.
      expect(["invalid_agent_url", "unknown_agent"], `${tool.name}: ${textOf(named)}`).not.toContain(errorCode(named))
      const storeOnly = ["get_session_info", "clear_session_data", "set_agent_credentials", "clear_agent_credentials"].includes(tool.name)
      if (storeOnly) expect(named.structuredContent, tool.name).toMatchObject({ agent_url: sdk.baseUrl })
      else expect(sdk.requests.length, `${tool.name} reached the SDK agent`).toBeGreaterThan(before)
    }
  })
})
