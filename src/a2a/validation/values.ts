/** Checks of single values: URLs, media types, protocol bindings and protocol versions. */
import { Either } from "effect"
import { isLoopbackHost } from "../hosts.js"
import { grpcUrl, hasQueryOrFragment } from "../usableInterfaces.js"
import { at, type Context, quote } from "./context.js"

const parseUrl = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const isHttpUrl = (url: URL): boolean => url.protocol === "http:" || url.protocol === "https:"

/** Optional URL-valued fields: an empty string is ProtoJSON's "unset". */
export const checkOptionalUrl = (ctx: Context, value: string | undefined, path: string, key: string): void => {
  if (value === undefined || value === "") return
  const url = parseUrl(value)
  if (url === undefined || !isHttpUrl(url)) {
    ctx.report(
      "url.invalid",
      path,
      `${quote(key)} is not an absolute http(s) URL: ${JSON.stringify(value)}`,
      "Use a full URL such as https://example.com/docs."
    )
  }
}

const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+*-]+\/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$/

/** `type/subtype`, parameters allowed (`text/plain; charset=utf-8`). */
export const isMediaType = (text: string): boolean => MEDIA_TYPE.test(text.trim())

export const checkMediaTypes = (ctx: Context, list: ReadonlyArray<unknown> | undefined, path: string): void => {
  list?.forEach((item, index) => {
    if (typeof item === "string" && !isMediaType(item)) {
      ctx.report(
        "media_type.invalid",
        at(path, index),
        `${JSON.stringify(item)} is not a media type`,
        "Modes are media types such as text/plain, application/json or image/png."
      )
    }
  })
}

const CORE_BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"] as const

const BINDING_ALIASES: Readonly<Partial<Record<string, string>>> = {
  REST: "HTTP+JSON",
  HTTP: "HTTP+JSON",
  HTTP_JSON: "HTTP+JSON",
  HTTPJSON: "HTTP+JSON",
  "JSON-RPC": "JSONRPC",
  JSON_RPC: "JSONRPC"
}

const isCoreBinding = (binding: string): boolean => CORE_BINDINGS.some((core) => core === binding)

const looksLikeUri = (text: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(text) && parseUrl(text) !== undefined

export const checkBinding = (ctx: Context, binding: string, path: string, key: string): void => {
  if (isCoreBinding(binding)) return
  const upper = binding.toUpperCase()
  const intended = CORE_BINDINGS.find((core) => core === upper) ?? BINDING_ALIASES[upper]
  if (intended !== undefined) {
    ctx.report(
      "interface.binding_unknown",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is not a core binding name`,
      `Write it exactly as ${JSON.stringify(intended)}; binding names are case-sensitive.`
    )
  } else if (looksLikeUri(binding)) {
    ctx.report(
      "interface.binding_custom",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is a custom binding`,
      "Only clients that know this binding can use the interface; also list a JSONRPC or HTTP+JSON interface."
    )
  } else {
    ctx.report(
      "interface.binding_unknown",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is neither a core binding nor a URI`,
      "Use JSONRPC, HTTP+JSON or GRPC, or name a custom binding with a URI."
    )
  }
}

/**
 * A gRPC address the client reads (usableInterfaces.grpcUrl: host:port, or grpc(s)/http(s) without
 * a path) is judged here; anything else as any interface URL (the spec's own sample gives gRPC an
 * https URL with a path, valid card data though relay's client cannot route by a path).
 */
const checkGrpcAddress = (ctx: Context, address: URL, urlText: string, path: string): void => {
  if (address.protocol === "http:" && !isLoopbackHost(address.hostname)) {
    ctx.report(
      "interface.url_insecure",
      path,
      `${JSON.stringify(urlText)} is plaintext gRPC on a non-loopback host`,
      "Serve gRPC over TLS: credentials and messages would otherwise travel in clear text."
    )
  }
}

export const checkInterfaceUrl = (ctx: Context, urlText: string, binding: string | undefined, path: string): void => {
  const address = binding?.toUpperCase() === "GRPC" ? grpcUrl(urlText) : undefined
  if (address !== undefined && Either.isRight(address)) return checkGrpcAddress(ctx, address.right, urlText, path)
  const url = parseUrl(urlText)
  // relay reaches every interface over http(s), so an ftp:// URL is unusable whatever the binding says.
  if (url === undefined || !isHttpUrl(url)) {
    ctx.report(
      "interface.url_invalid",
      path,
      `${JSON.stringify(urlText)} is not an absolute http(s) URL`,
      "Use an absolute URL such as https://agent.example.com/a2a/jsonrpc."
    )
    return
  }
  if (hasQueryOrFragment(url)) {
    ctx.report(
      "interface.url_query",
      path,
      `${JSON.stringify(urlText)} has a query or a fragment`,
      "Drop everything from ? or #: clients append operation paths to the interface URL, e.g. https://agent.example.com/a2a."
    )
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    ctx.report(
      "interface.url_insecure",
      path,
      `${JSON.stringify(urlText)} uses plain http on a non-loopback host`,
      "Use HTTPS: credentials and messages would otherwise travel in clear text."
    )
  }
}

export interface ParsedVersion {
  readonly major: number
  readonly minor: number
  readonly patch: number | undefined
}

export const parseProtocolVersion = (text: string): ParsedVersion | undefined => {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  return { major: Number(match[1]), minor: Number(match[2]), patch: match[3] === undefined ? undefined : Number(match[3]) }
}

export const checkInterfaceVersion = (ctx: Context, version: string, path: string): void => {
  const parsed = parseProtocolVersion(version)
  if (parsed === undefined) {
    ctx.report(
      "interface.protocol_version_invalid",
      path,
      `protocolVersion ${JSON.stringify(version)} is not Major.Minor`,
      "Write the version as \"1.0\" (or \"0.3\" for a v0.3 interface)."
    )
  } else if (parsed.patch !== undefined) {
    ctx.report(
      "interface.protocol_version_patch",
      path,
      `protocolVersion ${JSON.stringify(version)} has a patch number`,
      `Write "${parsed.major}.${parsed.minor}": clients negotiate on Major.Minor only.`
    )
  }
}
