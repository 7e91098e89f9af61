/**
 * Translation between the v0.3 wire shapes and the v1.0 domain model, both directions, for the
 * client (talking to v0.3 agents) and the server (answering v0.3 clients).
 *
 * Pure functions work on decoded values. The `*AsV03` / `*AsV03Rest` schemas combine decoding
 * and translation: `ProtoJson.decoder(TaskAsV03)(json)` reads v0.3 JSON into a `V1.Task`,
 * `Schema.encode(TaskAsV03)(task)` writes a `V1.Task` as v0.3 JSON.
 */
import type { ParseResult } from "effect"
import { Effect, Either, Predicate, Schema } from "effect"
import { cardGeneration, type ClientCardGeneration } from "./cardGeneration.js"
import { isOptionalBoolean, isOptionalId, isOptionalSafeInteger, isOptionalTextList, isRecord, isText, keysWithin } from "./plainShapes.js"
import type { ProtocolVersion } from "./protocolVersion.js"
import * as ProtoJson from "./protoJson.js"
import { optional } from "./schemaFields.js"
import * as V03 from "./v03.js"
import * as V1 from "./v1.js"

// ---------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------

// Keys whose type admits `undefined` become optional; `unknown` values (JSON data) stay required.
type OptionalKeys<T> = {
  [K in keyof T]: undefined extends T[K] ? (unknown extends T[K] ? never : K) : never
}[keyof T]
type Compact<T> =
  & { [K in Exclude<keyof T, OptionalKeys<T>>]: T[K] }
  & {
    [K in OptionalKeys<T>]?: Exclude<T[K], undefined>
  }

/** Drops `undefined` values so optional fields stay absent (exactOptionalPropertyTypes). */
/**
 * A loop, not Object.fromEntries(Object.entries(…).filter(…)): every v0.3 answer compacts a dozen
 * objects, and the arrays that built showed in the agent server's CPU profile (bench/README.md).
 */
const compact = <const T extends object>(fields: T): Compact<T> => {
  const out: Record<string, unknown> = {}
  for (const key of Object.keys(fields)) {
    const value = (fields as Record<string, unknown>)[key]
    if (value !== undefined) out[key] = value
  }
  return out as Compact<T>
}

const mapValues = <A, B>(record: Readonly<Record<string, A>>, f: (a: A) => B): Record<string, B> =>
  Object.fromEntries(Object.entries(record).map(([key, value]) => [key, f(value)]))

/** `0.3`, `0.3.0`, `0.2.9`: anything before 1.0 is served by the v0.3 shapes. */
const isLegacyVersion = (version: string): boolean => /^0(\.|$)/.test(version.trim())

// ---------------------------------------------------------------------------
// Parts
// ---------------------------------------------------------------------------

/**
 * v0.3 data parts must hold an object. Like @a2a-js, other JSON values travel as
 * `{ value: X }` with this metadata flag so the other side can unwrap them.
 */
export const DATA_PART_COMPAT_FLAG = "data_part_compat"

const wrapData = (
  data: unknown,
  metadata: V1.Metadata | undefined
): { readonly data: V1.Metadata; readonly metadata?: V1.Metadata } =>
  Predicate.isRecord(data)
    ? compact({ data, metadata })
    : { data: { value: data }, metadata: { ...metadata, [DATA_PART_COMPAT_FLAG]: true } }

const unwrapData = (
  data: V1.Metadata,
  metadata: V1.Metadata | undefined
): { readonly data: unknown; readonly metadata?: V1.Metadata } => {
  if (metadata?.[DATA_PART_COMPAT_FLAG] !== true) return compact({ data, metadata })
  const { [DATA_PART_COMPAT_FLAG]: _flag, ...rest } = metadata
  return compact({
    data: "value" in data ? data["value"] : data,
    metadata: Object.keys(rest).length > 0 ? rest : undefined
  })
}

/** v1 Part → v0.3 part. A text part's mediaType/filename have no v0.3 home and are dropped. */
export const partToV03 = (part: V1.Part): V03.Part => {
  const metadata = part.metadata
  if ("text" in part) return compact({ kind: "text", text: part.text, metadata })
  if ("raw" in part) {
    return compact({
      kind: "file",
      file: compact({ bytes: part.raw, name: part.filename, mimeType: part.mediaType }),
      metadata
    })
  }
  if ("url" in part) {
    return compact({
      kind: "file",
      file: compact({ uri: part.url, name: part.filename, mimeType: part.mediaType }),
      metadata
    })
  }
  return { kind: "data", ...wrapData(part.data, metadata) }
}

/** v0.3 part → v1 Part (bytes → raw, uri → url, mimeType → mediaType, name → filename). */
export const partFromV03 = (part: V03.Part): V1.Part => {
  switch (part.kind) {
    case "text":
      return compact({ text: part.text, metadata: part.metadata })
    case "file": {
      const file = part.file
      const common = { filename: file.name, mediaType: file.mimeType, metadata: part.metadata }
      return "bytes" in file ? compact({ raw: file.bytes, ...common }) : compact({ url: file.uri, ...common })
    }
    case "data":
      return unwrapData(part.data, part.metadata)
  }
}

