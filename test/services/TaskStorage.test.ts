// The memory TaskStorage: the storage contract, and its bounds by bytes (by task count, with the
// live layer's followers: test/servers/agentUnits.test.ts).
import { describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import type * as V1 from "../../src/a2a/v1.js"
import * as TaskStorage from "../../src/services/TaskStorage.js"
import { storageContract } from "./taskStorageContract.js"

storageContract("the memory storage", () => TaskStorage.layer())

const AT = "2026-01-01T00:00:00.000Z"

/** A task whose message carries a file of `chars` base64 characters. */
const withFile = (id: string, state: V1.TaskState, chars: number): V1.Task => ({
  id,
  contextId: "ctx",
  status: { state, timestamp: AT },
  history: [{ messageId: `m-${id}`, role: "ROLE_USER", parts: [{ raw: "A".repeat(chars), filename: `${id}.bin` }] }]
})

describe("the memory storage's byte budget", () => {
  it("counts a task about as large as its JSON, files and waiting messages included", () => {
    const task = withFile("t", "TASK_STATE_WORKING", 100_000)
    const json = JSON.stringify(task).length
    expect(TaskStorage.sizeOf(task)).toBeGreaterThanOrEqual(json)
    expect(TaskStorage.sizeOf(task)).toBeLessThan(json + 1_000)
    const waiting = task.history!
    expect(TaskStorage.sizeOf(task, waiting)).toBeGreaterThan(TaskStorage.sizeOf(task) + 100_000)
  })

  it.effect("past it forgets the least recently changed finished tasks, then waiting ones; working and followed tasks stay", () =>
    Effect.gen(function*() {
      const forgotten: Array<string> = []
      const storage = yield* TaskStorage.make(
        { maxBytes: 1_000_000 },
        { isFollowed: (id) => id === "followed", forgotten: (id) => void forgotten.push(id) }
      )
      const present = (...ids: ReadonlyArray<string>) => Effect.forEach(ids, (id) => Effect.map(storage.get(id), Option.isSome))
      yield* storage.create(withFile("running", "TASK_STATE_WORKING", 300_000))
      yield* storage.create(withFile("followed", "TASK_STATE_INPUT_REQUIRED", 200_000))
      yield* storage.create(withFile("asks", "TASK_STATE_INPUT_REQUIRED", 100_000))
      for (let i = 0; i < 3; i++) yield* storage.create(withFile(`done-${i}`, "TASK_STATE_COMPLETED", 100_000))
      expect(forgotten).toEqual([])
      // ~1.05 MB: the oldest finished tasks go until the store holds at most 90 % of its budget.
      yield* storage.create(withFile("done-3", "TASK_STATE_COMPLETED", 150_000))
      expect(forgotten).toEqual(["done-0", "done-1"])
      expect(yield* present("done-2", "done-3", "running", "followed", "asks")).toEqual([true, true, true, true, true])
      // The working task grows past the budget: every finished task goes, then the waiting one nobody follows.
      const running = Option.getOrThrow(yield* storage.get("running"))
      const grown: V1.Task = { ...running.task, artifacts: [{ artifactId: "a", parts: [{ raw: "B".repeat(300_000) }] }] }
      yield* storage.update("running", { task: grown }, running.version)
      expect(forgotten).toEqual(["done-0", "done-1", "done-2", "done-3", "asks"])
      expect(yield* present("running", "followed")).toEqual([true, true])
      // Past the budget with only what may not go: it all stays.
      const again = Option.getOrThrow(yield* storage.get("running"))
      const parts = [...again.task.artifacts![0]!.parts, { raw: "C".repeat(300_000) }]
      yield* storage.update("running", { task: { ...again.task, artifacts: [{ artifactId: "a", parts }] } }, again.version)
      yield* storage.create(withFile("new", "TASK_STATE_SUBMITTED", 10))
      expect(forgotten.length).toBe(5)
      expect(yield* present("running", "followed", "new")).toEqual([true, true, true])
    }))
})

describe("the memory storage's list pages", () => {
  it.effect("hold at most maxPageBytes of JSON, the commas between tasks counted", () =>
    Effect.gen(function*() {
      const tasks = [withFile("a", "TASK_STATE_COMPLETED", 500), withFile("b", "TASK_STATE_COMPLETED", 500)]
      const exact = tasks.reduce((sum, task) => sum + Buffer.byteLength(JSON.stringify(task)), 0)
      const pageOf = (maxPageBytes: number) =>
        Effect.gen(function*() {
          const storage = yield* TaskStorage.make({ maxPageBytes })
          for (const task of tasks) yield* storage.create(task)
          return (yield* storage.list({ pageSize: 10 })).tasks
        })
      // The two tasks' JSON alone fits, but not with the comma between them.
      expect(yield* pageOf(exact)).toHaveLength(1)
      const both = yield* pageOf(exact + 1)
      expect(both).toHaveLength(2)
      expect(Buffer.byteLength(JSON.stringify(both))).toBe(exact + 1 + 2)
    }))
})
