/**
 * Which A2A protocol version a request speaks: the `A2A-Version` header, else the query
 * parameter of that name. Only Major.Minor counts. A missing version means 0.3 (the spec's
 * rule), except where only 1.0 can be meant (see the JSON-RPC and REST doors).
 */
import type { IncomingHttpHeaders } from "node:http"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import { headerValue } from "../exchange.js"

export type VersionRequest =
  | { readonly _tag: "Missing" }
  | { readonly _tag: "Supported"; readonly generation: ProtocolVersion }
  | { readonly _tag: "Unsupported"; readonly version: string }

const queryVersion = (url: string): string | undefined => {
  const query = url.indexOf("?")
  if (query < 0) return undefined
  for (const [name, value] of new URLSearchParams(url.slice(query + 1))) {
    if (name.toLowerCase() === "a2a-version") return value
  }
  return undefined
}

/** The version as sent, trimmed; undefined when neither the header nor the query names one. */
export const requestedVersion = (headers: IncomingHttpHeaders, url: string): string | undefined => {
  const sent = (headerValue(headers, "a2a-version") ?? queryVersion(url))?.trim()
  return sent === undefined || sent === "" ? undefined : sent
}

// Made once: every request has one of these.
const MISSING: VersionRequest = { _tag: "Missing" }
const SPEAKS_1_0: VersionRequest = { _tag: "Supported", generation: "1.0" }
const SPEAKS_0_3: VersionRequest = { _tag: "Supported", generation: "0.3" }

/** "1", "1.0", "1.0.1" → 1.0; "0.3", "0.3.0" → 0.3; anything else is unsupported. */
export const versionRequest = (headers: IncomingHttpHeaders, url: string): VersionRequest => {
  const sent = requestedVersion(headers, url)
  if (sent === undefined) return MISSING
  // The spelling nearly every client sends, taken without splitting.
  if (sent === "1.0") return SPEAKS_1_0
  const [major, minor = "0"] = sent.split(".")
  if (major === "1" && minor === "0") return SPEAKS_1_0
  if (major === "0" && minor === "3") return SPEAKS_0_3
  return { _tag: "Unsupported", version: sent }
}
