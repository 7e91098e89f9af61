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
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import * as HttpMiddleware from "@effect/platform/HttpMiddleware"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, type Redacted } from "effect"
import { createServer, type Server } from "node:http"
import { ListenFailed } from "../../domain/errors.js"
import { serverBaseUrl } from "../address.js"
import { makeKeyCheck } from "./auth.js"
import { baseUrlOf, CARD_PATHS, type CardInfo, extendedAgentCard, makeCardHandler } from "./card.js"
import { DEFAULT_MAX_BODY_BYTES, writeJson } from "./io.js"
import { makeJsonRpcHandler } from "./jsonRpc.js"
import type { ServerContext } from "./operations.js"
import { makeRestHandler } from "./rest.js"

export { DEFAULT_MAX_BODY_BYTES } from "./io.js"
export const DEFAULT_AGENT_HOST = "0.0.0.0"
export const DEFAULT_AGENT_PORT = 8000

export interface AgentServerOptions {
  /** What the card says about the model and auth. */
  readonly card: CardInfo
  /** Require this key (X-API-Key or Authorization: Bearer) on everything but the card and /health. */
  readonly key?: Redacted.Redacted<string> | undefined
  /** Largest request body; default 10 MiB. */
  readonly maxBodyBytes?: number | undefined
}

export interface AgentServerListenOptions extends AgentServerOptions {
  readonly host: string
  readonly port: number
}

const health = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.succeed(writeJson(request, 200, `{"status":"ok"}`, "application/json"))

/** The routes; they need TaskStore, ModelAccess and PushSender. */
export const agentRoutes = (options: AgentServerOptions) => {
  const context: ServerContext = {
    maxBodyBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    checkKey: options.key === undefined ? undefined : makeKeyCheck(options.key),
    extendedCard: (request) => extendedAgentCard(options.card, baseUrlOf(request))
  }
  const card = makeCardHandler(options.card)
  return HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/", card),
    ...CARD_PATHS.map((path) => HttpLayerRouter.route("GET", path, card)),
    HttpLayerRouter.route("GET", "/health", health),
    HttpLayerRouter.route("POST", "/", makeJsonRpcHandler(context)),
    HttpLayerRouter.route("*", "*", makeRestHandler(context))
  ])
}

/** The routes served on whatever HttpServer is provided (tests give one on a free port). */
export const serveAgent = (options: AgentServerOptions) =>
  HttpLayerRouter.serve(agentRoutes(options), { disableLogger: true, disableListenLog: true }).pipe(
    // Nobody collects traces here; a span per request would only cost time.
    HttpMiddleware.withTracerDisabledWhen(() => true)
  )

/** A node HTTP server whose open connections (SSE streams included) are cut when its scope closes. */
const nodeServer = (host: string, port: number) => {
  let server: Server | undefined
  const cutConnections = Layer.scopedDiscard(
    Effect.addFinalizer(() => Effect.sync(() => server?.closeAllConnections()))
  )
  return cutConnections.pipe(
    Layer.provideMerge(NodeHttpServer.layer(() => (server = createServer()), { host, port }))
  )
}

/** The agent server bound to `host:port` (0 picks a free port); the HttpServer is exposed for its address. */
export const agentServerLayer = (options: AgentServerListenOptions) =>
  serveAgent(options).pipe(
    Layer.provideMerge(nodeServer(options.host, options.port)),
    Layer.catchAll((error) => Layer.fail(ListenFailed.fromCause(options.host, options.port, error)))
  )

/** The bound server's reachable base URL. */
export const agentBaseUrl = serverBaseUrl
