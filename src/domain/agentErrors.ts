/**
 * Errors the local agent server answers with. One class carries any row of the A2A error table
 * (a2a/errors.ts): the doors turn it into a JSON-RPC error (code + ErrorInfo), a REST
 * google.rpc.Status (HTTP status + ErrorInfo) or a v0.3 error, so a program fails the same way
 * whichever binding or protocol version the caller spoke.
 */
import { Schema } from "effect"
import { A2A_ERRORS, type A2aErrorName, type ErrorSpec, JSON_RPC_ERRORS, type JsonRpcErrorName } from "../a2a/errors.js"

export type AgentErrorKind = A2aErrorName | JsonRpcErrorName

const SPECS: Readonly<Record<AgentErrorKind, ErrorSpec>> = { ...A2A_ERRORS, ...JSON_RPC_ERRORS }

const HINTS: Readonly<Record<AgentErrorKind, string>> = {
  TaskNotFound: "Check the task id; the server keeps tasks in memory only, so a restart forgets them.",
  TaskNotCancelable: "The task already finished; only submitted, working or input-required tasks can be canceled.",
  PushNotificationNotSupported: "This agent does not send push notifications.",
  UnsupportedOperation: "Start a new task for a finished one; a working task takes more messages once it has answered those it holds.",
  ContentTypeNotSupported: "Send the body as application/json (or application/a2a+json).",
  InvalidAgentResponse: "The agent produced an answer it cannot encode; this is a bug in relay.",
  ExtendedAgentCardNotConfigured: "This agent has no extended card.",
  ExtensionSupportRequired: "Activate the required extension with the A2A-Extensions header.",
  VersionNotSupported: "Send A2A-Version: 1.0 (or 0.3, or none for 0.3) as the agent card declares.",
  ParseError: "Send a well-formed JSON body.",
  InvalidRequest: "Send a JSON-RPC 2.0 request object: jsonrpc \"2.0\", a method and an id.",
  MethodNotFound: "Use a method of the protocol version you send in A2A-Version (1.0: SendMessage, …; 0.3: message/send, …).",
  InvalidParams: "Check the request parameters against the A2A specification.",
  InternalError: "This is a bug in relay; the request may be retried."
}

const snakeCase = (name: string) => name.replace(/([a-z0-9])([A-Z])/g, "$1_$2").toLowerCase()

/** A request the agent server refuses or cannot serve; `kind` names the row of the A2A error table. */
export class AgentRequestError extends Schema.TaggedError<AgentRequestError>()("AgentRequestError", {
  kind: Schema.Literal(
    "TaskNotFound",
    "TaskNotCancelable",
    "PushNotificationNotSupported",
    "UnsupportedOperation",
    "ContentTypeNotSupported",
    "InvalidAgentResponse",
    "ExtendedAgentCardNotConfigured",
    "ExtensionSupportRequired",
    "VersionNotSupported",
    "ParseError",
    "InvalidRequest",
    "MethodNotFound",
    "InvalidParams",
    "InternalError"
  ),
  detail: Schema.String,
  /** Extra detail for the ErrorInfo `metadata` (e.g. the `field` a decoding error is about). */
  metadata: Schema.optional(Schema.Record({ key: Schema.String, value: Schema.String }))
}) {
  /** JSON-RPC code, HTTP status, gRPC status and ErrorInfo reason of this error. */
  get spec(): ErrorSpec {
    return SPECS[this.kind]
  }
  get code() {
    return snakeCase(this.kind)
  }
  override get message() {
    return this.detail
  }
  get hint() {
    return HINTS[this.kind]
  }
}

const failure = (kind: AgentErrorKind) => (detail: string) => new AgentRequestError({ kind, detail })

/** A request's value as an error message echoes it: a hostile long one is cut (an answer need not echo megabytes). */
export const shown = (value: string) => (value.length > 128 ? `${value.slice(0, 64)}… (${value.length} characters)` : value)

export const taskNotFound = (taskId: string) => failure("TaskNotFound")(`Task ${shown(taskId)} not found`)
export const invalidParams = failure("InvalidParams")

/** Invalid params from a decoding problem: its sentence, and the field it names in the metadata. */
export const invalidParamsAt = (problem: { readonly field: string; readonly message: string }) =>
  new AgentRequestError({
    kind: "InvalidParams",
    detail: problem.message,
    ...(problem.field === "" ? {} : { metadata: { field: problem.field } })
  })
export const unsupportedOperation = failure("UnsupportedOperation")
export const taskNotCancelable = failure("TaskNotCancelable")
export const internalError = failure("InternalError")
export const parseError = failure("ParseError")
export const invalidRequest = failure("InvalidRequest")
export const methodNotFound = failure("MethodNotFound")
export const versionNotSupported = failure("VersionNotSupported")
export const contentTypeNotSupported = failure("ContentTypeNotSupported")
