/**
 * The HTTP+JSON (REST) binding: an operation is a verb on a path under the interface URL. Where
 * the dialect names a fallback verb (agents disagree on a few), it is tried when the first is not
 * routed.
 */
import { HttpClientRequest } from "@effect/platform"
import { Effect, Option } from "effect"
import type { HttpVerb } from "../../a2a/dialects.js"
import type { A2aClientError } from "../../domain/clientErrors.js"
import { decodeWith, failureOf, isHttpSuccess, isUnrouted, parseJson, unreadable } from "./answers.js"
import { A2A_CONTENT_TYPE, baseHeaders, EVENT_STREAM, exchange, JSON_CONTENT_TYPE, jsonBody } from "./exchange.js"
import { streamEvents } from "./sse.js"
import type { Endpoint, Target } from "./target.js"
import type { Transport, WireOf } from "./transport.js"

type RestWire<A> = WireOf<"Rest", A>

// v0.3 REST predates application/a2a+json, and its SDK parses application/json bodies only.
const restContentType = (endpoint: Endpoint) => (endpoint.version === "1.0" ? A2A_CONTENT_TYPE : JSON_CONTENT_TYPE)

const restRequest = <A>(target: Target, endpoint: Endpoint, wire: RestWire<A>, verb: HttpVerb, accept: string) => {
  const url = `${endpoint.url.replace(/\/+$/, "")}${wire.path}`
  const request = HttpClientRequest.make(verb)(url).pipe(
    HttpClientRequest.setHeaders(baseHeaders(target, endpoint, url, accept)),
    HttpClientRequest.setUrlParams(wire.query ?? {})
  )
  return wire.body === undefined ? request : HttpClientRequest.setBody(request, jsonBody(wire.body, restContentType(endpoint)))
}

/** Sends with the wire's verb, and again with its fallback verb when the first is not routed. */
const withFallbackVerb = <A, B>(wire: RestWire<A>, sendWith: (verb: HttpVerb) => Effect.Effect<B, A2aClientError>) =>
  sendWith(wire.verb).pipe(
    Effect.catchIf((error) => wire.fallbackVerb !== undefined && isUnrouted(error), () => sendWith(wire.fallbackVerb!))
  )

export const restTransport: Transport<"Rest"> = {
  unary: (state, target, endpoint, wire) =>
    withFallbackVerb(wire, (verb) =>
      Effect.gen(function*() {
        const request = restRequest(target, endpoint, wire, verb, `${A2A_CONTENT_TYPE}, ${JSON_CONTENT_TYPE}`)
        const { response, text } = yield* exchange(state, target, request)
        if (!isHttpSuccess(response.status)) return yield* failureOf(target, request.url, response, text)
        const json = text.trim() === "" ? Option.some<unknown>(undefined) : parseJson(text)
        if (Option.isNone(json)) return yield* unreadable(target, request.url, "the answer is not JSON", text)
        return yield* decodeWith(state, target, request.url, wire.decode, json.value)
      })),
  // Each event's JSON is the payload itself.
  stream: (state, target, endpoint, wire) =>
    withFallbackVerb(
      wire,
      (verb) => streamEvents(state, target, restRequest(target, endpoint, wire, verb, EVENT_STREAM), Effect.succeed, wire.decode)
    )
}
