/**
 * The local agent's use cases: take a message, drive its task through the model, and answer
 * task, list, cancel, subscribe and push-config requests. The agent server's doors decode either
 * protocol version into these plain v1.0 inputs and encode the results back.
 *
 * A task goes submitted → working → completed (the model's answer is its artifact), or failed
 * (the model's error in the status message), or canceled. The agent asks for input when its
 * policy says so (the default policy never does); a model may also end a turn in another state
 * (the mock model does: input-required, auth-required, failed, rejected). A message with a
 * context id is answered with the earlier turns of that conversation in the prompt.
 */
import type * as Prompt from "@effect/ai/Prompt"
import { Cause, Clock, Context, Duration, Effect, Either, Option, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { artifactText, partsText } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import { endTurn, type TurnOutcome, type TurnOutput } from "../domain/agentTurn.js"
import { MAX_URL_CHARS } from "../domain/limits.js"
import { timestampCeilMillis } from "../domain/timestamp.js"
import {
  agentMessage,
  checkHistoryLength,
  historyLengthProblem,
  idProblem,
  isoOf,
  lengthProblem,
  nowIso,
  pageSizeOf,
  presentTask,
  requireTask,
  status,
  statusEvent
} from "./agent/shared.js"
import {
  AgentRequestError,
  internalError,
  invalidParams,
  shown,
  taskNotCancelable,
  taskNotFound,
  unsupportedOperation
} from "../domain/agentErrors.js"
import { ModelAccess } from "../services/ModelAccess.js"
import { PushSender } from "../services/PushSender.js"
import {
  appendHistory,
  type PushGeneration,
  type StoredPushConfig,
  TaskStore,
  type TaskSubscription,
  type TaskUpdate
} from "../services/TaskStore.js"

// ---------------------------------------------------------------------------
// Settings

/** What the agent does with a message before calling the model. */
export type AgentDecision =
  | { readonly _tag: "Answer" }
  | { readonly _tag: "AskForInput"; readonly question: string }

export interface AgentPolicy {
  /** `message` is the newest user message of `task` (already in its history). */
  readonly decide: (message: V1.Message, task: V1.Task) => AgentDecision
}

/** The default: always answer. */
export const answerAlways: AgentPolicy = { decide: () => ({ _tag: "Answer" }) }

export interface AgentSettingsValue {
  readonly policy: AgentPolicy
  /** The model's instructions, sent before the conversation. */
  readonly systemPrompt: string
  /** How many earlier messages of the conversation the model sees. */
  readonly contextMessages: number
  /** How long each turn stays working before the model is asked (`--latency`), so it can be watched. */
  readonly latency: Duration.Duration
}

export const DEFAULT_SYSTEM_PROMPT = "You are relay's local A2A agent, used to test and develop A2A clients. " +
  "Answer helpfully and concisely in plain text."

/** The agent's behaviour; programs use the defaults unless a layer provides other settings. */
export class AgentSettings extends Context.Reference<AgentSettings>()("relay/AgentSettings", {
  defaultValue: (): AgentSettingsValue => ({
    policy: answerAlways,
    systemPrompt: DEFAULT_SYSTEM_PROMPT,
    contextMessages: 20,
    latency: Duration.zero
  })
}) {}

/** Shown instead of secrets when a push config is read back. */
export const REDACTED = "********"
/** The name of the artifact that holds the model's answer. */
export const ANSWER_ARTIFACT = "answer"

// ---------------------------------------------------------------------------
// Small pure helpers

const hasContent = (part: V1.Part) => !("text" in part) || part.text.trim() !== ""

/** Why a message cannot be taken, if it cannot: it needs an id and a part that is not blank text. */
const messageProblem = (message: V1.Message) => {
  if (message.messageId.trim() === "") return invalidParams("message.messageId is required")
  const longId = idProblem("message.messageId", message.messageId) ?? idProblem("message.taskId", message.taskId) ??
    idProblem("message.contextId", message.contextId)
  if (longId !== undefined) return longId
  if (message.role !== "ROLE_USER") return invalidParams("messages sent to the agent must have role ROLE_USER")
  if (message.parts.length === 0) return invalidParams("message.parts needs at least one part")
  if (!message.parts.some(hasContent)) return invalidParams("the message is empty: its text is blank")
  return undefined
}

// ---------------------------------------------------------------------------
// Push configs

/** The config with its secrets masked, for reads. */
export const redactPushConfig = (config: V1.TaskPushNotificationConfig): V1.TaskPushNotificationConfig => {
  const { token, authentication, ...rest } = config
  return {
    ...rest,
    ...(token === undefined ? {} : { token: REDACTED }),
    ...(authentication === undefined
      ? {}
      : {
        authentication: authentication.credentials === undefined
          ? authentication
          : { ...authentication, credentials: REDACTED }
      })
  }
}

/**
 * Starts posting the task's updates to a stored config, until the task is terminal. With
 * `withSnapshot` the current task is posted first (configs sent along with the message).
 */
const startDelivery = (stored: StoredPushConfig, withSnapshot: boolean) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const sender = yield* PushSender
    const subscription = yield* store.subscribe(stored.config.taskId ?? "", "terminal")
    if (Option.isNone(subscription)) return
    const { task, updates } = subscription.value
    if (V1.isTerminalState(task.status.state) && !withSnapshot) return
    const first: TaskUpdate = { event: { task }, task }
    yield* sender.start(stored, withSnapshot ? Stream.concat(Stream.make(first), updates) : updates)
  })

