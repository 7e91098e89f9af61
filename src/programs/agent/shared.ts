/**
 * What the agent's use cases share: timestamps, statuses and status events, the task as a caller
 * asked for it, the checks of request fields, and page sizes.
 */
import { Clock, Effect, Option } from "effect"
import type * as V1 from "../../a2a/v1.js"
import { invalidParams, taskNotFound } from "../../domain/agentErrors.js"
import { randomId } from "../../domain/ids.js"
import { MAX_ID_BYTES, MAX_ID_CHARS } from "../../domain/limits.js"
import { TaskStore } from "../../services/TaskStore.js"

/** Pages of ListTasks: 50 by default, at most 100 (A2A §ListTasks). */
export const DEFAULT_PAGE_SIZE = 50
export const MAX_PAGE_SIZE = 100

let lastMillis = -1
let lastIso = ""
/** ISO 8601 of a time. A busy server stamps several events per millisecond, so the last one is kept. */
export const isoOf = (millis: number): string => {
  if (millis !== lastMillis) {
    lastMillis = millis
    lastIso = new Date(millis).toISOString()
  }
  return lastIso
}

export const nowIso = Effect.map(Clock.currentTimeMillis, isoOf)

export const status = (state: V1.TaskState, timestamp: string, message?: V1.Message): V1.TaskStatus =>
  message === undefined ? { state, timestamp } : { state, timestamp, message }

export const agentMessage = (text: string, task: V1.Task): V1.Message => ({
  messageId: randomId(),
  role: "ROLE_AGENT",
  parts: [{ text }],
  taskId: task.id,
  ...(task.contextId === undefined ? {} : { contextId: task.contextId })
})

export const statusEvent = (task: V1.Task, taskStatus: V1.TaskStatus): V1.StreamResponse => ({
  statusUpdate: { taskId: task.id, contextId: task.contextId ?? "", status: taskStatus }
})

/** The task as a caller asked for it: the last `historyLength` messages (none for 0, all when unset). */
export const presentTask = (
  task: V1.Task,
  historyLength: number | undefined,
  includeArtifacts = true
): V1.Task => {
  const { history, artifacts } = task
  // The common answer is the task as stored: no copy.
  if (historyLength === undefined && includeArtifacts && history?.length !== 0) return task
  const kept = history === undefined || historyLength === undefined
    ? history
    : historyLength === 0
    ? undefined
    : history.slice(-historyLength)
  const presented: { -readonly [K in keyof V1.Task]: V1.Task[K] } = { ...task }
  if (kept === undefined || kept.length === 0) delete presented.history
  else presented.history = kept
  if (!includeArtifacts || artifacts === undefined) delete presented.artifacts
  return presented
}

/** Why a request's historyLength is refused, if it is. */
export const historyLengthProblem = (historyLength: number | undefined) =>
  historyLength !== undefined && historyLength < 0 ? invalidParams(`historyLength must be 0 or more, not ${historyLength}`) : undefined

export const checkHistoryLength = (historyLength: number | undefined) => {
  const problem = historyLengthProblem(historyLength)
  return problem === undefined ? Effect.void : Effect.fail(problem)
}

/** Why a stored string is refused, if it is: longer than its limit (ids are keys, echoed in answers and logs). */
export const lengthProblem = (field: string, value: string | undefined, max: number) =>
  value !== undefined && value.length > max ? invalidParams(`${field} is longer than ${max} characters (${value.length})`) : undefined

/**
 * Why an id a client gives is refused, if it is: too long, in characters or in UTF-8 bytes (past
 * MAX_ID_BYTES a PostgreSQL store cannot index it), or with a NUL, which a PostgreSQL store cannot
 * hold (every store refuses both alike, rather than one failing where the others keep it).
 */
export const idProblem = (field: string, value: string | undefined) => {
  if (value === undefined) return undefined
  if (value.includes("\u0000")) return invalidParams(`${field} must not contain a NUL character (U+0000)`)
  const tooLong = lengthProblem(field, value, MAX_ID_CHARS)
  if (tooLong !== undefined) return tooLong
  const bytes = Buffer.byteLength(value)
  return bytes > MAX_ID_BYTES ? invalidParams(`${field} is longer than ${MAX_ID_BYTES} bytes in UTF-8 (${bytes})`) : undefined
}

export const requireTask = (taskId: string) =>
  Effect.flatMap(TaskStore, (store) =>
    Effect.flatMap(
      store.storage.get(taskId),
      Option.match({
        onNone: () => Effect.fail(taskNotFound(taskId)),
        onSome: (stored) => Effect.succeed(stored.task)
      })
    ))

/**
 * ListTasks' `optional int32 page_size`: only an absent field takes the default; an explicit 0
 * is out of its 1..100 range like any other.
 */
export const pageSizeOf = (pageSize: number | undefined) => {
  if (pageSize === undefined) return Effect.succeed(DEFAULT_PAGE_SIZE)
  return pageSize < 1 || pageSize > MAX_PAGE_SIZE
    ? Effect.fail(invalidParams(`pageSize must be between 1 and ${MAX_PAGE_SIZE}, not ${pageSize}`))
    : Effect.succeed(pageSize)
}
