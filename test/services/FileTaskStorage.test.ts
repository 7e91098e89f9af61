// The file TaskStorage: the storage contract, and what it adds to the memory storage: what was
// written is there after the store is closed and opened again (from the journal, from a snapshot,
// after a crash cut its last line), one process at a time, and retention by age and count.
import { describe, expect, it } from "@effect/vitest"
import { Deferred, Effect, Either, Exit, Fiber, Option, Scope } from "effect"
import * as Fs from "node:fs"
import NodeFs from "node:fs"
import { syncBuiltinESMExports } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import * as FileTaskStorage from "../../src/services/FileTaskStorage.js"
import type { PendingDelivery, TaskStorage } from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { storageContract } from "./taskStorageContract.js"

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-file-store-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
let dirs = 0
const freshDir = () => Path.join(root, `store-${++dirs}`)

storageContract("the file storage", () => FileTaskStorage.layer({ dir: freshDir() }), () => {
  const dir = freshDir()
  return [FileTaskStorage.layer({ dir }), FileTaskStorage.layer({ dir })]
})

const task = (id: string, state: V1.TaskState, timestamp = "2026-01-01T00:00:00.000Z", contextId = "ctx"): V1.Task => ({
  id,
  contextId,
  status: { state, timestamp },
  history: [{ messageId: `m-${id}`, role: "ROLE_USER", parts: [{ text: `hello ${id}` }], taskId: id, contextId }]
})

/** Opens the store in `dir`, runs `body` over it and closes it. */
const withStore = <A, E>(
  dir: string,
  body: (storage: TaskStorage["Type"]) => Effect.Effect<A, E>,
  options: Partial<FileTaskStorage.FileTaskStorageOptions> = {}
) => Effect.scoped(Effect.flatMap(FileTaskStorage.make({ dir, maxAge: LONG_AGO, ...options }), body))

/** The tasks here are of 2026-01-01: old enough for the default age retention. */
const LONG_AGO = "36500 days"

const journalText = (dir: string) =>
  Fs.readdirSync(dir).filter((name) => name.startsWith("journal-")).map((name) => Fs.readFileSync(Path.join(dir, name), "utf8")).join("")

