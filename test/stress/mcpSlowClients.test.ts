// A long-lived `relay mcp` stays bounded (issue 27, items 3 and 4). Clients that never read their
// answers: an agent answers 8 MB of text, so each answer is a ~16.8 MB MCP message. Before, 60
// unread answers took the server to 2.9 GB and an ENOBUFS exit. Now, on stdio, a client sending
// 120 such calls at once and reading nothing is cut off (exit 1, the reason on stderr) with the
// server's peak RSS bounded whatever the number of calls; over streamable HTTP the stuck session
// is closed with a logged reason while another client is served all along, and the server stays
// up. Many agents with large cards: before, 60 agents' cards of ~5 MB took it to 825 MB; now the
// card cache keeps at most 16 MiB of them.
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, requireBuiltRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { INITIALIZED, initializeRequest } from "../helpers/mcpMessages.js"
import { tempHome } from "../helpers/stateHome.js"
import { reply, startStub, type Stub, v1Card } from "../services/a2aClientHarness.js"

const ANSWER_CHARS = 8_000_000
/** Peak RSS allowed: before the bound, 60 unread answers took 2.9 GB. */
const RSS_CEILING_MIB = 1024

const CARD_BYTES = 5_000_000
const AGENTS = 60

const home = tempHome()
const children: Array<ChildProcessWithoutNullStreams> = []
const sockets: Array<Net.Socket> = []
let agent: Stub
/** Agents at /agents/<i>, each with its own card of ~5 MB (under its path: the root has none). */
let bigCards: Stub
const figures: Record<string, string | number> = {}

beforeAll(async () => {
  requireBuiltRelay()
  const text = "y".repeat(ANSWER_CHARS)
  agent = await startStub((base) => ({
    "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
    "POST /rpc": (request) => {
      const id = (request.body as { id: unknown }).id
      return { body: { jsonrpc: "2.0", id, result: { message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text }] } } } }
    }
  }))
  bigCards = await startStub((base) => {
    const card = { ...v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]), description: "d".repeat(CARD_BYTES) }
    return Object.fromEntries(Array.from({ length: AGENTS }, (_, i) => [`GET /agents/${i}/.well-known/agent-card.json`, reply(card)]))
  })
})

afterAll(async () => {
  for (const socket of sockets) socket.destroy()
  for (const child of children) child.kill("SIGKILL")
  await Promise.allSettled([agent?.close(), bigCards?.close()])
  home.cleanup()
  reportFigures("relay mcp: clients that stop reading, many large cards", figures)
})

const spawnRelay = (args: ReadonlyArray<string>) => {
  const child = spawn(process.execPath, [relayBin, "mcp", ...args], {
    env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
    stdio: "pipe"
  })
  children.push(child)
  let stderr = ""
  child.stderr.on("data", (chunk) => (stderr += chunk))
  let peakKb = 0
  const sampler = setInterval(() => {
    try {
      const match = /VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${child.pid}/status`, "utf8"))
      if (match) peakKb = Math.max(peakKb, Number(match[1]))
    } catch {
      // gone
    }
  }, 100)
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)))
  void exited.then(() => clearInterval(sampler))
  return { child, stderr: () => stderr, peakMiB: () => Math.round(peakKb / 1024), exited }
}

const INITIALIZE = initializeRequest("stuck")
const sendCall = (id: number) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name: "send_message", arguments: { agent_url: agent.baseUrl, text: "the big one", use_session: false } }
})

const within = <A>(what: string, promise: Promise<A>, ms: number): Promise<A> =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what}: not within ${ms} ms`)), ms))])

