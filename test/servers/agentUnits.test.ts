// The agent server's parts on their own: TaskStore (fan-out in order, settling, conflicts, bounds;
// the storage's own contract is test/services/TaskStorage.test.ts), the webhook URL guard, the v1.0 result codec, REST routing and JSON-RPC method selection.
import { describe, expect, it } from "@effect/vitest"
import { Chunk, Effect, Either, Fiber, Layer, Option, Schema, Stream } from "effect"
import * as T from "../../src/a2a/translate.js"
import * as V1 from "../../src/a2a/v1.js"
import { REDACTED, redactPushConfig } from "../../src/programs/agent/pushConfigs.js"
import { presentTask } from "../../src/programs/agent/shared.js"
import { listTasks } from "../../src/programs/agent/useCases.js"
import { resolveMethod } from "../../src/servers/agent/jsonRpc.js"
import { v03JsonRpcCodec, v1Codec } from "../../src/servers/agent/operations.js"
import { matchRoute } from "../../src/servers/agent/rest.js"
import { webhookUrlProblem } from "../../src/services/PushSender.js"
import * as TaskStorage from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"

const task = (id: string, state: V1.TaskState, timestamp: string, contextId = "ctx"): V1.Task => ({
  id,
  contextId,
  status: { state, timestamp },
  history: [{ messageId: `m-${id}`, role: "ROLE_USER", parts: [{ text: id }], taskId: id, contextId }]
})

const status = (id: string, state: V1.TaskState, timestamp = "2026-01-01T00:00:01.000Z"): V1.StreamResponse => ({
  statusUpdate: { taskId: id, contextId: "ctx", status: { state, timestamp } }
})

const withStore = <A, E>(body: (store: TaskStore.TaskStore["Type"]) => Effect.Effect<A, E>, options?: TaskStore.TaskStoreOptions) =>
  Effect.scoped(Effect.flatMap(TaskStore.make(options), body))

const chunk = (id: string, artifactId: string): V1.StreamResponse => ({
  artifactUpdate: { taskId: id, contextId: "ctx", artifact: { artifactId, parts: [{ text: artifactId }] } }
})

/**
 * Two writers race on one working task over TaskStore.layerOver a memory storage: "a" is published
 * from a fiber of its own whose write yields to other fibers "before" it writes or "after" (before
 * the store hands the change out), and "b" is published meanwhile; then the task completes. What a
 * subscriber (following `until`) got, and the task as stored.
 */
const race = (when: "before" | "after", until: TaskStore.SubscriptionEnd) =>
  Effect.gen(function*() {
    const memory = yield* TaskStorage.make()
    let slow = false
    const storage = TaskStorage.TaskStorage.of({
      ...memory,
      // Its writes go through `update` alone, which yields.
      updateNow: undefined,
      update: (id, write, expectedVersion) => {
        const written = memory.update(id, write, expectedVersion)
        if (!slow) return written
        slow = false
        return when === "before" ? Effect.zipRight(Effect.yieldNow(), written) : Effect.zipLeft(written, Effect.yieldNow())
      }
    })
    const play = Effect.gen(function*() {
      const store = yield* TaskStore.TaskStore
      yield* store.create(task("t", "TASK_STATE_WORKING", "2026-01-01T00:00:00.000Z"))
      const subscription = Option.getOrThrow(yield* store.subscribe("t", until))
      const collected = yield* Effect.fork(Stream.runCollect(subscription.updates))
      slow = true
      const first = yield* Effect.fork(store.publish("t", chunk("t", "a")))
      yield* Effect.yieldNow()
      yield* store.publish("t", chunk("t", "b"))
      yield* Fiber.join(first)
      yield* store.publish("t", status("t", "TASK_STATE_COMPLETED"))
      const updates = Chunk.toReadonlyArray(yield* Fiber.join(collected))
      return { updates, stored: Option.getOrThrow(yield* store.storage.get("t")) }
    })
    return yield* Effect.provide(play, TaskStore.layerOver().pipe(Layer.provide(Layer.succeed(TaskStorage.TaskStorage, storage))))
  })