describe("the file storage on disk", () => {
  it.live("keeps tasks, versions, waiting messages, push configs and their orders across a restart", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const configs = yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("a", "TASK_STATE_SUBMITTED", "2026-01-01T00:00:01.000Z"))
          yield* storage.create(task("b", "TASK_STATE_COMPLETED", "2026-01-01T00:00:01.000Z"))
          yield* storage.create(task("c", "TASK_STATE_COMPLETED", "2026-01-01T00:00:00.000Z", "other"))
          const queued: ReadonlyArray<V1.Message> = [{ messageId: "q", role: "ROLE_USER", parts: [{ text: "next" }] }]
          yield* storage.update("a", { task: task("a", "TASK_STATE_WORKING", "2026-01-01T00:00:02.000Z"), queued }, 1)
          yield* storage.putPushConfig("a", { config: { id: "p1", taskId: "a", url: "https://hooks.example/1" }, generation: "1.0" })
          yield* storage.putPushConfig("a", { config: { id: "p2", taskId: "a", url: "https://hooks.example/2" }, generation: "0.3" })
          yield* storage.removePushConfig("a", "p1")
          // Acknowledged means on disk: a write that answers a client, and a read.
          expect(journalText(dir)).toContain("https://hooks.example/2")
          yield* storage.create(task("d", "TASK_STATE_SUBMITTED", "2026-01-01T00:00:03.000Z", "later"))
          yield* storage.get("d")
          expect(journalText(dir)).toContain(`{"t":"d",`)
          return yield* storage.pushConfigs("a")
        }))
      const before = yield* withStore(dir, (storage) => storage.list({ pageSize: 10 }))
      for (let restart = 0; restart < 2; restart++) {
        yield* withStore(dir, (storage) =>
          Effect.gen(function*() {
            const a = Option.getOrThrow(yield* storage.get("a"))
            expect([a.version, a.task.status.state, a.queued.map((message) => message.messageId)]).toEqual([2, "TASK_STATE_WORKING", ["q"]])
            expect(yield* storage.pushConfigs("a")).toEqual(configs)
            expect(Option.map(configs, (list) => list.map((stored) => stored.config.id))).toEqual(Option.some(["p2"]))
            if (restart === 0) expect((yield* storage.list({ pageSize: 10 })).tasks).toEqual(before.tasks)
            expect((yield* storage.contextTasks("ctx")).map((listed) => listed.id)).toEqual(["a", "b"])
            // Versions and creation order go on from where they were.
            const again = yield* Effect.either(storage.update("a", { task: task("a", "TASK_STATE_WORKING") }, 1))
            expect(Either.isLeft(again)).toBe(true)
            yield* storage.create(task(`new-${restart}`, "TASK_STATE_COMPLETED", "2026-01-01T00:00:01.000Z", "later"))
          }))
      }
      const listed = yield* withStore(dir, (storage) => storage.list({ pageSize: 10 }))
      expect(listed.tasks.map((listedTask) => listedTask.id)).toEqual(["d", "a", "new-1", "new-0", "b", "c"])
    }))

  it.live("folds its journal into a snapshot past its size, and opens from the snapshot and the newer journal", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          for (let i = 0; i < 40; i++) {
            yield* storage.create(task(`t${i}`, "TASK_STATE_WORKING"))
            yield* storage.update(`t${i}`, { task: task(`t${i}`, "TASK_STATE_COMPLETED") }, 1)
          }
          // Snapshots are written in the background: wait for the one the journal's size started.
          for (let tries = 0; tries < 200 && Fs.readdirSync(dir).filter((name) => name.startsWith("snapshot-")).length !== 1; tries++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
          }
        }), { compactAboveBytes: 2_000 })
      const names = Fs.readdirSync(dir)
      expect(names.filter((name) => name.startsWith("snapshot-")).length).toBe(1)
      const page = yield* withStore(dir, (storage) => storage.list({ pageSize: 100 }))
      expect([page.totalSize, new Set(page.tasks.map((listed) => listed.status.state))]).toEqual([40, new Set(["TASK_STATE_COMPLETED"])])
    }))

  it.live("keeps pending push deliveries in its snapshot: the next process gets the unsettled ones", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const pending = (version: number): PendingDelivery => {
        const update = task("t", "TASK_STATE_COMPLETED")
        return { taskId: "t", configId: "p", version, event: { task: update }, task: update, attempts: 1, due: 5 }
      }
      yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("t", "TASK_STATE_WORKING"))
          yield* storage.deliveries.record(pending(1))
          yield* storage.deliveries.record(pending(2))
          yield* storage.deliveries.settle(pending(1))
          for (let i = 0; i < 40; i++) yield* storage.create(task(`t${i}`, "TASK_STATE_COMPLETED"))
          // The first journal goes once the snapshot its size started is written (in the background).
          for (let tries = 0; tries < 200 && Fs.readdirSync(dir).includes("journal-00000001.jsonl"); tries++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
          }
        }), { compactAboveBytes: 2_000 })
      expect(Fs.readdirSync(dir)).not.toContain("journal-00000001.jsonl")
      expect(yield* withStore(dir, (storage) => storage.deliveries.claim)).toEqual([pending(2)])
    }))

  it.live("drops a last line a crash cut short, and refuses to start over a damaged one before good lines", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* withStore(dir, (storage) => storage.create(task("kept", "TASK_STATE_COMPLETED")))
      const journal = Fs.readdirSync(dir).find((name) => name.startsWith("journal-"))!
      const line = Fs.readFileSync(Path.join(dir, journal), "utf8")
      Fs.appendFileSync(Path.join(dir, journal), line.slice(0, 30).replace("kept", "torn"))
      const ids = yield* withStore(dir, (storage) =>
        Effect.map(storage.list({ pageSize: 10 }), (page) => page.tasks.map((listed) => listed.id)))
      expect(ids).toEqual(["kept"])

      const damaged = freshDir()
      Fs.mkdirSync(damaged)
      Fs.writeFileSync(Path.join(damaged, "journal-00000001.jsonl"), `{"nonsense\n${line}`)
      const refused = yield* Effect.either(withStore(damaged, () =>
        Effect.void))
      expect(Either.getLeft(refused).pipe(Option.map((error) => [error.code, error.message]))).toEqual(
        Option.some(["task_store_unavailable", expect.stringContaining("journal-00000001.jsonl is damaged at line 1")])
      )
    }))

  it.live("refuses to start over a task whose line has a good header and a body that does not parse", () =>
    Effect.gen(function*() {
      for (const state of ["TASK_STATE_WORKING", "TASK_STATE_COMPLETED"] as const) {
        const dir = freshDir()
        yield* withStore(dir, (storage) => Effect.zipRight(storage.create(task("good", state)), storage.create(task("bad", state))))
        for (const name of Fs.readdirSync(dir).filter((file) => file.endsWith(".jsonl"))) {
          const file = Path.join(dir, name)
          Fs.writeFileSync(file, Fs.readFileSync(file, "utf8").replace(`\t{"id":"bad",`, `\t{"id":bad",`))
        }
        const refused = yield* Effect.either(withStore(dir, () => Effect.void))
        expect(Either.getLeft(refused).pipe(Option.map((error) => [error.code, error.message]))).toEqual(
          Option.some(["task_store_unavailable", expect.stringContaining("the line of task bad is damaged")])
        )
      }
      // A push config line whose entries are not push configs is a damaged line too.
      const dir = freshDir()
      yield* withStore(dir, (storage) => storage.create(task("kept", "TASK_STATE_COMPLETED")))
      const journal = Path.join(dir, Fs.readdirSync(dir).find((name) => name.startsWith("journal-"))!)
      Fs.writeFileSync(journal, `{"p":"kept","c":[null]}\n${Fs.readFileSync(journal, "utf8")}`)
      const refused = yield* Effect.either(withStore(dir, () => Effect.void))
      expect(Either.getLeft(refused).pipe(Option.map((error) => error.message))).toEqual(
        Option.some(expect.stringContaining("is damaged at line 1"))
      )
    }))

  it.live("goes on with its journal when the next one cannot be opened, and compacts once it can", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const snapshotOfTwo = () => Fs.readdirSync(dir).includes("snapshot-00000002.jsonl")
      const page = yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          // The next generation's journal cannot be opened (as with no descriptor left, or a failing disk).
          const blocked = Path.join(dir, "journal-00000002.jsonl")
          Fs.mkdirSync(blocked)
          for (let i = 0; i < 40; i++) {
            yield* storage.create(task(`t${i}`, "TASK_STATE_WORKING"))
            yield* storage.update(`t${i}`, { task: task(`t${i}`, "TASK_STATE_COMPLETED") }, 1)
          }
          expect(snapshotOfTwo()).toBe(false)
          Fs.rmdirSync(blocked)
          for (let i = 40; i < 120; i++) yield* storage.create(task(`t${i}`, "TASK_STATE_COMPLETED"))
          // Snapshots are written in the background: wait for the one of the generation it could not start.
          for (let tries = 0; tries < 200 && !snapshotOfTwo(); tries++) {
            yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
          }
          expect(snapshotOfTwo()).toBe(true)
          return yield* storage.list({ pageSize: 200 })
        }), { compactAboveBytes: 2_000 })
      expect(page.totalSize).toBe(120)
      expect((yield* withStore(dir, (storage) => storage.list({ pageSize: 200 }))).totalSize).toBe(120)
    }))

  it.live("writes nothing once closed: a later write fails instead of reaching whatever file took its descriptor", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const scope = yield* Scope.make()
      const storage = yield* Scope.extend(FileTaskStorage.make({ dir }), scope)
      yield* storage.create(task("before", "TASK_STATE_WORKING"))
      yield* Scope.close(scope, Exit.void)
      const other = Path.join(root, `other-${dirs}.txt`)
      const fd = Fs.openSync(other, "w")
      try {
        const late = yield* Effect.exit(storage.deliveries.record({
          taskId: "before",
          configId: "p",
          version: 1,
          event: { task: task("before", "TASK_STATE_WORKING") },
          task: task("before", "TASK_STATE_WORKING"),
          attempts: 0,
          due: 0
        }))
        expect(Exit.isFailure(late)).toBe(true)
      } finally {
        Fs.closeSync(fd)
      }
      expect(Fs.readFileSync(other, "utf8")).toBe("")
    }))

  it.live("is held by one process at a time: a second open fails while the first has it", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const scope = yield* Scope.make()
      yield* Scope.extend(FileTaskStorage.make({ dir }), scope)
      const second = yield* Effect.either(withStore(dir, () => Effect.void))
      expect(Either.getLeft(second).pipe(Option.map((error) => error.message))).toEqual(
        Option.some(expect.stringContaining("another relay server agent is using it"))
      )
      yield* Scope.close(scope, Exit.void)
      yield* withStore(dir, () => Effect.void)
    }), 15_000)

  it.live("forgets finished and waiting tasks older than its age, and the oldest finished ones past its count", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const old = "2020-01-01T00:00:00.000Z"
      const recent = new Date().toISOString()
      yield* withStore(dir, (storage) =>
        Effect.forEach([
          task("old-done", "TASK_STATE_COMPLETED", old),
          task("old-asks", "TASK_STATE_INPUT_REQUIRED", old),
          task("old-working", "TASK_STATE_WORKING", old),
          task("recent-done", "TASK_STATE_COMPLETED", recent)
        ], (created) => storage.create(created)))
      const kept = (options: Partial<FileTaskStorage.FileTaskStorageOptions>) =>
        withStore(
          dir,
          (storage) => Effect.map(storage.list({ pageSize: 10 }), (page) => page.tasks.map((listed) => listed.id).sort()),
          options
        )
      expect(yield* kept({})).toEqual(["old-asks", "old-done", "old-working", "recent-done"])
      expect(yield* kept({ maxAge: FileTaskStorage.DEFAULT_MAX_TASK_AGE })).toEqual(["old-working", "recent-done"])
      yield* withStore(
        dir,
        (storage) => Effect.forEach(["n1", "n2", "n3"], (id) => storage.create(task(id, "TASK_STATE_COMPLETED", recent))),
        { maxTasks: 4 }
      )
      // Past 4 tasks, down to 90 %: the least recently changed finished ones went, the working one stays.
      expect(yield* kept({})).toEqual(["n2", "n3", "old-working"])
    }))

  it.live("opens 10 000 tasks written concurrently, every one of them there", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const count = 10_000
      yield* withStore(dir, (storage) =>
        Effect.forEach(
          Array.from({ length: count }, (_, i) => task(`t${i}`, i % 10 === 0 ? "TASK_STATE_WORKING" : "TASK_STATE_COMPLETED")),
          (created) => storage.create(created),
          { concurrency: 64, discard: true }
        ))
      const opened = yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          const page = yield* storage.list({ pageSize: 1, status: "TASK_STATE_WORKING" })
          const last = yield* storage.get(`t${count - 1}`)
          return [(yield* storage.list({ pageSize: 1 })).totalSize, page.totalSize, Option.map(last, (stored) => stored.task.history)]
        }))
      expect(opened).toEqual([count, count / 10, Option.some(task(`t${count - 1}`, "TASK_STATE_COMPLETED").history)])
    }), 30_000)
})

