/**
 * Turning a program's outcome into an MCP tool result: structured content matching the tool's
 * outputSchema plus a short text summary on success; `isError: true` with the stable error code,
 * message and hint on failure (no structuredContent, which the client would validate against the
 * outputSchema). Defects never escape as rejected promises.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Option } from "effect"
import { type Described, isDescribed } from "../domain/errors.js"

export const ERROR_META_KEY = "a2a-relay/error"

export const successResult = (structured: object, summary: string): CallToolResult => ({
  content: [{ type: "text", text: summary }],
  structuredContent: structured as Record<string, unknown>
})

export const errorResult = (error: Described): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `Error [${error.code}]: ${error.message}\nHint: ${error.hint}` }],
  _meta: { [ERROR_META_KEY]: { code: error.code, message: error.message, hint: error.hint } }
})

const describeCause = (cause: Cause.Cause<unknown>): Described => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure) && isDescribed(failure.value)) return failure.value
  if (Cause.isInterruptedOnly(cause)) {
    return { code: "cancelled", message: "The call was cancelled", hint: "Call the tool again if you still need the result." }
  }
  const squashed = Cause.squash(cause)
  return {
    code: "internal_error",
    message: squashed instanceof Error ? squashed.message : String(squashed),
    hint: "This is a bug in a2a-relay; the server log (stderr) has details."
  }
}

/** Runs to a tool result whatever happens; unexpected failures are logged to stderr. */
export const toToolResult = <A extends object, E, R>(
  program: Effect.Effect<A, E, R>,
  summarize: (result: A) => string
): Effect.Effect<CallToolResult, never, R> =>
  program.pipe(
    Effect.map((result) => successResult(result, summarize(result))),
    Effect.catchAllCause((cause) => {
      const described = describeCause(cause)
      const log = described.code === "internal_error" ? Effect.logError("Tool failed", cause) : Effect.logDebug(described.message)
      return Effect.as(log, errorResult(described))
    })
  )