describe("relay mcp, a client that stops reading", () => {
  it("on stdio: 120 calls sent at once, none read: cut off with exit 1 and the reason on stderr, peak RSS bounded", async () => {
    const calls = 120
    const relay = spawnRelay([])
    // Never read: the answers pile up in relay, not in this process.
    relay.child.stdout.pause()
    const started = Date.now()
    relay.child.stdin.write(
      [INITIALIZE, INITIALIZED, ...Array.from({ length: calls }, (_, i) => sendCall(i + 1))]
        .map((message) => `${JSON.stringify(message)}\n`).join("")
    )
    const code = await within("relay mcp to exit", relay.exited, 90_000)
    expect(code).toBe(1)
    expect(relay.stderr()).toMatch(
      /error: The MCP client left \d+ bytes of answers unread \(at most 33554432 may wait\) and read nothing for 10 s; its session was closed/
    )
    expect(relay.stderr()).not.toMatch(/ENOBUFS|heap out of memory/)
    expect(relay.peakMiB()).toBeLessThan(RSS_CEILING_MIB)
    Object.assign(figures, {
      "stdio calls unread": calls,
      "stdio peak RSS MiB": relay.peakMiB(),
      "stdio cut off after s": Math.round((Date.now() - started) / 1000)
    })
  })

  it("over streamable HTTP: 60 calls whose answers are never read close that session; another client is served all along", async () => {
    const relay = spawnRelay(["-t", "streamable-http", "--port", "0"])
    const url = new URL(
      await within(
        "the URL",
        new Promise<string>((resolve) => {
          const look = () => {
            const found = /listening at (http:\/\/\S+)/.exec(relay.stderr())
            if (found) resolve(found[1]!)
            else setTimeout(look, 50)
          }
          look()
        }),
        20_000
      )
    )

    const reader = new Client({ name: "reader", version: "1" })
    await reader.connect(new StreamableHTTPClientTransport(url))
    let served = 0
    let failed = 0
    const callLoop = (async () => {
      while (!/its session was closed/.test(relay.stderr())) {
        const result = (await reader.callTool({ name: "list_sessions", arguments: {} }, undefined, { timeout: 30_000 })) as CallToolResult
        if (result.isError === true) failed++
        else served++
        await new Promise((resolve) => setTimeout(resolve, 200))
      }
    })()

    const headers = {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      "mcp-protocol-version": "2025-06-18"
    }
    const opened = await fetch(url, { method: "POST", headers, body: JSON.stringify(INITIALIZE) })
    const sessionId = opened.headers.get("mcp-session-id")!
    await opened.text()
    const session = { ...headers, "mcp-session-id": sessionId }
    await (await fetch(url, {
      method: "POST",
      headers: session,
      body: JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })
    })).text()
    const calls = 60
    for (let id = 1; id <= calls; id++) {
      // Each call on its own connection, whose answer is never read.
      const socket = Net.connect(Number(url.port), url.hostname)
      sockets.push(socket)
      socket.on("error", () => {})
      const body = JSON.stringify(sendCall(id))
      const head = Object.entries({ ...session, host: url.host, "content-length": String(Buffer.byteLength(body)) })
        .map(([name, value]) => `${name}: ${value}\r\n`).join("")
      socket.write(`POST ${url.pathname} HTTP/1.1\r\n${head}\r\n${body}`)
    }

    await within("the stuck session to be closed", callLoop, 90_000)
    expect(relay.stderr()).toMatch(
      new RegExp(
        // Its other streams took the small messages of requests waiting their turn: not enough to count as reading.
        `MCP session ${sessionId}: The MCP client left \\d+ bytes of answers unread .* and read (nothing for|only \\d+ bytes in) 10 s.*; its session was closed`
      )
    )
    const after = await fetch(url, { method: "POST", headers: session, body: JSON.stringify({ jsonrpc: "2.0", id: 999, method: "ping" }) })
    expect(after.status).toBe(404)
    // The other client goes on, with a big answer read whole.
    const big = (await reader.callTool(
      { name: "send_message", arguments: { agent_url: agent.baseUrl, text: "one more", use_session: false } },
      undefined,
      { timeout: 60_000 }
    )) as CallToolResult
    expect((big.structuredContent as { text: string }).text.length).toBe(ANSWER_CHARS)
    await reader.close()
    expect(failed).toBe(0)
    expect(served).toBeGreaterThan(0)
    expect(relay.child.exitCode).toBeNull()
    expect(relay.peakMiB()).toBeLessThan(RSS_CEILING_MIB)
    Object.assign(figures, {
      "HTTP calls unread": calls,
      "HTTP peak RSS MiB": relay.peakMiB(),
      "other client's calls served": `${served}/${served + failed}`
    })
  }, 180_000)
})

describe("relay mcp, many agents with large cards", () => {
  it(`keeps at most 16 MiB of cards: ${AGENTS} agents' cards of 5 MB, then the first again, peak RSS bounded`, async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [relayBin, "mcp"],
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" } as Record<string, string>,
      stderr: "pipe"
    })
    const client = new Client({ name: "cards", version: "1" })
    await client.connect(transport)
    const pid = transport.pid!
    const peakMiB = () => Math.round(Number(/VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))![1]) / 1024)
    const cardOf = async (i: number) => {
      const result =
        (await client.callTool({ name: "get_agent_card", arguments: { agent_url: `${bigCards.baseUrl}/agents/${i}` } }, undefined, {
          timeout: 60_000
        })) as CallToolResult
      expect(result.isError ?? false).toBe(false)
    }
    for (let i = 0; i < AGENTS; i++) await cardOf(i)
    const peak = peakMiB()
    const fetchedBefore = bigCards.requests.length
    // The first agent's card was pushed out long ago: fetched again.
    await cardOf(0)
    await client.close()
    expect(bigCards.requests.length).toBeGreaterThan(fetchedBefore)
    // Before the bound: 630 MiB here, growing with every agent.
    expect(peak).toBeLessThan(512)
    Object.assign(figures, { "agents with 5 MB cards": AGENTS, "cards peak RSS MiB": peak })
  }, 180_000)
})
