/**
 * Which interfaces of an agent card relay can use. One predicate behind both the client's choice
 * of interface (A2aClient.selectEndpoints) and `relay card validate`, so the validator never calls
 * a card valid that the client then cannot use.
 *
 * An interface is usable when relay speaks its binding (JSONRPC, HTTP+JSON or GRPC, aliases
 * accepted), its protocol version (1.0 or 0.3 by Major.Minor) and its URL is http(s), absolute or
 * relative to the card's own URL, with no query or fragment (operations are paths under it: a
 * query would swallow them). A gRPC interface's URL is an address (grpcUrl below).
 */
import { Effect, Either, ParseResult } from "effect"
import { type Binding, bindingOf, protocolVersionOf, SUPPORTED_BINDINGS } from "./dialects.js"
import { isLoopbackHost } from "./hosts.js"
import { type ProtocolVersion, SUPPORTED_VERSIONS } from "./protocolVersion.js"
import { cardFromWire } from "./translate.js"
import type * as V1 from "./v1.js"

/** An interface relay can talk to. */
export interface UsableInterface {
  readonly url: string
  readonly binding: Binding
  readonly version: ProtocolVersion
  readonly tenant?: string | undefined
}

const httpUrl = (text: string, base: string | undefined): URL | undefined => {
  try {
    const url = new URL(text, base)
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined
  } catch {
    return undefined
  }
}

/**
 * Whether a parsed URL carries a query or a fragment, even an empty one (`…/a2a?`): in a serialized
 * URL `?` and `#` appear only as their delimiters.
 */
export const hasQueryOrFragment = (url: URL): boolean => /[?#]/.test(url.href)

const GRPC_SCHEMES: Readonly<Record<string, "http:" | "https:">> = {
  "http:": "http:",
  "https:": "https:",
  "grpc:": "http:",
  "grpcs:": "https:"
}

/**
 * A gRPC interface's address as the URL relay keeps for it: `host:port` (the specification's
 * form), or a URL whose scheme names the channel: https or grpcs for TLS, http or grpc for
 * plaintext (h2c). A bare address is TLS, except on a loopback host, where local servers (the
 * SDKs' samples) listen in plaintext. Nothing after the port: gRPC routes by the service's name.
 */
export const grpcUrl = (text: string): Either.Either<URL, string> => {
  const scheme = /^([a-z][a-z0-9+.-]*:)\/\//i.exec(text.trim())?.[1]?.toLowerCase()
  const wanted = scheme === undefined ? undefined : GRPC_SCHEMES[scheme]
  if (scheme !== undefined && wanted === undefined) {
    return Either.left(`gRPC address ${JSON.stringify(text)} has a scheme other than https, http, grpcs or grpc`)
  }
  let url: URL
  try {
    url = new URL(scheme === undefined ? `https://${text.trim()}` : `${wanted}${text.trim().slice(scheme.length)}`)
  } catch {
    return Either.left(`gRPC address ${JSON.stringify(text)} is not host:port`)
  }
  if (url.pathname !== "/" || hasQueryOrFragment(url) || url.username !== "" || url.password !== "") {
    return Either.left(`gRPC address ${JSON.stringify(text)} has more than a host and a port`)
  }
  // Parsed again rather than given another protocol, which would move a port 443 (left out of an https URL) to 80.
  return Either.right(scheme === undefined && isLoopbackHost(url.hostname) ? new URL(`http://${text.trim()}`) : url)
}

/** The interface as relay would use it, or why relay cannot (right: usable; left: the reason). */
export const interfaceUse = (entry: V1.AgentInterface, cardUrl?: string): Either.Either<UsableInterface, string> => {
  const binding = bindingOf(entry.protocolBinding)
  if (binding === undefined) {
    return Either.left(`binding ${JSON.stringify(entry.protocolBinding)} is not one relay speaks (${SUPPORTED_BINDINGS.join(", ")})`)
  }
  const version = protocolVersionOf(entry.protocolVersion)
  if (version === undefined) {
    return Either.left(
      `protocol version ${JSON.stringify(entry.protocolVersion)} is not one relay speaks (${SUPPORTED_VERSIONS.join(", ")})`
    )
  }
  if (binding === "GRPC") {
    return Either.map(grpcUrl(entry.url), (url) => ({ url: url.toString(), binding, version, tenant: entry.tenant || undefined }))
  }
  const url = httpUrl(entry.url, cardUrl)
  if (url === undefined) return Either.left(`URL ${JSON.stringify(entry.url)} is not an absolute http(s) URL`)
  if (hasQueryOrFragment(url)) {
    return Either.left(`URL ${JSON.stringify(entry.url)} has a query or fragment, under which no operation path can go`)
  }
  return Either.right({ url: url.toString(), binding, version, tenant: entry.tenant || undefined })
}

/** A card as the client reads it: the interfaces it can use and, for the others, why not. */
export interface ClientReading {
  readonly usable: ReadonlyArray<UsableInterface>
  readonly skipped: ReadonlyArray<{ readonly entry: V1.AgentInterface; readonly reason: string }>
}

/** What the client makes of a card's JSON (right), or the first reason it cannot read it (left). */
export const readAsClient = (json: unknown, cardUrl?: string): Either.Either<ClientReading, string> =>
  Effect.runSync(Effect.either(cardFromWire(json))).pipe(
    Either.mapLeft((error) => {
      const [first] = ParseResult.ArrayFormatter.formatErrorSync(error)
      return first === undefined ? "it does not decode" : `${first.path.length === 0 ? "" : `/${first.path.join("/")}: `}${first.message}`
    }),
    Either.map(({ card }) => {
      const uses = card.supportedInterfaces.map((entry) => ({ entry, use: interfaceUse(entry, cardUrl) }))
      return {
        usable: uses.flatMap(({ use }) => Either.isRight(use) ? [use.right] : []),
        skipped: uses.flatMap(({ entry, use }) => Either.isLeft(use) ? [{ entry, reason: use.left }] : [])
      }
    })
  )
