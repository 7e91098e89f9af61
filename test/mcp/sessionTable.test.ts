import { describe, expect, it } from "vitest"
import { makeSessionTable } from "../../src/mcp/sessionTable.js"

const within = <A>(what: string, promise: Promise<A>, ms: number) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`${what} took over ${ms} ms`)), ms))])

describe("the MCP session table", () => {
  it("gives an evicted session's place on once its close took too long: a close that never ends holds no place for good", async () => {
    const evicted: Array<string> = []
    const table = makeSessionTable<string>(1, (id) => void evicted.push(id), { closeWaitMs: 50 })
    const hung = { transport: "first", close: () => new Promise<void>(() => undefined) }
    expect(await table.withPlace(async (place) => place.fill("first", hung))).toBe(true)
    const second = table.withPlace(async (place) => place.fill("second", { transport: "second", close: async () => undefined }))
    expect(await within("the second session's place", second, 2_000)).toBe(true)
    expect(evicted).toEqual(["first"])
    expect(table.use("second")).toBe("second")
    expect(table.use("first")).toBeUndefined()
  })

  it("holds the place of a session its client ended until its close ends: a new server is made only once the old one is gone", async () => {
    const table = makeSessionTable<string>(1, () => undefined, { closeWaitMs: 5_000 })
    let closes = 0
    let finishClose: () => void = () => undefined
    const closing = new Promise<void>((resolve) => (finishClose = resolve))
    const first = { transport: "first", close: () => (closes += 1, closing) }
    expect(await table.withPlace(async (place) => place.fill("first", first))).toBe(true)
    table.release("first")
    table.release("first")
    expect(closes).toBe(1)
    expect(table.use("first")).toBeUndefined()
    const second = (place: Parameters<Parameters<typeof table.withPlace>[0]>[0]) =>
      Promise.resolve(place.fill("second", { transport: "second", close: async () => undefined }))
    // While it closes, its place is held: the open is refused (503 Busy at the door).
    expect(await table.withPlace(second)).toBe(false)
    finishClose()
    await closing
    await new Promise((resolve) => setImmediate(resolve))
    expect(await within("the second session's place", table.withPlace(second), 2_000)).toBe(true)
    expect(table.use("second")).toBe("second")
  })
})
