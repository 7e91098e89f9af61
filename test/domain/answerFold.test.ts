/**
 * domain/answerFold: events folded into the answer as they come, `append` joining and an update
 * without it replacing (A2A v0.3 §7.2.3, v1.0 §4.2.2), and the limit for a whole answer: an
 * event that would take what is kept past it is refused, and the fold is cut.
 */
import { describe, expect, it } from "vitest"
import { resultText } from "../../src/a2a/text.js"
import type * as V1 from "../../src/a2a/v1.js"
import { answerTooLarge, makeAnswerFold, truncation } from "../../src/domain/answerFold.js"

const opened: V1.StreamResponse = { task: { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } } }
const chunk = (text: string, append?: boolean, artifactId = "a"): V1.StreamResponse => ({
  artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId, parts: [{ text }] }, ...(append === undefined ? {} : { append }) }
})
const status = (state: V1.TaskState, text?: string): V1.StreamResponse => ({
  statusUpdate: {
    taskId: "t",
    contextId: "c",
    status: { state, ...(text === undefined ? {} : { message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text }] } }) }
  }
})

const foldAll = (events: ReadonlyArray<V1.StreamResponse>, maxBytes?: number) => {
  const fold = makeAnswerFold(maxBytes)
  const steps = events.map((event) => fold.apply(event))
  return { fold, steps }
}

describe("folding events into the answer", () => {
  it("appends chunks to their artifact and tells each step's new text", () => {
    const { fold, steps } = foldAll([opened, chunk("Hel", true), chunk("lo", true), chunk(", world", false, "b")])
    expect(resultText(fold.task()!)).toBe("Hello\n, world")
    expect(steps.map((step) => step?.pieces)).toEqual([
      [],
      [{ artifactId: "a", text: "Hel", whole: true, parts: [{ text: "Hel" }] }],
      [{ artifactId: "a", text: "lo", whole: false, parts: [{ text: "lo" }] }],
      [{ artifactId: "b", text: ", world", whole: true, parts: [{ text: ", world" }] }]
    ])
  })

  it("an update without append replaces the artifact: chunks, then the whole text again (Google ADK), count once", () => {
    const { fold, steps } = foldAll([
      opened,
      chunk("Hello ", true),
      chunk("world\n", true),
      chunk("Hello world"),
      status("TASK_STATE_COMPLETED")
    ])
    expect(fold.task()!.artifacts).toEqual([{ artifactId: "a", parts: [{ text: "Hello world" }] }])
    expect(steps[3]?.pieces).toEqual([{ artifactId: "a", text: "Hello world", whole: true, parts: [{ text: "Hello world" }] }])
    // The replaced chunks count no more: as many bytes kept as for the whole text alone.
    expect(fold.keptBytes()).toBe(foldAll([opened, chunk("Hello world"), status("TASK_STATE_COMPLETED")]).fold.keptBytes())
  })

  it("a part that is not text stands on a line of its own after the chunks", () => {
    const data: V1.StreamResponse = {
      artifactUpdate: { taskId: "t", contextId: "c", artifact: { artifactId: "a", parts: [{ data: { n: 1 } }] }, append: true }
    }
    const { steps } = foldAll([opened, chunk("text", true), data])
    expect(steps[2]?.pieces).toEqual([{ artifactId: "a", text: "\n{\n  \"n\": 1\n}", whole: false, parts: [{ data: { n: 1 } }] }])
  })

  it("ignores events of another task, and builds the task once per change", () => {
    const fold = makeAnswerFold()
    fold.apply(opened)
    expect(fold.apply({ artifactUpdate: { taskId: "other", contextId: "c", artifact: { artifactId: "x", parts: [{ text: "no" }] } } }))
      .toBeUndefined()
    fold.apply(chunk("yes"))
    const built = fold.task()
    expect(fold.task()).toBe(built)
    fold.apply(chunk("!", true))
    expect(fold.task()).not.toBe(built)
    expect(resultText(fold.task()!)).toBe("yes!")
  })
})

describe("the limit for a whole answer", () => {
  const KiB = 1024

  it("refuses the event that would pass it, keeps what came before, and stays cut", () => {
    const { fold } = foldAll([opened, ...Array.from({ length: 20 }, () => chunk("x".repeat(KiB), true))], 10 * KiB)
    expect(fold.cut()).toBe(true)
    expect(fold.keptBytes()).toBeLessThanOrEqual(10 * KiB)
    expect(fold.keptBytes()).toBeGreaterThan(8 * KiB)
    const kept = resultText(fold.task()!)
    expect(kept.length % KiB).toBe(0)
    expect(fold.apply(status("TASK_STATE_COMPLETED"))).toBeUndefined()
    expect(fold.task()!.status.state).toBe("TASK_STATE_WORKING")
    expect(truncation(fold)).toEqual({ truncated: true, kept_bytes: fold.keptBytes(), limit_bytes: 10 * KiB })
    expect(answerTooLarge(truncation(fold))).toMatchObject({ code: "response_too_large", limit: 10 * KiB })
  })

  it("counts what is kept: an artifact replaced again and again never adds up", () => {
    const { fold } = foldAll([opened, ...Array.from({ length: 100 }, (_, index) => chunk(`${index}`.padEnd(KiB, "y")))], 10 * KiB)
    expect(fold.cut()).toBe(false)
    expect(truncation(fold)).toEqual({})
  })

  it("counts many small artifacts, status messages and the history too", () => {
    const artifacts = foldAll(
      [opened, ...Array.from({ length: 100 }, (_, index) => chunk("z".repeat(200), undefined, `a${index}`))],
      10 * KiB
    )
    expect(artifacts.fold.cut()).toBe(true)
    expect(foldAll([opened, status("TASK_STATE_WORKING", "s".repeat(20 * KiB))], 10 * KiB).fold.cut()).toBe(true)
    const history = Array.from(
      { length: 50 },
      (_, index): V1.Message => ({ messageId: `${index}`, role: "ROLE_AGENT", parts: [{ text: "h".repeat(300) }] })
    )
    const withHistory = foldAll([{ task: { id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" }, history } }], 10 * KiB)
    expect(withHistory.fold.cut()).toBe(true)
    // A task that alone is over the limit leaves its ids and state, without what it accumulated.
    expect(withHistory.fold.task()).toEqual({ id: "t", contextId: "c", status: { state: "TASK_STATE_WORKING" } })
  })

  it("a direct message over the limit is kept without its parts", () => {
    const { fold } = foldAll([{ message: { messageId: "m", role: "ROLE_AGENT", parts: [{ text: "m".repeat(20 * KiB) }] } }], 10 * KiB)
    expect(fold.cut()).toBe(true)
    expect(fold.answer()).toEqual({ message: { messageId: "m", role: "ROLE_AGENT", parts: [] } })
  })
})
