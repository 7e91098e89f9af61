/** The URL a local server is reached at, shared by the agent server and the webhook receiver. */
import * as HttpServer from "@effect/platform/HttpServer"
import { Effect } from "effect"
import { isAllInterfaces } from "../a2a/hosts.js"

/**
 * `http://host:port` of a bound address. A server bound to every interface (0.0.0.0, ::) is
 * shown at 127.0.0.1, where this machine reaches it; IPv6 hosts get brackets.
 */
export const reachableBaseUrl = (address: HttpServer.Address): string => {
  if (address._tag === "UnixAddress") return `unix:${address.path}`
  const host = isAllInterfaces(address.hostname) ? "127.0.0.1" : address.hostname
  return `http://${host.includes(":") ? `[${host}]` : host}:${address.port}`
}

/** The bound server's reachable base URL. */
export const serverBaseUrl = HttpServer.addressWith((address) => Effect.succeed(reachableBaseUrl(address)))
