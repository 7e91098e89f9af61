/**
 * The JSON-RPC door of the agent server (`POST /`), for both protocol versions.
 *
 * The version comes from A2A-Version: 1.0 serves the PascalCase methods, 0.3 the slash-named
 * ones, and a missing header means 0.3 as the spec says, except that a v1.0 method name
 * without the header is served as 1.0 (a client that names SendMessage means 1.0).
 * Errors follow the order JSON-RPC 2.0 implies: -32700 bad JSON; -32600 a broken envelope (not
 * an object, `jsonrpc` not "2.0", `method` missing or not a string, an `id` of the wrong type;
 * 413 for a body over the limit); -32009 a version we do not speak; -32601 an unknown method;
 * -32602 bad params (nesting past the limit included); then -32600 again for a request without
 * an `id` (A2A has no notifications, so such a request is answered, with `"id": null`, by the
 * error its content deserves, and only a request that is otherwise fine is told it needs an id);
 * then the A2A codes. Each error has an ErrorInfo detail and a message of one sentence naming
 * the field. Streaming methods answer SSE whose every event is a JSON-RPC response carrying the
 * request's id, errors before the first event included (see answerInStream).
 */
import { Effect, Either, type ParseResult, Predicate, type Schema } from "effect"
import { errorInfoDetail } from "../../a2a/errors.js"
import { describeParseError } from "../../a2a/parseProblems.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import * as ProtoJson from "../../a2a/protoJson.js"
import { knownJson } from "../../a2a/taskJson.js"
import * as T from "../../a2a/translate.js"
import * as V03 from "../../a2a/v03.js"
import * as V1 from "../../a2a/v1.js"
import {
  type AgentRequestError,
  contentTypeNotSupported,
  invalidParams,
  invalidParamsAt,
  invalidRequest,
  methodNotFound,
  versionNotSupported
} from "../../domain/agentErrors.js"
import { type Exchange, headerValue, writeEmpty, writeJson } from "../exchange.js"
import { WWW_AUTHENTICATE } from "./auth.js"
import { isJsonContentType, isRequestId, nestingProblem, parseJsonBody, type RequestId, requestIdIn, unexpectedFailure } from "./io.js"
import {
  type AgentServices,
  execute,
  type Operation,
  type ResultCodec,
  type ServerContext,
  v03JsonRpcCodec,
  v1Codec,
  writeOutcome
} from "./operations.js"
import { writeSse, writeSseError } from "./sse.js"
import { versionRequest } from "./versions.js"

type ParamsDecoder = (params: unknown) => Either.Either<Operation, ParseResult.ParseError>

/** Decodes `params` with `schema` (a missing `params` as `{}` when `optional`) and builds the operation. */
const method = <A, I>(
  schema: Schema.Schema<A, I>,
  build: (value: A) => Operation,
  optional = false
): ParamsDecoder => decodedWith(ProtoJson.decoderEither(schema), build, optional)

const decodedWith = <A>(
  decode: (params: unknown) => Either.Either<A, ParseResult.ParseError>,
  build: (value: A) => Operation,
  optional = false
): ParamsDecoder =>
(params) => Either.map(decode(params === undefined && optional ? {} : params), build)

/** The 1.0 methods by name, whose params are the 1.0 request messages (the gRPC door reads the same ones). */
export const V1_METHODS: Readonly<Record<string, ParamsDecoder>> = {
  SendMessage: decodedWith(V1.decodeSendMessageRequest, (request) => ({ _tag: "SendMessage", request })),
  SendStreamingMessage: decodedWith(V1.decodeSendMessageRequest, (request) => ({ _tag: "SendStreamingMessage", request })),
  GetTask: method(V1.GetTaskRequest, (request) => ({ _tag: "GetTask", request })),
  ListTasks: method(V1.ListTasksRequest, (request) => ({ _tag: "ListTasks", request }), true),
  CancelTask: method(V1.CancelTaskRequest, (request) => ({ _tag: "CancelTask", request })),
  SubscribeToTask: method(V1.SubscribeToTaskRequest, (request) => ({ _tag: "SubscribeToTask", request })),
  CreateTaskPushNotificationConfig: method(V1.TaskPushNotificationConfig, (config) => ({ _tag: "CreatePushConfig", config })),
  GetTaskPushNotificationConfig: method(V1.TaskPushNotificationConfigRequest, (request) => ({ _tag: "GetPushConfig", request })),
  ListTaskPushNotificationConfigs: method(
    V1.ListTaskPushNotificationConfigsRequest,
    (request) => ({ _tag: "ListPushConfigs", request })
  ),
  DeleteTaskPushNotificationConfig: method(
    V1.TaskPushNotificationConfigRequest,
    (request) => ({ _tag: "DeletePushConfig", request })
  ),
  GetExtendedAgentCard: method(V1.GetExtendedAgentCardRequest, () => ({ _tag: "GetExtendedAgentCard" }), true)
}

