/**
 * Errors of talking to an A2A agent. Each has a stable `code`, a `message` and a `hint`
 * (see errors.ts for the shape every door renders).
 */
import { Schema } from "effect"
import { a2aErrorByCode } from "../a2a/errors.js"
import { hostOfUrl, originOfUrl } from "../a2a/hosts.js"
import { leavingSavedTask } from "./errors.js"
import { act, type Action, type Hint, HintSchema } from "./hints.js"

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

/** An event stream the agent had started broke before its end (the agent was reached). */
export class StreamBroken extends Schema.TaggedError<StreamBroken>()("StreamBroken", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "stream_broken"
  override get message() {
    return `The event stream from ${this.url} broke before its end: ${this.reason}`
  }
  get hint() {
    return "What arrived is kept, and the task id is saved in the session: follow the task again to see how it ends."
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
  get hint(): Hint {
    return ["Run ", act("ValidateCard", { source: this.url }), " to see every problem with the card."]
  }
}

/**
 * A card file relay will not read (not a regular file, too large, missing, or where the door may
 * not read: MCP's roots and allowed directories): nothing of its content is shown.
 */
export class CardFileRefused extends Schema.TaggedError<CardFileRefused>()("CardFileRefused", {
  path: Schema.String,
  reason: Schema.String,
  /** Set when the file lies where the door may not read. */
  notAllowed: Schema.optional(Schema.Boolean)
}) {
  readonly code = "card_file_refused"
  override get message() {
    return `Cannot use ${this.path} as a card file: ${this.reason}`
  }
  get hint() {
    return this.notAllowed === true
      ? "Validate a card file inside one of the MCP client's roots, give the agent's URL instead, or ask the user to " +
        "let relay mcp read the directory that holds it."
      : "Give the path of a regular file holding an agent card as JSON."
  }
}

/** The agent answered with an A2A or JSON-RPC error. */
export class ProtocolError extends Schema.TaggedError<ProtocolError>()("ProtocolError", {
  /** The JSON-RPC / A2A error code (-32001 …), or the HTTP status for REST errors without one. */
  a2aCode: Schema.Number,
  /** The ErrorInfo reason, e.g. TASK_NOT_FOUND, when the agent gave or implied one. */
  reason: Schema.optional(Schema.String),
  detail: Schema.String,
  /** The agent, when the program that met the error knows it (hints name it). */
  agentUrl: Schema.optional(Schema.String)
}) {
  readonly code = "protocol_error"
  /** The A2A error's reason (TASK_NOT_FOUND, …): the one the agent gave, else the one its code stands for. */
  get a2aReason(): string | undefined {
    return this.reason ?? a2aErrorByCode(this.a2aCode)?.reason
  }
  override get message() {
    const name = a2aErrorByCode(this.a2aCode)?.name
    return `The agent returned ${name ?? `error ${this.a2aCode}`}${this.reason && !name ? ` (${this.reason})` : ""}: ${this.detail}`
  }
  get hint(): Hint {
    switch (this.a2aReason) {
      case "TASK_NOT_FOUND":
        return "Check the task id: the agent does not have that task (agents forget old tasks)."
      case "TASK_NOT_CANCELABLE":
        return ["The task already finished; ", act("GetTask", { agentUrl: this.agentUrl }), " shows its final state."]
      case "PUSH_NOTIFICATION_NOT_SUPPORTED":
        return [
          "This agent does not support push notifications; follow the task with ",
          act("GetTask", { agentUrl: this.agentUrl }),
          " instead."
        ]
      case "UNSUPPORTED_OPERATION":
        return "The agent does not offer this operation for this task (it may already be finished)."
      case "VERSION_NOT_SUPPORTED":
        return ["The agent does not speak this A2A version; choose another with ", act("PinInterface"), "."]
      default:
        return ["See the agent's documentation; ", act("ShowDetails"), " shows the raw exchange."]
    }
  }
}

/**
 * The agent does not have the task: it never had it, or forgot it (agents keep tasks for a while
 * only). The same `not_found` at every door, whichever binding and generation the agent answered in.
 */
export class TaskNotFound extends Schema.TaggedError<TaskNotFound>()("TaskNotFound", {
  agentUrl: Schema.String,
  taskId: Schema.String,
  /** The agent's own words. */
  detail: Schema.String,
  /** Whether the agent lists its tasks (A2A 1.0); relay lists none of an A2A 0.3 agent. */
  listable: Schema.Boolean,
  /** The task the agent's saved session holds, if any. */
  savedTaskId: Schema.optional(Schema.String)
}) {
  readonly code = "not_found"
  override get message() {
    return `The agent at ${this.agentUrl} does not have task ${this.taskId} (it answered: ${this.detail})`
  }
  get hint(): Hint {
    if (this.taskId === this.savedTaskId) return ["The agent no longer has the session's task. ", ...leavingSavedTask(this.agentUrl)]
    return ["Check the task id (the agent may have forgotten the task). ", ...findingTasks(this.agentUrl, this.listable, this.savedTaskId)]
  }
}

/**
 * Where to find a task id, in what the agent's generation allows: its list of tasks (A2A 1.0),
 * else the task the session saved (A2A 0.3 has no ListTasks, and relay refuses it there).
 */
export const findingTasks = (agentUrl: string, listable: boolean, savedTaskId: string | undefined): ReadonlyArray<string | Action> =>
  listable
    ? [act("ListTasks", { agentUrl }), " lists the agent's tasks."]
    : savedTaskId !== undefined
    ? ["The session's last task: ", act("GetTask", { agentUrl, taskId: savedTaskId }), " (an A2A 0.3 agent does not list its tasks)."]
    : ["An A2A 0.3 agent does not list its tasks: use the task id it gave when the task started."]

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
  get hint(): Hint {
    return ["Check the agent URL; ", act("ShowDetails"), " shows the raw exchange."]
  }
}

