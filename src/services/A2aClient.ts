/**
 * A2aClient: every operation against a remote A2A agent, in either protocol generation and
 * either HTTP binding, returning the v1.0 domain model.
 *
 * discover the card (agent-card.json, then agent.json, or an explicit card URL; ETag and
 * Cache-Control honoured) → pick the first interface we speak (or the one pinned) → encode the
 * operation in that interface's dialect → send with A2A-Version and the caller's credentials
 * (only to the origin the user addressed) → decode; on the v0.3 signals of a 1.0 interface,
 * fall back to the card's 0.3 interface unless the user pinned a version. Streams are checked
 * for their content type before parsing and end at the last event of the interaction.
 */
import { Sse } from "@effect/experimental"
import { HttpClient, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import type { HttpClientError } from "@effect/platform"
import { createHash } from "node:crypto"
import { Clock, Context, Duration, Effect, Either, Layer, Option, ParseResult, Predicate, Ref, Stream } from "effect"
import {
  type Binding,
  type Dialect,
  dialectFor,
  type HttpVerb,
  type WireRequest
} from "../a2a/dialects.js"
import { a2aErrorByReason, errorInfoReason } from "../a2a/errors.js"
import { describeParseError } from "../a2a/parseProblems.js"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import type { ClientCardGeneration } from "../a2a/cardGeneration.js"
import { cardFromWire } from "../a2a/translate.js"
import * as V1 from "../a2a/v1.js"
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
  NoUsableInterface,
  ResponseTooLarge,
  StreamBroken,
  UnsupportedOperation
} from "../domain/clientErrors.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH, MAX_RESPONSE_BYTES } from "../domain/limits.js"
import type { Credentials } from "../domain/session.js"
import { interfaceUse } from "../a2a/usableInterfaces.js"

/** Who to talk to and how; credentials are already resolved by the program. */
export interface Target {
  /** The agent's base URL as the user addressed it (normalised). */
  readonly agentUrl: string
  /** An explicit card URL, skipping well-known discovery. */
  readonly cardUrl?: string | undefined
  readonly credentials?: Credentials | undefined
  /** The credentials were given for this call (not the saved ones). */
  readonly credentialsGiven?: boolean | undefined
  readonly protocol?: ProtocolVersion | undefined
  readonly binding?: Binding | undefined
  /** Send credentials even to interface URLs on another origin than the one addressed. */
  readonly allowCrossOriginCredentials?: boolean | undefined
  /** Wait at most this long for an answer: a whole unary response, or a stream's headers (default 30 s). */
  readonly timeout?: Duration.DurationInput | undefined
  /** End a stream that is silent this long (default: never). */
  readonly streamIdleTimeout?: Duration.DurationInput | undefined
  /** Largest answer (card, JSON body, one stream event) read (default MAX_RESPONSE_BYTES); reading stops past it. */
  readonly maxResponseBytes?: number | undefined
}

export interface DiscoveredCard {
  readonly card: V1.AgentCard
  /** The card JSON exactly as served. */
  readonly raw: unknown
  readonly generation: ClientCardGeneration
  readonly declaredProtocolVersion?: string | undefined
  readonly cardUrl: string
}

/** A card's JSON exactly as served, where discovery found it. */
export interface CardJson {
  readonly json: unknown
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
  /** The card JSON found by discovery, not decoded (for validation): only transport and HTTP errors fail. */
  readonly fetchCardJson: (target: Target) => Effect.Effect<CardJson, A2aClientError>
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
const JSON_CONTENT_TYPE = "application/json"
const A2A_CONTENT_TYPE = "application/a2a+json"
const EVENT_STREAM = "text/event-stream"
const INTERNAL_ERROR_CODE = -32603
const BODY_EXCERPT = 300
const TOO_DEEP = `the JSON nests deeper than ${MAX_AGENT_JSON_DEPTH} levels`

// ---------------------------------------------------------------------------
// Pure helpers

const originOf = (url: string) => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

const isCrossOrigin = (target: Target, url: string) =>
  originOf(url) !== originOf(target.agentUrl) && target.allowCrossOriginCredentials !== true

/**
 * Credentials for a URL: only on the origin the user addressed, unless they allowed otherwise.
 * Every request relay makes to an agent takes its credentials from here.
 */
export const credentialsFor = (target: Target, url: string) => (isCrossOrigin(target, url) ? undefined : target.credentials)

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
    // The same predicate `relay card validate` uses, so a card it calls valid is one we can use.
    const use = interfaceUse(entry, cardUrl)
    if (Either.isLeft(use)) return []
    const endpoint = use.right
    if (target.binding !== undefined && target.binding !== endpoint.binding) return []
    if (target.protocol !== undefined && target.protocol !== endpoint.version) return []
    return [endpoint]
  })

