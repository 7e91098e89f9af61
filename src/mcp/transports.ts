/**
 * The three ways `relay mcp` is reached: stdio (default), streamable HTTP at /mcp, and the older
 * HTTP+SSE transport at /sse with posts to /messages. Each is scoped: closing the scope closes the
 * sessions and the port. The HTTP transports (httpTransports.ts, with express and the SDK's HTTP
 * servers) load only when asked for: stdio, the default, never parses them.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import { Deferred, Effect, Runtime } from "effect"
import type { McpClientNotReading } from "../domain/errors.js"
import type { HttpOptions } from "./httpTransports.js"
import { BoundedStdioTransport } from "./stdio.js"

export const TRANSPORTS = ["stdio", "sse", "streamable-http"] as const
export type TransportKind = (typeof TRANSPORTS)[number]

/**
 * Serves one MCP session over stdin/stdout until stdin closes (the transport closes with it), or
 * fails with McpClientNotReading when the client leaves too much unread (the command then exits 1
 * at once, dropping what stdout still held).
 */
export const serveStdio = (makeServer: () => McpServer) =>
  Effect.gen(function*() {
    const server = makeServer()
    const runtime = yield* Effect.runtime<never>()
    const transport = new BoundedStdioTransport({ log: (line) => Runtime.runSync(runtime)(Effect.logWarning(line)) })
    const closed = yield* Deferred.make<void, McpClientNotReading>()
    server.server.onclose = () => Deferred.unsafeDone(closed, transport.cutOff === undefined ? Effect.void : Effect.fail(transport.cutOff))
    yield* Effect.acquireRelease(
      Effect.promise(() => server.connect(transport)),
      () => Effect.promise(() => server.close()).pipe(Effect.ignore)
    )
    yield* Effect.logInfo("a2a-relay MCP server ready on stdio")
    yield* Deferred.await(closed)
  })

/** Serves the HTTP transport `options.kind` until the scope closes; its URL once listening. */
export const serveHttp = (options: HttpOptions, makeServer: () => McpServer) =>
  Effect.flatMap(Effect.promise(() => import("./httpTransports.js")), (http) => http.serveHttp(options, makeServer))
