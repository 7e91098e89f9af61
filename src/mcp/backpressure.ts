/**
 * One MCP client's pace, so a client that reads slowly or not at all cannot grow the server.
 *
 * - What is sent to the client goes through an outbox per stream (stdout, an HTTP response) that
 *   writes one slice at a time, the next once the stream has taken the last: what the client has
 *   not read yet waits here, counted, and each slice it takes shows that it reads.
 * - Unread bytes are measured against `maxBytes`, besides one message (the largest sent to this
 *   client, so a single answer always fits, however large). Past it the client is "behind".
 * - Requests are handled at most `maxInFlight` at a time, and none starts while the client is
 *   behind: they wait, in order, until it reads (stdio then stops reading stdin too). So what
 *   waits unread is at most `maxBytes` plus about one answer per request in flight.
 * - A client behind that reads nothing (less than MIN_PROGRESS_BYTES) for `stallMs` is cut off: its session is closed with a
 *   logged reason (on stdio, the server exits); the others go on.
 */
import {
  isJSONRPCErrorResponse,
  isJSONRPCNotification,
  isJSONRPCRequest,
  isJSONRPCResultResponse,
  type JSONRPCMessage,
  type MessageExtraInfo,
  type RequestId
} from "@modelcontextprotocol/server"
import { McpClientNotReading } from "../domain/errors.js"

export interface PaceLimits {
  /** Bytes that may wait unread besides one message before the client is behind. */
  readonly maxBytes: number
  /** How long a client that is behind may read nothing. */
  readonly stallMs: number
  /** Requests handled at once. */
  readonly maxInFlight: number
}

/** A stream to the client: stdout, an HTTP response. */
export interface Outlet {
  write(chunk: Uint8Array, done: (error?: Error | null) => void): unknown
  end(): unknown
  destroy(): unknown
  once(event: "close", listener: () => void): unknown
}

/** Sends bytes to one outlet at the client's pace. */
export interface Outbox {
  /** Queues one message. */
  readonly send: (bytes: Uint8Array) => void
  /** Ends the outlet once everything queued is written. */
  readonly end: () => void
}

export interface PaceHandlers {
  /** Hands a message to the MCP server. */
  readonly deliver: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void
  /** The client is cut off: close its session. */
  readonly cutOff: (reason: McpClientNotReading) => void
  /** Requests start or stop waiting (stdio reads no more of stdin meanwhile). */
  readonly holding?: ((held: boolean) => void) | undefined
}

export interface Backpressure {
  /** The outbox of an outlet, until the outlet closes. */
  readonly outbox: (outlet: Outlet) => Outbox
  /** A message the server sent: an answer frees its request's place. */
  readonly sent: (message: JSONRPCMessage) => void
  /** Takes a message from the client: a request waits its turn, anything else is delivered now. */
  readonly receive: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void
  /** Destroys the outlets still open (what they held unread is dropped) and drops waiting requests. */
  readonly dropAll: () => void
  /** Stops watching the client (its session ended). */
  readonly stop: () => void
  /** Calls `then` once no request is waiting or in flight (at once when none is). */
  readonly whenIdle: (then: () => void) => void
}

/** Most bytes handed to an outlet at once: small messages go together, a large one in several writes. */
const SLICE_BYTES = 1024 * 1024

/**
 * What a client that is behind must take in each stall period to count as reading (64 KiB, or a
 * sixteenth of the bound when that is less): the small messages a session's other streams still
 * take (a notification on a stream whose answer is not written yet) kept a client that read none
 * of its answers from ever being cut off.
 */
const MIN_PROGRESS_BYTES = 64 * 1024

const isAnswer = (message: JSONRPCMessage) => isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)

/** The request a `notifications/cancelled` names, if it is one. */
const cancelledRequest = (message: JSONRPCMessage): RequestId | undefined =>
  isJSONRPCNotification(message) && message.method === "notifications/cancelled"
    ? (message.params as { requestId?: RequestId } | undefined)?.requestId
    : undefined

/** Takes the first `SLICE_BYTES` or so from the front of `queue`: whole small messages, or part of a large one. */
const nextSlice = (queue: Array<Uint8Array>): Uint8Array => {
  const first = queue[0]!
  if (first.length >= SLICE_BYTES) {
    queue[0] = first.subarray(SLICE_BYTES)
    if (queue[0].length === 0) queue.shift()
    return first.subarray(0, SLICE_BYTES)
  }
  const parts: Array<Uint8Array> = []
  let size = 0
  while (queue.length > 0 && size + queue[0]!.length <= SLICE_BYTES) {
    size += queue[0]!.length
    parts.push(queue.shift()!)
  }
  return parts.length === 1 ? parts[0]! : Buffer.concat(parts, size)
}

