/**
 * Server-Sent Events answers: one `data:` line of JSON per event, each ended by a blank line and
 * written as soon as the event exists (no buffering). A failure after the stream began can only
 * be told in the stream, as an `event: error` frame. A client that reads slowly holds the
 * stream back (the socket's buffer is let drain) instead of filling the socket's buffer.
 */
import { Cause, Effect, Stream } from "effect"
import type { EventEmitter } from "node:events"
import type { ServerResponse } from "node:http"
import type * as V1 from "../../a2a/v1.js"
import { type AgentRequestError, internalError } from "../../domain/agentErrors.js"
import type { Exchange } from "../exchange.js"

const frame = (json: string) => `data: ${json}\n\n`
const errorFrame = (json: string) => `event: error\ndata: ${json}\n\n`

const SSE_HEADERS = {
  "content-type": "text/event-stream",
  "cache-control": "no-cache",
  connection: "keep-alive",
  // Reverse proxies such as nginx would otherwise hold events back.
  "x-accel-buffering": "no"
}

/**
 * Writes with `write` (true when the stream took it, or when it is gone); otherwise waits until
 * the stream drains, or emits `gone` (its reader left). One step, so no drain is missed between
 * the write and the wait. The gRPC door's streams write their messages with it too.
 */
export const writeOrWait = (stream: EventEmitter, write: () => boolean, gone: string): Effect.Effect<void> =>
  Effect.async<void>((resume) => {
    if (write()) return resume(Effect.void)
    const done = () => {
      stream.off("drain", done)
      stream.off(gone, done)
      resume(Effect.void)
    }
    stream.on("drain", done)
    stream.on(gone, done)
    return Effect.sync(() => {
      stream.off("drain", done)
      stream.off(gone, done)
    })
  })

/** Writes one frame; when the socket's buffer is full, waits until it drains (or the client is gone). */
const writeFrame = (response: ServerResponse, text: string): Effect.Effect<void> =>
  writeOrWait(response, () => response.write(text) || response.destroyed, "close")

/** Answers with an SSE stream of one error event (an error before the first event), then ends it. */
export const writeSseError = ({ response }: Exchange, json: string): void => {
  response.writeHead(200, SSE_HEADERS)
  response.end(errorFrame(json))
}

/**
 * Answers with the SSE stream of `events`: `toJson` writes one event (JSON-RPC wraps it in an
 * envelope, REST sends it bare), `errorJson` the error frame of a failure mid-stream. The
 * response ends with the stream; an interrupted stream (the client left, the server stops)
 * ends it too.
 */
export const writeSse = (
  { response }: Exchange,
  events: Stream.Stream<V1.StreamResponse>,
  toJson: (event: V1.StreamResponse) => string,
  errorJson: (error: AgentRequestError) => string
): Effect.Effect<void> =>
  Effect.suspend(() => {
    response.writeHead(200, SSE_HEADERS)
    response.flushHeaders()
    return Stream.runForEach(events, (event) => writeFrame(response, frame(toJson(event))))
  }).pipe(
    Effect.catchAllCause((cause) =>
      Cause.isInterruptedOnly(cause)
        ? Effect.void
        : writeFrame(
          response,
          errorFrame(errorJson(internalError(`The event stream failed: ${Cause.pretty(cause).split("\n")[0]}`)))
        )
    ),
    Effect.ensuring(Effect.sync(() => response.end()))
  )
