/**
 * A2A v0.3 wire types, for talking to v0.3 peers and serving v0.3 clients.
 *
 * - JSON-RPC shapes (`kind` discriminators, lower-case states, `final` on status updates).
 *   Decoding is lenient (missing `kind` inferred, any state/role spelling, `null` = absent);
 *   encoding emits the v0.3 spelling with `kind`. Requests to relay's own agent are read as
 *   strictly as the spec asks where it matters to peers: a Part must say its `kind` (§6.5).
 * - REST shapes (`Rest*`): v0.3 REST under `/v1/…` spoke the v0.3 *proto* JSON instead:
 *   `ROLE_USER`, Message `content` of `{text}|{file}|{data}`, `TASK_STATE_CANCELLED`, and
 *   responses wrapped as `{task}`/`{message}`/`{statusUpdate}`/`{artifactUpdate}`.
 *
 * Programs never use these types directly: translate.ts maps them to the v1 domain model.
 */
import { ParseResult, Schema } from "effect"
import * as ProtoJson from "./protoJson.js"
import { defaultText, optional, optionalText, repeated, requiredScopes, withDefault } from "./schemaFields.js"
import * as V1 from "./v1.js"

/** `kind` may be missing on input (some peers drop it); it is always written on output. */
const kind = <K extends string>(value: K) => withDefault(Schema.Literal(value), () => value)

/** `kind` as the spec has it: required (what relay's agent asks of a request's parts). */
const requiredKind = <K extends string>(value: K) => Schema.Literal(value)

const Metadata = V1.Metadata

// ---------------------------------------------------------------------------
// Enums
// ---------------------------------------------------------------------------

export const TASK_STATE_NAMES = [
  "submitted",
  "working",
  "input-required",
  "completed",
  "canceled",
  "failed",
  "rejected",
  "auth-required",
  "unknown"
] as const satisfies ReadonlyArray<V1.TaskStateName>

export type TaskState = (typeof TASK_STATE_NAMES)[number]

type RoleName = "user" | "agent" | "unknown"

const ROLE_NAMES: Record<V1.Role, RoleName> = {
  ROLE_UNSPECIFIED: "unknown",
  ROLE_USER: "user",
  ROLE_AGENT: "agent"
}

/** The v0.3 name of a v1 role. */
export const roleName = (role: V1.Role): RoleName => ROLE_NAMES[role]

/**
 * v0.3 role: accepts `user`/`ROLE_USER`/1/…, encodes `user` or `agent`. A role A2A does not
 * define reads as `unknown` (see V1.Role), which relay itself never writes.
 */
export const Role = Schema.transform(V1.Role.from, Schema.Literal("user", "agent", "unknown"), {
  strict: true,
  decode: (input) => roleName(V1.parseRole(input) ?? "ROLE_UNSPECIFIED"),
  encode: (role) => role
}).annotations({ identifier: "v0.3 Role" })
export type Role = typeof Role.Type

// ---------------------------------------------------------------------------
// JSON-RPC shapes
// ---------------------------------------------------------------------------

const textPart = <K extends Schema.Struct.Field>(kindField: K) =>
  Schema.Struct({
    kind: kindField,
    text: Schema.String,
    metadata: optional(Metadata)
  }).annotations({ identifier: "v0.3 TextPart" })

export const TextPart = textPart(kind("text"))
export interface TextPart extends Schema.Schema.Type<typeof TextPart> {}

export const FileWithBytes = Schema.Struct({
  /** base64 */
  bytes: Schema.String,
  name: optionalText,
  mimeType: optionalText
}).annotations({ identifier: "v0.3 FileWithBytes" })
export interface FileWithBytes extends Schema.Schema.Type<typeof FileWithBytes> {}

export const FileWithUri = Schema.Struct({
  uri: Schema.String,
  name: optionalText,
  mimeType: optionalText
}).annotations({ identifier: "v0.3 FileWithUri" })
export interface FileWithUri extends Schema.Schema.Type<typeof FileWithUri> {}

const FileContent = Schema.Union(FileWithBytes, FileWithUri)

/**
 * A file whose content is one of two fields, `bytes` and `uri` here (`fileWithBytes` and
 * `fileWithUri` in the proto): exactly one, as a request to relay's agent must have it. A union
 * of the two shapes would take a file with both as either, silently dropping the other.
 */
