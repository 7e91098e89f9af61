/**
 * Raw exchanges: what a well-behaved client never sends. The checks speak to the interface past
 * our own client (RawHttp, RawGrpc) and read its answers as sent: the result, the error, a short view.
 *
 * A gRPC answer is read as the HTTP/2 response it is (status 200, `application/grpc`, its gRPC
 * status in `grpc-status`), its body the ProtoJSON of what came: the answer message, the stream's
 * messages as a JSON array, or the error's `google.rpc.Status` with its ErrorInfo.
 */
import { Effect, Either, Predicate } from "effect"
import { randomUUID } from "node:crypto"
import { dialectFor, type WireRequest } from "../../a2a/dialects.js"
import { ERROR_INFO_TYPE, errorInfoReason } from "../../a2a/errors.js"
import { isLoopbackHost } from "../../a2a/hosts.js"
import { type AgentUnreachable, InterfaceHostRefused, type RequestTimeout } from "../../domain/clientErrors.js"
import { answerExcerpt } from "../../domain/terminalText.js"
import { credentialHeaders, credentialsFor, withoutSecrets } from "../../services/A2aClient.js"
import { RawGrpc, type RawGrpcResponse } from "../../services/RawGrpc.js"
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

// gRPC clients must send a2a-version (1.0 §10); over HTTP a 0.3 client sends none.
const defaultVersion = (ctx: InterfaceContext) => (ctx.id.protocol === "1.0" || ctx.id.binding === "grpc" ? ctx.id.protocol : undefined)

const rawHeaders = (ctx: InterfaceContext, contentType: string, options: RawOptions) => ({
  "Content-Type": contentType,
  Accept: options.accept ?? "application/json, application/a2a+json",
  ...versionHeaders("version" in options ? options.version : defaultVersion(ctx)),
  ...(options.credentials === false ? {} : credentialHeaders(credentialsFor(ctx.target, ctx.endpoint.url)))
})

/**
 * The answer with the credentials relay sent masked wherever the agent echoed them: before any check
 * reads it, so no excerpt cut through one can show part of it.
 */
const withoutSentSecrets = (ctx: InterfaceContext) => (response: RawResponse): RawResponse => {
  const message = response.headers["grpc-message"]
  return {
    ...response,
    headers: message === undefined ? response.headers : { ...response.headers, "grpc-message": withoutSecrets(ctx.target, message) },
    text: withoutSecrets(ctx.target, response.text)
  }
}

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
    })).pipe(Effect.map(withoutSentSecrets(ctx)))

const restUrl = (ctx: InterfaceContext, path: string, query: Readonly<Record<string, string>> | undefined) => {
  const search = query === undefined ? "" : `?${new URLSearchParams(query).toString()}`
  return `${ctx.endpoint.url.replace(/\/+$/, "")}${path}${search}`
}

/** One operation exactly as the dialect encodes it, through RawHttp or RawGrpc, to read the answer as sent. */
export const rawOperation = <A>(
  ctx: InterfaceContext,
  wire: WireRequest<A>,
  options: RawOptions = {}
): Effect.Effect<RawResponse, AgentUnreachable | RequestTimeout | InterfaceHostRefused, RawHttp | RawGrpc> => {
  if (wire._tag === "JsonRpc") {
    return rawJsonRpc(
      ctx,
      JSON.stringify({ jsonrpc: "2.0", id: `relay-check-${randomUUID()}`, method: wire.method, params: wire.params }),
      options
    )
  }
  if (wire._tag === "Grpc") return Effect.map(rawGrpc(ctx, wire, options), withoutSentSecrets(ctx))
  const contentType = ctx.id.protocol === "1.0" ? "application/a2a+json" : "application/json"
  return Effect.flatMap(RawHttp, (http) =>
    http.exchange({
      method: wire.verb === "GET" ? "GET" : "POST",
      url: restUrl(ctx, wire.path, wire.query),
      headers: rawHeaders(ctx, contentType, options),
      ...(wire.body === undefined ? {} : { body: JSON.stringify(wire.body) }),
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    })).pipe(Effect.map(withoutSentSecrets(ctx)))
}

// The codec (protobuf and the descriptors) loads with the first gRPC interface checked.
const grpcCodec = Effect.promise(() => import("../../a2a/grpcCodec.js"))
type GrpcCodec = Effect.Effect.Success<typeof grpcCodec>

/** The gRPC status codes the checks read (grpc/doc/statuscodes.md; the codec's table loads only with gRPC). */
export const GRPC_CODES = {
  OK: 0,
  INVALID_ARGUMENT: 3,
  NOT_FOUND: 5,
  PERMISSION_DENIED: 7,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAUTHENTICATED: 16
} as const

/** Plaintext (h2c) only to this machine or a host named with --insecure, as the client has it. */
const plaintextRefused = (ctx: InterfaceContext, url: URL) =>
  url.protocol === "http:" && !isLoopbackHost(url.hostname) && !(ctx.target.insecureHosts ?? []).includes(url.hostname)
    ? Effect.fail(
      new InterfaceHostRefused({
        url: ctx.endpoint.url,
        reason: "the card offers gRPC in plaintext (h2c) on a host other than this machine; name it with --insecure to allow that"
      })
    )
    : Effect.void

