/**
 * Turning a program's outcome into an MCP tool result: structured content matching the tool's
 * outputSchema plus a short text summary on success; `isError: true` with the stable error code,
 * message and hint on failure (no structuredContent, which the client would validate against the
 * outputSchema). Defects never escape as rejected promises, and secrets never come back.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Cause, Effect, Option } from "effect"
import { type Described, isDescribed } from "../domain/errors.js"

export const ERROR_META_KEY = "a2a-relay/error"

export const successResult = (structured: object, summary: string): CallToolResult => ({
  content: [{ type: "text", text: summary }],
  structuredContent: structured as Record<string, unknown>
})

// ---------------------------------------------------------------------------
// Hints: the programs' hints name terminal commands and flags; an assistant needs tool names.

const CLI_TO_TOOLS: ReadonlyArray<readonly [RegExp, string]> = [
  [/relay auth set --url (\S+) --bearer-token <TOKEN> \(or --api-key <KEY>\)/g,
    "set_agent_credentials (agent_url $1, bearer_token or api_key), or pass bearer_token / api_key in this call, then retry"],
  [/Try another protocol version with --protocol \S+ or --protocol \S+\./g,
    "The agent may speak an A2A version relay cannot use here; validate_agent_card shows what its card declares."],
  [/The agent may speak another A2A version; try --protocol \S+ or --protocol \S+\./g,
    "The agent may speak an A2A version relay cannot use here; validate_agent_card shows what its card declares."],
  [/Raise the limit with --timeout, or check that the agent is not stuck\./g,
    "Retry later; for a long task call wait_for_task with its task id (get_session_info shows the last one)."],
  [/Check the agent URL and binding \(--binding jsonrpc\|rest\), or run with --verbose\./g,
    "Check the agent URL; validate_agent_card shows the interfaces its card declares."],
  [/If you trust this agent, raise the limit with --max-response-bytes\./g,
    "The answer is larger than the MCP server reads; a relay terminal command with a higher max-response-bytes option can read it."],
  [/run with --verbose for the raw exchange/g, "see the relay MCP server log (stderr)"],
  [/Run again with --verbose for details\./g, "The relay MCP server log (stderr) has details."],
  [/"?relay auth set"?/g, "set_agent_credentials"],
  [/relay card get --url <agent>/g, "get_agent_card"],
  [/relay card validate (\S+)/g, "validate_agent_card (source $1)"],
  [/relay task list/g, "list_tasks"],
  [/relay task get/g, "get_task"]
]

/** A hint in the words of the MCP tools instead of the terminal commands. */
export const forAssistant = (hint: string): string =>
  CLI_TO_TOOLS.reduce((text, [pattern, replacement]) => text.replace(pattern, replacement), hint)
    // Whatever flag is left names a tool parameter: --page-size → page_size.
    .replace(/--([a-z][a-z-]*)/g, (_match, flag: string) => flag.replaceAll("-", "_"))

/** `http://user:secret@host` → `http://***@host`: a URL given with credentials must not echo them. */
const withoutUrlCredentials = (text: string) => text.replace(/(\/\/)[^/\s@"]+@/g, "$1***@")

export const errorResult = (error: Described): CallToolResult => {
  const described = { code: error.code, message: withoutUrlCredentials(error.message), hint: forAssistant(error.hint) }
  return {
    isError: true,
    content: [{ type: "text", text: `Error [${described.code}]: ${described.message}\nHint: ${described.hint}` }],
    _meta: { [ERROR_META_KEY]: described }
  }
}

// ---------------------------------------------------------------------------
// Secrets: whatever a call passed as a secret is cut out of its result, whatever produced it.

/** Shorter values could match ordinary text; the programs never echo secrets anyway. */
const MIN_SCRUBBED_LENGTH = 6
const REDACTED = "[redacted]"

const scrub = (value: unknown, secrets: ReadonlyArray<string>): unknown => {
  if (typeof value === "string") return secrets.reduce((text, secret) => text.replaceAll(secret, REDACTED), value)
  if (Array.isArray(value)) return value.map((item) => scrub(item, secrets))
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, inner]) => [key, scrub(inner, secrets)]))
  }
  return value
}

/** The result with every occurrence of the given secrets replaced. */
export const withoutSecrets = (result: CallToolResult, secrets: ReadonlyArray<string | undefined>): CallToolResult => {
  const present = secrets.filter((secret): secret is string => secret !== undefined && secret.length >= MIN_SCRUBBED_LENGTH)
  return present.length === 0 ? result : (scrub(result, present) as CallToolResult)
}

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

/**
 * The SDK answers some failures itself, before or after our handler: arguments that do not
 * match the input schema, unknown tools, output that does not match the output schema. These get
 * a stable code and a hint like our own failures.
 */
export const describeSdkFailure = (message: string): Described => {
  if (message.includes("Input validation error")) {
    return {
      code: "invalid_arguments",
      message,
      hint: "Check the arguments against the tool's inputSchema (tools/list shows it) and call again."
    }
  }
  if (/Tool \S+ not found/.test(message)) {
    return { code: "unknown_tool", message, hint: "tools/list shows the tools a2a-relay offers." }
  }
  return { code: "internal_error", message, hint: "This is a bug in a2a-relay; the server log (stderr) has details." }
}
