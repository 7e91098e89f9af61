/**
 * The HTTP+JSON (REST) door of the agent server.
 *
 * - v1.0 paths (`/message:send`, `/tasks/{id}`, `/tasks/{id}:cancel`, `:subscribe` on GET and
 *   POST, `/tasks/{id}/pushNotificationConfigs[/{configId}]`, `/extendedAgentCard`, …), each
 *   also under a `/{tenant}` prefix (accepted and ignored: the server has one tenant).
 * - v0.3 paths under `/v1/…` with the v0.3 proto JSON shapes, when the request speaks 0.3 (no
 *   A2A-Version, or 0.3); with A2A-Version 1.0, `/v1` is a tenant like any other.
 * - The product's own paths (`POST /messages`, `POST /tasks/{id}/cancel`, `GET
 *   /tasks/{id}/stream`, `PUT`/`GET /tasks/{id}/notification`) with the v1.0 shapes.
 *
 * v1.0 errors are google.rpc.Status bodies (`{"error":{code,status,message,details}}`) with the
 * table's HTTP status; v0.3 errors are `{code,message}` with the same status.
 */
import { Effect, Either, type ParseResult, Predicate, type Schema } from "effect"
import { errorInfoDetail } from "../../a2a/errors.js"
import { describeParseError } from "../../a2a/parseProblems.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import * as ProtoJson from "../../a2a/protoJson.js"
import { knownJson } from "../../a2a/taskJson.js"
import * as T from "../../a2a/translate.js"
import * as V1 from "../../a2a/v1.js"
import {
  type AgentRequestError,
  contentTypeNotSupported,
  invalidParams,
  invalidParamsAt,
  versionNotSupported
} from "../../domain/agentErrors.js"
import { type Exchange, headerValue, writeEmpty, writeJson } from "../exchange.js"
import { WWW_AUTHENTICATE } from "./auth.js"
import { isJsonContentType, nestingProblem, parseJsonBody, unexpectedFailure } from "./io.js"
import {
  type AgentServices,
  execute,
  type Operation,
  type ResultCodec,
  type ServerContext,
  v03RestCodec,
  v1Codec,
  writeOutcome
} from "./operations.js"
import { writeSse } from "./sse.js"
import { type VersionRequest, versionRequest } from "./versions.js"

/** What a request carries besides its path. */
export interface RestInput {
  readonly body: unknown
  readonly query: Readonly<Record<string, string>>
}

export type Build = (input: RestInput) => Either.Either<Operation, AgentRequestError>

export interface RestRoute {
  readonly generation: ProtocolVersion
  /** Whether the body is parsed as JSON (POST and PUT). */
  readonly hasBody: boolean
  /** HTTP status of a success without events. */
  readonly status: number
  readonly build: Build
}

export type RouteMatch =
  | { readonly _tag: "Route"; readonly route: RestRoute }
  | { readonly _tag: "NotFound" }
  | { readonly _tag: "VersionNotSupported"; readonly version: string }

/** A request that cannot be read: one sentence naming the field (query parameters and body fields alike). */
const formatError = (error: ParseResult.ParseError) => invalidParamsAt(describeParseError(error, "the request body"))

const decodingWith = <A>(decode: (input: unknown) => Either.Either<A, ParseResult.ParseError>) => (input: unknown) =>
  Either.mapLeft(decode(input), formatError)

/** Bodies and query strings are ProtoJSON: either name of every field, enums by name or number. */
const decoding = <A, I>(schema: Schema.Schema<A, I>) => decodingWith(ProtoJson.decoderEither(schema))

const bodyObject = (body: unknown): Record<string, unknown> => (Predicate.isRecord(body) ? body : {})

const route = (generation: ProtocolVersion, hasBody: boolean, build: Build, status = 200): RouteMatch => ({
  _tag: "Route",
  route: { generation, hasBody, status, build }
})

const decodeSend = decodingWith(V1.decodeSendMessageRequest)
const decodeGetTask = decoding(V1.GetTaskRequest)
const decodeListTasks = decoding(V1.ListTasksRequest)
const decodeCancel = decoding(V1.CancelTaskRequest)
const decodePushConfig = decoding(V1.TaskPushNotificationConfig)
const decodeListPushConfigs = decoding(V1.ListTaskPushNotificationConfigsRequest)
const decodeSendV03 = decoding(T.SendRequestAsV03Rest)
const decodePushConfigV03 = decoding(T.PushConfigAsV03Rest)

// Body fields are overridden by the path: the task id in the URL is the one that counts.
const sendOp = (tag: "SendMessage" | "SendStreamingMessage"): Build => ({ body }) =>
  Either.map(decodeSend(body), (request) => ({ _tag: tag, request }))
