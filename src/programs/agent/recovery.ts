/**
 * What a durable store needs when the agent server starts over it: the tasks that were submitted or
 * working when the last process stopped have nothing driving them any more, so they end failed
 * (saying why); and the push configs of every unfinished task get its updates again (that failure
 * among them), as they did before the restart.
 */
import { Effect, Option } from "effect"
import type * as V1 from "../../a2a/v1.js"
import { TaskStore } from "../../services/TaskStore.js"
import { startDelivery } from "./pushConfigs.js"
import { agentMessage, nowIso, status, statusEvent } from "./shared.js"

export const RESTARTED_MESSAGE = "The agent server restarted while this task was working; send the message again to retry."

const STOPPED_STATES: ReadonlyArray<V1.TaskState> = ["TASK_STATE_SUBMITTED", "TASK_STATE_WORKING"]
const WAITING_STATES: ReadonlyArray<V1.TaskState> = ["TASK_STATE_INPUT_REQUIRED", "TASK_STATE_AUTH_REQUIRED"]
const PAGE_SIZE = 100

/** Every task in the state, page by page (a page is read before its tasks change). */
const forEachTaskIn = <R>(state: V1.TaskState, f: (task: V1.Task) => Effect.Effect<void, never, R>) =>
  Effect.flatMap(TaskStore, (store) => {
    const page = (pageToken: string | undefined): Effect.Effect<void, never, R> =>
      store.storage.list({ status: state, pageSize: PAGE_SIZE, pageToken }).pipe(
        Effect.orDie,
        Effect.flatMap((listed) =>
          Effect.zipRight(
            // Together: their writes share the store's syncs.
            Effect.forEach(listed.tasks, f, { discard: true, concurrency: PAGE_SIZE }),
            listed.nextPageToken === undefined ? Effect.void : page(listed.nextPageToken)
          )
        )
      )
    return page(undefined)
  })

const resumeDeliveries = (task: V1.Task) =>
  Effect.flatMap(
    TaskStore,
    (store) =>
      Effect.flatMap(store.storage.pushConfigs(task.id), (configs) =>
        Effect.forEach(Option.getOrElse(configs, () => []), (stored) => startDelivery(stored, false), { discard: true }))
  )

const failStopped = (task: V1.Task) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    yield* resumeDeliveries(task)
    const failed = status("TASK_STATE_FAILED", yield* nowIso, agentMessage(RESTARTED_MESSAGE, task))
    yield* store.publish(task.id, statusEvent(task, failed))
  })

/** Run once at start, before the server answers. */
export const recoverAfterRestart = Effect.gen(function*() {
  let failed = 0
  for (const state of STOPPED_STATES) {
    yield* forEachTaskIn(state, (task) => Effect.zipRight(failStopped(task), Effect.sync(() => void failed++)))
  }
  for (const state of WAITING_STATES) yield* forEachTaskIn(state, resumeDeliveries)
  if (failed > 0) yield* Effect.logWarning(`${failed} task(s) left working by the last run ended failed: the server restarted`)
})
