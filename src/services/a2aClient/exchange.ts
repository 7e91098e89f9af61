/**
 * One HTTP exchange with an agent, shared by discovery and every binding: sent through the
 * state's HttpClient, bounded in time (the target's response timeout) and in size (the body is
 * read only up to the target's limit).
 */
import { HttpBody, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Duration, Effect, FiberRef, Predicate, Stream } from "effect"
import { isBase64 } from "../../a2a/parts.js"
import { AgentUnreachable, InterfaceHostRefused, RequestTimeout, ResponseTooLarge } from "../../domain/clientErrors.js"
import { MAX_RESPONSE_BYTES } from "../../domain/limits.js"
import { currentTraceHeaders } from "../../domain/traceContext.js"
import { refusalIn } from "../connectGuard.js"
import type { ClientState } from "./state.js"
import { credentialHeaders, credentialsFor, type Endpoint, type Target } from "./target.js"

export const DEFAULT_TIMEOUT: Duration.DurationInput = "30 seconds"

export const JSON_CONTENT_TYPE = "application/json"
export const A2A_CONTENT_TYPE = "application/a2a+json"
export const EVENT_STREAM = "text/event-stream"

/** Headers of every operation request: what we accept, the version spoken, and the credentials this URL may have. */
export const baseHeaders = (target: Target, endpoint: Endpoint, url: string, accept: string) => ({
  accept,
  "a2a-version": endpoint.version,
  ...credentialHeaders(credentialsFor(target, url))
})

/** Strings this long or longer, when base64, go into a request's body as they are. */
const SPLICED_LENGTH = 64 * 1024

/** Characters of a spliced string sent at a time. */
const SENT_PIECE = 1024 * 1024

/**
 * A request's JSON in pieces: JSON text as bytes, and each file's base64 as it is. A file's base64
 * goes out straight from the string, not through a JSON text of the request and its encoding
 * (two more copies of a file of megabytes): the JSON is written with a mark in each such string's
 * place, and split around the marks. Base64 needs no escaping in JSON, so the pieces, one after
 * the other, are the bytes of JSON.stringify(value).
 */
const jsonPieces = (value: unknown): ReadonlyArray<Uint8Array | string> => {
  const spliced: Array<string> = []
  const mark = `relay-spliced-${crypto.randomUUID()}-`
  const json = JSON.stringify(
    value,
    (_key, field: unknown) =>
      typeof field === "string" && field.length >= SPLICED_LENGTH && isBase64(field) ? `${mark}${spliced.push(field) - 1}` : field
  )
  if (spliced.length === 0) return [new TextEncoder().encode(json)]
  // JSON text, a spliced string's index, JSON text, …; the marks' quotes stay with the text.
  return json.split(new RegExp(`(?<=")${mark}(\\d+)(?=")`))
    .map((piece, index) => (index % 2 === 0 ? Buffer.from(piece) : spliced[Number(piece)]!))
}

/** The bytes of `value`'s JSON as they are sent: a file's base64 a megabyte at a time. */
export async function* jsonBodyChunks(pieces: ReadonlyArray<Uint8Array | string>): AsyncGenerator<Uint8Array> {
  for (const piece of pieces) {
    if (typeof piece !== "string") yield piece
    else for (let start = 0; start < piece.length; start += SENT_PIECE) yield Buffer.from(piece.slice(start, start + SENT_PIECE), "latin1")
  }
}

/**
 * The body of a request with `value` as JSON. One that carries a file is sent in pieces
 * (jsonBodyChunks), never whole: no copy of the file is made for it.
 */
export const jsonBody = (value: unknown, contentType: string): HttpBody.HttpBody => {
  const pieces = jsonPieces(value)
  if (pieces.length === 1 && typeof pieces[0] !== "string") return HttpBody.uint8Array(pieces[0]!, contentType)
  const contentLength = pieces.reduce((size, piece) => size + piece.length, 0)
  return HttpBody.raw({ [Symbol.asyncIterator]: () => jsonBodyChunks(pieces) }, { contentType, contentLength })
}

const describeTransport = (error: HttpClientError.RequestError) => {
  const cause = error.cause
  const code = Predicate.isRecord(cause) && Predicate.isRecord(cause["cause"])
    ? cause["cause"]["code"]
    : Predicate.isRecord(cause)
    ? cause["code"]
    : undefined
  return typeof code === "string" ? `${code} (${error.description ?? error.reason})` : error.description ?? error.message
}