const getTaskOp = (id: string): Build => ({ query }) =>
  Either.map(decodeGetTask({ ...query, id }), (request) => ({ _tag: "GetTask", request }))
const cancelOp = (id: string): Build => ({ body }) =>
  Either.map(decodeCancel({ ...bodyObject(body), id }), (request) => ({ _tag: "CancelTask", request }))
const subscribeOp = (id: string): Build => () => Either.right({ _tag: "SubscribeToTask", request: { id } })
const createPushOp = (taskId: string): Build => ({ body }) =>
  Either.map(decodePushConfig({ ...bodyObject(body), taskId }), (config) => ({ _tag: "CreatePushConfig", config }))
const listPushOp = (taskId: string): Build => ({ query }) =>
  Either.map(decodeListPushConfigs({ ...query, taskId }), (request) => ({ _tag: "ListPushConfigs", request }))
const getPushOp = (taskId: string, id: string | undefined): Build => () => Either.right({ _tag: "GetPushConfig", request: { taskId, id } })
const deletePushOp = (taskId: string, id: string): Build => () => Either.right({ _tag: "DeletePushConfig", request: { taskId, id } })

/** `abc:cancel` → ["abc", "cancel"]; the verb follows the last colon of the raw segment. */
const splitVerb = (segment: string): readonly [string, string | undefined] => {
  const colon = segment.lastIndexOf(":")
  return colon < 0 ? [segment, undefined] : [segment.slice(0, colon), segment.slice(colon + 1)]
}

const decodeSegment = (segment: string): string | undefined => {
  try {
    return decodeURIComponent(segment)
  } catch {
    return undefined
  }
}

/** The product's own task paths (SPEC §4.2), beside the A2A ones in v1.0. */
const matchSpecTaskPath = (method: string, id: string, third: string): RouteMatch | undefined => {
  if (third === "cancel" && method === "POST") return route("1.0", true, cancelOp(id))
  if (third === "stream" && method === "GET") return route("1.0", false, subscribeOp(id))
  if (third === "notification" && method === "PUT") return route("1.0", true, createPushOp(id))
  if (third === "notification" && method === "GET") {
    return route("1.0", false, ({ query }) => Either.right({ _tag: "GetPushConfig", request: { taskId: id, id: query["id"] } }))
  }
  return undefined
}

/** `/tasks/{id}[:cancel|:subscribe]` and `/tasks/{id}/pushNotificationConfigs[/{configId}]`, alike in both generations. */
const matchTaskPath = (
  generation: ProtocolVersion,
  method: string,
  [rawId, third, rawConfigId]: readonly [string, string | undefined, string | undefined],
  createPush: (taskId: string) => Build
): RouteMatch | undefined => {
  const [idPart, verb] = third === undefined ? splitVerb(rawId) : [rawId, undefined]
  const id = decodeSegment(idPart)
  if (id === undefined || id === "") return undefined
  if (third === undefined) {
    if (verb === undefined && method === "GET") return route(generation, false, getTaskOp(id))
    if (verb === "cancel" && method === "POST") return route(generation, true, cancelOp(id))
    if (verb === "subscribe" && (method === "GET" || method === "POST")) return route(generation, method === "POST", subscribeOp(id))
    return undefined
  }
  if (third === "pushNotificationConfigs") {
    if (rawConfigId === undefined) {
      if (method === "POST") return route(generation, true, createPush(id), 201)
      if (method === "GET") return route(generation, false, listPushOp(id))
      return undefined
    }
    const configId = decodeSegment(rawConfigId)
    if (configId === undefined) return undefined
    if (method === "GET") return route(generation, false, getPushOp(id, configId))
    if (method === "DELETE") return route(generation, false, deletePushOp(id, configId), 204)
    return undefined
  }
  return generation === "1.0" && rawConfigId === undefined ? matchSpecTaskPath(method, id, third) : undefined
}

/** The v1.0 routes (path without any tenant). */
const matchV1 = (method: string, segments: ReadonlyArray<string>): RouteMatch | undefined => {
  const [first, rawId, third, rawConfigId, ...rest] = segments
  if (rest.length > 0 || first === undefined) return undefined
  if (rawId === undefined) {
    if (first === "message:send" && method === "POST") return route("1.0", true, sendOp("SendMessage"))
    if (first === "message:stream" && method === "POST") return route("1.0", true, sendOp("SendStreamingMessage"))
    if (first === "messages" && method === "POST") return route("1.0", true, sendOp("SendMessage"))
    if (first === "tasks" && method === "GET") {
      return route("1.0", false, ({ query }) => Either.map(decodeListTasks(query), (request) => ({ _tag: "ListTasks", request })))
    }
    if (first === "extendedAgentCard" && method === "GET") return route("1.0", false, () => Either.right({ _tag: "GetExtendedAgentCard" }))
    return undefined
  }
  return first === "tasks" ? matchTaskPath("1.0", method, [rawId, third, rawConfigId], createPushOp) : undefined
}

