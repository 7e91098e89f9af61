/**
 * The agent server's scheduler (src/servers/scheduler.ts): the fibers share one queue, so what
 * they schedule together runs in one batch; what a batch schedules waits for the next one, after
 * the event loop's other immediates (the sockets' turn).
 */
import { Effect, Scheduler } from "effect"
import { describe, expect, it } from "vitest"
import { makeSharedBatched } from "../../src/servers/scheduler.js"

/** Resolves once every immediate queued so far (and those they queue, `depth` deep) has run. */
const settle = (depth = 4): Promise<void> =>
  new Promise((resolve) => {
    const next = (left: number) => setImmediate(() => (left === 0 ? resolve() : next(left - 1)))
    next(depth)
  })

describe("the shared batched scheduler", () => {
  it("runs what several fibers scheduled together in one batch, before an immediate queued in between", async () => {
    const scheduler = makeSharedBatched()
    const ran: Array<string> = []
    const fork = (name: string) => Effect.runFork(Effect.sync(() => void ran.push(name)), { scheduler, immediate: false })
    fork("first fiber")
    setImmediate(() => ran.push("an immediate"))
    fork("second fiber")
    await settle()
    // Effect's makeBatched gives each fiber a runner and a setImmediate of its own: the immediate would come between.
    expect(ran).toEqual(["first fiber", "second fiber", "an immediate"])
  })

  it("runs a batch in priority order, and what a batch schedules in the next one, after the immediates queued meanwhile", async () => {
    const scheduler = makeSharedBatched()
    const ran: Array<string> = []
    scheduler.scheduleTask(() => {
      ran.push("priority 1")
      setImmediate(() => ran.push("an immediate"))
      scheduler.scheduleTask(() => ran.push("scheduled by the batch"), 0)
    }, 1)
    scheduler.scheduleTask(() => ran.push("priority 0"), 0)
    await settle()
    expect(ran).toEqual(["priority 0", "priority 1", "an immediate", "scheduled by the batch"])
  })

  it("runs the rest of a batch, and later batches, when a task throws; the error is reported after the batch", async () => {
    const errors: Array<unknown> = []
    const scheduler = makeSharedBatched((error) => errors.push(error))
    const ran: Array<string> = []
    scheduler.scheduleTask(() => {
      throw new Error("a runtime bug")
    }, 0)
    scheduler.scheduleTask(() => ran.push("after the throw"), 0)
    await settle()
    scheduler.scheduleTask(() => ran.push("a later batch"), 0)
    await settle()
    expect(ran).toEqual(["after the throw", "a later batch"])
    expect(errors).toEqual([new Error("a runtime bug")])
  })

  it("yields a busy fiber as Effect's schedulers do", () => {
    expect(makeSharedBatched().shouldYield).toBe(Scheduler.defaultShouldYield)
  })
})