// ---------------------------------------------------------------------------
// Messages, artifacts, tasks
// ---------------------------------------------------------------------------

const ROLES_FROM_V03: Record<V03.Role, V1.Role> = { user: "ROLE_USER", agent: "ROLE_AGENT", unknown: "ROLE_UNSPECIFIED" }
const roleToV03 = V03.roleName
const roleFromV03 = (role: V03.Role): V1.Role => ROLES_FROM_V03[role]

// Every v0.3 name is produced by V1.stateName, so parsing it back cannot fail.
const stateFromV03 = (state: V03.TaskState): V1.TaskState => V1.parseTaskState(state) ?? "TASK_STATE_UNSPECIFIED"

export const messageToV03 = (message: V1.Message): V03.Message =>
  compact({
    kind: "message",
    messageId: message.messageId,
    role: roleToV03(message.role),
    parts: message.parts.map(partToV03),
    contextId: message.contextId,
    taskId: message.taskId,
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds
  })

export const messageFromV03 = (message: V03.Message): V1.Message =>
  compact({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: roleFromV03(message.role),
    parts: message.parts.map(partFromV03),
    metadata: message.metadata,
    extensions: message.extensions,
    referenceTaskIds: message.referenceTaskIds
  })

export const artifactToV03 = (artifact: V1.Artifact): V03.Artifact => compact({ ...artifact, parts: artifact.parts.map(partToV03) })

export const artifactFromV03 = (artifact: V03.Artifact): V1.Artifact => compact({ ...artifact, parts: artifact.parts.map(partFromV03) })

export const statusToV03 = (status: V1.TaskStatus): V03.TaskStatus =>
  compact({
    state: V1.stateName(status.state),
    message: status.message && messageToV03(status.message),
    timestamp: status.timestamp
  })

export const statusFromV03 = (status: V03.TaskStatus): V1.TaskStatus =>
  compact({
    state: stateFromV03(status.state),
    unknownState: status.unknownState,
    message: status.message && messageFromV03(status.message),
    timestamp: status.timestamp
  })

export const taskToV03 = (task: V1.Task): V03.Task =>
  compact({
    kind: "task",
    id: task.id,
    contextId: task.contextId ?? "",
    status: statusToV03(task.status),
    artifacts: task.artifacts?.map(artifactToV03),
    history: task.history?.map(messageToV03),
    metadata: task.metadata
  })

export const taskFromV03 = (task: V03.Task): V1.Task =>
  compact({
    id: task.id,
    contextId: task.contextId === "" ? undefined : task.contextId,
    status: statusFromV03(task.status),
    artifacts: task.artifacts?.map(artifactFromV03),
    history: task.history?.map(messageFromV03),
    metadata: task.metadata
  })

// ---------------------------------------------------------------------------
// Stream events and send results
// ---------------------------------------------------------------------------

/** v0.3 stream result (`kind` task/message/status-update/artifact-update) → v1 StreamResponse. */
export const streamEventFromV03 = (event: V03.StreamEvent): V1.StreamResponse => {
  switch (event.kind) {
    case "task":
      return { task: taskFromV03(event) }
    case "message":
      return { message: messageFromV03(event) }
    case "status-update":
      return {
        statusUpdate: compact({
          taskId: event.taskId,
          contextId: event.contextId,
          status: statusFromV03(event.status),
          metadata: event.metadata
        })
      }
    case "artifact-update":
      return {
        artifactUpdate: compact({
          taskId: event.taskId,
          contextId: event.contextId,
          artifact: artifactFromV03(event.artifact),
          append: event.append,
          lastChunk: event.lastChunk,
          metadata: event.metadata
        })
      }
  }
}

/**
 * v1 StreamResponse → v0.3 stream result. Status updates get `final`: the given value, else true
 * for terminal and interrupted states.
 */
export const streamResponseToV03 = (response: V1.StreamResponse, final?: boolean): V03.StreamEvent => {
  if ("task" in response) return taskToV03(response.task)
  if ("message" in response) return messageToV03(response.message)
  if ("statusUpdate" in response) {
    const event = response.statusUpdate
    return compact({
      kind: "status-update",
      taskId: event.taskId,
      contextId: event.contextId,
      status: statusToV03(event.status),
      final: final ?? V1.isSettledState(event.status.state),
      metadata: event.metadata
    })
  }
  const event = response.artifactUpdate
  return compact({
    kind: "artifact-update",
    taskId: event.taskId,
    contextId: event.contextId,
    artifact: artifactToV03(event.artifact),
    append: event.append,
    lastChunk: event.lastChunk,
    metadata: event.metadata
  })
}

/** `message/send` result (Task or Message) → v1 SendMessageResponse. */
export const sendResultFromV03 = (result: V03.SendResult): V1.SendMessageResponse =>
  result.kind === "task" ? { task: taskFromV03(result) } : { message: messageFromV03(result) }

