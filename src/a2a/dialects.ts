/**
 * How each A2A operation goes on the wire, for the six dialects we speak:
 * JSON-RPC, HTTP+JSON (REST) and gRPC, each at protocol 1.0 and 0.3.
 *
 * Pure: an operation becomes a `WireRequest` (method name and params, HTTP verb, path and body,
 * or gRPC method and message as ProtoJSON) plus a decoder into the v1.0 domain model. The
 * A2aClient service does the I/O; gRPC messages become bytes there (grpcCodec.ts), the very
 * ProtoJSON the REST bodies are.
 */
import { Effect, type ParseResult, Schema } from "effect"
import { type ProtocolVersion, SUPPORTED_VERSIONS } from "./protocolVersion.js"
import * as ProtoJson from "./protoJson.js"
import { repeated } from "./schemaFields.js"
import * as T from "./translate.js"
import * as V1 from "./v1.js"

export type Binding = "JSONRPC" | "HTTP+JSON" | "GRPC"

export const SUPPORTED_BINDINGS: ReadonlyArray<Binding> = ["JSONRPC", "HTTP+JSON", "GRPC"]

type Decoder<A> = (json: unknown) => Effect.Effect<A, ParseResult.ParseError>

export type HttpVerb = "GET" | "POST" | "DELETE"

export type WireRequest<A> =
  | {
    readonly _tag: "JsonRpc"
    readonly method: string
    readonly params: unknown
    readonly decode: Decoder<A>
  }
  | {
    readonly _tag: "Rest"
    readonly verb: HttpVerb
    /** Relative to the interface URL, starting with "/". */
    readonly path: string
    readonly query?: Readonly<Record<string, string>>
    readonly body?: unknown
    /** Tried when the agent answers 404/405 to `verb` (the spec disagrees with itself on :subscribe). */
    readonly fallbackVerb?: HttpVerb
    readonly decode: Decoder<A>
  }
  | {
    readonly _tag: "Grpc"
    /** The proto's method name in the generation's service (grpcCodec.ts), e.g. `SendMessage`. */
    readonly method: string
    /** The request message as ProtoJSON. */
    readonly message: unknown
    readonly decode: Decoder<A>
  }

type Op<I, A> = (input: I) => Effect.Effect<WireRequest<A>, ParseResult.ParseError>

export interface Dialect {
  readonly binding: Binding
  readonly version: ProtocolVersion
  readonly send: Op<V1.SendMessageRequest, V1.SendMessageResponse>
  /** Each SSE event is decoded with the request's decoder. */
  readonly stream: Op<V1.SendMessageRequest, V1.StreamResponse>
  readonly getTask: Op<V1.GetTaskRequest, V1.Task>
  /** Undefined where the protocol version has no such operation (v0.3). */
  readonly listTasks: Op<V1.ListTasksRequest, V1.ListTasksResponse> | undefined
  readonly cancelTask: Op<V1.CancelTaskRequest, V1.Task>
  readonly subscribe: Op<V1.SubscribeToTaskRequest, V1.StreamResponse>
  readonly createPushConfig: Op<V1.TaskPushNotificationConfig, V1.TaskPushNotificationConfig>
  readonly getPushConfig: Op<V1.TaskPushNotificationConfigRequest, V1.TaskPushNotificationConfig>
  readonly listPushConfigs: Op<V1.ListTaskPushNotificationConfigsRequest, ReadonlyArray<V1.TaskPushNotificationConfig>>
  readonly deletePushConfig: Op<V1.TaskPushNotificationConfigRequest, void>
  /** The raw card JSON; the client reads it with cardFromWire like any card. */
  readonly extendedCard: Op<void, unknown>
}

/** Answers are ProtoJSON: either name of every field, enums by name or number. */
const decoderOf = <A, I>(schema: Schema.Schema<A, I>): Decoder<A> => ProtoJson.decoder(schema)
/**
 * The answers read most often, through the model's fast paths: a canonical value is taken as it
 * is, anything else goes through its schema (v1.ts; property tests hold each equal to the schema).
 */
