/**
 * Errors of talking to an A2A agent. Each has a stable `code`, a `message` and a `hint`
 * (see errors.ts for the shape every door renders).
 */
import { Schema } from "effect"
import { a2aErrorByCode } from "./a2a/errors.js"

/** Nothing answered at the agent's address (refused, DNS, reset). */
export class AgentUnreachable extends Schema.TaggedError<AgentUnreachable>()("AgentUnreachable", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "agent_unreachable"
  override get message() {
    return `Cannot reach the agent at ${this.url}: ${this.reason}`
  }
  get hint() {
    return "Check that the agent is running and the URL (scheme, host, port) is right."
  }
}

/** Neither well-known card path (nor an explicit card URL) gave a card. */
export class CardNotFound extends Schema.TaggedError<CardNotFound>()("CardNotFound", {
  url: Schema.String,
  tried: Schema.Array(Schema.String)
}) {
  readonly code = "card_not_found"
  override get message() {
    return `No agent card found for ${this.url} (tried ${this.tried.join(", ")})`
  }
  get hint() {
    return "Give the agent's base URL, or the full URL of its card file."
  }
}

/** A card was found but cannot be used (not JSON, wrong shape, no usable interface). */
export class InvalidCard extends Schema.TaggedError<InvalidCard>()("InvalidCard", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "invalid_card"
  override get message() {
    return `The agent card at ${this.url} cannot be used: ${this.reason}`
  }
  get hint() {
    return `Run "relay card validate ${this.url}" to see every problem with the card.`
  }
}

/** A card file relay will not read (not a regular file, too large, missing): nothing of its content is shown. */
export class CardFileRefused extends Schema.TaggedError<CardFileRefused>()("CardFileRefused", {
  path: Schema.String,
  reason: Schema.String
}) {
  readonly code = "card_file_refused"
  override get message() {
    return `Cannot use ${this.path} as a card file: ${this.reason}`
  }
  get hint() {
    return "Give the path of a regular file holding an agent card as JSON."
  }
}

/** The agent answered with an A2A or JSON-RPC error. */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  /** The JSON-RPC / A2A error code (-32001 …), or the HTTP status for REST errors without one. */
  a2aCode: Schema.Number,
  /** The ErrorInfo reason, e.g. TASK_NOT_FOUND, when the agent gave or implied one. */
  reason: Schema.optional(Schema.String),
  detail: Schema.String
}) {
  readonly code = "protocol_error"
  override get message() {
    const name = a2aErrorByCode(this.a2aCode)?.name
    return `The agent returned ${name ?? `error ${this.a2aCode}`}${this.reason && !name ? ` (${this.reason})` : ""}: ${this.detail}`
  }
  get hint() {
    switch (this.reason ?? a2aErrorByCode(this.a2aCode)?.reason) {
      case "TASK_NOT_FOUND":
        return "Check the task id; relay task list shows the agent's tasks."
      case "TASK_NOT_CANCELABLE":
        return "The task already finished; relay task get shows its final state."
      case "PUSH_NOTIFICATION_NOT_SUPPORTED":
        return "This agent does not support push notifications; poll with relay task get instead."
      case "UNSUPPORTED_OPERATION":
        return "The agent does not offer this operation for this task (it may already be finished)."
      case "VERSION_NOT_SUPPORTED":
        return "Try another protocol version with --protocol 1.0 or --protocol 0.3."
      default:
        return "See the agent's documentation, or run with --verbose for the raw exchange."
    }
  }
}

/** An HTTP answer that is neither a result nor an A2A error. */
export class HttpError extends Schema.TaggedError<HttpError>()("HttpError", {
  url: Schema.String,
  status: Schema.Number,
  body: Schema.String
}) {
  readonly code = "http_error"
  override get message() {
    return `HTTP ${this.status} from ${this.url}${this.body ? `: ${this.body}` : ""}`
  }
  get hint() {
    return "Check the agent URL and binding (--binding jsonrpc|rest), or run with --verbose."
  }
}

/** The agent did not answer in time. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  url: Schema.String,
  after: Schema.String
}) {
  readonly code = "timeout"
  override get message() {
    return `The agent at ${this.url} did not answer within ${this.after}`
  }
  get hint() {
    return "Raise the limit with --timeout, or check that the agent is not stuck."
  }
}

/** The agent wants credentials (HTTP 401/403). */
export class AuthRequired extends Schema.TaggedError<AuthRequired>()("AuthRequired", {
  url: Schema.String,
  agentUrl: Schema.String,
  status: Schema.Number,
  challenge: Schema.optional(Schema.String),
  hadCredentials: Schema.Boolean
}) {
  readonly code = "auth_required"
  override get message() {
    return this.hadCredentials
      ? `The agent at ${this.url} rejected the credentials (HTTP ${this.status})`
      : `The agent at ${this.url} requires authentication (HTTP ${this.status}${this.challenge ? `, ${this.challenge}` : ""})`
  }
  get hint() {
    return `Save credentials with: relay auth set --url ${this.agentUrl} --bearer-token <TOKEN> (or --api-key <KEY>)`
  }
}

/** The agent answered something that is not A2A (bad JSON, wrong shape, wrong JSON-RPC id). */
export class InvalidResponse extends Schema.TaggedError<InvalidResponse>()("InvalidResponse", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "invalid_response"
  override get message() {
    return `The agent at ${this.url} sent an invalid response: ${this.reason}`
  }
  get hint() {
    return "The agent may speak another A2A version; try --protocol 0.3 or --protocol 1.0."
  }
}

/** The operation is not available with this agent (capability off, or not in its protocol version). */
export class UnsupportedOperation extends Schema.TaggedError<UnsupportedOperation>()("UnsupportedOperation", {
  operation: Schema.String,
  reason: Schema.String
}) {
  readonly code = "unsupported_operation"
  override get message() {
    return `${this.operation} is not available: ${this.reason}`
  }
  get hint() {
    return "relay card get --url <agent> shows what the agent supports."
  }
}

/** The agent's answer (card, JSON-RPC or REST body) is larger than relay reads; reading stopped at the limit. */
export class ResponseTooLarge extends Schema.TaggedError<ResponseTooLarge>()("ResponseTooLarge", {
  url: Schema.String,
  limit: Schema.Number,
  /** The size the agent announced in Content-Length, when it did. */
  declared: Schema.optional(Schema.Number)
}) {
  readonly code = "response_too_large"
  override get message() {
    const size = this.declared === undefined ? "" : ` (${this.declared} bytes)`
    return `The agent at ${this.url} sent an answer over the ${this.limit}-byte limit${size}; relay stopped reading it`
  }
  get hint() {
    return "If you trust this agent, raise the limit with --max-response-bytes."
  }
}

export type A2aClientError =
  | AgentUnreachable
  | CardNotFound
  | InvalidCard
  | ProtocolError
  | HttpError
  | RequestTimeout
  | AuthRequired
  | InvalidResponse
  | UnsupportedOperation
  | ResponseTooLarge
