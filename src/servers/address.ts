/** The URL a local server is reached at, shared by the agent server and the webhook receiver. */
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect } from "effect"
import { isAllInterfaces } from "../a2a/hosts.js"

/** `host:port`, an IPv6 host in brackets: how URLs and gRPC targets spell an address. */
export const hostAndPort = (host: string, port: number): string =>
  `${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}:${port}`

/** The host this machine reaches a server bound to `host` at: 127.0.0.1 for a bind to every interface (0.0.0.0, ::). */
export const reachableHost = (host: string): string => (isAllInterfaces(host) ? "127.0.0.1" : host)

/**
 * `http://host:port` of a bound address. A server bound to every interface (0.0.0.0, ::) is
 * shown at 127.0.0.1, where this machine reaches it; IPv6 hosts get brackets.
 */
export const reachableBaseUrl = (address: HttpServer.Address): string => {
  if (address._tag === "UnixAddress") return `unix:${address.path}`
  return `http://${hostAndPort(reachableHost(address.hostname), address.port)}`
}

/** The bound server's reachable base URL. */
export const serverBaseUrl = HttpServer.addressWith((address) => Effect.succeed(reachableBaseUrl(address)))