const decodeTask: Decoder<V1.Task> = V1.decodeTask
const decodeSendResponse: Decoder<V1.SendMessageResponse> = V1.decodeSendMessageResponse
const decodeStreamResponse: Decoder<V1.StreamResponse> = V1.decodeStreamResponse
const ignoreResult: Decoder<void> = () => Effect.void
const passThrough: Decoder<unknown> = Effect.succeed

const rpc = <A>(method: string, params: unknown, decode: Decoder<A>): WireRequest<A> => ({
  _tag: "JsonRpc",
  method,
  params,
  decode
})

const grpc = <A>(method: string, message: unknown, decode: Decoder<A>): WireRequest<A> => ({
  _tag: "Grpc",
  method,
  message,
  decode
})

const rest = <A>(
  verb: HttpVerb,
  path: string,
  decode: Decoder<A>,
  extra: { readonly body?: unknown; readonly query?: Record<string, string>; readonly fallbackVerb?: HttpVerb } = {}
): WireRequest<A> => ({ _tag: "Rest", verb, path, decode, ...extra })

const segment = encodeURIComponent

type Scalar = string | number | boolean | undefined

/** The entries whose value is defined. */
const definedOnly = (entries: Record<string, Scalar>): Record<string, string | number | boolean> =>
  Object.fromEntries(Object.entries(entries).filter((entry): entry is [string, string | number | boolean] => entry[1] !== undefined))

/** Query parameters from defined values only. */
const queryOf = (entries: Record<string, Scalar>): Record<string, string> =>
  Object.fromEntries(Object.entries(definedOnly(entries)).map(([key, value]) => [key, String(value)]))

/** The v1.0 list response, or a bare array as some agents answer. */
const PushConfigList = Schema.Union(
  Schema.Array(V1.TaskPushNotificationConfig),
  Schema.transform(V1.ListTaskPushNotificationConfigsResponse, Schema.Array(Schema.typeSchema(V1.TaskPushNotificationConfig)), {
    strict: false,
    decode: (response) => response.configs,
    encode: (configs) => ({ configs })
  })
)

/** v0.3 REST list: `{configs}` (proto JSON omits an empty list, so `{}` is none), or a bare array. */
const V03RestPushConfigList = Schema.Union(
  Schema.Array(T.PushConfigAsV03Rest),
  Schema.transform(
    Schema.Struct({
      configs: repeated(T.PushConfigAsV03Rest)
    }),
    Schema.Array(Schema.typeSchema(V1.TaskPushNotificationConfig)),
    { strict: false, decode: (response) => response.configs, encode: (configs) => ({ configs }) }
  )
)

const encode = <A, I>(schema: Schema.Schema<A, I>) => Schema.encode(schema)

// ---------------------------------------------------------------------------

/**
 * 1.0 over JSON-RPC or gRPC: the same method names and the same ProtoJSON request messages, the
 * tenant inside each (`wire` wraps them in the binding's request).
 */
