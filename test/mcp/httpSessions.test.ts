/**
 * The MCP HTTP transports keep a bounded number of sessions: past the bound, opening one closes
 * the least recently used, whose client is told to initialize again (404), while the others go on.
 * Served in-process on 127.0.0.1 and driven by the official SDK client.
 */
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

/** A server with one tool, so a session can be seen to work. */
const makeServer = () => {
  const server = new McpServer({ name: "sessions-test", version: "1.0.0" })
  server.registerTool("ping", { description: "answers pong" }, async () => ({ content: [{ type: "text", text: "pong" }] }))
  return server
}

const serve = async (kind: HttpOptions["kind"], maxSessions: number) => {
  const scope = Effect.runSync(Scope.make())
  scopes.push(scope)
  const url = await Effect.runPromise(Scope.extend(serveHttp({ kind, host: "127.0.0.1", port: 0, maxSessions }, makeServer), scope))
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