const isHttpSuccess = (status: number) => status >= 200 && status < 300

const isAuthStatus = (status: number) => status === 401 || status === 403

/** A plain 404/405: nothing is routed there (as opposed to an A2A error that happens to use 404). */
const isUnrouted = (error: A2aClientError) => error._tag === "HttpError" && (error.status === 404 || error.status === 405)

/** The v0.3 signals of §6a.9 on a 1.0 interface: unknown method, version refused, or nothing routed. */
const isVersionMismatch = (endpoint: Endpoint, error: A2aClientError) =>
  endpoint.version === "1.0" &&
  ((error._tag === "ProtocolError" && (error.a2aCode === -32601 || error.a2aCode === -32009)) || isUnrouted(error))

const maxAgeMs = (cacheControl: string | undefined) => {
  if (/no-store|no-cache/i.test(cacheControl ?? "")) return 0
  const match = /max-age=(\d+)/i.exec(cacheControl ?? "")
  return match ? Number(match[1]) * 1000 : DEFAULT_CARD_MAX_AGE_MS
}

// v0.3 REST predates application/a2a+json, and its SDK parses application/json bodies only.
const restContentType = (endpoint: Endpoint) => (endpoint.version === "1.0" ? A2A_CONTENT_TYPE : JSON_CONTENT_TYPE)

const excerpt = (text: string) => (text.length > BODY_EXCERPT ? `${text.slice(0, BODY_EXCERPT)}…` : text).trim()

const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

/**
 * An error object → ProtocolError. JSON-RPC codes are negative; a google.rpc.Status carries the
 * HTTP code instead, so there the ErrorInfo reason names the A2A error.
 */
const protocolErrorOf = (httpStatus: number, error: Record<string, unknown>): ProtocolError => {
  const reason = errorInfoReason(error["data"]) ?? errorInfoReason(error["details"])
  const code = error["code"]
  const byReason = reason === undefined ? undefined : a2aErrorByReason(reason)?.jsonRpcCode
  const a2aCode = typeof code === "number" && code < 0
    ? code
    : byReason ?? (isHttpSuccess(httpStatus) ? INTERNAL_ERROR_CODE : httpStatus)
  return new ProtocolError({
    a2aCode,
    ...(reason === undefined ? {} : { reason }),
    detail: typeof error["message"] === "string" ? error["message"] : `HTTP ${httpStatus}`
  })
}

/**
 * The A2A error a body carries, in the shapes agents use: `{error:{…}}` (a JSON-RPC envelope or a
 * google.rpc.Status) or v0.3 REST's bare `{code, message}`.
 */
const errorInBody = (httpStatus: number, body: unknown): ProtocolError | undefined => {
  if (!Predicate.isRecord(body)) return undefined
  if (Predicate.isRecord(body["error"])) return protocolErrorOf(httpStatus, body["error"])
  if (typeof body["code"] === "number" && typeof body["message"] === "string") return protocolErrorOf(httpStatus, body)
  return undefined
}

export const credentialHeaders = (credentials: Credentials | undefined): Record<string, string> =>
  credentials === undefined
    ? {}
    : credentials.kind === "bearer"
    ? { authorization: `Bearer ${credentials.token}` }
    : { [credentials.header.toLowerCase()]: credentials.key }

let requestCounter = 0
const nextRequestId = () => `relay-${Date.now().toString(36)}-${(++requestCounter).toString(36)}`

/**
 * At most the `historyLength` most recent messages. Conformant agents already trim; the 0.3.14
 * SDK reads 0 as "everything" (`slice(-0)`), so the client enforces the limit it asked for.
 */
const limitHistory = (task: V1.Task, historyLength: number | undefined): V1.Task => {
  if (historyLength === undefined || historyLength < 0 || (task.history?.length ?? 0) <= historyLength) return task
  const { history, ...rest } = task
  return historyLength === 0 ? rest : { ...rest, history: (history ?? []).slice(-historyLength) }
}

/**
 * The last event of an interaction (§6a.8): a direct Message, a terminal Task, a status that is
 * terminal or waits for the user, or a v0.3 event marked `final`. Some agents keep the stream open
 * after it (e.g. @a2a-js at AUTH_REQUIRED), so the client stops reading there.
 */
