// What every TaskStorage keeps to, as a suite any implementation runs: the memory storage
// (TaskStorage.test.ts) and a database's one. Each test gets a fresh, empty storage from `makeLayer`.
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either, type Layer, Option, Schedule } from "effect"
import type * as V1 from "../../src/a2a/v1.js"
import { type PendingDelivery, type StoredPushConfig, TaskStorage } from "../../src/services/TaskStorage.js"

const at = (second: number) => `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z`

const task = (id: string, state: V1.TaskState, second: number, contextId = "ctx"): V1.Task => ({
  id,
  contextId,
  status: { state, timestamp: at(second) },
  history: [{ messageId: `m-${id}`, role: "ROLE_USER", parts: [{ text: id }], taskId: id, contextId }]
})

/** Text, files and data a storage must give back as they came, odd characters included. */
const awkward = (id: string): V1.Task => ({
  id,
  contextId: "ctx \u2028 ünïcødé",
  status: {
    state: "TASK_STATE_COMPLETED",
    timestamp: at(1),
    message: { messageId: "s", role: "ROLE_AGENT", parts: [{ text: "done \u0000 \uD800 \u202E" }] }
  },
  history: [{
    messageId: "u",
    role: "ROLE_USER",
    parts: [
      { text: "\"quoted\" \\ </script>", mediaType: "text/plain" },
      { raw: "AAECAwQ=", filename: "f.bin", mediaType: "application/octet-stream" },
      { url: "https://files.example/a?b=c", filename: "a.pdf" },
      { data: JSON.parse(`{"n":1.5,"big":1e308,"tiny":5e-324,"list":[null,true,"x"],"__proto__":{"a":1}}`) }
    ],
    metadata: { toJSON: "kept", "": 0 }
  }],
  artifacts: [{ artifactId: "a", name: "answer", parts: [{ text: "x" }], metadata: { k: [1, 2] } }],
  metadata: { trace: "1" }
})

const message = (id: string): V1.Message => ({ messageId: id, role: "ROLE_USER", parts: [{ text: id }] })

const pushConfig = (taskId: string, id: string): StoredPushConfig => ({
  config: { id, taskId, url: `https://hooks.example/${id}`, token: `token-${id}` },
  generation: "1.0"
})

const delivery = (taskId: string, configId: string, version: number): PendingDelivery => {
  const update = task(taskId, "TASK_STATE_COMPLETED", version)
  return { taskId, configId, version, event: { task: update }, task: update, attempts: 0, due: 1_000 + version }
}

/** Claims until some delivery comes (a shared storage hands it over once its recorder's claim ran out), at most 10 s. */
const claimSome = (storage: TaskStorage["Type"]) =>
  storage.deliveries.claim.pipe(
    Effect.filterOrFail((claimed) => claimed.length > 0, () => new Error("no pending delivery was handed over")),
    Effect.retry({ schedule: Schedule.spaced(Duration.millis(50)), times: 200 })
  )

/**
 * `makeLayer` gives a fresh, empty storage each time; `successive`, when the storage outlives its
 * process, two layers over one fresh place: the second opened after the first closed, as a restarted
 * process (or another instance) would.
 */
