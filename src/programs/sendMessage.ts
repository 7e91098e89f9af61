/**
 * Sending a message (SPEC §4.1 rules 1–2): pick the context and task to continue from the
 * session, send (blocking, streamed, or followed by polling), save what came back.
 */
import { Clock, Duration, Effect, Option, Ref } from "effect"
import * as V1 from "../a2a/v1.js"
import { type AnswerFold, makeAnswerFold, truncation } from "../domain/answerFold.js"
import { type ProtocolError, type TaskNotFound, UnsupportedOperation } from "../domain/clientErrors.js"
import { InvalidInput, SavedTaskRefused } from "../domain/errors.js"
import { type MessageResult, messageResult, taskHead } from "../domain/results.js"
import type { SessionPatch, SessionRecord } from "../domain/session.js"
import { A2aClient, type Target } from "../services/A2aClient.js"
import { SessionStore, writeBehind } from "../services/SessionStore.js"
import { type AgentAccess, interfaceUsed, resolveTarget, retryWithRenewedToken } from "./agentTarget.js"
import { type FileHandling, keepAnswerFiles } from "./answerFiles.js"
import { webhookUrl } from "./pushConfig.js"
import { isTaskNotFound, reportMissingTask, taskNotFound } from "./tasks.js"
import {
  type AnswerLimit,
  answersTurn,
  followStream,
  followTask,
  makeFollower,
  type OnUpdate,
  presentForTurn,
  statusMark,
  type Turn,
  withAnswerHistory,
  withinWait
} from "./taskUpdates.js"

export interface SendMessageInput extends AgentAccess, AnswerLimit {
  /** The text; may be empty when `parts` are given. */
  readonly text: string
  /** Files and data sent after the text (outgoingParts.ts makes them). */
  readonly parts?: ReadonlyArray<V1.Part> | undefined
  readonly contextId?: string | undefined
  readonly taskId?: string | undefined
  /** Continue the saved conversation: its context, and its task while that waits for input. */
  readonly useSession?: boolean | undefined
  /** Use the agent's stream and report progress as it arrives. */
  readonly stream?: boolean | undefined
  /** Register this webhook for the task (SPEC §4.3). */
  readonly pushUrl?: string | undefined
  readonly pushToken?: string | undefined
  readonly historyLength?: number | undefined
  /**
   * How long the whole send may take, connection and discovery included. A task still running
   * then is returned as `working`, and the caller can wait again; with no task yet, the agent
   * did not answer in time (RequestTimeout).
   */
  readonly maxWait?: Duration.DurationInput | undefined
  readonly onUpdate?: OnUpdate | undefined
  /** What becomes of the files the answer carries (saved in the state directory by default). */
  readonly answerFiles?: FileHandling | undefined
}

/** States after which the saved task takes the next message (SPEC: input- or auth-required). */
const CONTINUABLE_STATES: ReadonlyArray<string> = ["input-required", "auth-required"]

/**
 * Which context and task the message goes to (SPEC §4.1 rule 1). Explicit ids win. With
 * `useSession`, the saved context fills a missing context id, and the saved task is continued
 * only while it waits for the user. An explicit task carries its own context, so the saved
 * context is added to it only when it is the saved task itself (agents reject a mismatch).
 */
export const conversationIds = (
  input: Pick<SendMessageInput, "contextId" | "taskId" | "useSession">,
  saved: Option.Option<SessionRecord>
): { readonly contextId?: string; readonly taskId?: string } => {
  const session = input.useSession === true ? Option.getOrUndefined(saved) : undefined
  const sessionContextFits = session !== undefined && (input.taskId === undefined || input.taskId === session.task_id)
  const contextId = input.contextId ?? (sessionContextFits ? session.context_id : undefined)
  const savedTaskContinues = session !== undefined &&
    input.taskId === undefined &&
    session.task_id !== undefined &&
    CONTINUABLE_STATES.includes(session.last_state ?? "") &&
    (input.contextId === undefined || input.contextId === session.context_id)
  const taskId = input.taskId ?? (savedTaskContinues ? session.task_id : undefined)
  return { ...(contextId === undefined ? {} : { contextId }), ...(taskId === undefined ? {} : { taskId }) }
}

