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
import { Effect, type Redacted } from "effect"
import { serverBaseUrl } from "../address.js"
import { type Exchange, serveExchanges, writeJson } from "../exchange.js"
import { makeKeyCheck } from "./auth.js"
import { baseUrlOf, CARD_PATHS, type CardInfo, extendedAgentCard, makeCardHandler } from "./card.js"
import { bodyLimits, DEFAULT_MAX_BODY_BYTES } from "./io.js"
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

/**
 * The agent server bound to `host:port` (0 picks a free port), as a scoped HttpServer (for its
 * address); see ../exchange.ts for how requests are run and how it shuts down.
 */
export const agentServerLayer = (options: AgentServerOptions) =>
  serveExchanges({
    host: options.host,
    port: options.port,
    limits: bodyLimits(bodyLimitOf(options)),
    handle: makeRouter(options)
  })

/** The bound server's reachable base URL. */
export const agentBaseUrl = serverBaseUrl
