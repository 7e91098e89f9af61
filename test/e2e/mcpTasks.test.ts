/**
 * A long A2A task as an MCP task through real processes: `relay server agent -m mock --latency 5s`
 * and `relay mcp` on stdio, driven by the 1.x SDK's client (2025-11-25 tasks, with elicitation).
 * One task is polled while the agent works, asks its question, gets the user's answer and
 * completes; another, run at the same time, is cancelled together with the agent's task.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
const env = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" } as Record<string, string>
let agentProcess: ChildProcess | undefined
let agentUrl = ""
let client: Client
const asked: Array<string> = []

beforeAll(async () => {
  agentProcess = spawn(
    process.execPath,
    [relayBin, "server", "agent", "--host", "127.0.0.1", "--port", "0", "-m", "mock", "--latency", "5s", "--json"],
    { env, stdio: ["ignore", "pipe", "pipe"] }
  )
  agentUrl = await new Promise<string>((resolve, reject) => {
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`the agent did not start: ${seen}`)), 15_000)
    agentProcess!.stdout!.on("data", (chunk) => {
      seen += chunk
      const url = /"url":"(http:\/\/[^"]+)"/.exec(seen)?.[1]
      if (url !== undefined) {
        clearTimeout(timer)
        resolve(url)
      }
    })
  })
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
  agentProcess?.kill("SIGINT")
  home.cleanup()
})

const structured = (result: CallToolResult) => result.structuredContent as Record<string, unknown>

describe("relay mcp: a long A2A task as an MCP task", () => {
  it("is polled while working, asks the user the agent's question, sends the answer, and is cancelled on request", async () => {
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
})