const protoMethodsV1 = (
  binding: "JSONRPC" | "GRPC",
  tenant: string | undefined,
  wire: <A>(method: string, message: unknown, decode: Decoder<A>) => WireRequest<A>
): Dialect => {
  const withTenant = <P extends object>(params: P) => (tenant ? { ...params, tenant } : params)
  const call = <I, IE, A>(method: string, input: Schema.Schema<I, IE>, decode: Decoder<A>) => (value: I) =>
    Effect.map(encode(input)(value), (params) => wire(method, withTenant(params as object), decode))
  return {
    binding,
    version: "1.0",
    send: call("SendMessage", V1.SendMessageRequest, decodeSendResponse),
    stream: call("SendStreamingMessage", V1.SendMessageRequest, decodeStreamResponse),
    getTask: call("GetTask", V1.GetTaskRequest, decodeTask),
    listTasks: call("ListTasks", V1.ListTasksRequest, decoderOf(V1.ListTasksResponse)),
    cancelTask: call("CancelTask", V1.CancelTaskRequest, decodeTask),
    subscribe: call("SubscribeToTask", V1.SubscribeToTaskRequest, decodeStreamResponse),
    createPushConfig: call("CreateTaskPushNotificationConfig", V1.TaskPushNotificationConfig, decoderOf(V1.TaskPushNotificationConfig)),
    getPushConfig: call("GetTaskPushNotificationConfig", V1.TaskPushNotificationConfigRequest, decoderOf(V1.TaskPushNotificationConfig)),
    listPushConfigs: call("ListTaskPushNotificationConfigs", V1.ListTaskPushNotificationConfigsRequest, decoderOf(PushConfigList)),
    deletePushConfig: (request) =>
      Effect.map(
        encode(V1.TaskPushNotificationConfigRequest)(request),
        (params) => wire("DeleteTaskPushNotificationConfig", withTenant(params), ignoreResult)
      ),
    extendedCard: () => Effect.succeed(wire("GetExtendedAgentCard", withTenant({}), passThrough))
  }
}

const jsonRpcV03: Dialect = {
  binding: "JSONRPC",
  version: "0.3",
  send: (request) =>
    Effect.map(encode(T.SendRequestAsV03)(request), (params) => rpc("message/send", params, decoderOf(T.SendResponseAsV03))),
  stream: (request) =>
    Effect.map(encode(T.SendRequestAsV03)(request), (params) => rpc("message/stream", params, decoderOf(T.StreamResponseAsV03))),
  getTask: (request) =>
    Effect.succeed(rpc("tasks/get", definedOnly({ id: request.id, historyLength: request.historyLength }), decoderOf(T.TaskAsV03))),
  listTasks: undefined,
  cancelTask: (request) => Effect.succeed(rpc("tasks/cancel", { id: request.id }, decoderOf(T.TaskAsV03))),
  subscribe: (request) => Effect.succeed(rpc("tasks/resubscribe", { id: request.id }, decoderOf(T.StreamResponseAsV03))),
  createPushConfig: (config) =>
    Effect.map(
      encode(T.PushConfigAsV03)(config),
      (params) => rpc("tasks/pushNotificationConfig/set", params, decoderOf(T.PushConfigAsV03))
    ),
  getPushConfig: (request) =>
    Effect.succeed(rpc(
      "tasks/pushNotificationConfig/get",
      { id: request.taskId, pushNotificationConfigId: request.id },
      decoderOf(T.PushConfigAsV03)
    )),
  listPushConfigs: (request) =>
    Effect.succeed(rpc("tasks/pushNotificationConfig/list", { id: request.taskId }, decoderOf(Schema.Array(T.PushConfigAsV03)))),
  deletePushConfig: (request) =>
    Effect.succeed(rpc(
      "tasks/pushNotificationConfig/delete",
      { id: request.taskId, pushNotificationConfigId: request.id },
      ignoreResult
    )),
  extendedCard: () => Effect.succeed(rpc("agent/getAuthenticatedExtendedCard", undefined, passThrough))
}

