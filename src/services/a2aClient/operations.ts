/**
 * The operations: the agent's card says it can (where A2A makes that optional), the operation is
 * encoded in the chosen endpoint's dialect and carried by that binding's transport, with the
 * 1.0 → 0.3 fallback of endpoints.ts; errors name the agent addressed.
 */
import { Effect, type ParseResult, Stream } from "effect"
import { type Dialect, dialectFor, type WireRequest } from "../../a2a/dialects.js"
import type * as V1 from "../../a2a/v1.js"
import { type A2aClientError, AuthRequired, ProtocolError, UnsupportedOperation } from "../../domain/clientErrors.js"
import { loginOffered } from "../../domain/oauth.js"
import { withoutSecretsIn } from "./answers.js"
import { decodeCard, discover, type DiscoveredCard, replaceCachedCard } from "./discovery.js"
import { isCardless, withEndpoint } from "./endpoints.js"
import { grpcTransport } from "./grpcTransport.js"
import { jsonRpcTransport } from "./jsonRpcTransport.js"
import { restTransport } from "./restTransport.js"
import type { ClientState } from "./state.js"
import type { Endpoint, Target } from "./target.js"
import type { Transport, Transports } from "./transport.js"

/** Every binding the dialects can encode for; a new binding is a new transport file and a line here. */
const transports: Transports = { JsonRpc: jsonRpcTransport, Rest: restTransport, Grpc: grpcTransport }

// TypeScript cannot tie `transports[wire._tag]` to `wire`'s own tag; the registry's type does.
const transportFor = <A>(wire: WireRequest<A>) => transports[wire._tag] as Transport<WireRequest<A>["_tag"]>

const dialectOf = (endpoint: Endpoint) => dialectFor(endpoint.binding, endpoint.version, endpoint.tenant)

type Encoder<I, A> = (input: I) => Effect.Effect<WireRequest<A>, ParseResult.ParseError>

const requireCapability = (
  state: ClientState,
  target: Target,
  operation: string,
  has: (card: V1.AgentCard) => boolean,
  reason: string
) =>
  discover(state, target).pipe(
    Effect.flatMap((card) =>
      has(card.card) ? Effect.void : Effect.fail(new UnsupportedOperation({ operation, reason, agentUrl: target.agentUrl }))
    ),
    // A card-less agent (pinned binding and version) is taken at its word.
    Effect.catchIf((error) => isCardless(target, error), () => Effect.void)
  )

const pushCapable = (state: ClientState, target: Target, operation: string) =>
  requireCapability(
    state,
    target,
    operation,
    (card) => card.capabilities.pushNotifications === true,
    "the agent card does not declare push notifications"
  )

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

/**
 * A refusal (401/403) by an agent whose card declares OAuth says how to log in, with the flow the
 * card offers, rather than how to save a token. The card is in the cache by then.
 */
const withLoginAdvice = (state: ClientState, target: Target) => (refused: AuthRequired) =>
  discover(state, target).pipe(
    Effect.map((found) => loginOffered(found.raw)),
    Effect.orElseSucceed(() => undefined),
    Effect.flatMap((oauthLogin) =>
      Effect.fail(
        oauthLogin === undefined ? refused : new AuthRequired({
          url: refused.url,
          agentUrl: refused.agentUrl,
          status: refused.status,
          credentials: refused.credentials,
          ...(refused.challenge === undefined ? {} : { challenge: refused.challenge }),
          oauthLogin
        })
      )
    )
  )

/**
 * A unary operation: `op` picks its encoder from the endpoint's dialect (undefined where that
 * dialect has no such operation); `name` names it in errors and spans.
 */
type UnaryCall = <I, A>(
  state: ClientState,
  target: Target,
  op: (dialect: Dialect) => Encoder<I, A> | undefined,
  input: I,
  name: string
) => Effect.Effect<A, A2aClientError>

export const call: UnaryCall = (state, target, op, input, name) =>
  withEndpoint(state, target, (endpoint, via, reaching) => {
    const encode = op(dialectOf(endpoint))
    if (encode === undefined) {
      return Effect.fail(
        new UnsupportedOperation({ operation: name, reason: `A2A ${endpoint.version} has no ${name} over ${endpoint.binding}` })
      )
    }
    return encode(input).pipe(
      Effect.orDie,
      Effect.flatMap((wire) => transportFor(wire).unary(via, reaching, endpoint, wire)),
      Effect.catchTag("AuthRequired", withLoginAdvice(state, target))
    )
  }).pipe(Effect.mapError(naming(target)), Effect.withSpan(`A2aClient.${name}`))

/** A push notification config operation, once the card declares push notifications. */
export const pushCall: UnaryCall = (state, target, op, input, name) =>
  Effect.zipRight(pushCapable(state, target, name), call(state, target, op, input, name))

/** A streaming operation, once the card declares streaming. */
export const streamCall = <I>(
  state: ClientState,
  target: Target,
  op: (dialect: Dialect) => Encoder<I, V1.StreamResponse>,
  input: I,
  name: string
): Stream.Stream<V1.StreamResponse, A2aClientError> =>
  Stream.unwrap(
    requireCapability(state, target, name, (card) => card.capabilities.streaming === true, "the agent card does not declare streaming")
      .pipe(
        Effect.zipRight(withEndpoint(state, target, (endpoint, via, reaching) =>
          op(dialectOf(endpoint))(input).pipe(
            Effect.orDie,
            Effect.flatMap((wire) => transportFor(wire).stream(via, reaching, endpoint, wire)),
            Effect.map(Stream.mapError(withoutSecretsIn(reaching))),
            Effect.catchTag("AuthRequired", withLoginAdvice(state, target))
          )))
      )
  )

/** The extended card, which then replaces the cached one. */
export const extendedCard = (state: ClientState, target: Target) =>
  Effect.gen(function*() {
    yield* requireCapability(
      state,
      target,
      "extendedCard",
      (card) => card.capabilities.extendedAgentCard === true,
      "the agent card does not declare an extended card"
    )
    const raw = yield* call(state, target, (d) => d.extendedCard, undefined, "extendedCard")
    const cardUrl = (yield* discover(state, target)).cardUrl
    const card: DiscoveredCard = { ...(yield* decodeCard(cardUrl, raw)), raw, cardUrl }
    yield* replaceCachedCard(state, target, card)
    return card
  })

/**
 * At most the `historyLength` most recent messages. Conformant agents already trim; the 0.3.14
 * SDK reads 0 as "everything" (`slice(-0)`), so the client enforces the limit it asked for.
 */
export const limitHistory = (task: V1.Task, historyLength: number | undefined): V1.Task => {
  if (historyLength === undefined || historyLength < 0 || (task.history?.length ?? 0) <= historyLength) return task
  const { history, ...rest } = task
  return historyLength === 0 ? rest : { ...rest, history: (history ?? []).slice(-historyLength) }
}
