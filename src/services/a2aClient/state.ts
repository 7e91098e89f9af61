/**
 * What the parts of the client share for the life of the service, passed to each of them
 * explicitly: the HTTP client, what discovery learned, which interface worked, and the warnings
 * already given (once each per process).
 */
import { HttpClient } from "@effect/platform"
import { Effect, Ref, type Scope } from "effect"
import { type CardCache, makeCardCache } from "./cardCache.js"
import { type Addressing, HostAddressing } from "./interfaceHosts.js"
import type { Endpoint } from "./target.js"

export interface ClientState {
  readonly http: HttpClient.HttpClient
  /** Cards by URL and credentials fingerprint (discovery.ts says why both), bounded. */
  readonly cardCache: CardCache
  /** Where discovery found each agent's card, so later calls skip the paths that 404ed. */
  readonly cardLocations: Ref.Ref<Map<string, string>>
  /** The endpoint that last worked per agent, so a fallback is paid once per process. */
  readonly workingEndpoints: Ref.Ref<Map<string, Endpoint>>
  /** Origins already warned about withholding credentials. */
  readonly warnedOrigins: Set<string>
  /** Agent and enum value pairs already warned about (bounded where it is filled). */
  readonly warnedEnums: Set<string>
  /** What hosts reach, for the interface rule (interfaceHosts.ts). */
  readonly addressing: Addressing
  /** The HTTP clients that hold ruled interfaces to a set of address classes, by that set. */
  readonly guardedClients: Map<string, HttpClient.HttpClient>
  /** The service's scope: the guarded clients close with it. */
  readonly scope: Scope.Scope
}

/** Fresh state over the HttpClient of the context, for the life of the scope. */
export const makeClientState: Effect.Effect<ClientState, never, HttpClient.HttpClient | Scope.Scope> = Effect.gen(function*() {
  return {
    http: yield* HttpClient.HttpClient,
    cardCache: makeCardCache(),
    cardLocations: yield* Ref.make(new Map<string, string>()),
    workingEndpoints: yield* Ref.make(new Map<string, Endpoint>()),
    warnedOrigins: new Set<string>(),
    warnedEnums: new Set<string>(),
    addressing: yield* HostAddressing,
    guardedClients: new Map<string, HttpClient.HttpClient>(),
    scope: yield* Effect.scope
  }
})
