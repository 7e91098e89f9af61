import { describe, expect, it } from "vitest"
import { knownJson, rememberTaskJson } from "../../src/a2a/taskJson.js"
import type * as V1 from "../../src/a2a/v1.js"

const task = (id: string): V1.Task => ({
  id,
  contextId: "c",
  status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-01T00:00:00.000Z" },
  artifacts: [{ artifactId: "a", parts: [{ text: "quote \" and \u2028 and ✓" }] }]
})

describe("a task's JSON made once", () => {
  it("gives a remembered task's text for the task and for { task }, as JSON.stringify would write them", () => {
    const finished = task("t1")
    rememberTaskJson(finished, JSON.stringify(finished))
    expect(knownJson(finished)).toBe(JSON.stringify(finished))
    expect(knownJson({ task: finished })).toBe(JSON.stringify({ task: finished }))
  })

  it("knows nothing of another object, even an equal one, nor of { task } with anything beside it", () => {
    const finished = task("t2")
    rememberTaskJson(finished, JSON.stringify(finished))
    expect(knownJson(task("t2"))).toBeUndefined()
    expect(knownJson({ task: task("t2") })).toBeUndefined()
    expect(knownJson({ task: finished, extra: 1 })).toBeUndefined()
    expect(knownJson({ message: finished })).toBeUndefined()
    expect(knownJson(null)).toBeUndefined()
    expect(knownJson("text")).toBeUndefined()
    expect(knownJson({ task: null })).toBeUndefined()
  })
})
