/**
 * The local agent's use cases on tasks: send a message (answered when the task settles, or as a
 * stream of its events), get, list, cancel and subscribe. The agent server's doors decode either
 * protocol version into these plain v1.0 inputs and encode the results back; push configs are in
 * pushConfigs.ts.
 */
import { Effect, Either, Option, Stream } from "effect"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import * as V1 from "../../a2a/v1.js"
import {
  type AgentRequestError,
  internalError,
  invalidParams,
  shown,
  taskNotCancelable,
  taskNotFound,
  unsupportedOperation
} from "../../domain/agentErrors.js"
import { timestampCeilMillis } from "../../domain/timestamp.js"
import { decodeCursor, InvalidPageToken, type TaskPage } from "../../services/TaskStorage.js"
import { TaskStore, type TaskSubscription } from "../../services/TaskStore.js"
import { checkHistoryLength, nowIso, pageSizeOf, presentTask, requireTask, status, statusEvent } from "./shared.js"
import { beginTurn, startWorker, withTurnServices } from "./turns.js"

/**
 * SendMessage: starts (or continues, or queues a message for) a task and answers with it once it
 * is terminal or interrupted, or at once with `returnImmediately`.
 */
export const sendMessage = (request: V1.SendMessageRequest, generation: ProtocolVersion = "1.0") =>
  withTurnServices((services) =>
    Effect.flatMap(beginTurn(services, request, generation), (begun) => {
      const task = begun.task
      const historyLength = request.configuration?.historyLength
      const started = startWorker(services, begun, false)
      if (request.configuration?.returnImmediately === true) {
        // Read back: a durable storage gives the task once it is on disk, so what is answered survives a crash.
        return Effect.zipRight(started, Effect.as(services.store.storage.get(task.id), { task: presentTask(task, historyLength) }))
      }
      // A turn that needs no waiting (the echo model) is over when its worker has started: no waiter is made then.
      return Effect.zipRight(
        started,
        Effect.flatMap(services.store.awaitSettled(task.id), (settled) =>
          Option.isNone(settled)
            ? Effect.fail(internalError(`Task ${task.id} disappeared`))
            : Effect.succeed({ task: presentTask(settled.value, historyLength) }))
      )
    })
  )

/** The snapshot first, then every update until the task is terminal or interrupted. */
const eventsOf = (subscription: TaskSubscription, historyLength: number | undefined): Stream.Stream<V1.StreamResponse> =>
  Stream.concat(
    Stream.make({ task: presentTask(subscription.task, historyLength) }),
    Stream.map(subscription.updates, (update) =>
      "task" in update.event ? { task: presentTask(update.event.task, historyLength) } : update.event)
  )

/**
 * SendStreamingMessage: starts (or continues, or queues a message for) a task and returns its
 * events: the Task first (as it stands), then status and artifact updates (the answer's text
 * deltas as chunks) until it is terminal or interrupted. Request errors fail the effect itself,
 * before any event.
 */
export const streamMessage = (request: V1.SendMessageRequest, generation: ProtocolVersion = "1.0") =>
  withTurnServices((services) =>
    Effect.flatMap(
      beginTurn(services, request, generation),
      (begun) =>
        Effect.flatMap(services.store.subscribe(begun.task.id), (subscription) =>
          Option.isNone(subscription)
            ? Effect.fail(internalError(`Task ${begun.task.id} disappeared`))
            : Effect.as(startWorker(services, begun, true), eventsOf(subscription.value, request.configuration?.historyLength)))
    )
  )

export const getTask = (request: { readonly id: string; readonly historyLength?: number | undefined }) =>
  Effect.gen(function*() {
    yield* checkHistoryLength(request.historyLength)
    return presentTask(yield* requireTask(request.id), request.historyLength)
  })

/** Cancels a task that is not terminal: the model call is interrupted, the messages waiting for its next turns are dropped, and the task is canceled. */
export const cancelTask = (request: { readonly id: string }) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const at = yield* nowIso
    const canceled = yield* store.modify(
      request.id,
      (task): Either.Either<{ task: V1.Task; event: V1.StreamResponse }, AgentRequestError> => {
        const state = task.status.state
        if (V1.isTerminalState(state)) {
          return Either.left(taskNotCancelable(`Task ${request.id} is ${V1.stateName(state)} and cannot be canceled`))
        }
        const canceledStatus = status("TASK_STATE_CANCELED", at)
        return Either.right({ task: { ...task, status: canceledStatus }, event: statusEvent(task, canceledStatus) })
      }
    )
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

/** The last millisecond toISOString writes with four digits of year: past it, "+010000-…" sorts before every stored time. */
const LAST_FOUR_DIGIT_YEAR_MILLIS = Date.UTC(9999, 11, 31, 23, 59, 59, 999)

/** A time no task's status reaches (RFC 3339 allows 9999-12-31T23:59:59.9999Z, and an offset can take it past 9999). */
const AFTER_EVERY_TASK = Symbol("after every task")

/** RFC 3339 only (ProtoJSON's Timestamp), as the store's ISO form; tasks at or after it match. */
const timestampAfter = (value: string | undefined): Effect.Effect<string | typeof AFTER_EVERY_TASK | undefined, AgentRequestError> => {
  if (value === undefined) return Effect.succeed(undefined)
  const millis = timestampCeilMillis(value)
  if (millis === undefined) {
    return Effect.fail(
      invalidParams(`statusTimestampAfter must be an RFC 3339 timestamp such as 2025-01-31T12:00:00Z, not "${shown(value)}"`)
    )
  }
  return Effect.succeed(millis > LAST_FOUR_DIGIT_YEAR_MILLIS ? AFTER_EVERY_TASK : new Date(millis).toISOString())
}

/** No task, for a time past every task's; its page token still checked, as the storage would. */
const noPage = (pageToken: string | undefined): Effect.Effect<TaskPage, InvalidPageToken> =>
  pageToken !== undefined && decodeCursor(pageToken) === undefined
    ? Effect.fail(new InvalidPageToken({ token: pageToken }))
    : Effect.succeed({ tasks: [], totalSize: 0 })

/** ListTasks: newest status first, paginated; artifacts only when asked for. */
export const listTasks = (request: V1.ListTasksRequest) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const pageSize = yield* pageSizeOf(request.pageSize)
    yield* checkHistoryLength(request.historyLength)
    const since = yield* timestampAfter(request.statusTimestampAfter)
    const listed = since === AFTER_EVERY_TASK ? noPage(request.pageToken) : store.storage.list({
      contextId: request.contextId,
      status: request.status === "TASK_STATE_UNSPECIFIED" ? undefined : request.status,
      statusTimestampAfter: since,
      pageSize,
      pageToken: request.pageToken
    })
    const page = yield* Effect.catchTag(listed, "InvalidPageToken", (invalid) => Effect.fail(invalidParams(invalid.message)))
    const includeArtifacts = request.includeArtifacts === true
    return {
      tasks: page.tasks.map((task) => presentTask(task, request.historyLength, includeArtifacts)),
      nextPageToken: page.nextPageToken ?? "",
      pageSize,
      totalSize: page.totalSize
    } satisfies V1.ListTasksResponse
  })
