/**
 * The MCP HTTP transports keep a bounded number of sessions: past the bound, opening one closes
 * the least recently used, whose client is told to initialize again (404), while the others go on.
 * A client that leaves while room is being made for it gets no session, so it takes no place.
 * 2026-07-28 requests have no session: as many are served at once as the sessions could have in
 * flight, and one more is told to come again (503). Served in-process on 127.0.0.1 and driven by
 * the official SDK clients.
 */
import { Client as ClientV2, StreamableHTTPClientTransport as StreamableHTTPClientTransportV2 } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { McpServer } from "@modelcontextprotocol/server"
import { Effect, Exit, Scope } from "effect"
import * as DiagnosticsChannel from "node:diagnostics_channel"
import type { IncomingMessage, ServerResponse } from "node:http"
import * as Net from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { type HttpOptions, serveHttp } from "../../src/mcp/httpTransports.js"
import { waitUntil } from "../helpers/a2aPrograms.js"
import { initializeRequest } from "../helpers/mcpMessages.js"

const scopes: Array<Scope.CloseableScope> = []
const clients: Array<Client> = []

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()))
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
  alive.clear()
  mostAlive = 0
})

/** Resolves the calls of the `hold` tool waiting so far. */
let release = () => {}
let held = new Promise<void>((resolve) => (release = resolve))

/** Holds every server's close while pending, so an eviction can be kept waiting. */
let closeGate: Promise<void> = Promise.resolve()
let closesStarted = 0
let closesEnded = 0
let serversMade = 0
/** The servers made and not yet closed, and the most there were at once. */
const alive = new Set<McpServer>()
let mostAlive = 0

/** A server with a tool that answers at once, so a session can be seen to work, and one that waits for `release`. */
const makeServer = () => {
  const server = new McpServer({ name: "sessions-test", version: "1.0.0" })
  serversMade += 1
  alive.add(server)
  mostAlive = Math.max(mostAlive, alive.size)
  const close = server.close.bind(server)
  server.close = async () => {
    closesStarted += 1
    await closeGate
    await close()
    closesEnded += 1
    alive.delete(server)
  }
  server.registerTool("ping", { description: "answers pong" }, async () => ({ content: [{ type: "text", text: "pong" }] }))
  server.registerTool("hold", { description: "answers when released" }, async () => {
    await held
    return { content: [{ type: "text", text: "released" }] }
  })
  return server
}

/** Runs `during` with every server's close held, then lets the closes go. */
const withClosesHeld = async (during: () => Promise<void>) => {
  let open = () => {}
  closeGate = new Promise<void>((resolve) => (open = resolve))
  try {
    await during()
  } finally {
    open()
    closeGate = Promise.resolve()
  }
}

const serve = async (kind: HttpOptions["kind"], maxSessions: number, maxInFlight = 16) => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const pace = { maxInFlight, maxBytes: 1024 * 1024, stallMs: 10_000 }
  const url = await Effect.runPromise(Scope.extend(serveHttp({ kind, host: "127.0.0.1", port: 0, maxSessions, pace }, makeServer), scope))
  return new URL(url)
}

const connect = async (kind: HttpOptions["kind"], url: URL) => {
  const client = new Client({ name: "t", version: "1" })
  clients.push(client)
  await client.connect(kind === "streamable-http" ? new StreamableHTTPClientTransport(url) : new SSEClientTransport(url))
  return client
}

/** Opens a session as `kind` does (GET /sse, or POST of initialize to /mcp) without an SDK client, which would reconnect. */
const openRaw = (kind: HttpOptions["kind"], url: URL, signal: AbortSignal) =>
  kind === "sse"
    ? fetch(url, { headers: { accept: "text/event-stream" }, signal })
    : fetch(url, {
      method: "POST",
      headers: { accept: "application/json, text/event-stream", "content-type": "application/json" },
      body: JSON.stringify(initializeRequest("burst")),
      signal
    })

const pings = (client: Client) =>
  client.callTool({ name: "ping", arguments: {} }, undefined, { timeout: 5_000 }).then(() => true, () => false)

