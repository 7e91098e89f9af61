/**
 * The MCP HTTP transports keep a bounded number of sessions: past the bound, opening one closes
 * the least recently used, whose client is told to initialize again (404), while the others go on.
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
import { afterEach, describe, expect, it } from "vitest"
import { type HttpOptions, serveHttp } from "../../src/mcp/httpTransports.js"

const scopes: Array<Scope.CloseableScope> = []
const clients: Array<Client> = []

afterEach(async () => {
  await Promise.allSettled(clients.splice(0).map((client) => client.close()))
  for (const scope of scopes.splice(0)) await Effect.runPromise(Scope.close(scope, Exit.void))
})

/** Resolves the calls of the `hold` tool waiting so far. */
let release = () => {}
let held = new Promise<void>((resolve) => (release = resolve))

/** A server with a tool that answers at once, so a session can be seen to work, and one that waits for `release`. */
const makeServer = () => {
  const server = new McpServer({ name: "sessions-test", version: "1.0.0" })
  server.registerTool("ping", { description: "answers pong" }, async () => ({ content: [{ type: "text", text: "pong" }] }))
  server.registerTool("hold", { description: "answers when released" }, async () => {
    await held
    return { content: [{ type: "text", text: "released" }] }
  })
  return server
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
