/**
 * Both MCP protocol eras from one `relay mcp` (issue #32): a 2026-07-28 client (no initialize,
 * `server/discover`, `_meta` on every request) and 2025-11-25 clients (the v2 SDK's client in
 * legacy mode, the v1 SDK's client) are served by the same process and the same tools, over
 * stdio and over streamable HTTP. Each gets the same tool list, in the same order; send_message
 * reaches relay's own echo agent, with progress; an unknown tool is a JSON-RPC error in both. On HTTP a 2026
 * client has no GET or DELETE (405). (A legacy client's Last-Event-ID replay: transports.test.ts.)
 * Needs `npm run build` first.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { StdioClientTransport } from "@modelcontextprotocol/client/stdio"
import { Client as ClientV1 } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport as StdioClientTransportV1 } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport as StreamableHTTPClientTransportV1 } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const MODERN = "2026-07-28"
const home = tempHome()
let agent: AgentHandle
const cleanups: Array<() => Promise<unknown>> = [async () => home.cleanup()]

beforeAll(async () => {
  agent = await startAgent({ model: "echo" })
  cleanups.push(() => agent.close())
})

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
})

const relayEnv = (): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
  return { ...env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }
}

type AnyClient = ClientV1 | ClientV2
interface CallOptions {
  readonly timeout: number
  readonly onprogress?: (progress: { message?: string | undefined }) => void
}

/** A tool call through either SDK's client (v1 takes a result schema before the options, v2 does not). */
const callTool = (client: AnyClient, name: string, args: Record<string, unknown>, options: CallOptions): Promise<unknown> =>
  client instanceof ClientV2
    ? client.callTool({ name, arguments: args }, options)
    : client.callTool({ name, arguments: args }, undefined, options)

type Mode = "modern" | "auto" | "legacy"
const negotiation = (mode: Mode) =>
  mode === "modern" ? { mode: { pin: MODERN } } : mode === "auto" ? { mode: "auto" as const } : { mode: "legacy" as const }

const v2Client = (mode: Mode) => new ClientV2({ name: `eras-${mode}`, version: "1.0.0" }, { versionNegotiation: negotiation(mode) })
const v1Client = () => new ClientV1({ name: "eras-v1", version: "1.0.0" })

const stdioParams = () => ({ command: process.execPath, args: [relayBin, "mcp"], env: relayEnv(), stderr: "pipe" as const })

/** The client, connected; closed after the file. */
const connected = async <C extends AnyClient>(client: C, connect: (client: C) => Promise<void>): Promise<C> => {
  await connect(client)
  cleanups.push(() => client.close())
  return client
}

const textOf = (result: unknown) =>
  ((result as { content?: ReadonlyArray<{ type: string; text?: string }> }).content ?? [])
    .flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : []))
    .join("\n")

/** tools/list, send_message to the echo agent (with progress), and an unknown tool: what every client must get alike. */
const servesTheTools = async (client: AnyClient) => {
  const names = (await client.listTools()).tools.map((tool) => tool.name)
  const progress: Array<string | undefined> = []
  const sent = await callTool(client, "send_message", { agent_url: agent.baseUrl, message: "hello eras", stream: true }, {
    timeout: 15_000,
    onprogress: ({ message }) => void progress.push(message)
  }) as { isError?: boolean; structuredContent?: Record<string, unknown> }
  expect(sent.isError, textOf(sent)).not.toBe(true)
  expect(JSON.stringify(sent.structuredContent)).toContain("hello eras")
  expect(progress.length).toBeGreaterThan(0)
  await expect(callTool(client, "no_such_tool", {}, { timeout: 5_000 })).rejects.toMatchObject({
    code: -32602
  })
  return names
}