/** A v0.3 create body: the proto request `{parent, configId, config}` or a bare config `{name, pushNotificationConfig}`. */
export const createPushV03Op = (taskId: string): Build => ({ body }) => {
  const record = bodyObject(body)
  const config = Predicate.isRecord(record["config"]) ? record["config"] : record
  return Either.map(
    decodePushConfigV03({ name: `tasks/${taskId}/pushNotificationConfigs/`, ...config }),
    (decoded) => ({ _tag: "CreatePushConfig", config: { ...decoded, taskId } })
  )
}

/**
 * v0.3 REST bodies are proto JSON, which leaves out false booleans: a configuration without
 * `blocking` asks not to block (as @a2a-js 0.3 reads it). Without a configuration the send blocks.
 */
const withProtoBlocking = (body: unknown, request: V1.SendMessageRequest): V1.SendMessageRequest => {
  const configuration = bodyObject(body)["configuration"]
  if (!Predicate.isRecord(configuration) || "blocking" in configuration) return request
  return { ...request, configuration: { ...request.configuration, returnImmediately: true } }
}

export const sendV03Op = (tag: "SendMessage" | "SendStreamingMessage"): Build => ({ body }) =>
  Either.map(decodeSendV03(body), (request) => ({ _tag: tag, request: withProtoBlocking(body, request) }))

/** The v0.3 routes under /v1 (path after "v1"). */
const matchV03 = (method: string, segments: ReadonlyArray<string>): RouteMatch | undefined => {
  const [first, rawId, third, rawConfigId, ...rest] = segments
  if (rest.length > 0 || first === undefined) return undefined
  if (rawId === undefined) {
    if (first === "card" && method === "GET") return route("0.3", false, () => Either.right({ _tag: "GetExtendedAgentCard" }))
    if (first === "message:send" && method === "POST") return route("0.3", true, sendV03Op("SendMessage"))
    if (first === "message:stream" && method === "POST") return route("0.3", true, sendV03Op("SendStreamingMessage"))
    return undefined
  }
  // The v0.3 proto routes the create at `/v1/{parent=task/*/pushNotificationConfigs}`, with a singular `task`.
  if (first === "task" && third === "pushNotificationConfigs" && rawConfigId === undefined && method === "POST") {
    const id = decodeSegment(rawId)
    return id === undefined || id === "" ? undefined : route("0.3", true, createPushV03Op(id), 201)
  }
  return first === "tasks" ? matchTaskPath("0.3", method, [rawId, third, rawConfigId], createPushV03Op) : undefined
}

/**
 * The route for a method and path. `/v1/…` is v0.3 when the request speaks 0.3; everything
 * else is v1.0, optionally after a tenant segment, and served as 1.0 when no version is sent
 * (no 0.3 operation lives there); an explicit other version is refused.
 */
export const matchRoute = (method: string, path: string, version: VersionRequest): RouteMatch => {
  const segments = path.split("/").filter((segment) => segment !== "")
  const speaksV03 = version._tag === "Missing" || (version._tag === "Supported" && version.generation === "0.3")
  if (segments[0] === "v1" && speaksV03) return matchV03(method, segments.slice(1)) ?? { _tag: "NotFound" }
  const matched = matchV1(method, segments) ?? (segments.length > 1 ? matchV1(method, segments.slice(1)) : undefined)
  if (matched === undefined) return { _tag: "NotFound" }
  if (version._tag === "Unsupported") return { _tag: "VersionNotSupported", version: version.version }
  if (version._tag === "Supported" && version.generation !== "1.0") return { _tag: "VersionNotSupported", version: "0.3" }
  return matched
}

// ---------------------------------------------------------------------------
// Answers

const A2A_JSON = "application/a2a+json"
const JSON_TYPE = "application/json"

const statusJson = (code: number, status: string, message: string, details: ReadonlyArray<unknown>) =>
  JSON.stringify({ error: { code, status, message, details } })

/** The error body of a generation: google.rpc.Status for 1.0, `{code, message}` for 0.3. */
const errorBody = (generation: ProtocolVersion, error: AgentRequestError) =>
  generation === "1.0"
    ? statusJson(error.spec.httpStatus, error.spec.grpcStatus, error.message, [errorInfoDetail(error.spec.reason, error.metadata)])
    : JSON.stringify({ code: error.spec.jsonRpcCode, message: error.message })

