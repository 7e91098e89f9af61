/**
 * programs/taskUpdates: what a door hears while a task streams. Each piece of the answer is
 * reported once: an artifact sent whole again without `append` (Google ADK) adds only what it
 * adds, a replacement that does not continue what was shown is reported once as `replaced`, and
 * artifacts that interleave never repeat each other. Reading stops at the limit for a whole
 * answer, and send_message / message send return what was kept, marked cut.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer, Option, Stream } from "effect"
import type * as V1 from "../../src/a2a/v1.js"
import { makeAnswerFold } from "../../src/domain/answerFold.js"
import { UnsupportedOperation } from "../../src/domain/clientErrors.js"
import { sendMessage } from "../../src/programs/sendMessage.js"
import { followStream, makeFollower, type TaskUpdate } from "../../src/programs/taskUpdates.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { ScratchFiles } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const opened: V1.StreamResponse = { task: { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } }
const completed: V1.StreamResponse = { statusUpdate: { taskId: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } } }
const chunk = (text: string, append?: boolean, artifactId = "a"): V1.StreamResponse => ({
  artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId, parts: [{ text }] }, ...(append === undefined ? {} : { append }) }
})

/** Follows `events` as a stream; the updates the door heard, and the answer. */
const follow = (events: ReadonlyArray<V1.StreamResponse>) =>
  Effect.gen(function*() {
    const updates: Array<TaskUpdate> = []
    const follower = yield* makeFollower(makeAnswerFold(), { onUpdate: (update) => Effect.sync(() => void updates.push(update)) })
    const answer = yield* followStream("http://agent.test", Stream.fromIterable(events), follower)
    return { updates, answer, pieces: updates.map((update) => update.delta).join("") }
  })

const textOf = (answer: V1.SendMessageResponse) =>
  "task" in answer
    ? (answer.task.artifacts ?? []).map((artifact) => artifact.parts.map((part) => ("text" in part ? part.text : "")).join("")).join("\n")
    : ""

describe("each piece of the answer reported once", () => {
  it.effect("chunks, then the whole text again without append (Google ADK): the pieces hold it once", () =>
    Effect.gen(function*() {
      const { answer, pieces, updates } = yield* follow([
        opened,
        chunk("Hello ", true),
        chunk("world\n", true),
        chunk("Hello world"),
        completed
      ])
      expect(pieces).toBe("Hello world\n")
      expect(updates.some((update) => update.replaced)).toBe(false)
      expect(textOf(answer)).toBe("Hello world")
      expect(updates.at(-1)?.view.state).toBe("completed")
    }))

  it.effect("the same whole text again, or a longer one, adds nothing or only the rest", () =>
    Effect.gen(function*() {
      const { pieces } = yield* follow([opened, chunk("Hel", true), chunk("lo", true), chunk("Hello"), chunk("Hello, world"), completed])
      expect(pieces).toBe("Hello, world")
    }))

  it.effect("a replacement that does not continue what was shown is reported once, as replaced", () =>
    Effect.gen(function*() {
      const { answer, updates } = yield* follow([opened, chunk("Draft: maybe", true), chunk("Final answer"), completed])
      expect(updates.filter((update) => update.delta !== "").map(({ delta, replaced }) => ({ delta, replaced }))).toEqual([
        { delta: "Draft: maybe", replaced: false },
        { delta: "Final answer", replaced: true }
      ])
      expect(textOf(answer)).toBe("Final answer")
    }))

  it.effect("artifacts that interleave: each text once, each artifact on a line of its own", () =>
    Effect.gen(function*() {
      const { answer, pieces } = yield* follow([
        opened,
        chunk("alpha", undefined, "a"),
        chunk("beta", undefined, "b"),
        chunk(" more", true, "a"),
        completed
      ])
      expect(pieces).toBe("alpha\nbeta\n more")
      expect(textOf(answer)).toBe("alpha more\nbeta")
    }))

  it.effect("a status update reports its state and status text without the answer again", () =>
    Effect.gen(function*() {
      const thinking: V1.StreamResponse = {
        statusUpdate: {
          taskId: "t",
          contextId: "c",
          status: { state: "TASK_STATE_WORKING", message: { messageId: "s", role: "ROLE_AGENT", parts: [{ text: "thinking" }] } }
        }
      }
      const { updates } = yield* follow([opened, chunk("answer"), thinking, completed])
      expect(updates.map(({ delta, status, view }) => [view.state, delta, status])).toEqual([
        ["working", "", ""],
        ["working", "answer", ""],
        ["working", "", "thinking"],
        ["completed", "", ""]
      ])
    }))
})

describe("the limit for a whole answer", () => {
  /** An agent that never stops appending 1 KiB chunks. */
  const endless = Stream.concat(Stream.make(opened), Stream.repeatValue(chunk("x".repeat(1024), true)))

  it.effect("reading an endless stream stops at the limit, keeping what came before", () =>
    Effect.gen(function*() {
      const answer = makeAnswerFold(64 * 1024)
      const follower = yield* makeFollower(answer)
      const kept = yield* followStream("http://agent.test", endless, follower).pipe(Effect.timeout("10 seconds"))
      expect(answer.cut()).toBe(true)
      expect(textOf(kept).length).toBeGreaterThan(60 * 1024)
      expect(answer.keptBytes()).toBeLessThanOrEqual(64 * 1024)
    }))

  it.effect("sendMessage returns the cut answer marked truncated, with its size, and saves the turn", () => {
    const client = A2aClient.layerTest({
      discover: () => Effect.fail(new UnsupportedOperation({ operation: "Card discovery", reason: "not scripted" })),
      stream: () => endless
    })
    return Effect.gen(function*() {
      const result = yield* sendMessage({ agentUrl: agentUrlOf("http://agent.test"), text: "hi", stream: true, maxAnswerBytes: 64 * 1024 })
        .pipe(
          Effect.timeout("10 seconds")
        )
      expect(result).toMatchObject({ task_id: "t", state: "working", truncated: true, limit_bytes: 64 * 1024 })
      expect(result.kept_bytes).toBeLessThanOrEqual(64 * 1024)
      expect(result.text.length).toBeGreaterThan(60 * 1024)
      const saved = yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.get(agentUrlOf("http://agent.test")))
      expect(Option.getOrThrow(saved)).toMatchObject({ task_id: "t", last_state: "working" })
    }).pipe(Effect.provide(Layer.mergeAll(client, SessionStore.layerMemory, ScratchFiles)))
  })
})
