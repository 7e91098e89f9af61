/**
 * A client that stops reading cannot grow `relay mcp` (issue 27, item 3): behind the bound of
 * unread bytes, no more of its requests start, and when it then reads nothing for the stall time
 * its session is closed with a logged reason (stdio: the transport closes, so the server exits).
 * A client reading at its own pace gets every answer, however large, and the other HTTP clients
 * are served. In-process, with a small pace and a tool that answers N bytes.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { McpServer } from "@modelcontextprotocol/server"
import { Effect, Exit, Logger, Scope } from "effect"
import * as Net from "node:net"
import { PassThrough, Writable } from "node:stream"
import { afterEach, describe, expect, it } from "vitest"
import * as z from "zod"
import { type HttpOptions, serveHttp } from "../../src/mcp/httpTransports.js"
import { BoundedStdioTransport } from "../../src/mcp/stdio.js"
import { waitUntil } from "../helpers/a2aPrograms.js"
import { INITIALIZED, initializeRequest } from "../helpers/mcpMessages.js"

const MiB = 1024 * 1024
const MAX_UNREAD = 4 * MiB
const PACE = { maxInFlight: 4, maxBytes: MAX_UNREAD, stallMs: 500 }
/** Larger than the bound, and than what the kernel buffers for one loopback connection (tcp_wmem max 4 MiB). */
const BIG = 8 * MiB

/** A server whose `big` tool answers `bytes` characters, and whose `ping` answers pong. */
const makeServer = () => {
  const server = new McpServer({ name: "slow-clients-test", version: "1.0.0" })
  server.registerTool("big", { inputSchema: { bytes: z.number() } }, async ({ bytes }) => ({
    content: [{ type: "text", text: "x".repeat(bytes) }]
  }))
  server.registerTool("ping", {}, async () => ({ content: [{ type: "text", text: "pong" }] }))
  // Runs until the client cancels it.
  server.registerTool("hang", {}, async (ctx) => {
    await new Promise((resolve) => ctx.mcpReq.signal.addEventListener("abort", resolve, { once: true }))
    return { content: [{ type: "text", text: "cancelled" }] }
  })
  return server
}

const INITIALIZE = initializeRequest("stuck")
const bigCall = (id: number, bytes: number) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "big", arguments: { bytes } } })

const textLength = (result: CallToolResult) =>
  result.content.reduce((sum, block) => sum + (block.type === "text" ? block.text.length : 0), 0)

/** A stdout that collects whole lines, taking `delayMs` to read each slice written to it. */
const lineReader = (delayMs: number) => {
  const lines: Array<string> = []
  let pending = ""
  const stdout = new Writable({
    write: (chunk: Buffer, _encoding, done) => {
      pending += chunk.toString()
      const parts = pending.split("\n")
      pending = parts.pop()!
      lines.push(...parts)
      if (delayMs === 0) done()
      else setTimeout(done, delayMs)
    }
  })
  return { lines, stdout }
}

describe("stdio", () => {
  /** A transport over an in-memory stdin and the given stdout, serving makeServer. */
  const connect = async (stdout: Writable) => {
    const stdin = new PassThrough()
    const transport = new BoundedStdioTransport({ input: stdin, output: stdout, pace: PACE, log: () => {} })
    let closed = false
    const server = makeServer()
    await server.connect(transport)
    server.server.onclose = () => (closed = true)
    /** Writes the messages to stdin as one chunk, as a client sending them at once. */
    const send = (...messages: ReadonlyArray<unknown>) =>
      void stdin.write(messages.map((message) => `${JSON.stringify(message)}\n`).join(""))
    send(INITIALIZE, INITIALIZED)
    return { transport, send, closed: () => closed }
  }

  it("takes no more requests from a client that does not read, and cuts it off after the stall time", async () => {
    // A reader that never reads: every byte written stays in stdout's buffer.
    const stdout = new Writable({ write: () => {} })
    const { transport, send, closed } = await connect(stdout)
    const answer = 256 * 1024
    send(...Array.from({ length: 80 }, (_, i) => bigCall(i + 1, answer)))
    await waitUntil("the transport to close", closed)
    expect(transport.cutOff?.code).toBe("mcp_client_not_reading")
    expect(transport.cutOff?.message).toMatch(
      /^The MCP client left \d+ bytes of answers unread \(at most 4194304 may wait\) and read nothing for 0.5 s; its session was closed$/
    )
    // The bound besides one answer, and one answer for each request in flight when it was reached.
    const unread = stdout.writableLength
    expect(unread).toBeLessThan(MAX_UNREAD + (PACE.maxInFlight + 1) * (answer + 1024))
    // The requests left waiting never start: nothing more is written.
    await new Promise((resolve) => setTimeout(resolve, 200))
    expect(stdout.writableLength).toBe(unread)
  })

  it("gives a client reading at its own pace every answer, in order, even far behind and with one answer larger than the bound", async () => {
    // Takes 100 ms to read each slice: far slower than the server writes.
    const { lines, stdout } = lineReader(100)
    const { transport, send, closed } = await connect(stdout)
    send(bigCall(1, 2 * MAX_UNREAD), ...Array.from({ length: 11 }, (_, i) => bigCall(i + 2, MiB)))
    await waitUntil("every answer", () => lines.length === 13, 30_000)
    const answers = lines.slice(1).map((line) => JSON.parse(line) as { id: number; result: CallToolResult })
    expect(answers.map((answer) => [answer.id, textLength(answer.result)])).toEqual([
      [1, 2 * MAX_UNREAD],
      ...Array.from({ length: 11 }, (_, i) => [i + 2, MiB])
    ])
    expect(closed()).toBe(false)
    expect(transport.cutOff).toBeUndefined()
  })

  it("serves a client that cancelled as many calls as may run at once: a cancelled call holds no place", async () => {
    const { lines, stdout } = lineReader(0)
    const { send } = await connect(stdout)
    const calls = Array.from({ length: PACE.maxInFlight }, (_, i) => i + 1)
    send(...calls.map((id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "hang", arguments: {} } })))
    await new Promise((resolve) => setTimeout(resolve, 50))
    send(...calls.map((requestId) => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId } })))
    send({ jsonrpc: "2.0", id: 99, method: "tools/call", params: { name: "ping", arguments: {} } })
    await waitUntil("the ping's answer", () => lines.some((line) => (JSON.parse(line) as { id?: number }).id === 99))
    // The cancelled calls are never answered (MCP cancellation).
    expect(lines.map((line) => (JSON.parse(line) as { id?: number }).id)).toEqual([0, 99])
  })
})

