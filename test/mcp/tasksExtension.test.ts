/**
 * The 2026-07-28 tasks extension on the wire: the v2 client pinned to 2026-07-28 sees it in
 * server/discover; a client declaring it gets a task handle for a long send_message, polls
 * tasks/get, answers the agent's question with tasks/update and cancels with tasks/cancel. Here
 * those requests are raw JSON-RPC to the SDK's modern entry (createMcpHandler) in process, to see
 * the wire itself; test/e2e/mcpTasks.test.ts drives the built binary with the extension's own client.
 */
import { Client, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { createMcpHandler, type McpHttpHandler } from "@modelcontextprotocol/server"
import { Duration, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeMcpServer } from "../../src/mcp/server.js"
import { TASKS_EXTENSION } from "../../src/mcp/tasksExtension.js"
import { appLayer, type AppRuntime, contextFor } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

type Json = Record<string, any>

/** Each turn of the agent stays working this long: longer than the first wait (1 s), so calls become tasks. */
const LATENCY_MS = 1500
const URL_OF_RELAY = "http://relay.test/mcp"

let agent: AgentHandle
let runtime: AppRuntime
let handler: McpHttpHandler
const home = tempHome()

beforeAll(async () => {
  agent = await startAgent({ model: "mock", settings: { latency: Duration.millis(LATENCY_MS) } })
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  const context = contextFor(runtime, { toolTasks: { firstWaitSeconds: 1, pollIntervalMs: 100 } })
  handler = createMcpHandler(({ era }) => makeMcpServer(context, era), { legacy: "reject" })
})

afterAll(async () => {
  await handler?.close()
  await Promise.all([agent?.close(), runtime?.dispose()])
  home.cleanup()
})

const CAPABILITIES = { elicitation: { form: {} }, extensions: { [TASKS_EXTENSION]: {} } }
let nextId = 1

/** One 2026-07-28 request: its envelope in `_meta`, its method and name in the headers. */
const request = async (method: string, params: Json, capabilities: Json = CAPABILITIES): Promise<Json> => {
  const body = {
    jsonrpc: "2.0",
    id: nextId++,
    method,
    params: {
      ...params,
      _meta: {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": { name: "tasks-test", version: "1.0.0" },
        "io.modelcontextprotocol/clientCapabilities": capabilities
      }
    }
  }
  // Mcp-Name repeats the tool's name, or the task's id (the SDK holds headers and body to agree).
  const named = params["name"] ?? params["taskId"]
  const name = typeof named === "string" ? { "mcp-name": named } : {}
  const response = await handler.fetch(
    new Request(URL_OF_RELAY, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2026-07-28",
        "mcp-method": method,
        ...name
      },
      body: JSON.stringify(body)
    })
  )
  const text = await response.text()
  const payload = text.startsWith("{")
    ? text
    : text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).at(-1)
  const message = JSON.parse(payload ?? "{}") as Json
  if (message["error"] !== undefined) throw new Error(`${method}: ${JSON.stringify(message["error"])}`)
  return message["result"] as Json
}

/** Polls tasks/get until the task leaves `working`. */
const settled = async (taskId: string): Promise<Json> => {
  const deadline = Date.now() + 20_000
  for (;;) {
    const task = await request("tasks/get", { taskId })
    if (task["status"] !== "working") return task
    if (Date.now() > deadline) throw new Error("the task stayed working")
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("A2A tasks as 2026-07-28 MCP tasks (the tasks extension)", () => {
  it("server/discover names the extension to a client pinned to 2026-07-28", async () => {
    const client = new Client({ name: "tasks-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(URL_OF_RELAY), { fetch: (url, init) => handler.fetch(new Request(url, init)) })
    )
    try {
      expect(client.getServerCapabilities()?.extensions).toEqual({ [TASKS_EXTENSION]: {} })
    } finally {
      await client.close()
    }
  })

  it("a long send_message becomes a task: polled, its question answered with tasks/update, then completed", async () => {
    const created = await request("tools/call", {
      name: "send_message",
      arguments: { agent_url: agent.baseUrl, message: "input-required" }
    })
    expect(created).toMatchObject({ resultType: "task", status: "working" })
    const asking = await settled(created["taskId"])
    expect(asking["status"]).toBe("input_required")
    const [key, question] = Object.entries(asking["inputRequests"] as Json)[0]!
    expect(question).toMatchObject({ method: "elicitation/create", params: { mode: "form" } })
    expect(question.params.message).toContain("The mock agent needs more input")
    await request("tasks/update", {
      taskId: created["taskId"],
      inputResponses: { [key]: { action: "accept", content: { answer: "blue" } } }
    })
    const done = await settled(created["taskId"])
    expect(done["status"]).toBe("completed")
    expect(done["result"]["structuredContent"]["state"]).toBe("completed")
  })

  it("tasks/cancel cancels the agent's task; a client without the extension waits as before", async () => {
    const created = await request("tools/call", { name: "send_message", arguments: { agent_url: agent.baseUrl, message: "slow work" } })
    expect(created["resultType"]).toBe("task")
    await request("tasks/cancel", { taskId: created["taskId"] })
    const cancelled = await request("tasks/get", { taskId: created["taskId"] })
    expect(cancelled["status"]).toBe("cancelled")
    const plain = await request(
      "tools/call",
      { name: "send_message", arguments: { agent_url: agent.baseUrl, message: "hello" } },
      { elicitation: { form: {} } }
    )
    expect(plain["resultType"]).toBe("complete")
    expect(plain["structuredContent"]["state"]).toBe("completed")
    await expect(request("tasks/get", { taskId: created["taskId"] }, {})).rejects.toThrow(/-32021/)
  })
})
