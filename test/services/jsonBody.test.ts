/**
 * A request's body is the bytes of its JSON, whether a file's base64 in it went out in pieces
 * straight from its string or was written out (issue 29: no JSON text copy of a file on the way out).
 */
import { HttpBody } from "@effect/platform"
import { randomBytes } from "node:crypto"
import { describe, expect, it } from "vitest"
import { jsonBody } from "../../src/services/a2aClient/exchange.js"

/** The bytes a body sends, and the length it announces. */
const sent = async (body: HttpBody.HttpBody) => {
  if (body._tag === "Uint8Array") return { bytes: Buffer.from(body.body), length: body.contentLength }
  if (body._tag !== "Raw") throw new Error(`unexpected body ${body._tag}`)
  const chunks: Array<Uint8Array> = []
  for await (const chunk of body.body as AsyncIterable<Uint8Array>) chunks.push(chunk)
  return { bytes: Buffer.concat(chunks), length: body.contentLength }
}

const expectJsonOf = async (value: unknown) => {
  const json = Buffer.from(JSON.stringify(value))
  const body = jsonBody(value, "application/json")
  expect(body.contentType).toBe("application/json")
  const { bytes, length } = await sent(body)
  expect(bytes.equals(json)).toBe(true)
  expect(length).toBe(json.length)
  return body
}

describe("jsonBody", () => {
  it("sends the UTF-8 JSON of a request holding files, text and look-alikes of its marks, files in pieces", async () => {
    const standard = randomBytes(1_600_000).toString("base64")
    const urlSafe = randomBytes(200_001).toString("base64url")
    const body = await expectJsonOf({
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
    })
    expect(body._tag).toBe("Raw")
  })

  it("sends a value with nothing to splice as one piece", async () => {
    const body = await expectJsonOf({ id: 1, text: "ünïcode", nested: [null, true, 2.5] })
    expect(body._tag).toBe("Uint8Array")
  })
})