/** v1 SendMessageResponse → `message/send` result. */
export const sendResponseToV03 = (response: V1.SendMessageResponse): V03.SendResult =>
  "task" in response ? taskToV03(response.task) : messageToV03(response.message)

// ---------------------------------------------------------------------------
// Push notification configs
// ---------------------------------------------------------------------------

const authenticationToV03 = (auth: V1.AuthenticationInfo): V03.PushNotificationAuthenticationInfo =>
  compact({ schemes: [auth.scheme], credentials: auth.credentials })

const authenticationFromV03 = (auth: V03.PushNotificationAuthenticationInfo): V1.AuthenticationInfo | undefined => {
  // v0.3 listed acceptable schemes; v1.0 names the one to use. Credentials alone imply Bearer.
  const scheme = auth.schemes[0] ?? (auth.credentials === undefined ? undefined : "Bearer")
  return scheme === undefined ? undefined : compact({ scheme, credentials: auth.credentials })
}

/** v1 config → the inner v0.3 PushNotificationConfig (as used inline in `configuration`). */
export const pushNotificationConfigToV03 = (config: V1.TaskPushNotificationConfig): V03.PushNotificationConfig =>
  compact({
    id: config.id,
    url: config.url,
    token: config.token,
    authentication: config.authentication && authenticationToV03(config.authentication)
  })

/** Inner v0.3 PushNotificationConfig (plus the task it belongs to, when known) → v1 config. */
export const pushNotificationConfigFromV03 = (
  config: V03.PushNotificationConfig,
  taskId?: string
): V1.TaskPushNotificationConfig =>
  compact({
    id: config.id,
    taskId: taskId === "" ? undefined : taskId,
    url: config.url,
    token: config.token,
    authentication: config.authentication && authenticationFromV03(config.authentication)
  })

/** v1 flat config → v0.3 `{taskId, pushNotificationConfig}` (the tenant has no v0.3 home). */
export const pushConfigToV03 = (config: V1.TaskPushNotificationConfig): V03.TaskPushNotificationConfig => ({
  taskId: config.taskId ?? "",
  pushNotificationConfig: pushNotificationConfigToV03(config)
})

export const pushConfigFromV03 = (config: V03.TaskPushNotificationConfig): V1.TaskPushNotificationConfig =>
  pushNotificationConfigFromV03(config.pushNotificationConfig, config.taskId)

// ---------------------------------------------------------------------------
// Send params
// ---------------------------------------------------------------------------

/**
 * The v0.3 send configuration, the same in JSON-RPC and REST but for the name of the push field.
 * `blocking` is always written, because v1.0 blocks by default while v0.3 defaulted to non-blocking.
 */
const configurationToV03 = (config: V1.SendMessageConfiguration | undefined) => ({
  acceptedOutputModes: config?.acceptedOutputModes,
  historyLength: config?.historyLength,
  push: config?.taskPushNotificationConfig && pushNotificationConfigToV03(config.taskPushNotificationConfig),
  blocking: config?.returnImmediately !== true
})

const configurationFromV03 = (
  config: { readonly acceptedOutputModes?: ReadonlyArray<string>; readonly historyLength?: number; readonly blocking?: boolean },
  push: V03.PushNotificationConfig | undefined
): V1.SendMessageConfiguration =>
  compact({
    acceptedOutputModes: config.acceptedOutputModes,
    historyLength: config.historyLength,
    taskPushNotificationConfig: push && pushNotificationConfigFromV03(push),
    returnImmediately: config.blocking === undefined ? undefined : !config.blocking
  })

/** v1 SendMessageRequest → v0.3 MessageSendParams. */
export const sendParamsToV03 = (request: V1.SendMessageRequest): V03.MessageSendParams => {
  const { push, ...configuration } = configurationToV03(request.configuration)
  return compact({
    message: messageToV03(request.message),
    configuration: compact({ ...configuration, pushNotificationConfig: push }),
    metadata: request.metadata
  })
}

export const sendParamsFromV03 = (params: V03.MessageSendParams): V1.SendMessageRequest =>
  compact({
    message: messageFromV03(params.message),
    configuration: params.configuration && configurationFromV03(params.configuration, params.configuration.pushNotificationConfig),
    metadata: params.metadata
  })

// ---------------------------------------------------------------------------
// v0.3 REST (proto JSON)
// ---------------------------------------------------------------------------

/**
 * v1 Part → v0.3 REST part. The v0.3 proto's Part has no metadata and its FilePart no name, and
 * strict ProtoJSON readers (the Python SDK's) refuse fields a message does not have: both are
 * dropped, and data that is not an object travels as `{value: X}` without the flag that says so.
 */
export const partToV03Rest = (part: V1.Part): V03.RestPart => {
  if ("text" in part) return { text: part.text }
  if ("raw" in part) return { file: compact({ fileWithBytes: part.raw, mimeType: part.mediaType }) }
  if ("url" in part) return { file: compact({ fileWithUri: part.url, mimeType: part.mediaType }) }
  return { data: { data: wrapData(part.data, undefined).data } }
}

