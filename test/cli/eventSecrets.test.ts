/**
 * `message stream --json` prints one NDJSON line per update, whose `text` pieces add up to the
 * answer: a secret given for the call that the agent's pieces cut is masked there too, as in the
 * streamed text (output.ts secretSafeText). Text held back because it may begin a secret is printed
 * when the command fails before the task settles (printHeld), in either view.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { addCallSecret } from "../../src/cli/output.js"
import { progressPrinter } from "../../src/cli/progress.js"
import { maskSecret } from "../../src/domain/secrets.js"
import type { TaskUpdate } from "../../src/programs/taskUpdates.js"

const TOKEN = "event-secret-0123456789abcdef"
addCallSecret(TOKEN)

const update = (state: "working" | "completed", delta: string): TaskUpdate => ({
  view: { task_id: "t1", context_id: null, state, needs_input: false, needs_auth: false, kind: "task", updated_at: null },
  delta,
  replaced: false,
  status: "",
  parts: []
})

afterEach(() => {
  vi.restoreAllMocks()
})

/** Everything written to stdout from now on. */
const capturedStdout = () => {
  const written: Array<string> = []
  vi.spyOn(process.stdout, "write").mockImplementation((chunk: unknown) => {
    written.push(String(chunk))
    return true
  })
  return written
}

const textsOf = (ndjson: string) => ndjson.trim().split("\n").map((line) => (JSON.parse(line) as { readonly text: string }).text)

describe("NDJSON update events with a secret given for the call", () => {
  it("mask it when the agent's pieces cut it, the pieces still adding up to the answer", async () => {
    const written = capturedStdout()
    const progress = progressPrinter({ streamText: false, showStates: false, events: true })
    const pieces = [update("working", "the token is event-sec"), update("working", "ret-0123456789abcdef, done"), update("completed", "")]
    await Effect.runPromise(Effect.forEach(pieces, progress.onUpdate).pipe(Effect.timeout("5 seconds")))
    vi.restoreAllMocks()
    expect(textsOf(written.join("")).join("")).toBe(`the token is ${maskSecret(TOKEN)}, done`)
  })
})

describe("text held back when the command fails before the task settles", () => {
  const cutShort = [update("working", "the answer ends event-sec")]

  it("is printed in one more NDJSON event, the texts still adding up to what the agent sent", async () => {
    const written = capturedStdout()
    const progress = progressPrinter({ streamText: false, showStates: false, events: true })
    await Effect.runPromise(
      Effect.zipRight(Effect.forEach(cutShort, progress.onUpdate), progress.printHeld).pipe(Effect.timeout("5 seconds"))
    )
    vi.restoreAllMocks()
    const texts = textsOf(written.join(""))
    expect(texts).toEqual(["the answer ends ", "event-sec"])
  })

  it("is printed after the streamed text, and only once", async () => {
    const written = capturedStdout()
    const progress = progressPrinter({ streamText: true, showStates: false })
    await Effect.runPromise(
      Effect.zipRight(Effect.forEach(cutShort, progress.onUpdate), Effect.zipRight(progress.printHeld, progress.printHeld)).pipe(
        Effect.timeout("5 seconds")
      )
    )
    vi.restoreAllMocks()
    expect(written.join("")).toBe("the answer ends event-sec")
  })
})
