/**
 * What a tool knows of the call it answers besides its arguments, in the terms of no MCP era:
 * how it may ask the user (a form to fill, a page to open) and the caller's trace context. The
 * server that took the call builds it: `legacyToolCall` for the 2025-11-25 era (the capabilities
 * the client declared at initialize, `elicitation/create` requests on the call's own stream),
 * `modernToolCall` for 2026-07-28 (no server-to-client requests: a page is offered in the call's
 * own `input_required` result, and the client's retry of the call brings the user's reply); both
 * take W3C trace context from the request's `_meta`. A tool only sees this interface.
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type ElicitRequestFormParams,
  type ElicitRequestURLParams,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  type McpServer
} from "@modelcontextprotocol/server"
import { Deferred, Duration, Effect, FiberId, FiberRef } from "effect"
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

/** What the user did with a page offered: "accept" means they went to it, nothing more. */
export type PageReply = "accept" | "decline" | "cancel"

/**
 * Pages offered through the call's own result (2026-07-28): the call ends with the page (or with
 * a request to retry later), and the client's retry of the call brings the user's reply. What the
 * page is for must therefore go on without the call (assistantLogin.ts keeps its logins).
 */
export interface PageOffers {
  /**
   * The page this call (a retry) answers, and the user's reply to it: none on a first call, no
   * reply on a retry the client made later without one (`retryLater`).
   */
  readonly answered: { readonly id: string; readonly reply: PageReply | undefined } | undefined
  /** Ends the call offering the page; the retry's `answered` names `request.id`. */
  readonly offer: (request: UrlRequest) => Effect.Effect<never>
  /** Ends the call asking the client to retry it (the interaction of page `id` is not over yet). */
  readonly retryLater: (id: string) => Effect.Effect<never>
}

/** How a tool may reach the user; a member is missing when the client cannot do it. */
export interface UserPrompt {
  readonly askForm?: ((request: FormRequest) => Effect.Effect<FormReply>) | undefined
  /** Offers a page to open while the call waits (2025-11-25). */
  readonly openUrl?: ((request: UrlRequest) => Effect.Effect<PageReply>) | undefined
  /** Tells the client the interaction `openUrl` began is complete. */
  readonly urlDone?: ((id: string) => Effect.Effect<void>) | undefined
  /** Offers a page through the call's result (2026-07-28). */
  readonly pages?: PageOffers | undefined
}

export interface ToolCall {
  readonly user: UserPrompt
  /** traceparent and tracestate to forward to agents (none when the caller sent none). */
  readonly trace: TraceHeaders
  /** Settles when the call is to end with this `input_required` result instead of the tool's own (`pages`). */
  readonly endedAsking?: Deferred.Deferred<InputRequiredResult> | undefined
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

/** The key of a page offered in an `input_required` result, and the requestState that names it. */
const PAGE_KEY = "relay_page"
const pageIdOf = (requestState: unknown): string | undefined => {
  try {
    const state: unknown = typeof requestState === "string" ? JSON.parse(requestState) : undefined
    const page = typeof state === "object" && state !== null ? (state as { page?: unknown }).page : undefined
    return typeof page === "string" ? page : undefined
  } catch {
    return undefined
  }
}

/**
 * Pages offered through a 2026-07-28 call's result, when the request declared URL elicitation.
 * The requestState carries the page's id alone, an unguessable key to what relay keeps itself (a
 * tampered one names nothing: the call runs as a first call). A retry of another kind (a tool's
 * own question: agentQuestions.ts) gets none, so its own state is never replaced.
 */
const pageOffers = (extra: ToolExtra, endedAsking: Deferred.Deferred<InputRequiredResult>): PageOffers | undefined => {
  const envelope = extra.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined
  if (!elicitationModes(capabilities?.elicitation).url) return undefined
  const requestState = extra.mcpReq.requestState()
  const id = pageIdOf(requestState)
  if (requestState !== undefined && id === undefined) return undefined
  const response = inputResponse(extra.mcpReq.inputResponses, PAGE_KEY)
  const end = (result: InputRequiredResult) => Effect.zipRight(Deferred.succeed(endedAsking, result), Effect.never)
  return {
    answered: id === undefined ? undefined : { id, reply: response.kind === "elicit" ? response.action : undefined },
    offer: (request) =>
      end(inputRequired({
        inputRequests: {
          [PAGE_KEY]: { method: "elicitation/create", params: { mode: "url", message: request.message, url: request.url } }
          // The SDK types URL mode as 2025-11-25 has it (with elicitationId); 2026-07-28 has no such field.
        } as never,
        requestState: JSON.stringify({ page: request.id })
      })),
    // No input request: the client echoes the state alone and retries after a pause.
    retryLater: (pageId) => end(inputRequired({ requestState: JSON.stringify({ page: pageId }) }))
  }
}

/**
 * The 2026-07-28 era's call: trace context from `_meta`; the user is reached through the
 * `input_required` results of the tool itself, not from inside a running program: a tool's own
 * question (messageTools.ts), or a page offered here (`offerPages`: not for a task's steps,
 * whose task asks).
 */
export const modernToolCall = (extra: ToolExtra, offerPages = true): ToolCall => {
  const trace = traceHeadersOf(extra.mcpReq._meta)
  const endedAsking = Deferred.unsafeMake<InputRequiredResult>(FiberId.none)
  const pages = offerPages ? pageOffers(extra, endedAsking) : undefined
  return pages === undefined ? { user: {}, trace } : { user: { pages }, trace, endedAsking }
}
