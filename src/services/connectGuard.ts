/**
 * The guard against requests that reach addresses they should not (server-side request forgery),
 * checked when a connection is made: the push sender's webhooks and the A2A client's interfaces on
 * another origin than their card both go through it, each with its own judge of an address.
 *
 * An IP literal is judged before the request (a socket connects to it without any lookup). A host
 * name is judged when it is connected to: the connection's own DNS lookup goes through
 * `guardedLookup`, which refuses the connection if any address the name resolves to is refused.
 * Checking at connect time, on the addresses the socket then uses, leaves no window for a name that
 * is re-pointed between check and use (DNS rebinding). Redirects are never followed, so an allowed
 * host cannot bounce a request inward.
 */
import { HttpClient, HttpClientError } from "@effect/platform"
import type { buildConnector } from "@effect/platform-node/Undici"
import { Effect, Scope } from "effect"
import type { LookupAddress, LookupOptions } from "node:dns"
import { lookup as dnsLookup } from "node:dns/promises"
import { isIP, type LookupFunction } from "node:net"

/** Resolves a host name to every address it has (dns.lookup by default; tests substitute one). */
export type ResolveHost = (hostname: string, options: LookupOptions) => Promise<ReadonlyArray<LookupAddress>>

export const systemResolve: ResolveHost = (hostname, options) => dnsLookup(hostname, { ...options, all: true })

/** Why connecting to `address` (an IP address, reached for `hostname`) is refused, or undefined when it is not. */
export type AddressJudge = (address: string, hostname: string) => string | undefined

/** The code of the error a refused connection fails with, so callers tell it from a network failure. */
const ADDRESS_REFUSED = "ERR_RELAY_ADDRESS_REFUSED"

const refusal = (message: string) => Object.assign(new Error(message), { code: ADDRESS_REFUSED })

const refusedAddress = (hostname: string, addresses: ReadonlyArray<LookupAddress>, judge: AddressJudge) =>
  addresses
    .map(({ address }) => {
      const problem = judge(address, hostname)
      return problem === undefined ? undefined : `${problem} (it resolves to ${address})`
    })
    .find((problem) => problem !== undefined)

/** A `net.connect` lookup that refuses host names resolving to an address the judge refuses. */
export const guardedLookup =
  (judge: AddressJudge, resolve: ResolveHost = systemResolve): LookupFunction => (hostname, options, callback) => {
    resolve(hostname, options).then(
      (addresses) => {
        const problem = refusedAddress(hostname, addresses, judge)
        if (problem !== undefined) return callback(refusal(problem), "", 0)
        const [first] = addresses
        if (first === undefined) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), "", 0)
        return options.all === true ? callback(null, [...addresses]) : callback(null, first.address, first.family)
      },
      (error: NodeJS.ErrnoException) => callback(error, "", 0)
    )
  }

/** The refusal message when a request failed because of the guard, found along the cause chain. */
export const refusalIn = (error: unknown): string | undefined => {
  for (let cause = error, depth = 0; typeof cause === "object" && cause !== null && depth < 8; depth++) {
    if ("code" in cause && cause.code === ADDRESS_REFUSED && "message" in cause) return String(cause.message)
    cause = "cause" in cause ? cause.cause : undefined
  }
  return undefined
}

/** The URL's host when it is an IP literal (brackets dropped), else undefined. */
const literalHost = (url: URL) => {
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1")
  return isIP(host) === 0 ? undefined : host
}

/** Told the address each new connection to a host name was made to (one of those its lookup listed). */
export type OnConnect = (hostname: string, address: string) => void

/** undici's connector, telling `onConnect` where each connection to a host name went. */
const connectTelling = (connector: buildConnector.connector, onConnect: OnConnect): buildConnector.connector => (options, callback) =>
  connector(options, (error, socket) => {
    const address = socket?.remoteAddress
    if (error === null && address !== undefined && isIP(options.hostname) === 0) onConnect(options.hostname, address)
    // The callback is typed as two overloads (a socket, or an error); it is handed what it gave.
    const tell = callback as (error: Error | null, socket: unknown) => void
    tell(error, socket)
  })

/**
 * An HTTP client whose every request passes the judge: an IP literal before it is sent, a host name
 * at connect time. Its undici agent is made on the first request (undici loads then, not at
 * start-up) and destroyed as the scope closes.
 */
export const guardedHttpClient = (
  judge: AddressJudge,
  resolve?: ResolveHost,
  onConnect?: OnConnect
): Effect.Effect<HttpClient.HttpClient, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const undici = yield* Effect.cached(
      Effect.acquireRelease(
        Effect.promise(async () => {
          const [Undici, NodeHttpClient] = await Promise.all([
            import("@effect/platform-node/Undici"),
            import("@effect/platform-node/NodeHttpClient")
          ])
          // undici itself (the default export): the bundle's copy of the `export *` names is not filled in.
          const lookup = guardedLookup(judge, resolve)
          const connect = onConnect === undefined ? { lookup } : connectTelling(Undici.default.buildConnector({ lookup }), onConnect)
          const agent = new Undici.default.Agent({ connect })
          return { agent, client: NodeHttpClient.makeUndici(agent) }
        }),
        // Destroyed, not awaited: a short-lived client (one discovery's) must not hold up the call
        // it served while undici tears its connections down.
        ({ agent }) => Effect.sync(() => void agent.destroy().catch(() => undefined))
      ).pipe(Scope.extend(scope))
    )
    return HttpClient.make((request, url) => {
      const literal = literalHost(url)
      const problem = literal === undefined ? undefined : judge(literal, literal)
      return problem === undefined
        ? Effect.flatMap(undici, ({ client }) => client.execute(request))
        : Effect.fail(new HttpClientError.RequestError({ request, reason: "Transport", cause: refusal(problem), description: problem }))
    }).pipe(HttpClient.withTracerDisabledWhen(() => true))
  })
