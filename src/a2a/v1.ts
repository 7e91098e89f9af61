/**
 * A2A v1.0 wire types (ProtoJSON), the canonical domain model of the relay.
 *
 * Every schema decodes leniently (legacy enum spellings, enum numbers, `null` for absent fields,
 * proto3 default omission, the three securityScheme shapes, unknown fields ignored) and encodes
 * strictly to canonical ProtoJSON (`TASK_STATE_*`, `ROLE_*`, oneof wrappers, no `kind`, absent
 * optionals omitted). So `ProtoJson.decoder(X)` (which also reads proto field names such as
 * `message_id`, see protoJson.ts) is the tolerant reader and `Schema.encode(X)` the strict writer.
 */
import { Either, Option, ParseResult, Predicate, Schema } from "effect"
import { isOptionalBoolean, isOptionalId, isOptionalSafeInteger, isText, keysWithin } from "./plainShapes.js"
import * as ProtoJson from "./protoJson.js"
import { defaultText, optional, optionalList, optionalText, repeated, requiredScopes, Scopes, withDefault } from "./schemaFields.js"

// ---------------------------------------------------------------------------
// Field helpers
// ---------------------------------------------------------------------------

/** int32 in ProtoJSON may be a number or a numeric string (and query strings are strings). */
const Int32 = Schema.Union(Schema.Int, Schema.compose(Schema.NumberFromString, Schema.Int)).annotations({
  description: "an integer"
})

/** bool from JSON or from a query string. */
const Bool = Schema.Union(Schema.Boolean, Schema.BooleanFromString).annotations({ description: "true or false" })

/** google.protobuf.Struct. */
export const Metadata = Schema.Record({ key: Schema.String, value: Schema.Unknown })
export type Metadata = typeof Metadata.Type

/**
 * Builds a lenient enum schema, which reads every spelling `parse` understands (the ProtoJSON
 * name or number among them), encoded as the canonical name. `expected` completes "must be …"
 * in the error about any other value.
 */
const lenientEnum = <const Names extends ReadonlyArray<string>>(
  names: Names,
  parse: (input: string | number) => Names[number] | undefined,
  expected: string
) =>
  Schema.transformOrFail(Schema.Union(Schema.String, Schema.Number).annotations({ description: expected }), Schema.Literal(...names), {
    strict: true,
    decode: (input, _, ast) => {
      const parsed = parse(input)
      return parsed === undefined
        ? ParseResult.fail(new ParseResult.Type(ast, input, `must be ${expected}, not ${JSON.stringify(input)}`))
        : ParseResult.succeed(parsed)
    },
    encode: ParseResult.succeed
  })

// ---------------------------------------------------------------------------
// Enums: TaskState and Role
// ---------------------------------------------------------------------------

/** In proto enum number order, so `TASK_STATES[n]` is the state numbered n. */
export const TASK_STATES = [
  "TASK_STATE_UNSPECIFIED",
  "TASK_STATE_SUBMITTED",
  "TASK_STATE_WORKING",
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_INPUT_REQUIRED",
  "TASK_STATE_REJECTED",
  "TASK_STATE_AUTH_REQUIRED"
] as const
export type TaskState = (typeof TASK_STATES)[number]

/** v0.3 JSON-RPC spelling of each state, also used for display. */
export type TaskStateName =
  | "unknown"
  | "submitted"
  | "working"
  | "completed"
  | "failed"
  | "canceled"
  | "input-required"
  | "rejected"
  | "auth-required"

const STATE_NAMES: Record<TaskState, TaskStateName> = {
  TASK_STATE_UNSPECIFIED: "unknown",
  TASK_STATE_SUBMITTED: "submitted",
  TASK_STATE_WORKING: "working",
  TASK_STATE_COMPLETED: "completed",
  TASK_STATE_FAILED: "failed",
  TASK_STATE_CANCELED: "canceled",
  TASK_STATE_INPUT_REQUIRED: "input-required",
  TASK_STATE_REJECTED: "rejected",
  TASK_STATE_AUTH_REQUIRED: "auth-required"
}

export const TERMINAL_STATES: ReadonlyArray<TaskState> = [
  "TASK_STATE_COMPLETED",
  "TASK_STATE_FAILED",
  "TASK_STATE_CANCELED",
  "TASK_STATE_REJECTED"
]
export const INTERRUPTED_STATES: ReadonlyArray<TaskState> = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]

/** Completed, failed, canceled or rejected: the task accepts no more messages. */
export const isTerminalState = (state: TaskState): boolean => TERMINAL_STATES.includes(state)

/** Input or auth required: the task waits for the client. */
export const isInterruptedState = (state: TaskState): boolean => INTERRUPTED_STATES.includes(state)

/** The lower-case v0.3 name (`completed`, `input-required`, …; UNSPECIFIED is `unknown`). */
export const stateName = (state: TaskState): TaskStateName => STATE_NAMES[state]

/** Settled for a conversation turn: finished, or waiting for the user. */
export const isSettledState = (state: TaskState): boolean => isTerminalState(state) || isInterruptedState(state)

/**
 * Reads any spelling of a task state: `TASK_STATE_COMPLETED`, `completed`, `input-required`,
 * `INPUT_REQUIRED`, the v0.3 REST `TASK_STATE_CANCELLED`, `unknown`, or the proto enum number
 * (also as text).
 */
