/**
 * What a tool knows of the call it answers besides its arguments, in the terms of no MCP era:
 * how it may ask the user (a form to fill, a page to open) and the caller's trace context. The
 * server that took the call builds it: `legacyToolCall` for the 2025-11-25 era (the capabilities
 * the client declared at initialize, `elicitation/create` requests on the call's own stream),
 * `modernToolCall` for 2026-07-28 (no server-to-client requests); both take W3C trace context from
 * the request's `_meta`. A tool only sees this interface.
 */
import type { ElicitRequestFormParams, ElicitRequestURLParams, McpServer } from "@modelcontextprotocol/server"
import { Duration, Effect, FiberRef } from "effect"
import { type TraceHeaders, traceHeadersOf } from "../domain/traceContext.js"
import type { ToolExtra } from "./progress.js"

/** One field of a form: the flat JSON Schema subset MCP clients render (no nesting). */
export type FormField =
  | {
    readonly type: "string"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly enum?: ReadonlyArray<string> | undefined
    readonly format?: "email" | "uri" | "date" | "date-time" | undefined
    readonly minLength?: number | undefined
    readonly maxLength?: number | undefined
  }
  | {
    readonly type: "number" | "integer"
    readonly title?: string | undefined
    readonly description?: string | undefined
    readonly minimum?: number | undefined
    readonly maximum?: number | undefined
  }
  | { readonly type: "boolean"; readonly title?: string | undefined; readonly description?: string | undefined }

export interface FormRequest {
  /** What the user is asked, shown above the fields. */
  readonly message: string
  readonly fields: Readonly<Record<string, FormField>>
  readonly required: ReadonlyArray<string>
}

/** The user's answer; decline and cancel (or no answer at all) leave the question open. */
export type FormReply =
  | { readonly action: "accept"; readonly content: Readonly<Record<string, unknown>> }
  | { readonly action: "decline" | "cancel" }

export interface UrlRequest {
  /** Why the user should open the page. */
  readonly message: string
  readonly url: string
  /** Names this interaction, so the client can be told when it is over. */
  readonly id: string
}

/** How a tool may reach the user; a member is missing when the client cannot do it. */
export interface UserPrompt {
  readonly askForm?: ((request: FormRequest) => Effect.Effect<FormReply>) | undefined
  /** Offers a page to open; "accept" means the user went to it, nothing more. */
  readonly openUrl?: ((request: UrlRequest) => Effect.Effect<"accept" | "decline" | "cancel">) | undefined
  /** Tells the client the interaction `openUrl` began is complete. */
  readonly urlDone?: ((id: string) => Effect.Effect<void>) | undefined
}

export interface ToolCall {
  readonly user: UserPrompt
  /** traceparent and tracestate to forward to agents (none when the caller sent none). */
  readonly trace: TraceHeaders
}

/** The user the tool call being run may ask (toolKit.ts `handle` sets it); nobody by default. */
export const currentUser: FiberRef.FiberRef<UserPrompt> = FiberRef.unsafeMake<UserPrompt>({})

/** A call that can ask nobody and carries no trace: what tests and programs without a client get. */
export const NO_CALL: ToolCall = { user: {}, trace: {} }

/** How long a person may take over a form or a page before the question is left open. */
export const ASK_TIMEOUT = Duration.minutes(10)

/** The modes a client's `elicitation` capability offers; an empty one means form (2025-06-18 clients). */
export const elicitationModes = (elicitation: object | undefined) => {
  if (elicitation === undefined) return { form: false, url: false }
  const declared = elicitation as { readonly form?: object; readonly url?: object }
  return { form: declared.form !== undefined || declared.url === undefined, url: declared.url !== undefined }
}

/** An `elicitation/create` on the call's own stream; no answer in time, or a failed one, counts as cancel. */
const elicit = (extra: ToolExtra, params: ElicitRequestFormParams | ElicitRequestURLParams) =>
  Effect.tryPromise((signal) =>
    // The SDK deprecates elicitInput for 2026-07-28 requests only; this is the 2025-11-25 path.
    extra.mcpReq.elicitInput(params, { signal, timeout: Duration.toMillis(ASK_TIMEOUT) })
  ).pipe(
    Effect.tapError((error) => Effect.logDebug(`The client did not answer elicitation/create: ${String(error.error)}`)),
    Effect.orElseSucceed(() => ({ action: "cancel" as const, content: undefined }))
  )

/** The 2025-11-25 era's call: elicitation as the client declared it at initialize, trace context from `_meta`. */
export const legacyToolCall = (server: McpServer, extra: ToolExtra): ToolCall => {
  const modes = elicitationModes(server.server.getClientCapabilities()?.elicitation)
  const askForm = (request: FormRequest) =>
    Effect.map(
      elicit(extra, {
        mode: "form",
        message: request.message,
        requestedSchema: { type: "object", properties: request.fields, required: [...request.required] }
      } as ElicitRequestFormParams),
      (reply): FormReply => reply.action === "accept" ? { action: "accept", content: reply.content ?? {} } : { action: reply.action }
    )
  const openUrl = (request: UrlRequest) =>
    Effect.map(
      elicit(extra, { mode: "url", message: request.message, url: request.url, elicitationId: request.id }),
      (reply) => reply.action
    )
  const urlDone = (id: string) =>
    Effect.promise(() =>
      extra.mcpReq.notify({ method: "notifications/elicitation/complete", params: { elicitationId: id } })
        .catch(() => undefined)
    )
  return {
    trace: traceHeadersOf(extra.mcpReq._meta),
    user: modes.url ? { ...(modes.form ? { askForm } : {}), openUrl, urlDone } : modes.form ? { askForm } : {}
  }
}

/**
 * The 2026-07-28 era's call: trace context from `_meta`; the user is reached through the
 * `input_required` results of the tool itself, not from inside a running program.
 */
export const modernToolCall = (extra: ToolExtra): ToolCall => ({ user: {}, trace: traceHeadersOf(extra.mcpReq._meta) })
