/**
 * Errors that cross a boundary (terminal output, MCP results, A2A error responses).
 *
 * Every one carries a stable snake_case `code`, a human `message` and a `hint`
 * that says what to do next; doors render those three and nothing else.
 */
import { Schema } from "effect"
import { act, type Action, type Hint, HintSchema } from "./hints.js"

/** What every boundary error exposes; doors render errors through this shape. */
export interface Described {
  readonly code: string
  readonly message: string
  /** Words, or words and actions each door names in its own vocabulary (hints.ts). */
  readonly hint: Hint
}

/** The agent URL given by the user is not an absolute http(s) URL. */
export class InvalidAgentUrl extends Schema.TaggedError<InvalidAgentUrl>()("InvalidAgentUrl", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "invalid_agent_url"
  override get message() {
    return `Invalid agent URL "${this.url}": ${this.reason}`
  }
  get hint() {
    return "Give the agent's base URL with its scheme, for example http://127.0.0.1:8000"
  }
}

/** Arguments that make no sense together or are missing. */
export class InvalidInput extends Schema.TaggedError<InvalidInput>()("InvalidInput", {
  reason: Schema.String,
  suggestion: HintSchema
}) {
  readonly code = "invalid_input"
  override get message() {
    return this.reason
  }
  get hint() {
    return this.suggestion
  }
}

/** An environment variable relay reads (RELAY_HOME, XDG_STATE_HOME, HOME) cannot be used as it is set. */
export class InvalidEnvironment extends Schema.TaggedError<InvalidEnvironment>()("InvalidEnvironment", {
  reason: Schema.String
}) {
  readonly code = "invalid_environment"
  override get message() {
    return `The environment cannot be read: ${this.reason}`
  }
  get hint() {
    return "RELAY_HOME, XDG_STATE_HOME and HOME, when set, each name a directory; fix or unset the one named above."
  }
}

/** Something the user asked for does not exist (not a usage error: the input was well formed). */
export class NotFound extends Schema.TaggedError<NotFound>()("NotFound", {
  what: Schema.String,
  suggestion: HintSchema
}) {
  readonly code = "not_found"
  override get message() {
    return `${this.what} was not found`
  }
  get hint() {
    return this.suggestion
  }
}

/** The state file exists but is not a valid session store; it was moved aside, never overwritten. */
export class StateFileCorrupt extends Schema.TaggedError<StateFileCorrupt>()("StateFileCorrupt", {
  file: Schema.String,
  movedTo: Schema.String,
  reason: Schema.String
}) {
  readonly code = "state_file_corrupt"
  override get message() {
    return `The session store ${this.file} is damaged (${this.reason}); it was moved to ${this.movedTo}`
  }
  get hint() {
    return [
      `Inspect or delete ${this.movedTo}. The next command starts with an empty store; saved credentials must be saved again with `,
      act("SaveCredentials"),
      "."
    ]
  }
}

/** The state directory or file cannot be read or written (permissions, disk, lock). */
export class StateFileUnavailable extends Schema.TaggedError<StateFileUnavailable>()("StateFileUnavailable", {
  file: Schema.String,
  operation: Schema.String,
  reason: Schema.String
}) {
  readonly code = "state_file_unavailable"
  override get message() {
    return `Cannot ${this.operation} ${this.file}: ${this.reason}`
  }
  get hint() {
    return "Check the permissions of the state directory and the free space on its disk, or point RELAY_HOME at a writable directory."
  }
}

/** The state file was written by a newer relay with a format this one does not know. */
export class StateFileTooNew extends Schema.TaggedError<StateFileTooNew>()("StateFileTooNew", {
  file: Schema.String,
  version: Schema.Number
}) {
  readonly code = "state_file_too_new"
  override get message() {
    return `${this.file} has format version ${this.version}, newer than this relay understands`
  }
  get hint() {
    return "Upgrade relay, or point RELAY_HOME at another directory."
  }
}