export const parseTaskState = (input: string | number): TaskState | undefined => {
  if (typeof input === "number") return Number.isInteger(input) ? TASK_STATES[input] : undefined
  // A query string carries an enum number as text (`?status=2`).
  if (/^\d+$/.test(input)) return TASK_STATES[Number(input)]
  const upper = input.trim().toUpperCase().replace(/-/g, "_")
  const bare = upper.startsWith("TASK_STATE_") ? upper.slice("TASK_STATE_".length) : upper
  const canonical = `TASK_STATE_${bare === "CANCELLED" ? "CANCELED" : bare === "UNKNOWN" ? "UNSPECIFIED" : bare}`
  return TASK_STATES.find((state) => state === canonical)
}

/** Task state: decodes every spelling (see `parseTaskState`), encodes `TASK_STATE_*`. */
export const TaskState = lenientEnum(
  TASK_STATES,
  parseTaskState,
  "a task state (TASK_STATE_SUBMITTED, TASK_STATE_WORKING, …, or its number)"
).annotations({ identifier: "TaskState" })

/**
 * A task state as an agent reports it. A value A2A does not define (`TASK_STATE_WEIRD`, 42) is
 * not an error: the state reads as UNSPECIFIED and the value is kept, as it was sent, in
 * `unknownState`, so one odd state never fails a whole answer.
 */
export const reportedState = (
  input: string | number | undefined
): { readonly state: TaskState; readonly unknownState?: string } => {
  const state = input === undefined ? "TASK_STATE_UNSPECIFIED" : parseTaskState(input)
  return state === undefined ? { state: "TASK_STATE_UNSPECIFIED", unknownState: String(input) } : { state }
}

/** How a state is shown: `completed`, `input-required`, or `unknown (TASK_STATE_WEIRD)`. */
export type StateLabel = TaskStateName | `unknown (${string})`

export const stateLabel = (status: { readonly state: TaskState; readonly unknownState?: string | undefined }): StateLabel =>
  status.unknownState === undefined ? stateName(status.state) : `unknown (${status.unknownState})`

/** Keys of free-form JSON (Struct metadata, data parts), where A2A values are not looked for. */
const FREE_FORM_KEYS: ReadonlySet<string> = new Set(["metadata", "data", "params", "header"])

/**
 * The enum values A2A does not define that an agent's decoded answer carries: task states (as
 * sent, from `unknownState`) and roles that read as ROLE_UNSPECIFIED, each described once.
 */
export const unknownEnumsIn = (value: unknown): ReadonlyArray<string> => {
  const found = new Set<string>()
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit)
    if (!Predicate.isRecord(node)) return
    if (typeof node["unknownState"] === "string") found.add(`task state ${JSON.stringify(node["unknownState"])}`)
    if (node["role"] === "ROLE_UNSPECIFIED") found.add("a message role other than user or agent")
    for (const [key, child] of Object.entries(node)) if (!FREE_FORM_KEYS.has(key)) visit(child)
  }
  visit(value)
  return [...found]
}

/** In proto enum number order, so `ROLES[n]` is the role numbered n. */
export const ROLES = ["ROLE_UNSPECIFIED", "ROLE_USER", "ROLE_AGENT"] as const
export type Role = (typeof ROLES)[number]

/** Reads `ROLE_USER`/`user`/`USER`/1, `ROLE_AGENT`/`agent`/`AGENT`/2 and `ROLE_UNSPECIFIED`/0. */
export const parseRole = (input: string | number): Role | undefined => {
  if (typeof input === "number") return Number.isInteger(input) ? ROLES[input] : undefined
  if (/^\d+$/.test(input)) return ROLES[Number(input)]
  const upper = input.trim().toUpperCase()
  const bare = upper.startsWith("ROLE_") ? upper.slice("ROLE_".length) : upper
  return ROLES.find((role) => role === `ROLE_${bare}`)
}

const RoleSpelling = Schema.Union(Schema.String, Schema.Number).annotations({
  description: "a role (ROLE_USER or ROLE_AGENT, or its number)"
})

/**
 * Message role: decodes `ROLE_USER`/`user`/1/…, encodes `ROLE_*`. A role A2A does not define
 * reads as ROLE_UNSPECIFIED rather than failing an agent's whole answer; the agent server
 * refuses any message whose role is not ROLE_USER.
 */
export const Role = Schema.transform(RoleSpelling, Schema.Literal(...ROLES), {
  strict: true,
  decode: (input) => parseRole(input) ?? "ROLE_UNSPECIFIED",
  encode: (role) => role
}).annotations({ identifier: "Role" })

// ---------------------------------------------------------------------------
// Part, Message, Artifact
// ---------------------------------------------------------------------------

const partCommon = {
  metadata: optional(Metadata),
  filename: optionalText,
  mediaType: optionalText
}

export const TextPart = Schema.Struct({ text: Schema.String, ...partCommon }).annotations({ identifier: "TextPart" })
export const RawPart = Schema.Struct({ raw: Schema.String, ...partCommon }).annotations({ identifier: "RawPart" })
export const UrlPart = Schema.Struct({ url: Schema.String, ...partCommon }).annotations({ identifier: "UrlPart" })
// `data` is any JSON value, `null` included, but the key itself must be there.
const PresentValue = Schema.Unknown.pipe(
  Schema.filter((u): boolean => u !== undefined, { message: () => "is missing" })
)
export const DataPart = Schema.Struct({ data: PresentValue, ...partCommon }).annotations({ identifier: "DataPart" })

export type TextPart = typeof TextPart.Type
/** File content as base64 bytes (`raw` in ProtoJSON). */
export type RawPart = typeof RawPart.Type
/** File content by reference. */
export type UrlPart = typeof UrlPart.Type
export type DataPart = typeof DataPart.Type
export type Part = TextPart | RawPart | UrlPart | DataPart

