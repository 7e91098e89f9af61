/**
 * A long A2A task as an MCP task through real processes: `relay server agent -m mock --latency 5s`
 * and `relay mcp` (the built binary), in both protocol eras at once:
 * - 2025-11-25 on stdio, driven by the 1.x SDK's client (experimental tasks, with elicitation);
 * - 2026-07-28 on stdio and on streamable HTTP, driven by the v2 client pinned to 2026-07-28 with
 *   the official client of the `io.modelcontextprotocol/tasks` extension (@modelcontextprotocol/ext-tasks).
 * Each time one task is polled while the agent works, asks its question, gets the user's answer
 * and completes; another, run at the same time, is cancelled together with the agent's task.
 */
import { Client as ClientV2, StreamableHTTPClientTransport, type Transport } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio"
import { createTaskSessionFromClient, type RawClientDispatch } from "@modelcontextprotocol/ext-tasks/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
const env = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" } as Record<string, string>
const children: Array<ChildProcess> = []
let agentUrl = ""
let client: Client
const asked: Array<string> = []

/** Starts `relay …args` and resolves the first match of `pattern` in its stdout or stderr. */
const started = (args: ReadonlyArray<string>, pattern: RegExp) => {
  const child = spawn(process.execPath, [relayBin, ...args], { env, stdio: ["ignore", "pipe", "pipe"] })
  children.push(child)
  return new Promise<string>((resolve, reject) => {
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`relay ${args.join(" ")} did not start: ${seen}`)), 15_000)
    const look = (chunk: Buffer) => {
      seen += chunk
      const found = pattern.exec(seen)?.[1]
      if (found !== undefined) {
        clearTimeout(timer)
        resolve(found)
      }
    }
    child.stdout!.on("data", look)
    child.stderr!.on("data", look)
  })
}

beforeAll(async () => {
  agentUrl = await started(
    ["server", "agent", "--host", "127.0.0.1", "--port", "0", "-m", "mock", "--latency", "5s", "--json"],
    /"url":"(http:\/\/[^"]+)"/
  )
  client = new Client({ name: "tasks-e2e", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  client.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params.message)
    return { action: "accept", content: { answer: "the blue one" } }
  })
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [relayBin, "mcp"], env, stderr: "ignore" }))
  await client.listTools()
}, 30_000)

afterAll(async () => {
  await client?.close()
  for (const child of children) child.kill("SIGINT")
  home.cleanup()
})

const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>

// ---------------------------------------------------------------------------
// 2026-07-28: the v2 client and the tasks extension's client

/**
 * The host's request coordinator the extension's client needs on 2026-07-28 (its `rawDispatch`:
 * the v2 client's codec refuses a `resultType: "task"` answer). It shares the client's own
 * transport: its requests go out under ids of their own, their responses come back to it, and
 * everything else goes on to the client.
 */
class SharedTransport implements Transport {
  onclose?: Transport["onclose"]
  onerror?: Transport["onerror"]
  onmessage?: Transport["onmessage"]
  private readonly pending = new Map<string, (response: Record<string, unknown>) => void>()
  private sent = 0

  constructor(private readonly inner: Transport) {}

  get sessionId() {
    return this.inner.sessionId
  }
  get hasPerRequestStream() {
    return this.inner.hasPerRequestStream === true
  }
  setProtocolVersion = (version: string) => this.inner.setProtocolVersion?.(version)
  setSupportedProtocolVersions = (versions: Array<string>) => this.inner.setSupportedProtocolVersions?.(versions)

  start() {
    this.inner.onclose = () => this.onclose?.()
    this.inner.onerror = (error) => this.onerror?.(error)
    this.inner.onmessage = (message, extra) => {
      const id = "id" in message && !("method" in message) ? message.id : undefined
      const waiter = typeof id === "string" ? this.pending.get(id) : undefined
      if (waiter === undefined) return this.onmessage?.(message, extra)
      this.pending.delete(id as string)
      waiter(message as Record<string, unknown>)
    }
    return this.inner.start()
  }
  send: Transport["send"] = (message, options) => this.inner.send(message, options)
  close = () => this.inner.close()

  dispatch: RawClientDispatch = (request, options) => {
    const id = `tasks-extension-${++this.sent}`
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id)
        reject(new Error(`no response to ${id} within 20 s`))
      }, options?.context?.requestTimeoutMs ?? 20_000)
      this.pending.set(id, (response) => {
        clearTimeout(timer)
        resolve(
          response["error"] === undefined
            ? { kind: "result", result: response["result"] as never }
            : { kind: "error", error: response["error"] as never }
        )
      })
      const headers = options?.context?.headers
      this.inner.send({ ...(request as object), jsonrpc: "2.0", id } as never, headers === undefined ? undefined : { headers }).catch(
        (error: unknown) => {
          clearTimeout(timer)
          this.pending.delete(id)
          reject(error)
        }
      )
    })
  }
}

const CLIENT_INFO = { name: "tasks-e2e-2026", version: "1.0.0" }
const CLIENT_CAPABILITIES = { elicitation: { form: {} } }

