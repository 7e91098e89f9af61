/**
 * Driving a task: a message starts a task (or moves an interrupted one on), and a worker fiber of
 * the task's own plays the turn. A task goes submitted → working → completed (the model's answer
 * is its artifact), or failed (the model's error in the status message), or canceled. The agent
 * asks for input when its policy says so (the default policy never does); a model may also end a
 * turn in another state (the mock model does: input-required, auth-required, failed, rejected).
 * A message with a context id is answered with the earlier turns of that conversation in the prompt.
 * A message to a task that is still working waits in the store's queue (A2A 1.0 §3.4.3 lets a client
 * continue a task): when the turn ends, the first waiting message is the next turn, in the same
 * worker, and only the last turn's end settles the task.
 */
import type * as Prompt from "@effect/ai/Prompt"
import { Cause, Clock, Context, Duration, Effect, Either, Option } from "effect"
import { allText, isBase64, standardBase64 } from "../../a2a/parts.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import { artifactText, partsText } from "../../a2a/text.js"
import * as V1 from "../../a2a/v1.js"
import { type AgentRequestError, invalidParams, invalidParamsAt, taskNotFound, unsupportedOperation } from "../../domain/agentErrors.js"
import { endTurn, type TurnOutcome, type TurnOutput } from "../../domain/agentTurn.js"
import { randomId } from "../../domain/ids.js"
import { MAX_MESSAGE_PARTS, MAX_QUEUED_MESSAGES } from "../../domain/limits.js"
import type { ModelError } from "../../domain/modelErrors.js"
import { ModelAccess } from "../../services/ModelAccess.js"
import { userContent } from "../../services/modelProviders/modelInput.js"
import { PushSender } from "../../services/PushSender.js"
import { appendHistory, applyTaskEvent, type TaskChange, TaskStore } from "../../services/TaskStore.js"
import { startDelivery, storePushConfig } from "./pushConfigs.js"
import { AgentSettings, type AgentSettingsValue } from "./settings.js"
import { agentMessage, historyLengthProblem, idProblem, isoOf, status, statusEvent } from "./shared.js"

/** The name of the artifact that holds the model's answer. */
export const ANSWER_ARTIFACT = "answer"

const hasContent = (part: V1.Part) => !("text" in part) || part.text.trim() !== ""

/** Why a message's parts cannot be taken, if they cannot: too many, or a file whose bytes are not base64. */
const partsProblem = (parts: ReadonlyArray<V1.Part>) => {
  if (parts.length > MAX_MESSAGE_PARTS) {
    return invalidParams(`message.parts has ${parts.length} parts; a message takes at most ${MAX_MESSAGE_PARTS}`)
  }
  const index = parts.findIndex((part) => "raw" in part && !isBase64(part.raw))
  return index < 0 ? undefined : invalidParamsAt({
    field: `message.parts[${index}]`,
    message: `message.parts[${index}] is a file whose bytes are not base64 (raw in 1.0, file.bytes in 0.3)`
  })
}

/** Why a message cannot be taken, if it cannot: it needs an id and a part that is not blank text. */
const messageProblem = (message: V1.Message) => {
  if (message.messageId.trim() === "") return invalidParams("message.messageId is required")
  const badId = idProblem("message.messageId", message.messageId) ?? idProblem("message.taskId", message.taskId) ??
    idProblem("message.contextId", message.contextId)
  if (badId !== undefined) return badId
  if (message.role !== "ROLE_USER") return invalidParams("messages sent to the agent must have role ROLE_USER")
  if (message.parts.length === 0) return invalidParams("message.parts needs at least one part")
  if (!message.parts.some(hasContent)) return invalidParams("the message is empty: its text is blank")
  return partsProblem(message.parts)
}

/** The message as stored: files' bytes in standard base64, which every reader takes (the same message when they are). */
const storedMessage = (message: V1.Message): V1.Message => {
  if (allText(message.parts)) return message
  const parts = message.parts.map((part) => "raw" in part ? { ...part, raw: standardBase64(part.raw) } : part)
  return { ...message, parts }
}

/** What a turn uses, captured once per request: the task's worker outlives the request that started it. */
export interface TurnServices {
  readonly store: TaskStore["Type"]
  readonly model: ModelAccess["Type"]
  readonly settings: AgentSettingsValue
  readonly clock: Clock.Clock
}

/**
 * Runs `use` with the turn's services, read from the fiber in one step: `clockWith` and
 * `contextWithEffect` are four effects between them, run on every send.
 */
