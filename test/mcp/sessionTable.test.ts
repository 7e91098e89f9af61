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
})
