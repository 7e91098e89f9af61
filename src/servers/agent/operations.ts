/**
 * The A2A operations as the agent server's doors see them: decoded into the v1.0 domain model
 * (whichever binding and version the caller spoke), run by the agent programs (programs/agent/), and their
 * results encoded back in the caller's version and binding.
 */
import { Effect, type ParseResult, Schema, type Stream } from "effect"
import type { IncomingHttpHeaders } from "node:http"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import * as T from "../../a2a/translate.js"
import * as V03 from "../../a2a/v03.js"
import * as V1 from "../../a2a/v1.js"
import { AgentRequestError, internalError, unsupportedOperation } from "../../domain/agentErrors.js"
import * as PushConfigs from "../../programs/agent/pushConfigs.js"
import * as Tasks from "../../programs/agent/useCases.js"
import type { ModelAccess } from "../../services/ModelAccess.js"
import type { PushSender } from "../../services/PushSender.js"
import type { TaskStore } from "../../services/TaskStore.js"
import type { Exchange } from "../exchange.js"

/** What the doors need to know about the server they run in. */
export interface ServerContext {
  /** The API-key check when auth is on. */
  readonly checkKey: ((headers: IncomingHttpHeaders) => boolean) | undefined
  /** The extended card for the address the client used; undefined when the server has none. */
  readonly extendedCard: (exchange: Exchange) => V1.AgentCard | undefined
}

export type Operation =
  | { readonly _tag: "SendMessage"; readonly request: V1.SendMessageRequest }
  | { readonly _tag: "SendStreamingMessage"; readonly request: V1.SendMessageRequest }
  | { readonly _tag: "GetTask"; readonly request: V1.GetTaskRequest }
  | { readonly _tag: "ListTasks"; readonly request: V1.ListTasksRequest }
  | { readonly _tag: "CancelTask"; readonly request: V1.CancelTaskRequest }
  | { readonly _tag: "SubscribeToTask"; readonly request: V1.SubscribeToTaskRequest }
  | { readonly _tag: "CreatePushConfig"; readonly config: V1.TaskPushNotificationConfig }
  | { readonly _tag: "GetPushConfig"; readonly request: { readonly taskId: string; readonly id?: string | undefined } }
  | { readonly _tag: "ListPushConfigs"; readonly request: V1.ListTaskPushNotificationConfigsRequest }
  | { readonly _tag: "DeletePushConfig"; readonly request: V1.TaskPushNotificationConfigRequest }
  | { readonly _tag: "GetExtendedAgentCard" }

export interface PushConfigPage {
  readonly configs: ReadonlyArray<V1.TaskPushNotificationConfig>
  readonly nextPageToken: string
}

export type Outcome =
  | { readonly _tag: "Send"; readonly value: V1.SendMessageResponse }
  | { readonly _tag: "Task"; readonly value: V1.Task }
  | { readonly _tag: "TaskList"; readonly value: V1.ListTasksResponse }
  | { readonly _tag: "PushConfig"; readonly value: V1.TaskPushNotificationConfig }
  | { readonly _tag: "PushConfigList"; readonly value: PushConfigPage }
  | { readonly _tag: "Deleted" }
  | { readonly _tag: "ExtendedCard" }
  | { readonly _tag: "Events"; readonly value: Stream.Stream<V1.StreamResponse> }

/** What the programs need from the server's layers. */
export type AgentServices = TaskStore | ModelAccess | PushSender

const outcome = <Tag extends Outcome["_tag"]>(tag: Tag) => <A>(value: A) => ({ _tag: tag, value }) as const
// Made once: a send is the common request.
const sendOutcome = outcome("Send")

/**
 * Runs one operation; `generation` is the protocol version push configs made here are served
 * with. A defect (a bug) is logged and answered as an internal error rather than a dropped request.
 */
export const execute = (
  operation: Operation,
  generation: ProtocolVersion
): Effect.Effect<Outcome, AgentRequestError, AgentServices> =>
  run(operation, generation).pipe(
    Effect.catchAllDefect((defect) =>
      Effect.zipRight(
        Effect.logError(`${operation._tag} failed unexpectedly`, defect),
        Effect.fail(internalError(`${operation._tag} failed unexpectedly: ${String(defect)}`))
      )
    )
  )

const run = (operation: Operation, generation: ProtocolVersion): Effect.Effect<Outcome, AgentRequestError, AgentServices> => {
  switch (operation._tag) {
    case "SendMessage":
      return Effect.map(Tasks.sendMessage(operation.request, generation), sendOutcome)
    case "SendStreamingMessage":
      return Effect.map(Tasks.streamMessage(operation.request, generation), outcome("Events"))
    case "GetTask":
      return Effect.map(Tasks.getTask(operation.request), outcome("Task"))
    case "ListTasks":
      return Effect.map(Tasks.listTasks(operation.request), outcome("TaskList"))
    case "CancelTask":
      return Effect.map(Tasks.cancelTask(operation.request), outcome("Task"))
    case "SubscribeToTask":
      return Effect.map(Tasks.subscribeToTask(operation.request), outcome("Events"))
    case "CreatePushConfig":
      return Effect.map(PushConfigs.createPushConfig(operation.config, generation), outcome("PushConfig"))
    case "GetPushConfig":
      return Effect.map(PushConfigs.getPushConfig(operation.request), outcome("PushConfig"))
    case "ListPushConfigs":
      return Effect.map(PushConfigs.listPushConfigs(operation.request), outcome("PushConfigList"))
    case "DeletePushConfig":
      return Effect.as(PushConfigs.deletePushConfig(operation.request), { _tag: "Deleted" } as const)
    case "GetExtendedAgentCard":
      return Effect.succeed({ _tag: "ExtendedCard" } as const)
  }
}