export const partFromV03Rest = (part: V03.RestPart): V1.Part => {
  if ("text" in part) return compact({ text: part.text, metadata: part.metadata })
  if ("file" in part) {
    const file = part.file
    const common = { filename: file.name, mediaType: file.mimeType, metadata: part.metadata }
    return "fileWithBytes" in file
      ? compact({ raw: file.fileWithBytes, ...common })
      : compact({ url: file.fileWithUri, ...common })
  }
  return unwrapData(part.data.data, part.metadata)
}

/** v1 Message → v0.3 REST Message (`content` instead of `parts`; no referenceTaskIds in that proto). */
export const messageToV03Rest = (message: V1.Message): V03.RestMessage =>
  compact({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role,
    content: message.parts.map(partToV03Rest),
    metadata: message.metadata,
    extensions: message.extensions
  })

/** `content` as the proto has it, else `parts` in the JSON-RPC shape. */
const restMessageParts = (message: V03.RestMessage): ReadonlyArray<V1.Part> =>
  message.content.length === 0 && message.parts !== undefined
    ? message.parts.map(partFromV03)
    : message.content.map(partFromV03Rest)

export const messageFromV03Rest = (message: V03.RestMessage): V1.Message =>
  compact({
    messageId: message.messageId,
    contextId: message.contextId,
    taskId: message.taskId,
    role: message.role,
    parts: restMessageParts(message),
    metadata: message.metadata,
    extensions: message.extensions
  })

const artifactToV03Rest = (artifact: V1.Artifact): V03.RestArtifact => compact({ ...artifact, parts: artifact.parts.map(partToV03Rest) })

const artifactFromV03Rest = (artifact: V03.RestArtifact): V1.Artifact =>
  compact({ ...artifact, parts: artifact.parts.map(partFromV03Rest) })

const statusToV03Rest = (status: V1.TaskStatus): V03.RestTaskStatus =>
  compact({
    state: V03.restStateName(status.state),
    message: status.message && messageToV03Rest(status.message),
    timestamp: status.timestamp
  })

const statusFromV03Rest = (status: V03.RestTaskStatus): V1.TaskStatus =>
  compact({
    state: status.state === "TASK_STATE_CANCELLED" ? "TASK_STATE_CANCELED" : status.state,
    unknownState: status.unknownState,
    message: status.message && messageFromV03Rest(status.message),
    timestamp: status.timestamp
  })

export const taskToV03Rest = (task: V1.Task): V03.RestTask =>
  compact({
    id: task.id,
    contextId: task.contextId,
    status: statusToV03Rest(task.status),
    artifacts: task.artifacts?.map(artifactToV03Rest),
    history: task.history?.map(messageToV03Rest),
    metadata: task.metadata
  })

export const taskFromV03Rest = (task: V03.RestTask): V1.Task =>
  compact({
    id: task.id,
    contextId: task.contextId,
    status: statusFromV03Rest(task.status),
    artifacts: task.artifacts?.map(artifactFromV03Rest),
    history: task.history?.map(messageFromV03Rest),
    metadata: task.metadata
  })

/** `{task}` / `{message}` → v1 SendMessageResponse. */
export const sendResultFromV03Rest = (response: V03.RestSendResponse): V1.SendMessageResponse =>
  "task" in response ? { task: taskFromV03Rest(response.task) } : { message: messageFromV03Rest(response.message) }

export const sendResponseToV03Rest = (response: V1.SendMessageResponse): V03.RestSendResponse =>
  "task" in response ? { task: taskToV03Rest(response.task) } : { message: messageToV03Rest(response.message) }

/** One v0.3 REST SSE event → v1 StreamResponse. */
export const streamEventFromV03Rest = (event: V03.RestStreamResponse): V1.StreamResponse => {
  if ("task" in event) return { task: taskFromV03Rest(event.task) }
  if ("message" in event) return { message: messageFromV03Rest(event.message) }
  if ("statusUpdate" in event) {
    const update = event.statusUpdate
    return {
      statusUpdate: compact({
        taskId: update.taskId,
        contextId: update.contextId,
        status: statusFromV03Rest(update.status),
        metadata: update.metadata
      })
    }
  }
  const update = event.artifactUpdate
  return {
    artifactUpdate: compact({
      taskId: update.taskId,
      contextId: update.contextId,
      artifact: artifactFromV03Rest(update.artifact),
      append: update.append,
      lastChunk: update.lastChunk,
      metadata: update.metadata
    })
  }
}

export const streamResponseToV03Rest = (response: V1.StreamResponse, final?: boolean): V03.RestStreamResponse => {
  if ("task" in response) return { task: taskToV03Rest(response.task) }
  if ("message" in response) return { message: messageToV03Rest(response.message) }
  if ("statusUpdate" in response) {
    const update = response.statusUpdate
    return {
      statusUpdate: compact({
        taskId: update.taskId,
        contextId: update.contextId,
        status: statusToV03Rest(update.status),
        final: final ?? V1.isSettledState(update.status.state),
        metadata: update.metadata
      })
    }
  }
  const update = response.artifactUpdate
  return {
    artifactUpdate: compact({
      taskId: update.taskId,
      contextId: update.contextId,
      artifact: artifactToV03Rest(update.artifact),
      append: update.append,
      lastChunk: update.lastChunk,
      metadata: update.metadata
    })
  }
}

