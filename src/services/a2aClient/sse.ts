/**
 * Reading a streamed answer, for every HTTP binding: the response is checked to be an event
 * stream before parsing (errors before the first event come as plain JSON), events are parsed
 * per WHATWG, bounded in size and idle time, and the stream ends at the last event of the
 * interaction. Each binding only says how an event's JSON holds the payload.
 */
import type { HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Duration, Effect, Option, type ParseResult, Predicate, Stream } from "effect"
import { createParser, type EventSourceMessage } from "eventsource-parser"
import * as V1 from "../../a2a/v1.js"
import { type A2aClientError, RequestTimeout, ResponseTooLarge, StreamBroken } from "../../domain/clientErrors.js"
import { MAX_RESPONSE_BYTES } from "../../domain/limits.js"
import { decodeWith, errorInBody, errorInText, failureOf, isHttpSuccess, parseJson, unreadable } from "./answers.js"
import { EVENT_STREAM, execute, readText } from "./exchange.js"
import type { ClientState } from "./state.js"
import type { Target } from "./target.js"

/** The payload an event's JSON carries (a JSON-RPC response's result, or the JSON itself). */
export type PayloadOf = (json: unknown) => Effect.Effect<unknown, A2aClientError>

/**
 * The last event of an interaction (§6a.8): a direct Message, a terminal Task, a status that is
 * terminal or waits for the user, or a v0.3 event marked `final`. Some agents keep the stream open
 * after it (e.g. @a2a-js at AUTH_REQUIRED), so the client stops reading there. gRPC streams end
 * there too (grpcCalls.ts).
 */
export const endsInteraction = (payload: unknown, event: V1.StreamResponse) => {
  if ("message" in event) return true
  if ("task" in event) return V1.isTerminalState(event.task.status.state)
  if ("statusUpdate" in event) {
    const state = event.statusUpdate.status.state
    return V1.isTerminalState(state) || V1.isInterruptedState(state) || hasFinalFlag(payload)
  }
  return false
}

/** `final: true` on a v0.3 status update (JSON-RPC: the bare event; REST: under `statusUpdate`). */
const hasFinalFlag = (payload: unknown) =>
  Predicate.isRecord(payload) &&
  (payload["final"] === true || (Predicate.isRecord(payload["statusUpdate"]) && payload["statusUpdate"]["final"] === true))

/**
 * SSE events of a text stream, parsed per WHATWG (CRLF, multi-line data, comments, id lines) by
 * eventsource-parser, whose work grows with the text fed, not with the events in a chunk
 * (@effect/experimental's parser scans a chunk from its start again for every line, so a chunk
 * of many small events cost its length times their number). `retry:` is ignored: an A2A client
 * reconnects only through SubscribeToTask; so are unknown fields, as WHATWG says. An event that
 * grows past `maxEventBytes` before it ends fails the stream, so an endless event cannot fill memory.
 */
const sseEvents = <E>(
  url: string,
  maxEventBytes: number,
  text: Stream.Stream<string, E>
): Stream.Stream<EventSourceMessage, E | ResponseTooLarge> =>
  Stream.suspend(() => {
    const parsed: Array<EventSourceMessage> = []
    const parser = createParser({ onEvent: (event) => void parsed.push(event) })
    let sinceLastEvent = 0
    return Stream.mapConcatEffect(text, (chunk): Effect.Effect<ReadonlyArray<EventSourceMessage>, ResponseTooLarge> => {
      parser.feed(chunk)
      sinceLastEvent = parsed.length > 0 ? 0 : sinceLastEvent + Buffer.byteLength(chunk)
      if (sinceLastEvent > maxEventBytes) return Effect.fail(new ResponseTooLarge({ url, limit: maxEventBytes }))
      return Effect.succeed(parsed.splice(0))
    })
  })

/** Why an answer is not an event stream: errors before the first event come as plain JSON. */
const streamRefusal = (
  target: Target,
  url: string,
  response: HttpClientResponse.HttpClientResponse,
  text: string
): Effect.Effect<never, A2aClientError> => {
  if (!isHttpSuccess(response.status)) return Effect.fail(failureOf(target, url, response, text))
  const error = errorInText(response.status, text)
  const contentType = response.headers["content-type"] || "no content type"
  return error !== undefined ? Effect.fail(error) : unreadable(target, url, `expected an event stream, got ${contentType}`, text)
}

/** The response, once its headers say it is an event stream. */
const openEvents = (state: ClientState, target: Target, request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(
    execute(state, target, request),
    (response) =>
      isHttpSuccess(response.status) && (response.headers["content-type"] ?? "").startsWith(EVENT_STREAM)
        ? Effect.succeed(response)
        : Effect.flatMap(readText(target, request.url, response), (text) => streamRefusal(target, request.url, response, text))
  )

const eventPayload = (
  target: Target,
  url: string,
  event: EventSourceMessage,
  payloadOf: PayloadOf
): Effect.Effect<unknown, A2aClientError> => {
  const json = parseJson(event.data)
  if (Option.isNone(json)) return unreadable(target, url, "an event is not JSON", event.data)
  if (event.event === "error") {
    const error = errorInBody(200, json.value)
    return error !== undefined ? Effect.fail(error) : unreadable(target, url, "an error event in an unknown shape", event.data)
  }
  return payloadOf(json.value)
}

const eventsOf = (
  state: ClientState,
  target: Target,
  url: string,
  response: HttpClientResponse.HttpClientResponse,
  payloadOf: PayloadOf,
  decode: (json: unknown) => Effect.Effect<V1.StreamResponse, ParseResult.ParseError>
): Stream.Stream<V1.StreamResponse, A2aClientError> => {
  const text = response.stream.pipe(
    Stream.mapError((error) => new StreamBroken({ url, reason: error.message })),
    Stream.decodeText()
  )
  const events = sseEvents(url, target.maxResponseBytes ?? MAX_RESPONSE_BYTES, text).pipe(
    Stream.mapEffect((event) => eventPayload(target, url, event, payloadOf)),
    Stream.mapEffect((payload) =>
      Effect.map(decodeWith(state, target, url, decode, payload), (event) => ({ event, last: endsInteraction(payload, event) }))
    ),
    Stream.takeUntil(({ last }) => last),
    Stream.map(({ event }) => event)
  )
  const idle = target.streamIdleTimeout
  if (idle === undefined) return events
  return Stream.timeoutFail(
    events,
    () => new RequestTimeout({ url, after: `${Duration.format(Duration.decode(idle))} without an event`, limit: "stream-idle" }),
    idle
  )
}

/** Sends `request` and reads its answer as the interaction's events, each payload taken out by `payloadOf`. */
export const streamEvents = (
  state: ClientState,
  target: Target,
  request: HttpClientRequest.HttpClientRequest,
  payloadOf: PayloadOf,
  decode: (json: unknown) => Effect.Effect<V1.StreamResponse, ParseResult.ParseError>
) => Effect.map(openEvents(state, target, request), (response) => eventsOf(state, target, request.url, response, payloadOf, decode))