// ---------------------------------------------------------------------------
// Encoding results in the caller's dialect

/** How one dialect writes each kind of result as JSON. */
export interface ResultCodec {
  readonly generation: ProtocolVersion
  readonly send: (value: V1.SendMessageResponse) => unknown
  readonly task: (value: V1.Task) => unknown
  readonly taskList: (value: V1.ListTasksResponse) => unknown
  readonly pushConfig: (value: V1.TaskPushNotificationConfig) => unknown
  readonly pushConfigList: (value: PushConfigPage) => unknown
  readonly card: (value: V1.AgentCard) => Effect.Effect<unknown, ParseResult.ParseError>
  readonly event: (value: V1.StreamResponse) => unknown
}

const encoder = <A, I>(schema: Schema.Schema<A, I>) => Schema.encodeSync(schema)

/**
 * v1.0, both bindings: canonical ProtoJSON. The domain values the programs return already are
 * that JSON (the v1 schemas encode them unchanged: their decoded and encoded shapes are the same,
 * and decoding stripped whatever a client added), so they are written as they are; running the
 * encoders on every answer cost a tenth of a SendMessage. A test keeps the two in step.
 */
export const v1Codec: ResultCodec = {
  generation: "1.0",
  send: (value) => value,
  task: (value) => value,
  taskList: (value) => value,
  pushConfig: (value) => value,
  pushConfigList: (value) => value,
  card: Schema.encode(V1.AgentCard),
  event: (value) => value
}

const encodeV03PushConfig = encoder(T.PushConfigAsV03)
const encodeV03Card = Schema.encode(V03.AgentCard)

/**
 * v0.3 JSON-RPC: `kind`-tagged objects, lower-case states, `final` on status updates. Tasks and
 * events, the answers of every send, are translated without the schemas' encode (it would
 * re-check our own values on each answer): the translation's output is already the wire JSON,
 * as a test checks.
 */
export const v03JsonRpcCodec: ResultCodec = {
  generation: "0.3",
  send: T.sendResponseToV03,
  task: T.taskToV03,
  // v0.3 has no ListTasks; the v1.0 shape is the best there is.
  taskList: encoder(V1.ListTasksResponse),
  pushConfig: encodeV03PushConfig,
  // `tasks/pushNotificationConfig/list` answers a bare array.
  pushConfigList: (page) => page.configs.map((config) => encodeV03PushConfig(config)),
  card: (card) => encodeV03Card(T.cardToV03(card, card.supportedInterfaces[0]?.url)),
  event: (event) => T.streamResponseToV03(event)
}

const encodeV03RestEvent = encoder(V03.RestStreamResponse)
const encodeV03RestPushConfig = encoder(T.PushConfigAsV03Rest)

/** v0.3 HTTP+JSON under /v1: the v0.3 proto JSON (ROLE_USER, `content` parts, TASK_STATE_CANCELLED). */
export const v03RestCodec: ResultCodec = {
  generation: "0.3",
  send: encoder(T.SendResponseAsV03Rest),
  task: encoder(T.TaskAsV03Rest),
  taskList: encoder(V1.ListTasksResponse),
  pushConfig: encodeV03RestPushConfig,
  pushConfigList: (page) => ({ configs: page.configs.map((config) => encodeV03RestPushConfig(config)) }),
  card: (card) => T.cardToV03Rest(card, card.supportedInterfaces[0]?.url),
  event: (event) => encodeV03RestEvent(T.streamResponseToV03Rest(event))
}

/**
 * Why there is no extended card, in each generation's words: a 1.0 card that does not declare
 * one makes the call unsupported (A2A §3.3.4); 0.3 names the error
 * AuthenticatedExtendedCardNotConfigured.
 */
const noExtendedCard = (generation: ProtocolVersion) =>
  generation === "1.0"
    ? unsupportedOperation("This agent has no extended card (its card does not declare one): start relay server agent with --auth")
    : new AgentRequestError({
      kind: "ExtendedAgentCardNotConfigured",
      detail: "This agent has no authenticated extended card: start relay server agent with --auth"
    })

/** The JSON of every non-streaming outcome but the card (`null` for Deleted). */
const encodeResult = (
  codec: ResultCodec,
  result: Exclude<Outcome, { readonly _tag: "Events" | "ExtendedCard" }>
): unknown => {
  switch (result._tag) {
    case "Send":
      return codec.send(result.value)
    case "Task":
      return codec.task(result.value)
    case "TaskList":
      return codec.taskList(result.value)
    case "PushConfig":
      return codec.pushConfig(result.value)
    case "PushConfigList":
      return codec.pushConfigList(result.value)
    case "Deleted":
      return null
  }
}

/**
 * Encodes a non-streaming outcome and writes its JSON with `write`, or an error with `fail`: no
 * extended card (`extendedCard` gives the one to send, undefined when there is none), or a
 * failed encode, which only a bug can cause and is reported as an internal error.
 */
export const writeOutcome = (
  codec: ResultCodec,
  result: Exclude<Outcome, { readonly _tag: "Events" }>,
  extendedCard: () => V1.AgentCard | undefined,
  write: (json: unknown) => void,
  fail: (error: AgentRequestError) => void
): Effect.Effect<void> => {
  if (result._tag !== "ExtendedCard") {
    return Effect.sync(() => {
      let json: unknown
      try {
        json = encodeResult(codec, result)
      } catch (error) {
        return fail(internalError(`Cannot encode the result: ${String(error)}`))
      }
      write(json)
    })
  }
  const card = extendedCard()
  if (card === undefined) return Effect.sync(() => fail(noExtendedCard(codec.generation)))
  return Effect.match(codec.card(card), {
    onFailure: (error) => fail(internalError(`Cannot encode the card: ${error.message}`)),
    onSuccess: write
  })
}