describe("stdio", () => {
  const lists: Array<ReadonlyArray<string>> = []

  it("serves a client pinned to 2026-07-28: discover, no initialize", async () => {
    const client = await connected(v2Client("modern"), (c) => c.connect(new StdioClientTransport(stdioParams())))
    expect(client.getProtocolEra()).toBe("modern")
    expect(client.getServerVersion()?.name).toBe("a2a-relay")
    lists.push(await servesTheTools(client))
  })

  it("serves a client in auto mode (it probes, finds 2026-07-28) and one in legacy mode (initialize)", async () => {
    const auto = await connected(v2Client("auto"), (c) => c.connect(new StdioClientTransport(stdioParams())))
    expect(auto.getProtocolEra()).toBe("modern")
    const legacy = await connected(v2Client("legacy"), (c) => c.connect(new StdioClientTransport(stdioParams())))
    expect(legacy.getProtocolEra()).toBe("legacy")
    lists.push(await servesTheTools(auto), await servesTheTools(legacy))
  })

  it("serves the v1 SDK's client (2025-11-25), with the same tools in the same order", async () => {
    const client = await connected(v1Client(), (c) => c.connect(new StdioClientTransportV1(stdioParams())))
    expect(client.getServerVersion()?.name).toBe("a2a-relay")
    lists.push(await servesTheTools(client))
    expect(lists).toHaveLength(4)
    expect(lists[0]!.length).toBe(21)
    for (const list of lists) expect(list).toEqual(lists[0])
  })
})

interface HttpServer {
  readonly child: ChildProcessWithoutNullStreams
  readonly url: string
}

const startHttpServer = (): Promise<HttpServer> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, "mcp", "-t", "streamable-http", "--port", "0"], { env: relayEnv(), stdio: "pipe" })
    cleanups.push(async () => void child.kill("SIGKILL"))
    let stderr = ""
    const timer = setTimeout(() => reject(new Error(`no URL printed within 10 s\nstderr: ${stderr}`)), 10_000)
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      const match = /listening at (http:\/\/\S+)/.exec(stderr)
      if (match !== null) {
        clearTimeout(timer)
        resolve({ child, url: match[1]! })
      }
    })
  })

describe("streamable HTTP", () => {
  let server: HttpServer
  beforeAll(async () => {
    server = await startHttpServer()
  })

  it("serves 2026-07-28 (pinned and auto), the v2 client in legacy mode and the v1 client, the same tools in the same order", async () => {
    const url = new URL(server.url)
    const modern = await connected(v2Client("modern"), (c) => c.connect(new StreamableHTTPClientTransport(url)))
    const auto = await connected(v2Client("auto"), (c) => c.connect(new StreamableHTTPClientTransport(url)))
    const legacy = await connected(v2Client("legacy"), (c) => c.connect(new StreamableHTTPClientTransport(url)))
    const v1 = await connected(v1Client(), (c) => c.connect(new StreamableHTTPClientTransportV1(url)))
    expect([modern.getProtocolEra(), auto.getProtocolEra(), legacy.getProtocolEra()]).toEqual(["modern", "modern", "legacy"])
    const lists = [await servesTheTools(modern), await servesTheTools(auto), await servesTheTools(legacy), await servesTheTools(v1)]
    expect(lists[0]!.length).toBe(21)
    for (const list of lists) expect(list).toEqual(lists[0])
  })

  it("answers a 2026-07-28 client's GET and DELETE with 405: that era has no session to stream or end", async () => {
    for (const method of ["GET", "DELETE"]) {
      const response = await fetch(server.url, { method, headers: { accept: "text/event-stream", "mcp-protocol-version": MODERN } })
      expect(response.status, method).toBe(405)
      expect(await response.json(), method).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } })
    }
  })

  it("answers a request naming a version it does not serve with UnsupportedProtocolVersion (-32022), naming 2026-07-28", async () => {
    const response = await fetch(server.url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": "2099-01-01",
        "mcp-method": "tools/list"
      },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 1,
        method: "tools/list",
        params: { _meta: { "io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {} } }
      })
    })
    const body = await response.json() as { error: { code: number; data: { supported: ReadonlyArray<string> } } }
    expect(body.error.code).toBe(-32022)
    // The SDK's modern entry names the modern revisions; 2025-11-25 is reached through initialize.
    expect(body.error.data.supported).toContain(MODERN)
  })
})