const PartCanonical = Schema.Union(TextPart, RawPart, UrlPart, DataPart)

const PartFields = Schema.Struct({
  text: optional(Schema.String),
  raw: optional(Schema.String),
  url: optional(Schema.String),
  // exact, not nullable: `"data": null` is a legitimate JSON value.
  data: Schema.optionalWith(Schema.Unknown, { exact: true }),
  ...partCommon
})

/** Part: exactly one of `text`, `raw` (base64), `url` or `data`, plus mediaType/filename/metadata. */
export const Part: Schema.Schema<Part, typeof PartFields.Encoded> = Schema.transformOrFail(
  PartFields,
  Schema.typeSchema(PartCanonical),
  {
    strict: true,
    decode: (fields, _, ast) => {
      const { text, raw, url, data, ...common } = fields
      const contents = [
        text === undefined ? undefined : { text },
        raw === undefined ? undefined : { raw },
        url === undefined ? undefined : { url }
      ].filter((c) => c !== undefined)
      // A `data: null` next to another member is a serialiser filling every field, not content.
      const hasData = "data" in fields && !(data === null && contents.length > 0)
      const found = hasData ? [...contents, { data }] : contents
      const [content] = found
      if (content === undefined || found.length > 1) {
        const problem = content === undefined ? "has none" : "has several"
        return ParseResult.fail(
          new ParseResult.Type(ast, fields, `needs exactly one of text, raw, url or data, but ${problem}`)
        )
      }
      return ParseResult.succeed({ ...content, ...common })
    },
    encode: (part) => ParseResult.succeed(part)
  }
).annotations({ identifier: "Part" })

export const Message = Schema.Struct({
  messageId: Schema.String,
  contextId: optionalText,
  taskId: optionalText,
  role: Role,
  parts: repeated(Part),
  metadata: optional(Metadata),
  extensions: optionalList(Schema.String),
  referenceTaskIds: optionalList(Schema.String)
}).annotations({ identifier: "Message" })
export interface Message extends Schema.Schema.Type<typeof Message> {}

export const Artifact = Schema.Struct({
  artifactId: Schema.String,
  name: optionalText,
  description: optionalText,
  parts: repeated(Part),
  metadata: optional(Metadata),
  extensions: optionalList(Schema.String)
}).annotations({ identifier: "Artifact" })
export interface Artifact extends Schema.Schema.Type<typeof Artifact> {}

// ---------------------------------------------------------------------------
// Task and stream events
// ---------------------------------------------------------------------------

/** A state as sent: a name or a number, any value (see `reportedState`). */
export const ReportedState = optional(
  Schema.Union(Schema.String, Schema.Number).annotations({ description: "a task state (its name or number)" })
)

/**
 * A task status schema in any generation's spelling: `names` are its state names, `nameOf` the
 * name of each state. A state A2A does not define reads as UNSPECIFIED, the value sent kept in
 * `unknownState` (see `reportedState`), which is never written.
 */
export const taskStatusSchema = <const Names extends ReadonlyArray<string>, A, I>(
  names: Names,
  nameOf: (state: TaskState) => Names[number],
  message: Schema.Schema<A, I>,
  aliases: Readonly<Record<string, string>> = {}
) =>
  Schema.transform(
    Schema.Struct({ state: ReportedState, message: optional(message), timestamp: optionalText }).annotations({
      [ProtoJson.ProtoAliases]: aliases
    }),
    Schema.Struct({
      state: Schema.Literal(...names),
      unknownState: Schema.optionalWith(Schema.String, { exact: true }),
      message: Schema.optionalWith(Schema.typeSchema(message), { exact: true }),
      timestamp: Schema.optionalWith(Schema.String, { exact: true })
    }),
    {
      strict: true,
      decode: ({ state, ...status }) => {
        const reported = reportedState(state)
        return { ...status, ...reported, state: nameOf(reported.state) }
      },
      encode: ({ unknownState: _unknown, ...status }) => status
    }
  )

/** Task status. ProtoJSON omits the zero enum value, so a missing state is UNSPECIFIED. */
export const TaskStatus = taskStatusSchema(TASK_STATES, (state) => state, Message).annotations({ identifier: "TaskStatus" })
export interface TaskStatus extends Schema.Schema.Type<typeof TaskStatus> {}

export const Task = Schema.Struct({
  id: Schema.String,
  contextId: optionalText,
  status: TaskStatus,
  // `[]` is kept here: ListTasks tells an empty list from an omitted one.
  artifacts: optional(Schema.Array(Artifact)),
  history: optional(Schema.Array(Message)),
  metadata: optional(Metadata)
}).annotations({ identifier: "Task" })
export interface Task extends Schema.Schema.Type<typeof Task> {}

export const TaskStatusUpdateEvent = Schema.Struct({
  taskId: Schema.String,
  contextId: defaultText,
  status: TaskStatus,
  metadata: optional(Metadata)
}).annotations({ identifier: "TaskStatusUpdateEvent" })
export interface TaskStatusUpdateEvent extends Schema.Schema.Type<typeof TaskStatusUpdateEvent> {}

export const TaskArtifactUpdateEvent = Schema.Struct({
  taskId: Schema.String,
  contextId: defaultText,
  artifact: Artifact,
  /** Add the parts to the artifact with the same id instead of replacing it. */
  append: optional(Schema.Boolean),
  /** This is the artifact's final chunk. */
  lastChunk: optional(Schema.Boolean),
  metadata: optional(Metadata)
}).annotations({ identifier: "TaskArtifactUpdateEvent" })
export interface TaskArtifactUpdateEvent extends Schema.Schema.Type<typeof TaskArtifactUpdateEvent> {}