const artifactIds = (task: V1.Task) => task.artifacts?.map((artifact) => artifact.artifactId)

describe("TaskStore", () => {
  it.effect("gives a subscriber the snapshot, then every later event once, ending at a settled state", () =>
    withStore((store) =>
      Effect.gen(function*() {
        yield* store.create(task("t", "TASK_STATE_SUBMITTED", "2026-01-01T00:00:00.000Z"))
        yield* store.publish("t", status("t", "TASK_STATE_WORKING"))
        const subscription = Option.getOrThrow(yield* store.subscribe("t"))
        expect(subscription.task.status.state).toBe("TASK_STATE_WORKING")
        const collected = yield* Effect.fork(Stream.runCollect(subscription.updates))
        yield* store.publish("t", {
          artifactUpdate: { taskId: "t", contextId: "ctx", artifact: { artifactId: "a", parts: [{ text: "x" }] } }
        })
        yield* store.publish("t", status("t", "TASK_STATE_COMPLETED"))
        // Nothing after a terminal state.
        expect(Option.isNone(yield* store.publish("t", status("t", "TASK_STATE_WORKING")))).toBe(true)
        const updates = Chunk.toReadonlyArray(yield* Fiber.join(collected))
        expect(updates.map((update) => Object.keys(update.event)[0])).toEqual(["artifactUpdate", "statusUpdate"])
        expect(updates[1]!.task.artifacts?.[0]?.parts).toEqual([{ text: "x" }])
      })
    ))

  it.effect("hands a subscriber the changes in the order written when one writer overtakes another before handing its change out", () =>
    Effect.gen(function*() {
      // "a" is written first, then its writer yields; "b" is written and handed out before "a" is.
      const { updates } = yield* race("after", "settled")
      expect(updates.map(({ event }) => "artifactUpdate" in event ? event.artifactUpdate.artifact.artifactId : "status")).toEqual([
        "a",
        "b",
        "status"
      ])
      expect(artifactIds(updates[1]!.task)).toEqual(["a", "b"])
    }))

  it.effect("reads and decides again when the task changed between its read and its write, losing neither change", () =>
    Effect.gen(function*() {
      // "a" is decided over version 1, then waits; "b" is written over version 1 meanwhile, so "a" conflicts.
      const { stored, updates } = yield* race("before", "terminal")
      expect([stored.version, artifactIds(stored.task)]).toEqual([4, ["b", "a"]])
      expect(updates.map(({ task }) => artifactIds(task))).toEqual([["b"], ["b", "a"], ["b", "a"]])
    }))

  it.effect("lets a subscriber that stopped reading leave at most maxUnread updates: past it, it goes on from the task as it stands", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const artifact = (id: string): V1.StreamResponse => ({
          artifactUpdate: { taskId: "t", contextId: "ctx", artifact: { artifactId: id, parts: [{ text: id }] } }
        })
        yield* store.create(task("t", "TASK_STATE_WORKING", "2026-01-01T00:00:00.000Z"))
        const subscription = Option.getOrThrow(yield* store.subscribe("t"))
        // 25 updates while nobody reads: past the 10 it may leave unread, they are dropped.
        for (let n = 0; n < 25; n++) yield* store.publish("t", artifact(`a${n}`))
        const collected = yield* Effect.fork(Stream.runCollect(subscription.updates))
        yield* Effect.repeatN(Effect.yieldNow(), 10)
        yield* store.publish("t", artifact("after"))
        yield* store.publish("t", status("t", "TASK_STATE_COMPLETED"))
        const updates = Chunk.toReadonlyArray(yield* Fiber.join(collected))
        // The task as it stood when it read again, then every update after, to the end.
        expect(updates.map((update) => Object.keys(update.event)[0])).toEqual(["task", "artifactUpdate", "statusUpdate"])
        expect(artifactIds(updates[0]!.task)).toHaveLength(25)
        expect(updates[0]!.event).toEqual({ task: updates[0]!.task })
        expect(updates.map((update) => update.version)).toEqual([26, 27, 28])
      }), { maxUnread: 10 }))

  it.effect("resolves awaitSettled at the next terminal or interrupted state", () =>
    withStore((store) =>
      Effect.gen(function*() {
        yield* store.create(task("t", "TASK_STATE_SUBMITTED", "2026-01-01T00:00:00.000Z"))
        const waiting = yield* Effect.fork(store.awaitSettled("t"))
        yield* store.publish("t", status("t", "TASK_STATE_WORKING"))
        yield* store.publish("t", status("t", "TASK_STATE_INPUT_REQUIRED"))
        const settled = Option.getOrThrow(yield* Fiber.join(waiting))
        expect(settled.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
        expect(Option.getOrThrow(yield* store.awaitSettled("t")).status.state).toBe("TASK_STATE_INPUT_REQUIRED")
        expect(Option.isNone(yield* store.awaitSettled("missing"))).toBe(true)
      })
    ))

  it.effect("keeps the messages queued for a task in order, hands them to publish's whenQueued, and drops them when it ends", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const message = (text: string): V1.Message => ({ messageId: text, role: "ROLE_USER", parts: [{ text }] })
        const seen: Array<ReadonlyArray<string>> = []
        const look = (_task: V1.Task, queued: ReadonlyArray<V1.Message>) => {
          seen.push(queued.map((waiting) => waiting.messageId))
          return Either.left("looked only")
        }
        const queue = (text: string) =>
          store.modify("t", (current, queued) => {
            seen.push(queued.map((waiting) => waiting.messageId))
            return Either.right({ task: current, queued: [...queued, message(text)] })
          })
        const takeFirst = (current: V1.Task, queued: ReadonlyArray<V1.Message>): TaskStore.TaskChange => ({
          task: TaskStore.appendHistory(current, queued[0]!, 10),
          queued: queued.slice(1)
        })
        yield* store.create(task("t", "TASK_STATE_WORKING", "2026-01-01T00:00:00.000Z"))
        yield* queue("a")
        yield* queue("b")
        yield* queue("c")
        expect(seen).toEqual([[], ["a"], ["a", "b"]])
        // A status while messages wait: whenQueued applies instead of the event.
        const handedOn = Option.getOrThrow(yield* store.publish("t", status("t", "TASK_STATE_COMPLETED"), takeFirst))
        expect([handedOn.status.state, handedOn.history?.map((m) => m.messageId)]).toEqual(["TASK_STATE_WORKING", ["m-t", "a"]])
        yield* Effect.ignore(store.modify("t", look))
        expect(seen[seen.length - 1]).toEqual(["b", "c"])
        // A terminal state drops what waits.
        yield* store.publish("t", status("t", "TASK_STATE_CANCELED"))
        yield* Effect.ignore(store.modify("t", look))
        expect(seen[seen.length - 1]).toEqual([])
      })
    ))

  it.effect("past its bound forgets finished tasks first, then tasks left waiting for input, never working ones", () =>
    withStore(
      (store) =>
        Effect.gen(function*() {
          const at = "2026-01-01T00:00:00.000Z"
          yield* store.create(task("running", "TASK_STATE_WORKING", at))
          for (let i = 0; i < 4; i++) yield* store.create(task(`asks-${i}`, "TASK_STATE_INPUT_REQUIRED", at))
          for (let i = 0; i < 5; i++) yield* store.create(task(`done-${i}`, "TASK_STATE_COMPLETED", at))
          // The 11th task goes past the bound of 10: two finished tasks make room, no waiting one.
          yield* store.create(task("asks-4", "TASK_STATE_AUTH_REQUIRED", at))
          const present = (id: string) => Effect.map(store.storage.get(id), Option.isSome)
          expect(yield* Effect.forEach(["done-0", "done-1", "done-2"], present)).toEqual([false, false, true])
          expect(yield* Effect.forEach(["asks-0", "asks-4", "running"], present)).toEqual([true, true, true])
          // A conversation that just went on is recent again, however old the task.
          yield* store.publish("asks-0", {
            statusUpdate: { taskId: "asks-0", contextId: "keep", status: { state: "TASK_STATE_INPUT_REQUIRED" } }
          })
          // Only waiting tasks left to forget: the least recently changed go, the working one stays.
          for (let i = 5; i < 12; i++) yield* store.create(task(`asks-${i}`, "TASK_STATE_INPUT_REQUIRED", at))
          expect(yield* present("running")).toBe(true)
          expect(yield* present("asks-1")).toBe(false)
          expect(yield* present("asks-0")).toBe(true)
          expect(yield* present("asks-11")).toBe(true)
        }),
      { maxTasks: 10 }
    ))

  it.effect("past its bound forgets a waiting task that only a push delivery follows, ending the delivery; a client's follow keeps its task", () =>
    withStore(
      (store) =>
        Effect.gen(function*() {
          const at = "2026-01-01T00:00:00.000Z"
          yield* store.create(task("pushed", "TASK_STATE_INPUT_REQUIRED", at))
          yield* store.create(task("watched", "TASK_STATE_INPUT_REQUIRED", at))
          const delivery = Option.getOrThrow(yield* store.subscribe("pushed", "terminal"))
          const client = Option.getOrThrow(yield* store.subscribe("watched"))
          const delivered = yield* Effect.fork(Stream.runCollect(delivery.updates))
          const followed = yield* Effect.fork(Stream.runCollect(client.updates))
          for (let i = 0; i < 10; i++) yield* store.create(task(`new-${i}`, "TASK_STATE_INPUT_REQUIRED", at))
          expect(Option.isNone(yield* store.storage.get("pushed"))).toBe(true)
          expect(Option.isSome(yield* store.storage.get("watched"))).toBe(true)
          // The delivery's stream ended with the task; the client's goes on.
          expect(Chunk.size(yield* Fiber.join(delivered).pipe(Effect.timeout("2 seconds")))).toBe(0)
          expect(yield* Fiber.poll(followed)).toEqual(Option.none())
          yield* Fiber.interrupt(followed)
        }),
      { maxTasks: 10 }
    ))

  it.effect("reads a finished task back the same once newer ones finished and it is kept packed", () =>
    withStore((store) =>
      Effect.gen(function*() {
        const at = "2026-01-01T00:00:00.000Z"
        yield* store.create(task("old", "TASK_STATE_SUBMITTED", at, "talk"))
        yield* store.publish("old", status("old", "TASK_STATE_WORKING"))
        const artifact: V1.Artifact = {
          artifactId: "a",
          name: "answer",
          parts: [{ text: "ünïcødé \u2028 \uD800" }, { data: { n: 1.5, list: [null, true] } }]
        }
        yield* store.publish("old", { artifactUpdate: { taskId: "old", contextId: "talk", artifact, lastChunk: true } })
        yield* store.publish("old", { message: { messageId: "m2", role: "ROLE_AGENT", parts: [{ text: "done" }], metadata: { k: "v" } } })
        const finished = Option.getOrThrow(yield* store.publish("old", status("old", "TASK_STATE_COMPLETED")))
        const asStored = JSON.stringify(finished)
        // Newer tasks finish, in another conversation: "old" is now kept packed.
        for (let i = 0; i < 2 * TaskStorage.RECENTLY_FINISHED; i++) {
          yield* store.create(task(`new-${i}`, "TASK_STATE_SUBMITTED", at, "other"))
          yield* store.publish(`new-${i}`, status(`new-${i}`, "TASK_STATE_COMPLETED"))
        }
        const got = Option.getOrThrow(yield* store.storage.get("old")).task
        expect(got).toEqual(finished)
        expect(JSON.stringify(got)).toBe(asStored)
        // Read back from its text (what keeping it packed means): a copy, not the object stored.
        expect(got).not.toBe(finished)
        const listed = yield* store.storage.list({ contextId: "talk", pageSize: 10 })
        expect(listed.tasks.map((listedTask) => JSON.stringify(listedTask))).toEqual([asStored])
        const byStatus = yield* store.storage.list({ status: "TASK_STATE_COMPLETED", pageSize: 1000 })
        expect(byStatus.totalSize).toBe(1 + 2 * TaskStorage.RECENTLY_FINISHED)
        expect(byStatus.tasks.map((listedTask) => listedTask.id)).toContain("old")
        expect((yield* store.storage.contextTasks("talk")).map((contextTask) => JSON.stringify(contextTask))).toEqual([asStored])
        const subscription = Option.getOrThrow(yield* store.subscribe("old"))
        expect(JSON.stringify(subscription.task)).toBe(asStored)
        expect(Chunk.size(yield* Stream.runCollect(subscription.updates))).toBe(0)
        expect(JSON.stringify(Option.getOrThrow(yield* store.awaitSettled("old")))).toBe(asStored)
        // Still nothing after its terminal state, and a change is made to the task as it was.
        expect(Option.isNone(yield* store.publish("old", status("old", "TASK_STATE_WORKING")))).toBe(true)
        const changed = yield* store.modify("old", (stored) => Either.right({ task: { ...stored, metadata: { seen: true } } }))
        expect(Option.getOrThrow(changed)).toEqual({ ...finished, metadata: { seen: true } })
        expect(Option.getOrThrow(yield* store.storage.get("old")).task).toEqual({ ...finished, metadata: { seen: true } })
      })
    ))

  it.effect("keeps history bounded and forgets the oldest finished tasks past its bound", () =>
    withStore(
      (store) =>
        Effect.gen(function*() {
          yield* store.create(task("running", "TASK_STATE_WORKING", "2026-01-01T00:00:00.000Z", "keep"))
          for (let i = 0; i < 12; i++) yield* store.create(task(`done-${i}`, "TASK_STATE_COMPLETED", "2026-01-01T00:00:00.000Z"))
          expect(Option.isSome(yield* store.storage.get("running"))).toBe(true)
          expect(Option.isNone(yield* store.storage.get("done-0"))).toBe(true)
          expect(Option.isSome(yield* store.storage.get("done-11"))).toBe(true)
          for (let i = 0; i < 5; i++) {
            const message: V1.Message = { messageId: `x${i}`, role: "ROLE_AGENT", parts: [{ text: `${i}` }] }
            yield* store.publish("running", { message })
          }
          const kept = Option.getOrThrow(yield* store.storage.get("running")).task.history ?? []
          expect(kept.map((message) => message.messageId)).toEqual(["x2", "x3", "x4"])
        }),
      { maxTasks: 10, maxHistory: 3 }
    ))

  it.effect("gives a conversation's tasks oldest first, whether it has one task or several, without the forgotten ones", () =>
    withStore(
      (store) =>
        Effect.gen(function*() {
          const at = "2026-01-01T00:00:00.000Z"
          const ids = (contextId: string) => Effect.map(store.storage.contextTasks(contextId), (tasks) => tasks.map((t) => t.id))
          yield* store.create(task("alone", "TASK_STATE_COMPLETED", at, "solo"))
          expect(yield* ids("solo")).toEqual(["alone"])
          for (const id of ["t1", "t2", "t3"]) yield* store.create(task(id, "TASK_STATE_COMPLETED", at, "talk"))
          expect(yield* ids("talk")).toEqual(["t1", "t2", "t3"])
          expect(yield* ids("nobody")).toEqual([])
          // Past the bound of 4 the least recently changed finished tasks go: "alone", then "t1".
          yield* store.create(task("later", "TASK_STATE_COMPLETED", at, "other"))
          for (let i = 0; i < 4; i++) yield* store.create(task(`filler-${i}`, "TASK_STATE_COMPLETED", at, "other"))
          expect(yield* ids("solo")).toEqual([])
          expect((yield* ids("talk")).length).toBeLessThan(3)
          // A conversation whose tasks all went starts again with its next task.
          yield* store.create(task("again", "TASK_STATE_COMPLETED", at, "solo"))
          expect(yield* ids("solo")).toEqual(["again"])
        }),
      { maxTasks: 4 }
    ))
})