describe.each(["streamable-http", "sse"] as const)("%s", (kind) => {
  const scopes: Array<Scope.CloseableScope> = []
  const clients: Array<Client> = []
  const sockets: Array<Net.Socket> = []

  afterEach(async () => {
    for (const socket of sockets.splice(0)) socket.destroy()
    await Promise.allSettled(clients.splice(0).map((client) => client.close()))
    for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
  })

  /** Serves `kind` with the small bound; its log lines are collected. */
  const serve = async () => {
    const logged: Array<string> = []
    const scope = Effect.runSync(Scope.make())
    scopes.push(scope)
    const options: HttpOptions = { kind, host: "127.0.0.1", port: 0, pace: PACE }
    const url = await Effect.runPromise(
      serveHttp(options, makeServer).pipe(
        Scope.extend(scope),
        Effect.provide(Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void logged.push(String(message)))))
      )
    )
    return { url: new URL(url), logged }
  }

  const connect = async (url: URL) => {
    const client = new Client({ name: "reader", version: "1" })
    clients.push(client)
    await client.connect(kind === "streamable-http" ? new StreamableHTTPClientTransport(url) : new SSEClientTransport(url))
    return client
  }

  /** A raw HTTP request on its own connection, whose answer is never read. */
  const unreadRequest = (url: URL, method: string, path: string, headers: Record<string, string>, body = "") => {
    const socket = Net.connect(Number(url.port), url.hostname)
    sockets.push(socket)
    socket.on("error", () => {})
    const head = Object.entries({ ...headers, host: url.host, "content-length": String(Buffer.byteLength(body)) })
      .map(([name, value]) => `${name}: ${value}\r\n`)
      .join("")
    socket.write(`${method} ${path} HTTP/1.1\r\n${head}\r\n${body}`)
    return socket
  }

  const POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" }

  /**
   * Opens a session whose client then stops reading; resolves with a function asking the server
   * whether that session is still open, after `calls` big answers were asked for.
   */
  const stuckSession = async (url: URL, calls: number): Promise<() => Promise<number>> => {
    if (kind === "streamable-http") {
      const opened = await fetch(url, { method: "POST", headers: POST_HEADERS, body: JSON.stringify(INITIALIZE) })
      const sessionId = opened.headers.get("mcp-session-id")!
      await opened.text()
      const headers = { ...POST_HEADERS, "mcp-session-id": sessionId, "mcp-protocol-version": "2025-06-18" }
      await (await fetch(url, { method: "POST", headers, body: JSON.stringify(INITIALIZED) })).text()
      for (let id = 1; id <= calls; id++) unreadRequest(url, "POST", url.pathname, headers, JSON.stringify(bigCall(id, BIG)))
      return async () => (await fetch(url, { method: "POST", headers, body: JSON.stringify(INITIALIZED) })).status
    }
    // SSE: the event stream is read only until it names the session, then never again.
    const stream = unreadRequest(url, "GET", url.pathname, { accept: "text/event-stream" })
    const sessionId = await new Promise<string>((resolve) =>
      stream.on("data", function named(chunk: Buffer) {
        const found = /sessionId=([\w-]+)/.exec(chunk.toString())
        if (found === null) return
        stream.off("data", named)
        stream.pause()
        resolve(found[1]!)
      })
    )
    const messages = new URL(`/messages?sessionId=${sessionId}`, url)
    const post = async (message: unknown) =>
      (await fetch(messages, { method: "POST", headers: POST_HEADERS, body: JSON.stringify(message) })).status
    await post(INITIALIZE)
    await post(INITIALIZED)
    for (let id = 1; id <= calls; id++) await post(bigCall(id, BIG))
    return () => post(INITIALIZED)
  }

  it("closes the session of a client that stops reading, with a logged reason; a reading client is served all along", async () => {
    const { url, logged } = await serve()
    const reader = await connect(url)
    const stillOpen = await stuckSession(url, 4)
    await waitUntil("the stuck session to be cut off", () => logged.some((line) => /unread/.test(line)), 20_000)
    expect(logged.filter((line) => /unread/.test(line))).toEqual([
      expect.stringMatching(
        /^MCP session [\w-]+: The MCP client left \d+ bytes of answers unread \(at most 4194304 may wait\) and read nothing for 0.5 s; its session was closed$/
      )
    ])
    expect(await stillOpen()).toBe(404)
    // The other client gets an answer larger than the bound, whole.
    const result = await reader.callTool({ name: "big", arguments: { bytes: BIG } }, undefined, { timeout: 20_000 }) as CallToolResult
    expect(textLength(result)).toBe(BIG)
  })
})