/** One stream event (also the v1.0 push notification body): exactly one member. */
export const StreamResponse = Schema.Union(
  Schema.Struct({ task: Task }),
  Schema.Struct({ message: Message }),
  Schema.Struct({ statusUpdate: TaskStatusUpdateEvent }),
  Schema.Struct({ artifactUpdate: TaskArtifactUpdateEvent })
).annotations({ identifier: "StreamResponse" })
export type StreamResponse = typeof StreamResponse.Type

// ---------------------------------------------------------------------------
// Push notification config
// ---------------------------------------------------------------------------

export const AuthenticationInfo = Schema.Struct({
  /** IANA HTTP auth scheme, e.g. `Bearer`. */
  scheme: Schema.String,
  credentials: optionalText
}).annotations({ identifier: "AuthenticationInfo" })
export interface AuthenticationInfo extends Schema.Schema.Type<typeof AuthenticationInfo> {}

/** v1.0 flat push config. `taskId` is empty when registered inline with SendMessage. */
export const TaskPushNotificationConfig = Schema.Struct({
  tenant: optionalText,
  id: optionalText,
  taskId: optionalText,
  url: Schema.String,
  token: optionalText,
  authentication: optional(AuthenticationInfo)
}).annotations({ identifier: "TaskPushNotificationConfig" })
export interface TaskPushNotificationConfig extends Schema.Schema.Type<typeof TaskPushNotificationConfig> {}

export const ListTaskPushNotificationConfigsResponse = Schema.Struct({
  configs: repeated(TaskPushNotificationConfig),
  nextPageToken: optionalText
}).annotations({ identifier: "ListTaskPushNotificationConfigsResponse" })
export interface ListTaskPushNotificationConfigsResponse extends Schema.Schema.Type<typeof ListTaskPushNotificationConfigsResponse> {}

// ---------------------------------------------------------------------------
// Requests and responses
// ---------------------------------------------------------------------------

export const SendMessageConfiguration = Schema.Struct({
  acceptedOutputModes: optionalList(Schema.String),
  taskPushNotificationConfig: optional(TaskPushNotificationConfig),
  historyLength: optional(Int32),
  /** v1.0 blocks by default; `true` returns as soon as the task exists. */
  returnImmediately: optional(Bool)
}).annotations({ identifier: "SendMessageConfiguration" })
export interface SendMessageConfiguration extends Schema.Schema.Type<typeof SendMessageConfiguration> {}

export const SendMessageRequest = Schema.Struct({
  tenant: optionalText,
  message: Message,
  configuration: optional(SendMessageConfiguration),
  metadata: optional(Metadata)
}).annotations({ identifier: "SendMessageRequest" })
export interface SendMessageRequest extends Schema.Schema.Type<typeof SendMessageRequest> {}

const MESSAGE_KEYS = ["messageId", "contextId", "taskId", "role", "parts"]
const isCanonicalTextMessage = (u: unknown) =>
  Predicate.isRecord(u) && keysWithin(u, MESSAGE_KEYS) && isText(u["messageId"]) &&
  (u["role"] === "ROLE_USER" || u["role"] === "ROLE_AGENT") && isOptionalId(u["contextId"]) &&
  isOptionalId(u["taskId"]) && Array.isArray(u["parts"]) &&
  u["parts"].every((part) => Predicate.isRecord(part) && keysWithin(part, ["text"]) && isText(part["text"]))

const isCanonicalConfiguration = (u: unknown) =>
  u === undefined || (Predicate.isRecord(u) && keysWithin(u, ["returnImmediately", "historyLength"]) &&
    isOptionalBoolean(u["returnImmediately"]) && isOptionalSafeInteger(u["historyLength"]))

const decodeSendMessageRequestSchema = ProtoJson.decoderEither(SendMessageRequest)

/**
 * Decodes a SendMessageRequest. Most clients send one message of text parts in canonical
 * ProtoJSON, with at most returnImmediately and historyLength configured: that is already the
 * decoded value and is taken as it is; anything else (proto field names, enum numbers, …) goes
 * through the ProtoJSON reader. The schema's decode was a good part of the agent server's CPU
 * and allocation per SendMessage (bench/README.md); a property test checks that both ways give
 * the same value.
 */
export const decodeSendMessageRequest = (input: unknown): Either.Either<SendMessageRequest, ParseResult.ParseError> =>
  Predicate.isRecord(input) && keysWithin(input, ["message", "configuration"]) && isCanonicalTextMessage(input["message"]) &&
    isCanonicalConfiguration(input["configuration"])
    ? Either.right(input as unknown as SendMessageRequest)
    : decodeSendMessageRequestSchema(input)

const isCanonicalStatus = (u: unknown) =>
  Predicate.isRecord(u) && keysWithin(u, ["state", "timestamp", "message"]) &&
  TASK_STATES.includes(u["state"] as TaskState) && u["state"] !== "TASK_STATE_UNSPECIFIED" && isOptionalId(u["timestamp"]) &&
  (u["message"] === undefined || isCanonicalTextMessage(u["message"]))

/** `{statusUpdate}` in canonical ProtoJSON with a text status message: the most frequent event and push. */
const isCanonicalStatusUpdate = (u: unknown) => {
  if (!Predicate.isRecord(u) || !keysWithin(u, ["statusUpdate"])) return false
  const update = u["statusUpdate"]
  return Predicate.isRecord(update) && keysWithin(update, ["taskId", "contextId", "status"]) && isText(update["taskId"]) &&
    isText(update["contextId"]) && update["contextId"] !== "" && isCanonicalStatus(update["status"])
}

