/**
 * Resumable SSE on the streamable HTTP transport (MCP spec, "Resumability and Redelivery"): every
 * event sent on a stream gets an id, and a client that lost the connection reconnects with
 * `Last-Event-ID` to get what it missed. One store per session, in memory, bounded in count and
 * bytes: the newest events are kept, so a client gone for long resumes with what is left (or is
 * told the id is unknown). An event larger than the byte bound is never kept: a client that lost
 * the stream before it arrived does not get it on resuming.
 */
import type { EventId, EventStore, JSONRPCMessage, StreamId } from "@modelcontextprotocol/server"
import { MAX_MCP_STORED_EVENT_BYTES } from "../domain/limits.js"

/** Events kept per session: enough for a long task's progress notifications, small in memory. */
export const MAX_STORED_EVENTS = 1000

interface StoredEvent {
  readonly id: EventId
  readonly streamId: StreamId
  readonly seq: number
  readonly message: JSONRPCMessage
  /** Its size as JSON, in UTF-8 bytes. */
  readonly size: number
}

const SEPARATOR = "#"

/** `<stream>#<seq>`: the stream is recoverable from the id alone (the SDK's stream ids are UUIDs or `_GET_stream`). */
const parseEventId = (eventId: EventId): { streamId: StreamId; seq: number } | undefined => {
  const at = eventId.lastIndexOf(SEPARATOR)
  const seq = Number(eventId.slice(at + 1))
  return at <= 0 || !Number.isSafeInteger(seq) ? undefined : { streamId: eventId.slice(0, at), seq }
}

export const makeEventStore = (maxEvents: number = MAX_STORED_EVENTS, maxBytes: number = MAX_MCP_STORED_EVENT_BYTES): EventStore => {
  const events: Array<StoredEvent> = []
  let seq = 0
  let bytes = 0
  const overBound = () => events.length > maxEvents || bytes > maxBytes
  return {
    storeEvent: async (streamId, message) => {
      seq += 1
      const event = { id: `${streamId}${SEPARATOR}${seq}`, streamId, seq, message, size: Buffer.byteLength(JSON.stringify(message)) }
      if (event.size > maxBytes) return event.id
      events.push(event)
      bytes += event.size
      while (overBound()) bytes -= events.shift()!.size
      return event.id
    },
    // A stream this store no longer (or never) held is unknown: the SDK answers 400.
    getStreamIdForEventId: async (eventId) => {
      const streamId = parseEventId(eventId)?.streamId
      return events.some((event) => event.streamId === streamId) ? streamId : undefined
    },
    replayEventsAfter: async (lastEventId, { send }) => {
      const parsed = parseEventId(lastEventId)
      if (parsed === undefined) return ""
      for (const event of events) {
        if (event.streamId === parsed.streamId && event.seq > parsed.seq) await send(event.id, event.message)
      }
      return parsed.streamId
    }
  }
}
