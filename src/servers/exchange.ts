/**
 * Serving HTTP on node's own request and response, for the local servers (`relay server agent`
 * and `relay server push`): one request and its answer is an Exchange, its body is read before
 * it is handled, and each runs in a fiber of its own on NodeHttpServer's node server.
 *
 * This stands in for @effect/platform's `HttpServer.serve`: its per-request pipeline (the
 * HttpServerRequest wrapper, middleware, a scope per request, the response conversion) cost the
 * agent server a good part of its SendMessage throughput (bench/README.md).
 */
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import * as HttpServer from "@effect/platform/HttpServer"
import { Cause, Effect, FiberId, FiberSet, Layer } from "effect"
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from "node:http"
import { ListenFailed } from "../domain/errors.js"
import { CLIENT_TIMEOUTS, type ClientTimeouts } from "../domain/limits.js"
import { BodyBytes } from "./bodyBytes.js"

export type BodyRead =
  | { readonly _tag: "Complete"; readonly bytes: Buffer }
  | { readonly _tag: "TooLarge"; readonly bytes: number; readonly limit: number }
  /** The client went away before the end of its body. */
  | { readonly _tag: "Broken" }
  /**
   * Not read, or not in time (BodyLimits.waitMs): the request is answered without it (see
   * ServeOptions.bodyLimits); node discards the rest.
   */
  | { readonly _tag: "Skipped" }

/** What is known of a request before its body. */
export interface RequestHead {
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  /** The path alone. */
  readonly path: string
  /** Lower-case names, as node parsed them. */
  readonly headers: IncomingHttpHeaders
}

/** A request being answered. */
export interface Exchange extends RequestHead {
  readonly request: IncomingMessage
  readonly response: ServerResponse
  /** Read before the request is handled. */
  readonly body: BodyRead
}

export interface BodyLimits {
  /** Largest body kept; a bigger one is TooLarge. */
  readonly maxBytes: number
  /** Up to this many bytes an oversized body is drained so the client still reads its 413; past it, it is cut off. */
  readonly cutOffBytes: number
  /** When set, a body not complete within this many milliseconds is given up as Skipped. */
  readonly waitMs?: number | undefined
}

const headOf = (request: IncomingMessage): RequestHead => {
  const url = request.url ?? "/"
  const query = url.indexOf("?")
  return { method: request.method ?? "GET", url, path: query < 0 ? url : url.slice(0, query), headers: request.headers }
}

/**
 * Reads the body within `limits` and hands it to `done`, once. The listeners stay on the request
 * once it is decided (a flag makes them no-ops): taking four listeners off every request cost
 * more than they do, and the request goes with them.
 */
export const readBody = (request: IncomingMessage, limits: BodyLimits, done: (read: BodyRead) => void): void => {
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > limits.cutOffBytes) return done({ _tag: "TooLarge", bytes: declared, limit: limits.maxBytes })
  // Gathered into one buffer (BodyBytes): a body sent a byte per chunk would otherwise hold a Buffer per byte.
  const kept = new BodyBytes()
  if (declared > 0 && declared <= limits.maxBytes) kept.expect(declared)
  let size = 0
  let finished = false
  const timer = limits.waitMs === undefined ? undefined : setTimeout(() => finish({ _tag: "Skipped" }), limits.waitMs)
  const finish = (read: BodyRead) => {
    if (finished) return
    finished = true
    if (timer !== undefined) clearTimeout(timer)
    // What was read is the read's now (or dropped): the listeners must not keep it.
    kept.clear()
    done(read)
  }
  request.on("data", (chunk: Buffer) => {
    if (finished) return
    size += chunk.length
    if (size <= limits.maxBytes) kept.add(chunk)
    else if (size > limits.cutOffBytes) finish({ _tag: "TooLarge", bytes: size, limit: limits.maxBytes })
  })
  request.on("end", () =>
    finish(
      size > limits.maxBytes ? { _tag: "TooLarge", bytes: size, limit: limits.maxBytes } : { _tag: "Complete", bytes: kept.bytes }
    ))
  const onBroken = () => finish({ _tag: "Broken" })
  request.on("error", onBroken)
  request.on("close", onBroken)
}

export const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The answer's own headers, with `connection: close` when the request's body was not read to its
 * end (refused before it was read: no key, a type not taken, past the limit): kept alive, node would
 * read the rest of that body, and drop it, until the request timeout.
 */
const closingUnread = (request: IncomingMessage, headers: Readonly<Record<string, string | number>> | undefined) =>
  request.complete ? headers : { ...headers, connection: "close" }

/** Writes a complete JSON answer (already serialised). */
export const writeJson = (
  { request, response }: Exchange,
  status: number,
  json: string,
  contentType = "application/json",
  headers?: Readonly<Record<string, string>>
): void => {
  const length = Buffer.byteLength(json)
  response.writeHead(status, closingUnread(request, { ...headers, "content-type": contentType, "content-length": length }))
  response.end(json)
}