export const withTurnServices = <A, E, R>(
  use: (services: TurnServices) => Effect.Effect<A, E, R>
): Effect.Effect<A, E, R | TaskStore | ModelAccess> =>
  Effect.withFiberRuntime<A, E, R>((fiber) => {
    // The context holds them: the effect's type requires them of whoever runs it.
    const context = fiber.currentContext as Context.Context<TaskStore | ModelAccess>
    return use({
      store: Context.get(context, TaskStore),
      model: Context.get(context, ModelAccess),
      settings: Context.get(context, AgentSettings),
      clock: Context.get(fiber.currentDefaultServices, Clock.Clock)
    })
  })

const isoTime = (clock: Clock.Clock) => isoOf(clock.unsafeCurrentTimeMillis())

/**
 * The earlier turns of the conversation and the new message, as the model's prompt. The task's own
 * answers so far (turns before a queued message) come just before its newest message: the store
 * does not keep which turn wrote which artifact. The user's files and data reach the model as
 * ModelInput says; the agent's own answers as their text.
 */
const promptFor = (services: TurnServices, earlier: ReadonlyArray<V1.Task>, task: V1.Task): Array<Prompt.MessageEncoded> => {
  const turns: Array<Prompt.MessageEncoded> = []
  const say = (text: string) => {
    if (text.trim() !== "") turns.push({ role: "assistant", content: text })
  }
  const sayMessage = (message: V1.Message) => {
    if (message.role !== "ROLE_USER") return say(partsText(message.parts))
    const content = userContent(message.parts)
    if (typeof content !== "string" || content.trim() !== "") turns.push({ role: "user", content })
  }
  for (const other of earlier) {
    if (other.id === task.id) continue
    for (const message of other.history ?? []) sayMessage(message)
    for (const artifact of other.artifacts ?? []) say(artifactText(artifact.parts))
  }
  const history = task.history ?? []
  for (let index = 0; index < history.length - 1; index++) sayMessage(history[index]!)
  for (const artifact of task.artifacts ?? []) say(artifactText(artifact.parts))
  if (history.length > 0) sayMessage(history[history.length - 1]!)
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
 * Lets the model take the turn on the message's `parts`, publishing each output as it comes:
 * pieces of the answer go into one "answer" artifact, other artifacts as the model made them.
 * Returns how the turn ends.
 */
const playTurn = (
  { model, store }: TurnServices,
  task: V1.Task,
  prompt: Prompt.RawInput,
  parts: ReadonlyArray<V1.Part>,
  streaming: boolean
) => {
  const answerId = randomId()
  let answerChunks = 0
  const answer = (answerParts: ReadonlyArray<V1.Part>, lastChunk: boolean) =>
    store.publish(
      task.id,
      artifactUpdate(task, { artifactId: answerId, name: ANSWER_ARTIFACT, parts: answerParts }, { append: answerChunks++ > 0, lastChunk })
    )
  const emit = (output: TurnOutput) => {
    switch (output._tag) {
      case "AnswerText":
        return answer([{ text: output.text }], output.lastChunk)
      case "AnswerParts":
        return answer(output.parts, output.lastChunk)
      case "ArtifactChunk":
        return store.publish(task.id, artifactUpdate(task, output.artifact, output))
    }
  }
  // Suspended: the chunk count is read when the output is published, not when the effect is built.
  return model.turn(prompt, { streaming, parts, emit: (output) => Effect.suspend(() => emit(output)) })
}

/** A status a turn ends with: the outcome's state, or another; its message (a question, a reason) comes from the agent. */
const outcomeStatus = (outcome: TurnOutcome, task: V1.Task, at: string, state: V1.TaskState = outcome.state) =>
  status(state, at, outcome.message === undefined ? undefined : agentMessage(outcome.message, task))

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
  Cause.isInterruptedOnly(cause) ? Effect.void : Effect.flatMap(store.storage.get(taskId), (stored) => {
    if (Option.isNone(stored)) return Effect.void
    const task = stored.value.task
    return store.publish(taskId, statusEvent(task, outcomeStatus(endTurn("TASK_STATE_FAILED", failureReason(cause)), task, isoTime(clock))))
  })

const ANSWER = { _tag: "Answer" } as const

/**
 * The model's turn, unless the policy asks for input first. Plain code around the two effects it
 * needs (the conversation's tasks, the model): call it when the turn is due.
 */
const decideTurn = (services: TurnServices, task: V1.Task, streaming: boolean): Effect.Effect<TurnOutcome, ModelError> => {
  const message = task.history?.[task.history.length - 1]
  const decision = message === undefined ? ANSWER : services.settings.policy.decide(message, task)
  if (decision._tag === "AskForInput") return Effect.succeed(endTurn("TASK_STATE_INPUT_REQUIRED", decision.question))
  const parts = message?.parts ?? []
  const play = (earlier: ReadonlyArray<V1.Task>) => playTurn(services, task, promptFor(services, earlier, task), parts, streaming)
  if (task.contextId === undefined) return play([])
  // Read at once where the storage can (no effect of its own on every turn).
  const storage = services.store.storage
  return storage.contextTasksNow === undefined
    ? Effect.flatMap(storage.contextTasks(task.contextId), play)
    : play(storage.contextTasksNow(task.contextId))
}

/** Messages a task keeps when a request or a turn's end changes it (the store's events keep its own bound). */
const MAX_HISTORY = 100

/** A failed or rejected turn ends the task whatever waits; completed and the questions let a waiting message go on. */
const endsTaskAnyway = (outcome: TurnOutcome) => outcome.state === "TASK_STATE_FAILED" || outcome.state === "TASK_STATE_REJECTED"

/**
 * The end of a turn that a message waits after: the task stays working, a status update carries
 * the turn's words (a question the waiting message answers), and the first waiting message joins
 * the history, for the next turn.
 */
const handOn = (outcome: TurnOutcome, at: string) => (task: V1.Task, queued: ReadonlyArray<V1.Message>): TaskChange => {
  const event = statusEvent(task, outcomeStatus(outcome, task, at, "TASK_STATE_WORKING"))
  return { task: appendHistory(applyTaskEvent(task, event, MAX_HISTORY), queued[0]!, MAX_HISTORY), event, queued: queued.slice(1) }
}

/**
 * Ends a turn in one step of the store (so no message can be queued in between and then lost):
 * the outcome becomes the task's status, unless a message waits and the turn neither failed nor
 * was rejected (see handOn). The store drops what waits when the task ends. None when the task
 * was canceled meanwhile.
 */
const endTurnOf = ({ clock, store }: TurnServices, task: V1.Task, outcome: TurnOutcome) => {
  const at = isoTime(clock)
  const settled = statusEvent(task, outcomeStatus(outcome, task, at))
  return endsTaskAnyway(outcome) ? store.publish(task.id, settled) : store.publish(task.id, settled, handOn(outcome, at))
}

/** Whether a turn's end left the task working: the next waiting message's turn is due. */
const nextTurnDue = (ended: Option.Option<V1.Task>): ended is Option.Some<V1.Task> =>
  Option.isSome(ended) && ended.value.status.state === "TASK_STATE_WORKING"

/**
 * The task's turns from `task` on: working for `latency` (when set), then input-required (when
 * the policy asks) or the model's turn; its end settles the task, or leaves it working with the
 * next waiting message, whose turn follows.
 */
const playTurns = (
  services: TurnServices,
  task: V1.Task,
  streaming: boolean,
  latency: Duration.Duration | undefined
): Effect.Effect<unknown, ModelError> => {
  const play = () =>
    Effect.flatMap(
      decideTurn(services, task, streaming),
      (outcome) =>
        Effect.flatMap(endTurnOf(services, task, outcome), (ended) =>
          nextTurnDue(ended) ? playTurns(services, ended.value, streaming, latency) : Effect.void)
    )
  return latency === undefined ? play() : Effect.zipRight(Effect.sleep(latency), Effect.suspend(play))
}

/**
 * A task's worker: working, then its turns (see playTurns): the model's answer and completed, or
 * the state the model ends it in. A model failure ends it as failed with the reason. Interruption
 * (cancel) ends it silently: the canceled status is already published. `begun` is the task as the
 * request left it (only its ids are used: the stored task is the one that moves on). A turn's
 * answer streams as deltas when the request that started the worker streams.
 *
 * Written as a chain of effects rather than a generator: each step of a generator cost an
 * allocation-heavy round trip, and the turn runs once per SendMessage.
 */
const runTurn = (services: TurnServices, begun: V1.Task, streaming: boolean): Effect.Effect<unknown> => {
  const { clock, settings, store } = services
  const taskId = begun.id
  const latency = Duration.toMillis(settings.latency) > 0 ? settings.latency : undefined
  return Effect.suspend(() => store.publish(taskId, statusEvent(begun, status("TASK_STATE_WORKING", isoTime(clock))))).pipe(
    // None: canceled (or forgotten) before it started.
    Effect.flatMap((working) => Option.isNone(working) ? Effect.void : playTurns(services, working.value, streaming, latency)),
    Effect.catchAllCause((cause) => failTurn(services, taskId, cause))
  )
}

/** The task a request addressed as the request left it; `queued` when its message waits for the current turn (its worker runs). */
export interface Begun {
  readonly task: V1.Task
  readonly queued: boolean
}

/** Why a message cannot join an existing task, if it cannot: the task ended, another context, or its queue is full. */
const followUpProblem = (task: V1.Task, message: V1.Message, queued: ReadonlyArray<V1.Message>) => {
  const state = task.status.state
  if (V1.isTerminalState(state)) {
    return unsupportedOperation(
      `Task ${task.id} is ${V1.stateName(state)} and accepts no more messages; send without a taskId to start a new task ` +
        "(with the same contextId to stay in the conversation)"
    )
  }
  if (message.contextId !== undefined && message.contextId !== task.contextId) {
    return invalidParams(`contextId ${message.contextId} does not match task ${task.id}'s context ${task.contextId ?? ""}`)
  }
  if (!V1.isInterruptedState(state) && queued.length >= MAX_QUEUED_MESSAGES) {
    return unsupportedOperation(
      `Task ${task.id} is still ${V1.stateName(state)} and already holds ${MAX_QUEUED_MESSAGES} messages for its next turns, ` +
        "the most it takes; send again once it has answered"
    )
  }
  return undefined
}

/**
 * The message for an existing task: an interrupted task is moved on with it (submitted, its worker
 * is started next); a task still submitted or working keeps it queued for after its current turn.
 */
const continueTask = (store: TaskStore["Type"], message: V1.Message, taskId: string, at: string) =>
  Effect.suspend(() => {
    let queued = false
    const change = (task: V1.Task, waiting: ReadonlyArray<V1.Message>): Either.Either<TaskChange, AgentRequestError> => {
      const problem = followUpProblem(task, message, waiting)
      if (problem !== undefined) return Either.left(problem)
      const withIds: V1.Message = { ...message, taskId, ...(task.contextId === undefined ? {} : { contextId: task.contextId }) }
      // Set at each call: the store calls `change` again when the task changed meanwhile.
      queued = !V1.isInterruptedState(task.status.state)
      if (queued) {
        // It joins the history when its turn begins, so the history keeps each reply after its message.
        return Either.right({ task, queued: [...waiting, withIds] })
      }
      // No event: the worker announces "working" next, as for a new task.
      return Either.right({ task: { ...appendHistory(task, withIds, MAX_HISTORY), status: status("TASK_STATE_SUBMITTED", at) } })
    }
    return Effect.flatMap(
      store.modify(taskId, change),
      Option.match({
        onNone: () => Effect.fail(taskNotFound(taskId)),
        onSome: (task) => Effect.succeed<Begun>({ task, queued })
      })
    )
  })

/** A new task for the message, or the existing task it continues, as stored. */
const startTask = ({ clock, store }: TurnServices, message: V1.Message): Effect.Effect<Begun, AgentRequestError> => {
  const at = isoTime(clock)
  if (message.taskId !== undefined) return continueTask(store, message, message.taskId, at)
  const id = randomId()
  const contextId = message.contextId ?? randomId()
  const task: V1.Task = {
    id,
    contextId,
    status: { state: "TASK_STATE_SUBMITTED", timestamp: at },
    history: [{ ...message, taskId: id, contextId }]
  }
  return Effect.as(store.create(task), { task, queued: false })
}

/**
 * Creates the task, moves an interrupted one on with the new message, or queues it for a working
 * one; registers an inline push config. Plain code until the store is changed: call it when the
 * request is handled.
 */
export const beginTurn = (
  services: TurnServices,
  request: V1.SendMessageRequest,
  generation: ProtocolVersion
): Effect.Effect<Begun, AgentRequestError, PushSender | TaskStore> => {
  const problem = messageProblem(request.message) ?? historyLengthProblem(request.configuration?.historyLength)
  if (problem !== undefined) return Effect.fail(problem)
  const message = storedMessage(request.message)
  const inlinePush = request.configuration?.taskPushNotificationConfig
  if (inlinePush === undefined) return startTask(services, message)
  return Effect.flatMap(PushSender, (sender) => {
    const pushProblem = sender.checkUrl(inlinePush.url)
    if (pushProblem !== undefined) return Effect.fail(invalidParams(`Push notification URL refused: ${pushProblem}`))
    return Effect.tap(
      startTask(services, message),
      ({ task }) => Effect.flatMap(storePushConfig(task.id, inlinePush, generation), (stored) => startDelivery(stored, true))
    )
  })
}

/**
 * Runs the turn in a fiber of the task's own, which outlives the request and takes its services
 * along; a queued message needs none (the running worker takes it).
 */
export const startWorker = (services: TurnServices, { queued, task }: Begun, streaming: boolean) =>
  queued ? Effect.void : services.store.runWorker(task.id, runTurn(services, task, streaming))