/**
 * The id of a config set without one: a new UUID in 1.0 (as @a2a-js 1.x does); the task's id in
 * 0.3, as both 0.3 SDKs do, so that a 0.3 client's get or delete by task id finds it.
 */
const defaultConfigId = (taskId: string, generation: PushGeneration) => (generation === "0.3" ? taskId : randomUUID())

const storePushConfig = (taskId: string, config: V1.TaskPushNotificationConfig, generation: PushGeneration) =>
  Effect.gen(function*() {
    const sender = yield* PushSender
    const store = yield* TaskStore
    const tooLong = idProblem("push notification config id", config.id) ?? lengthProblem("url", config.url, MAX_URL_CHARS)
    if (tooLong !== undefined) return yield* tooLong
    const problem = sender.checkUrl(config.url)
    if (problem !== undefined) return yield* invalidParams(`Push notification URL refused: ${problem}`)
    const { tenant: _tenant, ...fields } = config
    const stored: StoredPushConfig = {
      config: { ...fields, id: config.id ?? defaultConfigId(taskId, generation), taskId },
      generation
    }
    const saved = yield* store.putPushConfig(taskId, stored)
    if (Option.isNone(saved)) return yield* taskNotFound(taskId)
    return stored
  })

export const createPushConfig = (config: V1.TaskPushNotificationConfig, generation: PushGeneration) =>
  Effect.gen(function*() {
    const taskId = config.taskId
    if (taskId === undefined) return yield* invalidParams("taskId is required")
    yield* requireTask(taskId)
    const stored = yield* storePushConfig(taskId, config, generation)
    yield* startDelivery(stored, false)
    return stored.config
  })

const configsOf = (taskId: string) =>
  Effect.flatMap(TaskStore, (store) =>
    Effect.flatMap(store.pushConfigs(taskId), Option.match({
      onNone: () => Effect.fail(taskNotFound(taskId)),
      onSome: Effect.succeed
    })))

/** One config, redacted. Without an id, the task's most recently created config. */
export const getPushConfig = (request: { readonly taskId: string; readonly id?: string | undefined }) =>
  Effect.gen(function*() {
    const configs = yield* configsOf(request.taskId)
    const found = request.id === undefined
      ? configs[configs.length - 1]
      : configs.find((stored) => stored.config.id === request.id)
    // The spec names TaskNotFoundError for a config that does not exist (A2A §3.1.8).
    if (found === undefined) {
      const which = request.id === undefined ? "" : ` ${shown(request.id)}`
      return yield* new AgentRequestError({ kind: "TaskNotFound", detail: `Push notification config${which} not found for task ${request.taskId}` })
    }
    return redactPushConfig(found.config)
  })

