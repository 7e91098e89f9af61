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

/** Largest answer the client reads from an agent: a card, a JSON-RPC or REST body, one stream event. */
export const MAX_RESPONSE_BYTES = 10 * 1024 * 1024

/** Largest card file `card validate --file` reads. */
export const MAX_CARD_FILE_BYTES = 10 * 1024 * 1024

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