const exactlyOneContent = <B extends string, U extends string, C extends Schema.Struct.Fields, T, TI>(
  keys: { readonly bytes: B; readonly uri: U },
  common: C,
  content: Schema.Schema<T, TI>
) =>
  Schema.transformOrFail(
    Schema.Struct({ ...common, [keys.bytes]: optional(Schema.String), [keys.uri]: optional(Schema.String) }),
    Schema.typeSchema(content),
    {
      strict: false,
      decode: (file, _, ast) => {
        const record = file as Record<string, unknown>
        const has = (key: string) => record[key] !== undefined
        if (has(keys.bytes) !== has(keys.uri)) return ParseResult.succeed(file)
        const problem = has(keys.bytes) ? "has both" : "has neither"
        return ParseResult.fail(new ParseResult.Type(ast, file, `needs exactly one of ${keys.bytes} or ${keys.uri}, but ${problem}`))
      },
      encode: ParseResult.succeed
    }
  )

const RequestFile = exactlyOneContent({ bytes: "bytes", uri: "uri" }, { name: optionalText, mimeType: optionalText }, FileContent)

const filePart = <K extends Schema.Struct.Field, F extends Schema.Schema.Any>(kindField: K, file: F) =>
  Schema.Struct({
    kind: kindField,
    file,
    metadata: optional(Metadata)
  }).annotations({ identifier: "v0.3 FilePart" })

export const FilePart = filePart(kind("file"), FileContent)
export interface FilePart extends Schema.Schema.Type<typeof FilePart> {}

const dataPart = <K extends Schema.Struct.Field>(kindField: K) =>
  Schema.Struct({
    kind: kindField,
    /** v0.3 allows only objects here; translate.ts wraps other JSON values. */
    data: Metadata,
    metadata: optional(Metadata)
  }).annotations({ identifier: "v0.3 DataPart" })

export const DataPart = dataPart(kind("data"))
export interface DataPart extends Schema.Schema.Type<typeof DataPart> {}

export const Part = Schema.Union(TextPart, FilePart, DataPart).annotations({ identifier: "v0.3 Part" })
export type Part = typeof Part.Type

/** A Part in a request to relay's agent: its `kind` is required (§6.5; a missing one is -32602). */
export const RequestPart = Schema.Union(
  textPart(requiredKind("text")),
  filePart(requiredKind("file"), RequestFile),
  dataPart(requiredKind("data"))
)
  .annotations({ identifier: "v0.3 Part" })

const messageOf = <P extends Schema.Schema.Any>(part: P) =>
  Schema.Struct({
    kind: kind("message"),
    messageId: Schema.String,
    role: Role,
    parts: repeated(part),
    contextId: optionalText,
    taskId: optionalText,
    metadata: optional(Metadata),
    extensions: optional(Schema.Array(Schema.String)),
    referenceTaskIds: optional(Schema.Array(Schema.String))
  }).annotations({ identifier: "v0.3 Message" })

export const Message = messageOf(Part)
export interface Message extends Schema.Schema.Type<typeof Message> {}

export const Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: optionalText,
  description: optionalText,
  parts: repeated(Part),
  metadata: optional(Metadata),
  extensions: optional(Schema.Array(Schema.String))
}).annotations({ identifier: "v0.3 Artifact" })
export interface Artifact extends Schema.Schema.Type<typeof Artifact> {}

/** Task status; a state A2A does not define is kept aside as in V1.TaskStatus. */
export const TaskStatus = V1.taskStatusSchema(TASK_STATE_NAMES, V1.stateName, Message).annotations({
  identifier: "v0.3 TaskStatus"
})
export interface TaskStatus extends Schema.Schema.Type<typeof TaskStatus> {}

