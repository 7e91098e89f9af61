/**
 * The local A2A agent server behind `relay server agent`: the agent card, JSON-RPC at `POST /`,
 * HTTP+JSON everywhere else, and `GET /health`, over the agentTasks programs.
 *
 *   GET  /, /.well-known/agent-card.json, /.well-known/agent.json   agent card (open)
 *   GET  /health                                                    liveness (open)
 *   POST /                                                          JSON-RPC, v1.0 and v0.3
 *   *    everything else                                            REST, v1.0 (+ tenant), v0.3 under /v1, SPEC paths
 *
 * The server is scoped: closing its layer (Ctrl+C) stops accepting requests, ends open streams
 * and interrupts running tasks.
 */
import * as HttpServer from "@effect/platform/HttpServer"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Cause, Effect, FiberId, FiberSet, Layer, type Redacted } from "effect"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { ListenFailed } from "../../domain/errors.js"
import { serverBaseUrl } from "../address.js"
import { makeKeyCheck } from "./auth.js"
import { baseUrlOf, CARD_PATHS, type CardInfo, extendedAgentCard, makeCardHandler } from "./card.js"
import { DEFAULT_MAX_BODY_BYTES, type Exchange, makeExchange, readBody, writeJson } from "./io.js"
import { makeJsonRpcHandler } from "./jsonRpc.js"
import type { AgentServices, ServerContext } from "./operations.js"
import { makeRestHandler } from "./rest.js"

export { DEFAULT_MAX_BODY_BYTES } from "./io.js"
export const DEFAULT_AGENT_HOST = "0.0.0.0"
export const DEFAULT_AGENT_PORT = 8000

export interface AgentServerOptions {
  /** What the card says about the model and auth. */
  readonly card: CardInfo
  /** Require this key (X-API-Key or Authorization: Bearer) on everything but the card and /health. */
  readonly key?: Redacted.Redacted<string> | undefined
  /** Largest request body accepted; default 10 MiB. */
  readonly maxBodyBytes?: number | undefined
  readonly host: string
  readonly port: number
}

const bodyLimitOf = (options: AgentServerOptions) => options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES

type Handler = (exchange: Exchange) => Effect.Effect<void, never, AgentServices>

const health: Handler = (exchange) => Effect.sync(() => writeJson(exchange, 200, `{"status":"ok"}`, "application/json"))

const CARD_PATH_SET: ReadonlySet<string> = new Set(["/", ...CARD_PATHS])

/** The handler of each request: the card and /health (GET or HEAD), JSON-RPC at `POST /`, REST for the rest. */
export const makeRouter = (options: AgentServerOptions) => {
  const context: ServerContext = {
    maxBodyBytes: bodyLimitOf(options),
    checkKey: options.key === undefined ? undefined : makeKeyCheck(options.key),
    extendedCard: (exchange) => extendedAgentCard(options.card, baseUrlOf(exchange))
  }
  const card = makeCardHandler(options.card)
  const jsonRpc = makeJsonRpcHandler(context)
  const rest = makeRestHandler(context)
  return (exchange: Exchange): Effect.Effect<void, never, AgentServices> => {
    const { method, path } = exchange
    if (method === "POST" && path === "/") return jsonRpc(exchange)
    if (method === "GET" || method === "HEAD") {
      if (CARD_PATH_SET.has(path)) return card(exchange)
      if (path === "/health") return health(exchange)
    }
    return rest(exchange)
  }
}

/** A bug (a defect) still gets an answer: 500 when nothing was written yet, else the connection is cut. */
const answerDefect = (exchange: Exchange, cause: Cause.Cause<never>) =>
  Cause.isInterruptedOnly(cause) ? Effect.sync(() => exchange.response.destroy()) : Effect.zipRight(
    Effect.logError(`${exchange.method} ${exchange.path} failed unexpectedly`, cause),
    Effect.sync(() => {
      if (exchange.response.headersSent) exchange.response.destroy()
      else writeJson(exchange, 500, JSON.stringify({ error: { code: 500, status: "INTERNAL", message: "Internal error" } }), "application/json")
    })
  )

/**
 * Reads the body of each request of `server`, then runs it through `route` in a fiber of its
 * own, which is interrupted when the client goes away or the server stops.
 *
 * This stands in for @effect/platform's `HttpServer.serve`: its per-request pipeline (the
 * HttpServerRequest wrapper, middleware, a scope per request, the response conversion) cost
 * ~30 % of the throughput of SendMessage with the echo model, 4.4k against 5.8k req/s measured
 * side by side with autocannon (bench/agent-server.mjs), and the doors already read and write
 * node's request and response directly.
 *
 * The body is read with plain listeners before the fiber exists, and the fiber starts with the
 * scheduler's next batch instead of at once: requests that arrive together then run together,
 * which cost ~8 % less CPU per SendMessage than starting each as its body ends (and ~20 % less
 * than starting it at once and waiting for the body inside).
 */
const serveRequests = (server: Server, route: ReturnType<typeof makeRouter>, maxBodyBytes: number) =>
  Effect.gen(function*() {
    const runFork = yield* FiberSet.makeRuntime<AgentServices>()
    const onRequest = (request: IncomingMessage, response: ServerResponse) =>
      readBody(request, maxBodyBytes, (body) => {
        const exchange = makeExchange(request, response, body)
        const fiber = runFork(Effect.catchAllCause(route(exchange), (cause) => answerDefect(exchange, cause)), {
          immediate: false
        })
        response.on("close", () => {
          if (!response.writableEnded) fiber.unsafeInterruptAsFork(FiberId.none)
        })
      })
    server.on("request", onRequest)
    yield* Effect.addFinalizer(() => Effect.sync(() => server.off("request", onRequest)))
  })

/**
 * The agent server bound to `host:port` (0 picks a free port), as a scoped HttpServer (for its
 * address). Closing its scope (Ctrl+C) cuts open connections, SSE streams included, interrupts
 * the requests in flight and closes the listening socket.
 */
export const agentServerLayer = (options: AgentServerOptions) =>
  Layer.scoped(
    HttpServer.HttpServer,
    Effect.gen(function*() {
      const server = createServer()
      // Requests are handled from the first one accepted: the handler is in place before listening.
      yield* serveRequests(server, makeRouter(options), bodyLimitOf(options))
      const httpServer = yield* NodeHttpServer.make(() => server, { host: options.host, port: options.port })
      // Runs before the listening socket closes, which would otherwise wait for open streams.
      yield* Effect.addFinalizer(() => Effect.sync(() => server.closeAllConnections()))
      return httpServer
    })
  ).pipe(Layer.catchAll((error) => Layer.fail(ListenFailed.fromCause(options.host, options.port, error))))

/** The bound server's reachable base URL. */
export const agentBaseUrl = serverBaseUrl