const decodeOffsetToken = (token: string | undefined) => {
  if (token === undefined) return Effect.succeed(0)
  const offset = Number(Buffer.from(token, "base64url").toString("utf8"))
  return Number.isInteger(offset) && offset >= 0 ? Effect.succeed(offset) : Effect.fail(invalidParams("invalid pageToken"))
}

/** ListTaskPushNotificationConfigs' plain `int32 page_size`: 0 is how ProtoJSON writes it unset. */
const configPageSizeOf = (pageSize: number | undefined) => pageSizeOf(pageSize === 0 ? undefined : pageSize)

export const listPushConfigs = (request: V1.ListTaskPushNotificationConfigsRequest) =>
  Effect.gen(function*() {
    const configs = yield* configsOf(request.taskId)
    const size = yield* configPageSizeOf(request.pageSize)
    const offset = yield* decodeOffsetToken(request.pageToken)
    const page = configs.slice(offset, offset + size).map((stored) => redactPushConfig(stored.config))
    const more = offset + size < configs.length
    return {
      configs: page,
      nextPageToken: more ? Buffer.from(String(offset + size), "utf8").toString("base64url") : ""
    }
  })

/** Idempotent: deleting a config that is not there succeeds. */
export const deletePushConfig = (request: { readonly taskId: string; readonly id: string }) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const sender = yield* PushSender
    const removed = yield* store.removePushConfig(request.taskId, request.id)
    if (Option.isNone(removed)) return yield* taskNotFound(request.taskId)
    yield* sender.stop(request.taskId, request.id)
  })

// ---------------------------------------------------------------------------
// Driving a task

/** What a task's worker uses, captured once when it starts: it outlives the request that started it. */
interface TurnServices {
  readonly store: TaskStore["Type"]
  readonly model: ModelAccess["Type"]
  readonly settings: AgentSettingsValue
  readonly clock: Clock.Clock
}

const isoTime = (clock: Clock.Clock) => isoOf(clock.unsafeCurrentTimeMillis())

/** The earlier turns of the conversation and the new message, as the model's prompt. */
const promptFor = (services: TurnServices, earlier: ReadonlyArray<V1.Task>, task: V1.Task): Array<Prompt.MessageEncoded> => {
  const turns: Array<Prompt.MessageEncoded> = []
  const say = (role: "user" | "assistant", text: string) => {
    if (text.trim() !== "") turns.push(role === "user" ? { role, content: text } : { role, content: text })
  }
  for (const other of earlier) {
    if (other.id === task.id) continue
    for (const message of other.history ?? []) say(message.role === "ROLE_USER" ? "user" : "assistant", partsText(message.parts))
    for (const artifact of other.artifacts ?? []) say("assistant", artifactText(artifact.parts))
  }
  for (const message of task.history ?? []) say(message.role === "ROLE_USER" ? "user" : "assistant", partsText(message.parts))
  const recent = turns.slice(-Math.max(1, services.settings.contextMessages))
  return [{ role: "system", content: services.settings.systemPrompt }, ...recent]
}

const artifactUpdate = (
  task: V1.Task,
  artifact: V1.Artifact,
  flags: { readonly append: boolean; readonly lastChunk: boolean }
): V1.StreamResponse => ({
  artifactUpdate: {
    taskId: task.id,
    contextId: task.contextId ?? "",
    artifact,
    ...(flags.append ? { append: true } : {}),
    lastChunk: flags.lastChunk
  }
})

/**
 * Lets the model take the turn, publishing each output as it comes: pieces of the answer go
 * into one "answer" artifact, other artifacts as the model made them. Returns how the turn ends.
 */
const playTurn = ({ model, store }: TurnServices, task: V1.Task, prompt: Prompt.RawInput, streaming: boolean) => {
  const answerId = randomUUID()
  let answerChunks = 0
  const emit = (output: TurnOutput) =>
    output._tag === "AnswerText"
      ? store.publish(task.id, artifactUpdate(task, { artifactId: answerId, name: ANSWER_ARTIFACT, parts: [{ text: output.text }] }, {
        append: answerChunks++ > 0,
        lastChunk: output.lastChunk
      }))
      : store.publish(task.id, artifactUpdate(task, output.artifact, output))
  // Suspended: the chunk count is read when the output is published, not when the effect is built.
  return model.turn(prompt, { streaming, emit: (output) => Effect.asVoid(Effect.suspend(() => emit(output))) })
}

