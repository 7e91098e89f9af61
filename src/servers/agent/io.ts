/**
 * Reading JSON requests at the agent server's doors; the exchange itself (body, answers) is
 * ../exchange.ts.
 */
import { Either } from "effect"
import { type AgentRequestError, parseError } from "../../domain/agentErrors.js"
import type { BodyLimits, BodyRead } from "../exchange.js"

/** Largest request body accepted; bigger ones get 413. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
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

/** Media types a JSON body may be declared as (a missing Content-Type is let through). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  if (contentType === undefined || contentType.trim() === "") return true
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  return mediaType === "application/json" || mediaType.endsWith("+json")
}
