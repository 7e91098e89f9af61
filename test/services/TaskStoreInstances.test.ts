// Two live layers (TaskStore) over one PostgreSQL database, as two `relay server agent` instances
// share it: a subscriber on B gets A's changes once and in order, snapshot first; a cancel written
// by B stops A's worker; a dead instance's lease runs out and exactly one other instance takes the task.
import { Context, Deferred, Duration, Effect, Exit, Layer, Option, Schedule, Scope, Stream } from "effect"
import * as Net from "node:net"
import { describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import { endOrphanedTasks, ORPHANED_REASON } from "../../src/programs/agent/orphans.js"
import { postgresStorage } from "../../src/services/PostgresTaskStorage.js"
import * as PushSender from "../../src/services/PushSender.js"
import { TaskStorage } from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { postgresAvailable, sqlRows } from "../helpers/postgres.js"
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

type Instance = Awaited<ReturnType<typeof startInstance>>

/** An instance: its store and storage, alive until `close`. */
const startInstance = async (url: string, name: string, leaseTime: Duration.DurationInput = LEASE) => {
  const scope = Effect.runSync(Scope.make())
  const storage = postgresStorage(url, { storeKey: STORE_KEY, leaseTime }, name)
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

/** A working task on the instance, its worker running until stopped; resolves once it runs, with a wait for its stop. */
const workForever = async (instance: Instance, id: string) => {
  const stopped = Effect.runSync(Deferred.make<void>())
  const started = Effect.runSync(Deferred.make<void>())
  await instance.run(instance.store.create(working(id)))
  await instance.run(instance.store.runWorker(
    id,
    Effect.zipRight(Deferred.succeed(started, undefined), Effect.never).pipe(
      Effect.onInterrupt(() => Deferred.succeed(stopped, undefined))
    )
  ))
  await Effect.runPromise(Deferred.await(started))
  return (within: Duration.DurationInput) => Effect.runPromise(Deferred.await(stopped).pipe(Effect.timeout(within)))
}

/**
 * A TCP relay to the database whose notification connections can be made to go silent, as a peer
 * that vanished without a word (a dropped NAT entry, a pulled cable) leaves them: open, and nothing
 * comes. A connection is known by its start-up message, which names the application.
 */
const silencingProxy = async (url: string) => {
  const target = new URL(url)
  const links: Array<{ readonly ends: ReadonlyArray<Net.Socket>; listens: boolean; silent: boolean }> = []
  const server = Net.createServer((client) => {
    const upstream = Net.connect(Number(target.port), target.hostname)
    const link = { ends: [client, upstream], listens: false, silent: false }
    links.push(link)
    client.on("data", (chunk: Buffer) => {
      link.listens ||= chunk.includes("relay notifications")
      if (!link.silent) upstream.write(chunk)
    })
    upstream.on("data", (chunk: Buffer) => {
      if (!link.silent) client.write(chunk)
    })
    for (const socket of link.ends) {
      socket.on("error", () => undefined)
      socket.on("close", () => link.ends.forEach((end) => end.destroy()))
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const proxied = new URL(url)
  proxied.port = String((server.address() as Net.AddressInfo).port)
  return {
    url: proxied.href,
    /** The notification connections open now hear nothing more, and nothing they send arrives; how many. */
    silenceListeners: () => {
      const listening = links.filter((link) => link.listens && !link.silent)
      for (const link of listening) link.silent = true
      return listening.length
    },
    close: () => {
      for (const link of links) link.ends.forEach((end) => end.destroy())
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

/** Ends every connection instances listen for notifications on (as a server restart or a cut connection would); how many. */
const cutNotifications = async (url: string) =>
  (await sqlRows(
    url,
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name LIKE 'relay notifications%' AND datname = current_database()"
  )).length

// Long enough that the periodic catch-up (a third of it) cannot be what delivers within the tests' waits.
const LONG_LEASE = "60 seconds"

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
      const stopped = await workForever(a, "t")
      await b.run(b.store.publish("t", statusUpdate("t", "TASK_STATE_CANCELED", "canceled")))
      await stopped("5 seconds")
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

  it("when the notification connections drop, a subscriber on B still gets A's changes at once: B listens again and reads what it missed", async () => {
    const url = await cluster.createDatabase()
    const [a, b] = [await startInstance(url, "A", LONG_LEASE), await startInstance(url, "B", LONG_LEASE)]
    try {
      await a.run(a.store.create(working("t")))
      const subscription = Option.getOrThrow(await b.run(b.store.subscribe("t", "terminal")))
      const heard: Array<string | undefined> = []
      const following = Effect.runPromise(
        Stream.runForEach(subscription.updates, (update) => Effect.sync(() => heard.push(update.task.status.message?.messageId)))
          .pipe(Effect.timeout("10 seconds"))
      )
      const hears = (text: string) =>
        Effect.runPromise(
          Effect.repeat(Effect.sync(() => heard.includes(text)), { until: (found) => found, schedule: Schedule.spaced("20 millis") })
            .pipe(Effect.timeout("4 seconds"))
        )
      await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_WORKING", "before")))
      await hears("before")
      expect(await cutNotifications(url)).toBe(2)
      // Written while B is not listening, and nothing after it: no later notification brings it along.
      await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_WORKING", "while cut")))
      await hears("while cut")
      // And what comes once B listens again.
      await a.run(a.store.publish("t", statusUpdate("t", "TASK_STATE_COMPLETED", "done")))
      await following
      expect(heard).toEqual(["before", "while cut", "done"])
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("a cancel B writes while A's notification connection is down still stops A's worker once A listens again", async () => {
    const url = await cluster.createDatabase()
    const [a, b] = [await startInstance(url, "A", LONG_LEASE), await startInstance(url, "B", LONG_LEASE)]
    try {
      const stopped = await workForever(a, "t")
      expect(await cutNotifications(url)).toBe(2)
      await b.run(b.store.publish("t", statusUpdate("t", "TASK_STATE_CANCELED", "canceled")))
      await stopped("8 seconds")
    } finally {
      await Promise.all([a.close(), b.close()])
    }
  })

  it("when A's notification connection goes silent, A finds out by its probe, listens again, and a cancel B wrote stops A's worker", async () => {
    const url = await cluster.createDatabase()
    const proxy = await silencingProxy(url)
    // A probes three times per lease time; a notification the periodic catch-up brings stops no worker.
    const [a, b] = [await startInstance(proxy.url, "A", "1500 millis"), await startInstance(url, "B", LONG_LEASE)]
    try {
      const stopped = await workForever(a, "t")
      expect(proxy.silenceListeners()).toBe(1)
      await b.run(b.store.publish("t", statusUpdate("t", "TASK_STATE_CANCELED", "canceled")))
      await stopped("8 seconds")
    } finally {
      await Promise.all([a.close(), b.close()])
      await proxy.close()
    }
  })
})