/** A v2 client pinned to 2026-07-28 over `inner`, with a tasks session that asks `answer` of its user. */
const modernClient = async (inner: Transport, answer: string) => {
  const v2 = new ClientV2(CLIENT_INFO, { capabilities: CLIENT_CAPABILITIES, versionNegotiation: { mode: { pin: "2026-07-28" } } })
  const transport = new SharedTransport(inner)
  await v2.connect(transport)
  const questions: Array<Record<string, unknown>> = []
  const session = createTaskSessionFromClient(v2, {
    endpointId: "relay-mcp-e2e",
    rawDispatch: transport.dispatch,
    v2RequestFraming: { protocolVersion: "2026-07-28", clientInfo: CLIENT_INFO, clientCapabilities: CLIENT_CAPABILITIES },
    onInputRequest: (request) => {
      if (request.kind !== "elicitation") throw new Error(`unexpected ${request.kind} request`)
      questions.push(request.params)
      return Promise.resolve({ action: "accept", content: { answer } } as never)
    }
  })
  return { v2, session, questions }
}

/** Drives one 2026 client through the long task (poll, answer, complete) and a cancelled one, at the same time. */
const throughTheExtension = async (inner: Transport) => {
  const { v2, session, questions } = await modernClient(inner, "the green one")
  try {
    expect(v2.getServerCapabilities()?.extensions).toHaveProperty(["io.modelcontextprotocol/tasks"])
    const answered = (async () => {
      const execution = await session.callTool("send_message", { agent_url: agentUrl, message: "input-required" })
      expect(execution.kind).toBe("task")
      const statuses: Array<string> = []
      const { outcome } = await execution.settle({ onEvent: (event) => void (event.type === "task" && statuses.push(event.task.status)) })
      return { statuses, outcome }
    })()

    const execution = await session.callTool("send_message", { agent_url: agentUrl, message: "cancel me" })
    if (execution.kind !== "task") throw new Error("the call did not become a task")
    await execution.cancel()
    expect((await execution.settle()).outcome.status).toBe("cancelled")
    // tasks/get: cancelled, its status message cancel_task's answer; the agent's task is canceled too.
    const cancelled = await session.task(execution.handle.taskId).snapshot()
    expect(cancelled.status).toBe("cancelled")
    const agentTaskId = /^Task (\S+) is canceled/.exec(cancelled.statusMessage ?? "")?.[1]
    expect(agentTaskId).toBeDefined()
    const agentTask = await v2.callTool({ name: "get_task", arguments: { agent_url: agentUrl, task_id: agentTaskId! } })
    expect(agentTask.structuredContent).toMatchObject({ state: "canceled" })

    const { statuses, outcome } = await answered
    expect(statuses).toContain("working")
    expect(statuses).toContain("input_required")
    expect(questions).toEqual([expect.objectContaining({ mode: "form", message: expect.stringMatching(/needs more input/) })])
    expect(outcome.status).toBe("completed")
    // The mock echoes the answer once its latency has passed: the same A2A task, completed.
    const result = outcome.status === "completed" ? outcome.result as CallToolResult : undefined
    expect(result?.structuredContent).toMatchObject({ state: "completed", text: "the green one", needs_input: false })
  } finally {
    await session.close()
    await v2.close()
  }
}

describe.concurrent("relay mcp: a long A2A task as an MCP task", () => {
  it("2025-11-25: is polled while working, asks the user the agent's question, sends the answer, and is cancelled on request", async () => {
    const answered = (async () => {
      const statuses: Array<string> = []
      for await (
        const message of client.experimental.tasks.callToolStream(
          { name: "send_message", arguments: { agent_url: agentUrl, message: "input-required" } },
          CallToolResultSchema,
          { task: { ttl: 120_000 }, timeout: 30_000 }
        )
      ) {
        if (message.type === "taskStatus") statuses.push(message.task.status)
        if (message.type === "error") throw message.error
        if (message.type === "result") return { statuses, result: message.result as CallToolResult }
      }
      throw new Error("no result")
    })()

    const created = CreateTaskResultSchema.parse(
      await client.request(
        { method: "tools/call", params: { name: "send_message", arguments: { agent_url: agentUrl, message: "cancel me" }, task: {} } },
        CreateTaskResultSchema
      )
    )
    expect(created.task.status).toBe("working")
    expect(await client.experimental.tasks.getTask(created.task.taskId)).toMatchObject({ status: "working" })
    expect(await client.experimental.tasks.cancelTask(created.task.taskId)).toMatchObject({ status: "cancelled" })
    const cancelled = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema)
    expect(structured(cancelled)).toMatchObject({ state: "canceled" })

    const { statuses, result } = await answered
    expect(statuses[0]).toBe("working")
    expect(statuses).toContain("input_required")
    expect(asked).toEqual([expect.stringMatching(/needs more input/)])
    // The mock echoes the answer once its latency has passed: the same A2A task, completed.
    expect(structured(result)).toMatchObject({ state: "completed", text: "the blue one", needs_input: false })
  }, 40_000)

  it("2026-07-28 on stdio: the tasks extension's client polls, answers the question with tasks/update, and cancels", async () => {
    await throughTheExtension(new StdioClientTransportV2({ command: process.execPath, args: [relayBin, "mcp"], env, stderr: "ignore" }))
  }, 40_000)

  it("2026-07-28 on streamable HTTP: the same", async () => {
    const url = await started(["mcp", "-t", "streamable-http", "--port", "0"], /listening at (http:\/\/\S+)/)
    await throughTheExtension(new StreamableHTTPClientTransport(new URL(url)))
  }, 40_000)
})
