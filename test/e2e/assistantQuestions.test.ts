/**
 * The agent's question reaches the user, end to end (issue 32): `relay server agent -m mock` asks
 * for input, and `relay mcp` puts the question to the user through the client's form, sends the
 * answer to the task and returns the agent's next answer in the same call: to the v1 SDK's client
 * (2025-11-25, `elicitation/create`) over stdio, and to the v2 client pinned to 2026-07-28 (an
 * `input_required` result it answers by retrying) over stdio and streamable HTTP.
 * Needs `npm run build`.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { StdioClientTransport as StdioClientTransportV2 } from "@modelcontextprotocol/client/stdio"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type ElicitRequest, ElicitRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, requireBuiltRelay, startAgentServer } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

type Json = Record<string, any>

const home = tempHome()
const env = { ...(process.env as Record<string, string>), RELAY_HOME: home.stateDir, NO_COLOR: "1" }
let agent: ChildProcess
let agentUrl: string
let mcp: Client
const asked: Array<ElicitRequest["params"]> = []

/** `relay server agent -m mock` on a free port; its URL from the --json line. */
const startMockAgent = async () => {
  const started = await startAgentServer(["-m", "mock"], { stateDir: home.stateDir })
  agent = started.child
  return started.info.url
}

beforeAll(async () => {
  requireBuiltRelay()
  agentUrl = await startMockAgent()
  mcp = new Client({ name: "assistant-questions", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  mcp.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params)
    return { action: "accept", content: { answer: "the blue one" } }
  })
  await mcp.connect(new StdioClientTransport({ command: process.execPath, args: [relayBin, "mcp"], env, stderr: "ignore" }))
}, 30_000)

afterAll(async () => {
  await mcp?.close()
  if (agent?.exitCode === null) agent.kill()
  home.cleanup()
})

describe("relay mcp over stdio, the mock agent asking for input", () => {
  it("asks the user through the client's form and answers with what the agent said next", async () => {
    const result = await mcp.callTool({ name: "send_message", arguments: { agent_url: agentUrl, message: "input-required" } }, undefined, {
      timeout: 20_000
    })
    expect(result.isError ?? false).toBe(false)
    expect(asked).toHaveLength(1)
    expect(asked[0]!.message).toContain("The mock agent needs more input")
    const content = result.structuredContent as Json
    expect(content["state"]).toBe("completed")
    expect(content["needs_input"]).toBe(false)
    // The mock echoes the answer it was given, in the task it asked in.
    expect(content["text"]).toContain("the blue one")
  })
})

describe("relay mcp to a 2026-07-28 client, the mock agent asking for input", () => {
  /** The v2 client pinned to 2026-07-28, with form elicitation: it answers each input_required round and retries. */
  const modernClient = (questions: Array<string>) => {
    const client = new ClientV2(
      { name: "assistant-questions-2026", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
    )
    client.setRequestHandler("elicitation/create", (request) => {
      questions.push(request.params.message)
      return { action: "accept", content: { answer: "the green one" } }
    })
    return client
  }

  /** `relay mcp` on streamable HTTP, on a free port; its URL and the process. */
  const startHttpRelay = () =>
    new Promise<{ url: URL; child: ChildProcess }>((resolve, reject) => {
      const child = spawn(process.execPath, [relayBin, "mcp", "-t", "streamable-http", "--port", "0"], {
        env,
        stdio: ["ignore", "ignore", "pipe"]
      })
      let stderr = ""
      const timer = setTimeout(() => reject(new Error(`relay mcp did not listen: ${stderr}`)), 15_000)
      child.stderr!.on("data", (chunk) => {
        stderr += chunk
        const found = /listening at (http:\/\/\S+)/.exec(stderr)
        if (found !== null) {
          clearTimeout(timer)
          resolve({ url: new URL(found[1]!), child })
        }
      })
      child.once("exit", (code) => reject(new Error(`relay mcp exited (${code}): ${stderr}`)))
    })

  const asksAndAnswers = async (client: ClientV2, questions: ReadonlyArray<string>) => {
    const result = await client.callTool({ name: "send_message", arguments: { agent_url: agentUrl, message: "input-required" } }, {
      timeout: 20_000
    })
    expect(questions).toHaveLength(1)
    expect(questions[0]).toContain("The mock agent needs more input")
    const content = (result as { structuredContent?: Json }).structuredContent!
    expect(content["state"]).toBe("completed")
    expect(content["needs_input"]).toBe(false)
    expect(content["text"]).toContain("the green one")
  }

  it("over stdio", async () => {
    const questions: Array<string> = []
    const client = modernClient(questions)
    await client.connect(new StdioClientTransportV2({ command: process.execPath, args: [relayBin, "mcp"], env, stderr: "ignore" }))
    try {
      await asksAndAnswers(client, questions)
    } finally {
      await client.close()
    }
  })

  it("over streamable HTTP", async () => {
    const questions: Array<string> = []
    const relay = await startHttpRelay()
    const client = modernClient(questions)
    try {
      await client.connect(new StreamableHTTPClientTransport(relay.url))
      await asksAndAnswers(client, questions)
    } finally {
      await client.close().catch(() => undefined)
      relay.child.kill()
    }
  })
})
