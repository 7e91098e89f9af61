/**
 * The agent card of the local agent server, generated from what the server is running.
 *
 * Served at `/`, `/.well-known/agent-card.json` and the legacy `agent.json` paths: the strict
 * v1.0 card to callers that send `A2A-Version: 1.0`, otherwise the hybrid v0.3/v1.0 card that
 * readers of both generations understand (as @a2a-js does in compat mode), with `Vary:
 * A2A-Version`, an ETag and Cache-Control. Interface URLs use the address the client used (its
 * Host header), so a server bound to 0.0.0.0 still advertises URLs that reach it.
 */
import { Effect, type ParseResult, Schema } from "effect"
import { createHash } from "node:crypto"
import { hybridCard } from "../../a2a/translate.js"
import * as V1 from "../../a2a/v1.js"
import type { ModelModes } from "../../domain/agentTurn.js"
import { VERSION } from "../../version.js"
import { type Exchange, headerValue, writeEmpty, writeJson } from "../exchange.js"
import { cardSecurity } from "./auth.js"
import { requestedVersion } from "./versions.js"

export const CARD_PATHS = [
  "/.well-known/agent-card.json",
  "/.well-known/agent.json",
  "/.well-known/a2a/agent.json"
] as const

export const AGENT_NAME = "relay agent"
const CACHE_CONTROL = "public, max-age=300"
/** Distinct (host, version) cards kept encoded; more are rebuilt on demand. */
const MAX_CACHED_CARDS = 64

export interface CardInfo {
  /** The model in use, e.g. "echo" or "ollama:llama3.2:1b", and why it was chosen. */
  readonly model: { readonly text: string; readonly reason: string }
  /** Whether the server requires its API key. */
  readonly auth: boolean
  /** The media types the model takes and gives: the card's default input and output modes. */
  readonly modes: ModelModes
  /** The model's own skills (the mock model's scenarios); none: the general chat skill. */
  readonly skills?: ReadonlyArray<V1.AgentSkill> | undefined
  /** The port of the gRPC door (`--grpc-port`), when it is open. */
  readonly grpcPort?: number | undefined
}

const chatSkill = (modes: ModelModes): V1.AgentSkill => ({
  id: "chat",
  name: "Chat",
  description: "Answers each message with a language model; messages that share a context id form one conversation.",
  tags: ["chat", "llm", "testing"],
  examples: ["Hello! What can you do?", "Explain the A2A protocol in one sentence."],
  inputModes: modes.input,
  outputModes: modes.output
})

/**
 * JSON-RPC at `/` and HTTP+JSON under the root, each at 1.0 and at 0.3, in that order of
 * preference; then gRPC, when it is open, at 1.0 and 0.3 (last: clients that take the first
 * interface they speak keep the HTTP bindings). A gRPC interface is `host:port` (a2a.proto), the
 * host the client used with the gRPC port.
 */