/** v1 SendMessageRequest → `POST /v1/message:send` body. */
export const sendRequestToV03Rest = (request: V1.SendMessageRequest): V03.RestSendMessageRequest => {
  const { push, ...configuration } = configurationToV03(request.configuration)
  return compact({
    message: messageToV03Rest(request.message),
    configuration: compact({ ...configuration, pushNotification: push }),
    metadata: request.metadata
  })
}

export const sendRequestFromV03Rest = (request: V03.RestSendMessageRequest): V1.SendMessageRequest =>
  compact({
    message: messageFromV03Rest(request.message),
    configuration: request.configuration && configurationFromV03(request.configuration, request.configuration.pushNotification),
    metadata: request.metadata
  })

const PUSH_CONFIG_NAME = /^tasks\/([^/]+)(?:\/pushNotificationConfigs\/([^/]*))?/

/** v1 config → the create body of `POST /v1/tasks/{id}/pushNotificationConfigs`. */
export const pushConfigToV03Rest = (config: V1.TaskPushNotificationConfig): V03.RestCreatePushConfigBody => {
  const taskId = config.taskId ?? ""
  const configId = config.id ?? ""
  const inner = pushNotificationConfigToV03(config)
  const name = `tasks/${taskId}/pushNotificationConfigs/${configId}`
  return {
    parent: `tasks/${taskId}`,
    configId,
    config: { name, pushNotificationConfig: inner },
    name,
    pushNotificationConfig: inner
  }
}

/** v0.3 REST `{name, pushNotificationConfig}` → v1 config; ids are read from `name` when missing. */
export const pushConfigFromV03Rest = (config: V03.RestTaskPushNotificationConfig): V1.TaskPushNotificationConfig => {
  const [, taskId, idFromName] = PUSH_CONFIG_NAME.exec(config.name) ?? []
  const inner = config.pushNotificationConfig
  const id = inner.id ?? (idFromName === "" ? undefined : idFromName)
  return pushNotificationConfigFromV03(compact({ ...inner, id }), taskId)
}

// ---------------------------------------------------------------------------
// Wire schemas: decode v0.3 JSON into the domain model, encode the domain model as v0.3 JSON
// ---------------------------------------------------------------------------

/** A schema whose wire side is a v0.3 shape and whose type side is the v1.0 domain model. */
const asV1 = <W, WI, A, AI>(
  wire: Schema.Schema<W, WI>,
  domain: Schema.Schema<A, AI>,
  decode: (wire: W) => A,
  encode: (value: A) => W
) => Schema.transform(wire, Schema.typeSchema(domain), { strict: true, decode, encode })

export const MessageAsV03 = asV1(V03.Message, V1.Message, messageFromV03, messageToV03)
export const TaskAsV03 = asV1(V03.Task, V1.Task, taskFromV03, taskToV03)
/** A `message/stream` result. Encoding sets `final` from the state (see streamResponseToV03). */
export const StreamResponseAsV03 = asV1(V03.StreamEvent, V1.StreamResponse, streamEventFromV03, (r) => streamResponseToV03(r))
/** A `message/send` result. */
export const SendResponseAsV03 = asV1(V03.SendResult, V1.SendMessageResponse, sendResultFromV03, sendResponseToV03)
/** `message/send` / `message/stream` params. */
export const SendRequestAsV03 = asV1(V03.MessageSendParams, V1.SendMessageRequest, sendParamsFromV03, sendParamsToV03)

const V03_MESSAGE_KEYS = ["kind", "messageId", "contextId", "taskId", "role", "parts"]
const isCanonicalV03TextMessage = (u: unknown) =>
  isRecord(u) && keysWithin(u, V03_MESSAGE_KEYS) && u["kind"] === "message" && isText(u["messageId"]) &&
  (u["role"] === "user" || u["role"] === "agent") && isOptionalId(u["contextId"]) && isOptionalId(u["taskId"]) &&
  Array.isArray(u["parts"]) &&
  u["parts"].every((part) => isRecord(part) && keysWithin(part, ["kind", "text"]) && part["kind"] === "text" && isText(part["text"]))

const isCanonicalV03Configuration = (u: unknown) =>
  u === undefined || (isRecord(u) && keysWithin(u, ["blocking", "historyLength", "acceptedOutputModes"]) &&
    isOptionalBoolean(u["blocking"]) && isOptionalSafeInteger(u["historyLength"]) && isOptionalTextList(u["acceptedOutputModes"]))

const decodeSendRequestV03Schema = ProtoJson.decoderEither(SendRequestAsV03)

