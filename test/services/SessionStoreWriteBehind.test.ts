/**
 * SessionStore.writeBehind: a conversation's session written without waiting for the disk, and
 * never lost (programs/sendMessage.ts follows a task with it; test/programs/sendMessage.test.ts
 * and test/e2e/conversations.test.ts hold the send to the same rules end to end). The test clock
 * holds the early write back until a test moves it.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer, Option, TestClock } from "effect"
import { StateFileUnavailable } from "../../src/domain/errors.js"
import type { SessionPatch } from "../../src/domain/session.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const AGENT = agentUrlOf("http://agent.test")

/** An in-memory store that records the state of every update asked of it; "unwritable" fails. */
const recordingStore = () => {
  const updates: Array<string | null | undefined> = []
  const layer = Layer.effect(
    SessionStore.SessionStore,
    Effect.map(SessionStore.SessionStore, (store) => ({
      ...store,
      update: (agentUrl: Parameters<typeof store.update>[0], patch: SessionPatch) =>
        Effect.zipRight(
          Effect.sync(() => updates.push(patch.last_state)),
          patch.last_state === "unwritable"
            ? Effect.fail(new StateFileUnavailable({ file: "sessions.json", operation: "write", reason: "disk full" }))
            : store.update(agentUrl, patch)
        )
    }))
  ).pipe(Layer.provide(SessionStore.layerMemory))
  return { updates, layer }
}

const turn = (state: string): SessionPatch => ({ context_id: "c1", task_id: "t1", last_state: state })

const saved = Effect.flatMap(SessionStore.SessionStore, (store) => store.get(AGENT)).pipe(Effect.map(Option.getOrUndefined))

describe("SessionStore.writeBehind", () => {
  it.effect("patches that come within the early write delay are written once, the latest", () => {
    const { updates, layer } = recordingStore()
    return Effect.gen(function*() {
      const writer = yield* SessionStore.writeBehind(AGENT)
      yield* writer.inBackground(turn("submitted"))
      yield* writer.inBackground(turn("working"))
      expect(updates).toEqual([])
      yield* TestClock.adjust(SessionStore.EARLY_WRITE_DELAY)
      yield* writer.written
      expect(updates).toEqual(["working"])
      expect(yield* saved).toMatchObject({ task_id: "t1", last_state: "working" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("the same patch again is not written again; a new one after the first is written at once", () => {
    const { updates, layer } = recordingStore()
    return Effect.gen(function*() {
      const writer = yield* SessionStore.writeBehind(AGENT)
      yield* writer.inBackground(turn("working"))
      yield* TestClock.adjust(SessionStore.EARLY_WRITE_DELAY)
      yield* writer.inBackground(turn("working"))
      yield* writer.inBackground(turn("input-required"))
      yield* writer.written
      expect(updates).toEqual(["working", "input-required"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a conversation that ends before the delay writes what it saw at once", () => {
    const { updates, layer } = recordingStore()
    return Effect.gen(function*() {
      const writer = yield* SessionStore.writeBehind(AGENT)
      yield* writer.inBackground(turn("working"))
      // No time passes: `written` ends the wait.
      yield* writer.written
      expect(updates).toEqual(["working"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("the last patch replaces what is pending and is written after the write under way; a patch already written is not written again", () => {
    const { updates, layer } = recordingStore()
    return Effect.gen(function*() {
      const writer = yield* SessionStore.writeBehind(AGENT)
      yield* writer.inBackground(turn("working"))
      yield* writer.last(turn("completed"))
      expect(updates).toEqual(["completed"])
      expect(yield* saved).toMatchObject({ last_state: "completed" })

      const again = yield* SessionStore.writeBehind(AGENT)
      yield* again.inBackground(turn("completed"))
      yield* again.written
      yield* again.last(turn("completed"))
      expect(updates).toEqual(["completed", "completed"])
    }).pipe(Effect.provide(layer))
  })

  it.effect("a failed background write is not reported; the last write's failure is", () => {
    const { updates, layer } = recordingStore()
    return Effect.gen(function*() {
      const writer = yield* SessionStore.writeBehind(AGENT)
      yield* writer.inBackground(turn("unwritable"))
      yield* writer.written
      expect(updates).toEqual(["unwritable"])

      const last = yield* Effect.exit(writer.last(turn("unwritable")))
      expect(Exit.isFailure(last) && last.cause._tag === "Fail" && last.cause.error._tag).toBe("StateFileUnavailable")
    }).pipe(Effect.provide(layer))
  })
})