/** Bounds `effect` by the target's response timeout; on expiry it is interrupted, aborting the request. */
const withResponseTimeout = <A, E>(target: Target, url: string, effect: Effect.Effect<A, E>) => {
  const timeout = target.timeout ?? DEFAULT_TIMEOUT
  return Effect.timeoutFail(effect, {
    duration: timeout,
    onTimeout: () => new RequestTimeout({ url, after: Duration.format(Duration.decode(timeout)) })
  })
}

/**
 * `request` with the caller's trace context if it has one (traceContext.ts), so one trace crosses
 * to the agent: then an HTTP client that propagates spans of its own must not replace it.
 */
const executeInTrace = (state: ClientState, request: HttpClientRequest.HttpClientRequest) =>
  Effect.flatMap(FiberRef.get(currentTraceHeaders), (trace) =>
    Object.keys(trace).length === 0
      ? state.http.execute(request)
      : Effect.locally(state.http.execute(HttpClientRequest.setHeaders(request, trace)), HttpClient.currentTracerPropagation, false))

const sendRequest = (state: ClientState, request: HttpClientRequest.HttpClientRequest) =>
  executeInTrace(state, request).pipe(
    Effect.catchTags({
      RequestError: (error) => {
        // The interface rule refused the connection (see interfaceHosts): nothing was sent.
        const refusal = refusalIn(error)
        return Effect.fail(
          refusal === undefined
            ? new AgentUnreachable({ url: request.url, reason: describeTransport(error) })
            : new InterfaceHostRefused({ url: request.url, reason: refusal })
        )
      },
      ResponseError: (error) => Effect.fail(new AgentUnreachable({ url: request.url, reason: error.message }))
    }),
    Effect.tap((response) => Effect.logDebug(`${request.method} ${request.url} → ${response.status}`))
  )

/**
 * The body, read as a stream that stops (and so aborts the request) at the first chunk past the
 * target's limit, or at the first chunk at all when Content-Length announces more: a hostile
 * agent cannot make the client hold more than the limit. A body whose Content-Length is within
 * the limit is read whole (`whole`): HTTP/1.1 framing ends it at that length (undici never reads
 * past it into this body), and reading it in one piece skips the stream machinery and the abort
 * that ends every streamed read (a cost to each answer: bench/README.md).
 */
const readLimited = <A>(
  target: Target,
  url: string,
  response: HttpClientResponse.HttpClientResponse,
  whole: (response: HttpClientResponse.HttpClientResponse) => Effect.Effect<A, HttpClientError.ResponseError>,
  fromChunks: (bytes: Buffer) => A
) =>
  Effect.suspend(() => {
    const limit = target.maxResponseBytes ?? MAX_RESPONSE_BYTES
    const length = response.headers["content-length"]
    const declared = Number(length)
    if (isDeclaredLength(length) && declared <= limit) {
      return Effect.mapError(whole(response), (error) =>
        new AgentUnreachable({ url, reason: `reading the response failed: ${error.message}` }))
    }
    const chunks: Array<Uint8Array> = []
    let size = 0
    return response.stream.pipe(
      Stream.mapError((error) =>
        new AgentUnreachable({ url, reason: `reading the response failed: ${error.message}` })
      ),
      Stream.runForEach((chunk) => {
        size += chunk.length
        if (declared > limit) return Effect.fail(new ResponseTooLarge({ url, limit, declared }))
        if (size > limit) return Effect.fail(new ResponseTooLarge({ url, limit }))
        chunks.push(chunk)
        return Effect.void
      }),
      Effect.map(() => fromChunks(Buffer.concat(chunks, size)))
    )
  })

/** The body as text, within the target's limit (readLimited). */
export const readText = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
  readLimited(target, url, response, (whole) => whole.text, (bytes) => new TextDecoder().decode(bytes))

/** The body as bytes, within the target's limit (readLimited). */
export const readBytes = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
  readLimited(
    target,
    url,
    response,
    (whole) => Effect.map(whole.arrayBuffer, (buffer) => new Uint8Array(buffer)),
    (bytes) => new Uint8Array(bytes)
  )

/** A Content-Length undici holds the body to: digits only (a list or a sign would not frame it). */
const isDeclaredLength = (value: string | undefined): value is string => value !== undefined && /^\d{1,15}$/.test(value)

/** Response headers only (streams read the body afterwards), within the response timeout. */
export const execute = (state: ClientState, target: Target, request: HttpClientRequest.HttpClientRequest) =>
  withResponseTimeout(target, request.url, sendRequest(state, request))

/** The whole response, body included, within the response timeout. */
export const exchange = (state: ClientState, target: Target, request: HttpClientRequest.HttpClientRequest) =>
  withResponseTimeout(
    target,
    request.url,
    Effect.flatMap(sendRequest(state, request), (response) =>
      Effect.map(readText(target, request.url, response), (text) => ({ response, text })))
  )