const decodeStreamResponseSchema = ProtoJson.decoderEither(StreamResponse)

/**
 * Decodes a StreamResponse (an event, or a push notification's body). A status update in
 * canonical ProtoJSON with a text status message is already the decoded value and is taken as it
 * is; anything else goes through the ProtoJSON reader. The decode was a good part of `relay server
 * push`'s CPU per notification (bench/README.md); a property test checks that both ways give the
 * same value.
 */
export const decodeStreamResponse = (input: unknown): Either.Either<StreamResponse, ParseResult.ParseError> =>
  isCanonicalStatusUpdate(input) ? Either.right(input as unknown as StreamResponse) : decodeStreamResponseSchema(input)

const isTextParts = (u: unknown) =>
  Array.isArray(u) && u.every((part) => Predicate.isRecord(part) && keysWithin(part, ["text"]) && isText(part["text"]))

const isCanonicalArtifact = (u: unknown) =>
  Predicate.isRecord(u) && keysWithin(u, ["artifactId", "name", "description", "parts"]) && isText(u["artifactId"]) &&
  isOptionalId(u["name"]) && isOptionalId(u["description"]) && isTextParts(u["parts"])

const isOptionalListOf = (u: unknown, isItem: (item: unknown) => boolean) => u === undefined || (Array.isArray(u) && u.every(isItem))

/** A task of text only in canonical ProtoJSON: its status, its text messages, its artifacts of text parts. */
const isCanonicalTask = (u: unknown) =>
  Predicate.isRecord(u) && keysWithin(u, ["id", "contextId", "status", "artifacts", "history"]) && isText(u["id"]) &&
  isOptionalId(u["contextId"]) && isCanonicalStatus(u["status"]) && isOptionalListOf(u["artifacts"], isCanonicalArtifact) &&
  isOptionalListOf(u["history"], isCanonicalTextMessage)

const decodeTaskSchema = ProtoJson.decoderEither(Task)

/**
 * Decodes a Task (GetTask's answer, and the task of a SendMessage answer). A task of text in
 * canonical ProtoJSON, as agents mostly answer, is already the decoded value and is taken as it
 * is; anything else goes through the ProtoJSON reader. The schema's decode cost each answer
 * `relay mcp`'s send_message reads (two per call; bench/README.md); a property test checks that
 * both ways give the same value.
 */
export const decodeTask = (input: unknown): Either.Either<Task, ParseResult.ParseError> =>
  isCanonicalTask(input) ? Either.right(input as unknown as Task) : decodeTaskSchema(input)

export const SendMessageResponse = Schema.Union(
  Schema.Struct({ task: Task }),
  Schema.Struct({ message: Message })
).annotations({ identifier: "SendMessageResponse" })
export type SendMessageResponse = typeof SendMessageResponse.Type

const decodeSendMessageResponseSchema = ProtoJson.decoderEither(SendMessageResponse)

/** Decodes a SendMessage answer: `{task}` with a canonical task as decodeTask does, anything else by its schema. */
export const decodeSendMessageResponse = (input: unknown): Either.Either<SendMessageResponse, ParseResult.ParseError> =>
  Predicate.isRecord(input) && keysWithin(input, ["task"]) && isCanonicalTask(input["task"])
    ? Either.right(input as unknown as SendMessageResponse)
    : decodeSendMessageResponseSchema(input)

export const GetTaskRequest = Schema.Struct({
  tenant: optionalText,
  id: Schema.String,
  historyLength: optional(Int32)
}).annotations({ identifier: "GetTaskRequest" })
export interface GetTaskRequest extends Schema.Schema.Type<typeof GetTaskRequest> {}

export const ListTasksRequest = Schema.Struct({
  tenant: optionalText,
  contextId: optionalText,
  status: optional(TaskState),
  pageSize: optional(Int32),
  pageToken: optionalText,
  historyLength: optional(Int32),
  statusTimestampAfter: optionalText,
  includeArtifacts: optional(Bool)
}).annotations({ identifier: "ListTasksRequest" })
export interface ListTasksRequest extends Schema.Schema.Type<typeof ListTasksRequest> {}

export const ListTasksResponse = Schema.Struct({
  tasks: repeated(Task),
  /** Always present; `""` on the last page. */
  nextPageToken: defaultText,
  pageSize: withDefault(Int32, () => 0),
  totalSize: withDefault(Int32, () => 0)
}).annotations({ identifier: "ListTasksResponse" })
export interface ListTasksResponse extends Schema.Schema.Type<typeof ListTasksResponse> {}

export const CancelTaskRequest = Schema.Struct({
  tenant: optionalText,
  id: Schema.String,
  metadata: optional(Metadata)
}).annotations({ identifier: "CancelTaskRequest" })
export interface CancelTaskRequest extends Schema.Schema.Type<typeof CancelTaskRequest> {}

export const SubscribeToTaskRequest = Schema.Struct({
  tenant: optionalText,
  id: Schema.String
}).annotations({ identifier: "SubscribeToTaskRequest" })
export interface SubscribeToTaskRequest extends Schema.Schema.Type<typeof SubscribeToTaskRequest> {}

/** Get and Delete of one push config take the same parameters. */
export const TaskPushNotificationConfigRequest = Schema.Struct({
  tenant: optionalText,
  taskId: Schema.String,
  id: Schema.String
}).annotations({ identifier: "TaskPushNotificationConfigRequest" })
export interface TaskPushNotificationConfigRequest extends Schema.Schema.Type<typeof TaskPushNotificationConfigRequest> {}