describe("ListTasks", () => {
  it.effect("matches no task with a statusTimestampAfter past 9999-12-31T23:59:59.999Z, which RFC 3339 and an offset allow", () =>
    withStore((store) =>
      Effect.gen(function*() {
        yield* store.create(task("t", "TASK_STATE_COMPLETED", "2026-01-01T00:00:00.000Z"))
        const list = (statusTimestampAfter: string, pageToken?: string) =>
          Effect.provideService(
            listTasks({ statusTimestampAfter, ...(pageToken === undefined ? {} : { pageToken }) }),
            TaskStore.TaskStore,
            store
          )
        const counts = yield* Effect.forEach(
          ["2026-01-01T00:00:00Z", "9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59.9999Z", "9999-12-31T23:30:00-01:00"],
          (since) => Effect.map(list(since), (page) => [page.tasks.length, page.totalSize, page.nextPageToken])
        )
        expect(counts).toEqual([[1, 1, ""], [0, 0, ""], [0, 0, ""], [0, 0, ""]])
        // A page token no storage gives is refused there as anywhere.
        const refused = yield* Effect.flip(list("9999-12-31T23:59:59.9999Z", "not a token"))
        expect([refused.kind, refused.message]).toEqual(["InvalidParams", "invalid pageToken"])
      })
    ))
})

