/**
 * Sending a message (SPEC §4.1 rules 1–2): pick the context and task to continue from the
 * session, send (blocking, streamed, or followed by polling), save what came back.
 */
import { Clock, Duration, Effect, Option, Ref } from "effect"
import * as V1 from "../domain/a2a/v1.js"
import { RequestTimeout, UnsupportedOperation } from "../domain/clientErrors.js"
import { InvalidInput } from "../domain/errors.js"
import { type MessageResult, messageResult } from "../domain/results.js"
import type { SessionRecord } from "../domain/session.js"
import { A2aClient, type Target } from "../services/A2aClient.js"
import { SessionStore } from "../services/SessionStore.js"
import { type AgentAccess, resolveTarget } from "./agentTarget.js"
import { webhookUrl } from "./pushConfig.js"
import { followStream, ignoreUpdates, isSettled, type OnUpdate, pollUntilSettled } from "./taskUpdates.js"

export interface SendMessageInput extends AgentAccess {
  readonly text: string
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
   * How long to follow a task that is still running when the agent answers (by polling, or by
   * the stream). After that the result says `working` and the caller can wait again.
   */
  readonly maxWait?: Duration.DurationInput | undefined
  readonly onUpdate?: OnUpdate | undefined
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
    // Never hold the HTTP request open for the whole task: take the task at once and follow it
    // by polling (settleTask), so a long task cannot outlive the response timeout unseen.
    ...(input.stream === true ? {} : { returnImmediately: true }),
    ...(push === undefined ? {} : { taskPushNotificationConfig: push }),
    ...(input.historyLength === undefined ? {} : { historyLength: input.historyLength })
  }
  return {
    message: { messageId, role: "ROLE_USER", parts: [{ text: input.text }], ...ids },
    configuration
  }
}

/**
 * Saves the turn's ids and state (SPEC §4.1 rule 2). A reply that names no context stays in the
 * context it was sent to, so `--continue` keeps following the conversation.
 */
const saveTurn = (target: Target, request: V1.SendMessageRequest, result: MessageResult) =>
  Effect.flatMap(SessionStore, (store) =>
    store.update(target.agentUrl, {
      context_id: result.context_id ?? request.message.contextId ?? null,
      task_id: result.task_id,
      last_state: result.state
    }))

export const sendMessage = Effect.fn("sendMessage")(function*(input: SendMessageInput) {
  if (input.text.trim() === "") {
    return yield* new InvalidInput({ reason: "The message is empty", suggestion: "Give the text to send to the agent" })
  }
  if (input.pushUrl !== undefined) yield* webhookUrl(input.pushUrl)
  const client = yield* A2aClient
  const store = yield* SessionStore
  const target = yield* resolveTarget(input)
  const saved = yield* store.get(target.agentUrl)
  const request = buildRequest(input, conversationIds(input, saved), crypto.randomUUID())
  const onUpdate = input.onUpdate ?? ignoreUpdates
  const maxWait = input.maxWait ?? Duration.infinity

  if (input.pushUrl !== undefined) {
    const card = yield* client.discover(target)
    if (card.card.capabilities.pushNotifications !== true) {
      return yield* new UnsupportedOperation({
        operation: "Push notifications",
        reason: `the agent at ${target.agentUrl} does not declare them; send without a push URL and follow the task instead`
      })
    }
  }

  const started = yield* Clock.currentTimeMillis
  const response = input.stream === true
    ? yield* streamToAnswer(target, request, onUpdate, maxWait)
    : yield* client.send(target, request)
  const elapsed = Duration.millis((yield* Clock.currentTimeMillis) - started)
  // Saved before following the task, so a failure while polling still leaves the task id behind.
  yield* saveTurn(target, request, messageResult(response))
  const final = yield* settleTask(target, response, Duration.subtract(maxWait, elapsed), input, onUpdate)
  if (final === response) return messageResult(response)
  const result = messageResult(final)
  yield* saveTurn(target, request, result)
  return result
})

/**
 * Follows the agent's stream for at most `maxWait`. The session is saved whenever the task's
 * state changes, so a stream that breaks or runs out of time still leaves the task id behind.
 */
const streamToAnswer = (target: Target, request: V1.SendMessageRequest, onUpdate: OnUpdate, maxWait: Duration.DurationInput) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const latest = yield* Ref.make<V1.Task | undefined>(undefined)
    const onSnapshot = (task: V1.Task) =>
      Effect.flatMap(Ref.getAndSet(latest, task), (before) =>
        before?.status.state === task.status.state ? Effect.void : saveTurn(target, request, messageResult({ task })).pipe(Effect.ignore))
    const answer = yield* followStream(target.agentUrl, client.stream(target, request), onUpdate, onSnapshot).pipe(
      Effect.timeoutOption(maxWait)
    )
    if (Option.isSome(answer)) return answer.value
    const task = yield* Ref.get(latest)
    if (task !== undefined) return { task } satisfies V1.SendMessageResponse
    return yield* new RequestTimeout({ url: target.agentUrl, after: `${Duration.format(Duration.decode(maxWait))} without a task` })
  })

/** A task still running after the answer is polled until it settles or the wait is used up. */
export const settleTask = (
  target: Target,
  response: V1.SendMessageResponse,
  remaining: Duration.Duration,
  input: SendMessageInput,
  onUpdate: OnUpdate
) =>
  "task" in response && !isSettled(response.task) && Duration.greaterThan(remaining, Duration.zero)
    ? Effect.map(
      pollUntilSettled(target, response.task.id, {
        maxWait: remaining,
        onUpdate,
        ...(input.historyLength === undefined ? {} : { historyLength: input.historyLength })
      }),
      (task): V1.SendMessageResponse => ({ task })
    )
    : Effect.succeed(response)
