/**
 * A request's body is the bytes of its JSON, whether a file's base64 in it was spliced in as it is
 * or written out (issue 29: no JSON text copy of a file on the way out).
 */
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { jsonBody } from "../../src/services/a2aClient/exchange.js"

const asJson = (value: unknown) => new TextEncoder().encode(JSON.stringify(value))

describe("jsonBody", () => {
  it("is the UTF-8 JSON of a request holding files, text and look-alikes of its marks", () => {
    const standard = randomBytes(300_000).toString("base64")
    const urlSafe = randomBytes(200_001).toString("base64url")
    const value = {
      jsonrpc: "2.0",
      params: {
        message: {
          parts: [
            { text: "héllo \"quoted\" \n ✓ relay-spliced-0" },
            { raw: standard, filename: "a.bin" },
            { raw: urlSafe, filename: "b.bin", mediaType: "application/octet-stream" },
            { raw: standard },
            { data: { long: "x".repeat(70_000) + "\u0000", small: "QUJD" } }
          ]
        }
      }
    }
    expect(Buffer.from(jsonBody(value)).equals(Buffer.from(asJson(value)))).toBe(true)
  })

  it("is the UTF-8 JSON of a value with nothing to splice", () => {
    const value = { id: 1, text: "ünïcode", nested: [null, true, 2.5] }
    expect(Buffer.from(jsonBody(value)).equals(Buffer.from(asJson(value)))).toBe(true)
  })
})
