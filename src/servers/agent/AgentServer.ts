/**
 * The local A2A agent server behind `relay server agent`: the agent card, JSON-RPC at `POST /`,
 * HTTP+JSON everywhere else, and `GET /health`, over the agentTasks programs.
 *
 *   GET  /, /.well-known/agent-card.json, /.well-known/agent.json   agent card (open; HEAD too)
 *   GET  /health                                                    liveness (open; HEAD too)
 *   POST /                                                          JSON-RPC, v1.0 and v0.3
 *   *    everything else                                            REST, v1.0 (+ tenant), v0.3 under /v1, SPEC paths
 *
 * The server is scoped: closing its layer (Ctrl+C) stops accepting requests, ends open streams
 * and interrupts running tasks.
 */
import { Effect, type Redacted } from "effect"
import { serverBaseUrl } from "../address.js"
import { type Exchange, headerValue, type RequestHead, serveExchanges, writeJson } from "../exchange.js"
import { makeKeyCheck } from "./auth.js"
import { baseUrlOf, CARD_PATHS, type CardInfo, extendedAgentCard, makeCardHandler } from "./card.js"
import { bodyLimits, DEFAULT_MAX_BODY_BYTES, isJsonContentType } from "./io.js"
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

type Handler = (exchange: Exchange) => Effect.Effect<void, never, AgentServices>

const health: Handler = (exchange) => Effect.sync(() => writeJson(exchange, 200, `{"status":"ok"}`, "application/json"))

const CARD_PATH_SET: ReadonlySet<string> = new Set(["/", ...CARD_PATHS])

/** The handler of each request: the card and /health (GET or HEAD), JSON-RPC at `POST /`, REST for the rest. */
const makeHandler = (context: ServerContext, options: AgentServerOptions) => {
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

/** Only bodies that can be taken are read: JSON sent with POST or PUT, with the key when one is required. */
const readsBody = ({ checkKey }: ServerContext) => (head: RequestHead) =>
  (head.method === "POST" || head.method === "PUT") && (checkKey === undefined || checkKey(head.headers)) &&
  isJsonContentType(headerValue(head.headers, "content-type"))

/**
 * The agent server bound to `host:port` (0 picks a free port), as a scoped HttpServer for its
 * address (it already serves: never hand it to `HttpServer.serve`, which would answer every
 * request a second time); see ../exchange.ts for how requests are run and how it shuts down.
 */
export const agentServerLayer = (options: AgentServerOptions) => {
  const context: ServerContext = {
    checkKey: options.key === undefined ? undefined : makeKeyCheck(options.key),
    extendedCard: (exchange) => extendedAgentCard(options.card, baseUrlOf(exchange))
  }
  return serveExchanges({
    host: options.host,
    port: options.port,
    limits: bodyLimits(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES),
    readsBody: readsBody(context),
    handle: makeHandler(context, options)
  })
}

/** The bound server's reachable base URL. */
export const agentBaseUrl = serverBaseUrl
