/**
 * Tasks whose instance died: with a storage shared by several instances, a task being worked on is
 * leased to its instance, which renews the lease (TaskStore). When the lease runs out, one of the
 * other instances takes the task (the storage leases it to that one alone), starts its push
 * deliveries and ends it `failed`, so each webhook gets that update once, from that instance.
 */
import { Duration, Effect, Option, Schedule } from "effect"
import type { SharedTasks } from "../../services/TaskStorage.js"
import { TaskStore } from "../../services/TaskStore.js"
import { startDelivery } from "./pushConfigs.js"
import { agentMessage, nowIso, status, statusEvent } from "./shared.js"

export const ORPHANED_REASON =
  "The server instance working on this task stopped before it finished (its lease ran out); send the message again"

/** Ends one task whose lease ran out, its push configs told. */
const endOrphan = (shared: SharedTasks, taskId: string) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const configs = yield* store.storage.pushConfigs(taskId)
    // Subscribed before the change, so the failed update reaches them.
    yield* Effect.forEach(Option.getOrElse(configs, () => []), (stored) => startDelivery(stored, false), { discard: true })
    const found = yield* store.storage.get(taskId)
    if (Option.isSome(found)) {
      const task = found.value.task
      const failed = status("TASK_STATE_FAILED", yield* nowIso, agentMessage(ORPHANED_REASON, task))
      // None when the task ended meanwhile (its instance was slow, not dead): nothing to do then.
      yield* store.publish(taskId, statusEvent(task, failed))
    }
    yield* shared.release(taskId)
  })

/** One look for tasks whose lease ran out; each is ended by the instance that took it. */
export const endOrphanedTasks = (shared: SharedTasks) =>
  Effect.flatMap(shared.takeExpired, (taskIds) => Effect.forEach(taskIds, (taskId) => endOrphan(shared, taskId), { discard: true }))

/** Looks for orphaned tasks twice per lease time while the server runs. */
export const watchOrphanedTasks = Effect.flatMap(TaskStore, (store) => {
  const shared = store.storage.shared
  if (shared === undefined) return Effect.void
  const every = Duration.divide(shared.leaseTime, 2).pipe(Option.getOrElse(() => shared.leaseTime))
  return Effect.repeat(
    Effect.catchAllCause(endOrphanedTasks(shared), (cause) => Effect.logWarning("Ending the tasks of a stopped instance failed", cause)),
    Schedule.spaced(every)
  ).pipe(Effect.asVoid)
})
