/**
 * Driving a task: a message starts a task (or moves an interrupted one on), and a worker fiber of
 * the task's own plays the turn. A task goes submitted → working → completed (the model's answer
 * is its artifact), or failed (the model's error in the status message), or canceled. The agent
 * asks for input when its policy says so (the default policy never does); a model may also end a
 * turn in another state (the mock model does: input-required, auth-required, failed, rejected).
 * A message with a context id is answered with the earlier turns of that conversation in the prompt.
 */
import type * as Prompt from "@effect/ai/Prompt"
import { Cause, type Clock, Context, Duration, Effect, Either, Option } from "effect"
import { randomId } from "../../domain/ids.js"
import { artifactText, partsText } from "../../a2a/text.js"
import * as V1 from "../../a2a/v1.js"
import { type AgentRequestError, invalidParams, taskNotFound, unsupportedOperation } from "../../domain/agentErrors.js"
import { endTurn, type TurnOutcome, type TurnOutput } from "../../domain/agentTurn.js"
import type { ModelError } from "../../domain/modelErrors.js"
import { ModelAccess } from "../../services/ModelAccess.js"
import { PushSender } from "../../services/PushSender.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import { appendHistory, TaskStore } from "../../services/TaskStore.js"
import { startDelivery, storePushConfig } from "./pushConfigs.js"
import { AgentSettings, type AgentSettingsValue } from "./settings.js"
import { agentMessage, historyLengthProblem, idProblem, isoOf, status, statusEvent } from "./shared.js"

/** The name of the artifact that holds the model's answer. */
export const ANSWER_ARTIFACT = "answer"

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

/** What a turn uses, captured once per request: the task's worker outlives the request that started it. */
export interface TurnServices {
  readonly store: TaskStore["Type"]
  readonly model: ModelAccess["Type"]
  readonly settings: AgentSettingsValue
  readonly clock: Clock.Clock
}

/** Runs `use` with the turn's services, read from the context in one step rather than one per service. */
export const withTurnServices = <A, E, R>(use: (services: TurnServices) => Effect.Effect<A, E, R>) =>
  Effect.clockWith((clock) =>
    Effect.contextWithEffect((context: Context.Context<TaskStore | ModelAccess>) =>
      use({
        store: Context.get(context, TaskStore),
        model: Context.get(context, ModelAccess),
        settings: Context.get(context, AgentSettings),
        clock
      })
    )
  )

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
  const answerId = randomId()
  let answerChunks = 0
  const emit = (output: TurnOutput) =>
    output._tag === "AnswerText"
      ? store.publish(task.id, artifactUpdate(task, { artifactId: answerId, name: ANSWER_ARTIFACT, parts: [{ text: output.text }] }, {
        append: answerChunks++ > 0,
        lastChunk: output.lastChunk
      }))
      : store.publish(task.id, artifactUpdate(task, output.artifact, output))
  // Suspended: the chunk count is read when the output is published, not when the effect is built.
  return model.turn(prompt, { streaming, emit: (output) => Effect.suspend(() => emit(output)) })
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

const ANSWER = { _tag: "Answer" } as const

/**
 * The model's turn, unless the policy asks for input first. Plain code around the two effects it
 * needs (the conversation's tasks, the model): call it when the turn is due.
 */
const decideTurn = (services: TurnServices, task: V1.Task, streaming: boolean): Effect.Effect<TurnOutcome, ModelError> => {
  const message = task.history?.[task.history.length - 1]
  const decision = message === undefined ? ANSWER : services.settings.policy.decide(message, task)
  if (decision._tag === "AskForInput") return Effect.succeed(endTurn("TASK_STATE_INPUT_REQUIRED", decision.question))
  const play = (earlier: ReadonlyArray<V1.Task>) => playTurn(services, task, promptFor(services, earlier, task), streaming)
  return task.contextId === undefined ? play([]) : Effect.flatMap(services.store.contextTasks(task.contextId), play)
}