/** The A2A request for this input. */
export const buildRequest = (
  input: SendMessageInput,
  ids: { readonly contextId?: string; readonly taskId?: string },
  messageId: string
): V1.SendMessageRequest => {
  const push = input.pushUrl === undefined ? undefined : {
    url: input.pushUrl,
    ...(input.pushToken === undefined ? {} : { token: input.pushToken })
  }
  const configuration: V1.SendMessageConfiguration = {
    acceptedOutputModes: ["text/plain", "application/json"],
    // Not blocking, on every binding and generation: the task id comes back at once, so a wait
    // that runs out still has a task to point at, and no HTTP request outlives its timeout on a
    // long task. The task is then followed by events (taskUpdates.ts: its stream, else polling).
    ...(input.stream === true ? {} : { returnImmediately: true }),
    ...(push === undefined ? {} : { taskPushNotificationConfig: push }),
    // No history unless asked: the task would carry this message (its files) back (taskUpdates.ts askedHistory).
    historyLength: input.historyLength ?? 0
  }
  const text: ReadonlyArray<V1.Part> = input.text.trim() === "" ? [] : [{ text: input.text }]
  return {
    message: { messageId, role: "ROLE_USER", parts: [...text, ...(input.parts ?? [])], ...ids },
    configuration
  }
}

/** Whether the message carries a file's bytes, which the task's history then holds too. */
const sendsFileBytes = (request: V1.SendMessageRequest) => request.message.parts.some((part) => "raw" in part)

/** What the session keeps of a turn. */
type SavedTurn = Pick<MessageResult, "context_id" | "task_id" | "state">

/**
 * The turn's ids and state, as the session keeps them (SPEC §4.1 rule 2). A reply that names no
 * context stays in the context it was sent to, so `--continue` keeps following the conversation.
 */
const turnPatch = (request: V1.SendMessageRequest, result: SavedTurn): SessionPatch => ({
  context_id: result.context_id ?? request.message.contextId ?? null,
  task_id: result.task_id,
  last_state: result.state
})

const saveTurn = (target: Target, request: V1.SendMessageRequest, result: SavedTurn) =>
  Effect.flatMap(SessionStore, (store) => store.update(target.agentUrl, turnPatch(request, result)))

/**
 * The status of the task a message continues, before it is sent: the snapshot that answers the
 * message must show another one (see taskUpdates.ts). Unknown when the agent will not say.
 */
const statusBefore = (target: Target, taskId: string | undefined) =>
  taskId === undefined
    ? Effect.succeed(undefined)
    : Effect.flatMap(A2aClient, (client) => client.getTask(target, { id: taskId, historyLength: 0 })).pipe(
      Effect.map(statusMark),
      Effect.orElseSucceed(() => undefined)
    )

export const sendMessage = Effect.fn("sendMessage")(function*(input: SendMessageInput) {
  if (input.text.trim() === "" && (input.parts ?? []).length === 0) {
    return yield* new InvalidInput({ reason: "The message is empty", suggestion: "Give the text, files or data to send to the agent" })
  }
  if (input.pushUrl !== undefined) yield* webhookUrl(input.pushUrl)
  const target = yield* resolveTarget(input)
  const saved = yield* Effect.flatMap(SessionStore, (store) => store.get(target.agentUrl))
  const request = buildRequest(input, conversationIds(input, saved), crypto.randomUUID())
  const turn = yield* Ref.make<Turn>({ before: undefined, sentAt: 0 })
  const answer = makeAnswerFold(input.maxAnswerBytes)
  const waited = yield* withinWait(
    target.agentUrl,
    input.maxWait ?? Duration.infinity,
    answer,
    converse(target, request, input, turn, answer)
  )
  if (waited.finished) return waited.value
  // Out of time while the task runs: say so (working), with the task id to wait on.
  const task = presentForTurn(yield* Ref.get(turn), waited.task)
  const result = messageResult({ task })
  yield* saveTurn(target, request, result)
  return { ...result, parts: yield* keepAnswerFiles(target, task, result.parts, input.answerFiles), ...interfaceUsed(target) }
})

