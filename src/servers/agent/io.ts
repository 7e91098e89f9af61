/**
 * Reading JSON requests at the agent server's doors; the exchange itself (body, answers) is
 * ../exchange.ts.
 */
import { Either, Predicate } from "effect"
import { type AgentRequestError, internalError, invalidParams, parseError } from "../../domain/agentErrors.js"
import { exceedsJsonDepth, MAX_AGENT_BODY_BYTES, MAX_JSON_DEPTH } from "../../domain/limits.js"
import type { BodyLimits, BodyRead } from "../exchange.js"

/** Largest request body accepted; bigger ones get 413. */
export const DEFAULT_MAX_BODY_BYTES = MAX_AGENT_BODY_BYTES
/** Past this many times the limit an oversized upload is cut off instead of drained for a polite 413. */
const DRAIN_FACTOR = 4

export const bodyLimits = (maxBytes: number): BodyLimits => ({ maxBytes, cutOffBytes: maxBytes * DRAIN_FACTOR })

/**
 * The body as JSON, or the -32700 parse error; REST bodies may be empty (`{}`), JSON-RPC ones
 * may not. A body that was not read counts as empty.
 */
export const parseJsonBody = (
  body: Extract<BodyRead, { readonly _tag: "Complete" | "Skipped" }>,
  allowEmpty: boolean
): Either.Either<unknown, AgentRequestError> => {
  const text = body._tag === "Complete" ? body.bytes.toString("utf8") : ""
  if (allowEmpty && text.trim() === "") return Either.right({})
  try {
    return Either.right(JSON.parse(text))
  } catch (error) {
    return Either.left(parseError(`Parse error: ${error instanceof Error ? error.message : "invalid JSON"}`))
  }
}

/**
 * The -32602 / 400 error of a body nested deeper than MAX_JSON_DEPTH (counted from its root),
 * checked before the body is decoded, so nothing that deep is ever stored or answered back.
 */
export const nestingProblem = (body: unknown): AgentRequestError | undefined =>
  exceedsJsonDepth(body)
    ? invalidParams(`The request nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels; flatten its metadata or data`)
    : undefined

/** The id of a JSON-RPC request whose body was read, when it has a valid one; null otherwise. */
/** A JSON-RPC request id: a string, a number, or null. */
export type RequestId = string | number | null

export const isRequestId = (u: unknown): u is RequestId => typeof u === "string" || typeof u === "number" || u === null

export const requestIdIn = (body: BodyRead): RequestId => {
  if (body._tag !== "Complete") return null
  try {
    const parsed: unknown = JSON.parse(body.bytes.toString("utf8"))
    const id = Predicate.isRecord(parsed) ? parsed["id"] : null
    return isRequestId(id) ? id : null
  } catch {
    return null
  }
}

/** Media types a JSON body may be declared as (a missing Content-Type is let through). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  // The type nearly every client sends, taken without splitting (this runs twice a request).
  if (contentType === undefined || contentType === "application/json") return true
  if (contentType.trim() === "") return true
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  return mediaType === "application/json" || mediaType.endsWith("+json")
}

/** The error a defect (a bug) is answered with: what happened stays in the server's log. */
export const unexpectedFailure = (): AgentRequestError =>
  internalError("Internal error: the request failed unexpectedly (see the server's log)")
