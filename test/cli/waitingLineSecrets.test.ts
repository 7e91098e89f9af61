/**
 * The line a terminal shows while the agent is silent (progress.ts waitingLine) quotes the agent's
 * status text: a secret given for the call, echoed there, is masked as in every other print.
 */
import { Effect } from "effect"
import { afterEach, describe, expect, it, vi } from "vitest"
import { addCallSecret } from "../../src/cli/output.js"
import { progressPrinter } from "../../src/cli/progress.js"
import { maskSecret } from "../../src/domain/secrets.js"
import type { TaskUpdate } from "../../src/programs/taskUpdates.js"

const TOKEN = "waiting-secret-0123456789abcdef"
addCallSecret(TOKEN)

const working: TaskUpdate = {
  view: {
    task_id: "t1",
    context_id: null,
    state: "working",
    needs_input: false,
    needs_auth: false,
    kind: "task",
    updated_at: null
  },
  delta: "",
  replaced: false,
  status: `checking with ${TOKEN}`,
  parts: []
}

const wasTTY = Object.getOwnPropertyDescriptor(process.stderr, "isTTY")

afterEach(() => {
  vi.restoreAllMocks()
  if (wasTTY === undefined) delete (process.stderr as { isTTY?: boolean }).isTTY
  else Object.defineProperty(process.stderr, "isTTY", wasTTY)
})

describe("the waiting line on a terminal", () => {
  it("shows the agent's status with the call's secret masked", async () => {
    Object.defineProperty(process.stderr, "isTTY", { value: true, configurable: true, writable: true })
    const written: Array<string> = []
    vi.spyOn(process.stderr, "write").mockImplementation((chunk: unknown) => {
      written.push(String(chunk))
      return true
    })
    const progress = progressPrinter({ streamText: false, showStates: true })
    // Silent past the moment the line is first drawn (300 ms), bounded.
    await Effect.runPromise(
      progress.whileWaiting(Effect.zipRight(progress.onUpdate(working), Effect.sleep("700 millis"))).pipe(
        Effect.timeout("5 seconds")
      )
    )
    vi.restoreAllMocks()
    const drawn = written.join("")
    expect(drawn).toContain(`working: checking with ${maskSecret(TOKEN)}`)
    expect(drawn).not.toContain(TOKEN)
  })
})