export const ListTaskPushNotificationConfigsRequest = Schema.Struct({
  tenant: optionalText,
  taskId: Schema.String,
  pageSize: optional(Int32),
  pageToken: optionalText
}).annotations({ identifier: "ListTaskPushNotificationConfigsRequest" })
export interface ListTaskPushNotificationConfigsRequest extends Schema.Schema.Type<typeof ListTaskPushNotificationConfigsRequest> {}

export const GetExtendedAgentCardRequest = Schema.Struct({ tenant: optionalText }).annotations({
  identifier: "GetExtendedAgentCardRequest"
})
export interface GetExtendedAgentCardRequest extends Schema.Schema.Type<typeof GetExtendedAgentCardRequest> {}

// ---------------------------------------------------------------------------
// Security schemes and requirements
// ---------------------------------------------------------------------------

export const AuthorizationCodeOAuthFlow = Schema.Struct({
  authorizationUrl: Schema.String,
  tokenUrl: Schema.String,
  refreshUrl: optionalText,
  scopes: requiredScopes,
  pkceRequired: optional(Schema.Boolean)
}).annotations({ identifier: "AuthorizationCodeOAuthFlow" })
export const ClientCredentialsOAuthFlow = Schema.Struct({
  tokenUrl: Schema.String,
  refreshUrl: optionalText,
  scopes: requiredScopes
}).annotations({ identifier: "ClientCredentialsOAuthFlow" })
export const DeviceCodeOAuthFlow = Schema.Struct({
  deviceAuthorizationUrl: Schema.String,
  tokenUrl: Schema.String,
  refreshUrl: optionalText,
  scopes: requiredScopes
}).annotations({ identifier: "DeviceCodeOAuthFlow" })
/** Deprecated in v1.0, still in the proto. */
export const ImplicitOAuthFlow = Schema.Struct({
  authorizationUrl: optionalText,
  refreshUrl: optionalText,
  scopes: optional(Scopes)
}).annotations({ identifier: "ImplicitOAuthFlow" })
/** Deprecated in v1.0, still in the proto. */
export const PasswordOAuthFlow = Schema.Struct({
  tokenUrl: optionalText,
  refreshUrl: optionalText,
  scopes: optional(Scopes)
}).annotations({ identifier: "PasswordOAuthFlow" })

/** OAuthFlows oneof; the member name is the flow. */
export const OAuthFlows = Schema.Union(
  Schema.Struct({ authorizationCode: AuthorizationCodeOAuthFlow }),
  Schema.Struct({ clientCredentials: ClientCredentialsOAuthFlow }),
  Schema.Struct({ deviceCode: DeviceCodeOAuthFlow }),
  Schema.Struct({ implicit: ImplicitOAuthFlow }),
  Schema.Struct({ password: PasswordOAuthFlow })
).annotations({ identifier: "OAuthFlows" })
export type OAuthFlows = typeof OAuthFlows.Type

export const APIKeySecurityScheme = Schema.Struct({
  description: optionalText,
  /** `query`, `header` or `cookie`. */
  location: Schema.String,
  name: Schema.String
}).annotations({ identifier: "APIKeySecurityScheme" })
export const HTTPAuthSecurityScheme = Schema.Struct({
  description: optionalText,
  scheme: Schema.String,
  bearerFormat: optionalText
}).annotations({ identifier: "HTTPAuthSecurityScheme" })
export const OAuth2SecurityScheme = Schema.Struct({
  description: optionalText,
  flows: OAuthFlows,
  oauth2MetadataUrl: optionalText
}).annotations({ identifier: "OAuth2SecurityScheme" })
export const OpenIdConnectSecurityScheme = Schema.Struct({
  description: optionalText,
  openIdConnectUrl: Schema.String
}).annotations({ identifier: "OpenIdConnectSecurityScheme" })
export const MutualTlsSecurityScheme = Schema.Struct({ description: optionalText }).annotations({
  identifier: "MutualTlsSecurityScheme"
})

const SecuritySchemeCanonical = Schema.Union(
  Schema.Struct({ apiKeySecurityScheme: APIKeySecurityScheme }),
  Schema.Struct({ httpAuthSecurityScheme: HTTPAuthSecurityScheme }),
  Schema.Struct({ oauth2SecurityScheme: OAuth2SecurityScheme }),
  Schema.Struct({ openIdConnectSecurityScheme: OpenIdConnectSecurityScheme }),
  Schema.Struct({ mtlsSecurityScheme: MutualTlsSecurityScheme })
)
export type SecurityScheme = typeof SecuritySchemeCanonical.Type

const SCHEME_MEMBERS = [
  "apiKeySecurityScheme",
  "httpAuthSecurityScheme",
  "oauth2SecurityScheme",
  "openIdConnectSecurityScheme",
  "mtlsSecurityScheme"
] as const
type SchemeMember = (typeof SCHEME_MEMBERS)[number]

const V03_SCHEME_TYPES: Record<string, SchemeMember> = {
  apiKey: "apiKeySecurityScheme",
  http: "httpAuthSecurityScheme",
  oauth2: "oauth2SecurityScheme",
  openIdConnect: "openIdConnectSecurityScheme",
  mutualTLS: "mtlsSecurityScheme"
}

const FLOW_MEMBERS = ["authorizationCode", "clientCredentials", "deviceCode", "implicit", "password"] as const

