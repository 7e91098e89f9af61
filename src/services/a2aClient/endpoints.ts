/**
 * Which interface of the card to use: the first one we speak (or the one pinned), the one that
 * worked last time first; on the v0.3 signals of a 1.0 interface, the card's 0.3 interface
 * instead, unless the user pinned a version.
 */
import { Effect, Either, Option, Ref } from "effect"
import { interfaceUse } from "../../a2a/usableInterfaces.js"
import type * as V1 from "../../a2a/v1.js"
import { type A2aClientError, NoUsableInterface } from "../../domain/clientErrors.js"
import { isUnrouted, withoutSecretsIn } from "./answers.js"
import { discover } from "./discovery.js"
import { stateFor, withInterfaceRule } from "./interfaceHosts.js"
import type { ClientState } from "./state.js"
import { type Endpoint, isCrossOrigin, originOf, type Target } from "./target.js"

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

/** The v0.3 signals of §6a.9 on a 1.0 interface: unknown method, version refused, or nothing routed. */
const isVersionMismatch = (endpoint: Endpoint, error: A2aClientError) =>
  endpoint.version === "1.0" &&
  ((error._tag === "ProtocolError" && (error.a2aCode === -32601 || error.a2aCode === -32009)) || isUnrouted(error))

/**
 * With binding and version both pinned, an agent without a card is still reachable at its URL:
 * where the card is not found, and, for gRPC, where nothing answers HTTP at all (the URL is the
 * gRPC server's own, which speaks no HTTP/1.1).
 */
export const isCardless = (target: Target, error: A2aClientError): boolean =>
  target.binding !== undefined && target.protocol !== undefined &&
  (error._tag === "CardNotFound" ||
    (target.binding === "GRPC" && target.cardUrl === undefined &&
      (error._tag === "AgentUnreachable" || error._tag === "HttpError" || error._tag === "InvalidCard")))

/** Candidate endpoints in order: the one that worked last time first. */
export const endpointsOf = (state: ClientState, target: Target) =>
  Effect.gen(function*() {
    const discovered = yield* discover(state, target).pipe(
      Effect.map(Option.some),
      Effect.catchIf((error) => isCardless(target, error), () => Effect.succeed(Option.none()))
    )
    if (Option.isNone(discovered)) {
      return [{ url: target.agentUrl, binding: target.binding!, version: target.protocol! }] as ReadonlyArray<Endpoint>
    }
    const selected = selectEndpoints(discovered.value.card, discovered.value.cardUrl, target)
    if (selected.length === 0) {
      return yield* new NoUsableInterface({
        url: discovered.value.cardUrl,
        offered: discovered.value.card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`),
        pinned: target.binding !== undefined || target.protocol !== undefined
      })
    }
    // A card the user gave is their word for where its interfaces are, as --allow-interface-host is for a host.
    const endpoints = target.card !== undefined ? selected : yield* withInterfaceRule(state, target, discovered.value.cardUrl, selected)
    const remembered = (yield* Ref.get(state.workingEndpoints)).get(target.agentUrl)
    const preferred = remembered &&
      endpoints.find((e) => e.url === remembered.url && e.binding === remembered.binding && e.version === remembered.version)
    return preferred ? [preferred, ...endpoints.filter((e) => e !== preferred)] : endpoints
  })

const isSameEndpoint = (a: Endpoint | undefined, b: Endpoint) =>
  a !== undefined && a.url === b.url && a.binding === b.binding && a.version === b.version && a.tenant === b.tenant

/** The 0.3 interface to fall back to: the same binding if the card offers it, else any. */
const legacyEndpointFor = (endpoints: ReadonlyArray<Endpoint>, failed: Endpoint) =>
  endpoints.find((e) => e.version === "0.3" && e.binding === failed.binding) ?? endpoints.find((e) => e.version === "0.3")

const warnCrossOrigin = (state: ClientState, target: Target, endpoint: Endpoint) =>
  Effect.suspend(() => {
    const origin = originOf(endpoint.url)
    if (target.credentials === undefined || !isCrossOrigin(target, endpoint.url) || target.interfaceCredentials !== undefined) {
      return Effect.void
    }
    if (origin === undefined || state.warnedOrigins.has(origin)) return Effect.void
    state.warnedOrigins.add(origin)
    return Effect.logWarning(
      `The agent card routes requests to ${origin}, not ${originOf(target.agentUrl)}: credentials are not sent there ` +
        `(save credentials for it with relay auth set --url ${origin}, or send these with --allow-cross-origin-credentials)`
    )
  })

/**
 * The target as it reaches `endpoint`: on another origin than the one addressed (and the user not
 * allowing credentials across), with the credentials the user saved for that origin, if any.
 */
const withInterfaceCredentials = (target: Target, endpoint: Endpoint): Effect.Effect<Target> => {
  const origin = originOf(endpoint.url)
  if (origin === undefined || !isCrossOrigin(target, endpoint.url) || target.savedCredentialsOf === undefined) {
    return Effect.succeed(target)
  }
  return Effect.map(
    target.savedCredentialsOf(origin),
    (credentials) => credentials === undefined ? target : { ...target, interfaceCredentials: { origin, credentials } }
  )
}

/**
 * Runs `attempt` on the first endpoint, with the client state its requests go through (held to the
 * card's class of address where the interface rule says so); on a version mismatch of a 1.0
 * endpoint (and no pinned version) retries on a 0.3 endpoint of the card, remembering whichever worked.
 */
export const withEndpoint = <A>(
  state: ClientState,
  target: Target,
  attempt: (endpoint: Endpoint, via: ClientState, target: Target) => Effect.Effect<A, A2aClientError>
): Effect.Effect<A, A2aClientError> =>
  Effect.gen(function*() {
    const endpoints = yield* endpointsOf(state, target)
    const first = endpoints[0]!
    const attemptOn = (endpoint: Endpoint) =>
      Effect.zip(stateFor(state, endpoint), withInterfaceCredentials(target, endpoint)).pipe(
        Effect.tap(([, reaching]) => warnCrossOrigin(state, reaching, endpoint)),
        // Masked with the credentials saved for the interface's origin too, which the outer target does not hold.
        Effect.flatMap(([via, reaching]) => Effect.mapError(attempt(endpoint, via, reaching), withoutSecretsIn(reaching))),
        // The interface that answered, for the results that name it (a target of one program's calls).
        Effect.tap(() =>
          Effect.sync(() => {
            if (target.used !== undefined) target.used.endpoint = endpoint
          })
        ),
        Effect.tap(() =>
          Ref.update(
            state.workingEndpoints,
            (map) => isSameEndpoint(map.get(target.agentUrl), endpoint) ? map : new Map(map).set(target.agentUrl, endpoint)
          )
        )
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
