/** The JSON-RPC 2.0 binding: every operation is a POST of an envelope to the interface URL. */
import { HttpClientRequest } from "@effect/platform"
import { Effect, Option, Predicate } from "effect"
import { type A2aClientError, InvalidResponse } from "../../domain/clientErrors.js"
import { authRequired, decodeWith, failureOf, isAuthStatus, isHttpSuccess, parseJson, protocolErrorOf, unreadable } from "./answers.js"
import { baseHeaders, EVENT_STREAM, exchange, JSON_CONTENT_TYPE, jsonBody } from "./exchange.js"
import { streamEvents } from "./sse.js"
import type { Endpoint, Target } from "./target.js"
import type { Transport } from "./transport.js"

let requestCounter = 0
const nextRequestId = () => `relay-${Date.now().toString(36)}-${(++requestCounter).toString(36)}`

const jsonRpcRequest = (target: Target, endpoint: Endpoint, method: string, params: unknown, accept: string) => {
  const id = nextRequestId()
  const envelope = { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }
  const request = HttpClientRequest.post(endpoint.url).pipe(
    HttpClientRequest.setHeaders(baseHeaders(target, endpoint, endpoint.url, accept)),
    HttpClientRequest.setBody(jsonBody(envelope, JSON_CONTENT_TYPE))
  )
  return { id, request }
}

const isJsonRpcEnvelope = (json: unknown): json is Record<string, unknown> => Predicate.isRecord(json) && json["jsonrpc"] === "2.0"

/** Reads a JSON-RPC response envelope into its result, or the agent's error. */
const jsonRpcResult = (url: string, id: string, json: unknown): Effect.Effect<unknown, A2aClientError> => {
  if (!isJsonRpcEnvelope(json)) return Effect.fail(new InvalidResponse({ url, reason: "not a JSON-RPC 2.0 response" }))
  if (Predicate.isRecord(json["error"])) return Effect.fail(protocolErrorOf(200, json["error"]))
  if (json["id"] !== id) return Effect.fail(new InvalidResponse({ url, reason: `response id ${JSON.stringify(json["id"])} is not ${id}` }))
  return Effect.succeed(json["result"])
}

export const jsonRpcTransport: Transport<"JsonRpc"> = {
  unary: (state, target, endpoint, wire) =>
    Effect.gen(function*() {
      const { id, request } = jsonRpcRequest(target, endpoint, wire.method, wire.params, JSON_CONTENT_TYPE)
      const { response, text } = yield* exchange(state, target, request)
      if (isAuthStatus(response.status)) return yield* authRequired(target, endpoint.url, response)
      const json = parseJson(text)
      // Servers answer JSON-RPC errors with 200 or with 4xx/5xx; read the envelope either way.
      if (Option.isSome(json) && isJsonRpcEnvelope(json.value)) {
        return yield* decodeWith(state, target, endpoint.url, wire.decode, yield* jsonRpcResult(endpoint.url, id, json.value))
      }
      if (isHttpSuccess(response.status)) {
        return yield* unreadable(target, endpoint.url, "the answer is not a JSON-RPC response", text)
      }
      return yield* failureOf(target, endpoint.url, response, text)
    }),
  // Each event is a JSON-RPC response to the request that opened the stream.
  stream: (state, target, endpoint, wire) => {
    const { id, request } = jsonRpcRequest(target, endpoint, wire.method, wire.params, EVENT_STREAM)
    return streamEvents(state, target, request, (json) => jsonRpcResult(request.url, id, json), wire.decode)
  }
}