const V03_METHODS: Readonly<Record<string, ParamsDecoder>> = {
  "message/send": decodedWith(T.decodeSendRequestV03, (request) => ({ _tag: "SendMessage", request })),
  "message/stream": decodedWith(T.decodeSendRequestV03, (request) => ({ _tag: "SendStreamingMessage", request })),
  "tasks/get": method(V03.TaskQueryParams, ({ id, historyLength }) => ({
    _tag: "GetTask",
    request: historyLength === undefined ? { id } : { id, historyLength }
  })),
  "tasks/cancel": method(V03.TaskIdParams, ({ id }) => ({ _tag: "CancelTask", request: { id } })),
  "tasks/resubscribe": method(V03.TaskIdParams, ({ id }) => ({ _tag: "SubscribeToTask", request: { id } })),
  "tasks/pushNotificationConfig/set": method(T.PushConfigAsV03, (config) => ({ _tag: "CreatePushConfig", config })),
  "tasks/pushNotificationConfig/get": method(V03.GetTaskPushNotificationConfigParams, (params) => ({
    _tag: "GetPushConfig",
    request: { taskId: params.id, id: params.pushNotificationConfigId }
  })),
  "tasks/pushNotificationConfig/list": method(V03.TaskIdParams, ({ id }) => ({
    _tag: "ListPushConfigs",
    request: { taskId: id }
  })),
  "tasks/pushNotificationConfig/delete": method(V03.DeleteTaskPushNotificationConfigParams, (params) => ({
    _tag: "DeletePushConfig",
    request: { taskId: params.id, id: params.pushNotificationConfigId }
  })),
  "agent/getAuthenticatedExtendedCard": () => Either.right({ _tag: "GetExtendedAgentCard" })
}

const hasOwn = (table: Readonly<Record<string, ParamsDecoder>>, name: string) => Object.hasOwn(table, name)

interface Dialect {
  readonly generation: ProtocolVersion
  readonly decode: ParamsDecoder
}

/** The method's decoder under the requested version, or the error that says why there is none. */
export const resolveMethod = (
  name: string,
  version: ReturnType<typeof versionRequest>
): Either.Either<Dialect, AgentRequestError> => {
  switch (version._tag) {
    case "Unsupported":
      return Either.left(versionNotSupported(`A2A-Version ${version.version} is not supported; this agent speaks 1.0 and 0.3`))
    case "Missing":
      if (hasOwn(V03_METHODS, name)) return Either.right({ generation: "0.3", decode: V03_METHODS[name]! })
      if (hasOwn(V1_METHODS, name)) return Either.right({ generation: "1.0", decode: V1_METHODS[name]! })
      return Either.left(methodNotFound(`Method not found: ${name}`))
    case "Supported": {
      const table = version.generation === "1.0" ? V1_METHODS : V03_METHODS
      if (hasOwn(table, name)) return Either.right({ generation: version.generation, decode: table[name]! })
      const other = version.generation === "1.0" ? "0.3 (no A2A-Version header)" : "1.0 (A2A-Version: 1.0)"
      const known = hasOwn(version.generation === "1.0" ? V03_METHODS : V1_METHODS, name)
      return Either.left(methodNotFound(
        `Method not found: ${name}${known ? ` is a method of protocol ${other}, not of ${version.generation}` : ""}`
      ))
    }
  }
}

