/**
 * What every MCP transport (stdio and HTTP alike) accepts: a JSON-RPC 2.0 message of at most
 * MAX_MCP_MESSAGE_BYTES that nests at most MAX_JSON_DEPTH levels. Anything else is answered with
 * a JSON-RPC error (JSON-RPC 2.0 §5.1 codes) before it reaches the MCP server, so no message can
 * wedge a transport or blow a stack further in.
 */
import { type JSONRPCMessage, parseJSONRPCMessage, type RequestId } from "@modelcontextprotocol/server"
import { Predicate } from "effect"
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../domain/limits.js"

export const PARSE_ERROR = -32700
export const INVALID_REQUEST = -32600
export const INVALID_PARAMS = -32602

/** A JSON-RPC error answer; `id` is null when the request's id cannot be told (JSON-RPC 2.0 §5). */
export interface ErrorAnswer {
  readonly jsonrpc: "2.0"
  readonly id: RequestId | null
  readonly error: { readonly code: number; readonly message: string }
}

export const errorAnswer = (code: number, message: string, id: RequestId | null = null): ErrorAnswer => ({
  jsonrpc: "2.0",
  id,
  error: { code, message }
})

/**
 * A message that passed the gate, or why it did not: `answer` is what the sender gets, unless the
 * refusal is `silent` (a notification or a response, which JSON-RPC never answers; over HTTP the
 * request gets it all the same), and `reason` is the log line.
 */
export type Admission =
  | { readonly _tag: "Accepted"; readonly message: JSONRPCMessage }
  | Refused

export interface Refused {
  readonly _tag: "Refused"
  readonly answer: ErrorAnswer
  readonly silent: boolean
  readonly reason: string
}

const isRequestId = (value: unknown): value is RequestId =>
  typeof value === "string" || (typeof value === "number" && Number.isSafeInteger(value))

/** The id of something shaped like a request, when it has a usable one. */
const idOf = (json: unknown): RequestId | null => Predicate.isRecord(json) && isRequestId(json["id"]) ? json["id"] : null

const refused = (answer: ErrorAnswer, silent = false): Refused => ({ _tag: "Refused", answer, silent, reason: answer.error.message })

/** One parsed JSON value: too deep first (checking the shape of a deep value could recurse), then the envelope. */
export const admitJson = (json: unknown): Admission => {
  const id = idOf(json)
  if (exceedsJsonDepth(json)) {
    // Only a request is answered: notifications and responses never are (JSON-RPC 2.0 §4.1, §5).
    const isRequest = Predicate.isRecord(json) && typeof json["method"] === "string" && id !== null
    return refused(errorAnswer(INVALID_PARAMS, `Invalid params: the message nests deeper than ${MAX_JSON_DEPTH} levels`, id), !isRequest)
  }
  try {
    return { _tag: "Accepted", message: parseJSONRPCMessage(json) }
  } catch {
    return refused(errorAnswer(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message", id))
  }
}

/** One line of text: JSON.parse, then admitJson. */
export const admitText = (text: string): Admission => {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    // Nothing of the text is echoed: it may be anything the client had in its buffer.
    return refused(errorAnswer(PARSE_ERROR, "Parse error: the message is not JSON"))
  }
  return admitJson(json)
}

/** A message over the size limit (of `bytes`, when known), answered to the id found in what was seen of it. */
export const oversized = (maxBytes: number, bytes: number | undefined, id: RequestId | null): Refused => {
  const size = bytes === undefined ? "" : `${bytes} bytes, `
  return refused(errorAnswer(INVALID_REQUEST, `Invalid Request: the message is ${size}over the ${maxBytes}-byte limit`, id))
}

/**
 * The id of a message too large to parse, from its first and last bytes: the id as the first
 * member (after "jsonrpc") or as the last one, the two places clients put it. Anywhere else, or
 * nested, does not count; then the answer goes to id null.
 */
const LEADING_ID = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*,/
const TRAILING_ID = /,\s*"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")\s*\}\s*$/

export const idAtEdges = (head: string, tail: string): RequestId | null => {
  const found = LEADING_ID.exec(head)?.[1] ?? TRAILING_ID.exec(tail)?.[1]
  if (found === undefined) return null
  try {
    const id: unknown = JSON.parse(found)
    return isRequestId(id) ? id : null
  } catch {
    return null
  }
}