const restV1 = (tenant: string | undefined): Dialect => {
  const prefix = tenant ? `/${segment(tenant)}` : ""
  const configsOf = (taskId: string) => `${prefix}/tasks/${segment(taskId)}/pushNotificationConfigs`
  return {
    binding: "HTTP+JSON",
    version: "1.0",
    send: (request) =>
      Effect.map(encode(V1.SendMessageRequest)(request), (body) => rest("POST", `${prefix}/message:send`, decodeSendResponse, { body })),
    stream: (request) =>
      Effect.map(
        encode(V1.SendMessageRequest)(request),
        (body) => rest("POST", `${prefix}/message:stream`, decodeStreamResponse, { body })
      ),
    getTask: (request) =>
      Effect.succeed(rest("GET", `${prefix}/tasks/${segment(request.id)}`, decodeTask, {
        query: queryOf({ historyLength: request.historyLength })
      })),
    listTasks: (request) =>
      Effect.map(encode(V1.ListTasksRequest)(request), (encoded) => {
        const { tenant: _tenant, ...params } = encoded
        return rest("GET", `${prefix}/tasks`, decoderOf(V1.ListTasksResponse), {
          query: queryOf(params as Record<string, Scalar>)
        })
      }),
    cancelTask: (request) => Effect.succeed(rest("POST", `${prefix}/tasks/${segment(request.id)}:cancel`, decodeTask, { body: {} })),
    subscribe: (request) =>
      Effect.succeed(rest("POST", `${prefix}/tasks/${segment(request.id)}:subscribe`, decodeStreamResponse, {
        fallbackVerb: "GET"
      })),
    createPushConfig: (config) =>
      Effect.map(
        encode(V1.TaskPushNotificationConfig)(config),
        (body) => rest("POST", configsOf(config.taskId ?? ""), decoderOf(V1.TaskPushNotificationConfig), { body })
      ),
    getPushConfig: (request) =>
      Effect.succeed(rest("GET", `${configsOf(request.taskId)}/${segment(request.id)}`, decoderOf(V1.TaskPushNotificationConfig))),
    listPushConfigs: (request) =>
      Effect.succeed(rest("GET", configsOf(request.taskId), decoderOf(PushConfigList), {
        query: queryOf({ pageSize: request.pageSize, pageToken: request.pageToken })
      })),
    deletePushConfig: (request) => Effect.succeed(rest("DELETE", `${configsOf(request.taskId)}/${segment(request.id)}`, ignoreResult)),
    extendedCard: () => Effect.succeed(rest("GET", `${prefix}/extendedAgentCard`, passThrough))
  }
}

/** v0.3 REST: `/v1` paths and the v0.3 proto-JSON shapes (role ROLE_USER, `content` parts). */
const restV03: Dialect = {
  binding: "HTTP+JSON",
  version: "0.3",
  send: (request) =>
    Effect.map(
      encode(T.SendRequestAsV03Rest)(request),
      (body) => rest("POST", "/v1/message:send", decoderOf(T.SendResponseAsV03Rest), { body })
    ),
  stream: (request) =>
    Effect.map(
      encode(T.SendRequestAsV03Rest)(request),
      (body) => rest("POST", "/v1/message:stream", decoderOf(T.StreamResponseAsV03Rest), { body })
    ),
  getTask: (request) =>
    Effect.succeed(rest("GET", `/v1/tasks/${segment(request.id)}`, decoderOf(T.TaskAsV03Rest), {
      query: queryOf({ historyLength: request.historyLength })
    })),
  listTasks: undefined,
  cancelTask: (request) =>
    Effect.succeed(rest("POST", `/v1/tasks/${segment(request.id)}:cancel`, decoderOf(T.TaskAsV03Rest), { body: {} })),
  subscribe: (request) =>
    Effect.succeed(rest("POST", `/v1/tasks/${segment(request.id)}:subscribe`, decoderOf(T.StreamResponseAsV03Rest), {
      fallbackVerb: "GET"
    })),
  createPushConfig: (config) =>
    Effect.succeed(rest(
      "POST",
      `/v1/tasks/${segment(config.taskId ?? "")}/pushNotificationConfigs`,
      decoderOf(T.PushConfigAsV03Rest),
      { body: T.pushConfigToV03Rest(config) }
    )),
  getPushConfig: (request) =>
    Effect.succeed(rest(
      "GET",
      `/v1/tasks/${segment(request.taskId)}/pushNotificationConfigs/${segment(request.id)}`,
      decoderOf(T.PushConfigAsV03Rest)
    )),
  listPushConfigs: (request) =>
    Effect.succeed(rest("GET", `/v1/tasks/${segment(request.taskId)}/pushNotificationConfigs`, decoderOf(V03RestPushConfigList))),
  deletePushConfig: (request) =>
    Effect.succeed(rest(
      "DELETE",
      `/v1/tasks/${segment(request.taskId)}/pushNotificationConfigs/${segment(request.id)}`,
      ignoreResult
    )),
  extendedCard: () => Effect.succeed(rest("GET", "/v1/card", passThrough))
}