export const Task = Schema.Struct({
  kind: kind("task"),
  id: Schema.String,
  contextId: defaultText,
  status: TaskStatus,
  artifacts: optional(Schema.Array(Artifact)),
  history: optional(Schema.Array(Message)),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 Task" })
export interface Task extends Schema.Schema.Type<typeof Task> {}

export const TaskStatusUpdateEvent = Schema.Struct({
  kind: kind("status-update"),
  taskId: Schema.String,
  contextId: defaultText,
  status: TaskStatus,
  /** The last event of this interaction. */
  final: withDefault(Schema.Boolean, () => false),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 TaskStatusUpdateEvent" })
export interface TaskStatusUpdateEvent extends Schema.Schema.Type<typeof TaskStatusUpdateEvent> {}

export const TaskArtifactUpdateEvent = Schema.Struct({
  kind: kind("artifact-update"),
  taskId: Schema.String,
  contextId: defaultText,
  artifact: Artifact,
  append: optional(Schema.Boolean),
  lastChunk: optional(Schema.Boolean),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 TaskArtifactUpdateEvent" })
export interface TaskArtifactUpdateEvent extends Schema.Schema.Type<typeof TaskArtifactUpdateEvent> {}

/** A `message/stream` result, told apart by `kind` (or by shape when `kind` is missing). */
export const StreamEvent = Schema.Union(Task, Message, TaskStatusUpdateEvent, TaskArtifactUpdateEvent).annotations({
  identifier: "v0.3 StreamEvent"
})
export type StreamEvent = typeof StreamEvent.Type

/** A `message/send` result. */
export const SendResult = Schema.Union(Task, Message).annotations({ identifier: "v0.3 SendResult" })
export type SendResult = typeof SendResult.Type

export const PushNotificationAuthenticationInfo = Schema.Struct({
  schemes: repeated(Schema.String),
  credentials: optionalText
}).annotations({ identifier: "v0.3 PushNotificationAuthenticationInfo" })
export interface PushNotificationAuthenticationInfo extends Schema.Schema.Type<typeof PushNotificationAuthenticationInfo> {}

export const PushNotificationConfig = Schema.Struct({
  id: optionalText,
  url: Schema.String,
  token: optionalText,
  authentication: optional(PushNotificationAuthenticationInfo)
}).annotations({ identifier: "v0.3 PushNotificationConfig" })
export interface PushNotificationConfig extends Schema.Schema.Type<typeof PushNotificationConfig> {}

export const TaskPushNotificationConfig = Schema.Struct({
  taskId: Schema.String,
  pushNotificationConfig: PushNotificationConfig
}).annotations({ identifier: "v0.3 TaskPushNotificationConfig" })
export interface TaskPushNotificationConfig extends Schema.Schema.Type<typeof TaskPushNotificationConfig> {}

export const MessageSendConfiguration = Schema.Struct({
  acceptedOutputModes: optional(Schema.Array(Schema.String)),
  historyLength: optional(Schema.Int),
  pushNotificationConfig: optional(PushNotificationConfig),
  blocking: optional(Schema.Boolean)
}).annotations({ identifier: "v0.3 MessageSendConfiguration" })
export interface MessageSendConfiguration extends Schema.Schema.Type<typeof MessageSendConfiguration> {}

/** `message/send` and `message/stream` params (their parts must say their `kind`: see RequestPart). */
export const MessageSendParams = Schema.Struct({
  message: messageOf(RequestPart),
  configuration: optional(MessageSendConfiguration),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 MessageSendParams" })
export interface MessageSendParams extends Schema.Schema.Type<typeof MessageSendParams> {}

/** `tasks/get` params. */
export const TaskQueryParams = Schema.Struct({
  id: Schema.String,
  historyLength: optional(Schema.Int),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 TaskQueryParams" })
export interface TaskQueryParams extends Schema.Schema.Type<typeof TaskQueryParams> {}

/** `tasks/cancel`, `tasks/resubscribe` and `tasks/pushNotificationConfig/list` params. */
export const TaskIdParams = Schema.Struct({
  id: Schema.String,
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 TaskIdParams" })
export interface TaskIdParams extends Schema.Schema.Type<typeof TaskIdParams> {}

/** `tasks/pushNotificationConfig/get` params. */
export const GetTaskPushNotificationConfigParams = Schema.Struct({
  id: Schema.String,
  pushNotificationConfigId: optionalText,
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 GetTaskPushNotificationConfigParams" })
export interface GetTaskPushNotificationConfigParams extends Schema.Schema.Type<typeof GetTaskPushNotificationConfigParams> {}

/** `tasks/pushNotificationConfig/delete` params. */
export const DeleteTaskPushNotificationConfigParams = Schema.Struct({
  id: Schema.String,
  pushNotificationConfigId: Schema.String,
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 DeleteTaskPushNotificationConfigParams" })
export interface DeleteTaskPushNotificationConfigParams extends Schema.Schema.Type<typeof DeleteTaskPushNotificationConfigParams> {}

// ---------------------------------------------------------------------------
// Agent card (v0.3)
// ---------------------------------------------------------------------------

const flowCommon = {
  refreshUrl: optionalText,
  scopes: requiredScopes
}

export const OAuthFlows = Schema.Struct({
  authorizationCode: optional(
    Schema.Struct({ authorizationUrl: Schema.String, tokenUrl: Schema.String, ...flowCommon })
  ),
  clientCredentials: optional(Schema.Struct({ tokenUrl: Schema.String, ...flowCommon })),
  implicit: optional(Schema.Struct({ authorizationUrl: Schema.String, ...flowCommon })),
  password: optional(Schema.Struct({ tokenUrl: Schema.String, ...flowCommon }))
}).annotations({ identifier: "v0.3 OAuthFlows" })
export interface OAuthFlows extends Schema.Schema.Type<typeof OAuthFlows> {}

export const SecurityScheme = Schema.Union(
  Schema.Struct({
    type: Schema.Literal("apiKey"),
    in: Schema.Literal("query", "header", "cookie"),
    name: Schema.String,
    description: optionalText
  }),
  Schema.Struct({
    type: Schema.Literal("http"),
    scheme: Schema.String,
    bearerFormat: optionalText,
    description: optionalText
  }),
  Schema.Struct({
    type: Schema.Literal("oauth2"),
    flows: OAuthFlows,
    oauth2MetadataUrl: optionalText,
    description: optionalText
  }),
  Schema.Struct({ type: Schema.Literal("openIdConnect"), openIdConnectUrl: Schema.String, description: optionalText }),
  Schema.Struct({ type: Schema.Literal("mutualTLS"), description: optionalText })
).annotations({ identifier: "v0.3 SecurityScheme" })
export type SecurityScheme = typeof SecurityScheme.Type

/** `{ <scheme name>: [scopes] }` */
export const SecurityRequirement = Schema.Record({ key: Schema.String, value: Schema.Array(Schema.String) })
export type SecurityRequirement = typeof SecurityRequirement.Type

export const AgentInterface = Schema.Struct({
  url: Schema.String,
  transport: Schema.String
}).annotations({ identifier: "v0.3 AgentInterface" })
export interface AgentInterface extends Schema.Schema.Type<typeof AgentInterface> {}

export const AgentSkill = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: defaultText,
  tags: repeated(Schema.String),
  examples: optional(Schema.Array(Schema.String)),
  inputModes: optional(Schema.Array(Schema.String)),
  outputModes: optional(Schema.Array(Schema.String)),
  security: optional(Schema.Array(SecurityRequirement))
}).annotations({ identifier: "v0.3 AgentSkill" })
export interface AgentSkill extends Schema.Schema.Type<typeof AgentSkill> {}

export const AgentCapabilities = Schema.Struct({
  streaming: optional(Schema.Boolean),
  pushNotifications: optional(Schema.Boolean),
  stateTransitionHistory: optional(Schema.Boolean),
  extensions: optional(Schema.Array(V1.AgentExtension))
}).annotations({ identifier: "v0.3 AgentCapabilities" })
export interface AgentCapabilities extends Schema.Schema.Type<typeof AgentCapabilities> {}

export const AgentCard = Schema.Struct({
  protocolVersion: defaultText,
  name: Schema.String,
  description: defaultText,
  /** Main endpoint, spoken with `preferredTransport`. */
  url: Schema.String,
  preferredTransport: optionalText,
  additionalInterfaces: optional(Schema.Array(AgentInterface)),
  version: defaultText,
  provider: optional(V1.AgentProvider),
  documentationUrl: optionalText,
  iconUrl: optionalText,
  capabilities: withDefault(AgentCapabilities, () => ({})),
  securitySchemes: optional(Schema.Record({ key: Schema.String, value: SecurityScheme })),
  security: optional(Schema.Array(SecurityRequirement)),
  defaultInputModes: repeated(Schema.String),
  defaultOutputModes: repeated(Schema.String),
  skills: repeated(AgentSkill),
  supportsAuthenticatedExtendedCard: optional(Schema.Boolean),
  signatures: optional(Schema.Array(V1.AgentCardSignature))
}).annotations({ identifier: "v0.3 AgentCard" })
export interface AgentCard extends Schema.Schema.Type<typeof AgentCard> {}

// ---------------------------------------------------------------------------
// REST (v0.3 proto JSON under /v1/…)
// ---------------------------------------------------------------------------

/** v0.3 proto enum names; note the double L in CANCELLED. */
export const REST_TASK_STATES = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELLED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED"
] as const
export type RestTaskState = (typeof REST_TASK_STATES)[number]

/** The v0.3 proto spelling of a v1 state. */
export const restStateName = (state: V1.TaskState): RestTaskState => state === "TASK_STATE_CANCELED" ? "TASK_STATE_CANCELLED" : state

const restFileCommon = { mimeType: optionalText, name: optionalText }
export const RestFile = Schema.Union(
  Schema.Struct({ fileWithUri: Schema.String, ...restFileCommon }),
  Schema.Struct({ fileWithBytes: Schema.String, ...restFileCommon })
).annotations({ identifier: "v0.3 RestFile" })
export type RestFile = typeof RestFile.Type

const restPartOf = <F extends Schema.Schema.Any>(file: F) =>
  Schema.Union(
    Schema.Struct({ text: Schema.String, metadata: optional(Metadata) }),
    Schema.Struct({ file, metadata: optional(Metadata) }),
    Schema.Struct({ data: Schema.Struct({ data: Metadata }), metadata: optional(Metadata) })
  ).annotations({ identifier: "v0.3 RestPart" })

export const RestPart = restPartOf(RestFile)
export type RestPart = typeof RestPart.Type

/** A part of a request to relay's agent: its file has exactly one of fileWithBytes or fileWithUri. */
const RestRequestPart = restPartOf(exactlyOneContent({ bytes: "fileWithBytes", uri: "fileWithUri" }, restFileCommon, RestFile))

/**
 * The proto's Message keeps its parts in `content`; clients that reuse their JSON-RPC messages
 * over REST send `parts` of the JSON-RPC shape instead, which is read as well (`content` wins).
 */
const restMessageOf = <C extends Schema.Schema.Any, P extends Schema.Schema.Any>(contentPart: C, jsonRpcPart: P) =>
  Schema.Struct({
    messageId: Schema.String,
    contextId: optionalText,
    taskId: optionalText,
    role: V1.Role,
    content: repeated(contentPart),
    parts: optional(Schema.Array(jsonRpcPart)),
    metadata: optional(Metadata),
    extensions: optional(Schema.Array(Schema.String))
  }).annotations({ identifier: "v0.3 RestMessage" })

export const RestMessage = restMessageOf(RestPart, Part)
export interface RestMessage extends Schema.Schema.Type<typeof RestMessage> {}

export const RestArtifact = Schema.Struct({
  artifactId: Schema.String,
  name: optionalText,
  description: optionalText,
  parts: repeated(RestPart),
  metadata: optional(Metadata),
  extensions: optional(Schema.Array(Schema.String))
}).annotations({ identifier: "v0.3 RestArtifact" })
export interface RestArtifact extends Schema.Schema.Type<typeof RestArtifact> {}

/**
 * Task status; a state A2A does not define is kept aside as in V1.TaskStatus. The proto field
 * is `update` with json_name `message`; ProtoJSON readers accept both.
 */
export const RestTaskStatus = V1.taskStatusSchema(REST_TASK_STATES, restStateName, RestMessage, { update: "message" })
  .annotations({ identifier: "v0.3 RestTaskStatus" })
export interface RestTaskStatus extends Schema.Schema.Type<typeof RestTaskStatus> {}

export const RestTask = Schema.Struct({
  id: Schema.String,
  contextId: optionalText,
  status: RestTaskStatus,
  artifacts: optional(Schema.Array(RestArtifact)),
  history: optional(Schema.Array(RestMessage)),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 RestTask" })
export interface RestTask extends Schema.Schema.Type<typeof RestTask> {}

export const RestTaskStatusUpdateEvent = Schema.Struct({
  taskId: Schema.String,
  contextId: defaultText,
  status: RestTaskStatus,
  final: optional(Schema.Boolean),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 RestTaskStatusUpdateEvent" })
export interface RestTaskStatusUpdateEvent extends Schema.Schema.Type<typeof RestTaskStatusUpdateEvent> {}

export const RestTaskArtifactUpdateEvent = Schema.Struct({
  taskId: Schema.String,
  contextId: defaultText,
  artifact: RestArtifact,
  append: optional(Schema.Boolean),
  lastChunk: optional(Schema.Boolean),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 RestTaskArtifactUpdateEvent" })
export interface RestTaskArtifactUpdateEvent extends Schema.Schema.Type<typeof RestTaskArtifactUpdateEvent> {}

/** The proto member is `msg` with json_name `message`; ProtoJSON readers accept both. */
const RestMessageMember = Schema.Struct({ message: RestMessage }).annotations({ [ProtoJson.ProtoAliases]: { msg: "message" } })

/** `message:send` response. */
export const RestSendResponse = Schema.Union(Schema.Struct({ task: RestTask }), RestMessageMember).annotations({
  identifier: "v0.3 RestSendResponse"
})
export type RestSendResponse = typeof RestSendResponse.Type

/** One SSE event of `message:stream` / `tasks/{id}:subscribe`. */
export const RestStreamResponse = Schema.Union(
  Schema.Struct({ task: RestTask }),
  RestMessageMember,
  Schema.Struct({ statusUpdate: RestTaskStatusUpdateEvent }),
  Schema.Struct({ artifactUpdate: RestTaskArtifactUpdateEvent })
).annotations({ identifier: "v0.3 RestStreamResponse" })
export type RestStreamResponse = typeof RestStreamResponse.Type

export const RestSendMessageConfiguration = Schema.Struct({
  acceptedOutputModes: optional(Schema.Array(Schema.String)),
  pushNotification: optional(PushNotificationConfig),
  historyLength: optional(Schema.Int),
  blocking: optional(Schema.Boolean)
}).annotations({ identifier: "v0.3 RestSendMessageConfiguration" })
export interface RestSendMessageConfiguration extends Schema.Schema.Type<typeof RestSendMessageConfiguration> {}

/**
 * `message:send` / `message:stream` body. The proto field is `request`, with json_name `message`.
 * Parts in the JSON-RPC shape must say their `kind`, as in a JSON-RPC request.
 */
export const RestSendMessageRequest = Schema.Struct({
  message: restMessageOf(RestRequestPart, RequestPart),
  configuration: optional(RestSendMessageConfiguration),
  metadata: optional(Metadata)
}).annotations({ identifier: "v0.3 RestSendMessageRequest", [ProtoJson.ProtoAliases]: { request: "message" } })
export interface RestSendMessageRequest extends Schema.Schema.Type<typeof RestSendMessageRequest> {}

/** `name` is `tasks/{taskId}/pushNotificationConfigs/{configId}`. */
export const RestTaskPushNotificationConfig = Schema.Struct({
  name: defaultText,
  pushNotificationConfig: PushNotificationConfig
}).annotations({ identifier: "v0.3 RestTaskPushNotificationConfig" })
export interface RestTaskPushNotificationConfig extends Schema.Schema.Type<typeof RestTaskPushNotificationConfig> {}

export const RestListTaskPushNotificationConfigResponse = Schema.Struct({
  configs: repeated(RestTaskPushNotificationConfig),
  nextPageToken: optionalText
}).annotations({ identifier: "v0.3 RestListTaskPushNotificationConfigResponse" })
export interface RestListTaskPushNotificationConfigResponse extends Schema.Schema.Type<typeof RestListTaskPushNotificationConfigResponse> {}

/**
 * `POST /v1/tasks/{id}/pushNotificationConfigs` body. @a2a-js 0.3.x reads the proto request
 * (`parent`, `configId`, `config`) while @a2a-js 1.x in compat mode reads a bare
 * TaskPushNotificationConfig (`name`, `pushNotificationConfig`), so we send both at once.
 */
export const RestCreatePushConfigBody = Schema.Struct({
  parent: Schema.String,
  configId: Schema.String,
  config: RestTaskPushNotificationConfig,
  name: Schema.String,
  pushNotificationConfig: PushNotificationConfig
}).annotations({ identifier: "v0.3 RestCreatePushConfigBody" })
export interface RestCreatePushConfigBody extends Schema.Schema.Type<typeof RestCreatePushConfigBody> {}
