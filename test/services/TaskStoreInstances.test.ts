// Two live layers (TaskStore) over one PostgreSQL database, as two `relay server agent` instances
// share it: a subscriber on B gets A's changes once and in order, snapshot first; a cancel written
// by B stops A's worker; a dead instance's lease runs out and exactly one other instance takes the task.
import { Context, Deferred, Effect, Exit, Layer, Option, Scope, Stream } from "effect"
import { describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import { endOrphanedTasks, ORPHANED_REASON } from "../../src/programs/agent/orphans.js"
import { postgresStorage } from "../../src/services/PostgresTaskStorage.js"
import * as PushSender from "../../src/services/PushSender.js"
import { TaskStorage } from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { postgresAvailable } from "../helpers/postgres.js"
import { postgresForSuite } from "../helpers/postgresSuite.js"

const STORE_KEY = "test store key, not a secret"
const LEASE = "600 millis"

const working = (id: string): V1.Task => ({
  id,
  contextId: "ctx",
  status: { state: "TASK_STATE_WORKING", timestamp: new Date().toISOString() }
})

const statusUpdate = (id: string, state: V1.TaskState, text: string): V1.StreamResponse => ({
  statusUpdate: {
    taskId: id,
    contextId: "ctx",
    status: { state, timestamp: new Date().toISOString(), message: { messageId: text, role: "ROLE_AGENT", parts: [{ text }] } }
  }
})

/** An instance: its store and storage, alive until `close`. */
const startInstance = async (url: string, name: string) => {
  const scope = Effect.runSync(Scope.make())
  const storage = postgresStorage(url, { storeKey: STORE_KEY, leaseTime: LEASE }, name)
  const layer = Layer.merge(TaskStore.layerOver(), PushSender.layer()).pipe(Layer.provideMerge(storage))
  const context = await Effect.runPromise(Layer.buildWithScope(layer, scope))
  const run = <A, E>(effect: Effect.Effect<A, E, TaskStore.TaskStore | TaskStorage | PushSender.PushSender>) =>
    Effect.runPromise(Effect.provide(effect, context))
  return {
    store: Context.get(context, TaskStore.TaskStore),
    shared: Context.get(context, TaskStorage).shared!,
    run,
    close: () => Effect.runPromise(Scope.close(scope, Exit.void))
  }
}

describe.runIf(postgresAvailable())("task stores of two instances over one PostgreSQL database", () => {
  const cluster = postgresForSuite()

  it("a subscriber on B gets the snapshot, then every change A writes, once and in order", async () => {
    const url = await cluster.createDatabase()
    const [a, b] = [await startInstance(url, "A"), await startInstance(url, "B")]
    try {
      await a.run(a.store.create(working("t")))
      await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_WORKING", "one")))
      const subscription = Option.getOrThrow(await b.run(b.store.subscribe("t", "terminal")))
      expect(subscription.task.status.message?.messageId).toBe("one")
      const collected = Effect.runPromise(Stream.runCollect(subscription.updates).pipe(Effect.timeout("10 seconds")))
      for (const text of ["two", "three", "four"]) await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_WORKING", text)))
      await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_COMPLETED", "done")))
      const updates = [...await collected].map((update) => update.task.status.message?.messageId)
      expect(updates).toEqual(["two", "three", "four", "done"])
      // A waiter on B is told when A settles a task.
      await a.run(a.store.create(working("w")))
      const settled = Effect.runPromise(b.store.awaitSettled("w").pipe(Effect.timeout("10 seconds")))
      await new Promise((resolve) => setTimeout(resolve, 100))
      await a.run(a.store.publish("w", statusUpdate("w", "TASK_STATE_INPUT_REQUIRED", "which one?")))
      expect(Option.map(await settled, (task) => task.status.state)).toEqual(Option.some("TASK_STATE_INPUT_REQUIRED"))
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("a cancel written by B stops the worker running on A", async () => {
    const url = await cluster.createDatabase()
    const [a, b] = [await startInstance(url, "A"), await startInstance(url, "B")]
    try {
      const stopped = Effect.runSync(Deferred.make<void>())
      const started = Effect.runSync(Deferred.make<void>())
      await a.run(a.store.create(working("t")))
      await a.run(a.store.runWorker(
        "t",
        Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
          Effect.onInterrupt(() => Deferred.succeed(stopped, undefined))
        )
      ))
      await Effect.runPromise(Deferred.await(started))
      await b.run(b.store.publish("t", statusUpdate("t", "TASK_STATE_CANCELED", "canceled")))
      await Effect.runPromise(Deferred.await(stopped).pipe(Effect.timeout("5 seconds")))
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("when an instance dies, its lease runs out and exactly one other instance ends the task failed", async () => {
    const url = await cluster.createDatabase()
    const [a, b, c] = [await startInstance(url, "A"), await startInstance(url, "B"), await startInstance(url, "C")]
    try {
      await a.run(a.store.create(working("t")))
      // Leased as a worker holds it, and never renewed: A is gone.
      await a.run(a.shared.hold(["t"]))
      await a.close()
      expect(await b.run(b.shared.takeExpired)).toEqual([])
      await new Promise((resolve) => setTimeout(resolve, 800))
      // Both look at once; the lease goes to one, which ends the task.
      await Promise.all([b.run(endOrphanedTasks(b.shared)), c.run(endOrphanedTasks(c.shared))])
      const ended = Option.getOrThrow(await b.run(b.store.storage.get("t"))).task
      expect([ended.status.state, ended.status.message?.parts[0]]).toEqual(["TASK_STATE_FAILED", { text: ORPHANED_REASON }])
      const written = await b.run(b.shared.changesAfter("t", 1))
      expect(written.map((change) => change.task.status.state)).toEqual(["TASK_STATE_FAILED"])
    } finally {
      await Promise.all([b.close(), c.close()])
    }
  })
})