/**
 * v0.3 gRPC (`a2a.v1.A2AService`): the v0.3 proto's messages, whose JSON v0.3 REST speaks, with
 * tasks and configs named as resources (`tasks/{id}`, `tasks/{id}/pushNotificationConfigs/{id}`).
 */
const grpcV03: Dialect = {
  binding: "GRPC",
  version: "0.3",
  send: (request) =>
    Effect.map(encode(T.SendRequestAsV03Rest)(request), (message) => grpc("SendMessage", message, decoderOf(T.SendResponseAsV03Rest))),
  stream: (request) =>
    Effect.map(
      encode(T.SendRequestAsV03Rest)(request),
      (message) => grpc("SendStreamingMessage", message, decoderOf(T.StreamResponseAsV03Rest))
    ),
  getTask: (request) =>
    Effect.succeed(
      grpc("GetTask", definedOnly({ name: taskName(request.id), historyLength: request.historyLength }), decoderOf(T.TaskAsV03Rest))
    ),
  listTasks: undefined,
  cancelTask: (request) => Effect.succeed(grpc("CancelTask", { name: taskName(request.id) }, decoderOf(T.TaskAsV03Rest))),
  subscribe: (request) => Effect.succeed(grpc("TaskSubscription", { name: taskName(request.id) }, decoderOf(T.StreamResponseAsV03Rest))),
  createPushConfig: (config) =>
    Effect.succeed(grpc("CreateTaskPushNotificationConfig", T.pushConfigToV03Rest(config), decoderOf(T.PushConfigAsV03Rest))),
  getPushConfig: (request) =>
    Effect.succeed(grpc("GetTaskPushNotificationConfig", { name: pushConfigName(request) }, decoderOf(T.PushConfigAsV03Rest))),
  listPushConfigs: (request) =>
    Effect.succeed(grpc("ListTaskPushNotificationConfig", { parent: taskName(request.taskId) }, decoderOf(V03RestPushConfigList))),
  deletePushConfig: (request) => Effect.succeed(grpc("DeleteTaskPushNotificationConfig", { name: pushConfigName(request) }, ignoreResult)),
  extendedCard: () => Effect.succeed(grpc("GetAgentCard", {}, passThrough))
}

const taskName = (taskId: string) => `tasks/${taskId}`

const pushConfigName = (request: V1.TaskPushNotificationConfigRequest) =>
  `${taskName(request.taskId)}/pushNotificationConfigs/${request.id}`

/** The dialect for an interface's binding and protocol version. */
export const dialectFor = (binding: Binding, version: ProtocolVersion, tenant?: string): Dialect => {
  switch (binding) {
    case "JSONRPC":
      return version === "1.0" ? protoMethodsV1("JSONRPC", tenant, rpc) : jsonRpcV03
    case "HTTP+JSON":
      return version === "1.0" ? restV1(tenant) : restV03
    case "GRPC":
      return version === "1.0" ? protoMethodsV1("GRPC", tenant, grpc) : grpcV03
  }
}

/** `"0.3.0"`, `"0.3"` → "0.3"; `"1.0"`, `"1.0.1"` → "1.0"; anything else is not ours. */
export const protocolVersionOf = (declared: string): ProtocolVersion | undefined => {
  const [major, minor] = declared.trim().split(".")
  const majorMinor = `${major}.${minor ?? "0"}`
  return SUPPORTED_VERSIONS.find((version) => version === majorMinor)
}

export const bindingOf = (declared: string): Binding | undefined => {
  const normalized = V1.normalizeBinding(declared)
  return SUPPORTED_BINDINGS.find((binding) => binding === normalized)
}
