/**
 * The scheduler the agent server's fibers run on: one queue for the whole process, drained with
 * setImmediate.
 *
 * Effect's default scheduler yields with setTimeout (>= 1 ms) after 2048 microtask drains; under
 * load the server then idled waiting for timers, and yielding with setImmediate keeps the loop
 * busy and lets sockets in between. Effect's own `Scheduler.makeBatched` does that, but since
 * Effect 3.20 every scheduler keeps a runner per fiber (so that concurrent `runPromise` calls keep
 * their AsyncLocalStorage contexts apart, Effect-TS/effect#6124): each request's fiber then made a
 * runner, a WeakMap entry and a setImmediate of its own. relay uses no AsyncLocalStorage, so the
 * fibers share one queue, and the requests that arrive together run in one batch (figures:
 * bench/README.md, "One scheduler queue").
 */
import { Scheduler } from "effect"

/** How a task that threw (only a bug in the runtime can) is reported: as an uncaught exception, as before. */
const rethrowLater = (error: unknown) =>
  process.nextTick(() => {
    throw error
  })

/**
 * A scheduler whose tasks, from any fiber, run in the next batch, in priority order. A task that
 * throws is reported through `onTaskError` once the batch has run: the other fibers' tasks still
 * run, and the queue goes on (one queue for all fibers: left draining, it would stall every one).
 */
export const makeSharedBatched = (onTaskError: (error: unknown) => void = rethrowLater): Scheduler.Scheduler => {
  let tasks = new Scheduler.PriorityBuckets()
  let draining = false
  const drain = () => {
    const due = tasks.buckets
    // Tasks scheduled while these run wait for the next batch, after the sockets' turn.
    tasks = new Scheduler.PriorityBuckets()
    const thrown: Array<unknown> = []
    for (const [, bucket] of due) {
      for (let index = 0; index < bucket.length; index++) {
        try {
          bucket[index]!()
        } catch (error) {
          thrown.push(error)
        }
      }
    }
    if (tasks.buckets.length === 0) draining = false
    else setImmediate(drain)
    for (const error of thrown) onTaskError(error)
  }
  return {
    shouldYield: Scheduler.defaultShouldYield,
    scheduleTask: (task, priority) => {
      tasks.scheduleTask(task, priority)
      if (!draining) {
        draining = true
        setImmediate(drain)
      }
    }
  }
}