describe("webhook URL guard", () => {
  const policy = { allowLoopback: true, allowPrivate: false }

  it("allows public and loopback http(s) URLs", () => {
    for (const url of ["https://hooks.example.com/a2a", "http://127.0.0.1:9000/x", "http://localhost/x", "http://[::1]:9/x"]) {
      expect(webhookUrlProblem(url, policy)).toBeUndefined()
    }
  })

  it("refuses other schemes, private, link-local and mapped addresses, and loopback when switched off", () => {
    for (
      const url of [
        "ftp://example.com/x",
        "not a url",
        "http://10.1.2.3/",
        "http://192.168.0.1/",
        "http://169.254.169.254/",
        "http://[fe80::1]/",
        "http://[::ffff:10.0.0.1]/",
        "http://0.0.0.0/"
      ]
    ) {
      expect(webhookUrlProblem(url, policy)).toEqual(expect.any(String))
    }
    expect(webhookUrlProblem("http://127.0.0.1/x", { allowLoopback: false, allowPrivate: false })).toContain("loopback")
    expect(webhookUrlProblem("http://[::ffff:127.0.0.1]/x", { allowLoopback: false, allowPrivate: false })).toContain("loopback")
    expect(webhookUrlProblem("http://10.0.0.1/x", { allowLoopback: true, allowPrivate: true })).toBeUndefined()
  })
})