describe("the file storage's push secrets", () => {
  const secretConfig = (token: string, credentials: string): V1.TaskPushNotificationConfig => ({
    id: "p",
    taskId: "a",
    url: "https://hooks.example/a",
    token,
    authentication: { scheme: "Bearer", credentials }
  })

  /** Every byte of the store's journals and snapshots (not its key file). */
  const storeText = (dir: string) =>
    Fs.readdirSync(dir).filter((name) => /^(journal|snapshot)-/.test(name)).map((name) => Fs.readFileSync(Path.join(dir, name), "utf8"))
      .join("")

  /** Runs `effect` with RELAY_STORE_KEY set to `key` (unset when undefined), and puts it back after. */
  const withStoreKey = <A, E>(key: string | undefined, effect: Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const before = process.env["RELAY_STORE_KEY"]
        if (key === undefined) delete process.env["RELAY_STORE_KEY"]
        else process.env["RELAY_STORE_KEY"] = key
        return before
      }),
      () => effect,
      (before) =>
        Effect.sync(() => {
          if (before === undefined) delete process.env["RELAY_STORE_KEY"]
          else process.env["RELAY_STORE_KEY"] = before
        })
    )

  it.live("seals tokens and credentials in its journal and snapshot, with a 0600 key file it makes, and opens them again", () =>
    withStoreKey(
      undefined,
      Effect.gen(function*() {
        const dir = freshDir()
        const stored = { config: secretConfig("tok-SECRET-1", "cred-SECRET-2"), generation: "1.0" as const }
        yield* withStore(dir, (storage) =>
          Effect.gen(function*() {
            yield* storage.create(task("a", "TASK_STATE_WORKING"))
            yield* storage.putPushConfig("a", stored)
            expect(journalText(dir)).toContain("https://hooks.example/a")
          }))
        // The second open folds the journal into a snapshot.
        expect(yield* withStore(dir, (storage) => storage.pushConfigs("a"))).toEqual(Option.some([stored]))
        expect(Fs.readdirSync(dir).some((name) => name.startsWith("snapshot-"))).toBe(true)
        expect(storeText(dir)).toContain("https://hooks.example/a")
        expect(storeText(dir)).not.toMatch(/SECRET/)
        expect(Fs.statSync(Path.join(dir, "store.key")).mode & 0o777).toBe(0o600)
      })
    ))

  it.live("refuses to start with a RELAY_STORE_KEY its secrets were not sealed with, and says which key to set", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* withStoreKey(
        "the-first-key-of-this-store",
        withStore(dir, (storage) =>
          Effect.zipRight(
            storage.create(task("a", "TASK_STATE_WORKING")),
            storage.putPushConfig("a", { config: secretConfig("tok-1", "cred-1"), generation: "1.0" })
          ))
      )
      const refused = yield* withStoreKey("another-key-altogether", Effect.either(withStore(dir, () => Effect.void)))
      expect(Either.getLeft(refused).pipe(Option.map((error) => [error.code, error.message, error.hint]))).toEqual(Option.some([
        "task_store_unavailable",
        expect.stringContaining("push config p of task a does not open with RELAY_STORE_KEY"),
        expect.stringContaining("Set RELAY_STORE_KEY to the key the store was written with")
      ]))
      const reopened = yield* withStoreKey("the-first-key-of-this-store", withStore(dir, (storage) => storage.pushConfigs("a")))
      expect(Option.map(reopened, (configs) => configs.map((stored) => stored.config.token))).toEqual(Option.some(["tok-1"]))
    }))

  it.live("opens a store a previous build wrote in clear, and seals its secrets from then on", () =>
    withStoreKey(
      undefined,
      Effect.gen(function*() {
        const dir = freshDir()
        yield* withStore(dir, (storage) => storage.create(task("a", "TASK_STATE_WORKING")))
        const journal = Fs.readdirSync(dir).filter((name) => name.startsWith("journal-")).sort().at(-1)!
        const clear = { config: secretConfig("old-token-SECRET", "old-cred-SECRET"), generation: "1.0" as const }
        Fs.appendFileSync(Path.join(dir, journal), `${JSON.stringify({ p: "a", c: [clear] })}\n`)
        expect(yield* withStore(dir, (storage) => storage.pushConfigs("a"))).toEqual(Option.some([clear]))
        expect(storeText(dir)).not.toMatch(/SECRET/)
        expect(yield* withStore(dir, (storage) => storage.pushConfigs("a"))).toEqual(Option.some([clear]))
      })
    ))
})
describe("the file storage's batches", () => {
  /** How many lines of the journal are states of the task. */
  const taskLines = (dir: string, id: string) => journalText(dir).split("\n").filter((line) => line.startsWith(`{"t":"${id}",`)).length
  /** Past the turn of the event loop at which a batch nobody holds back is written. */
  const nextTurn = Effect.promise(() => new Promise((resolve) => setImmediate(resolve)))
  const HOLD = { unwaitedLineMs: 60_000 }

  it.live("holds a task's state nobody waits for until its next change, a reader or its time: a quick turn is one line", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("quick", "TASK_STATE_SUBMITTED"))
          // A turn reads its conversation (its model's prompt) without waiting for the disk: nobody is answered with it.
          expect((yield* storage.contextTasks("ctx")).map((listed) => listed.id)).toEqual(["quick"])
          yield* nextTurn
          yield* storage.update("quick", { task: task("quick", "TASK_STATE_WORKING") }, 1)
          yield* nextTurn
          yield* storage.update("quick", { task: task("quick", "TASK_STATE_COMPLETED") }, 2)
          // The answered write is on disk when it returns, in one line.
          expect(taskLines(dir, "quick")).toBe(1)
          // Another task's state held back does not hold an answered write back.
          yield* storage.create(task("held", "TASK_STATE_WORKING"))
          yield* storage.create(task("answered", "TASK_STATE_WORKING"))
          yield* Effect.timeoutFail(storage.update("answered", { task: task("answered", "TASK_STATE_COMPLETED") }, 1), {
            duration: "5 seconds",
            onTimeout: () => new Error("the answered write waited for another task's line")
          })
          expect([taskLines(dir, "answered"), taskLines(dir, "held")]).toEqual([1, 0])
          yield* storage.create(task("read", "TASK_STATE_WORKING"))
          yield* nextTurn
          expect(taskLines(dir, "read")).toBe(0)
          yield* storage.get("read")
          expect(taskLines(dir, "read")).toBe(1)
        }), HOLD)
      // Nobody waits for it: it is written all the same once it waited its time.
      yield* withStore(dir, (storage) =>
        Effect.gen(function*() {
          yield* storage.create(task("alone", "TASK_STATE_WORKING"))
          for (let tries = 0; tries < 200 && taskLines(dir, "alone") === 0; tries++) yield* Effect.sleep("5 millis")
          expect(taskLines(dir, "alone")).toBe(1)
        }), { unwaitedLineMs: 10 })
    }))

  /** Runs `body` with the callback of the journal's first fdatasync held until `release` (the sync itself runs). */
  const withFirstSyncHeld = <A, E>(body: (release: () => void, held: () => boolean) => Effect.Effect<A, E>) =>
    Effect.acquireUseRelease(
      Effect.sync(() => {
        const original = NodeFs.fdatasync
        const state = { held: undefined as (() => void) | undefined, released: false }
        NodeFs.fdatasync = ((fd: number, callback: (error: NodeJS.ErrnoException | null) => void) =>
          original(fd, (error) => {
            if (state.held === undefined && !state.released) state.held = () => callback(error)
            else callback(error)
          })) as typeof NodeFs.fdatasync
        syncBuiltinESMExports()
        const release = () => {
          state.released = true
          state.held?.()
        }
        return { original, state, release }
      }),
      ({ release, state }) => body(release, () => state.held !== undefined),
      ({ original, release }) =>
        Effect.sync(() => {
          NodeFs.fdatasync = original
          syncBuiltinESMExports()
          release()
        })
    )

  it.live("writes and syncs the next batch while the previous one's sync still runs, which then counts as synced too", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const states = yield* withStore(dir, (storage) =>
        withFirstSyncHeld((release, held) =>
          Effect.gen(function*() {
            yield* storage.create(task("first", "TASK_STATE_WORKING"))
            yield* storage.create(task("second", "TASK_STATE_WORKING"))
            const first = yield* Effect.fork(storage.update("first", { task: task("first", "TASK_STATE_COMPLETED") }, 1))
            for (let tries = 0; tries < 500 && !held(); tries++) yield* Effect.sleep("2 millis")
            expect(held()).toBe(true)
            // Its batch is written and synced although the first batch's sync has not returned; that later sync
            // makes the first batch's earlier write durable as well, so both writes return.
            const bothAnswered = Effect.zip(
              storage.update("second", { task: task("second", "TASK_STATE_COMPLETED") }, 1),
              Fiber.join(first)
            )
            const answered = yield* Effect.timeoutFail(bothAnswered, {
              duration: "5 seconds",
              onTimeout: () => new Error("the second batch waited for the first batch's sync")
            })
            release()
            return [taskLines(dir, "first"), taskLines(dir, "second"), ...answered.map(Option.isSome)]
          })
        ), HOLD)
      expect(states).toEqual([1, 1, true, true])
    }))

  it.live("a turn that settles at once costs one line: the store peeks at the task a send waits for, and answers it durable", () =>
    Effect.gen(function*() {
      const dir = freshDir()
      const settled = yield* Effect.scoped(Effect.gen(function*() {
        const store = yield* TaskStore.makeWithRetention((retention) => FileTaskStorage.make({ dir, maxAge: LONG_AGO, ...HOLD }, retention))
        const update = (state: V1.TaskState): V1.StreamResponse => ({
          statusUpdate: { taskId: "turn", contextId: "ctx", status: { state } }
        })
        const go = yield* Deferred.make<void>()
        yield* store.create(task("turn", "TASK_STATE_SUBMITTED"))
        yield* store.runWorker(
          "turn",
          Effect.gen(function*() {
            yield* Deferred.await(go)
            yield* store.publish("turn", update("TASK_STATE_WORKING"))
            yield* nextTurn
            yield* store.publish("turn", update("TASK_STATE_COMPLETED"))
          })
        )
        const answer = yield* Effect.fork(store.awaitSettled("turn"))
        // A batch would be written by now if the send waited for the task as submitted to be durable.
        yield* Effect.sleep("50 millis")
        yield* Deferred.succeed(go, undefined)
        return [Option.map(yield* Fiber.join(answer), (answered) => answered.status.state), taskLines(dir, "turn")]
      }))
      expect(settled).toEqual([Option.some("TASK_STATE_COMPLETED"), 1])
    }))
})