/** Sends, then follows the task until the message is answered or its answer is cut; `answer` takes in all it shows. */
const converse = (
  addressed: Target,
  request: V1.SendMessageRequest,
  input: SendMessageInput,
  turnRef: Ref.Ref<Turn>,
  answer: AnswerFold
) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    // Saved OAuth tokens refused before the message was taken are renewed once, then kept for the turn.
    const { target: checked, result: before } = yield* retryWithRenewedToken(addressed, (target) =>
      Effect.gen(function*() {
        if (input.pushUrl !== undefined) yield* requirePushSupport(target)
        return yield* statusBefore(target, request.message.taskId)
      }))
    const turn: Turn = { before, sentAt: yield* Clock.currentTimeMillis }
    yield* Ref.set(turnRef, turn)
    // Written when the task or its state changes, not on every event, and without waiting for the disk.
    const session = yield* writeBehind(addressed.agentUrl)
    // Once the agent showed the task, a later refusal must not send the message twice.
    let taskSeen = false
    const onSnapshot = (task: V1.Task) =>
      Effect.zipRight(Effect.sync(() => (taskSeen = true)), session.inBackground(turnPatch(request, taskHead(presentForTurn(turn, task)))))
    const follower = yield* makeFollower(answer, { onUpdate: input.onUpdate, onSnapshot, turn })
    const sending = (target: Target) =>
      input.stream === true
        ? followStream(target.agentUrl, client.stream(target, request), follower)
        : Effect.tap(client.send(target, request), follower.see)
    return yield* Effect.gen(function*() {
      // A 401 answers the request itself, before any event: the message was not taken, so it is sent again.
      const { target, result: sent } = yield* Effect.catchTag(
        retryWithRenewedToken(checked, sending, () => !taskSeen),
        "ProtocolError",
        refusedTask(checked, request, input)
      )
      // What was kept of it: the whole answer, unless it was cut at its limit.
      const response = answer.answer() ?? sent
      if (!("task" in response)) {
        const result = { ...messageResult(response), ...truncation(answer) }
        yield* saveTurn(target, request, result)
        return {
          ...result,
          parts: yield* keepAnswerFiles(target, response.message, result.parts, input.answerFiles),
          ...interfaceUsed(target)
        }
      }
      const answered = answer.cut() || answersTurn(turn, response.task, yield* Clock.currentTimeMillis)
      const final = answered
        ? yield* withAnswerHistory(target, follower, input.historyLength)(response.task)
        : yield* followTask(target, response.task.id, follower, { historyLength: input.historyLength, subscribe: !sendsFileBytes(request) })
          .pipe(
            reportMissingTask(target, response.task.id)
          )
      const result = { ...messageResult({ task: final }), ...truncation(answer) }
      yield* session.last(turnPatch(request, result))
      return { ...result, parts: yield* keepAnswerFiles(target, final, result.parts, input.answerFiles), ...interfaceUsed(target) }
    }).pipe(Effect.ensuring(session.written))
  })

/**
 * A task the agent does not have (never had, or forgot) is not found, whether given or saved; a
 * refusal of the task the session continued says how to get unstuck; other refusals pass.
 */
const refusedTask =
  (target: Target, request: V1.SendMessageRequest, input: SendMessageInput) =>
  (error: ProtocolError): Effect.Effect<never, ProtocolError | SavedTaskRefused | TaskNotFound, A2aClient | SessionStore> => {
    const taskId = request.message.taskId
    if (taskId === undefined) return Effect.fail(error)
    if (isTaskNotFound(error)) return Effect.flatMap(taskNotFound(target, taskId, error.detail), Effect.fail)
    return input.taskId === undefined
      ? Effect.fail(new SavedTaskRefused({ agentUrl: target.agentUrl, taskId, detail: error.detail }))
      : Effect.fail(error)
  }

const requirePushSupport = (target: Target) =>
  Effect.flatMap(A2aClient, (client) => client.discover(target)).pipe(
    Effect.flatMap((card) =>
      card.card.capabilities.pushNotifications === true ? Effect.void : new UnsupportedOperation({
        operation: "Push notifications",
        reason: `the agent at ${target.agentUrl} does not declare them; send without a push URL and follow the task instead`
      })
    )
  )
