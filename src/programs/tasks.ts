/**
 * Task use cases: get, list, cancel, resubscribe and wait. Each saves what it learns about the
 * agent's task in the session, so every door sees the latest state.
 */
import { Duration, Effect, Option } from "effect"
import { resultText } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import type { AgentUrl } from "../domain/agentUrl.js"
import { makeAnswerFold, truncation } from "../domain/answerFold.js"
import { findingTasks, ProtocolError, TaskNotFound, UnsupportedOperation } from "../domain/clientErrors.js"
import { InvalidInput } from "../domain/errors.js"
import { type InterfaceUsed, taskHead, type TaskView, taskView } from "../domain/results.js"
import { A2aClient, type Target } from "../services/A2aClient.js"
import { SessionStore } from "../services/SessionStore.js"
import { type AgentAccess, interfaceUsed, resolveTarget, retryWithRenewedToken, withAgentTarget } from "./agentTarget.js"
import { type FileHandling, keepAnswerFiles } from "./answerFiles.js"
import { type AnswerLimit, followStream, followTask, makeFollower, type OnUpdate, withinWait } from "./taskUpdates.js"

export interface TaskInput extends AgentAccess {
  readonly taskId: string
  readonly historyLength?: number | undefined
}

/** A task input of the commands that show a task's answer, and so keep its files. */
export interface TaskAnswerInput extends TaskInput {
  /** What becomes of the files the answer carries (saved in the state directory by default). */
  readonly answerFiles?: FileHandling | undefined
}

/** The task's view, its files kept as asked. */
const viewWithFiles = (target: Target, task: V1.Task, handling: FileHandling | undefined) =>
  Effect.suspend(() => {
    const view = taskView(task)
    return Effect.map(keepAnswerFiles(target, task, view.parts, handling), (parts): TaskView => ({ ...view, parts }))
  })

const requireTaskId = (taskId: string) =>
  taskId.trim() === ""
    ? Effect.fail(new InvalidInput({ reason: "No task id given", suggestion: "The agent's saved session holds the last task id" }))
    : Effect.void

/** Keeps the session's task state current when the task is the one the session follows. */
const rememberTask = (target: Target, task: V1.Task) =>
  Effect.flatMap(SessionStore, (store) =>
    Effect.flatMap(store.get(target.agentUrl), (saved) => {
      if (saved._tag === "Some" && saved.value.task_id !== undefined && saved.value.task_id !== task.id) return Effect.void
      const head = taskHead(task)
      return store.update(target.agentUrl, { context_id: head.context_id, task_id: head.task_id, last_state: head.state })
    }))

/** The task the agent's saved session holds, if any (none when the store cannot say). */
const savedTaskIdOf = (agentUrl: AgentUrl) =>
  Effect.flatMap(SessionStore, (store) => store.get(agentUrl)).pipe(
    Effect.map((record) => Option.getOrUndefined(record)?.task_id),
    Effect.orElseSucceed(() => undefined)
  )

/**
 * Whether `relay task list` / list_tasks work with the agent: the interface a call without pins
 * takes speaks A2A 1.0 (A2A 0.3 has no ListTasks). The card is cached by then; without one, the pin says.
 */
const listsTasks = (target: Target) =>
  Effect.flatMap(A2aClient, (client) => client.endpoint({ ...target, protocol: undefined, binding: undefined })).pipe(
    Effect.map((endpoint) => endpoint.version === "1.0"),
    Effect.orElseSucceed(() => target.protocol !== "0.3")
  )

/** The agent's refusal of a task it does not have, as TaskNotFound with a hint that fits the agent. */
export const taskNotFound = (target: Target, taskId: string, detail: string) =>
  Effect.gen(function*() {
    return new TaskNotFound({
      agentUrl: target.agentUrl,
      taskId,
      detail,
      listable: yield* listsTasks(target),
      savedTaskId: yield* savedTaskIdOf(target.agentUrl)
    })
  })

/** The agent's answer about a task it does not have, in any binding and generation. */
export const isTaskNotFound = (error: ProtocolError) => error.a2aReason === "TASK_NOT_FOUND"

/**
 * Reports an unknown (or forgotten) task as TaskNotFound, `not_found` at every door, in whichever
 * binding and generation the agent said so; other errors pass as they are.
 */
export const reportMissingTask =
  (target: Target, taskId: string) =>
  <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | TaskNotFound, R | A2aClient | SessionStore> =>
    Effect.catchAll(
      effect,
      (error): Effect.Effect<never, E | TaskNotFound, A2aClient | SessionStore> =>
        error instanceof ProtocolError && isTaskNotFound(error)
          ? Effect.flatMap(taskNotFound(target, taskId, error.detail), Effect.fail)
          : Effect.fail(error)
    )

const withHistory = (historyLength: number | undefined) => historyLength === undefined ? {} : { historyLength }

/** One message of a task's history, as text (data and file parts summarised). */
export interface HistoryEntry {
  readonly role: "user" | "agent"
  readonly text: string
}

/** The task view, plus the history messages when the caller asked for them (`historyLength`). */
export interface TaskDetails extends TaskView {
  readonly history?: ReadonlyArray<HistoryEntry>
}

const historyEntry = (message: V1.Message): HistoryEntry => ({
  role: message.role === "ROLE_AGENT" ? "agent" : "user",
  text: resultText(message)
})

export const getTask = Effect.fn("getTask")(function*(input: TaskAnswerInput) {
  yield* requireTaskId(input.taskId)
  const client = yield* A2aClient
  const { target, result: task } = yield* withAgentTarget(
    input,
    (target) =>
      client.getTask(target, { id: input.taskId, ...withHistory(input.historyLength) }).pipe(reportMissingTask(target, input.taskId))
  )
  yield* rememberTask(target, task)
  const view: TaskDetails = { ...(yield* viewWithFiles(target, task, input.answerFiles)), ...interfaceUsed(target) }
  // Asking for N history messages means showing them; otherwise the view stays the SPEC's.
  return input.historyLength === undefined ? view : { ...view, history: (task.history ?? []).map(historyEntry) }
})

