/**
 * A2A tasks as MCP tasks on the 2025-11-25 wire (legacyTasks.ts), driven by the 1.x SDK's own
 * task client (callToolStream, tasks/get, tasks/result, tasks/cancel) with elicitation, against
 * makeMcpServer with the real layers and relay's mock agent with latency: a long task polled to
 * its end, an agent's question answered by the user, a task cancelled, and the plain call untouched.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { type CallToolResult, CallToolResultSchema, ElicitRequestSchema, type GetTaskResult } from "@modelcontextprotocol/sdk/types.js"
import { Duration, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeMcpServer } from "../../src/mcp/server.js"
import { appLayer, type AppRuntime, callTool, contextFor } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

/** Each turn of the agent stays working this long: longer than the first wait (1 s), so calls become tasks. */
const LATENCY_MS = 1500

let agent: AgentHandle
let runtime: AppRuntime
const home = tempHome()

beforeAll(async () => {
  agent = await startAgent({ model: "mock", settings: { latency: Duration.millis(LATENCY_MS) } })
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
})

afterAll(async () => {
  await Promise.all([agent?.close(), runtime?.dispose()])
  home.cleanup()
})

/** What the user is asked, and how they answer. */
interface User {
  readonly asked: Array<{ message: string; meta: unknown }>
  answer: (message: string) => { action: "accept"; content: { answer: string } } | { action: "decline" }
}

/** A 1.x client declaring elicitation, connected in memory to a fresh server. */
const connect = async (user: User) => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const server = makeMcpServer(contextFor(runtime, { toolTasks: { firstWaitSeconds: 1, pollIntervalMs: 100 } }))
  await server.connect(serverSide)
  const client = new Client({ name: "tasks-test", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    user.asked.push({ message: request.params.message, meta: request.params._meta })
    return user.answer(request.params.message)
  })
  await client.connect(clientSide)
  await client.listTools()
  return { client, close: () => Promise.all([client.close(), server.close()]) }
}

/** Runs a task call to its end: the task's statuses on the way, and the final result. */
const runTask = async (client: Client, name: string, args: Record<string, unknown>) => {
  const statuses: Array<GetTaskResult> = []
  let taskId = ""
  for await (
    const message of client.experimental.tasks.callToolStream({ name, arguments: args }, CallToolResultSchema, {
      task: { ttl: 60_000 },
      timeout: 20_000
    })
  ) {
    if (message.type === "taskCreated") taskId = message.task.taskId
    if (message.type === "taskStatus") statuses.push(message.task)
    if (message.type === "error") throw message.error
    if (message.type === "result") return { taskId, statuses, result: message.result as CallToolResult }
  }
  throw new Error("the stream ended without a result")
}

const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>

describe("A2A tasks as 2025-11-25 MCP tasks", () => {
  it("declares the tasks capability and lists send_message and wait_for_task as optional tasks", async () => {
    const { client, close } = await connect({ asked: [], answer: () => ({ action: "decline" }) })
    expect(client.getServerCapabilities()?.tasks).toEqual({ list: {}, cancel: {}, requests: { tools: { call: {} } } })
    const { tools } = await client.listTools()
    const taskable = tools.filter((tool) => tool.execution?.taskSupport === "optional").map((tool) => tool.name)
    expect(taskable.sort()).toEqual(["send_message", "wait_for_task"])
    await close()
  })

  it("runs a long send_message as a task: working while the agent works, then the plain call's result", async () => {
    const { client, close } = await connect({ asked: [], answer: () => ({ action: "decline" }) })
    const { taskId, statuses, result } = await runTask(client, "send_message", { agent_url: agent.baseUrl, message: "Hello tasks" })
    expect(statuses[0]).toMatchObject({ taskId, status: "working" })
    expect(statuses.at(-1)?.status).toBe("completed")
    expect(result.isError).toBeUndefined()
    expect(structured(result)).toMatchObject({ state: "completed", text: "Hello tasks", needs_input: false, kind: "task" })
    expect(result._meta?.["io.modelcontextprotocol/related-task"]).toEqual({ taskId })
    // The task stays readable after its end; unknown ones are refused.
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({ status: "completed" })
    await expect(client.experimental.tasks.getTask("no-such-task")).rejects.toThrow(/not found/)
    await close()
  })

  it("asks the user the agent's question (input_required) and sends the answer to the agent's task", async () => {
    const user: User = { asked: [], answer: () => ({ action: "accept", content: { answer: "blue" } }) }
    const { client, close } = await connect(user)
    const { taskId, statuses, result } = await runTask(client, "send_message", { agent_url: agent.baseUrl, message: "input-required" })
    expect(statuses.map((status) => status.status)).toContain("input_required")
    expect(user.asked).toHaveLength(1)
    expect(user.asked[0]!.message).toMatch(/needs more input/)
    expect(user.asked[0]!.meta).toEqual({ "io.modelcontextprotocol/related-task": { taskId } })
    // The mock echoes the answer: it reached the same A2A task, which then completed.
    expect(structured(result)).toMatchObject({ state: "completed", text: "blue" })
    await close()
  })

  it("ends with the plain needs_input result when the user declines", async () => {
    const user: User = { asked: [], answer: () => ({ action: "decline" }) }
    const { client, close } = await connect(user)
    const { result } = await runTask(client, "send_message", { agent_url: agent.baseUrl, message: "input-required" })
    expect(user.asked).toHaveLength(1)
    expect(structured(result)).toMatchObject({ state: "input-required", needs_input: true })
    expect(structured(result)["next_step"]).toMatch(/send_message/)
    await close()
  })

  it("cancels the agent's task with tasks/cancel", async () => {
    const { client, close } = await connect({ asked: [], answer: () => ({ action: "decline" }) })
    const created = await client.request(
      {
        method: "tools/call",
        params: { name: "send_message", arguments: { agent_url: agent.baseUrl, message: "long one" }, task: { ttl: 60_000 } }
      },
      CallToolResultSchema.passthrough()
    ) as unknown as { task: { taskId: string; status: string } }
    expect(created.task.status).toBe("working")
    const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId)
    expect(cancelled).toMatchObject({ taskId: created.task.taskId, status: "cancelled" })
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)
    const agentTaskId = structured(result)["task_id"]
    expect(structured(result)).toMatchObject({ state: "canceled" })
    // The agent says so too, and a second cancel is refused: the task has ended.
    const seen = await callTool(client, "get_task", { agent_url: agent.baseUrl, task_id: agentTaskId })
    expect(structured(seen)).toMatchObject({ state: "canceled" })
    await expect(client.experimental.tasks.cancelTask(created.task.taskId)).rejects.toThrow(/terminal status: cancelled/)
    expect((await client.experimental.tasks.listTasks()).tasks.map((task) => task.taskId)).toEqual([created.task.taskId])
    await close()
  })

  it("answers a quick call without a task the plain way, and a task call on another tool with method not found", async () => {
    const { client, close } = await connect({ asked: [], answer: () => ({ action: "decline" }) })
    const plain = await callTool(client, "send_message", { agent_url: agent.baseUrl, message: "Hello", timeout_seconds: 5 })
    expect(structured(plain)).toMatchObject({ state: "completed", text: "Hello" })
    await expect(client.request(
      { method: "tools/call", params: { name: "list_agents", arguments: {}, task: { ttl: 1000 } } },
      CallToolResultSchema
    )).rejects.toThrow(/does not run as a task/)
    await close()
  })
})
