// Flat random ids: RFC 9562 version 4 UUIDs as crypto.randomUUID writes them, all different.
import { describe, expect, it } from "vitest"
import { randomId } from "../../src/domain/ids.js"

const UUID_V4 = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe("randomId", () => {
  it("makes version 4 UUIDs, lower-case, across several refills of its random block", () => {
    const ids = Array.from({ length: 2_000 }, randomId)
    for (const id of ids) expect(id).toMatch(UUID_V4)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it("uses every hex digit in every free position (the bytes are random, not a pattern)", () => {
    const seen = Array.from({ length: 36 }, () => new Set<string>())
    for (let count = 0; count < 3_000; count++) [...randomId()].forEach((char, index) => seen[index]!.add(char))
    const fixed = new Map([[8, 1], [13, 1], [14, 1], [18, 1], [19, 4], [23, 1]])
    seen.forEach((chars, index) => expect(chars.size, `position ${index}`).toBe(fixed.get(index) ?? 16))
  })

  it("returns ids that stay as they were when later ones are made (no shared buffer behind them)", () => {
    const first = randomId()
    const copy = `${first}`.slice()
    for (let count = 0; count < 600; count++) randomId()
    expect(first).toBe(copy)
  })
})