const protoJsonOf = (decoded: Either.Either<unknown, string>) =>
  Either.getOrElse(decoded, (reason) => `(a message that does not decode: ${reason})`)

/** A failed call's google.rpc.Status as ProtoJSON (its ErrorInfo as an Any), or the bare code and message. */
const statusJson = (codec: GrpcCodec, answer: RawGrpcResponse) => {
  const status = answer.statusDetails === undefined ? undefined : Either.getOrUndefined(codec.decodeStatusDetails(answer.statusDetails))
  if (status === undefined) return { code: answer.code, message: answer.details }
  const info = status.errorInfo
  return {
    code: status.code,
    message: status.message,
    details: info === undefined ? [] : [{ "@type": ERROR_INFO_TYPE, ...info }]
  }
}

const grpcView = (codec: GrpcCodec, method: NonNullable<ReturnType<GrpcCodec["grpcMethod"]>>, answer: RawGrpcResponse): RawResponse => {
  const messages = answer.messages.map((bytes) => protoJsonOf(method.response.toJson(bytes)))
  const body = answer.code !== GRPC_CODES.OK && messages.length === 0
    ? statusJson(codec, answer)
    : method.serverStreaming
    ? messages
    : messages[0] ?? null
  return {
    status: 200,
    headers: { "content-type": "application/grpc", "grpc-status": String(answer.code), "grpc-message": answer.details },
    text: JSON.stringify(body),
    truncated: answer.truncated
  }
}

/** One gRPC call of the interface's service, its message the dialect's ProtoJSON as bytes, read through RawGrpc. */
const rawGrpc = <A>(ctx: InterfaceContext, wire: Extract<WireRequest<A>, { _tag: "Grpc" }>, options: RawOptions) =>
  Effect.gen(function*() {
    const codec = yield* grpcCodec
    const method = codec.grpcMethod(ctx.endpoint.version, wire.method)
    if (method === undefined) return yield* Effect.dieMessage(`A2A ${ctx.endpoint.version} has no ${wire.method} over gRPC`)
    yield* plaintextRefused(ctx, new URL(ctx.endpoint.url))
    const message = yield* Effect.orDie(method.request.toBinary(wire.message))
    const version = "version" in options ? options.version : defaultVersion(ctx)
    const credentials = options.credentials === false ? {} : credentialHeaders(credentialsFor(ctx.target, ctx.endpoint.url))
    const raw = yield* RawGrpc
    const answer = yield* raw.call({
      url: ctx.endpoint.url,
      path: method.path,
      message,
      metadata: {
        ...(version === undefined ? {} : { "a2a-version": version }),
        ...Object.fromEntries(Object.entries(credentials).map(([key, value]) => [key.toLowerCase(), value]))
      },
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    })
    return grpcView(codec, method, answer)
  })

/** The gRPC status of an answer read by rawOperation, with its ErrorInfo; undefined for an HTTP answer. */
export interface GrpcStatusSeen {
  readonly code: number
  readonly reason: string | undefined
  readonly domain: string | undefined
}

export const grpcStatusOf = (response: RawResponse): GrpcStatusSeen | undefined => {
  const code = response.headers["grpc-status"]
  if (code === undefined) return undefined
  const json = parseJson(response.text)
  const details = Predicate.isRecord(json) && Array.isArray(json["details"]) ? json["details"] : []
  const info = details.find((detail): detail is Record<string, unknown> =>
    Predicate.isRecord(detail) && detail["@type"] === ERROR_INFO_TYPE
  )
  return {
    code: Number(code),
    reason: typeof info?.["reason"] === "string" ? info["reason"] : undefined,
    domain: typeof info?.["domain"] === "string" ? info["domain"] : undefined
  }
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

/** Whether an answer refuses the request as invalid parameters: -32602 over JSON-RPC, 400 with an error body over REST, INVALID_ARGUMENT over gRPC. */
export const refusedAsInvalid = (ctx: InterfaceContext, response: RawResponse): boolean => {
  const error = rawErrorOf(response)
  if (ctx.id.binding === "grpc") return grpcStatusOf(response)?.code === GRPC_CODES.INVALID_ARGUMENT
  return ctx.id.binding === "jsonrpc" ? error?.code === -32602 : response.status === 400 && error !== undefined
}

/** How an invalid-parameters refusal is named on this binding. */
export const invalidName = (ctx: InterfaceContext) =>
  ctx.id.binding === "jsonrpc" ? "-32602 Invalid params" : ctx.id.binding === "grpc" ? "gRPC INVALID_ARGUMENT" : "HTTP 400"

/** "HTTP 200, application/json: {…}": what the agent answered, for a failure's detail (a short, escaped excerpt). */
export const shown = (response: RawResponse) => {
  const grpcStatus = response.headers["grpc-status"]
  if (grpcStatus !== undefined) {
    return `gRPC status ${grpcStatus}${response.headers["grpc-message"] ? ` (${answerExcerpt(response.headers["grpc-message"])})` : ""}: ${
      answerExcerpt(response.text) || "(no message)"
    }`
  }
  const type = response.headers["content-type"]
  return `HTTP ${response.status}${type ? `, ${answerExcerpt(type)}` : ""}: ${answerExcerpt(response.text) || "(empty body)"}`
}