/** A local server (agent, webhook receiver, MCP over HTTP) could not bind its address. */
export class ListenFailed extends Schema.TaggedError<ListenFailed>()("ListenFailed", {
  host: Schema.String,
  port: Schema.Number,
  reason: Schema.String
}) {
  readonly code = "listen_failed"
  override get message() {
    return `Cannot listen on ${this.host}:${this.port}: ${this.reason}`
  }
  get hint() {
    return "Choose another --port (0 picks a free one) or stop the program that uses this one."
  }

  /** From whatever a failed bind produced (the platform wraps node's error in a cause). */
  static fromCause(host: string, port: number, error: unknown): ListenFailed {
    const cause = typeof error === "object" && error !== null && "cause" in error ? error.cause : error
    return new ListenFailed({ host, port, reason: cause instanceof Error ? cause.message : String(cause) })
  }
}

/**
 * An MCP client left answers unread past relay's bound, and read nothing (or too little to be
 * reading: `readBytes` against `minReadBytes`) for a while; its session was closed.
 */
export class McpClientNotReading extends Schema.TaggedError<McpClientNotReading>()("McpClientNotReading", {
  unreadBytes: Schema.Number,
  maxBytes: Schema.Number,
  stalledMs: Schema.Number,
  /** What it read in that time, on any of its streams. */
  readBytes: Schema.Number,
  /** What a client behind must read in that time to count as reading. */
  minReadBytes: Schema.Number
}) {
  readonly code = "mcp_client_not_reading"
  override get message() {
    const seconds = this.stalledMs / 1000
    const read = this.readBytes === 0
      ? `read nothing for ${seconds} s`
      : `read only ${this.readBytes} bytes in ${seconds} s (a client behind must read ${this.minReadBytes})`
    return `The MCP client left ${this.unreadBytes} bytes of answers unread (at most ${this.maxBytes} may wait) and ${read}; its session was closed`
  }
  get hint() {
    return "The MCP client must read relay's messages as they come: restart it, and ask for fewer or smaller answers at once."
  }
}

export type StoreError = StateFileCorrupt | StateFileUnavailable | StateFileTooNew

/** Narrowing for doors: anything with code, message and hint is rendered as-is. */
export const isDescribed = (u: unknown): u is Described =>
  typeof u === "object" && u !== null &&
  typeof (u as Described).code === "string" &&
  typeof (u as Described).message === "string" &&
  (typeof (u as Described).hint === "string" || Array.isArray((u as Described).hint))

/** The agent refused a message to the task the saved session continues (finished, or gone). */
export class SavedTaskRefused extends Schema.TaggedError<SavedTaskRefused>()("SavedTaskRefused", {
  agentUrl: Schema.String,
  taskId: Schema.String,
  detail: Schema.String
}) {
  readonly code = "saved_task_refused"
  override get message() {
    return `The agent at ${this.agentUrl} refused to continue the saved task ${this.taskId}: ${this.detail}`
  }
  get hint(): Hint {
    return leavingSavedTask(this.agentUrl)
  }
}

/** How to get past a saved task the agent will not continue: forget it, or start a new one. */
export const leavingSavedTask = (agentUrl: string): ReadonlyArray<string | Action> => [
  "Forget the saved task with ",
  act("ClearSession", { agentUrl }),
  ", or start a new one with ",
  act("SendNewMessage", { agentUrl }),
  "."
]

/** An MCP client's configuration file that relay cannot parse; it was left exactly as it was. */
export class ClientConfigUnparsable extends Schema.TaggedError<ClientConfigUnparsable>()("ClientConfigUnparsable", {
  file: Schema.String,
  reason: Schema.String
}) {
  readonly code = "client_config_unparsable"
  override get message() {
    return `Cannot parse ${this.file}: ${this.reason}; nothing was changed`
  }
  get hint() {
    return "Fix the file by hand (or move it aside), then run the command again."
  }
}

/** An MCP client's configuration file that cannot be read or written. */
export class ClientConfigUnavailable extends Schema.TaggedError<ClientConfigUnavailable>()("ClientConfigUnavailable", {
  file: Schema.String,
  operation: Schema.String,
  reason: Schema.String
}) {
  readonly code = "client_config_unavailable"
  override get message() {
    return `Cannot ${this.operation} ${this.file}: ${this.reason}`
  }
  get hint() {
    return "Check that the folder exists and that you may write to it."
  }
}