export const cancelTask = Effect.fn("cancelTask")(function*(input: TaskInput) {
  yield* requireTaskId(input.taskId)
  const client = yield* A2aClient
  const { target, result: task } = yield* withAgentTarget(
    input,
    (target) => client.cancelTask(target, { id: input.taskId }).pipe(reportMissingTask(target, input.taskId))
  )
  yield* rememberTask(target, task)
  return { ...taskView(task), ...interfaceUsed(target) }
})

export interface ListTasksInput extends AgentAccess {
  readonly contextId?: string | undefined
  /** A state name in either spelling: `working`, `TASK_STATE_WORKING`. */
  readonly status?: string | undefined
  readonly pageSize?: number | undefined
  readonly pageToken?: string | undefined
}

export interface TaskList extends InterfaceUsed {
  readonly count: number
  readonly tasks: ReadonlyArray<TaskView>
  /** Pass as the page token to get the next page; null on the last page. */
  readonly next_page_token: string | null
  readonly total_size: number | null
}

export const listTasks = Effect.fn("listTasks")(function*(input: ListTasksInput) {
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  const status = input.status === undefined ? undefined : V1.parseTaskState(input.status)
  if (input.status !== undefined && status === undefined) {
    return yield* new InvalidInput({
      reason: `Unknown task state "${input.status}"`,
      suggestion: "Use one of submitted, working, input-required, auth-required, completed, failed, canceled, rejected"
    })
  }
  if (input.pageSize !== undefined && (input.pageSize < 1 || input.pageSize > 100)) {
    return yield* new InvalidInput({
      reason: "The page size must be between 1 and 100",
      suggestion: "Give a page size from 1 to 100 (50 when none is given)"
    })
  }
  const { result: response } = yield* retryWithRenewedToken(target, (target) =>
    client.listTasks(target, {
      // Without artifacts (the v1.0 default) every listed task would show an empty text.
      includeArtifacts: true,
      ...(input.contextId === undefined ? {} : { contextId: input.contextId }),
      ...(status === undefined ? {} : { status }),
      ...(input.pageSize === undefined ? {} : { pageSize: input.pageSize }),
      ...(input.pageToken === undefined ? {} : { pageToken: input.pageToken })
    })).pipe(Effect.catchTag("UnsupportedOperation", (error) => notListable(target, error)))
  return {
    count: response.tasks.length,
    tasks: response.tasks.map(taskView),
    next_page_token: response.nextPageToken === "" ? null : response.nextPageToken,
    total_size: response.totalSize || null,
    ...interfaceUsed(target)
  } satisfies TaskList
})

/** An agent that cannot list its tasks (A2A 0.3): what works instead is the task the session saved. */
const notListable = (target: Target, error: UnsupportedOperation) =>
  Effect.flatMap(savedTaskIdOf(target.agentUrl), (savedTaskId) =>
    Effect.fail(
      new UnsupportedOperation({
        operation: error.operation,
        reason: error.reason,
        agentUrl: target.agentUrl,
        instead: findingTasks(target.agentUrl, false, savedTaskId)
      })
    ))

export interface FollowTaskInput extends TaskAnswerInput, AnswerLimit {
  readonly onUpdate?: OnUpdate | undefined
}

/**
 * Re-attaches to a running task's stream (the agent sends the current task first). A task that
 * finished meanwhile cannot be subscribed to (UnsupportedOperation): then its final state is the
 * answer, reported like the last event of a stream.
 */
export const resubscribe = Effect.fn("resubscribe")(function*(input: FollowTaskInput) {
  yield* requireTaskId(input.taskId)
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  const missing = reportMissingTask(target, input.taskId)
  const answer = makeAnswerFold(input.maxAnswerBytes)
  const follower = yield* makeFollower(answer, { onUpdate: input.onUpdate })
  const finalState = Effect.tap(client.getTask(target, { id: input.taskId }), (task) => follower.see({ task })).pipe(missing)
  yield* followStream(target.agentUrl, client.subscribe(target, { id: input.taskId }), follower).pipe(
    Effect.catchTag("ProtocolError", (error) => (error.a2aReason === "UNSUPPORTED_OPERATION" ? finalState : Effect.fail(error))),
    missing
  )
  const task = answer.task() ?? (yield* finalState)
  yield* rememberTask(target, task)
  return { ...(yield* viewWithFiles(target, task, input.answerFiles)), ...truncation(answer), ...interfaceUsed(target) }
})

export interface WaitForTaskInput extends FollowTaskInput {
  readonly maxWait: Duration.DurationInput
}

/**
 * Follows the task until it is finished or needs the caller, for at most `maxWait` in all; then
 * the task as last seen.
 */
export const waitForTask = Effect.fn("waitForTask")(function*(input: WaitForTaskInput) {
  yield* requireTaskId(input.taskId)
  const target = yield* resolveTarget(input)
  const answer = makeAnswerFold(input.maxAnswerBytes)
  const follower = yield* makeFollower(answer, { onUpdate: input.onUpdate })
  const waited = yield* withinWait(
    target.agentUrl,
    input.maxWait,
    answer,
    followTask(target, input.taskId, follower, { historyLength: input.historyLength }).pipe(reportMissingTask(target, input.taskId))
  )
  const task = waited.finished ? waited.value : waited.task
  yield* rememberTask(target, task)
  return { ...(yield* viewWithFiles(target, task, input.answerFiles)), ...truncation(answer), ...interfaceUsed(target) }
})
