// The shared limits' helpers: measuring and cutting nesting without recursion, and the strict
// RFC 3339 reading of ProtoJSON timestamps.
import { describe, expect, it } from "vitest"
import { cutBelowDepth, exceedsJsonDepth, MAX_JSON_DEPTH } from "../../src/domain/limits.js"
import { timestampCeilMillis } from "../../src/domain/timestamp.js"
import { nested } from "../fuzz/corpus.js"

describe("exceedsJsonDepth and cutBelowDepth", () => {
  it("counts the root as level 1, objects and arrays alike, scalars as no level", () => {
    expect(exceedsJsonDepth(JSON.parse(nested("mixed", MAX_JSON_DEPTH).json))).toBe(false)
    expect(exceedsJsonDepth(JSON.parse(nested("mixed", MAX_JSON_DEPTH + 1).json))).toBe(true)
    expect(exceedsJsonDepth({ a: 1 }, 1)).toBe(false)
    expect(exceedsJsonDepth({ a: [] }, 1)).toBe(true)
    expect(exceedsJsonDepth("text", 0)).toBe(false)
  })

  it("cuts what nests too deep (even 200 000 levels) and keeps the rest, __proto__ keys included", () => {
    const deep = JSON.parse(`{"keep":[1,{"x":"y"}],"__proto__":{"a":1},"deep":${nested("arrays", 200_000).json}}`) as Record<
      string,
      unknown
    >
    const cut = cutBelowDepth(deep, 3) as Record<string, unknown>
    expect(exceedsJsonDepth(cut, 3)).toBe(false)
    expect(cut["keep"]).toEqual([1, { x: "y" }])
    expect(Object.getPrototypeOf(cut)).toBe(Object.prototype)
    expect(Object.hasOwn(cut, "__proto__")).toBe(true)
    expect(JSON.stringify(cut)).toBe(`{"keep":[1,{"x":"y"}],"__proto__":{"a":1},"deep":{"k":[null]}}`)
    expect(cutBelowDepth("scalar", 1)).toBe("scalar")
  })
})

describe("timestampCeilMillis", () => {
  it("reads RFC 3339 as ProtoJSON writes it: Z or an offset, zero to nine fraction digits", () => {
    expect(timestampCeilMillis("2025-01-31T12:00:00Z")).toBe(Date.UTC(2025, 0, 31, 12))
    expect(timestampCeilMillis("2025-01-31T12:00:00.5Z")).toBe(Date.UTC(2025, 0, 31, 12, 0, 0, 500))
    expect(timestampCeilMillis("2025-01-31T12:00:00.123456789Z")).toBe(Date.UTC(2025, 0, 31, 12, 0, 0, 124))
    expect(timestampCeilMillis("2025-01-31T12:00:00.123000000Z")).toBe(Date.UTC(2025, 0, 31, 12, 0, 0, 123))
    expect(timestampCeilMillis("2025-01-31T13:30:00+01:30")).toBe(Date.UTC(2025, 0, 31, 12))
    expect(timestampCeilMillis("2025-01-31T10:00:00-02:00")).toBe(Date.UTC(2025, 0, 31, 12))
    expect(timestampCeilMillis("2024-02-29T00:00:00Z")).toBe(Date.UTC(2024, 1, 29))
    expect(timestampCeilMillis("0001-01-01T00:00:00Z")).toBe(-62135596800000)
    expect(timestampCeilMillis("9999-12-31T23:59:59.999999999Z")).toBe(253402300800000)
  })

  it("refuses everything else, which Date.parse would take", () => {
    for (
      const text of [
        "-1",
        "1",
        "12/31/2020",
        "2020-01-01",
        "2020-01-01T00:00:00",
        "2020-01-01T00:00Z",
        "2020-01-01 00:00:00Z",
        "2020-01-01t00:00:00z",
        "2023-02-29T00:00:00Z",
        "2020-04-31T00:00:00Z",
        "2020-00-10T00:00:00Z",
        "2020-01-01T23:60:00Z",
        "2020-01-01T00:00:00.Z",
        "2020-01-01T00:00:00+0100",
        "2020-01-01T00:00:00+01:60",
        "+002020-01-01T00:00:00Z",
        " 2020-01-01T00:00:00Z"
      ]
    ) {
      expect(timestampCeilMillis(text), text).toBeUndefined()
    }
  })
})
