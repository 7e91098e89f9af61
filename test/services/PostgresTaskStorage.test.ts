// The PostgreSQL storage keeps the TaskStorage contract, on a throwaway cluster (test/helpers/postgres.ts),
// a fresh database per test; and what it adds: push secrets sealed at rest, migrations run once by
// instances starting together, a connection URL's password never shown.
import { Context, Effect, Either, Layer, Option } from "effect"
import { describe, expect, it } from "vitest"
import { MAX_ID_BYTES, MAX_ID_CHARS } from "../../src/domain/limits.js"
import { idProblem } from "../../src/programs/agent/shared.js"
import {
  checkStore,
  clientLayer,
  LATEST_MIGRATION,
  migratedTo,
  migrateOnly,
  postgresStorage
} from "../../src/services/PostgresTaskStorage.js"
import { TaskStorage } from "../../src/services/TaskStorage.js"
import { postgresAvailable, sqlRows } from "../helpers/postgres.js"
import { postgresForSuite } from "../helpers/postgresSuite.js"
import { storageContract } from "./taskStorageContract.js"

const STORE_KEY = "test store key, not a secret"

describe.runIf(postgresAvailable())("PostgreSQL task storage", () => {
  const cluster = postgresForSuite()

  /** Instances over one database, whose claims run out soon after they stop. */
  const instancesOver = (database: Promise<string>) => (name: string) =>
    Layer.unwrapEffect(
      Effect.map(Effect.promise(() => database), (url) => postgresStorage(url, { storeKey: STORE_KEY, leaseTime: "300 millis" }, name))
    )

  storageContract(
    "the PostgreSQL storage",
    () =>
      Layer.unwrapEffect(
        Effect.map(Effect.promise(() => cluster.createDatabase()), (url) => postgresStorage(url, { storeKey: STORE_KEY }))
      ),
    () => {
      const instance = instancesOver(cluster.createDatabase())
      return [instance("a"), instance("b")]
    }
  )

  const task = { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" as const, timestamp: "2026-01-01T00:00:00.000Z" } }
  const config = {
    config: {
      id: "p",
      taskId: "t",
      url: "https://hooks.example/p",
      token: "push-token-in-clear",
      authentication: { scheme: "Bearer", credentials: "webhook-credential-in-clear" }
    },
    generation: "1.0" as const
  }

  it("keeps push tokens and webhook credentials sealed; a store opened with another key leaves them out", async () => {
    const url = await cluster.createDatabase()
    const withKey = (storeKey: string) => <A>(body: (storage: TaskStorage["Type"]) => Effect.Effect<A>) =>
      Effect.runPromise(Effect.provide(Effect.flatMap(TaskStorage, body), postgresStorage(url, { storeKey })))
    await withKey(STORE_KEY)((storage) => Effect.zipRight(storage.create(task).pipe(Effect.orDie), storage.putPushConfig("t", config)))
    const stored = JSON.stringify(await sqlRows(url, "SELECT * FROM relay_push_configs"))
    expect(stored).not.toContain("push-token-in-clear")
    expect(stored).not.toContain("webhook-credential-in-clear")
    expect(await withKey(STORE_KEY)((storage) => storage.pushConfigs("t"))).toEqual(Option.some([config]))
    expect(await withKey("another key of enough length")((storage) => storage.pushConfigs("t"))).toEqual(Option.some([]))
  })

  it("makes each push delivery on one instance: another neither records it again nor takes it while its recorder lives", async () => {
    const instance = instancesOver(cluster.createDatabase())
    const pending = {
      taskId: "t",
      configId: "p",
      version: 2,
      event: { task },
      task,
      attempts: 0,
      due: 0
    }
    const run = <A>(effect: Effect.Effect<A, never, TaskStorage>, layer: Layer.Layer<TaskStorage, unknown>) =>
      Effect.runPromise(Effect.provide(effect, layer))
    await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const a = yield* Effect.map(Layer.build(instance("a")), Context.get(TaskStorage))
      yield* Effect.orDie(a.create(task))
      expect(yield* a.deliveries.record(pending)).toBe(true)
      const fromB = yield* Effect.promise(() =>
        run(
          Effect.flatMap(TaskStorage, (b) =>
            Effect.gen(function*() {
              const recordedAgain = yield* b.deliveries.record(pending)
              // Past twice the lease time: a's claim holds because a renews it.
              yield* Effect.sleep("700 millis")
              return { recordedAgain, claimed: yield* b.deliveries.claim }
            })),
          instance("b")
        )
      )
      expect(fromB).toEqual({ recordedAgain: false, claimed: [] })
      yield* a.deliveries.settle(pending)
      expect(yield* a.deliveries.record(pending)).toBe(false)
    })))
  })

  it("refuses to start without a store key, saying which variable to set", async () => {
    const url = await cluster.createDatabase()
    const saved = process.env["RELAY_STORE_KEY"]
    delete process.env["RELAY_STORE_KEY"]
    try {
      const started = await Effect.runPromise(Effect.either(Layer.launch(postgresStorage(url)).pipe(Effect.timeout("5 seconds"))))
      expect(Either.getLeft(started).pipe(Option.map((error) => [error._tag, error.message.includes("RELAY_STORE_KEY")])))
        .toEqual(Option.some(["TaskStoreUnavailable", true]))
    } finally {
      if (saved !== undefined) process.env["RELAY_STORE_KEY"] = saved
    }
  })

  it("migrates once when instances start together, and --migrate-only migrates alone", async () => {
    const url = await cluster.createDatabase()
    const ran = await Promise.all([1, 2, 3].map(() => Effect.runPromise(migrateOnly(url))))
    expect(ran.flat()).toEqual(["1_tasks_events_push_configs", "2_push_deliveries", "3_retention_index"])
    expect(await Effect.runPromise(Effect.provide(migratedTo, clientLayer(url)))).toBe(LATEST_MIGRATION)
    expect(await sqlRows(url, "SELECT count(*)::int AS n FROM relay_tasks")).toEqual([{ n: 0 }])
  })

  it("answers ids and filters PostgreSQL cannot hold (a NUL) as nothing found, and a token it did not give as invalid", async () => {
    const url = await cluster.createDatabase()
    const nul = "a\u0000b"
    const token = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url")
    const answers = await Effect.runPromise(Effect.provide(
      Effect.flatMap(TaskStorage, (storage) =>
        Effect.gen(function*() {
          yield* Effect.orDie(storage.create(task))
          return [
            yield* storage.get(nul),
            yield* storage.contextTasks(nul),
            (yield* storage.list({ contextId: nul, pageSize: 10 })).totalSize,
            yield* storage.pushConfigs(nul),
            yield* storage.putPushConfig(nul, config),
            yield* storage.removePushConfig(nul, "p"),
            yield* storage.removePushConfig("t", nul),
            ...(yield* Effect.forEach(
              [token(["2026-01-01T00:00:00.000Z", 1e21]), token([nul, 1]), token(["2026-01-01T00:00:00.000Z", -1])],
              (pageToken) => Effect.map(Effect.flip(storage.list({ pageToken, pageSize: 10 })), (error) => error._tag)
            ))
          ]
        })),
      postgresStorage(url, { storeKey: STORE_KEY })
    ))
    expect(answers).toEqual([
      Option.none(),
      [],
      0,
      Option.none(),
      Option.none(),
      Option.none(),
      Option.some(false),
      "InvalidPageToken",
      "InvalidPageToken",
      "InvalidPageToken"
    ])
  })

  it("holds every context and push config id the doors take, however many bytes its characters are", async () => {
    const url = await cluster.createDatabase()
    // No run a compressor could fold: PostgreSQL compresses an index entry before it measures it.
    const spread = (count: number, from: number, span: number) =>
      Array.from({ length: count }, (_, index) => String.fromCodePoint(from + ((index * 7919) % span))).join("")
    const candidates = [
      "x".repeat(MAX_ID_CHARS),
      spread(MAX_ID_CHARS, 0x0400, 0x100),
      spread(MAX_ID_CHARS, 0x4E00, 0x5000),
      spread(MAX_ID_CHARS / 2, 0x1F300, 0x200),
      spread(Math.floor(MAX_ID_BYTES / 3), 0x4E00, 0x5000)
    ]
    const taken = candidates.filter((id) => idProblem("id", id) === undefined)
    // The 1024 CJK characters (3072 bytes) are refused; the others are at or under the limits.
    expect(taken).toHaveLength(candidates.length - 1)
    const held = await Effect.runPromise(Effect.provide(
      Effect.flatMap(TaskStorage, (storage) =>
        Effect.forEach(taken, (id, index) =>
          Effect.gen(function*() {
            const taskId = crypto.randomUUID()
            yield* Effect.orDie(
              storage.create({ ...task, id: taskId, contextId: id, status: { ...task.status, state: "TASK_STATE_COMPLETED" } })
            )
            yield* storage.putPushConfig(taskId, { ...config, config: { ...config.config, id, taskId } })
            const recorded = yield* storage.deliveries.record({
              taskId,
              configId: id,
              version: 2,
              event: { task },
              task,
              attempts: 0,
              due: index
            })
            const configs = yield* storage.pushConfigs(taskId)
            return [
              (yield* storage.contextTasks(id)).length,
              Option.map(configs, (all) => all.map((stored) => stored.config.id === id)),
              recorded
            ]
          }))),
      postgresStorage(url, { storeKey: STORE_KEY })
    ))
    expect(held).toEqual(taken.map(() => [1, Option.some([true]), true]))
  })

  it("never shows the password of the connection URL when it cannot connect", async () => {
    const url = `postgres://relay:pa55-w0rd-s3cret@127.0.0.1:${cluster.port}/no_such_database`
    const failed = await Effect.runPromise(Effect.either(migrateOnly(url)))
    const error = Either.getLeft(failed).pipe(Option.getOrThrow)
    const shown = `${error.message} ${error.hint} ${JSON.stringify(error)}`
    expect(shown).toContain("no_such_database")
    expect(shown).not.toContain("pa55-w0rd-s3cret")
  })

  it("doctor's check: reachable, then migrated and writable, and an unreachable store told without its password", async () => {
    const url = await cluster.createDatabase()
    const saved = process.env["RELAY_STORE_KEY"]
    process.env["RELAY_STORE_KEY"] = STORE_KEY
    try {
      const fresh = await Effect.runPromise(checkStore(url))
      expect([fresh.ok, fresh.detail]).toEqual([false, expect.stringContaining("tables not created yet")])
      await Effect.runPromise(migrateOnly(url))
      expect((await Effect.runPromise(checkStore(url))).detail).toContain("reachable, migrated, writable")
      // A user that may only add tasks is not one that may write relay's tables.
      const role = `relay_inserter_${process.pid}`
      for (
        const statement of [
          `CREATE ROLE ${role} LOGIN`,
          `GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role}`,
          `GRANT INSERT ON relay_tasks TO ${role}`
        ]
      ) await sqlRows(url, statement)
      const inserter = await Effect.runPromise(checkStore(url.replace("postgres://relay@", `postgres://${role}@`)))
      expect([inserter.ok, inserter.detail]).toEqual([false, expect.stringContaining("not writable")])
      const down = await Effect.runPromise(checkStore(`postgres://relay:pa55-w0rd-s3cret@127.0.0.1:${cluster.port}/nowhere`))
      expect([down.ok, down.detail.includes("unreachable"), JSON.stringify(down).includes("pa55-w0rd-s3cret")]).toEqual([
        false,
        true,
        false
      ])
    } finally {
      if (saved === undefined) delete process.env["RELAY_STORE_KEY"]
      else process.env["RELAY_STORE_KEY"] = saved
    }
  })
})
