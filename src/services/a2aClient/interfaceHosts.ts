/**
 * The interface rule: a card may send relay's requests anywhere, so an interface on another origin
 * than its card is used only when its host reaches the same class of address as the card's host
 * (a public card does not route to loopback, private, link-local or metadata addresses), unless the
 * user vouches for that host (`--allow-interface-host`). The classes are those of ipAddresses; the
 * interface's host is judged at connect time by connectGuard, on the addresses the connection uses;
 * the card's host by the addresses its card was fetched from (cardFetcher), not a lookup of its own;
 * for a download, the agent's host likewise, or by where relay's calls through an interface connected.
 * `relay check` goes further and sends nothing to another origin without the user's word
 * (programs/check/interfaceHosts.ts); both read the same predicates from here.
 */
import type { HttpClient } from "@effect/platform"
import { Context, Effect, Scope } from "effect"
import { canonicalHostName, hostOfUrl } from "../../a2a/hosts.js"
import { type AddressClass, hostClasses } from "../../domain/ipAddresses.js"
import { MAX_CACHED_CARDS } from "../../domain/limits.js"
import { type AddressJudge, guardedHttpClient, type ResolveHost, systemResolve } from "../connectGuard.js"
import type { Addressing, ClientState } from "./state.js"
import { type Endpoint, originOf, type Target } from "./target.js"

/** The classes of every address `hostname` reaches: a literal (or localhost) by itself, a name as resolved. */
export const classesOfHost = (resolve: ResolveHost) => async (hostname: string): Promise<ReadonlyArray<AddressClass>> =>
  hostClasses(hostname) ?? (await resolve(hostname, {})).flatMap(({ address }) => hostClasses(address) ?? [])

export class HostAddressing extends Context.Reference<HostAddressing>()("relay/A2aClient/HostAddressing", {
  defaultValue: (): Addressing => ({ resolve: systemResolve, cardHostClasses: classesOfHost(systemResolve) })
}) {}

export const isOnCardOrigin = (url: string, cardUrl: string) => originOf(url) === originOf(cardUrl)

/** The interface's host when the user allowed it with --allow-interface-host. */
export const isHostAllowed = (url: string, allowed: ReadonlyArray<string> | undefined) => {
  const host = hostOfUrl(url)
  return host !== undefined && (allowed ?? []).some((entry) => canonicalHostName(entry) === host)
}

/** Whether the interface rule applies to an interface URL at all. */
export const isRuledInterface = (target: Target, cardUrl: string, url: string) =>
  !isOnCardOrigin(url, cardUrl) && !isHostAllowed(url, target.allowInterfaceHosts)

const named = (classes: ReadonlyArray<AddressClass>) => (classes.length === 0 ? "of no known class" : classes.join(" or "))

/** Whose class of address a judge holds connections to, and the rule it says it keeps. */
interface Reach {
  readonly classes: ReadonlyArray<AddressClass>
  readonly of: string
  readonly rule: string
}

const INTERFACE_RULE = { of: "the card's own host", rule: "relay keeps a card's interfaces on its card's class of address" }
const DOWNLOAD_RULE = {
  of: "the agent's host",
  rule: "relay fetches an answer's files on another origin only on its agent's class of address"
}
const CATALOG_RULE = { of: "the catalog's host", rule: "relay fetches a catalog's cards only on its catalog's class of address" }

/** Refuses every address outside the classes (a name's addresses are said by the lookup). */
const judgeWithin = ({ classes: reach, of, rule }: Reach): AddressJudge => (address, hostname) => {
  const classes = hostClasses(address)
  if (classes === undefined) return `${hostname} reaches ${address}, which is not an IP address relay can judge`
  const outside = classes.find((kind) => !reach.includes(kind))
  return outside === undefined ? undefined : `${hostname} is a ${outside} address, and ${of} is ${named(reach)}: ${rule}`
}

/** An HTTP client for one discovery's card requests, and the address it last connected each host name at. */
export interface CardFetcher {
  readonly http: HttpClient.HttpClient
  readonly connectedTo: (hostname: string) => string | undefined
}

/**
 * The client a discovery fetches its cards through, its own: its requests go one after the other,
 * so the last connection it made to a host is the one the card came over (in a shared client,
 * another call could have connected since). The address recorded is the one connected to, not
 * every address the lookup listed: a public host that lists 127.0.0.1 after its own is public.
 * It admits every address (the card's host is the one the user addressed), or with
 * `catalogReach` only those of the catalog that named the card (Target.cardReach).
 */
export const cardFetcher = (
  state: ClientState,
  catalogReach?: ReadonlyArray<AddressClass>
): Effect.Effect<CardFetcher, never, Scope.Scope> =>
  Effect.gen(function*() {
    const connections = new Map<string, string>()
    const judge = catalogReach === undefined ? () => undefined : judgeWithin({ classes: catalogReach, ...CATALOG_RULE })
    const http = yield* guardedHttpClient(judge, state.addressing.resolve, (hostname, address) => connections.set(hostname, address))
    return { http, connectedTo: (hostname) => connections.get(hostname) }
  })

/** The address `fetcher` connected to the host of `cardUrl` at (none for an IP literal: it is its own class). */
export const fetchedFrom = (fetcher: CardFetcher, cardUrl: string): ReadonlyArray<string> | undefined => {
  const host = hostOfUrl(cardUrl)
  const address = host === undefined ? undefined : fetcher.connectedTo(host)
  return address === undefined ? undefined : [address]
}