export const makeBackpressure = (limits: PaceLimits, handlers: PaceHandlers): Backpressure => {
  const outlets = new Set<Outlet>()
  const inFlight = new Set<RequestId>()
  const waiting: Array<{ readonly id: RequestId; readonly message: JSONRPCMessage; readonly extra?: MessageExtraInfo | undefined }> = []
  /** Bytes queued or being written, not yet taken by an outlet. */
  let unread = 0
  /** Bytes the outlets have taken, so far: it grows while the client reads. */
  let taken = 0
  let largestMessage = 0
  let cutOff = false
  let held = false
  let stallTimer: ReturnType<typeof setTimeout> | undefined
  let onIdle: (() => void) | undefined

  const behind = () => unread > limits.maxBytes + largestMessage
  const minProgress = Math.min(MIN_PROGRESS_BYTES, limits.maxBytes / 16)

  const stop = () => {
    clearTimeout(stallTimer)
    stallTimer = undefined
  }

  /** Starts waiting requests while there is room and the client keeps up. */
  const pump = () => {
    while (!cutOff && waiting.length > 0 && inFlight.size < limits.maxInFlight && !behind()) {
      const next = waiting.shift()!
      inFlight.add(next.id)
      handlers.deliver(next.message, next.extra)
    }
    if (held !== waiting.length > 0) {
      held = !held
      handlers.holding?.(held)
    }
    if (onIdle !== undefined && inFlight.size === 0 && waiting.length === 0) {
      const then = onIdle
      onIdle = undefined
      then()
    }
  }

  /** While the client is behind, it must take something every `stallMs`. */
  const watch = () => {
    if (stallTimer !== undefined || cutOff) return
    const takenBefore = taken
    stallTimer = setTimeout(() => {
      stallTimer = undefined
      if (!behind()) return
      if (taken - takenBefore >= minProgress) return watch()
      cutOff = true
      waiting.length = 0
      handlers.cutOff(
        new McpClientNotReading({
          unreadBytes: unread,
          maxBytes: limits.maxBytes,
          stalledMs: limits.stallMs,
          readBytes: taken - takenBefore,
          minReadBytes: minProgress
        })
      )
    }, limits.stallMs)
    // A client gone quiet must not keep the process alive on its own.
    stallTimer.unref?.()
  }

  const outbox = (outlet: Outlet): Outbox => {
    const queue: Array<Uint8Array> = []
    let writing = 0
    let ending = false
    let open = true
    const flush = () => {
      if (!open || writing > 0) return
      if (queue.length === 0) {
        if (ending) outlet.end()
        return
      }
      const slice = nextSlice(queue)
      writing = slice.length
      outlet.write(slice, (error) => {
        if (!open) return
        unread -= writing
        taken += writing
        writing = 0
        if (error) return
        flush()
        pump()
      })
    }
    outlets.add(outlet)
    outlet.once("close", () => {
      // Whatever the outlet did not take is gone with it.
      open = false
      outlets.delete(outlet)
      unread -= writing + queue.reduce((sum, bytes) => sum + bytes.length, 0)
      queue.length = 0
      pump()
    })
    return {
      send: (bytes) => {
        if (!open || bytes.length === 0) return
        queue.push(bytes)
        unread += bytes.length
        largestMessage = Math.max(largestMessage, bytes.length)
        if (behind()) watch()
        flush()
      },
      end: () => {
        ending = true
        flush()
      }
    }
  }

  return {
    outbox,
    sent: (message) => {
      if (isAnswer(message) && message.id !== undefined && inFlight.delete(message.id)) pump()
    },
    receive: (message, extra) => {
      const cancelled = cancelledRequest(message)
      if (cancelled !== undefined) {
        // A request cancelled before it started is dropped: it is never answered (MCP cancellation).
        const at = waiting.findIndex((entry) => entry.id === cancelled)
        if (at !== -1) waiting.splice(at, 1)
      }
      if (!isJSONRPCRequest(message)) {
        handlers.deliver(message, extra)
        // One cancelled while in flight is never answered either (the SDK drops its result): its
        // place is free now, or enough cancelled calls would hold every place for good.
        if (cancelled !== undefined && inFlight.delete(cancelled)) pump()
        return
      }
      waiting.push({ id: message.id, message, extra })
      pump()
    },
    dropAll: () => {
      waiting.length = 0
      for (const outlet of [...outlets]) outlet.destroy()
    },
    stop,
    whenIdle: (then) => {
      onIdle = then
      pump()
    }
  }
}
