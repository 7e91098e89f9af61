/**
 * Why files or data the user gave could not go with a message (programs/outgoingParts.ts). Each
 * is the user's to fix before anything is sent, so the terminal ends with a usage error (exit 2).
 */
import { Schema } from "effect"
import { act, type Hint } from "./hints.js"

/** A path that is no regular file relay can read: missing, unreadable, a directory, a device, a pipe. */
export class FileUnreadable extends Schema.TaggedError<FileUnreadable>()("FileUnreadable", {
  path: Schema.String,
  reason: Schema.String,
  /** What to do instead, when the reason calls for something other than a readable file. */
  suggestion: Schema.optional(Schema.String)
}) {
  readonly code = "file_unreadable"
  override get message() {
    return `Cannot send ${this.path}: ${this.reason}; nothing was sent`
  }
  get hint() {
    return this.suggestion ?? "Give the path of a regular file you can read."
  }
}

/** A path outside what the reader may read (MCP: the client's roots and the directories the user allowed). */
export class FileNotAllowed extends Schema.TaggedError<FileNotAllowed>()("FileNotAllowed", {
  path: Schema.String,
  reason: Schema.String
}) {
  readonly code = "file_not_allowed"
  override get message() {
    return `Not allowed to read ${this.path}: ${this.reason}; nothing was sent`
  }
  get hint() {
    // Only the user can widen what relay reads: an assistant's request must not reach other files.
    return "Send a file inside one of the MCP client's roots, give its content as content_base64, or ask the user to " +
      "start relay mcp with --allow-read DIR for the directory that holds it."
  }
}

/** A part that would take the encoded request past the request limit (`--max-request-bytes`). */
export class RequestTooLarge extends Schema.TaggedError<RequestTooLarge>()("RequestTooLarge", {
  /** What pushed it past: `The file report.pdf`, `The data`, `The text`. */
  what: Schema.String,
  /** Its own size (bytes on disk for a file). */
  size: Schema.Number,
  /** What the request would take with it, encoded. */
  requestBytes: Schema.Number,
  limit: Schema.Number,
  /** A file, which could go by URL instead. */
  isFile: Schema.Boolean
}) {
  readonly code = "request_too_large"
  override get message() {
    return `${this.what} (${this.size} bytes) would make the request ${this.requestBytes} bytes encoded, past the ` +
      `${this.limit}-byte limit; nothing was sent`
  }
  get hint(): Hint {
    return this.isFile
      ? [
        "Raise the limit with ",
        act("RaiseRequestLimit"),
        " if the agent takes larger requests, or send the file by reference: ",
        act("SendFileByUrl"),
        "."
      ]
      : ["Raise the limit with ", act("RaiseRequestLimit"), " if the agent takes larger requests."]
  }
}

export type OutgoingPartError = FileUnreadable | FileNotAllowed | RequestTooLarge
