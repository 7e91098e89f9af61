/**
 * The limits every door enforces on what it accepts, in one place (README: Reliability).
 * A value is checked where it enters (HTTP body, MCP message, file, agent answer), before it
 * is parsed further or stored, so nothing accepted can later break a read.
 */

/** Largest request body the agent server accepts (413 above it). */
export const MAX_AGENT_BODY_BYTES = 10 * 1024 * 1024

/** Largest notification body the webhook receiver accepts (413 above it). */
export const MAX_PUSH_BODY_BYTES = 1024 * 1024

/**
 * How long a client of relay's HTTP servers may take to send a request's headers, and the whole
 * request (body included); a slower one is cut with 408, so slow clients cannot hold sockets.
 * Answers (SSE streams included) are not bounded by these.
 */
export const CLIENT_TIMEOUTS = { headersMs: 10_000, requestMs: 30_000 } as const
export type ClientTimeouts = { readonly headersMs: number; readonly requestMs: number }

/** Largest MCP message, on every transport (stdio and HTTP alike). */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024

/**
 * Open MCP sessions on an HTTP transport; opening one more closes the least recently used (its
 * client gets 404 and initializes again), so clients that never end their sessions cannot grow
 * the server without bound.
 */
export const MAX_MCP_HTTP_SESSIONS = 32

/**
 * Events a streamable HTTP session keeps for clients resuming a lost stream: at most this many
 * bytes (the newest kept; an event larger than this is not kept).
 */
export const MAX_MCP_STORED_EVENT_BYTES = 4 * 1024 * 1024

/**
 * One MCP client's pace (stdio, or one HTTP session; mcp/backpressure.ts): requests handled at
 * once, bytes of answers that may wait unread besides one answer (past them no request starts
 * until the client reads), and how long a client that is behind may read nothing before it is
 * cut off (its session closed; on stdio, the server exits).
 */
export const MCP_CLIENT_PACE = { maxInFlight: 16, maxBytes: 32 * 1024 * 1024, stallMs: 10_000 } as const

/**
 * How long `relay mcp` on stdio still works on the requests it read once stdin ends (a script that
 * pipes its requests in gets their answers); past it, it exits with them unanswered. MCP clients
 * that close stdin to stop the server send SIGTERM if it has not exited within a while.
 */
export const MCP_STDIN_END_GRACE_MS = 30_000

/**
 * What an MCP tool result carries inline of an answer's files (mcp/answerContent.ts): images and
 * audio up to 5 MiB each, text files up to 256 KiB, at most 8 MiB in all as sent (base64 for
 * media, under the 10 MiB message cap), at most 100 blocks; past them a file is a resource_link.
 */
export const MCP_ANSWER_CONTENT = {
  mediaBytes: 5 * 1024 * 1024,
  textBytes: 256 * 1024,
  inlineBytes: 8 * 1024 * 1024,
  blocks: 100
} as const

/** Cards the A2A client keeps in memory, and the most card JSON they may add up to (least recently used go first). */
export const MAX_CACHED_CARDS = 100
export const MAX_CACHED_CARD_BYTES = 16 * 1024 * 1024

/** Largest non-streaming answer (card, JSON-RPC or REST body) the client reads from an agent. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

/** Largest answer read from an authorization server (discovery, token, device and revocation endpoints). */
export const MAX_OAUTH_RESPONSE_BYTES = 1024 * 1024

/**
 * Largest answer the client keeps for one task or message (`--max-answer-bytes`): its artifacts,
 * status message and history, however many events they came in (each event is also bounded by
 * MAX_RESPONSE_BYTES). Past it relay stops reading and keeps what it had (see answerFold.ts).
 */
export const MAX_ANSWER_BYTES = 32 * 1024 * 1024

/**
 * Files of one answer saved to disk; past it the rest are listed, not saved: an answer of tens of
 * thousands of tiny files would otherwise hold the process while it fills a folder.
 */
export const MAX_SAVED_FILES_PER_ANSWER = 10_000

/** Largest card file `card validate --file` reads. */
export const MAX_CARD_FILE_BYTES = 10 * 1024 * 1024

/**
 * What the store keeps of a named agent's card (`relay agent add`), and so what `relay agent list`
 * and `list_agents` show: the first 64 skills (the rest counted), descriptions and short texts cut,
 * lists (tags, modes) of at most 16 items. Whatever the card, its summary stays under ~350 KB
 * (a typical card's is a few hundred bytes).
 */
export const CARD_SUMMARY_LIMITS = {
  skills: 64,
  descriptionChars: 1000,
  skillDescriptionChars: 500,
  shortChars: 100,
  listItems: 16
} as const

/** A2A entries of an AI catalog `relay agent discover` reads (the rest are counted, not fetched). */
export const MAX_CATALOG_AGENTS = 100