/**
 * Decodes v0.3 `message/send` / `message/stream` params into the v1 request. A message of text
 * parts in the v0.3 JSON shape (what the 0.3 SDKs send), with at most blocking, historyLength and
 * acceptedOutputModes configured, is translated directly; anything else goes through the schemas
 * (the v0.3 one, then the v1 one), whose decode was a good part of the agent server's CPU per
 * 0.3 SendMessage (bench/README.md); a property test checks that both ways give the same value.
 */
export const decodeSendRequestV03 = (input: unknown): Either.Either<V1.SendMessageRequest, ParseResult.ParseError> =>
  isCanonicalV03SendParams(input)
    ? Either.right(sendParamsFromV03(input as unknown as V03.MessageSendParams))
    : decodeSendRequestV03Schema(input)

/** Whether decodeSendRequestV03 takes its fast path for `input`. */
export const isCanonicalV03SendParams = (input: unknown): boolean =>
  isRecord(input) && keysWithin(input, ["message", "configuration"]) && isCanonicalV03TextMessage(input["message"]) &&
  isCanonicalV03Configuration(input["configuration"])
/** `tasks/pushNotificationConfig/set|get` params and results. */
export const PushConfigAsV03 = asV1(V03.TaskPushNotificationConfig, V1.TaskPushNotificationConfig, pushConfigFromV03, pushConfigToV03)

export const TaskAsV03Rest = asV1(V03.RestTask, V1.Task, taskFromV03Rest, taskToV03Rest)
export const SendResponseAsV03Rest = asV1(V03.RestSendResponse, V1.SendMessageResponse, sendResultFromV03Rest, sendResponseToV03Rest)
export const StreamResponseAsV03Rest = asV1(
  V03.RestStreamResponse,
  V1.StreamResponse,
  streamEventFromV03Rest,
  (response) => streamResponseToV03Rest(response)
)
export const SendRequestAsV03Rest = asV1(V03.RestSendMessageRequest, V1.SendMessageRequest, sendRequestFromV03Rest, sendRequestToV03Rest)
export const PushConfigAsV03Rest = asV1(
  V03.RestTaskPushNotificationConfig,
  V1.TaskPushNotificationConfig,
  pushConfigFromV03Rest,
  (config) => {
    const body = pushConfigToV03Rest(config)
    return { name: body.name, pushNotificationConfig: body.pushNotificationConfig }
  }
)

const decodeStreamResponseV03 = ProtoJson.decoderEither(StreamResponseAsV03)

export interface PushPayload {
  readonly event: V1.StreamResponse
  /** `1.0` posts a StreamResponse wrapper; `0.3` posts the bare Task (or event) with `kind`. */
  readonly generation: ProtocolVersion
}

/**
 * Reads a webhook body of either generation. The shapes cannot be confused: a v1.0 body is
 * wrapped in `task`/`message`/`statusUpdate`/`artifactUpdate`, a v0.3 body is not. When neither
 * fits, the v1.0 error is reported.
 */
export const decodePushPayload = (json: unknown): Either.Either<PushPayload, ParseResult.ParseError> =>
  Either.orElse(
    Either.map(V1.decodeStreamResponse(json), (event): PushPayload => ({ event, generation: "1.0" })),
    (v1Error) =>
      Either.mapBoth(decodeStreamResponseV03(json), {
        onLeft: () => v1Error,
        onRight: (event): PushPayload => ({ event, generation: "0.3" })
      })
  )

export const pushPayloadFromWire = (json: unknown): Effect.Effect<PushPayload, ParseResult.ParseError> => decodePushPayload(json)

// ---------------------------------------------------------------------------
// Agent cards
// ---------------------------------------------------------------------------

export interface WireCard {
  /** The card in the v1.0 model; a v0.3 card gets `supportedInterfaces` built from its url fields. */
  readonly card: V1.AgentCard
  readonly generation: ClientCardGeneration
  /** The card-level v0.3 `protocolVersion` exactly as written (absent on pure v1.0 cards). */
  readonly declaredProtocolVersion?: string
}

/** The v0.3 endpoint fields. */
const CardShape = Schema.Struct({
  url: Schema.optional(Schema.NullOr(Schema.String)),
  preferredTransport: Schema.optional(Schema.NullOr(Schema.String)),
  protocolVersion: Schema.optional(Schema.NullOr(Schema.String)),
  additionalInterfaces: optional(Schema.Array(V03.AgentInterface))
})
type CardShape = typeof CardShape.Type

const interfaceFromV03 = (url: string, transport: string): V1.AgentInterface => ({
  url,
  protocolBinding: V1.normalizeBinding(transport),
  protocolVersion: "0.3"
})

/** `url` + `preferredTransport` (default JSONRPC) first, then `additionalInterfaces`, without repeats. */
const interfacesFromV03 = (shape: CardShape): ReadonlyArray<V1.AgentInterface> => {
  const main = typeof shape.url === "string" ? [interfaceFromV03(shape.url, shape.preferredTransport ?? "JSONRPC")] : []
  const additional = (shape.additionalInterfaces ?? []).map((i) => interfaceFromV03(i.url, i.transport))
  const all = [...main, ...additional]
  return all.filter(
    (candidate, index) => all.findIndex((i) => i.url === candidate.url && i.protocolBinding === candidate.protocolBinding) === index
  )
}