// ---------------------------------------------------------------------------
// Answers

const JSON_TYPE = "application/json"

/**
 * The envelope around the result's JSON: a finished task's text as the storage made it (see
 * a2a/taskJson.ts), else one stringify of the whole envelope (a flat string: pieces joined around a
 * stringified result would be flattened again to be written).
 */
const resultJson = (id: RequestId, result: unknown) => {
  const known = knownJson(result)
  return known === undefined
    ? JSON.stringify({ jsonrpc: "2.0", id, result })
    : `{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":${known}}`
}

const errorJson = (id: RequestId, error: AgentRequestError) =>
  JSON.stringify({
    jsonrpc: "2.0",
    id,
    error: { code: error.spec.jsonRpcCode, message: error.message, data: [errorInfoDetail(error.spec.reason, error.metadata)] }
  })

const answerError = (exchange: Exchange, id: RequestId, error: AgentRequestError, status = 200) =>
  writeJson(exchange, status, errorJson(id, error), JSON_TYPE, status === 413 ? { connection: "close" } : undefined)

const unauthorized = (exchange: Exchange, id: RequestId) =>
  writeJson(
    exchange,
    401,
    JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32000, message: "Unauthorized: missing or invalid API key" } }),
    JSON_TYPE,
    { "www-authenticate": WWW_AUTHENTICATE }
  )

/**
 * Errors of a streaming method come as its stream: 200 text/event-stream with one `event: error`
 * frame (the JSON-RPC error with the request's id), then the end. The spec gives streaming
 * methods an SSE response and leaves an error before the first event open. Every official client
 * reads this form (a2a-python 0.3 and 1.x, a2a-js 0.3 and 1.x, a2a-go), while a plain JSON body
 * is lost on three of them: a2a-python 0.3 and a2a-js 0.3 refuse a response that is not an event
 * stream, a2a-go reads only `data:` lines. The Go and 0.3 Python servers answer with a stream too.
 */
const STREAMING_METHODS: ReadonlySet<string> = new Set(["SendStreamingMessage", "SubscribeToTask", "message/stream", "tasks/resubscribe"])

const answerInStream = (exchange: Exchange, id: RequestId, error: AgentRequestError) => writeSseError(exchange, errorJson(id, error))

interface Envelope {
  /** The id to answer with: the request's, or null when it had none (or an unusable one). */
  readonly id: RequestId
  /** Whether the request carried an id at all. */
  readonly hasId: boolean
  readonly method: string
  readonly params: unknown
}

type EnvelopeError = { readonly id: RequestId; readonly error: AgentRequestError }

/** The -32600 rung: only what makes the request unreadable as JSON-RPC 2.0. */
const checkEnvelope = (body: unknown): Either.Either<Envelope, EnvelopeError> => {
  if (Array.isArray(body)) {
    return Either.left({ id: null, error: invalidRequest("Batch requests are not supported; send one request object") })
  }
  if (!Predicate.isRecord(body)) return Either.left({ id: null, error: invalidRequest("The request must be a JSON object") })
  const hasId = "id" in body
  const id = hasId && isRequestId(body["id"]) ? body["id"] : null
  if (body["jsonrpc"] !== "2.0") return Either.left({ id, error: invalidRequest("jsonrpc must be \"2.0\"") })
  if (!("method" in body)) return Either.left({ id, error: invalidRequest("method is required") })
  if (typeof body["method"] !== "string") return Either.left({ id, error: invalidRequest("method must be a string") })
  if (hasId && !isRequestId(body["id"])) {
    return Either.left({ id: null, error: invalidRequest("id must be a string, a number or null") })
  }
  return Either.right({ id, hasId, method: body["method"], params: body["params"] })
}

/** The -32602 rung: params that are not an object, or that the method cannot read. */
const decodeParams = (dialect: Dialect, params: unknown): Either.Either<Operation, AgentRequestError> => {
  if (params !== undefined && !Predicate.isRecord(params)) return Either.left(invalidParams("params must be an object"))
  return Either.mapLeft(dialect.decode(params), (error) => invalidParamsAt(describeParseError(error, "params")))
}