/** The status a turn ends with; its message (a question, a reason) comes from the agent. */
const outcomeStatus = (outcome: TurnOutcome, task: V1.Task, at: string) =>
  status(outcome.state, at, outcome.message === undefined ? undefined : agentMessage(outcome.message, task))

const failureReason = (cause: Cause.Cause<unknown>): string => {
  const failure = Cause.failureOption(cause)
  if (Option.isSome(failure)) {
    const error = failure.value
    return error instanceof Error ? error.message : String(error)
  }
  return `internal error: ${Cause.pretty(cause).split("\n")[0] ?? "unknown"}`
}

/** Ends the task as failed with the reason, unless it was interrupted (canceled: that status is already published). */
const failTurn = ({ clock, store }: TurnServices, taskId: string, cause: Cause.Cause<unknown>) =>
  Cause.isInterruptedOnly(cause) ? Effect.void : Effect.flatMap(store.get(taskId), (task) =>
    Option.isNone(task) ? Effect.void : store.publish(
      taskId,
      statusEvent(task.value, outcomeStatus(endTurn("TASK_STATE_FAILED", failureReason(cause)), task.value, isoTime(clock)))
    ))

/** The model's turn, unless the policy asks for input first. */
const decideTurn = (services: TurnServices, task: V1.Task, streaming: boolean) =>
  Effect.gen(function*() {
    const message = task.history?.[task.history.length - 1]
    const decision = message === undefined ? { _tag: "Answer" as const } : services.settings.policy.decide(message, task)
    if (decision._tag === "AskForInput") return endTurn("TASK_STATE_INPUT_REQUIRED", decision.question)
    const earlier = task.contextId === undefined ? [] : yield* services.store.contextTasks(task.contextId)
    return yield* playTurn(services, task, promptFor(services, earlier, task), streaming)
  })

/**
 * One turn of a task: working (for `latency`, when set), then input-required (when the policy
 * asks) or the model's turn: its answer and completed, or the state the model ends it in. A
 * model failure ends it as failed with the reason. Interruption (cancel) ends it silently: the
 * canceled status is already published.
 */
const runTurn = (services: TurnServices, taskId: string, streaming: boolean): Effect.Effect<void> =>
  Effect.gen(function*() {
    const { clock, settings, store } = services
    const submitted = yield* store.get(taskId)
    if (Option.isNone(submitted)) return
    const working = yield* store.publish(taskId, statusEvent(submitted.value, status("TASK_STATE_WORKING", isoTime(clock))))
    // None: canceled before it started.
    if (Option.isNone(working)) return
    const task = working.value
    if (Duration.toMillis(settings.latency) > 0) yield* Effect.sleep(settings.latency)
    const outcome = yield* decideTurn(services, task, streaming)
    yield* store.publish(taskId, statusEvent(task, outcomeStatus(outcome, task, isoTime(clock))))
  }).pipe(Effect.catchAllCause((cause) => Effect.asVoid(failTurn(services, taskId, cause))))

const continueTask = (message: V1.Message, taskId: string, at: string, maxHistory: number) =>
  Effect.flatMap(TaskStore, (store) =>
    store.modify(taskId, (task): Either.Either<{ readonly task: V1.Task }, AgentRequestError> => {
      const state = task.status.state
      if (V1.isTerminalState(state)) {
        return Either.left(unsupportedOperation(
          `Task ${taskId} is ${V1.stateName(state)} and accepts no more messages; send without a taskId to start a new task ` +
            "(with the same contextId to stay in the conversation)"
        ))
      }
      if (message.contextId !== undefined && message.contextId !== task.contextId) {
        return Either.left(invalidParams(`contextId ${message.contextId} does not match task ${taskId}'s context ${task.contextId ?? ""}`))
      }
      if (!V1.isInterruptedState(state)) {
        return Either.left(unsupportedOperation(`Task ${taskId} is still ${V1.stateName(state)}; send again once it asks for input`))
      }
      const withIds: V1.Message = { ...message, taskId, ...(task.contextId === undefined ? {} : { contextId: task.contextId }) }
      // No event: the worker announces "working" next, as for a new task.
      return Either.right({ task: { ...appendHistory(task, withIds, maxHistory), status: status("TASK_STATE_SUBMITTED", at) } })
    }).pipe(Effect.flatMap(Option.match({ onNone: () => Effect.fail(taskNotFound(taskId)), onSome: Effect.succeed })))
  )