const answerError = (exchange: Exchange, generation: ProtocolVersion, error: AgentRequestError) =>
  writeJson(exchange, error.spec.httpStatus, errorBody(generation, error), generation === "1.0" ? A2A_JSON : JSON_TYPE)

/** 413, closing the connection: the rest of an oversized upload is not worth reading. */
const tooLarge = (exchange: Exchange, generation: ProtocolVersion, bytes: number, limit: number) => {
  const message = `The request body (${bytes} bytes) exceeds the limit of ${limit} bytes`
  const body = generation === "1.0"
    ? statusJson(413, "RESOURCE_EXHAUSTED", message, [])
    : JSON.stringify({ code: invalidParams("").spec.jsonRpcCode, message })
  return writeJson(exchange, 413, body, generation === "1.0" ? A2A_JSON : JSON_TYPE, { connection: "close" })
}

const unauthorized = (exchange: Exchange) =>
  writeJson(exchange, 401, statusJson(401, "UNAUTHENTICATED", "Missing or invalid API key", []), A2A_JSON, {
    "www-authenticate": WWW_AUTHENTICATE
  })

const notFound = (exchange: Exchange) => {
  const message = `No A2A operation at ${exchange.method} ${exchange.path}`
  return writeJson(exchange, 404, statusJson(404, "NOT_FOUND", message, []), A2A_JSON)
}

const queryOf = (url: string): Record<string, string> => {
  const start = url.indexOf("?")
  return start < 0 ? {} : Object.fromEntries(new URLSearchParams(url.slice(start + 1)))
}

const codecOf = (generation: ProtocolVersion): ResultCodec => (generation === "1.0" ? v1Codec : v03RestCodec)

/**
 * The REST endpoint: every path that is not the card, /health or JSON-RPC. Everything before the
 * operation runs is plain code (an error is written at once); the operation is the one effect,
 * its answer written when it ends.
 */
export const makeRestHandler = (context: ServerContext) => (exchange: Exchange): Effect.Effect<void, never, AgentServices> => {
  const { headers, url } = exchange
  const matched = matchRoute(exchange.method, exchange.path, versionRequest(headers, url))
  if (matched._tag === "NotFound") return Effect.sync(() => notFound(exchange))
  if (context.checkKey !== undefined && !context.checkKey(headers)) return Effect.sync(() => unauthorized(exchange))
  if (matched._tag === "VersionNotSupported") {
    const error = versionNotSupported(`A2A-Version ${matched.version} is not supported on this path; use 1.0`)
    return Effect.sync(() => answerError(exchange, "1.0", error))
  }
  const { generation, hasBody, status, build } = matched.route
  const refuse = (error: AgentRequestError) => Effect.sync(() => answerError(exchange, generation, error))
  let body: unknown = undefined
  if (hasBody) {
    const contentType = headerValue(headers, "content-type")
    if (!isJsonContentType(contentType)) {
      return refuse(contentTypeNotSupported(`Content-Type ${contentType} is not supported; send application/json`))
    }
    const read = exchange.body
    if (read._tag === "Broken") return Effect.sync(() => writeEmpty(exchange, 400))
    if (read._tag === "TooLarge") return Effect.sync(() => tooLarge(exchange, generation, read.bytes, read.limit))
    const parsed = parseJsonBody(read, true)
    if (Either.isLeft(parsed)) return refuse(parsed.left)
    const tooDeep = nestingProblem(parsed.right)
    if (tooDeep !== undefined) return refuse(tooDeep)
    body = parsed.right
  }
  const operation = build({ body, query: queryOf(url) })
  if (Either.isLeft(operation)) return refuse(operation.left)
  const codec = codecOf(generation)
  const fail = (error: AgentRequestError) => answerError(exchange, generation, error)
  return Effect.matchEffect(execute(operation.right, generation), {
    onFailure: (error) => Effect.sync(() => fail(error)),
    onSuccess: (result) => {
      if (result._tag === "Events") {
        return writeSse(exchange, result.value, (event) => JSON.stringify(codec.event(event)), (error) => errorBody(generation, error))
      }
      if (result._tag === "Deleted") return Effect.sync(() => writeEmpty(exchange, 204))
      return writeOutcome(
        codec,
        result,
        () => context.extendedCard(exchange),
        (json) => writeJson(exchange, status, knownJson(json) ?? JSON.stringify(json), generation === "1.0" ? A2A_JSON : JSON_TYPE),
        fail
      )
    }
  })
}

/** The 500 of a defect on a REST route, in that route's error shape, never a stack. */
export const answerInternalError = (exchange: Exchange): void => {
  const matched = matchRoute(exchange.method, exchange.path, versionRequest(exchange.headers, exchange.url))
  const generation = matched._tag === "Route" ? matched.route.generation : "1.0"
  answerError(exchange, generation, unexpectedFailure())
}