describe.each(["streamable-http", "sse"] as const)("%s sessions", (kind) => {
  it("past the bound, a new session closes the least recently used one; the others go on", async () => {
    const url = await serve(kind, 2)
    const first = await connect(kind, url)
    const second = await connect(kind, url)
    // The first was used last, so the second is the least recently used when the third arrives.
    expect(await pings(first)).toBe(true)
    const third = await connect(kind, url)
    expect(await pings(second)).toBe(false)
    expect(await pings(first)).toBe(true)
    expect(await pings(third)).toBe(true)
  })

  it("a session its client ends is closed, and holds its place until closed: never more servers than the bound", async () => {
    const url = await serve(kind, 1)
    const first = await connect(kind, url)
    expect(await pings(first)).toBe(true)
    const started = closesStarted
    const ended = closesEnded
    await withClosesHeld(async () => {
      // The client ends its session: DELETE (streamable HTTP), or its event stream closed (SSE).
      if (kind === "streamable-http") await (first.transport as StreamableHTTPClientTransport).terminateSession()
      await first.close()
      await waitUntil("the ended session's server to be closing", () => closesStarted > started)
      // Its server is still closing: its place is held, so no second server is made meanwhile.
      await expect(connect(kind, url)).rejects.toThrow(/503|Busy/)
    })
    await waitUntil("the ended session's close to end", () => closesEnded > ended)
    const second = await connect(kind, url)
    expect(await pings(second)).toBe(true)
    expect(mostAlive).toBe(1)
  })

  it("a client that leaves while its session waits for room gets none, and takes no one's place", async () => {
    const url = await serve(kind, 2)
    const first = await connect(kind, url)
    await connect(kind, url)
    // The first was used last: an eviction now closes the second.
    expect(await pings(first)).toBe(true)
    const made = serversMade
    const ended = closesEnded
    const closes = closesStarted
    await withClosesHeld(() => leaveWhileMakingRoom(kind, url, () => closesStarted > closes))
    await waitUntil("the eviction to end", () => closesEnded > ended)
    // Had the gone client got a session, it would hold the second place and the third would evict the first.
    const third = await connect(kind, url)
    expect(await pings(first)).toBe(true)
    expect(await pings(third)).toBe(true)
    // No server was made for the client that left: only the third's.
    expect(serversMade).toBe(made + 1)
  })

  it("a burst of opens against a full table never holds more servers than the bound", async () => {
    const url = await serve(kind, 2)
    const streams = new AbortController()
    let open = () => {}
    try {
      const full = await Promise.all([openRaw(kind, url, streams.signal), openRaw(kind, url, streams.signal)])
      expect(full.map((response) => response.status)).toEqual([200, 200])
      await waitUntil("the table to fill", () => alive.size === 2)
      mostAlive = alive.size
      // Evictions are held, so every open of the burst is in flight at once.
      closeGate = new Promise<void>((resolve) => (open = resolve))
      const closes = closesStarted
      const statuses: Array<number> = []
      const burst = Array.from({ length: 10 }, () =>
        openRaw(kind, url, streams.signal).then(async (response) => {
          statuses.push(response.status)
          return response.status === 503 ? response.text() : ""
        }))
      await waitUntil("every open to be answered or to wait on an eviction", () => statuses.length + closesStarted - closes >= 10)
      open()
      closeGate = Promise.resolve()
      const refusals = await Promise.all(burst)
      expect(mostAlive).toBeLessThanOrEqual(2)
      // The evictions made two places; every other open is told to come again.
      expect(statuses.filter((status) => status === 200)).toHaveLength(2)
      expect(statuses.filter((status) => status === 503)).toHaveLength(8)
      expect(refusals.filter((text) => text !== "")).toEqual(Array(8).fill(expect.stringMatching(/try again/)))
    } finally {
      open()
      closeGate = Promise.resolve()
      streams.abort()
    }
    // Every place was given back: a client opens a working session, still within the bound.
    expect(await pings(await connect(kind, url))).toBe(true)
    expect(mostAlive).toBeLessThanOrEqual(2)
  })
})

/**
 * Opens a session as `kind` does (GET /sse, or POST of initialize to /mcp) on a raw socket, waits
 * until `evicting` (the server is making room), then goes away and waits until the server has seen
 * it go.
 */
const leaveWhileMakingRoom = async (kind: HttpOptions["kind"], url: URL, evicting: () => boolean) => {
  const marker = `leaver-${Math.random()}`
  let response: ServerResponse | undefined
  const onRequest = (message: unknown) => {
    const { request, response: res } = message as { request: IncomingMessage; response: ServerResponse }
    if (request.headers["x-test-marker"] === marker) response = res
  }
  DiagnosticsChannel.subscribe("http.server.request.start", onRequest)
  const socket = Net.connect(Number(url.port), url.hostname)
  try {
    const body = JSON.stringify({
      jsonrpc: "2.0",
      id: 0,
      method: "initialize",
      params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "leaver", version: "1" } }
    })
    const host = `Host: ${url.host}\r\nx-test-marker: ${marker}\r\n`
    socket.write(
      kind === "sse"
        ? `GET /sse HTTP/1.1\r\n${host}Accept: text/event-stream\r\n\r\n`
        : `POST /mcp HTTP/1.1\r\n${host}Accept: application/json, text/event-stream\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`
    )
    await waitUntil("the server to make room", () => response !== undefined && evicting())
    let closed = false
    response!.once("close", () => (closed = true))
    socket.destroy()
    await waitUntil("the server to see the client go", () => closed)
  } finally {
    DiagnosticsChannel.unsubscribe("http.server.request.start", onRequest)
    socket.destroy()
  }
}

describe("streamable-http initialize", () => {
  it("refused by the SDK opens no session: its place is given back and its server closed", async () => {
    const url = await serve("streamable-http", 1)
    const refused = await fetch(url, {
      method: "POST",
      // Without text/event-stream in Accept the SDK refuses the request (406).
      headers: { accept: "application/json", "content-type": "application/json" },
      body: JSON.stringify(initializeRequest("refused")),
      signal: AbortSignal.timeout(5_000)
    })
    expect(refused.status).toBe(406)
    await waitUntil("the refused initialize's server to close", () => alive.size === 0)
    // Had its place been kept, the only place would be held by an open that never ends.
    expect(await pings(await connect("streamable-http", url))).toBe(true)
  })
})

describe("2026-07-28 requests", () => {
  it("are served up to the sessions' bound at once; one more gets 503, and is served once one ends", async () => {
    held = new Promise<void>((resolve) => (release = resolve))
    // One session of one request in flight: one 2026 request at a time.
    const url = await serve("streamable-http", 1, 1)
    const client = new ClientV2({ name: "t", version: "1" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
    await client.connect(new StreamableHTTPClientTransportV2(url))
    clients.push(client as unknown as Client)
    const holding = client.callTool({ name: "hold", arguments: {} }, { timeout: 5_000 })
    const refused = await client.callTool({ name: "ping", arguments: {} }, { timeout: 5_000 }).then(
      () => undefined,
      (error: unknown) => error
    )
    expect(String(refused)).toMatch(/503|Busy/)
    release()
    expect((await holding).content).toEqual([{ type: "text", text: "released" }])
    expect((await client.callTool({ name: "ping", arguments: {} }, { timeout: 5_000 })).content).toEqual([{ type: "text", text: "pong" }])
  })
})