/** Unwraps the ts-proto `{ $case, value }` oneof form into `{ [$case]: value }`. */
const unwrapCase = (u: unknown): unknown => Predicate.isRecord(u) && typeof u["$case"] === "string" ? { [u["$case"]]: u["value"] } : u

/**
 * OAuth flows in any shape: the v1.0 oneof, the ts-proto `{flow:{$case,value}}` form, or the v0.3
 * object that may hold several flows at once (the first in FLOW_MEMBERS order wins, since v1.0
 * allows one).
 */
const normalizeFlows = (u: unknown): unknown => {
  if (!Predicate.isRecord(u)) return u
  const flows = Predicate.isRecord(u["flow"]) ? (unwrapCase(u["flow"]) as Record<string, unknown>) : u
  const member = FLOW_MEMBERS.find((name) => Predicate.isRecord(flows[name]))
  return member === undefined ? u : { [member]: flows[member] }
}

const fromV03TypeForm = (u: Record<string, unknown>): unknown => {
  const member = typeof u["type"] === "string" ? V03_SCHEME_TYPES[u["type"]] : undefined
  if (member === undefined) return u
  const { type: _type, in: location, flows, ...rest } = u
  switch (member) {
    case "apiKeySecurityScheme":
      return { [member]: { ...rest, location } }
    case "oauth2SecurityScheme":
      return { [member]: { ...rest, flows: normalizeFlows(flows) } }
    default:
      return { [member]: rest }
  }
}

/** Any of the three securityScheme shapes → the ProtoJSON oneof shape (validated afterwards). */
const normalizeSecurityScheme = (u: unknown): unknown => {
  if (!Predicate.isRecord(u)) return u
  const wrapper = Predicate.isRecord(u["scheme"]) && "$case" in u["scheme"] ? unwrapCase(u["scheme"]) : u
  if (!Predicate.isRecord(wrapper)) return u
  for (const [key, value] of Object.entries(wrapper)) {
    const member = SCHEME_MEMBERS.find((m) => m === key)
    if (member !== undefined && Predicate.isRecord(value)) {
      return member === "oauth2SecurityScheme"
        ? { [member]: { ...value, flows: normalizeFlows(value["flows"]) } }
        : { [member]: value }
    }
  }
  return fromV03TypeForm(u)
}

/**
 * Security scheme. Decodes the ProtoJSON oneof (`{httpAuthSecurityScheme:{…}}`), the v0.3
 * OpenAPI-like form (`{type:"http", scheme:"bearer"}`) and the ts-proto form that @a2a-js
 * emits on its well-known card (`{scheme:{$case:"httpAuthSecurityScheme", value:{…}}}`);
 * encodes the ProtoJSON oneof.
 */
export const SecurityScheme: Schema.Schema<SecurityScheme, unknown> = Schema.transform(
  Schema.Unknown,
  SecuritySchemeCanonical,
  { strict: false, decode: normalizeSecurityScheme, encode: (s) => s }
).annotations({ identifier: "SecurityScheme" })

/** `list` wrapper of the proto StringList. */
const StringList = Schema.Struct({ list: repeated(Schema.String) })

const SecurityRequirementCanonical = Schema.Struct({
  /** Scheme name → required scopes. */
  schemes: Schema.Record({ key: Schema.String, value: StringList })
})
export interface SecurityRequirement extends Schema.Schema.Type<typeof SecurityRequirementCanonical> {}

const asScopeList = (value: unknown): unknown => (Array.isArray(value) ? { list: value } : value)

/** v1.0 `{schemes:{name:{list}}}` or v0.3 `{name:[scopes]}` → v1.0 shape. */
const normalizeSecurityRequirement = (u: unknown): unknown => {
  if (!Predicate.isRecord(u)) return u
  const v1Schemes = Predicate.isRecord(u["schemes"]) ? u["schemes"] : undefined
  const entries = Object.entries(v1Schemes ?? u)
  return { schemes: Object.fromEntries(entries.map(([name, scopes]) => [name, asScopeList(scopes)])) }
}

/** Security requirement: decodes the v1.0 and the v0.3 shape, encodes v1.0. */
export const SecurityRequirement: Schema.Schema<SecurityRequirement, unknown> = Schema.transform(
  Schema.Unknown,
  SecurityRequirementCanonical,
  { strict: false, decode: normalizeSecurityRequirement, encode: (r) => r }
).annotations({ identifier: "SecurityRequirement" })

// ---------------------------------------------------------------------------
// Agent card
// ---------------------------------------------------------------------------

export const PROTOCOL_BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"] as const
export type ProtocolBinding = (typeof PROTOCOL_BINDINGS)[number]

const BINDING_ALIASES: Record<string, ProtocolBinding> = {
  JSONRPC: "JSONRPC",
  "JSON-RPC": "JSONRPC",
  "HTTP+JSON": "HTTP+JSON",
  REST: "HTTP+JSON",
  GRPC: "GRPC"
}

/** Canonical spelling for the core bindings; custom binding URIs pass through unchanged. */
export const normalizeBinding = (binding: string): string => BINDING_ALIASES[binding.trim().toUpperCase()] ?? binding

const ProtocolBindingName = Schema.transform(Schema.String, Schema.String, {
  strict: true,
  decode: normalizeBinding,
  encode: (s) => s
})