export const storageContract = <E>(
  name: string,
  makeLayer: () => Layer.Layer<TaskStorage, E>,
  successive?: () => readonly [Layer.Layer<TaskStorage, E>, Layer.Layer<TaskStorage, E>]
) => {
  const withStorage = <A, Err>(body: (storage: TaskStorage["Type"]) => Effect.Effect<A, Err>) =>
    Effect.provide(Effect.flatMap(TaskStorage, body), makeLayer())

  const ids = (tasks: ReadonlyArray<V1.Task>) => tasks.map((listed) => listed.id)

  describe(`${name} keeps the TaskStorage contract`, () => {
    it.effect("creates a task at version 1 and gives it back as it came, with nothing queued", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          const created = yield* storage.create(awkward("t"))
          expect([created.version, created.queued]).toEqual([1, []])
          const stored = Option.getOrThrow(yield* storage.get("t"))
          expect(JSON.stringify(stored.task)).toBe(JSON.stringify(awkward("t")))
          expect([stored.version, stored.queued]).toEqual([1, []])
          expect(Option.isNone(yield* storage.get("missing"))).toBe(true)
        })
      ))

    it.effect("refuses to create a task whose id is taken, with a conflict naming the version found", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_SUBMITTED", 0))
          const again = yield* Effect.either(storage.create(task("t", "TASK_STATE_WORKING", 1)))
          expect(Either.getLeft(again).pipe(Option.map((conflict) => [conflict._tag, conflict.expected, conflict.found])))
            .toEqual(Option.some(["TaskVersionConflict", 0, 1]))
          expect(Option.getOrThrow(yield* storage.get("t")).task.status.state).toBe("TASK_STATE_SUBMITTED")
        })
      ))

    it.effect("updates a task over the version read, and refuses a write over an older one", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_SUBMITTED", 0))
          const working = Option.getOrThrow(yield* storage.update("t", { task: task("t", "TASK_STATE_WORKING", 1) }, 1))
          expect([working.version, working.task.status.state]).toEqual([2, "TASK_STATE_WORKING"])
          const stale = yield* Effect.either(storage.update("t", { task: task("t", "TASK_STATE_FAILED", 2) }, 1))
          expect(Either.getLeft(stale).pipe(Option.map((conflict) => [conflict._tag, conflict.taskId, conflict.expected, conflict.found])))
            .toEqual(Option.some(["TaskVersionConflict", "t", 1, 2]))
          const stored = Option.getOrThrow(yield* storage.get("t"))
          expect([stored.version, stored.task.status.state]).toEqual([2, "TASK_STATE_WORKING"])
          expect(Option.isNone(yield* storage.update("missing", { task: task("missing", "TASK_STATE_WORKING", 1) }, 1))).toBe(true)
        })
      ))

    it.effect("keeps the messages waiting for a task as written, unchanged by a write without them", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_WORKING", 0))
          yield* storage.update("t", { task: task("t", "TASK_STATE_WORKING", 0), queued: [message("a"), message("b")] }, 1)
          yield* storage.update("t", { task: task("t", "TASK_STATE_WORKING", 1) }, 2)
          const waiting = Option.getOrThrow(yield* storage.get("t"))
          expect([waiting.version, waiting.queued.map((queued) => queued.messageId)]).toEqual([3, ["a", "b"]])
          const emptied = Option.getOrThrow(yield* storage.update("t", { task: task("t", "TASK_STATE_COMPLETED", 2), queued: [] }, 3))
          expect(emptied.queued).toEqual([])
          expect(Option.getOrThrow(yield* storage.get("t")).queued).toEqual([])
        })
      ))

    it.effect("lists newest status first (newest task first on a tie), filtered by context, state and time", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("a", "TASK_STATE_COMPLETED", 1))
          yield* storage.create(task("b", "TASK_STATE_WORKING", 3))
          yield* storage.create(task("c", "TASK_STATE_COMPLETED", 2, "other"))
          yield* storage.create(task("d", "TASK_STATE_COMPLETED", 3))
          const all = yield* storage.list({ pageSize: 10 })
          expect([ids(all.tasks), all.totalSize, all.nextPageToken]).toEqual([["d", "b", "c", "a"], 4, undefined])
          const inContext = yield* storage.list({ pageSize: 10, contextId: "ctx" })
          expect([ids(inContext.tasks), inContext.totalSize]).toEqual([["d", "b", "a"], 3])
          const completed = yield* storage.list({ pageSize: 10, status: "TASK_STATE_COMPLETED" })
          expect(ids(completed.tasks)).toEqual(["d", "c", "a"])
          // At or after the time, as the proto's status_timestamp_after says.
          expect(ids((yield* storage.list({ pageSize: 10, statusTimestampAfter: at(2) })).tasks)).toEqual(["d", "b", "c"])
          expect(ids((yield* storage.list({ pageSize: 10, statusTimestampAfter: "2026-01-01T00:00:02.001Z" })).tasks)).toEqual(["d", "b"])
          // An update moves a task in the order and in and out of the filters.
          yield* storage.update("a", { task: task("a", "TASK_STATE_WORKING", 4) }, 1)
          expect(ids((yield* storage.list({ pageSize: 10 })).tasks)).toEqual(["a", "d", "b", "c"])
          expect(ids((yield* storage.list({ pageSize: 10, status: "TASK_STATE_WORKING" })).tasks)).toEqual(["a", "b"])
        })
      ))

    it.effect("pages by its own tokens, each task once, and refuses a token it did not give", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          for (let i = 0; i < 7; i++) yield* storage.create(task(`t${i}`, "TASK_STATE_COMPLETED", i % 3))
          const seen: Array<string> = []
          let pageToken: string | undefined
          for (let pages = 0; pages < 10; pages++) {
            const page = yield* storage.list({ pageSize: 3, ...(pageToken === undefined ? {} : { pageToken }) })
            expect(page.totalSize).toBe(7)
            expect(page.tasks.length).toBeLessThanOrEqual(3)
            seen.push(...ids(page.tasks))
            pageToken = page.nextPageToken
            if (pageToken === undefined) break
          }
          expect(seen).toEqual(ids((yield* storage.list({ pageSize: 10 })).tasks))
          expect(new Set(seen).size).toBe(7)
          for (const token of ["not a token", "", "W10"]) {
            const refused = yield* Effect.either(storage.list({ pageSize: 3, pageToken: token }))
            expect(Either.getLeft(refused).pipe(Option.map((error) => error._tag))).toEqual(Option.some("InvalidPageToken"))
          }
        })
      ))

    it.effect("gives a conversation's tasks oldest first", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          for (const [id, second] of [["t1", 3], ["t2", 1], ["t3", 2]] as const) {
            yield* storage.create(task(id, "TASK_STATE_COMPLETED", second, "talk"))
          }
          yield* storage.create(task("elsewhere", "TASK_STATE_COMPLETED", 0, "other"))
          yield* storage.update("t1", { task: task("t1", "TASK_STATE_FAILED", 5, "talk") }, 1)
          expect(ids(yield* storage.contextTasks("talk"))).toEqual(["t1", "t2", "t3"])
          expect(yield* storage.contextTasks("nobody")).toEqual([])
        })
      ))

    it.effect("keeps a task's push configs in the order created, one per id, until removed", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_WORKING", 0))
          for (const id of ["p1", "p2", "p3"]) {
            expect(yield* storage.putPushConfig("t", pushConfig("t", id))).toEqual(Option.some(pushConfig("t", id)))
          }
          const replaced: StoredPushConfig = { ...pushConfig("t", "p2"), generation: "0.3" }
          yield* storage.putPushConfig("t", replaced)
          expect(yield* storage.pushConfigs("t")).toEqual(Option.some([pushConfig("t", "p1"), replaced, pushConfig("t", "p3")]))
          expect(yield* storage.removePushConfig("t", "p1")).toEqual(Option.some(true))
          expect(yield* storage.removePushConfig("t", "p1")).toEqual(Option.some(false))
          expect(yield* storage.pushConfigs("t")).toEqual(Option.some([replaced, pushConfig("t", "p3")]))
          // A task's changes leave its configs alone.
          yield* storage.update("t", { task: task("t", "TASK_STATE_COMPLETED", 1) }, 1)
          expect(Option.map(yield* storage.pushConfigs("t"), (configs) => configs.length)).toEqual(Option.some(2))
          expect(yield* storage.putPushConfig("missing", pushConfig("missing", "p"))).toEqual(Option.none())
          expect(yield* storage.pushConfigs("missing")).toEqual(Option.none())
          expect(yield* storage.removePushConfig("missing", "p")).toEqual(Option.none())
        })
      ))

    it.effect("records a pending push delivery once, and hands none of its own over while it lives", () =>
      withStorage((storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_WORKING", 0))
          const first = delivery("t", "p", 2)
          expect(yield* storage.deliveries.record(first)).toBe(true)
          expect(yield* storage.deliveries.record({ ...first, attempts: 3 })).toBe(false)
          yield* storage.deliveries.reschedule({ ...first, attempts: 1, due: 5_000 })
          expect(yield* storage.deliveries.claim).toEqual([])
          yield* storage.deliveries.settle(first)
          expect(yield* storage.deliveries.claim).toEqual([])
        })
      ))

    if (successive !== undefined) {
      it.live("hands the deliveries a stopped process left over to the next one, once, in order, as they stood", () =>
        Effect.gen(function*() {
          const [before, after] = successive()
          yield* Effect.provide(
            Effect.flatMap(TaskStorage, (storage) =>
              Effect.gen(function*() {
                yield* storage.create(task("t", "TASK_STATE_WORKING", 0))
                for (const [config, version] of [["p2", 3], ["p1", 4], ["p1", 2], ["gone", 2]] as const) {
                  yield* storage.deliveries.record(delivery("t", config, version))
                }
                yield* storage.deliveries.reschedule({ ...delivery("t", "p1", 2), attempts: 2, due: 9_000 })
                yield* storage.deliveries.settle(delivery("t", "gone", 2))
              })),
            before
          )
          const [claimed, again] = yield* Effect.provide(
            Effect.flatMap(TaskStorage, (storage) => Effect.all([claimSome(storage), storage.deliveries.claim])),
            after
          )
          expect(claimed).toEqual([
            { ...delivery("t", "p1", 2), attempts: 2, due: 9_000 },
            delivery("t", "p1", 4),
            delivery("t", "p2", 3)
          ])
          expect(again).toEqual([])
        }))
    }
  })
}
