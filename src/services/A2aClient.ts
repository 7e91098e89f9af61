/**
 * A2aClient: every operation against a remote A2A agent, in either protocol generation and
 * either HTTP binding, returning the v1.0 domain model.
 *
 * discover the card (agent-card.json, then agent.json, or an explicit card URL; ETag and
 * Cache-Control honoured) → pick the first interface we speak (or the one pinned) → encode the
 * operation in that interface's dialect → send with A2A-Version and the caller's credentials
 * (only to the origin the user addressed; masked wherever an error quotes the agent) → decode; on the v0.3 signals of a 1.0 interface,
 * fall back to the card's 0.3 interface unless the user pinned a version; an interface on another
 * origin than the card stays within the card's class of address (a2aClient/interfaceHosts.ts). Streams are checked
 * for their content type before parsing and end at the last event of the interaction.
 *
 * The parts live in a2aClient/: discovery, endpoints (choice and fallback), one transport per
 * binding with SSE reading shared, and operations; they share a ClientState passed explicitly.
 */
import { HttpClient } from "@effect/platform"
import { Context, Effect, Layer, Ref, type Scope, Stream } from "effect"
import type * as V1 from "../a2a/v1.js"
import type { A2aClientError } from "../domain/clientErrors.js"
import { withoutSecretsIn } from "./a2aClient/answers.js"
import { makeCardCache } from "./a2aClient/cardCache.js"
import { type CardJson, discover, type DiscoveredCard, fetchCardJson } from "./a2aClient/discovery.js"
import { download } from "./a2aClient/downloads.js"
import { endpointsOf } from "./a2aClient/endpoints.js"
import { HostAddressing } from "./a2aClient/interfaceHosts.js"
import { call, extendedCard, limitHistory, pushCall, streamCall } from "./a2aClient/operations.js"
import type { ClientState } from "./a2aClient/state.js"
import { answerWithoutSecrets, type Endpoint, type Target } from "./a2aClient/target.js"

export { cardCandidates, type CardJson, type DiscoveredCard } from "./a2aClient/discovery.js"
export { selectEndpoints } from "./a2aClient/endpoints.js"
export { classesOfHost, HostAddressing, isHostAllowed, isOnCardOrigin } from "./a2aClient/interfaceHosts.js"
export type { Addressing } from "./a2aClient/state.js"
export { credentialHeaders, credentialsFor, type Endpoint, type Target, withoutSecrets } from "./a2aClient/target.js"

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
  /** The bytes of a file an answer gives by URL, fetched under the rules of every request (a2aClient/downloads.ts). */
  readonly download: (target: Target, url: string) => Effect.Effect<Uint8Array, A2aClientError>
}>() {}

type Service = A2aClient["Type"]

/** Fresh state over the HttpClient of the context, for the life of the scope. */
const makeClientState: Effect.Effect<ClientState, never, HttpClient.HttpClient | Scope.Scope> = Effect.gen(function*() {
  return {
    http: yield* HttpClient.HttpClient,
    cardCache: makeCardCache(),
    cardLocations: yield* Ref.make(new Map<string, string>()),
    workingEndpoints: yield* Ref.make(new Map<string, Endpoint>()),
    warnedOrigins: new Set<string>(),
    warnedEnums: new Set<string>(),
    addressing: yield* HostAddressing,
    cardHostAddresses: new Map<string, ReadonlyArray<string>>(),
    interfaceHostAddresses: new Map<string, string>(),
    guardedClients: new Map<string, HttpClient.HttpClient>(),
    scope: yield* Effect.scope
  }
})

/** Errors of a call with the caller's secrets masked wherever the agent's words are quoted (answers.ts). */
const masked = <A>(target: Target, effect: Effect.Effect<A, A2aClientError>) => Effect.mapError(effect, withoutSecretsIn(target))