const decodeCardShape = ProtoJson.decoder(CardShape)
const decodeCard = ProtoJson.decoder(V1.AgentCard)

/**
 * Reads an agent card of either generation into the v1.0 model and reports which one it was (see
 * cardGeneration; a card of neither shape is read as v1.0). A card that lists no `supportedInterfaces`
 * gets them built from its v0.3 endpoint fields, so a v0.3 card, or a hybrid one whose v1.0 list is
 * empty, stays reachable.
 */
export const cardFromWire = (json: unknown): Effect.Effect<WireCard, ParseResult.ParseError> =>
  Effect.gen(function*() {
    const shape = yield* decodeCardShape(json)
    const card = yield* decodeCard(json)
    const generation = cardGeneration(json)
    return compact({
      card: card.supportedInterfaces.length === 0 ? { ...card, supportedInterfaces: interfacesFromV03(shape) } : card,
      generation: generation === "unknown" ? "1.0" : generation,
      declaredProtocolVersion: shape.protocolVersion ?? undefined
    })
  })

const API_KEY_LOCATIONS = ["query", "header", "cookie"] as const
/** v1.0 widened the location to any string; v0.3 knows three, and OpenAPI defaults to header. */
const apiKeyLocation = (location: string): (typeof API_KEY_LOCATIONS)[number] =>
  API_KEY_LOCATIONS.find((l) => l === location.toLowerCase()) ?? "header"

const flowsToV03 = (flows: V1.OAuthFlows): V03.OAuthFlows => {
  if ("authorizationCode" in flows) {
    const { pkceRequired: _pkce, ...flow } = flows.authorizationCode
    return { authorizationCode: flow }
  }
  if ("clientCredentials" in flows) return { clientCredentials: flows.clientCredentials }
  if ("implicit" in flows) {
    const flow = flows.implicit
    return {
      implicit: compact({
        authorizationUrl: flow.authorizationUrl ?? "",
        refreshUrl: flow.refreshUrl,
        scopes: flow.scopes ?? {}
      })
    }
  }
  if ("password" in flows) {
    const flow = flows.password
    return {
      password: compact({ tokenUrl: flow.tokenUrl ?? "", refreshUrl: flow.refreshUrl, scopes: flow.scopes ?? {} })
    }
  }
  // The device code flow is new in v1.0 and has no v0.3 spelling.
  return {}
}

/** v1.0 oneof security scheme → the v0.3 `type` form. */
export const securitySchemeToV03 = (scheme: V1.SecurityScheme): V03.SecurityScheme => {
  if ("apiKeySecurityScheme" in scheme) {
    const s = scheme.apiKeySecurityScheme
    return compact({ type: "apiKey", in: apiKeyLocation(s.location), name: s.name, description: s.description })
  }
  if ("httpAuthSecurityScheme" in scheme) {
    const s = scheme.httpAuthSecurityScheme
    return compact({ type: "http", scheme: s.scheme, bearerFormat: s.bearerFormat, description: s.description })
  }
  if ("oauth2SecurityScheme" in scheme) {
    const s = scheme.oauth2SecurityScheme
    return compact({
      type: "oauth2",
      flows: flowsToV03(s.flows),
      oauth2MetadataUrl: s.oauth2MetadataUrl,
      description: s.description
    })
  }
  if ("openIdConnectSecurityScheme" in scheme) {
    const s = scheme.openIdConnectSecurityScheme
    return compact({ type: "openIdConnect", openIdConnectUrl: s.openIdConnectUrl, description: s.description })
  }
  return compact({ type: "mutualTLS", description: scheme.mtlsSecurityScheme.description })
}

const requirementToV03 = (requirement: V1.SecurityRequirement): V03.SecurityRequirement =>
  mapValues(requirement.schemes, (scopes) => scopes.list)

const skillToV03 = (skill: V1.AgentSkill): V03.AgentSkill => {
  const { securityRequirements, ...rest } = skill
  return compact({ ...rest, security: securityRequirements?.map(requirementToV03) })
}

/**
 * The v0.3 view of a v1 card, for a server that also answers v0.3 clients. Its `url` is
 * `jsonRpcUrl` when given, else the first interface declared at a 0.x version (else the first
 * interface); the other 0.x interfaces become `additionalInterfaces`.
 */
