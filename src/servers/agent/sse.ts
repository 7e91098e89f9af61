/**
 * Server-Sent Events answers: one `data:` line of JSON per event, each ended by a blank line and
 * written as soon as the event exists (no buffering). A failure after the stream began can only
 * be told in the stream, as an `event: error` frame.
 */
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import { Cause, Stream } from "effect"
import type * as V1 from "../../domain/a2a/v1.js"
import { type AgentRequestError, internalError } from "../../domain/agentErrors.js"

const encoder = new TextEncoder()

const frame = (json: string) => encoder.encode(`data: ${json}\n\n`)
const errorFrame = (json: string) => encoder.encode(`event: error\ndata: ${json}\n\n`)

const SSE_HEADERS = {
  "cache-control": "no-cache",
  connection: "keep-alive",
  // Reverse proxies such as nginx would otherwise hold events back.
  "x-accel-buffering": "no"
}

/**
 * An SSE response of `events`: `toJson` writes one event (JSON-RPC wraps it in an envelope,
 * REST sends it bare), `errorJson` the error frame of a failure mid-stream.
 */
export const sseResponse = (
  events: Stream.Stream<V1.StreamResponse>,
  toJson: (event: V1.StreamResponse) => string,
  errorJson: (error: AgentRequestError) => string
): HttpServerResponse.HttpServerResponse =>
  HttpServerResponse.stream(
    events.pipe(
      Stream.map((event) => frame(toJson(event))),
      Stream.catchAllCause((cause) =>
        Cause.isInterruptedOnly(cause)
          ? Stream.empty
          : Stream.succeed(errorFrame(errorJson(internalError(`The event stream failed: ${Cause.pretty(cause).split("\n")[0]}`))))
      )
    ),
    { contentType: "text/event-stream", headers: SSE_HEADERS }
  )
