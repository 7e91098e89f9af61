/**
 * Raw exchanges: what a well-behaved client never sends. The checks speak to the interface past
 * our own client (RawHttp) and read its answers as sent: the result, the error, a short view.
 */
import { Effect, Predicate } from "effect"
import { randomUUID } from "node:crypto"
import { dialectFor, type WireRequest } from "../../a2a/dialects.js"
import { errorInfoReason } from "../../a2a/errors.js"
import { answerExcerpt } from "../../domain/terminalText.js"
import { credentialHeaders, credentialsFor } from "../../services/A2aClient.js"
import { RawHttp, type RawResponse } from "../../services/RawHttp.js"
import { type InterfaceContext, MAX_CHECK_BODY_BYTES } from "./context.js"

const versionHeaders = (version: string | undefined): Record<string, string> => version === undefined ? {} : { "A2A-Version": version }

export interface RawOptions {
  /** The A2A-Version header sent (default: the interface's version on 1.0, none on 0.3). */
  readonly version?: string | undefined
  /** Default: JSON. */
  readonly accept?: string | undefined
  /** Send the run's credentials (default true). */
  readonly credentials?: boolean | undefined
}

const defaultVersion = (ctx: InterfaceContext) => (ctx.id.protocol === "1.0" ? "1.0" : undefined)

const rawHeaders = (ctx: InterfaceContext, contentType: string, options: RawOptions) => ({
  "Content-Type": contentType,
  Accept: options.accept ?? "application/json, application/a2a+json",
  ...versionHeaders("version" in options ? options.version : defaultVersion(ctx)),
  ...(options.credentials === false ? {} : credentialHeaders(credentialsFor(ctx.target, ctx.endpoint.url)))
})

/** POSTs this text to the JSON-RPC interface, as is. */
export const rawJsonRpc = (ctx: InterfaceContext, body: string, options: RawOptions = {}) =>
  Effect.flatMap(RawHttp, (http) =>
    http.exchange({
      method: "POST",
      url: ctx.endpoint.url,
      headers: rawHeaders(ctx, "application/json", options),
      body,
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    }))

const restUrl = (ctx: InterfaceContext, path: string, query: Readonly<Record<string, string>> | undefined) => {
  const search = query === undefined ? "" : `?${new URLSearchParams(query).toString()}`
  return `${ctx.endpoint.url.replace(/\/+$/, "")}${path}${search}`
}

/** One operation exactly as the dialect encodes it, through RawHttp, to read the answer as sent. */
export const rawOperation = <A>(ctx: InterfaceContext, wire: WireRequest<A>, options: RawOptions = {}) => {
  if (wire._tag === "JsonRpc") {
    return rawJsonRpc(
      ctx,
      JSON.stringify({ jsonrpc: "2.0", id: `relay-check-${randomUUID()}`, method: wire.method, params: wire.params }),
      options
    )
  }
  // The checks select JSON-RPC and HTTP+JSON interfaces only (checkCommand.ts, bindingsOf).
  if (wire._tag === "Grpc") return Effect.dieMessage("relay check reads raw answers over HTTP only, not gRPC")
  const contentType = ctx.id.protocol === "1.0" ? "application/a2a+json" : "application/json"
  return Effect.flatMap(RawHttp, (http) =>
    http.exchange({
      method: wire.verb === "GET" ? "GET" : "POST",
      url: restUrl(ctx, wire.path, wire.query),
      headers: rawHeaders(ctx, contentType, options),
      ...(wire.body === undefined ? {} : { body: JSON.stringify(wire.body) }),
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    }))
}

export const dialectOf = (ctx: InterfaceContext) => dialectFor(ctx.endpoint.binding, ctx.endpoint.version, ctx.endpoint.tenant)

/** A dialect's encoding; our own encoders never fail on the inputs the checks give them. */
export const wireOf = <A, I>(encode: (input: I) => Effect.Effect<WireRequest<A>, unknown>, input: I) => Effect.orDie(encode(input))

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The `result` of a JSON-RPC answer, or the body of a REST one. */
export const resultOf = (ctx: InterfaceContext, response: RawResponse): unknown => {
  const json = parseJson(response.text)
  return ctx.id.binding === "jsonrpc" && Predicate.isRecord(json) ? json["result"] : json
}

/** The error of an answer: JSON-RPC `error.code` or REST status, and the ErrorInfo reason when given. */
export interface RawError {
  readonly code: number | undefined
  readonly reason: string | undefined
  readonly id: unknown
}

export const rawErrorOf = (response: RawResponse): RawError | undefined => {
  const json = parseJson(response.text)
  if (!Predicate.isRecord(json)) return undefined
  // JSON-RPC and google.rpc.Status wrap it in `error`; v0.3 REST answers the bare {code, message}.
  const error = Predicate.isRecord(json["error"])
    ? json["error"]
    : typeof json["code"] === "number" && typeof json["message"] === "string"
    ? json
    : undefined
  if (error === undefined) return undefined
  const code = typeof error["code"] === "number" ? error["code"] : undefined
  return { code, reason: errorInfoReason(error["data"]) ?? errorInfoReason(error["details"]), id: json["id"] }
}

/** Whether an answer refuses the request as invalid parameters: -32602 over JSON-RPC, 400 with an error body over REST. */
export const refusedAsInvalid = (ctx: InterfaceContext, response: RawResponse): boolean => {
  const error = rawErrorOf(response)
  return ctx.id.binding === "jsonrpc" ? error?.code === -32602 : response.status === 400 && error !== undefined
}

/** How an invalid-parameters refusal is named on this binding. */
export const invalidName = (ctx: InterfaceContext) => (ctx.id.binding === "jsonrpc" ? "-32602 Invalid params" : "HTTP 400")

/** "HTTP 200, application/json: {…}": what the agent answered, for a failure's detail (a short, escaped excerpt). */
export const shown = (response: RawResponse) => {
  const type = response.headers["content-type"]
  return `HTTP ${response.status}${type ? `, ${answerExcerpt(type)}` : ""}: ${answerExcerpt(response.text) || "(empty body)"}`
}
