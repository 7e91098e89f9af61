// The content checks of file parts the agent server makes (src/a2a/parts.ts): base64 as ProtoJSON
// reads bytes, and the standard spelling relay stores and answers with.
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { base64Pieces, base64Size, isBase64, mediaTypeEssence, standardBase64 } from "../../src/a2a/parts.js"

describe("isBase64", () => {
  it.each(["", "AA==", "AAA=", "AAAA", "AA", "AAA", "+/8=", "-_8=", "-_8", "aGVsbG8gZmlsZQ=="])("takes %j", (text) => {
    expect(isBase64(text)).toBe(true)
  })

  it.each([
    ["a single digit too many", "A"],
    ["five digits", "AAAAA"],
    ["both alphabets at once", "+_8="],
    ["padding in the middle", "QUJD=QUJD"],
    ["padding that leaves a length not a multiple of 4", "AAAAA="],
    ["three padding characters", "A==="],
    ["blanks", "AA AA"],
    ["a character of neither alphabet", "AA*A"],
    ["text", "not base64!"]
  ])("refuses %s (%j)", (_, text) => {
    expect(isBase64(text)).toBe(false)
  })
})

describe("standardBase64", () => {
  it("leaves standard padded base64 as it is and spells URL-safe or unpadded base64 the standard way, same bytes", () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xfe, 0x01, 0x02])
    expect(standardBase64(bytes.toString("base64"))).toBe(bytes.toString("base64"))
    expect(standardBase64(bytes.toString("base64url"))).toBe(bytes.toString("base64"))
    expect(standardBase64(bytes.toString("base64").replace(/=+$/, ""))).toBe(bytes.toString("base64"))
  })
})

describe("mediaTypeEssence", () => {
  it("drops parameters and case", () => {
    expect(mediaTypeEssence(" Text/Plain; charset=UTF-8")).toBe("text/plain")
    expect(mediaTypeEssence(undefined)).toBe("")
  })
})

describe("base64Pieces", () => {
  it("decodes megabytes of base64, either alphabet, padded or not, to the same bytes a piece at a time", () => {
    const bytes = randomBytes(2_500_001)
    for (const base64 of [bytes.toString("base64"), bytes.toString("base64url")]) {
      // Each piece is good until the next: copied as it comes.
      const pieces = Array.from(base64Pieces(base64), (piece) => Buffer.from(piece))
      expect(pieces.length).toBeGreaterThan(1)
      expect(Buffer.concat(pieces).equals(bytes)).toBe(true)
      expect(base64Size(base64)).toBe(bytes.length)
    }
  })
})