const endsInteraction = (payload: unknown, event: V1.StreamResponse) => {
  if ("message" in event) return true
  if ("task" in event) return V1.isTerminalState(event.task.status.state)
  if ("statusUpdate" in event) {
    const state = event.statusUpdate.status.state
    return V1.isTerminalState(state) || V1.isInterruptedState(state) || hasFinalFlag(payload)
  }
  return false
}

/** `final: true` on a v0.3 status update (JSON-RPC: the bare event; REST: under `statusUpdate`). */
const hasFinalFlag = (payload: unknown) =>
  Predicate.isRecord(payload) && (payload["final"] === true || (Predicate.isRecord(payload["statusUpdate"]) && payload["statusUpdate"]["final"] === true))

/**
 * SSE events of a text stream, parsed per WHATWG (CRLF, multi-line data, comments, id lines).
 * `retry:` is ignored: Sse.makeParser would pause the stream for that long, and an A2A client
 * reconnects only through SubscribeToTask. An event that grows past `maxEventBytes` before it
 * ends fails the stream, so an endless event cannot fill memory.
 */
const sseEvents = <E>(
  url: string,
  maxEventBytes: number,
  text: Stream.Stream<string, E>
): Stream.Stream<Sse.Event, E | InvalidResponse | ResponseTooLarge> =>
  Stream.suspend(() => {
    const parsed: Array<Sse.Event> = []
    const parser = Sse.makeParser((event) => {
      if (event._tag === "Event") parsed.push(event)
    })
    let sinceLastEvent = 0
    return Stream.mapConcatEffect(text, (chunk): Effect.Effect<ReadonlyArray<Sse.Event>, InvalidResponse | ResponseTooLarge> => {
      const error = parser.feed(chunk)
      if (error !== undefined) return Effect.fail(new InvalidResponse({ url, reason: `the event stream is unreadable: ${error.message}` }))
      sinceLastEvent = parsed.length > 0 ? 0 : sinceLastEvent + Buffer.byteLength(chunk)
      if (sinceLastEvent > maxEventBytes) return Effect.fail(new ResponseTooLarge({ url, limit: maxEventBytes }))
      return Effect.succeed(parsed.splice(0))
    })
  })

// ---------------------------------------------------------------------------

interface CachedCard {
  readonly card: DiscoveredCard
  readonly etag: string | undefined
  readonly expiresAt: number
}

type RestWire<A> = Extract<WireRequest<A>, { _tag: "Rest" }>

