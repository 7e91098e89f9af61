/**
 * What the parts of the client share for the life of the service, passed to each of them
 * explicitly: the HTTP client, what discovery learned, which interface worked, and the warnings
 * already given (once each per process).
 */
import { HttpClient } from "@effect/platform"
import { Effect, Ref } from "effect"
import { type CardCache, makeCardCache } from "./cardCache.js"
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
}

/** Fresh state over the HttpClient of the context. */
export const makeClientState: Effect.Effect<ClientState, never, HttpClient.HttpClient> = Effect.gen(function*() {
  return {
    http: yield* HttpClient.HttpClient,
    cardCache: makeCardCache(),
    cardLocations: yield* Ref.make(new Map<string, string>()),
    workingEndpoints: yield* Ref.make(new Map<string, Endpoint>()),
    warnedOrigins: new Set<string>(),
    warnedEnums: new Set<string>()
  }
})
