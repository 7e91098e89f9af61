/**
 * The three ways `relay mcp` is reached: stdio (default), streamable HTTP at /mcp, and the older
 * HTTP+SSE transport at /sse with posts to /messages (deprecated). Each is scoped: closing the
 * scope closes the sessions and the port. Stdio and streamable HTTP serve both protocol eras: the
 * way a client opens (`initialize`, or a request carrying the 2026-07-28 `_meta`) picks the era.
 * The HTTP transports (httpTransports.ts, with express) load only when asked for: stdio, the
 * default, never parses them.
 */
import { serveStdio as serveStdioEras } from "@modelcontextprotocol/server/stdio"
import { Effect, Runtime } from "effect"
import type { McpClientNotReading } from "../domain/errors.js"
import type { HttpOptions } from "./httpTransports.js"
import type { ServerFactory } from "./server.js"
import { BoundedStdioTransport } from "./stdio.js"

export const TRANSPORTS = ["stdio", "sse", "streamable-http"] as const
export type TransportKind = (typeof TRANSPORTS)[number]

/**
 * Serves MCP over stdin/stdout until stdin closes, or fails with McpClientNotReading when the
 * client leaves too much unread (the command then exits 1 at once, dropping what stdout still
 * held). The SDK's entry reads the opening message and pins one server of that era for the
 * connection; the transport under it is relay's, with its size limit and the client's pace.
 */
export const serveStdio = (makeServer: ServerFactory) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string) => Runtime.runSync(runtime)(Effect.logWarning(line))
    const transport = new BoundedStdioTransport({ log })
    yield* Effect.acquireRelease(
      Effect.sync(() =>
        serveStdioEras(({ era }) => makeServer(era), {
          legacy: "serve",
          transport,
          onerror: (error) => Runtime.runSync(runtime)(Effect.logDebug(`MCP: ${error.message}`))
        })
      ),
      (handle) => Effect.promise(() => handle.close()).pipe(Effect.ignore)
    )
    yield* Effect.logInfo("a2a-relay MCP server ready on stdio")
    yield* Effect.promise(() => transport.closed)
    if (transport.cutOff !== undefined) return yield* Effect.fail<McpClientNotReading>(transport.cutOff)
  })

/** Serves the HTTP transport `options.kind` until the scope closes; its URL once listening. */
export const serveHttp = (options: HttpOptions, makeServer: ServerFactory) =>
  Effect.flatMap(Effect.promise(() => import("./httpTransports.js")), (http) => http.serveHttp(options, makeServer))