/** An answering call's result and errors with the caller's secrets masked: an agent may echo the credentials it was sent. */
const maskedAnswer = <A>(target: Target, effect: Effect.Effect<A, A2aClientError>) =>
  Effect.map(masked(target, effect), answerWithoutSecrets(target))
const maskedStream = <A>(target: Target, stream: Stream.Stream<A, A2aClientError>) =>
  Stream.map(Stream.mapError(stream, withoutSecretsIn(target)), answerWithoutSecrets(target))

export const make: Effect.Effect<Service, never, HttpClient.HttpClient | Scope.Scope> = Effect.map(
  makeClientState,
  (state) =>
    A2aClient.of({
      discover: (target) => masked(target, discover(state, target)),
      fetchCardJson: (target) => masked(target, fetchCardJson(state, target)),
      endpoint: (target) => masked(target, Effect.map(endpointsOf(state, target), (endpoints) => endpoints[0]!)),
      send: (target, request) => maskedAnswer(target, call(state, target, (d) => d.send, request, "send")),
      stream: (target, request) => maskedStream(target, streamCall(state, target, (d) => d.stream, request, "stream")),
      getTask: (target, request) =>
        maskedAnswer(
          target,
          Effect.map(call(state, target, (d) => d.getTask, request, "getTask"), (task) => limitHistory(task, request.historyLength))
        ),
      listTasks: (target, request) => maskedAnswer(target, call(state, target, (d) => d.listTasks, request, "listTasks")),
      cancelTask: (target, request) => maskedAnswer(target, call(state, target, (d) => d.cancelTask, request, "cancelTask")),
      subscribe: (target, request) => maskedStream(target, streamCall(state, target, (d) => d.subscribe, request, "subscribe")),
      createPushConfig: (target, config) => masked(target, pushCall(state, target, (d) => d.createPushConfig, config, "createPushConfig")),
      getPushConfig: (target, request) => masked(target, pushCall(state, target, (d) => d.getPushConfig, request, "getPushConfig")),
      listPushConfigs: (target, request) => masked(target, pushCall(state, target, (d) => d.listPushConfigs, request, "listPushConfigs")),
      deletePushConfig: (target, request) =>
        masked(target, pushCall(state, target, (d) => d.deletePushConfig, request, "deletePushConfig")),
      extendedCard: (target) => masked(target, extendedCard(state, target)),
      download: (target, url) => masked(target, download(state, target, url))
    })
)

/** The client over whatever HttpClient the context provides; each build has its own caches. */
export const layer: Layer.Layer<A2aClient, never, HttpClient.HttpClient> = Layer.scoped(A2aClient, make)

/** Which methods answer with a stream, so an unstubbed one fails the way its caller reads it. */
const methodKinds: { readonly [Method in keyof Service]: "effect" | "stream" } = {
  discover: "effect",
  fetchCardJson: "effect",
  endpoint: "effect",
  send: "effect",
  stream: "stream",
  getTask: "effect",
  listTasks: "effect",
  cancelTask: "effect",
  subscribe: "stream",
  createPushConfig: "effect",
  getPushConfig: "effect",
  listPushConfigs: "effect",
  deletePushConfig: "effect",
  extendedCard: "effect",
  download: "effect"
}

const notStubbed = (method: string) => `not stubbed: A2aClient.${method}`

/**
 * A client for tests that answers with `stubs` only: every other method dies with
 * "not stubbed: A2aClient.<method>", so a test states exactly what its program may call.
 */
export const layerTest = (stubs: Partial<Service>): Layer.Layer<A2aClient> => {
  const unstubbed = Object.fromEntries(
    Object.entries(methodKinds).map(([method, kind]) => [
      method,
      kind === "stream" ? () => Stream.dieMessage(notStubbed(method)) : () => Effect.dieMessage(notStubbed(method))
    ])
  ) as unknown as Service
  return Layer.succeed(A2aClient, A2aClient.of({ ...unstubbed, ...stubs }))
}