export const AgentInterface = Schema.Struct({
  url: Schema.String,
  /** `JSONRPC`, `HTTP+JSON`, `GRPC` or a custom binding URI. */
  protocolBinding: ProtocolBindingName,
  tenant: optionalText,
  /** `Major.Minor`, e.g. `1.0` or `0.3`; `""` when a sloppy card left it out. */
  protocolVersion: defaultText
}).annotations({ identifier: "AgentInterface" })
export interface AgentInterface extends Schema.Schema.Type<typeof AgentInterface> {}

export const AgentProvider = Schema.Struct({
  organization: Schema.String,
  url: defaultText
}).annotations({ identifier: "AgentProvider" })
export interface AgentProvider extends Schema.Schema.Type<typeof AgentProvider> {}

export const AgentExtension = Schema.Struct({
  uri: Schema.String,
  description: optionalText,
  required: optional(Schema.Boolean),
  params: optional(Metadata)
}).annotations({ identifier: "AgentExtension" })
export interface AgentExtension extends Schema.Schema.Type<typeof AgentExtension> {}

export const AgentCapabilities = Schema.Struct({
  streaming: optional(Schema.Boolean),
  pushNotifications: optional(Schema.Boolean),
  extensions: optionalList(AgentExtension),
  extendedAgentCard: optional(Schema.Boolean)
}).annotations({ identifier: "AgentCapabilities" })
export interface AgentCapabilities extends Schema.Schema.Type<typeof AgentCapabilities> {}

export const AgentCardSignature = Schema.Struct({
  protected: Schema.String,
  signature: Schema.String,
  header: optional(Metadata)
}).annotations({ identifier: "AgentCardSignature" })
export interface AgentCardSignature extends Schema.Schema.Type<typeof AgentCardSignature> {}

const agentSkillFields = {
  id: Schema.String,
  name: Schema.String,
  description: defaultText,
  tags: repeated(Schema.String),
  examples: optionalList(Schema.String),
  inputModes: optionalList(Schema.String),
  outputModes: optionalList(Schema.String),
  securityRequirements: optionalList(SecurityRequirement)
}
const AgentSkillCanonical = Schema.Struct(agentSkillFields)
export interface AgentSkill extends Schema.Schema.Type<typeof AgentSkillCanonical> {}

/** Agent skill; the v0.3 `security` field is read as `securityRequirements`. */
export const AgentSkill = Schema.transform(
  Schema.Struct({ ...agentSkillFields, security: optionalList(SecurityRequirement) }),
  Schema.typeSchema(AgentSkillCanonical),
  {
    strict: true,
    decode: ({ security, ...skill }) =>
      skill.securityRequirements === undefined && security !== undefined
        ? { ...skill, securityRequirements: security }
        : skill,
    encode: (skill) => skill
  }
).annotations({ identifier: "AgentSkill" })

const decodeSecuritySchemeEither = ProtoJson.decoderEither(SecurityScheme)
const decodeSecurityScheme = (json: unknown) => Either.getRight(decodeSecuritySchemeEither(json))

const recognisedSchemes = (raw: Readonly<Record<string, unknown>>): Record<string, SecurityScheme> =>
  Object.fromEntries(
    Object.entries(raw).flatMap(([name, value]) =>
      Option.match(decodeSecurityScheme(value), { onNone: () => [], onSome: (scheme) => [[name, scheme]] })
    )
  )

const agentCardFields = {
  name: Schema.String,
  description: defaultText,
  /** Ordered by preference. */
  supportedInterfaces: repeated(AgentInterface),
  provider: optional(AgentProvider),
  version: defaultText,
  documentationUrl: optionalText,
  capabilities: withDefault(AgentCapabilities, () => ({})),
  securitySchemes: optional(Schema.Record({ key: Schema.String, value: SecurityScheme })),
  securityRequirements: optionalList(SecurityRequirement),
  defaultInputModes: repeated(Schema.String),
  defaultOutputModes: repeated(Schema.String),
  skills: repeated(AgentSkill),
  signatures: optionalList(AgentCardSignature),
  iconUrl: optionalText
}
const AgentCardCanonical = Schema.Struct(agentCardFields)
export interface AgentCard extends Schema.Schema.Type<typeof AgentCardCanonical> {}

/**
 * Agent card. Besides the v1.0 fields it reads the v0.3 aliases a hybrid card carries
 * (`security`, `supportsAuthenticatedExtendedCard`); building interfaces from a v0.3 card's
 * `url`/`preferredTransport` is done by `cardFromWire` in translate.ts.
 */
export const AgentCard = Schema.transform(
  Schema.Struct({
    ...agentCardFields,
    // Read raw so that one unrecognised scheme drops out instead of failing the whole card.
    securitySchemes: optional(Schema.Record({ key: Schema.String, value: Schema.Unknown })),
    security: optionalList(SecurityRequirement),
    supportsAuthenticatedExtendedCard: optional(Schema.Boolean)
  }),
  Schema.typeSchema(AgentCardCanonical),
  {
    strict: true,
    decode: ({ security, supportsAuthenticatedExtendedCard, securitySchemes, ...card }) => {
      const securityRequirements = card.securityRequirements ?? security
      const extendedAgentCard = card.capabilities.extendedAgentCard ?? supportsAuthenticatedExtendedCard
      const schemes = securitySchemes === undefined ? {} : recognisedSchemes(securitySchemes)
      return {
        ...card,
        ...(Object.keys(schemes).length === 0 ? {} : { securitySchemes: schemes }),
        ...(securityRequirements === undefined ? {} : { securityRequirements }),
        capabilities: {
          ...card.capabilities,
          ...(extendedAgentCard === undefined ? {} : { extendedAgentCard })
        }
      }
    },
    encode: (card) => card
  }
).annotations({ identifier: "AgentCard" })