/**
 * Deepest nesting of JSON accepted anywhere (objects and arrays, counted from the body's root).
 * A2A messages nest a handful of levels; metadata and data parts rarely go past ten.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Deepest nesting of JSON written by agents (answers, events, cards) that the client reads. An
 * answer wraps what a door accepted (MAX_JSON_DEPTH) in its own envelope (result, task, history,
 * message), so it gets headroom; still far below the few thousand levels where JSON.stringify
 * overflows the stack.
 */
export const MAX_AGENT_JSON_DEPTH = 2 * MAX_JSON_DEPTH

/** Whether `value` (an object or array) holds a container `levelsLeft` levels below it. */
const nestsBelow = (value: object, levelsLeft: number): boolean => {
  if (levelsLeft === 0) return true
  if (Array.isArray(value)) {
    for (const child of value as Array<unknown>) {
      if (typeof child === "object" && child !== null && nestsBelow(child, levelsLeft - 1)) return true
    }
    return false
  }
  for (const key in value) {
    const child: unknown = (value as Record<string, unknown>)[key]
    if (typeof child === "object" && child !== null && nestsBelow(child, levelsLeft - 1)) return true
  }
  return false
}

/**
 * Whether a parsed JSON value nests deeper than `maxDepth` (the root object or array is level 1).
 * The walk never goes below `maxDepth` levels, so a hostile value cannot exhaust the stack while
 * being checked (keep `maxDepth` in the hundreds); it allocates nothing, which keeps the check
 * on every request cheap (bench/README.md).
 */
export const exceedsJsonDepth = (value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean =>
  typeof value === "object" && value !== null && nestsBelow(value, maxDepth)

/**
 * Deepest nesting kept as JSON by the stores (the agent's tasks, the notification log). Doors
 * refuse anything deeper than MAX_JSON_DEPTH, so only a bug gets here; a value this deep is
 * repaired (tasks) or kept as text (notifications) rather than stored, because serialising it
 * again could exhaust the stack (JSON.stringify overflows at a few thousand levels).
 */
export const MAX_STORED_JSON_DEPTH = 512

/**
 * A copy of `value` in which every object or array deeper than `maxDepth` is replaced by null
 * (the root is level 1). Iterative, so depth cannot exhaust the stack.
 */
export const cutBelowDepth = (value: unknown, maxDepth: number): unknown => {
  if (typeof value !== "object" || value === null) return value
  const copyOf = (node: object): Record<string, unknown> | Array<unknown> => (Array.isArray(node) ? [] : {})
  const root = copyOf(value)
  const pending: Array<[object, Record<string, unknown> | Array<unknown>, number]> = [[value, root, 1]]
  while (pending.length > 0) {
    const [source, target, depth] = pending.pop()!
    for (const [key, child] of Object.entries(source)) {
      let copied: unknown = child
      if (typeof child === "object" && child !== null) {
        if (depth >= maxDepth) copied = null
        else {
          copied = copyOf(child)
          pending.push([child, copied as Record<string, unknown>, depth + 1])
        }
      }
      // defineProperty: a "__proto__" key stays a plain key, as JSON.parse made it.
      Object.defineProperty(target, key, { value: copied, enumerable: true, writable: true, configurable: true })
    }
  }
  return root
}

/** Longest id (task, context, message, push config) the agent server takes: ids are map keys and are echoed in answers and logs. */
export const MAX_ID_CHARS = 1024

/**
 * Longest id in UTF-8 bytes: a PostgreSQL store keys its indexes by ids (a btree entry holds at most
 * 2704 bytes), and 1024 characters of CJK text are 3072. Every store refuses such an id alike.
 */
export const MAX_ID_BYTES = 2048

/**
 * Messages the agent server holds for a task that is still working, to handle after its current
 * turn, in order (each up to the request body limit); one more is refused with UnsupportedOperation.
 */
export const MAX_QUEUED_MESSAGES = 10

/**
 * Parts one message to the agent server may have (text, files, data): each is stored, answered
 * and, streamed, sent as an event of its own, so ten thousand tiny parts cost far more than their bytes.
 */
export const MAX_MESSAGE_PARTS = 1000

/** Longest push notification URL the agent server stores. */
export const MAX_URL_CHARS = 8192

/**
 * A refused (unauthenticated) JSON-RPC call is read only this far, and only this long, to answer
 * its 401 with the request's id; a bigger or slower body is answered with id null.
 */
export const MAX_UNAUTHENTICATED_BODY_BYTES = 64 * 1024
export const MAX_UNAUTHENTICATED_BODY_WAIT_MS = 500

/**
 * A ListTasks page stops growing once its tasks take this many bytes of JSON (it always holds
 * at least one), so a page fits in a client's MAX_RESPONSE_BYTES with room for the envelope.
 */
export const MAX_TASK_PAGE_BYTES = 8 * 1024 * 1024