const interfacesAt = (baseUrl: string, grpcPort: number | undefined): ReadonlyArray<V1.AgentInterface> => {
  const http: ReadonlyArray<V1.AgentInterface> = [
    { url: `${baseUrl}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: baseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
    { url: `${baseUrl}/`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
    { url: baseUrl, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }
  ]
  if (grpcPort === undefined) return http
  const grpcUrl = `${new URL(baseUrl).hostname}:${grpcPort}`
  return [
    ...http,
    { url: grpcUrl, protocolBinding: "GRPC", protocolVersion: "1.0" },
    { url: grpcUrl, protocolBinding: "GRPC", protocolVersion: "0.3" }
  ]
}

/** The public card for a base URL such as `http://127.0.0.1:8000`. */
export const agentCard = (info: CardInfo, baseUrl: string): V1.AgentCard => ({
  name: AGENT_NAME,
  description: `relay's local A2A agent for testing and development, answering with the ${info.model.text} model.`,
  supportedInterfaces: interfacesAt(baseUrl, info.grpcPort),
  version: VERSION,
  // Only with --auth is there an extended card worth asking for: it differs from this one and needs the key.
  capabilities: { streaming: true, pushNotifications: true, extendedAgentCard: info.auth },
  ...(info.auth ? cardSecurity() : {}),
  defaultInputModes: info.modes.input,
  defaultOutputModes: info.modes.output,
  skills: info.skills ?? [chatSkill(info.modes)]
})

/** The extended card (GetExtendedAgentCard, served only with --auth): the public one plus why this model was chosen. */
export const extendedAgentCard = (info: CardInfo, baseUrl: string): V1.AgentCard => {
  const card = agentCard(info, baseUrl)
  return { ...card, description: `${card.description} Model chosen because: ${info.model.reason}.` }
}

const HOST = /^(?:[A-Za-z0-9.-]+|\[[0-9A-Fa-f:.]+\])(?::\d{1,5})?$/

/** The address the request arrived at, e.g. `http://127.0.0.1:8000`. */
const localBaseUrl = ({ request }: Exchange) => {
  const socket = request.socket
  const address = socket.localAddress ?? "127.0.0.1"
  return `http://${address.includes(":") ? `[${address}]` : address}:${socket.localPort ?? 80}`
}

/** `http://<Host header>` when the header is a plain host[:port], else the address the request arrived at. */
export const baseUrlOf = (exchange: Exchange): string => {
  const host = headerValue(exchange.headers, "host")
  return host !== undefined && HOST.test(host) ? `http://${host}` : localBaseUrl(exchange)
}

/**
 * The HTTP base URL for a request that arrived at another port (the gRPC door's): the host the
 * client used (`authority`, a plain host[:port]) at the HTTP server's port, else `httpBaseUrl`.
 */
export const httpBaseUrlFor = (authority: string, httpBaseUrl: string): string => {
  if (!HOST.test(authority)) return httpBaseUrl
  const url = new URL(`http://${authority}`)
  url.port = new URL(httpBaseUrl).port
  return url.origin
}

interface EncodedCard {
  readonly json: string
  readonly etag: string
}

const encodeV1Card = Schema.encode(V1.AgentCard)

const encodeCard = (card: V1.AgentCard, generation: "1.0" | "hybrid"): Effect.Effect<EncodedCard, ParseResult.ParseError> =>
  Effect.map(generation === "1.0" ? encodeV1Card(card) : hybridCard(card, card.supportedInterfaces[0]?.url), (value) => {
    const json = JSON.stringify(value)
    return { json, etag: `W/"${createHash("sha256").update(json).digest("base64url").slice(0, 27)}"` }
  })

const matchesEtag = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined && ifNoneMatch.split(",").some((tag) => tag.trim() === etag || tag.trim() === "*")

/**
 * The card handler: picks the card generation from A2A-Version, builds it for the Host the
 * client used (encoded once per host and generation), and answers 304 to a matching If-None-Match.
 */
export const makeCardHandler = (info: CardInfo) => {
  const cache = new Map<string, EncodedCard>()

  const encoded = (baseUrl: string, generation: "1.0" | "hybrid") => {
    const key = `${generation} ${baseUrl}`
    const cached = cache.get(key)
    if (cached !== undefined) return Effect.succeed(cached)
    return Effect.tap(encodeCard(agentCard(info, baseUrl), generation), (card) =>
      Effect.sync(() => {
        if (cache.size >= MAX_CACHED_CARDS) cache.clear()
        cache.set(key, card)
      }))
  }

  return (exchange: Exchange): Effect.Effect<void> => {
    const headers = exchange.headers
    const version = requestedVersion(headers, exchange.url)
    const generation = version?.startsWith("1.") === true ? "1.0" : "hybrid"
    return encoded(baseUrlOf(exchange), generation).pipe(
      Effect.map((card) => {
        const cacheHeaders = { etag: card.etag, "cache-control": CACHE_CONTROL, vary: "A2A-Version" }
        return matchesEtag(headerValue(headers, "if-none-match"), card.etag)
          ? writeEmpty(exchange, 304, cacheHeaders)
          : writeJson(exchange, 200, card.json, "application/json", cacheHeaders)
      }),
      Effect.orDie // the card is built by us from valid parts; failing to encode it is a bug
    )
  }
}
