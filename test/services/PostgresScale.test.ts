// The PostgreSQL store at scale, on a throwaway cluster (test/helpers/postgres.ts): retention deletes
// settled tasks past their age or the count (with their events and push configs), in batches, one
// instance at a time, never a working task; and every ListTasks filter is served by an index, as the
// planner chooses it over a few thousand analysed rows.
import * as SqlClient from "@effect/sql/SqlClient"
import { Context, Duration, Effect, Fiber, Layer, Schedule, Stream } from "effect"
import { describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import {
  clientLayer,
  listStatements,
  migrateOnly,
  postgresStorage,
  type RetentionPolicy,
  sweepRetention
} from "../../src/services/PostgresTaskStorage.js"
import { TaskStorage } from "../../src/services/TaskStorage.js"
import { postgresAvailable, sqlRows } from "../helpers/postgres.js"
import { postgresForSuite } from "../helpers/postgresSuite.js"

const STORE_KEY = "test store key, not a secret"

const task = (id: string, state: V1.TaskState, contextId = "c"): V1.Task => ({
  id,
  contextId,
  status: { state, timestamp: new Date().toISOString() }
})

const pushConfig = (taskId: string) => ({
  config: { id: "p", taskId, url: "https://hooks.example/p", token: "t" },
  generation: "1.0" as const
})

/** Runs a body against a storage over the URL, with the given options; the storage stops after. */
const withStorage = <A>(
  url: string,
  options: Parameters<typeof postgresStorage>[1],
  body: (storage: TaskStorage["Type"]) => Effect.Effect<A>
) => Effect.runPromise(Effect.provide(Effect.flatMap(TaskStorage, body), postgresStorage(url, { storeKey: STORE_KEY, ...options })))

/** Creates the tasks in order, each with one later write (an event) and a push config. */
const seed = (url: string, tasks: ReadonlyArray<V1.Task>) =>
  withStorage(url, {}, (storage) =>
    Effect.forEach(tasks, (created) =>
      Effect.gen(function*() {
        yield* Effect.orDie(storage.create(created))
        yield* Effect.orDie(storage.update(created.id, { task: created, event: { task: created } }, 1))
        yield* storage.putPushConfig(created.id, pushConfig(created.id))
      }), { discard: true }))

const sweep = (url: string, policy: RetentionPolicy) => Effect.runPromise(Effect.provide(sweepRetention(policy), clientLayer(url)))

const idsLeft = async (url: string) => (await sqlRows(url, "SELECT id FROM relay_tasks ORDER BY id")).map((row) => row["id"] as string)

const rowsOf = async (url: string, table: string) => Number((await sqlRows(url, `SELECT count(*)::int AS n FROM ${table}`))[0]!["n"])

/** Orders the tasks' last changes as their ids sort, an hour apart, the oldest `hoursAgo` hours back. */
const ageInIdOrder = (url: string, hoursAgo: number) =>
  sqlRows(
    url,
    `UPDATE relay_tasks SET updated_at = now() - (${hoursAgo} - r.n) * interval '1 hour'
     FROM (SELECT id, row_number() OVER (ORDER BY id) AS n FROM relay_tasks) r WHERE r.id = relay_tasks.id`
  )

const name = (prefix: string, n: number) => `${prefix}${String(n).padStart(3, "0")}`
const many = (prefix: string, count: number, state: V1.TaskState) => Array.from({ length: count }, (_, n) => task(name(prefix, n), state))

describe.runIf(postgresAvailable())("PostgreSQL task storage at scale", () => {
  const cluster = postgresForSuite()

  const policy = (overrides: Partial<RetentionPolicy>): RetentionPolicy => ({
    maxTasks: 10_000,
    maxAge: Duration.days(30),
    batch: 500,
    ...overrides
  })

  it("deletes settled tasks older than the age limit with their events and push configs; working ones stay", async () => {
    const url = await cluster.createDatabase()
    await seed(url, [
      ...many("done", 3, "TASK_STATE_COMPLETED"),
      task("waiting", "TASK_STATE_INPUT_REQUIRED"),
      task("working", "TASK_STATE_WORKING"),
      task("young", "TASK_STATE_FAILED")
    ])
    await sqlRows(url, "UPDATE relay_tasks SET updated_at = now() - interval '2 hours' WHERE id <> 'young'")
    expect(await sweep(url, policy({ maxAge: Duration.hours(1), batch: 2 }))).toBe(4)
    expect(await idsLeft(url)).toEqual(["working", "young"])
    expect(await rowsOf(url, "relay_task_events")).toBe(2)
    expect(await rowsOf(url, "relay_push_configs")).toBe(2)
  })

  it("past the count, deletes the least recently changed finished tasks, then waiting ones, down to 90 %, in batches", async () => {
    const url = await cluster.createDatabase()
    await seed(url, [
      ...many("a", 12, "TASK_STATE_COMPLETED"),
      ...many("b", 4, "TASK_STATE_INPUT_REQUIRED"),
      ...many("c", 8, "TASK_STATE_WORKING")
    ])
    // The finished ones oldest, then the waiting ones, then the working ones (ids sort so).
    await ageInIdOrder(url, 24)
    // 24 tasks past 20: down to 18, so 6 go, the 6 oldest finished ones, in batches of 4.
    expect(await sweep(url, policy({ maxTasks: 20, batch: 4 }))).toBe(6)
    expect((await idsLeft(url)).filter((id) => id.startsWith("a"))).toEqual(many("a", 12, "TASK_STATE_COMPLETED").slice(6).map((t) => t.id))
    // 18 past 9: down to 8; the 6 finished and the 4 waiting ones go; the 8 working stay.
    expect(await sweep(url, policy({ maxTasks: 9, batch: 4 }))).toBe(10)
    expect(await idsLeft(url)).toEqual(many("c", 8, "TASK_STATE_WORKING").map((t) => t.id))
    expect(await rowsOf(url, "relay_task_events")).toBe(8)
  })

  it("sweeps on one instance at a time: another holding the lock makes a sweep skip", async () => {
    const url = await cluster.createDatabase()
    await seed(url, many("old", 3, "TASK_STATE_COMPLETED"))
    await sqlRows(url, "UPDATE relay_tasks SET updated_at = now() - interval '2 hours'")
    const skipped = await Effect.runPromise(Effect.provide(
      Effect.scoped(Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const holder = yield* sql.reserve
        yield* holder.execute("SELECT pg_advisory_lock(hashtext('relay_retention'))", [], undefined)
        return yield* sweepRetention(policy({ maxAge: Duration.hours(1) }))
      })),
      clientLayer(url)
    ))
    expect(skipped).toBeUndefined()
    expect(await idsLeft(url)).toHaveLength(3)
    expect(await sweep(url, policy({ maxAge: Duration.hours(1) }))).toBe(3)
  })

  it("a storage sweeps by itself after each tenth of its bound it created", async () => {
    const url = await cluster.createDatabase()
    const left = await withStorage(url, { maxTasks: 10, sweepEvery: Duration.hours(1) }, (storage) =>
      Effect.gen(function*() {
        for (const created of many("t", 30, "TASK_STATE_COMPLETED")) yield* Effect.orDie(storage.create(created))
        // The sweeps run in the background: wait (bounded) until the count is back under the bound.
        return yield* Effect.promise(() => sqlRows(url, "SELECT count(*)::int AS n FROM relay_tasks")).pipe(
          Effect.map((rows) => Number(rows[0]!["n"])),
          Effect.repeat({ until: (n) => n <= 10, schedule: Schedule.spaced("20 millis") }),
          Effect.timeout("10 seconds"),
          Effect.orDie
        )
      }))
    expect(left).toBeLessThanOrEqual(10)
    expect(await idsLeft(url)).toContain("t029")
  })

  it("a terminal write gives the writer's lease back (the release after it costs no statement)", async () => {
    const url = await cluster.createDatabase()
    const leases = await withStorage(url, {}, (storage) =>
      Effect.gen(function*() {
        yield* Effect.orDie(storage.create(task("t", "TASK_STATE_WORKING")))
        yield* storage.shared!.hold(["t"])
        const held = yield* Effect.promise(() => sqlRows(url, "SELECT lease_owner IS NOT NULL AS leased FROM relay_tasks"))
        yield* Effect.orDie(storage.update("t", { task: task("t", "TASK_STATE_COMPLETED") }, 1))
        const ended = yield* Effect.promise(() => sqlRows(url, "SELECT lease_owner IS NOT NULL AS leased FROM relay_tasks"))
        return [held[0]!["leased"], ended[0]!["leased"]]
      }))
    expect(leases).toEqual([true, false])
  })

  it("an instance hears the changes other instances write, not its own (it handed those out as it wrote them)", async () => {
    const url = await cluster.createDatabase()
    await Effect.runPromise(migrateOnly(url))
    const [a, b] = [postgresStorage(url, { storeKey: STORE_KEY }, "A"), postgresStorage(url, { storeKey: STORE_KEY }, "B")]
    const heard = await Effect.runPromise(Effect.scoped(Effect.gen(function*() {
      const onA = yield* Layer.build(a).pipe(Effect.map((context) => Context.get(context, TaskStorage)))
      const onB = yield* Layer.build(b).pipe(Effect.map((context) => Context.get(context, TaskStorage)))
      // Until A hears one of B's changes (LISTEN starts with the stream), A and B each write a task in turn.
      const notices = yield* Effect.fork(
        Stream.runCollect(
          Stream.takeUntil(onA.shared!.changes, (notice) => notice._tag === "TaskChanged" && notice.taskId.startsWith("theirs"))
        )
      )
      const writeOn = (storage: TaskStorage["Type"], id: string) =>
        Effect.zipRight(
          Effect.orDie(storage.create(task(id, "TASK_STATE_WORKING"))),
          Effect.orDie(storage.update(id, { task: task(id, "TASK_STATE_COMPLETED") }, 1))
        )
      const writer = yield* Effect.fork(
        Effect.forEach(
          Array.from({ length: 100 }, (_, n) => n),
          (n) => Effect.zipRight(writeOn(onA, `mine-${n}`), Effect.zipRight(writeOn(onB, `theirs-${n}`), Effect.sleep("20 millis"))),
          { discard: true }
        )
      )
      const heard = yield* Fiber.join(notices).pipe(Effect.timeout("5 seconds"), Effect.orDie)
      yield* Fiber.interrupt(writer)
      return [...heard]
    })))
    // Listening starts with a word that changes before it were not heard.
    expect(heard[0]?._tag).toBe("ChangesResumed")
    const changes = heard.flatMap((notice) => notice._tag === "TaskChanged" ? [notice] : [])
    expect(changes.map((notice) => notice.taskId.replace(/\d+$/, "")).filter((id) => id !== "theirs-")).toEqual([])
    expect(changes.at(-1)?.version).toBe(2)
  })

  it("serves every ListTasks filter and the page after a token from an index, over a few thousand analysed rows", async () => {
    const url = await cluster.createDatabase()
    await Effect.runPromise(migrateOnly(url))
    await sqlRows(
      url,
      `INSERT INTO relay_tasks (id, context_id, state, status_time, version, task)
       SELECT 'task-' || n, 'context-' || (n % 500),
         (ARRAY['TASK_STATE_COMPLETED','TASK_STATE_FAILED','TASK_STATE_WORKING','TASK_STATE_INPUT_REQUIRED','TASK_STATE_CANCELED'])[1 + n % 5],
         to_char(timestamp '2026-01-01' + n * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 1, '{}'
       FROM generate_series(1, 5000) n`
    )
    await sqlRows(url, "ANALYZE relay_tasks")
    const cursor = { timestamp: "2026-01-01T01:00:00.000Z", seq: 3600 }
    const byContext = ["relay_tasks_by_context", "relay_tasks_in_context"]
    const cases: ReadonlyArray<[string, Parameters<typeof listStatements>[0], typeof cursor | undefined, ReadonlyArray<string>]> = [
      ["no filter", { pageSize: 50 }, undefined, ["relay_tasks_by_time"]],
      ["after a page token", { pageSize: 50 }, cursor, ["relay_tasks_by_time"]],
      ["contextId", { pageSize: 50, contextId: "context-7" }, undefined, byContext],
      ["contextId after a page token", { pageSize: 50, contextId: "context-7" }, cursor, byContext],
      ["status", { pageSize: 50, status: "TASK_STATE_WORKING" }, undefined, ["relay_tasks_by_state"]],
      ["status after a page token", { pageSize: 50, status: "TASK_STATE_WORKING" }, cursor, ["relay_tasks_by_state"]],
      ["statusTimestampAfter", { pageSize: 50, statusTimestampAfter: "2026-01-01T01:00:00.000Z" }, undefined, ["relay_tasks_by_time"]]
    ]
    for (const [label, query, after, indexes] of cases) {
      const { count, page } = listStatements(query, after)
      const [pagePlan] = await Effect.runPromise(Effect.provide(
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`EXPLAIN (FORMAT JSON) ${page.text}`, page.params)),
        clientLayer(url)
      ))
      const read = indexesOf(pagePlan)
      expect([label, read.length === 1 && indexes.includes(read[0]!), JSON.stringify(pagePlan).includes("Seq Scan")]).toEqual([
        label,
        true,
        false
      ])
      if (query.contextId !== undefined) {
        const [countPlan] = await Effect.runPromise(Effect.provide(
          Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`EXPLAIN (FORMAT JSON) ${count.text}`, count.params)),
          clientLayer(url)
        ))
        expect([label, JSON.stringify(countPlan).includes("Seq Scan")]).toEqual([label, false])
      }
    }
    // Retention's two reads: old settled tasks, and the least recently changed finished ones.
    const retentionPlan = await sqlRows(
      url,
      `EXPLAIN (FORMAT JSON) SELECT id FROM relay_tasks
       WHERE state IN ('TASK_STATE_COMPLETED', 'TASK_STATE_FAILED', 'TASK_STATE_CANCELED', 'TASK_STATE_REJECTED') AND true
       ORDER BY updated_at LIMIT 500`
    )
    expect(indexesOf(retentionPlan[0])).toEqual(["relay_tasks_settled"])
  })
})

/** The names of the indexes a JSON plan reads. */
const indexesOf = (plan: unknown): ReadonlyArray<string> => {
  const found = new Set<string>()
  const walk = (node: unknown) => {
    if (Array.isArray(node)) node.forEach(walk)
    else if (typeof node === "object" && node !== null) {
      for (const [key, value] of Object.entries(node)) {
        if (key === "Index Name" && typeof value === "string") found.add(value)
        else walk(value)
      }
    }
  }
  walk(plan)
  return [...found]
}