/**
 * Remembers the addresses the card at `cardUrl` was fetched from, for the rule to judge its host
 * by; again on each use of a cached card, so that the record of a card still in use is not the
 * one that makes room. Nothing is remembered for an IP literal: the literal is its class.
 */
export const rememberCardHost = (state: ClientState, cardUrl: string, addresses: ReadonlyArray<string> | undefined) =>
  Effect.sync(() => {
    const host = hostOfUrl(cardUrl)
    if (host === undefined || addresses === undefined) return
    remember(state.cardHostAddresses, host, addresses)
  })

/** Sets `host` in `known` as its newest entry; as many hosts as cards are kept, the one remembered longest ago making room. */
const remember = <A>(known: Map<string, A>, host: string, value: A) => {
  known.delete(host)
  for (const oldest of known.keys()) {
    if (known.size < MAX_CACHED_CARDS) break
    known.delete(oldest)
  }
  known.set(host, value)
}

/**
 * The classes of address the host of the card at `url` reaches: those of the addresses the card
 * was fetched from, when relay fetched it; else as the host resolves now.
 * A later lookup, which the host's DNS could answer with 127.0.0.1, does not widen them.
 */
export const cardHostReach = (state: ClientState, url: string): Effect.Effect<ReadonlyArray<AddressClass>> =>
  Effect.suspend(() => reachFrom(state, url, state.cardHostAddresses.get(hostOfUrl(url) ?? "")))

/** The classes of `addresses` (a connection's, when one said them); else as the host of `url` resolves now. */
export const reachFrom = (
  state: ClientState,
  url: string,
  addresses: ReadonlyArray<string> | undefined
): Effect.Effect<ReadonlyArray<AddressClass>> => {
  if (addresses !== undefined) return Effect.succeed(addresses.flatMap((address) => hostClasses(address) ?? []))
  // A host that no longer resolves reaches no class: every ruled interface is then refused.
  return Effect.promise(() => state.addressing.cardHostClasses(hostOfUrl(url) ?? "").catch(() => []))
}

/**
 * The classes of address the agent's host reaches (the host of `agentUrl`), for a file on another
 * origin (downloads.ts): those of the address relay connected to it at, fetching its card (or
 * looking for one it did not serve) or calling it through a ruled interface; an IP literal (or
 * localhost) is its own class. Undefined when relay has not connected to the host in this process:
 * it is not looked up.
 */
export const agentHostReach = (state: ClientState, agentUrl: string): Effect.Effect<ReadonlyArray<AddressClass> | undefined> =>
  Effect.suspend(() => {
    const host = hostOfUrl(agentUrl) ?? ""
    // A literal (or localhost) is its own class: the addressing says it without a lookup (classesOfHost).
    if (hostClasses(host) !== undefined) return reachFrom(state, agentUrl, undefined)
    const called = state.interfaceHostAddresses.get(host)
    const addresses = state.cardHostAddresses.get(host) ?? (called === undefined ? undefined : [called])
    return addresses === undefined ? Effect.succeed(undefined) : reachFrom(state, agentUrl, addresses)
  })

/**
 * The card's endpoints with the rule applied: those it governs carry the classes of the card's host
 * (found only when one needs them), the others are used as they are.
 */
export const withInterfaceRule = (state: ClientState, target: Target, cardUrl: string, endpoints: ReadonlyArray<Endpoint>) =>
  Effect.gen(function*() {
    if (!endpoints.some((endpoint) => isRuledInterface(target, cardUrl, endpoint.url))) return endpoints
    const reach = yield* cardHostReach(state, cardUrl)
    return endpoints.map((endpoint) => isRuledInterface(target, cardUrl, endpoint.url) ? { ...endpoint, reach } : endpoint)
  })

const reachKey = (reach: ReadonlyArray<AddressClass>) => [...new Set(reach)].sort().join(",")

/** What a held client's requests are: calls through a card's interface, or an answer's files (downloads.ts). */
export type HeldRequests = "interface" | "download"

/** A client's judge, and what it is told of each connection: only a call's says where the agent is (agentHostReach). */
const heldBy = (state: ClientState, reach: ReadonlyArray<AddressClass>, held: HeldRequests) =>
  held === "interface"
    ? {
      judge: judgeWithin({ classes: reach, ...INTERFACE_RULE }),
      record: (hostname: string, address: string) => remember(state.interfaceHostAddresses, hostname, address)
    }
    : { judge: judgeWithin({ classes: reach, ...DOWNLOAD_RULE }), record: undefined }

/** The client state an endpoint's requests use: with an HTTP client held to its reach when it has one. */
export const stateFor = (state: ClientState, endpoint: Endpoint, held: HeldRequests = "interface"): Effect.Effect<ClientState> => {
  const reach = endpoint.reach
  if (reach === undefined) return Effect.succeed(state)
  const key = `${held}:${reachKey(reach)}`
  const known = state.guardedClients.get(key)
  if (known !== undefined) return Effect.succeed({ ...state, http: known })
  // One client per set of classes and kind of request (a handful at most), living as long as the A2A client.
  const { judge, record } = heldBy(state, reach, held)
  return guardedHttpClient(judge, state.addressing.resolve, record).pipe(
    Scope.extend(state.scope),
    Effect.map((http: HttpClient.HttpClient) => {
      state.guardedClients.set(key, http)
      return { ...state, http }
    })
  )
}