export const make = Effect.gen(function*() {
  const http = yield* HttpClient.HttpClient
  const cardCache = yield* Ref.make(new Map<string, CachedCard>())
  // The endpoint that last worked per agent, so a fallback is paid once per process.
  const workingEndpoints = yield* Ref.make(new Map<string, Endpoint>())
  const warnedOrigins = new Set<string>()


  const warnCrossOrigin = (target: Target, endpoint: Endpoint) =>
    Effect.suspend(() => {
      const origin = originOf(endpoint.url)
      if (target.credentials === undefined || !isCrossOrigin(target, endpoint.url)) return Effect.void
      if (origin === undefined || warnedOrigins.has(origin)) return Effect.void
      warnedOrigins.add(origin)
      return Effect.logWarning(
        `The agent card routes requests to ${origin}, not ${originOf(target.agentUrl)}: credentials are not sent there ` +
          `(use --allow-cross-origin-credentials to send them)`
      )
    })

  /** Bounds `effect` by the target's response timeout; on expiry it is interrupted, aborting the request. */
  const withResponseTimeout = <A, E>(target: Target, url: string, effect: Effect.Effect<A, E>) => {
    const timeout = target.timeout ?? DEFAULT_TIMEOUT
    return Effect.timeoutFail(effect, {
      duration: timeout,
      onTimeout: () => new RequestTimeout({ url, after: Duration.format(Duration.decode(timeout)) })
    })
  }

  const send = (request: HttpClientRequest.HttpClientRequest) =>
    http.execute(request).pipe(
      Effect.catchTags({
        RequestError: (error) => Effect.fail(new AgentUnreachable({ url: request.url, reason: describeTransport(error) })),
        ResponseError: (error) => Effect.fail(new AgentUnreachable({ url: request.url, reason: error.message }))
      }),
      Effect.tap((response) => Effect.logDebug(`${request.method} ${request.url} → ${response.status}`))
    )

  /**
   * The body as text, read as a stream that stops (and so aborts the request) at the first chunk
   * past the target's limit, or at the first chunk at all when Content-Length announces more: a
   * hostile agent cannot make the client hold more than the limit.
   */
  const readText = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
    Effect.suspend(() => {
      const limit = target.maxResponseBytes ?? MAX_RESPONSE_BYTES
      const declared = Number(response.headers["content-length"])
      const chunks: Array<Uint8Array> = []
      let size = 0
      return response.stream.pipe(
        Stream.mapError((error) => new AgentUnreachable({ url, reason: `reading the response failed: ${error.message}` })),
        Stream.runForEach((chunk) => {
          size += chunk.length
          if (declared > limit) return Effect.fail(new ResponseTooLarge({ url, limit, declared }))
          if (size > limit) return Effect.fail(new ResponseTooLarge({ url, limit }))
          chunks.push(chunk)
          return Effect.void
        }),
        Effect.map(() => new TextDecoder().decode(Buffer.concat(chunks, size)))
      )
    })

  /** Response headers only (streams read the body afterwards), within the response timeout. */
  const execute = (target: Target, request: HttpClientRequest.HttpClientRequest) =>
    withResponseTimeout(target, request.url, send(request))

  /** The whole response, body included, within the response timeout. */
  const exchange = (target: Target, request: HttpClientRequest.HttpClientRequest) =>
    withResponseTimeout(
      target,
      request.url,
      Effect.flatMap(send(request), (response) => Effect.map(readText(target, request.url, response), (text) => ({ response, text })))
    )

  const credentialsSent = (target: Target, url: string) =>
    target.credentials === undefined ? "none" as const
    : isCrossOrigin(target, url) ? "withheld" as const
    : target.credentialsGiven === true ? "given" as const
    : "saved" as const

  const authRequired = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
    new AuthRequired({
      url,
      agentUrl: target.agentUrl,
      status: response.status,
      credentials: credentialsSent(target, url),
      ...(response.headers["www-authenticate"] ? { challenge: response.headers["www-authenticate"] } : {})
    })

  /** Non-success answers: auth, an A2A error in any body shape, or a plain HTTP error. */
  const failureOf = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse, text: string) => {
    if (isAuthStatus(response.status)) return authRequired(target, url, response)
    const error = Option.getOrUndefined(parseJson(text).pipe(Option.flatMapNullable((json) => errorInBody(response.status, json))))
    return error ?? new HttpError({ url, status: response.status, body: excerpt(text) })
  }

  // -------------------------------------------------------------------------
  // Discovery

  const decodeCard = (url: string, raw: unknown) =>
    Effect.mapError(cardFromWire(raw), (error) => new InvalidCard({ url, reason: describeParseError(error, "the card").message }))

  const cardRequest = (target: Target, cardUrl: string, etag: string | undefined) =>
    HttpClientRequest.get(cardUrl).pipe(
      HttpClientRequest.setHeaders({
        accept: JSON_CONTENT_TYPE,
        "a2a-version": "1.0",
        ...credentialHeaders(credentialsFor(target, cardUrl)),
        ...(etag === undefined ? {} : { "if-none-match": etag })
      })
    )

  /** The JSON of a card answer; none on 404/410, where the next candidate is worth a try. */
  const cardJsonOf = (
    target: Target,
    cardUrl: string,
    response: HttpClientResponse.HttpClientResponse,
    text: string
  ): Effect.Effect<Option.Option<unknown>, A2aClientError> => {
    if (response.status === 404 || response.status === 410) return Effect.succeed(Option.none<unknown>())
    if (!isHttpSuccess(response.status)) return Effect.fail(failureOf(target, cardUrl, response, text))
    return Option.match(parseJson(text), {
      onNone: () =>
        Effect.zipRight(
          Effect.logDebug(`The answer from ${cardUrl}: ${excerpt(text)}`),
          Effect.fail(new InvalidCard({ url: cardUrl, reason: "the response is not JSON" }))
        ),
      onSome: (json) =>
        exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)
          ? Effect.fail(new InvalidCard({ url: cardUrl, reason: TOO_DEEP }))
          : Effect.succeed(Option.some(json))
    })
  }

  /**
   * Cards are cached per URL and per credentials sent: an extended card fetched with a token is
   * never served to a later call without it (the fingerprint is a hash, never the secret).
   */
  const cacheKeyOf = (target: Target, cardUrl: string) => {
    const credentials = credentialsFor(target, cardUrl)
    if (credentials === undefined) return cardUrl
    const secret = credentials.kind === "bearer" ? `bearer:${credentials.token}` : `${credentials.header}:${credentials.key}`
    return `${cardUrl}#${createHash("sha256").update(secret).digest("hex").slice(0, 16)}`
  }

  const fetchCard = (target: Target, cardUrl: string) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const key = cacheKeyOf(target, cardUrl)
      const cached = (yield* Ref.get(cardCache)).get(key)
      if (cached && cached.expiresAt > now) return Option.some(cached.card)

      const { response, text } = yield* exchange(target, cardRequest(target, cardUrl, cached?.etag))
      const expiresAt = now + maxAgeMs(response.headers["cache-control"])
      if (response.status === 304 && cached) {
        yield* Ref.update(cardCache, (cache) => new Map(cache).set(key, { ...cached, expiresAt }))
        return Option.some(cached.card)
      }
      const raw = yield* cardJsonOf(target, cardUrl, response, text)
      if (Option.isNone(raw)) return Option.none()
      const card: DiscoveredCard = { ...(yield* decodeCard(cardUrl, raw.value)), raw: raw.value, cardUrl }
      yield* Ref.update(cardCache, (cache) => new Map(cache).set(key, { card, etag: response.headers["etag"], expiresAt }))
      return Option.some(card)
    })

  /** The first of `candidates` that yields something, else CardNotFound. */
  const firstCard = <A>(
    target: Target,
    candidates: ReadonlyArray<string>,
    fetchOne: (cardUrl: string) => Effect.Effect<Option.Option<A>, A2aClientError>
  ) =>
    Effect.gen(function*() {
      const tried: Array<string> = []
      for (const cardUrl of candidates) {
        tried.push(cardUrl)
        const found = yield* fetchOne(cardUrl)
        if (Option.isSome(found)) return found.value
      }
      return yield* new CardNotFound({ url: target.agentUrl, tried })
    })

  /** Where discovery found each agent's card, so later calls skip the paths that 404ed. */
  const cardLocations = yield* Ref.make(new Map<string, string>())

  const discover = (target: Target): Effect.Effect<DiscoveredCard, A2aClientError> =>
    Effect.gen(function*() {
      const candidates = cardCandidates(target)
      const key = candidates.join(" ")
      const known = (yield* Ref.get(cardLocations)).get(key)
      const ordered = known === undefined ? candidates : [known, ...candidates.filter((url) => url !== known)]
      const card = yield* firstCard(target, ordered, (cardUrl) => fetchCard(target, cardUrl))
      yield* Ref.update(cardLocations, (map) => new Map(map).set(key, card.cardUrl))
      return card
    }).pipe(Effect.withSpan("A2aClient.discover"))

  /** The card JSON as served, undecoded and uncached, so a validator can report on any card. */
  const fetchCardJson = (target: Target): Effect.Effect<CardJson, A2aClientError> =>
    firstCard(target, cardCandidates(target), (cardUrl) =>
      exchange(target, cardRequest(target, cardUrl, undefined)).pipe(
        Effect.flatMap(({ response, text }) => cardJsonOf(target, cardUrl, response, text)),
        Effect.map(Option.map((json) => ({ json, cardUrl })))
      )).pipe(Effect.withSpan("A2aClient.fetchCardJson"))

  /** The extended card replaces the cached one (§6a.12) for calls with the same credentials. */
  const replaceCachedCard = (target: Target, card: DiscoveredCard) =>
    Ref.update(cardCache, (cache) => {
      const key = cacheKeyOf(target, card.cardUrl)
      const cached = cache.get(key)
      return cached === undefined ? cache : new Map(cache).set(key, { ...cached, card })
    })

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
        return yield* new NoUsableInterface({
          url: discovered.value.cardUrl,
          offered: discovered.value.card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
          pinned: target.binding !== undefined || target.protocol !== undefined
        })
      }
      const remembered = (yield* Ref.get(workingEndpoints)).get(target.agentUrl)
      const preferred = remembered &&
        endpoints.find((e) => e.url === remembered.url && e.binding === remembered.binding && e.version === remembered.version)
      return preferred ? [preferred, ...endpoints.filter((e) => e !== preferred)] : endpoints
    })

  /** The 0.3 interface to fall back to: the same binding if the card offers it, else any. */
  const legacyEndpointFor = (endpoints: ReadonlyArray<Endpoint>, failed: Endpoint) =>
    endpoints.find((e) => e.version === "0.3" && e.binding === failed.binding) ?? endpoints.find((e) => e.version === "0.3")

  /**
   * Runs `attempt` on the first endpoint; on a version mismatch of a 1.0 endpoint (and no pinned
   * version) retries on a 0.3 endpoint of the card, remembering whichever worked.
   */
  const withEndpoint = <A>(
    target: Target,
    attempt: (endpoint: Endpoint) => Effect.Effect<A, A2aClientError>
  ): Effect.Effect<A, A2aClientError> =>
    Effect.gen(function*() {
      const endpoints = yield* endpointsOf(target)
      const first = endpoints[0]!
      const attemptOn = (endpoint: Endpoint) =>
        warnCrossOrigin(target, endpoint).pipe(
          Effect.zipRight(attempt(endpoint)),
          Effect.tap(() => Ref.update(workingEndpoints, (map) => new Map(map).set(target.agentUrl, endpoint)))
        )
      return yield* attemptOn(first).pipe(
        Effect.catchIf(
          (error) => target.protocol === undefined && isVersionMismatch(first, error),
          (error) => {
            const legacy = legacyEndpointFor(endpoints, first)
            if (legacy === undefined) return Effect.fail(error)
            return Effect.logInfo(`${first.url} does not speak A2A 1.0 here; retrying with 0.3 at ${legacy.url}`).pipe(
              Effect.zipRight(attemptOn(legacy))
            )
          }
        )
      )
    })

  // -------------------------------------------------------------------------
  // Building requests

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

  const restRequest = <A>(target: Target, endpoint: Endpoint, wire: RestWire<A>, verb: HttpVerb, accept: string) => {
    const url = `${endpoint.url.replace(/\/+$/, "")}${wire.path}`
    const request = HttpClientRequest.make(verb)(url).pipe(
      HttpClientRequest.setHeaders(baseHeaders(target, endpoint, url, accept)),
      HttpClientRequest.setUrlParams(wire.query ?? {})
    )
    return wire.body === undefined ? request : HttpClientRequest.bodyUnsafeJson(request, wire.body).pipe(
      HttpClientRequest.setHeader("content-type", restContentType(endpoint))
    )
  }

  /** Sends with the wire's verb, and again with its fallback verb when the first is not routed. */
  const withFallbackVerb = <A, B>(wire: RestWire<A>, sendWith: (verb: HttpVerb) => Effect.Effect<B, A2aClientError>) =>
    sendWith(wire.verb).pipe(
      Effect.catchIf((error) => wire.fallbackVerb !== undefined && isUnrouted(error), () => sendWith(wire.fallbackVerb!))
    )

  // -------------------------------------------------------------------------
  // Unary exchanges

  /**
   * An answer relay cannot use. The error says why in one sentence; the raw answer goes to the
   * debug log only (shown with --verbose), since agents may put anything in it.
   */
  const unreadable = (url: string, reason: string, raw: string) =>
    Effect.zipRight(
      Effect.logDebug(`The answer from ${url}: ${excerpt(raw)}`),
      Effect.fail(new InvalidResponse({ url, reason }))
    )

  /** Values A2A does not define already warned about, once per agent and value. */
  const warnedEnums = new Set<string>()
  const MAX_WARNED_VALUES = 100

  /** Warns (once each) about the enum values an answer carries that A2A does not define; they read as unknown. */
  const warnUnknownEnums = (url: string, value: unknown) =>
    Effect.forEach(V1.unknownEnumsIn(value), (what) => {
      const key = `${originOf(url) ?? url} ${what}`
      // Bounded: an agent inventing a new value per answer must not grow a long-running server.
      if (warnedEnums.has(key) || warnedEnums.size >= MAX_WARNED_VALUES) return Effect.void
      warnedEnums.add(key)
      return Effect.logWarning(`The agent at ${url} sent ${what}, which A2A does not define; relay shows it as unknown`)
    }, { discard: true })

  /**
   * Decodes an answer; what does not fit is named by its field, with the agent's URL. One nesting
   * deeper than any A2A object needs is refused first (a later JSON.stringify would overflow).
   */
  const decodeWith = <A>(url: string, decode: (json: unknown) => Effect.Effect<A, ParseResult.ParseError>, json: unknown) =>
    exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)
      ? Effect.fail(new InvalidResponse({ url, reason: TOO_DEEP }))
      : decode(json).pipe(
        Effect.catchAll((error) => unreadable(url, describeParseError(error, "the answer").message, JSON.stringify(json) ?? "")),
        Effect.tap((value) => warnUnknownEnums(url, value))
      )

  const isJsonRpcEnvelope = (json: unknown): json is Record<string, unknown> => Predicate.isRecord(json) && json["jsonrpc"] === "2.0"

  /** Reads a JSON-RPC response envelope into its result, or the agent's error. */
  const jsonRpcResult = (url: string, id: string, json: unknown): Effect.Effect<unknown, A2aClientError> => {
    if (!isJsonRpcEnvelope(json)) return Effect.fail(new InvalidResponse({ url, reason: "not a JSON-RPC 2.0 response" }))
    if (Predicate.isRecord(json["error"])) return Effect.fail(protocolErrorOf(200, json["error"]))
    if (json["id"] !== id) return Effect.fail(new InvalidResponse({ url, reason: `response id ${JSON.stringify(json["id"])} is not ${id}` }))
    return Effect.succeed(json["result"])
  }

  const jsonRpcUnary = <A>(target: Target, endpoint: Endpoint, wire: Extract<WireRequest<A>, { _tag: "JsonRpc" }>) =>
    Effect.gen(function*() {
      const { id, request } = jsonRpcRequest(target, endpoint, wire.method, wire.params, JSON_CONTENT_TYPE)
      const { response, text } = yield* exchange(target, request)
      if (isAuthStatus(response.status)) return yield* authRequired(target, endpoint.url, response)
      const json = parseJson(text)
      // Servers answer JSON-RPC errors with 200 or with 4xx/5xx; read the envelope either way.
      if (Option.isSome(json) && isJsonRpcEnvelope(json.value)) {
        return yield* decodeWith(endpoint.url, wire.decode, yield* jsonRpcResult(endpoint.url, id, json.value))
      }
      if (isHttpSuccess(response.status)) {
        return yield* unreadable(endpoint.url, "the answer is not a JSON-RPC response", text)
      }
      return yield* failureOf(target, endpoint.url, response, text)
    })

  const restUnary = <A>(target: Target, endpoint: Endpoint, wire: RestWire<A>) =>
    withFallbackVerb(wire, (verb) =>
      Effect.gen(function*() {
        const request = restRequest(target, endpoint, wire, verb, `${A2A_CONTENT_TYPE}, ${JSON_CONTENT_TYPE}`)
        const { response, text } = yield* exchange(target, request)
        if (!isHttpSuccess(response.status)) return yield* failureOf(target, request.url, response, text)
        const json = text.trim() === "" ? Option.some<unknown>(undefined) : parseJson(text)
        if (Option.isNone(json)) return yield* unreadable(request.url, "the answer is not JSON", text)
        return yield* decodeWith(request.url, wire.decode, json.value)
      }))

  const unary = <A>(target: Target, endpoint: Endpoint, wire: WireRequest<A>): Effect.Effect<A, A2aClientError> =>
    wire._tag === "JsonRpc" ? jsonRpcUnary(target, endpoint, wire) : restUnary(target, endpoint, wire)

  // -------------------------------------------------------------------------
  // Streams

  /** Why an answer is not an event stream: errors before the first event come as plain JSON. */
  const streamRefusal = (
    target: Target,
    url: string,
    response: HttpClientResponse.HttpClientResponse,
    text: string
  ): Effect.Effect<never, A2aClientError> => {
    if (!isHttpSuccess(response.status)) return Effect.fail(failureOf(target, url, response, text))
    const error = Option.getOrUndefined(parseJson(text).pipe(Option.flatMapNullable((json) => errorInBody(response.status, json))))
    const contentType = response.headers["content-type"] || "no content type"
    return error !== undefined ? Effect.fail(error) : unreadable(url, `expected an event stream, got ${contentType}`, text)
  }

  /** The response, once its headers say it is an event stream. */
  const openEvents = (target: Target, request: HttpClientRequest.HttpClientRequest) =>
    Effect.flatMap(execute(target, request), (response) =>
      isHttpSuccess(response.status) && (response.headers["content-type"] ?? "").startsWith(EVENT_STREAM)
        ? Effect.succeed(response)
        : Effect.flatMap(readText(target, request.url, response), (text) => streamRefusal(target, request.url, response, text)))

  const openStream = (target: Target, endpoint: Endpoint, wire: WireRequest<V1.StreamResponse>) => {
    if (wire._tag === "JsonRpc") {
      const { id, request } = jsonRpcRequest(target, endpoint, wire.method, wire.params, EVENT_STREAM)
      return Effect.map(openEvents(target, request), (response) => eventsOf(target, request.url, response, id, wire.decode))
    }
    return withFallbackVerb(wire, (verb) => {
      const request = restRequest(target, endpoint, wire, verb, EVENT_STREAM)
      return Effect.map(openEvents(target, request), (response) => eventsOf(target, request.url, response, undefined, wire.decode))
    })
  }

  const eventsOf = (
    target: Target,
    url: string,
    response: HttpClientResponse.HttpClientResponse,
    jsonRpcId: string | undefined,
    decode: (json: unknown) => Effect.Effect<V1.StreamResponse, ParseResult.ParseError>
  ): Stream.Stream<V1.StreamResponse, A2aClientError> => {
    const text = response.stream.pipe(
      Stream.mapError((error) => new StreamBroken({ url, reason: error.message })),
      Stream.decodeText()
    )
    const events = sseEvents(url, target.maxResponseBytes ?? MAX_RESPONSE_BYTES, text).pipe(
      Stream.mapEffect((event) => eventPayload(url, event, jsonRpcId)),
      Stream.mapEffect((payload) =>
        Effect.map(decodeWith(url, decode, payload), (event) => ({ event, last: endsInteraction(payload, event) }))),
      Stream.takeUntil(({ last }) => last),
      Stream.map(({ event }) => event)
    )
    const idle = target.streamIdleTimeout
    if (idle === undefined) return events
    return Stream.timeoutFail(
      events,
      () => new RequestTimeout({ url, after: `${Duration.format(Duration.decode(idle))} without an event`, limit: "stream-idle" }),
      idle
    )
  }

  const eventPayload = (url: string, event: Sse.Event, jsonRpcId: string | undefined): Effect.Effect<unknown, A2aClientError> => {
    const json = parseJson(event.data)
    if (Option.isNone(json)) return unreadable(url, "an event is not JSON", event.data)
    if (event.event === "error") {
      const error = errorInBody(200, json.value)
      return error !== undefined ? Effect.fail(error) : unreadable(url, "an error event in an unknown shape", event.data)
    }
    return jsonRpcId === undefined ? Effect.succeed(json.value) : jsonRpcResult(url, jsonRpcId, json.value)
  }

  // -------------------------------------------------------------------------
  // Operations

  const requireCapability = (target: Target, operation: string, has: (card: V1.AgentCard) => boolean, reason: string) =>
    discover(target).pipe(
      Effect.flatMap((card) =>
        has(card.card) ? Effect.void : Effect.fail(new UnsupportedOperation({ operation, reason, agentUrl: target.agentUrl }))),
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
    }).pipe(Effect.mapError(naming(target)), Effect.withSpan(`A2aClient.${name}`))

  /** Errors of an operation name the agent it addressed, so their hints can. */
  const naming = (target: Target) => <E>(error: E): E =>
    error instanceof ProtocolError && error.agentUrl === undefined
      ? new ProtocolError({
        a2aCode: error.a2aCode,
        detail: error.detail,
        ...(error.reason === undefined ? {} : { reason: error.reason }),
        agentUrl: target.agentUrl
      }) as E
      : error instanceof UnsupportedOperation && error.agentUrl === undefined
      ? new UnsupportedOperation({ operation: error.operation, reason: error.reason, agentUrl: target.agentUrl }) as E
      : error

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

  const extendedCard = (target: Target) =>
    Effect.gen(function*() {
      yield* requireCapability(target, "extendedCard", (card) => card.capabilities.extendedAgentCard === true, "the agent card does not declare an extended card")
      const raw = yield* call(target, (d) => d.extendedCard, undefined, "extendedCard")
      const cardUrl = (yield* discover(target)).cardUrl
      const card: DiscoveredCard = { ...(yield* decodeCard(cardUrl, raw)), raw, cardUrl }
      yield* replaceCachedCard(target, card)
      return card
    })

  return A2aClient.of({
    discover,
    fetchCardJson,
    endpoint: (target) => Effect.map(endpointsOf(target), (endpoints) => endpoints[0]!),
    send: (target, request) => call(target, (d) => d.send, request, "send"),
    stream: (target, request) => streamCall(target, (d) => d.stream, request, "stream"),
    getTask: (target, request) =>
      Effect.map(call(target, (d) => d.getTask, request, "getTask"), (task) => limitHistory(task, request.historyLength)),
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
    extendedCard
  })
})

const describeTransport = (error: HttpClientError.RequestError) => {
  const cause = error.cause
  const code = Predicate.isRecord(cause) && Predicate.isRecord(cause["cause"]) ? cause["cause"]["code"] : Predicate.isRecord(cause) ? cause["code"] : undefined
  return typeof code === "string" ? `${code} (${error.description ?? error.reason})` : error.description ?? error.message
}

/** The client over whatever HttpClient the context provides. */
export const A2aClientLive = Layer.effect(A2aClient, make)