describe("results are written without the schemas' encode", () => {
  // The programs' values are canonical ProtoJSON already, and the v0.3 translation gives wire JSON; the codecs rely on that.
  const samples: ReadonlyArray<V1.StreamResponse> = [
    {
      task: {
        id: "t",
        contextId: "c",
        status: {
          state: "TASK_STATE_FAILED",
          timestamp: "2026-01-01T00:00:00.000Z",
          message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "boom" }], taskId: "t", contextId: "c" }
        },
        history: [{
          messageId: "u",
          role: "ROLE_USER",
          parts: [{ text: "hi", mediaType: "text/plain" }, { data: { a: [1, null] } }, { url: "http://x/f", filename: "f.txt" }, {
            raw: "AAE="
          }],
          metadata: { k: { nested: true } },
          referenceTaskIds: ["r"]
        }],
        artifacts: [{ artifactId: "a", name: "answer", parts: [{ text: "x" }] }],
        metadata: { trace: "1" }
      }
    },
    {
      artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ text: "" }] }, append: true, lastChunk: true }
    },
    status("t", "TASK_STATE_CANCELED")
  ]

  it("encodes each sample to exactly the value itself", () => {
    for (const sample of samples) {
      expect(Schema.encodeSync(V1.StreamResponse)(sample)).toEqual(v1Codec.event(sample))
    }
    const config: V1.TaskPushNotificationConfig = { id: "p", taskId: "t", url: "http://x", authentication: { scheme: "Bearer" } }
    expect(Schema.encodeSync(V1.TaskPushNotificationConfig)(config)).toEqual(v1Codec.pushConfig(config))
  })

  it("translates each sample to v0.3 exactly as the v0.3 schemas encode it", () => {
    for (const sample of samples) {
      expect(v03JsonRpcCodec.event(sample)).toStrictEqual(Schema.encodeSync(T.StreamResponseAsV03)(sample))
      if ("task" in sample) {
        expect(v03JsonRpcCodec.task(sample.task)).toStrictEqual(Schema.encodeSync(T.TaskAsV03)(sample.task))
        expect(v03JsonRpcCodec.send(sample)).toStrictEqual(Schema.encodeSync(T.SendResponseAsV03)(sample))
      }
    }
    const message = { message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "hi" }], contextId: "c" } } as const
    expect(v03JsonRpcCodec.send(message)).toStrictEqual(Schema.encodeSync(T.SendResponseAsV03)(message))
  })

  it("trims history for historyLength and masks push secrets", () => {
    const full = samples[0]!
    if (!("task" in full)) throw new Error("sample 0 is a task")
    expect(presentTask(full.task, 0).history).toBeUndefined()
    expect(presentTask(full.task, undefined, false).artifacts).toBeUndefined()
    const redacted = redactPushConfig({ url: "http://x", token: "t", authentication: { scheme: "Bearer", credentials: "c" } })
    expect([redacted.token, redacted.authentication?.credentials]).toEqual([REDACTED, REDACTED])
  })
})