const MAX_HISTORY_FOR_CONTINUATION = 100

/** Creates the task, or moves an interrupted one on with the new message; registers an inline push config. */
const beginTurn = (request: V1.SendMessageRequest, generation: PushGeneration) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const message = request.message
    const problem = messageProblem(message) ?? historyLengthProblem(request.configuration?.historyLength)
    if (problem !== undefined) return yield* problem
    const inlinePush = request.configuration?.taskPushNotificationConfig
    const pushProblem = inlinePush === undefined ? undefined : (yield* PushSender).checkUrl(inlinePush.url)
    if (pushProblem !== undefined) return yield* invalidParams(`Push notification URL refused: ${pushProblem}`)
    const at = yield* nowIso
    let task: V1.Task
    if (message.taskId !== undefined) {
      task = yield* continueTask(message, message.taskId, at, MAX_HISTORY_FOR_CONTINUATION)
    } else {
      const id = randomUUID()
      const contextId = message.contextId ?? randomUUID()
      task = {
        id,
        contextId,
        status: { state: "TASK_STATE_SUBMITTED", timestamp: at },
        history: [{ ...message, taskId: id, contextId }]
      }
      yield* store.create(task)
    }
    if (inlinePush !== undefined) {
      const stored = yield* storePushConfig(task.id, inlinePush, generation)
      yield* startDelivery(stored, true)
    }
    return task
  })

/** Runs the turn in a fiber of the task's own, which outlives the request and takes its services along. */
const startWorker = (taskId: string, streaming: boolean) =>
  Effect.gen(function*() {
    const services: TurnServices = {
      store: yield* TaskStore,
      model: yield* ModelAccess,
      settings: yield* AgentSettings,
      clock: yield* Effect.clock
    }
    yield* services.store.runWorker(taskId, runTurn(services, taskId, streaming))
  })

// ---------------------------------------------------------------------------
// Use cases

/**
 * SendMessage: starts (or continues) a task and answers with it once it is terminal or
 * interrupted, or at once with `returnImmediately`.
 */
export const sendMessage = (request: V1.SendMessageRequest, generation: PushGeneration = "1.0") =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const task = yield* beginTurn(request, generation)
    yield* startWorker(task.id, false)
    const historyLength = request.configuration?.historyLength
    if (request.configuration?.returnImmediately === true) return { task: presentTask(task, historyLength) }
    const settled = yield* store.awaitSettled(task.id)
    if (Option.isNone(settled)) return yield* internalError(`Task ${task.id} disappeared`)
    return { task: presentTask(settled.value, historyLength) }
  })

/** The snapshot first, then every update until the task is terminal or interrupted. */
const eventsOf = (subscription: TaskSubscription, historyLength: number | undefined): Stream.Stream<V1.StreamResponse> =>
  Stream.concat(
    Stream.make({ task: presentTask(subscription.task, historyLength) }),
    Stream.map(subscription.updates, (update) =>
      "task" in update.event ? { task: presentTask(update.event.task, historyLength) } : update.event)
  )

/**
 * SendStreamingMessage: starts (or continues) a task and returns its events: the Task first,
 * then status and artifact updates (the answer's text deltas as chunks) until it is terminal or
 * interrupted. Request errors fail the effect itself, before any event.
 */
