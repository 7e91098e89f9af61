/**
 * Turning a program's outcome into an MCP tool result: structured content matching the tool's
 * outputSchema plus a short text summary on success; `isError: true` with the stable error code,
 * message and hint (in the words of the tools, hints.ts) on failure (no structuredContent, which the client would validate against the
 * outputSchema). Defects never escape as rejected promises, and secrets never come back.
 */
import type { CallToolResult, ContentBlock } from "@modelcontextprotocol/server"
import { Cause, Effect, Option } from "effect"
import { answerTooLarge } from "../domain/answerFold.js"
import { type Described, isDescribed } from "../domain/errors.js"
import { scrubSecrets } from "../domain/secrets.js"
import { assistantHint } from "./hints.js"

export const ERROR_META_KEY = "a2a-relay/error"

/** The summary first, then any content of the result's own (answerContent.ts: the answer's files and data). */
export const successResult = (structured: object, summary: string, more: ReadonlyArray<ContentBlock> = []): CallToolResult => ({
  content: [{ type: "text", text: summary }, ...more],
  structuredContent: structured as Record<string, unknown>
})

/** `http://user:secret@host` → `http://***@host`: a URL given with credentials must not echo them. */
const withoutUrlCredentials = (text: string) => text.replace(/(\/\/)[^/\s@"]+@/g, "$1***@")

export const errorResult = (error: Described): CallToolResult => {
  const described = { code: error.code, message: withoutUrlCredentials(error.message), hint: assistantHint(error.hint) }
  return {
    isError: true,
    content: [{ type: "text", text: `Error [${described.code}]: ${described.message}\nHint: ${described.hint}` }],
    _meta: { [ERROR_META_KEY]: described }
  }
}

/**
 * An answer cut at relay's limit for a whole answer is a failure (response_too_large) that still
 * carries what was kept: the error's text, then the summary, and the result (`truncated: true`)
 * as structured content, which matches the tool's outputSchema.
 */
const cutResult = (cut: Described, structured: object, summary: string, more: ReadonlyArray<ContentBlock>): CallToolResult => {
  const error = errorResult(cut)
  return {
    ...error,
    content: [...error.content, { type: "text", text: summary }, ...more],
    structuredContent: structured as Record<string, unknown>
  }
}

// ---------------------------------------------------------------------------
// Secrets: whatever a call passed as a secret is cut out of its result, whatever produced it.

const REDACTED = "[redacted]"

/**
 * Whether `key` of `holder` is a file's bytes in base64 (an image's or audio's `data`, a resource's
 * `blob`): a secret the file holds is encoded there, never as typed, and a chance match replaced
 * would corrupt the file.
 */
const isBase64Bytes = (holder: object, key: string) =>
  key === "blob" || (key === "data" && "type" in holder && (holder.type === "image" || holder.type === "audio"))

/** MCP versions whose content has no `resource_link` (it came in 2025-06-18), and no `audio` (2025-03-26). */
const BEFORE_RESOURCE_LINKS = new Set(["2024-11-05", "2025-03-26"])
const BEFORE_AUDIO = "2024-11-05"

/** A block a client of that MCP version knows: a link as a line saying where the file is, audio as a line saying it was saved. */
const knownTo = (version: string) => (block: ContentBlock): ContentBlock => {
  if (block.type === "resource_link") {
    const facts = [block.mimeType, block.size === undefined ? undefined : `${block.size} bytes`, block.description]
      .filter((fact) => fact !== undefined)
    return { type: "text", text: `[file ${block.name}: ${block.uri}${facts.length === 0 ? "" : ` (${facts.join(", ")})`}]` }
  }
  if (block.type === "audio" && version === BEFORE_AUDIO) {
    return { type: "text", text: `[audio (${block.mimeType}): saved, see structuredContent.parts; MCP ${version} has no audio content]` }
  }
  return block
}

/**
 * The result in the content types of the MCP version the client negotiated: a client of an older
 * one (2024-11-05, 2025-03-26) that checks a result's content against its own schema would refuse
 * the whole result for one block of a type it does not know.
 */
export const forProtocolVersion = (result: CallToolResult, version: string | undefined): CallToolResult =>
  version === undefined || !BEFORE_RESOURCE_LINKS.has(version) ? result : { ...result, content: result.content.map(knownTo(version)) }

/** The result with every occurrence of the given secrets replaced. */
export const withoutSecrets = (result: CallToolResult, secrets: ReadonlyArray<string | undefined>): CallToolResult =>
  scrubSecrets(result, secrets, { shown: () => REDACTED, keep: isBase64Bytes }) as CallToolResult

// ---------------------------------------------------------------------------

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

/** Content a result adds after its summary (the answer's files and data); none by default. */
export type ContentOf<A, R> = (result: A) => Effect.Effect<ReadonlyArray<ContentBlock>, never, R>

const noContent: ContentOf<unknown, never> = () => Effect.succeed([])

/** Runs to a tool result whatever happens; unexpected failures are logged to stderr. */
export const toToolResult = <A extends object, E extends Described, R, R2 = never>(
  program: Effect.Effect<A, E, R>,
  summarize: (result: A) => string,
  contentOf: ContentOf<A, R2> = noContent
): Effect.Effect<CallToolResult, never, R | R2> =>
  program.pipe(
    Effect.flatMap((result) =>
      Effect.map(contentOf(result), (more) => {
        const cut = answerTooLarge(result)
        return cut === undefined ? successResult(result, summarize(result), more) : cutResult(cut, result, summarize(result), more)
      })
    ),
    Effect.catchAllCause((cause) => {
      const described = describeCause(cause)
      const log = described.code === "internal_error" ? Effect.logError("Tool failed", cause) : Effect.logDebug(described.message)
      return Effect.as(log, errorResult(described))
    })
  )

/**
 * The SDK answers some failures itself, before or after our handler: arguments that do not
 * match the input schema, output that does not match the output schema (an unknown tool is a
 * JSON-RPC error, as the specification says). These get a stable code and a hint like our own
 * failures.
 */
export const describeSdkFailure = (message: string): Described => {
  if (message.includes("Input validation error")) {
    return {
      code: "invalid_arguments",
      message,
      hint: "Check the arguments against the tool's inputSchema (tools/list shows it) and call again."
    }
  }
  return { code: "internal_error", message, hint: "This is a bug in a2a-relay; the server log (stderr) has details." }
}