/** Writes an answer without a body (204, 304, 400). */
export const writeEmpty = ({ request, response }: Exchange, status: number, headers?: Readonly<Record<string, string>>): void => {
  response.writeHead(status, closingUnread(request, headers))
  response.end()
}

/**
 * A bug (a defect) still gets an answer: a 500 in the envelope of its route when nothing was
 * written yet (never a stack: the cause goes to the log); a half-written answer has its
 * connection cut, a finished one is left alone.
 */
const answerDefect = (exchange: Exchange, cause: Cause.Cause<never>, answerInternalError: (exchange: Exchange) => void) => {
  const { response } = exchange
  if (Cause.isInterruptedOnly(cause)) return Effect.sync(() => response.writableEnded || response.destroy())
  return Effect.zipRight(
    Effect.logError(`${exchange.method} ${exchange.path} failed unexpectedly`, cause),
    Effect.sync(() => {
      if (!response.headersSent) answerInternalError(exchange)
      else if (!response.writableEnded) response.destroy()
    })
  )
}

export interface ServeOptions<R> {
  readonly host: string
  readonly port: number
  /**
   * How much of a request's body to read, or undefined when it is not worth reading. A request
   * that will be refused (no key, a content type that is not taken, a method without a body)
   * is answered at once with its body Skipped (or read only a little, briefly), so nobody can
   * make the server hold bodies it will not use.
   */
  readonly bodyLimits: (head: RequestHead) => BodyLimits | undefined
  /** Answers one request; it must write the response (errors are its to answer). */
  readonly handle: (exchange: Exchange) => Effect.Effect<void, never, R>
  /** Writes the 500 of a defect (a bug), in the error envelope of the request's route. */
  readonly answerInternalError: (exchange: Exchange) => void
  /** How long a client may take to send its request (default CLIENT_TIMEOUTS). */
  readonly clientTimeouts?: ClientTimeouts | undefined
}

/** Each request's fiber starts with the scheduler's next batch (see serveExchanges). */
const BATCHED = { immediate: false } as const

/**
 * A node HTTP server bound to `host:port` (0 picks a free port) that hands every request to
 * `handle`, as a scoped HttpServer (for its address).
 *
 * The body is read with plain listeners before the request's fiber exists, and the fiber starts
 * with the scheduler's next batch instead of at once: requests that arrive together then run
 * together, which cost the agent server less CPU per SendMessage than starting each as its body
 * ends, or at once waiting for the body inside (bench/README.md). A fiber is
 * interrupted when its client goes away. Closing the scope (Ctrl+C) cuts open connections, SSE
 * streams included, interrupts the requests in flight and closes the listening socket.
 */
export const serveExchanges = <R>(options: ServeOptions<R>): Layer.Layer<HttpServer.HttpServer, ListenFailed, R> =>
  Layer.scoped(
    HttpServer.HttpServer,
    Effect.gen(function*() {
      const timeouts = options.clientTimeouts ?? CLIENT_TIMEOUTS
      const server = createServer({
        headersTimeout: timeouts.headersMs,
        requestTimeout: timeouts.requestMs,
        // Node looks for overdue requests this often (30 s by default, which would stretch the limits).
        connectionsCheckingInterval: Math.min(1000, timeouts.headersMs)
      })
      const runFork = yield* FiberSet.makeRuntime<R>()
      const run = (head: RequestHead, request: IncomingMessage, response: ServerResponse, body: BodyRead) => {
        const exchange: Exchange = { method: head.method, url: head.url, path: head.path, headers: head.headers, request, response, body }
        const handled = Effect.catchAllCause(
          Effect.suspend(() => options.handle(exchange)),
          (cause) => answerDefect(exchange, cause, options.answerInternalError)
        )
        const fiber = runFork(handled, BATCHED)
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
        })
      }
      const onRequest = (request: IncomingMessage, response: ServerResponse) => {
        const head = headOf(request)
        const limits = options.bodyLimits(head)
        if (limits !== undefined) readBody(request, limits, (body) => run(head, request, response, body))
        else run(head, request, response, { _tag: "Skipped" })
      }
      // In place before listening: the first request accepted is handled.
      server.on("request", onRequest)
      yield* Effect.addFinalizer(() => Effect.sync(() => server.off("request", onRequest)))
      const httpServer = yield* NodeHttpServer.make(() => server, { host: options.host, port: options.port })
      // Stops accepting, then cuts open connections (SSE streams too), which closing alone would wait for.
      yield* Effect.addFinalizer(() =>
        Effect.sync(() => {
          server.close()
          server.closeAllConnections()
        })
      )
      return httpServer
    })
  ).pipe(Layer.catchAll((error) => Layer.fail(ListenFailed.fromCause(options.host, options.port, error))))
