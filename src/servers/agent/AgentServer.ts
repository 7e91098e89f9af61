/**
 * The local A2A agent server behind `relay server agent`: the agent card, JSON-RPC at `POST /`,
 * HTTP+JSON everywhere else, and `GET /health`, over the agent programs (programs/agent/).
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
import type { ClientTimeouts } from "../../domain/limits.js"
import { MAX_UNAUTHENTICATED_BODY_BYTES, MAX_UNAUTHENTICATED_BODY_WAIT_MS } from "../../domain/limits.js"
import { serverBaseUrl } from "../address.js"
import { type BodyLimits, type Exchange, headerValue, type RequestHead, serveExchanges, writeJson } from "../exchange.js"
import { makeKeyCheck } from "./auth.js"
import { baseUrlOf, CARD_PATHS, type CardInfo, extendedAgentCard, makeCardHandler } from "./card.js"
import { bodyLimits, DEFAULT_MAX_BODY_BYTES, isJsonContentType } from "./io.js"
import * as JsonRpc from "./jsonRpc.js"
import type { AgentServices, ServerContext } from "./operations.js"
import * as Rest from "./rest.js"

export { DEFAULT_AGENT_HOST, DEFAULT_AGENT_PORT, DEFAULT_MAX_BODY_BYTES } from "./defaults.js"

export interface AgentServerOptions {
  /** What the card says about the model and auth. */
  readonly card: CardInfo
  /** Require this key (X-API-Key or Authorization: Bearer) on everything but the card and /health. */
  readonly key?: Redacted.Redacted<string> | undefined
  /** Largest request body accepted; default 10 MiB. */
  readonly maxBodyBytes?: number | undefined
  readonly host: string
  readonly port: number
  /** How long a client may take to send its request (default CLIENT_TIMEOUTS in domain/limits.ts). */
  readonly clientTimeouts?: ClientTimeouts | undefined
}

type Handler = (exchange: Exchange) => Effect.Effect<void, never, AgentServices>

const health: Handler = (exchange) => Effect.sync(() => writeJson(exchange, 200, `{"status":"ok"}`, "application/json"))

const isJsonRpcCall = (head: RequestHead) => head.method === "POST" && head.path === "/"

const CARD_PATH_SET: ReadonlySet<string> = new Set(["/", ...CARD_PATHS])

/** The handler of each request: the card and /health (GET or HEAD), JSON-RPC at `POST /`, REST for the rest. */
const makeHandler = (context: ServerContext, options: AgentServerOptions) => {
  const card = makeCardHandler(options.card)
  const jsonRpc = JsonRpc.makeJsonRpcHandler(context)
  const rest = Rest.makeRestHandler(context)
  return (exchange: Exchange): Effect.Effect<void, never, AgentServices> => {
    const { method, path } = exchange
    if (isJsonRpcCall(exchange)) return jsonRpc(exchange)
    if (method === "GET" || method === "HEAD") {
      if (CARD_PATH_SET.has(path)) return card(exchange)
      if (path === "/health") return health(exchange)
    }
    return rest(exchange)
  }
}

/** A refused JSON-RPC call is read only a little, briefly, for the id its 401 answers with. */
const UNAUTHENTICATED_LIMITS: BodyLimits = {
  maxBytes: MAX_UNAUTHENTICATED_BODY_BYTES,
  cutOffBytes: MAX_UNAUTHENTICATED_BODY_BYTES,
  waitMs: MAX_UNAUTHENTICATED_BODY_WAIT_MS
}

/**
 * Only bodies that can be taken are read: JSON sent with POST or PUT, with the key when one is
 * required. Without the key, a JSON-RPC call's body is read within UNAUTHENTICATED_LIMITS.
 */
const bodyLimitsOf = ({ checkKey }: ServerContext, limits: BodyLimits) => (head: RequestHead): BodyLimits | undefined => {
  if ((head.method !== "POST" && head.method !== "PUT") || !isJsonContentType(headerValue(head.headers, "content-type"))) {
    return undefined
  }
  if (checkKey === undefined || checkKey(head.headers)) return limits
  return isJsonRpcCall(head) ? UNAUTHENTICATED_LIMITS : undefined
}

/** The 500 of a defect, as a JSON-RPC error on the JSON-RPC route and in the REST error shape elsewhere. */
const answerInternalError = (exchange: Exchange) =>
  isJsonRpcCall(exchange) ? JsonRpc.answerInternalError(exchange) : Rest.answerInternalError(exchange)

/**
 * The agent server bound to `host:port` (0 picks a free port), as a scoped HttpServer for its
 * address (it already serves: never hand it to `HttpServer.serve`, which would answer every
 * request a second time); see ../exchange.ts for how requests are run and how it shuts down.
 */
export const agentServerLayer = (options: AgentServerOptions) => {
  const context: ServerContext = {
    checkKey: options.key === undefined ? undefined : makeKeyCheck(options.key),
    // The extended card differs from the public one only for those who have the key.
    extendedCard: options.key === undefined ? () => undefined : (exchange) => extendedAgentCard(options.card, baseUrlOf(exchange))
  }
  return serveExchanges({
    host: options.host,
    port: options.port,
    bodyLimits: bodyLimitsOf(context, bodyLimits(options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES)),
    handle: makeHandler(context, options),
    answerInternalError,
    clientTimeouts: options.clientTimeouts
  })
}

/** The bound server's reachable base URL. */
export const agentBaseUrl = serverBaseUrl
