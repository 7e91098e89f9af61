/**
 * RawHttp: one HTTP exchange exactly as given, for the conformance checks that must send what a
 * well-behaved client never would (malformed JSON, a bad envelope, an unknown version) and read
 * the answer as it is (status, headers, body text). Bounded: a timeout on the whole exchange and
 * a cap on the body read.
 */
import { HttpClient, HttpClientRequest } from "@effect/platform"
import { Context, Duration, Effect, Layer, Stream } from "effect"
import { AgentUnreachable, RequestTimeout } from "../domain/clientErrors.js"

export interface RawRequest {
  readonly method: "GET" | "POST"
  readonly url: string
  readonly headers?: Readonly<Record<string, string>>
  /** Sent as is. */
  readonly body?: string
  readonly timeout: Duration.DurationInput
  /** Bytes of the body read at most; the rest is dropped (`truncated`). */
  readonly maxBytes: number
}

export interface RawResponse {
  readonly status: number
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>
  readonly text: string
  readonly truncated: boolean
}

export class RawHttp extends Context.Tag("relay/RawHttp")<RawHttp, {
  readonly exchange: (request: RawRequest) => Effect.Effect<RawResponse, AgentUnreachable | RequestTimeout>
}>() {}

const requestOf = (raw: RawRequest) => {
  const base = raw.method === "GET" ? HttpClientRequest.get(raw.url) : HttpClientRequest.post(raw.url)
  const withHeaders = HttpClientRequest.setHeaders(base, raw.headers ?? {})
  return raw.body === undefined
    ? withHeaders
    : HttpClientRequest.bodyText(withHeaders, raw.body, raw.headers?.["Content-Type"] ?? "application/json")
}

export const make = Effect.gen(function*() {
  const http = yield* HttpClient.HttpClient
  const exchange = (raw: RawRequest) =>
    Effect.scoped(Effect.gen(function*() {
      const response = yield* http.execute(requestOf(raw))
      const chunks: Array<Uint8Array> = []
      let size = 0
      let truncated = false
      yield* response.stream.pipe(
        Stream.takeWhile((chunk) => {
          if (size >= raw.maxBytes) {
            truncated = true
            return false
          }
          chunks.push(chunk.subarray(0, raw.maxBytes - size))
          truncated = truncated || chunk.length > raw.maxBytes - size
          size += chunk.length
          return true
        }),
        Stream.runDrain
      )
      return {
        status: response.status,
        headers: response.headers,
        text: new TextDecoder().decode(Buffer.concat(chunks)),
        truncated
      } satisfies RawResponse
    })).pipe(
      Effect.mapError((error) => new AgentUnreachable({ url: raw.url, reason: error.message })),
      Effect.timeoutFail({
        duration: raw.timeout,
        onTimeout: () => new RequestTimeout({ url: raw.url, after: Duration.format(Duration.decode(raw.timeout)) })
      })
    )
  return { exchange } as const
})

export const layer = Layer.effect(RawHttp, make)
