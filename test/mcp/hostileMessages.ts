/**
 * The fuzz corpus of the MCP doors: messages every transport must refuse with a JSON-RPC error
 * (or drop, for a notification) and then keep serving. Deep nesting, oversized lines, broken
 * envelopes and bytes that are not JSON at all. Shared by the stdio and HTTP suites.
 */
import { MAX_JSON_DEPTH, MAX_MCP_MESSAGE_BYTES } from "../../src/domain/limits.js"

export interface HostileMessage {
  readonly name: string
  /** One line for stdio (no newline inside), the body for HTTP. */
  readonly text: string
  /** The JSON-RPC error code of the answer. */
  readonly code: number
  /** The id the answer carries (null when it cannot be told). */
  readonly id: string | number | null
  /** The HTTP status of the answer. */
  readonly status: number
  /** Notifications are never answered on stdio (JSON-RPC 2.0 §4.1). */
  readonly answeredOnStdio: boolean
}

/** `[[[…]]]` nested `depth` levels. */
export const deepArray = (depth: number): string => `${"[".repeat(depth)}${"]".repeat(depth)}`

/** `{"a":{"a":…{}}}` nested `depth` levels. */
export const deepObject = (depth: number): string => `${"{\"a\":".repeat(depth - 1)}{}${"}".repeat(depth - 1)}`

/** A ping whose params hold `inner` (raw JSON text). */
const pingWith = (id: number | string, inner: string) =>
  `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"method":"ping","params":{"x":${inner}}}`

/** A tools/call with a padded argument, id last as the TypeScript SDK writes it. */
export const oversizedCall = (id: number, bytes: number) =>
  `{"method":"tools/call","params":{"name":"send_message","arguments":{"message":"${"x".repeat(bytes)}"}},"jsonrpc":"2.0","id":${id}}`

const OVER_LIMIT = MAX_MCP_MESSAGE_BYTES + 2 * 1024 * 1024

export const HOSTILE_MESSAGES: ReadonlyArray<HostileMessage> = [
  { name: "not JSON", text: "{not json", code: -32700, id: null, status: 400, answeredOnStdio: true },
  {
    name: "truncated JSON",
    text: "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"ping\"",
    code: -32700,
    id: null,
    status: 400,
    answeredOnStdio: true
  },
  { name: "a JSON scalar", text: "42", code: -32600, id: null, status: 400, answeredOnStdio: true },
  { name: "an empty batch", text: "[]", code: -32600, id: null, status: 400, answeredOnStdio: true },
  {
    name: "JSON-RPC 1.0",
    text: "{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}",
    code: -32600,
    id: 3,
    status: 400,
    answeredOnStdio: true
  },
  {
    name: "a method that is not a string",
    text: "{\"jsonrpc\":\"2.0\",\"id\":\"m\",\"method\":7}",
    code: -32600,
    id: "m",
    status: 400,
    answeredOnStdio: true
  },
  {
    name: `arrays ${MAX_JSON_DEPTH + 10} deep`,
    text: pingWith(11, deepArray(MAX_JSON_DEPTH + 10)),
    code: -32602,
    id: 11,
    status: 400,
    answeredOnStdio: true
  },
  { name: "arrays 100 000 deep", text: pingWith(12, deepArray(100_000)), code: -32602, id: 12, status: 400, answeredOnStdio: true },
  {
    name: "objects 20 000 deep",
    text: pingWith("deep-objects", deepObject(20_000)),
    code: -32602,
    id: "deep-objects",
    status: 400,
    answeredOnStdio: true
  },
  {
    name: "a deep notification",
    text: `{"jsonrpc":"2.0","method":"notifications/progress","params":{"x":${deepArray(5000)}}}`,
    code: -32602,
    id: null,
    status: 400,
    answeredOnStdio: false
  },
  {
    name: "a 12 MB call, id last",
    text: oversizedCall(13, OVER_LIMIT),
    code: -32600,
    id: 13,
    status: 413,
    answeredOnStdio: true
  },
  {
    name: "a 12 MB call, id first",
    text: `{"jsonrpc":"2.0","id":"big-first","method":"ping","params":{"pad":"${"y".repeat(OVER_LIMIT)}"}}`,
    code: -32600,
    id: "big-first",
    status: 413,
    answeredOnStdio: true
  }
]

/** Whether a text carries a stack trace or an absolute path of this machine. */
export const leaksInternals = (text: string): boolean =>
  /\n\s+at |node_modules|\/work\/|\/home\/|\/tmp\/|[A-Za-z]+\.(?:ts|js):\d+/.test(text)