/**
 * One turn of a task: working (for `latency`, when set), then input-required (when the policy
 * asks) or the model's turn: its answer and completed, or the state the model ends it in. A
 * model failure ends it as failed with the reason. Interruption (cancel) ends it silently: the
 * canceled status is already published. `begun` is the task as the request left it (only its
 * ids are used: the stored task is the one that moves on).
 *
 * Written as a chain of effects rather than a generator: each step of a generator cost an
 * allocation-heavy round trip, and the turn runs once per SendMessage.
 */
const runTurn = (services: TurnServices, begun: V1.Task, streaming: boolean): Effect.Effect<unknown> => {
  const { clock, settings, store } = services
  const taskId = begun.id
  const latency = Duration.toMillis(settings.latency) > 0 ? settings.latency : undefined
  const finish = (task: V1.Task) => () =>
    Effect.flatMap(decideTurn(services, task, streaming), (outcome) =>
      store.publish(taskId, statusEvent(task, outcomeStatus(outcome, task, isoTime(clock)))))
  return Effect.suspend(() => store.publish(taskId, statusEvent(begun, status("TASK_STATE_WORKING", isoTime(clock))))).pipe(
    Effect.flatMap((working): Effect.Effect<unknown, ModelError> => {
      // None: canceled (or forgotten) before it started.
      if (Option.isNone(working)) return Effect.void
      const play = finish(working.value)
      return latency === undefined ? play() : Effect.zipRight(Effect.sleep(latency), Effect.suspend(play))
    }),
    Effect.catchAllCause((cause) => failTurn(services, taskId, cause))
  )
}

const continueTask = (store: TaskStore["Type"], message: V1.Message, taskId: string, at: string, maxHistory: number) =>
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

const MAX_HISTORY_FOR_CONTINUATION = 100

/** A new task for the message, or the interrupted task it continues, as stored. */
const startTask = ({ clock, store }: TurnServices, message: V1.Message): Effect.Effect<V1.Task, AgentRequestError> => {
  const at = isoTime(clock)
  if (message.taskId !== undefined) return continueTask(store, message, message.taskId, at, MAX_HISTORY_FOR_CONTINUATION)
  const id = randomId()
  const contextId = message.contextId ?? randomId()
  const task: V1.Task = {
    id,
    contextId,
    status: { state: "TASK_STATE_SUBMITTED", timestamp: at },
    history: [{ ...message, taskId: id, contextId }]
  }
  return Effect.as(store.create(task), task)
}

/**
 * Creates the task, or moves an interrupted one on with the new message; registers an inline
 * push config. Plain code until the store is changed: call it when the request is handled.
 */
export const beginTurn = (
  services: TurnServices,
  request: V1.SendMessageRequest,
  generation: ProtocolVersion
): Effect.Effect<V1.Task, AgentRequestError, PushSender | TaskStore> => {
  const message = request.message
  const problem = messageProblem(message) ?? historyLengthProblem(request.configuration?.historyLength)
  if (problem !== undefined) return Effect.fail(problem)
  const inlinePush = request.configuration?.taskPushNotificationConfig
  if (inlinePush === undefined) return startTask(services, message)
  return Effect.flatMap(PushSender, (sender) => {
    const pushProblem = sender.checkUrl(inlinePush.url)
    if (pushProblem !== undefined) return Effect.fail(invalidParams(`Push notification URL refused: ${pushProblem}`))
    return Effect.tap(
      startTask(services, message),
      (task) => Effect.flatMap(storePushConfig(task.id, inlinePush, generation), (stored) => startDelivery(stored, true))
    )
  })
}

/** Runs the turn in a fiber of the task's own, which outlives the request and takes its services along. */
export const startWorker = (services: TurnServices, task: V1.Task, streaming: boolean) =>
  services.store.runWorker(task.id, runTurn(services, task, streaming))
