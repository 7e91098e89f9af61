/**
 * `relay check` and the interface rule. The client's doors use an interface on another origin than
 * its card when it stays within the card's class of address; a check, aimed at agents nobody vouches
 * for, sends nothing at all to another origin unless `--allow-interface-host` names its host. Such
 * an interface fails card.interface-hosts, naming its host, and its checks are skipped. A gRPC
 * interface has a port of its own (the card is served over HTTP): the card's host is its origin.
 */
import { hostOfUrl } from "../../a2a/hosts.js"
import { type CheckOutcome, failed, passed } from "../../domain/conformance.js"
import { type Endpoint, isHostAllowed, isOnCardOrigin } from "../../services/A2aClient.js"

/** On the card's origin, or for gRPC on the card's host. */
const isOnCardSide = (endpoint: Endpoint, cardUrl: string) =>
  isOnCardOrigin(endpoint.url, cardUrl) || (endpoint.binding === "GRPC" && hostOfUrl(endpoint.url) === hostOfUrl(cardUrl))

/** The interfaces a check may send to, and those on another origin that nobody allowed. */
export const splitByOrigin = (
  endpoints: ReadonlyArray<Endpoint>,
  cardUrl: string,
  allowed: ReadonlyArray<string> | undefined
) => {
  const sendable = (endpoint: Endpoint) => isOnCardSide(endpoint, cardUrl) || isHostAllowed(endpoint.url, allowed)
  return { checked: endpoints.filter(sendable), refused: endpoints.filter((endpoint) => !sendable(endpoint)) }
}

/** `host:port`, as a refusal names where the card points. */
const hostAndPort = (url: string) => new URL(url).host

/** Why nothing was sent to this interface: the skip reason of its checks. */
export const notSentReason = (endpoint: Endpoint, cardUrl: string) =>
  `nothing sent: ${endpoint.url} is on ${hostAndPort(endpoint.url)}, another origin than the card's (${new URL(cardUrl).origin}); ` +
  `allow that host with --allow-interface-host ${hostOfUrl(endpoint.url)} if you trust it`

/** card.interface-hosts: passes when every interface checked is on the card's origin or allowed. */
export const interfaceHostsOutcome = (checked: ReadonlyArray<Endpoint>, refused: ReadonlyArray<Endpoint>, cardUrl: string): CheckOutcome =>
  refused.length === 0
    ? passed(
      checked.some((endpoint) => !isOnCardSide(endpoint, cardUrl))
        ? "other origins only on hosts the user allowed"
        : "every interface is on the card's origin"
    )
    : failed(
      `the card routes requests to ${[...new Set(refused.map((endpoint) => hostAndPort(endpoint.url)))].join(", ")}, ` +
        `another origin than the card's (${new URL(cardUrl).origin}): nothing was sent there ` +
        "(relay check sends only to the card's origin and to hosts allowed with --allow-interface-host)"
    )