export const streamMessage = (request: V1.SendMessageRequest, generation: PushGeneration = "1.0") =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const task = yield* beginTurn(request, generation)
    const subscription = yield* store.subscribe(task.id)
    if (Option.isNone(subscription)) return yield* internalError(`Task ${task.id} disappeared`)
    yield* startWorker(task.id, true)
    return eventsOf(subscription.value, request.configuration?.historyLength)
  })

export const getTask = (request: { readonly id: string; readonly historyLength?: number | undefined }) =>
  Effect.gen(function*() {
    yield* checkHistoryLength(request.historyLength)
    return presentTask(yield* requireTask(request.id), request.historyLength)
  })

/** Cancels a task that is not terminal: the model call is interrupted and the task is canceled. */
export const cancelTask = (request: { readonly id: string }) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const at = yield* nowIso
    const canceled = yield* store.modify(request.id, (task): Either.Either<{ task: V1.Task; event: V1.StreamResponse }, AgentRequestError> => {
      const state = task.status.state
      if (V1.isTerminalState(state)) {
        return Either.left(taskNotCancelable(`Task ${request.id} is ${V1.stateName(state)} and cannot be canceled`))
      }
      const canceledStatus = status("TASK_STATE_CANCELED", at)
      return Either.right({ task: { ...task, status: canceledStatus }, event: statusEvent(task, canceledStatus) })
    })
    if (Option.isNone(canceled)) return yield* taskNotFound(request.id)
    yield* store.stopWorker(request.id)
    return canceled.value
  })

/** SubscribeToTask: the task first, then its updates; unknown and terminal tasks fail before any event. */
export const subscribeToTask = (request: { readonly id: string }) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const subscription = yield* store.subscribe(request.id)
    if (Option.isNone(subscription)) return yield* taskNotFound(request.id)
    const state = subscription.value.task.status.state
    if (V1.isTerminalState(state)) {
      return yield* unsupportedOperation(`Task ${request.id} is ${V1.stateName(state)}; a terminal task cannot be subscribed to`)
    }
    return eventsOf(subscription.value, undefined)
  })

const encodeCursor = (cursor: { readonly timestamp: string; readonly seq: number }) =>
  Buffer.from(JSON.stringify([cursor.timestamp, cursor.seq]), "utf8").toString("base64url")

const decodeCursor = (token: string | undefined) =>
  Effect.suspend(() => {
    if (token === undefined) return Effect.succeed(undefined)
    try {
      const parsed: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"))
      if (Array.isArray(parsed) && typeof parsed[0] === "string" && Number.isInteger(parsed[1])) {
        return Effect.succeed({ timestamp: parsed[0], seq: Number(parsed[1]) })
      }
    } catch {
      // fall through
    }
    return Effect.fail(invalidParams("invalid pageToken"))
  })

/** RFC 3339 only (ProtoJSON's Timestamp), as the store's ISO form; tasks at or after it match. */
const timestampAfter = (value: string | undefined) => {
  if (value === undefined) return Effect.succeed(undefined)
  const millis = timestampCeilMillis(value)
  return millis === undefined
    ? Effect.fail(invalidParams(`statusTimestampAfter must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z, not "${shown(value)}"`))
    : Effect.succeed(new Date(millis).toISOString())
}

/** ListTasks: newest status first, paginated; artifacts only when asked for. */
export const listTasks = (request: V1.ListTasksRequest) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const pageSize = yield* pageSizeOf(request.pageSize)
    yield* checkHistoryLength(request.historyLength)
    const after = yield* decodeCursor(request.pageToken)
    const since = yield* timestampAfter(request.statusTimestampAfter)
    const page = yield* store.list({
      contextId: request.contextId,
      status: request.status === "TASK_STATE_UNSPECIFIED" ? undefined : request.status,
      statusTimestampAfter: since,
      pageSize,
      after
    })
    const includeArtifacts = request.includeArtifacts === true
    return {
      tasks: page.tasks.map((task) => presentTask(task, request.historyLength, includeArtifacts)),
      nextPageToken: page.next === undefined ? "" : encodeCursor(page.next),
      pageSize,
      totalSize: page.totalSize
    } satisfies V1.ListTasksResponse
  })
