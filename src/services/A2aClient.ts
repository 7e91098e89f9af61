/**
 * A2aClient: every operation against a remote A2A agent, in either protocol generation and
 * either HTTP binding, returning the v1.0 domain model.
 *
 * discover the card (agent-card.json, then agent.json, or an explicit card URL; ETag and
 * Cache-Control honoured) → pick the first interface we speak (or the one pinned) → encode the
 * operation in that interface's dialect → send with A2A-Version and the caller's credentials
 * (only to the origin the user addressed) → decode; on the v0.3 signals of a 1.0 interface,
 * fall back to the card's 0.3 interface unless the user pinned a version.
 */
import { Sse } from "@effect/experimental"
import { Headers, HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import type { HttpClientError } from "@effect/platform"
import { Clock, Context, Duration, Effect, Layer, Option, ParseResult, Ref, Stream } from "effect"
import {
  type Binding,
  bindingOf,
  type Dialect,
  dialectFor,
  protocolVersionOf,
  type ProtocolVersion,
  type WireRequest
} from "../domain/a2a/dialects.js"
import { a2aErrorByReason, errorInfoReason } from "../domain/a2a/errors.js"
import { type CardGeneration, cardFromWire } from "../domain/a2a/translate.js"
import type * as V1 from "../domain/a2a/v1.js"
import {
  type A2aClientError,
  AgentUnreachable,
  AuthRequired,
  CardNotFound,
  HttpError,
  InvalidCard,
  InvalidResponse,
  ProtocolError,
  RequestTimeout,
  UnsupportedOperation
} from "../domain/clientErrors.js"
import type { Credentials } from "../domain/session.js"

/** Who to talk to and how; credentials are already resolved by the program. */
export interface Target {
  /** The agent's base URL as the user addressed it (normalised). */
  readonly agentUrl: string
  /** An explicit card URL, skipping well-known discovery. */
  readonly cardUrl?: string | undefined
  readonly credentials?: Credentials | undefined
  readonly protocol?: ProtocolVersion | undefined
  readonly binding?: Binding | undefined
  /** Send credentials even to interface URLs on another origin than the one addressed. */
  readonly allowCrossOriginCredentials?: boolean | undefined
  /** Wait for response headers at most this long (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** End a stream that is silent this long (default: never). */
  readonly streamIdleTimeout?: Duration.DurationInput | undefined
}

export interface DiscoveredCard {
  readonly card: V1.AgentCard
  /** The card JSON exactly as served. */
  readonly raw: unknown
  readonly generation: CardGeneration
  readonly declaredProtocolVersion?: string | undefined
  readonly cardUrl: string
}

/** One interface of the card we can speak. */
export interface Endpoint {
  readonly url: string
  readonly binding: Binding
  readonly version: ProtocolVersion
  readonly tenant?: string | undefined
}

export class A2aClient extends Context.Tag("relay/A2aClient")<A2aClient, {
  readonly discover: (target: Target) => Effect.Effect<DiscoveredCard, A2aClientError>
  /** The interface the client would use, after discovery and pins. */
  readonly endpoint: (target: Target) => Effect.Effect<Endpoint, A2aClientError>
  readonly send: (target: Target, request: V1.SendMessageRequest) => Effect.Effect<V1.SendMessageResponse, A2aClientError>
  readonly stream: (target: Target, request: V1.SendMessageRequest) => Stream.Stream<V1.StreamResponse, A2aClientError>
  readonly getTask: (target: Target, request: V1.GetTaskRequest) => Effect.Effect<V1.Task, A2aClientError>
  readonly listTasks: (target: Target, request: V1.ListTasksRequest) => Effect.Effect<V1.ListTasksResponse, A2aClientError>
  readonly cancelTask: (target: Target, request: V1.CancelTaskRequest) => Effect.Effect<V1.Task, A2aClientError>
  readonly subscribe: (target: Target, request: V1.SubscribeToTaskRequest) => Stream.Stream<V1.StreamResponse, A2aClientError>
  readonly createPushConfig: (
    target: Target,
    config: V1.TaskPushNotificationConfig
  ) => Effect.Effect<V1.TaskPushNotificationConfig, A2aClientError>
  readonly getPushConfig: (
    target: Target,
    request: V1.TaskPushNotificationConfigRequest
  ) => Effect.Effect<V1.TaskPushNotificationConfig, A2aClientError>
  readonly listPushConfigs: (
    target: Target,
    request: V1.ListTaskPushNotificationConfigsRequest
  ) => Effect.Effect<ReadonlyArray<V1.TaskPushNotificationConfig>, A2aClientError>
  readonly deletePushConfig: (target: Target, request: V1.TaskPushNotificationConfigRequest) => Effect.Effect<void, A2aClientError>
  /** The extended (authenticated) card, when the agent declares one. */
  readonly extendedCard: (target: Target) => Effect.Effect<DiscoveredCard, A2aClientError>
}>() {}

const DEFAULT_TIMEOUT: Duration.DurationInput = "30 seconds"
const DEFAULT_CARD_MAX_AGE_MS = 300_000
const WELL_KNOWN_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const
const JSON_RPC_CONTENT_TYPE = "application/json"
const REST_CONTENT_TYPE = "application/a2a+json"
const BODY_EXCERPT = 300

// ---------------------------------------------------------------------------
// Pure helpers

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/** The card URLs to try, best first. A URL that names a .json file is a card URL itself. */
export const cardCandidates = (target: Target): ReadonlyArray<string> => {
  if (target.cardUrl !== undefined) return [target.cardUrl]
  if (/\.json$/i.test(new URL(target.agentUrl).pathname)) return [target.agentUrl]
  const base = new URL(target.agentUrl)
  const atRoot = WELL_KNOWN_PATHS.map((path) => `${base.origin}${path}`)
  // Some agents serve the card under their own path rather than the domain root.
  const path = base.pathname.replace(/\/+$/, "")
  const underPath = path === "" ? [] : WELL_KNOWN_PATHS.map((p) => `${base.origin}${path}${p}`)
  return [...atRoot, ...underPath]
}

/** Interfaces we can speak, in the card's order of preference, filtered by the user's pins. */
export const selectEndpoints = (card: V1.AgentCard, cardUrl: string, target: Target): ReadonlyArray<Endpoint> =>
  card.supportedInterfaces.flatMap((entry) => {
    const binding = bindingOf(entry.protocolBinding)
    const version = protocolVersionOf(entry.protocolVersion)
    if (binding === undefined || version === undefined) return []
    if (target.binding !== undefined && target.binding !== binding) return []
    if (target.protocol !== undefined && target.protocol !== version) return []
    let url: string
    try {
      url = new URL(entry.url, cardUrl).toString()
    } catch {
      return []
    }
    return [{ url, binding, version, tenant: entry.tenant || undefined }]
  })

/** The v0.3 signals of §6a.9 on a 1.0 interface: unknown method, version refused, or a bare 404. */
const isVersionMismatch = (endpoint: Endpoint, error: A2aClientError) =>
  endpoint.version === "1.0" && (
    (error._tag === "ProtocolError" && (error.a2aCode === -32601 || error.a2aCode === -32009)) ||
    (error._tag === "HttpError" && (error.status === 404 || error.status === 405))
  )

const maxAgeMs = (cacheControl: string | undefined) => {
  const match = /max-age=(\d+)/i.exec(cacheControl ?? "")
  if (/no-store|no-cache/i.test(cacheControl ?? "")) return 0
  return match ? Number(match[1]) * 1000 : DEFAULT_CARD_MAX_AGE_MS
}

const excerpt = (text: string) => (text.length > BODY_EXCERPT ? `${text.slice(0, BODY_EXCERPT)}…` : text).trim()

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null && !Array.isArray(u)

/** A JSON-RPC error object → ProtocolError. */
const jsonRpcError = (error: unknown): ProtocolError => {
  const fields = isRecord(error) ? error : {}
  const code = typeof fields["code"] === "number" ? fields["code"] : -32603
  const reason = errorInfoReason(fields["data"])
  return new ProtocolError({
    a2aCode: code,
    ...(reason === undefined ? {} : { reason }),
    detail: typeof fields["message"] === "string" ? fields["message"] : "no message"
  })
}

/** A google.rpc.Status body `{error:{code,status,message,details}}` → ProtocolError, if it is one. */
const restError = (status: number, body: unknown): Option.Option<ProtocolError> => {
  if (!isRecord(body) || !isRecord(body["error"])) return Option.none()
  const error = body["error"]
  const reason = errorInfoReason(error["details"])
  const known = reason === undefined ? undefined : a2aErrorByReason(reason)
  return Option.some(new ProtocolError({
    a2aCode: known?.jsonRpcCode ?? status,
    ...(reason === undefined ? {} : { reason }),
    detail: typeof error["message"] === "string" ? error["message"] : `HTTP ${status}`
  }))
}

const credentialHeaders = (credentials: Credentials | undefined): Record<string, string> =>
  credentials === undefined
    ? {}
    : credentials.kind === "bearer"
    ? { authorization: `Bearer ${credentials.token}` }
    : { [credentials.header.toLowerCase()]: credentials.key }

let requestCounter = 0
const nextRequestId = () => `relay-${Date.now().toString(36)}-${(++requestCounter).toString(36)}`

// ---------------------------------------------------------------------------

interface CachedCard {
  readonly card: DiscoveredCard
  readonly etag: string | undefined
  readonly expiresAt: number
}

export const make = Effect.gen(function*() {
  const http = yield* HttpClient.HttpClient
  const cardCache = yield* Ref.make(new Map<string, CachedCard>())
  // The endpoint that last worked per agent, so a fallback is paid once per process.
  const workingEndpoints = yield* Ref.make(new Map<string, Endpoint>())
  const warnedOrigins = new Set<string>()

  /** Credentials for a URL: only on the origin the user addressed, unless they allowed otherwise. */
  const credentialsFor = (target: Target, url: string) => {
    if (target.credentials === undefined) return undefined
    if (originOf(url) === originOf(target.agentUrl) || target.allowCrossOriginCredentials === true) return target.credentials
    return undefined
  }

  const warnCrossOrigin = (target: Target, endpoint: Endpoint) =>
    Effect.suspend(() => {
      const origin = originOf(endpoint.url)
      if (target.credentials === undefined || origin === originOf(target.agentUrl) || target.allowCrossOriginCredentials) {
        return Effect.void
      }
      if (origin === undefined || warnedOrigins.has(origin)) return Effect.void
      warnedOrigins.add(origin)
      return Effect.logWarning(
        `The agent card routes requests to ${origin}, not ${originOf(target.agentUrl)}: credentials are not sent there ` +
          `(use --allow-cross-origin-credentials to send them)`
      )
    })

  /** Executes a request with the response timeout, mapping transport failures to typed errors. */
  const execute = (target: Target, request: HttpClientRequest.HttpClientRequest) => {
    const timeout = target.timeout ?? DEFAULT_TIMEOUT
    return http.execute(request).pipe(
      Effect.timeoutFail({
        duration: timeout,
        onTimeout: () => new RequestTimeout({ url: request.url, after: Duration.format(Duration.decode(timeout)) })
      }),
      Effect.catchTags({
        RequestError: (error) => Effect.fail(new AgentUnreachable({ url: request.url, reason: describeTransport(error) })),
        ResponseError: (error) => Effect.fail(new AgentUnreachable({ url: request.url, reason: error.message }))
      }),
      Effect.tap((response) => Effect.logDebug(`${request.method} ${request.url} → ${response.status}`))
    )
  }

  const readText = (url: string, response: HttpClientResponse.HttpClientResponse) =>
    Effect.mapError(response.text, (error) => new AgentUnreachable({ url, reason: `reading the response failed: ${error.message}` }))

  const authRequired = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
    new AuthRequired({
      url,
      agentUrl: target.agentUrl,
      status: response.status,
      hadCredentials: credentialsFor(target, url) !== undefined,
      ...(response.headers["www-authenticate"] ? { challenge: response.headers["www-authenticate"] } : {})
    })

  // -------------------------------------------------------------------------
  // Discovery

  const fetchCard = (target: Target, cardUrl: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const cached = (yield* Ref.get(cardCache)).get(cardUrl)
      if (cached && cached.expiresAt > now) return Option.some(cached.card)

      const request = HttpClientRequest.get(cardUrl).pipe(
        HttpClientRequest.setHeaders({
          accept: "application/json",
          "a2a-version": "1.0",
          ...credentialHeaders(credentialsFor(target, cardUrl)),
          ...(cached?.etag ? { "if-none-match": cached.etag } : {})
        })
      )
      const response = yield* execute(target, request)
      const expiresAt = now + maxAgeMs(response.headers["cache-control"])
      if (response.status === 304 && cached) {
        yield* Ref.update(cardCache, (cache) => new Map(cache).set(cardUrl, { ...cached, expiresAt }))
        return Option.some(cached.card)
      }
      if (response.status === 404 || response.status === 410) return Option.none()
      if (response.status === 401 || response.status === 403) return yield* authRequired(target, cardUrl, response)
      const text = yield* readText(cardUrl, response)
      if (response.status < 200 || response.status >= 300) {
        return yield* new HttpError({ url: cardUrl, status: response.status, body: excerpt(text) })
      }
      const raw = yield* Option.match(parseJson(text), {
        onNone: () => Effect.fail(new InvalidCard({ url: cardUrl, reason: "the response is not JSON" })),
        onSome: Effect.succeed
      })
      const wire = yield* Effect.mapError(cardFromWire(raw), (error) =>
        new InvalidCard({ url: cardUrl, reason: ParseResult.TreeFormatter.formatErrorSync(error) }))
      const card: DiscoveredCard = { ...wire, raw, cardUrl }
      yield* Ref.update(cardCache, (cache) =>
        new Map(cache).set(cardUrl, { card, etag: response.headers["etag"], expiresAt }))
      return Option.some(card)
    })

  const discover = (target: Target): Effect.Effect<DiscoveredCard, A2aClientError> =>
    Effect.gen(function*() {
      const tried: Array<string> = []
      for (const cardUrl of cardCandidates(target)) {
        tried.push(cardUrl)
        const found = yield* fetchCard(target, cardUrl)
        if (Option.isSome(found)) return found.value
      }
      return yield* new CardNotFound({ url: target.agentUrl, tried })
    }).pipe(Effect.withSpan("A2aClient.discover"))

  /** Candidate endpoints in order: the one that worked last time first. */
  const endpointsOf = (target: Target) =>
    Effect.gen(function*() {
      const discovered = yield* discover(target).pipe(
        Effect.map(Option.some),
        // With binding and version both pinned, an agent without a card is still reachable at its URL.
        Effect.catchTag("CardNotFound", (error) =>
          target.binding !== undefined && target.protocol !== undefined ? Effect.succeed(Option.none()) : Effect.fail(error))
      )
      if (Option.isNone(discovered)) {
        return [{ url: target.agentUrl, binding: target.binding!, version: target.protocol! }] as ReadonlyArray<Endpoint>
      }
      const endpoints = selectEndpoints(discovered.value.card, discovered.value.cardUrl, target)
      if (endpoints.length === 0) {
        const offered = discovered.value.card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`)
        return yield* new InvalidCard({
          url: discovered.value.cardUrl,
          reason: `no interface relay can use${target.binding || target.protocol ? " with the pinned binding/version" : ""}` +
            ` (the card offers ${offered.join(", ") || "none"}; relay speaks JSONRPC and HTTP+JSON at 1.0 and 0.3)`
        })
      }
      const remembered = (yield* Ref.get(workingEndpoints)).get(target.agentUrl)
      const preferred = remembered && endpoints.find((e) => e.url === remembered.url && e.version === remembered.version)
      return preferred ? [preferred, ...endpoints.filter((e) => e !== preferred)] : endpoints
    })

  /**
   * Runs `attempt` on the first endpoint; on a version mismatch of a 1.0 endpoint (and no pinned
   * version) retries on the next 0.3 endpoint of the card, remembering whichever worked.
   */
  const withEndpoint = <A>(
    target: Target,
    attempt: (endpoint: Endpoint) => Effect.Effect<A, A2aClientError>
  ): Effect.Effect<A, A2aClientError> =>
    Effect.gen(function*() {
      const endpoints = yield* endpointsOf(target)
      const first = endpoints[0]!
      yield* warnCrossOrigin(target, first)
      const remember = (endpoint: Endpoint) =>
        Ref.update(workingEndpoints, (map) => new Map(map).set(target.agentUrl, endpoint))
      return yield* attempt(first).pipe(
        Effect.tap(() => remember(first)),
        Effect.catchIf(
          (error) => target.protocol === undefined && isVersionMismatch(first, error),
          (error) => {
            const legacy = endpoints.find((e) => e.version === "0.3")
            if (legacy === undefined) return Effect.fail(error)
            return Effect.logInfo(`${first.url} does not speak A2A 1.0 here; retrying with 0.3 at ${legacy.url}`).pipe(
              Effect.zipRight(attempt(legacy)),
              Effect.tap(() => remember(legacy))
            )
          }
        )
      )
    })

  // -------------------------------------------------------------------------
  // One exchange

  const baseHeaders = (target: Target, endpoint: Endpoint, url: string, accept: string) => ({
    accept,
    "a2a-version": endpoint.version,
    ...credentialHeaders(credentialsFor(target, url))
  })

  const jsonRpcRequest = (target: Target, endpoint: Endpoint, method: string, params: unknown, accept: string) => {
    const id = nextRequestId()
    const envelope = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }
    const request = HttpClientRequest.post(endpoint.url).pipe(
      HttpClientRequest.setHeaders(baseHeaders(target, endpoint, endpoint.url, accept)),
      HttpClientRequest.bodyUnsafeJson(envelope)
    )
    return { id, request }
  }

  const restRequest = (
    target: Target,
    endpoint: Endpoint,
    wire: Extract<WireRequest<unknown>, { _tag: "Rest" }>,
    verb: string,
    accept: string
  ) => {
    const url = `${endpoint.url.replace(/\/+$/, "")}${wire.path}`
    let request = HttpClientRequest.make(verb as "GET")(url).pipe(
      HttpClientRequest.setHeaders(baseHeaders(target, endpoint, url, accept)),
      HttpClientRequest.setUrlParams(wire.query ?? {})
    )
    if (wire.body !== undefined) {
      request = HttpClientRequest.bodyUnsafeJson(request, wire.body).pipe(
        HttpClientRequest.setHeader("content-type", REST_CONTENT_TYPE)
      )
    }
    return request
  }

  const decodeWith = <A>(url: string, decode: (json: unknown) => Effect.Effect<A, ParseResult.ParseError>, json: unknown) =>
    Effect.mapError(decode(json), (error) =>
      new InvalidResponse({ url, reason: ParseResult.TreeFormatter.formatErrorSync(error) }))

  /** Reads a JSON-RPC response envelope into its result, or the agent's error. */
  const jsonRpcResult = (url: string, id: string, json: unknown): Effect.Effect<unknown, A2aClientError> => {
    if (!isRecord(json) || json["jsonrpc"] !== "2.0") {
      return Effect.fail(new InvalidResponse({ url, reason: "not a JSON-RPC 2.0 response" }))
    }
    if ("error" in json && json["error"] !== undefined && json["error"] !== null) return Effect.fail(jsonRpcError(json["error"]))
    if (json["id"] !== id) return Effect.fail(new InvalidResponse({ url, reason: `response id ${JSON.stringify(json["id"])} is not ${id}` }))
    return Effect.succeed(json["result"])
  }

  /** Non-success answers: auth, A2A errors in either body shape, or a plain HTTP error. */
  const failureOf = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse, text: string) => {
    if (response.status === 401 || response.status === 403) return authRequired(target, url, response)
    const json = parseJson(text)
    if (Option.isSome(json)) {
      const rest = restError(response.status, json.value)
      if (Option.isSome(rest)) return rest.value
      if (isRecord(json.value) && isRecord(json.value["error"])) return jsonRpcError(json.value["error"])
    }
    return new HttpError({ url, status: response.status, body: excerpt(text) })
  }

  const unary = <A>(target: Target, endpoint: Endpoint, wire: WireRequest<A>): Effect.Effect<A, A2aClientError> =>
    Effect.gen(function*() {
      if (wire._tag === "JsonRpc") {
        const { id, request } = jsonRpcRequest(target, endpoint, wire.method, wire.params, JSON_RPC_CONTENT_TYPE)
        const response = yield* execute(target, request)
        const text = yield* readText(endpoint.url, response)
        const json = parseJson(text)
        // Servers answer JSON-RPC errors with 200 or with 4xx/5xx; read the envelope either way.
        if (Option.isSome(json) && isRecord(json.value) && json.value["jsonrpc"] === "2.0") {
          const result = yield* jsonRpcResult(endpoint.url, id, json.value)
          return yield* decodeWith(endpoint.url, wire.decode, result)
        }
        return yield* failureOf(target, endpoint.url, response, text).pipe(
          (error) => error._tag === "HttpError" && response.status < 300
            ? new InvalidResponse({ url: endpoint.url, reason: `not JSON-RPC: ${excerpt(text)}` })
            : error
        )
      }
      const send = (verb: string) =>
        Effect.gen(function*() {
          const request = restRequest(target, endpoint, wire, verb, `${REST_CONTENT_TYPE}, application/json`)
          const response = yield* execute(target, request)
          const text = yield* readText(request.url, response)
          if (response.status < 200 || response.status >= 300) return yield* failureOf(target, request.url, response, text)
          const json = text.trim() === "" ? Option.some<unknown>(undefined) : parseJson(text)
          if (Option.isNone(json)) return yield* new InvalidResponse({ url: request.url, reason: `not JSON: ${excerpt(text)}` })
          return yield* decodeWith(request.url, wire.decode, json.value)
        })
      return yield* send(wire.verb).pipe(
        Effect.catchIf(
          (error) => wire.fallbackVerb !== undefined && error._tag === "HttpError" && (error.status === 404 || error.status === 405),
          () => send(wire.fallbackVerb!)
        )
      )
    })

  // -------------------------------------------------------------------------
  // Streams

  /** Opens the stream (errors before the first event come back as plain JSON), then yields events. */
  const openStream = <A>(target: Target, endpoint: Endpoint, wire: WireRequest<A>) =>
    Effect.gen(function*() {
      const accept = "text/event-stream"
      const { request, jsonRpcId } = wire._tag === "JsonRpc"
        ? (() => {
          const built = jsonRpcRequest(target, endpoint, wire.method, wire.params, accept)
          return { request: built.request, jsonRpcId: built.id }
        })()
        : { request: restRequest(target, endpoint, wire, wire.verb, accept), jsonRpcId: undefined }
      const open = (req: HttpClientRequest.HttpClientRequest) =>
        Effect.gen(function*() {
          const response = yield* execute(target, req)
          const contentType = response.headers["content-type"] ?? ""
          if (response.status >= 200 && response.status < 300 && contentType.startsWith("text/event-stream")) return response
          const text = yield* readText(req.url, response)
          if (response.status >= 200 && response.status < 300) {
            const json = parseJson(text)
            if (Option.isSome(json) && isRecord(json.value) && json.value["error"] !== undefined) {
              return yield* (isRecord(json.value["error"]) && "code" in json.value["error"] && typeof json.value["error"]["code"] === "number" && json.value["jsonrpc"] === "2.0"
                ? Effect.fail(jsonRpcError(json.value["error"]))
                : Effect.fail(Option.getOrElse(restError(response.status, json.value), () =>
                  new InvalidResponse({ url: req.url, reason: "error body in an unexpected shape" }))))
            }
            return yield* new InvalidResponse({ url: req.url, reason: `expected an event stream, got ${contentType || "no content type"}` })
          }
          return yield* failureOf(target, req.url, response, text)
        })
      const response = yield* open(request).pipe(
        Effect.catchIf(
          (error) => wire._tag === "Rest" && wire.fallbackVerb !== undefined && error._tag === "HttpError" && (error.status === 404 || error.status === 405),
          () => open(restRequest(target, endpoint, wire as Extract<WireRequest<A>, { _tag: "Rest" }>, (wire as { fallbackVerb: string }).fallbackVerb, accept))
        )
      )
      return eventsOf(target, request.url, response, jsonRpcId, wire.decode)
    })

  const eventsOf = <A>(
    target: Target,
    url: string,
    response: HttpClientResponse.HttpClientResponse,
    jsonRpcId: string | undefined,
    decode: (json: unknown) => Effect.Effect<A, ParseResult.ParseError>
  ): Stream.Stream<A, A2aClientError> => {
    const events = response.stream.pipe(
      Stream.mapError((error) => new AgentUnreachable({ url, reason: `the event stream broke: ${error.message}` })),
      Stream.decodeText(),
      Stream.pipeThroughChannel(Sse.makeChannel()),
      Stream.mapEffect((event) => eventPayload(url, event, jsonRpcId)),
      Stream.mapEffect((payload) => decodeWith(url, decode, payload))
    )
    if (target.streamIdleTimeout === undefined) return events
    const idle = target.streamIdleTimeout
    return events.pipe(
      Stream.timeoutFail(() => new RequestTimeout({ url, after: `${Duration.format(Duration.decode(idle))} without an event` }), idle)
    )
  }

  const eventPayload = (url: string, event: Sse.Event, jsonRpcId: string | undefined): Effect.Effect<unknown, A2aClientError> => {
    const json = parseJson(event.data)
    if (Option.isNone(json)) return Effect.fail(new InvalidResponse({ url, reason: `an event is not JSON: ${excerpt(event.data)}` }))
    if (event.event === "error") {
      const body = json.value
      return Effect.fail(isRecord(body) && isRecord(body["error"])
        ? (Option.getOrUndefined(restError(500, body)) ?? jsonRpcError(body["error"]))
        : jsonRpcError(body))
    }
    return jsonRpcId === undefined ? Effect.succeed(json.value) : jsonRpcResult(url, jsonRpcId, json.value)
  }

  // -------------------------------------------------------------------------
  // Operations

  const requireCapability = (target: Target, operation: string, has: (card: V1.AgentCard) => boolean, reason: string) =>
    discover(target).pipe(
      Effect.flatMap((card) => has(card.card) ? Effect.void : Effect.fail(new UnsupportedOperation({ operation, reason }))),
      // A card-less agent (pinned binding and version) is taken at its word.
      Effect.catchTag("CardNotFound", (error) => target.binding && target.protocol ? Effect.void : Effect.fail(error))
    )

  const pushCapable = (target: Target, operation: string) =>
    requireCapability(target, operation, (card) => card.capabilities.pushNotifications === true, "the agent card does not declare push notifications")

  const call = <I, A>(target: Target, op: (dialect: Dialect) => ((input: I) => Effect.Effect<WireRequest<A>, ParseResult.ParseError>) | undefined, input: I, name: string) =>
    withEndpoint(target, (endpoint) => {
      const build = op(dialectFor(endpoint.binding, endpoint.version, endpoint.tenant))
      if (build === undefined) {
        return Effect.fail(new UnsupportedOperation({ operation: name, reason: `A2A ${endpoint.version} has no ${name} over ${endpoint.binding}` }))
      }
      return build(input).pipe(Effect.orDie, Effect.flatMap((wire) => unary(target, endpoint, wire)))
    }).pipe(Effect.withSpan(`A2aClient.${name}`))

  const streamCall = <I>(target: Target, op: (dialect: Dialect) => (input: I) => Effect.Effect<WireRequest<V1.StreamResponse>, ParseResult.ParseError>, input: I, name: string) =>
    Stream.unwrap(
      requireCapability(target, name, (card) => card.capabilities.streaming === true, "the agent card does not declare streaming").pipe(
        Effect.zipRight(withEndpoint(target, (endpoint) =>
          op(dialectFor(endpoint.binding, endpoint.version, endpoint.tenant))(input).pipe(
            Effect.orDie,
            Effect.flatMap((wire) => openStream(target, endpoint, wire))
          )))
      )
    )

  return A2aClient.of({
    discover,
    endpoint: (target) => Effect.map(endpointsOf(target), (endpoints) => endpoints[0]!),
    send: (target, request) => call(target, (d) => d.send, request, "send"),
    stream: (target, request) => streamCall(target, (d) => d.stream, request, "stream"),
    getTask: (target, request) => call(target, (d) => d.getTask, request, "getTask"),
    listTasks: (target, request) => call(target, (d) => d.listTasks, request, "listTasks"),
    cancelTask: (target, request) => call(target, (d) => d.cancelTask, request, "cancelTask"),
    subscribe: (target, request) => streamCall(target, (d) => d.subscribe, request, "subscribe"),
    createPushConfig: (target, config) =>
      Effect.zipRight(pushCapable(target, "createPushConfig"), call(target, (d) => d.createPushConfig, config, "createPushConfig")),
    getPushConfig: (target, request) =>
      Effect.zipRight(pushCapable(target, "getPushConfig"), call(target, (d) => d.getPushConfig, request, "getPushConfig")),
    listPushConfigs: (target, request) =>
      Effect.zipRight(pushCapable(target, "listPushConfigs"), call(target, (d) => d.listPushConfigs, request, "listPushConfigs")),
    deletePushConfig: (target, request) =>
      Effect.zipRight(pushCapable(target, "deletePushConfig"), call(target, (d) => d.deletePushConfig, request, "deletePushConfig")),
    extendedCard: (target) =>
      Effect.gen(function*() {
        yield* requireCapability(target, "extendedCard", (card) => card.capabilities.extendedAgentCard === true, "the agent card does not declare an extended card")
        const raw = yield* call(target, (d) => d.extendedCard, undefined, "extendedCard")
        const cardUrl = (yield* discover(target)).cardUrl
        const wire = yield* Effect.mapError(cardFromWire(raw), (error) =>
          new InvalidCard({ url: cardUrl, reason: ParseResult.TreeFormatter.formatErrorSync(error) }))
        return { ...wire, raw, cardUrl } satisfies DiscoveredCard
      })
  })
})

const describeTransport = (error: HttpClientError.RequestError) => {
  const cause = error.cause
  const code = isRecord(cause) && isRecord(cause["cause"]) ? cause["cause"]["code"] : isRecord(cause) ? cause["code"] : undefined
  return typeof code === "string" ? `${code} (${error.description ?? error.reason})` : error.description ?? error.message
}

/** The client over whatever HttpClient the context provides. */
export const A2aClientLive = Layer.effect(A2aClient, make)

// Headers is re-exported for tests that inspect what the client sends.
export { Headers }