/** Which limit ran out: one HTTP request, a stream's silence, or the whole wait of a call. */
export const TimeoutLimit = Schema.Literal("request", "stream-idle", "wait")

/** The agent did not answer in time. */
export class RequestTimeout extends Schema.TaggedError<RequestTimeout>()("RequestTimeout", {
  url: Schema.String,
  after: Schema.String,
  limit: Schema.optionalWith(TimeoutLimit, { default: () => "request" })
}) {
  readonly code = "timeout"
  override get message() {
    return `The agent at ${this.url} did not answer within ${this.after}`
  }
  get hint(): Hint {
    switch (this.limit) {
      case "stream-idle":
        return ["The stream was silent that long; allow longer silences with ", act("RaiseStreamIdleTimeout"), "."]
      case "wait":
        return ["Check that the agent is running and answers, or wait longer with ", act("RaiseWait"), "."]
      case "request":
        return ["Check that the agent is not stuck, or allow slower answers with ", act("RaiseRequestTimeout"), "."]
    }
  }
}

/**
 * Which credentials went with the refused request: none, the ones given for this call, the saved
 * ones, or none because the saved ones belong to another origin than the one that refused.
 */
export const CredentialsSent = Schema.Literal("none", "given", "saved", "withheld")

/** The agent wants credentials (HTTP 401/403). */
export class AuthRequired extends Schema.TaggedError<AuthRequired>()("AuthRequired", {
  url: Schema.String,
  agentUrl: Schema.String,
  status: Schema.Number,
  challenge: Schema.optional(Schema.String),
  credentials: CredentialsSent,
  /** The agent's card declares OAuth relay can log in with (and the flow it offers, if one). */
  oauthLogin: Schema.optional(Schema.Struct({ flow: Schema.optional(Schema.String) }))
}) {
  readonly code = "auth_required"
  override get message() {
    return this.credentials === "given" || this.credentials === "saved"
      ? `The agent at ${this.url} rejected the ${
        this.credentials === "given" ? "credentials given" : "saved credentials"
      } (HTTP ${this.status})`
      : `The agent at ${this.url} requires authentication (HTTP ${this.status}${this.challenge ? `, ${this.challenge}` : ""})`
  }
  /** The origin the card routed the request to, when it is not the one addressed (a gRPC port, another host). */
  private get interfaceOrigin(): string | undefined {
    const [at, addressed] = [originOfUrl(this.url), originOfUrl(this.agentUrl)]
    return at !== undefined && at !== addressed ? at : undefined
  }
  get hint(): Hint {
    const origin = this.interfaceOrigin
    switch (this.credentials) {
      case "withheld":
        return [
          `The card routes requests to ${this.url}, another origin than ${this.agentUrl}, and credentials are only sent ` +
          "to the origin you addressed: save credentials for that origin with ",
          act("SaveCredentials", { agentUrl: origin ?? this.url }),
          ", or, if you trust it with these, allow them with ",
          act("AllowCrossOriginCredentials"),
          "."
        ]
      case "given":
        return "Check the bearer token or API key given with this call: the agent refused it."
      case "saved":
        return this.oauthLogin === undefined || origin !== undefined
          ? ["The saved credentials were refused; save new ones with ", act("SaveCredentials", { agentUrl: origin ?? this.agentUrl }), "."]
          : ["The saved credentials were refused; the agent's card declares OAuth: log in with ", this.loginAction(), "."]
      case "none":
        if (origin !== undefined) {
          return [
            `The card routes requests to ${origin}, another origin than ${this.agentUrl}: save credentials for it with `,
            act("SaveCredentials", { agentUrl: origin }),
            "."
          ]
        }
        return this.oauthLogin === undefined
          ? [
            "Save credentials with ",
            act("SaveCredentials", { agentUrl: this.agentUrl }),
            ", or give them with ",
            act("GiveCredentials"),
            "."
          ]
          : ["The agent's card declares OAuth: log in with ", this.loginAction(), "."]
    }
  }
  private loginAction() {
    return act("Login", { agentUrl: this.agentUrl, flow: this.oauthLogin?.flow })
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
  get hint(): Hint {
    return [
      "The agent may speak another A2A version than its card says; ",
      act("ValidateCard", { source: this.url }),
      " checks the card, and ",
      act("ShowDetails"),
      " shows the raw exchange."
    ]
  }
}

/** The operation is not available with this agent (capability off, or not in its protocol version). */
export class UnsupportedOperation extends Schema.TaggedError<UnsupportedOperation>()("UnsupportedOperation", {
  operation: Schema.String,
  reason: Schema.String,
  agentUrl: Schema.optional(Schema.String),
  /** What works instead, when the program that met the refusal knows. */
  instead: Schema.optional(HintSchema)
}) {
  readonly code = "unsupported_operation"
  override get message() {
    return `${this.operation} is not available: ${this.reason}`
  }
  get hint(): Hint {
    if (this.instead !== undefined) return this.instead
    return this.agentUrl === undefined
      ? "The agent's card lists what it supports."
      : [act("GetCard", { agentUrl: this.agentUrl }), " shows what the agent supports."]
  }
}

/** The card offers no interface relay can use (with the binding or version pinned, if any). */
export class NoUsableInterface extends Schema.TaggedError<NoUsableInterface>()("NoUsableInterface", {
  url: Schema.String,
  offered: Schema.Array(Schema.String),
  pinned: Schema.Boolean
}) {
  readonly code = "no_usable_interface"
  override get message() {
    return `The agent card at ${this.url} offers no interface relay can use${this.pinned ? " with the pinned binding/version" : ""} ` +
      `(the card offers ${this.offered.join(", ") || "none"}; relay speaks JSONRPC, HTTP+JSON and GRPC at 1.0 and 0.3)`
  }
  get hint(): Hint {
    return this.pinned
      ? ["Pin what the card offers: ", act("PinInterface", { offered: this.offered }), ", or drop the pin."]
      : ["The agent speaks no protocol relay knows; ", act("ValidateCard", { source: this.url }), " lists every problem with the card."]
  }
}

/**
 * The card routes requests to an interface whose host relay does not use: on another origin than the
 * card and outside the card's class of address (a public card pointing at loopback, private,
 * link-local or metadata addresses), judged when connecting. Nothing was sent there.
 */
export class InterfaceHostRefused extends Schema.TaggedError<InterfaceHostRefused>()("InterfaceHostRefused", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "interface_host_refused"
  override get message() {
    // The reason names the rule (a card's interfaces, an answer's files, a catalog's cards).
    return `relay sent nothing to ${this.url}: ${this.reason}`
  }
  get hint(): Hint {
    return ["If you trust that host, allow it with ", act("AllowInterfaceHost", { host: hostOfUrl(this.url) ?? this.url }), "."]
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
  get hint(): Hint {
    return ["If you trust this agent, allow larger answers with ", act("RaiseResponseLimit"), "."]
  }
}

export type A2aClientError =
  | AgentUnreachable
  | StreamBroken
  | CardNotFound
  | InvalidCard
  | NoUsableInterface
  | ProtocolError
  | HttpError
  | RequestTimeout
  | AuthRequired
  | InvalidResponse
  | UnsupportedOperation
  | ResponseTooLarge
  | InterfaceHostRefused
