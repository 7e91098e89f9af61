/**
 * What the parts of the client share for the life of the service, passed to each of them
 * explicitly: the HTTP client, what discovery learned, which interface worked, and the warnings
 * already given (once each per process).
 */
import type { HttpClient } from "@effect/platform"
import type { Ref, Scope } from "effect"
import type { AddressClass } from "../../domain/ipAddresses.js"
import type { ResolveHost } from "../connectGuard.js"
import type { CardCache } from "./cardCache.js"
import type { Endpoint } from "./target.js"

/** How the rule learns what hosts reach; the defaults ask the system's resolver, tests substitute their own. */
export interface Addressing {
  /** Resolves a host name when connecting to it: a card's host (discovery), an interface's. */
  readonly resolve: ResolveHost
  /** The classes of address the card's host reaches, when no fetch of its card said (interfaceHosts.ts). */
  readonly cardHostClasses: (hostname: string) => Promise<ReadonlyArray<AddressClass>>
}

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
  /** The addresses each card host was connected at when its card was last fetched, by host (bounded where it is filled). */
  readonly cardHostAddresses: Map<string, ReadonlyArray<string>>
  /** The address relay's calls through a ruled interface last connected each host name at (bounded where it is filled). */
  readonly interfaceHostAddresses: Map<string, string>
  /** The HTTP clients that hold ruled interfaces (or downloads) to a set of address classes, by kind and set. */
  readonly guardedClients: Map<string, HttpClient.HttpClient>
  /** The service's scope: the guarded clients close with it. */
  readonly scope: Scope.Scope
}
