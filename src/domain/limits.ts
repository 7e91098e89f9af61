/**
 * The limits every door enforces on what it accepts, in one place (README: Reliability).
 * A value is checked where it enters (HTTP body, MCP message, file, agent answer), before it
 * is parsed further or stored, so nothing accepted can later break a read.
 */

/** Largest request body the agent server accepts (413 above it). */
export const MAX_AGENT_BODY_BYTES = 10 * 1024 * 1024

/** Largest notification body the webhook receiver accepts (413 above it). */
export const MAX_PUSH_BODY_BYTES = 1024 * 1024

/** Largest MCP message, on every transport (stdio and HTTP alike). */
export const MAX_MCP_MESSAGE_BYTES = 10 * 1024 * 1024

/** Largest non-streaming answer (card, JSON-RPC or REST body) the client reads from an agent. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

/** Largest card file `card validate --file` reads. */
export const MAX_CARD_FILE_BYTES = 10 * 1024 * 1024

/**
 * Deepest nesting of JSON accepted anywhere (objects and arrays, counted from the body's root).
 * A2A messages nest a handful of levels; metadata and data parts rarely go past ten.
 */
export const MAX_JSON_DEPTH = 64

/**
 * Whether a parsed JSON value nests deeper than `maxDepth` (the root object or array is level 1).
 * Iterative, so a hostile value cannot exhaust the stack while being checked.
 */
export const exceedsJsonDepth = (value: unknown, maxDepth: number = MAX_JSON_DEPTH): boolean => {
  if (typeof value !== "object" || value === null) return false
  const pending: Array<[unknown, number]> = [[value, 1]]
  while (pending.length > 0) {
    const [current, depth] = pending.pop()!
    if (depth > maxDepth) return true
    for (const child of Array.isArray(current) ? current : Object.values(current as object)) {
      if (typeof child === "object" && child !== null) pending.push([child, depth + 1])
    }
  }
  return false
}

/**
 * Deepest nesting kept as JSON by the stores (the agent's tasks, the notification log). Doors
 * refuse anything deeper than MAX_JSON_DEPTH, so only a bug gets here; a value this deep is
 * repaired (tasks) or kept as text (notifications) rather than stored, because serialising it
 * again could exhaust the stack (JSON.stringify overflows at a few thousand levels).
 */
export const MAX_STORED_JSON_DEPTH = 512

/**
 * A copy of `value` in which every object or array deeper than `maxDepth` is replaced by null
 * (the root is level 1). Iterative, like exceedsJsonDepth.
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