describe("routing", () => {
  const missing = { _tag: "Missing" } as const
  const v1 = { _tag: "Supported", generation: "1.0" } as const
  const v03 = { _tag: "Supported", generation: "0.3" } as const

  it("matches REST paths with tenants, verbs after a colon and the v0.3 /v1 family", () => {
    const generationOf = (method: string, path: string, version: Parameters<typeof matchRoute>[2] = v1) => {
      const match = matchRoute(method, path, version)
      return match._tag === "Route" ? match.route.generation : match._tag
    }
    expect(generationOf("POST", "/message:send")).toBe("1.0")
    expect(generationOf("POST", "/acme/message:stream")).toBe("1.0")
    expect(generationOf("GET", "/tasks/abc:subscribe")).toBe("1.0")
    expect(generationOf("POST", "/acme/tasks/abc:cancel")).toBe("1.0")
    expect(generationOf("DELETE", "/tasks/abc/pushNotificationConfigs/p1")).toBe("1.0")
    expect(generationOf("GET", "/tasks/abc/notification", missing)).toBe("1.0")
    expect(generationOf("POST", "/v1/message:send", missing)).toBe("0.3")
    expect(generationOf("POST", "/v1/message:send", v03)).toBe("0.3")
    // With A2A-Version 1.0, "v1" is a tenant.
    expect(generationOf("POST", "/v1/message:send", v1)).toBe("1.0")
    expect(generationOf("POST", "/message:send", v03)).toBe("VersionNotSupported")
    expect(generationOf("PATCH", "/tasks/abc")).toBe("NotFound")
    expect(generationOf("GET", "/a/b/c/d/e/f")).toBe("NotFound")
  })

  it("selects JSON-RPC methods by A2A-Version, serving v1.0 names without it", () => {
    const generation = (name: string, version: Parameters<typeof resolveMethod>[1]) =>
      Either.match(resolveMethod(name, version), { onLeft: (error) => error.spec.jsonRpcCode, onRight: (dialect) => dialect.generation })
    expect(generation("SendMessage", missing)).toBe("1.0")
    expect(generation("message/send", missing)).toBe("0.3")
    expect(generation("SendMessage", v1)).toBe("1.0")
    expect(generation("message/send", v1)).toBe(-32601)
    expect(generation("SendMessage", v03)).toBe(-32601)
    expect(generation("GetTask", { _tag: "Unsupported", version: "2.0" })).toBe(-32009)
    expect(generation("toString", missing)).toBe(-32601)
  })
})