/** A request that is fine but for its missing id: A2A has no notifications. */
const missingId = invalidRequest("A2A requests need an id: add \"id\" (a string or a number) to the request")

/** Everything a request must pass before it is run: the rungs of the JSON-RPC error ladder in order. */
const readRequest = (
  body: unknown,
  version: ReturnType<typeof versionRequest>
): Either.Either<
  { readonly id: RequestId; readonly dialect: Dialect; readonly operation: Operation; readonly streaming: boolean },
  EnvelopeError & { readonly streaming?: boolean }
> =>
  Either.flatMap(checkEnvelope(body), (envelope) => {
    const streaming = STREAMING_METHODS.has(envelope.method)
    const fail = (error: AgentRequestError) => Either.left({ id: envelope.id, error, streaming })
    const dialect = resolveMethod(envelope.method, version)
    if (Either.isLeft(dialect)) return fail(dialect.left)
    const tooDeep = nestingProblem(body)
    if (tooDeep !== undefined) return fail(tooDeep)
    const operation = decodeParams(dialect.right, envelope.params)
    if (Either.isLeft(operation)) return fail(operation.left)
    if (!envelope.hasId) return fail(missingId)
    return Either.right({ id: envelope.id, dialect: dialect.right, operation: operation.right, streaming })
  })

const codecOf = (generation: ProtocolVersion): ResultCodec => (generation === "1.0" ? v1Codec : v03JsonRpcCodec)

/**
 * The JSON-RPC endpoint. Everything before the operation runs is plain code (an error is written
 * at once); the operation is the one effect, its answer written when it ends.
 */
export const makeJsonRpcHandler = (context: ServerContext) => (exchange: Exchange): Effect.Effect<void, never, AgentServices> => {
  const headers = exchange.headers
  if (context.checkKey !== undefined && !context.checkKey(headers)) {
    return Effect.sync(() => unauthorized(exchange, requestIdIn(exchange.body)))
  }
  const contentType = headerValue(headers, "content-type")
  if (!isJsonContentType(contentType)) {
    return Effect.sync(() =>
      answerError(exchange, null, contentTypeNotSupported(`Content-Type ${contentType} is not supported; send application/json`))
    )
  }
  const body = exchange.body
  if (body._tag === "Broken") return Effect.sync(() => writeEmpty(exchange, 400))
  if (body._tag === "TooLarge") {
    return Effect.sync(() =>
      answerError(
        exchange,
        null,
        invalidRequest(`The request body (${body.bytes} bytes) exceeds the limit of ${body.limit} bytes`),
        413
      )
    )
  }
  const parsed = parseJsonBody(body, false)
  if (Either.isLeft(parsed)) return Effect.sync(() => answerError(exchange, null, parsed.left))
  const request = readRequest(parsed.right, versionRequest(headers, exchange.url))
  if (Either.isLeft(request)) {
    const { id, error, streaming } = request.left
    return Effect.sync(() => (streaming === true ? answerInStream : answerError)(exchange, id, error))
  }
  const { id, dialect, operation, streaming } = request.right
  const fail = streaming ? answerInStream : answerError
  const codec = codecOf(dialect.generation)
  return Effect.matchEffect(execute(operation, dialect.generation), {
    onFailure: (error) => Effect.sync(() => fail(exchange, id, error)),
    onSuccess: (result) =>
      result._tag === "Events"
        ? writeSse(exchange, result.value, (event) => resultJson(id, codec.event(event)), (error) => errorJson(id, error))
        : writeOutcome(
          codec,
          result,
          () => context.extendedCard(exchange),
          (json) => writeJson(exchange, 200, resultJson(id, json), JSON_TYPE),
          (error) => answerError(exchange, id, error)
        )
  })
}

/** The 500 of a defect on the JSON-RPC route: a JSON-RPC error with the request's id when it can be read, never a stack. */
export const answerInternalError = (exchange: Exchange): void => answerError(exchange, requestIdIn(exchange.body), unexpectedFailure(), 500)