export const cardToV03 = (card: V1.AgentCard, jsonRpcUrl?: string): V03.AgentCard => {
  const legacy = card.supportedInterfaces
    .filter((i) => isLegacyVersion(i.protocolVersion))
    .map((i): V03.AgentInterface => ({ url: i.url, transport: i.protocolBinding }))
  const fallback = card.supportedInterfaces[0]
  const main: V03.AgentInterface = jsonRpcUrl !== undefined
    ? { url: jsonRpcUrl, transport: "JSONRPC" }
    : (legacy[0] ?? { url: fallback?.url ?? "", transport: fallback?.protocolBinding ?? "JSONRPC" })
  const additional = legacy.filter((i) => !(i.url === main.url && i.transport === main.transport))
  const capabilities = card.capabilities
  return compact({
    protocolVersion: "0.3.0",
    name: card.name,
    description: card.description,
    url: main.url,
    preferredTransport: main.transport,
    additionalInterfaces: additional.length > 0 ? additional : undefined,
    version: card.version,
    provider: card.provider,
    documentationUrl: card.documentationUrl,
    iconUrl: card.iconUrl,
    capabilities: compact({
      streaming: capabilities.streaming,
      pushNotifications: capabilities.pushNotifications,
      extensions: capabilities.extensions
    }),
    securitySchemes: card.securitySchemes && mapValues(card.securitySchemes, securitySchemeToV03),
    security: card.securityRequirements?.map(requirementToV03),
    defaultInputModes: card.defaultInputModes,
    defaultOutputModes: card.defaultOutputModes,
    skills: card.skills.map(skillToV03),
    supportsAuthenticatedExtendedCard: capabilities.extendedAgentCard,
    signatures: card.signatures
  })
}

/** v1.0 OAuth flows → the v0.3 proto's: no PKCE flag, no device code flow (it has no v0.3 spelling). */
const flowsToV03Rest = (flows: V1.OAuthFlows): Record<string, unknown> => {
  if ("authorizationCode" in flows) {
    const { pkceRequired: _pkce, ...flow } = flows.authorizationCode
    return { authorizationCode: flow }
  }
  return "deviceCode" in flows ? {} : flows
}

/** v1.0 security scheme → the v0.3 proto's, the same oneof but for what v1.0 added. */
const securitySchemeToV03Rest = (scheme: V1.SecurityScheme): Record<string, unknown> =>
  "oauth2SecurityScheme" in scheme
    ? { oauth2SecurityScheme: { ...scheme.oauth2SecurityScheme, flows: flowsToV03Rest(scheme.oauth2SecurityScheme.flows) } }
    : scheme

/**
 * The v0.3 proto's AgentCard, answered at `GET /v1/card`: the v0.3 card with the proto's shapes
 * of security schemes and requirements (`{schemes: {name: {list}}}`), and without the fields the
 * proto lacks (`iconUrl`), which strict ProtoJSON readers refuse.
 */
export const cardToV03Rest = (
  card: V1.AgentCard,
  jsonRpcUrl?: string
): Effect.Effect<Record<string, unknown>, ParseResult.ParseError> =>
  Effect.map(Schema.encode(V03.AgentCard)(cardToV03(card, jsonRpcUrl)), (legacy) => {
    const { securitySchemes: _schemes, security: _security, iconUrl: _icon, skills, ...rest } = legacy
    return compact({
      ...rest,
      securitySchemes: card.securitySchemes && mapValues(card.securitySchemes, securitySchemeToV03Rest),
      security: card.securityRequirements,
      skills: (skills ?? []).map(({ security: _skillSecurity, ...skill }, index) =>
        compact({ ...skill, security: card.skills[index]?.securityRequirements })
      )
    })
  })

const asRecord = (u: unknown): Record<string, unknown> => (Predicate.isRecord(u) ? u : {})

const mergeByKey = (legacy: unknown, current: unknown): Record<string, unknown> => {
  const a = asRecord(legacy)
  const b = asRecord(current)
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])]
  return Object.fromEntries(keys.map((k) => [k, { ...asRecord(a[k]), ...asRecord(b[k]) }]))
}

const mergeByIndex = (legacy: unknown, current: unknown): ReadonlyArray<unknown> => {
  const a = Array.isArray(legacy) ? legacy : []
  const b = Array.isArray(current) ? current : []
  return b.map((item, index) => ({ ...asRecord(a[index]), ...asRecord(item) }))
}

/**
 * One card JSON that both generations can read: the strict v1.0 card plus the v0.3 top-level
 * fields (`url`, `preferredTransport`, `protocolVersion: "0.3.0"`, `additionalInterfaces`,
 * `supportsAuthenticatedExtendedCard`, `security`). Each security scheme carries both the oneof
 * member and the v0.3 `type` fields, and each skill both `securityRequirements` and `security`,
 * since readers of either generation ignore the other's fields.
 */
export const hybridCard = (
  card: V1.AgentCard,
  jsonRpcUrl?: string
): Effect.Effect<Record<string, unknown>, ParseResult.ParseError> =>
  Effect.gen(function*() {
    const current = asRecord(yield* Schema.encode(V1.AgentCard)(card))
    const legacy = asRecord(yield* Schema.encode(V03.AgentCard)(cardToV03(card, jsonRpcUrl)))
    return {
      ...legacy,
      ...current,
      skills: mergeByIndex(legacy["skills"], current["skills"]),
      ...(current["securitySchemes"] === undefined
        ? {}
        : { securitySchemes: mergeByKey(legacy["securitySchemes"], current["securitySchemes"]) })
    }
  })
