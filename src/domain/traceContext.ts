/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/) that a caller hands relay, e.g. an MCP
 * request's `_meta` `traceparent` and `tracestate`: forwarded as HTTP headers on the requests made
 * to agents on the caller's behalf, so one trace crosses the bridge. Only well-formed values pass:
 * they become headers, and a header must never carry what a caller smuggled into it.
 */
import { Effect, FiberRef } from "effect"

/** The headers of a trace context, by their (lower-case) names; empty when there is none. */
export type TraceHeaders = Readonly<Record<string, string>>

// version-traceid-parentid-flags in lower-case hex; version ff and all-zero ids are invalid (§3.2.2).
const TRACEPARENT = /^(?!ff)[0-9a-f]{2}-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/
/** §3.3.1.1: at most 32 list members of at most 256 characters each; printable ASCII, no control characters. */
const MAX_TRACESTATE_LENGTH = 32 * 257
const TRACESTATE = /^[\x20-\x7e]*$/

const stringAt = (record: unknown, key: string): string | undefined => {
  if (typeof record !== "object" || record === null) return undefined
  const value: unknown = (record as Record<string, unknown>)[key]
  return typeof value === "string" ? value : undefined
}

/**
 * The trace headers in `meta` (`traceparent`, with `tracestate` only beside a valid one, as §3.3
 * asks); none when `traceparent` is missing or malformed.
 */
export const traceHeadersOf = (meta: unknown): TraceHeaders => {
  const traceparent = stringAt(meta, "traceparent")?.trim()
  if (traceparent === undefined || !TRACEPARENT.test(traceparent)) return {}
  const tracestate = stringAt(meta, "tracestate")?.trim()
  const stateFits = tracestate !== undefined && tracestate !== "" && tracestate.length <= MAX_TRACESTATE_LENGTH &&
    TRACESTATE.test(tracestate)
  return stateFits ? { traceparent, tracestate } : { traceparent }
}

/** The trace context of the work a fiber does for its caller (none by default); forked fibers inherit it. */
export const currentTraceHeaders: FiberRef.FiberRef<TraceHeaders> = FiberRef.unsafeMake<TraceHeaders>({})

/** Runs `effect` with `headers` sent on every request to an agent it makes. */
export const withTraceHeaders = (headers: TraceHeaders) => <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Object.keys(headers).length === 0 ? effect : Effect.locally(effect, currentTraceHeaders, headers)
