/**
 * domain/answerParts: the parts of an answer in order, as every door shows them, and what relay
 * says of hostile file parts (bytes that are not base64, an image media type that lies, a part
 * with both bytes and a URL, ten thousand tiny files).
 */
import { Either, Schema } from "effect"
import { createHash } from "node:crypto"
import { describe, expect, it } from "vitest"
import { resultText } from "../../src/a2a/text.js"
import { partFromV03 } from "../../src/a2a/translate.js"
import * as V03 from "../../src/a2a/v03.js"
import * as V1 from "../../src/a2a/v1.js"
import { type AnswerPart, answerParts, mediaTypeLie } from "../../src/domain/answerParts.js"
import { messageResult } from "../../src/domain/results.js"

const base64 = (text: string | Buffer) => Buffer.from(text).toString("base64")
const sha256 = (text: string | Buffer) => createHash("sha256").update(text).digest("hex")
const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13])

const agentMessage = (parts: ReadonlyArray<V1.Part>): V1.Message => ({ messageId: "m", role: "ROLE_AGENT", parts: [...parts] })
const task = (fields: Partial<V1.Task>): V1.Task => ({ id: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" }, ...fields })

const none = {
  text: null,
  name: null,
  media_type: null,
  size: null,
  sha256: null,
  path: null,
  url: null,
  data: null,
  artifact_id: null,
  note: null
}

describe("answerParts", () => {
  it("gives each part of a direct message in order, every key present (null when absent)", () => {
    const parts = answerParts(agentMessage([
      { text: "Here you are" },
      { raw: base64("Hello, file"), filename: "hello.txt", mediaType: "text/plain" },
      { url: "https://files.example/report.pdf", filename: "report.pdf", mediaType: "application/pdf" },
      { data: { answer: 42, nested: { list: [1, 2] } } }
    ]))
    expect(parts).toEqual<ReadonlyArray<AnswerPart>>([
      { ...none, kind: "text", text: "Here you are" },
      { ...none, kind: "file", name: "hello.txt", media_type: "text/plain", size: 11, sha256: sha256("Hello, file") },
      { ...none, kind: "file", name: "report.pdf", media_type: "application/pdf", url: "https://files.example/report.pdf" },
      { ...none, kind: "data", data: { answer: 42, nested: { list: [1, 2] } } }
    ])
  })

  it("does not repeat the text of an answer of text alone: the result's text has it, the parts keep their places", () => {
    const chunks = task({ artifacts: [{ artifactId: "a1", parts: [{ text: "one " }, { text: "two" }] }] })
    expect(answerParts(chunks)).toEqual<ReadonlyArray<AnswerPart>>([
      { ...none, kind: "text", artifact_id: "a1" },
      { ...none, kind: "text", artifact_id: "a1" }
    ])
    expect(messageResult({ task: chunks }).text).toBe("one two")
  })

  it("takes the parts the text is taken from: artifacts (with their ids), else the status message, else the agent's history", () => {
    const withArtifacts = task({
      artifacts: [{ artifactId: "a1", parts: [{ text: "one" }] }, { artifactId: "a2", parts: [{ data: [1] }] }],
      status: { state: "TASK_STATE_COMPLETED", message: agentMessage([{ text: "status" }]) }
    })
    expect(answerParts(withArtifacts).map((part) => [part.kind, part.artifact_id])).toEqual([["text", "a1"], ["data", "a2"]])
    const fromStatus = task({ status: { state: "TASK_STATE_COMPLETED", message: agentMessage([{ raw: base64("x"), filename: "x" }]) } })
    expect(answerParts(fromStatus)).toMatchObject([{ kind: "file", name: "x", artifact_id: null }])
    const fromHistory = task({
      history: [{ ...agentMessage([{ text: "q" }, { data: 0 }]), role: "ROLE_USER" }, agentMessage([{ text: "a" }, { data: 1 }])]
    })
    expect(answerParts(fromHistory).map((part) => part.text ?? part.data)).toEqual(["a", 1])
  })

  it("puts the parts in every result beside the text, and a data part's text is its whole JSON, indented", () => {
    const data = { items: Array.from({ length: 40 }, (_, i) => `item ${i}`) }
    const result = messageResult({ message: agentMessage([{ data }]) })
    expect(result.text).toBe(JSON.stringify(data, null, 2))
    expect(result.parts).toEqual([{ ...none, kind: "data", data }])
  })

  it("says bytes that are not base64 are not saved, with no size", () => {
    const [part] = answerParts(agentMessage([{ raw: "not base64 at all!", filename: "x.bin" }]))
    expect(part).toEqual({ ...none, kind: "file", name: "x.bin", note: "not saved: its bytes are not base64" })
  })

  it("says when an image's media type lies about its bytes", () => {
    const parts = answerParts(agentMessage([
      { raw: base64("<script>alert(1)</script>"), filename: "cat.png", mediaType: "image/png" },
      { raw: base64(PNG), filename: "real.png", mediaType: "image/png; charset=binary" },
      { raw: base64(PNG), filename: "doc.txt", mediaType: "text/plain" }
    ]))
    expect(parts.map((part) => part.note)).toEqual(["its media type says image/png, but the bytes are not a PNG image", null, null])
    expect(mediaTypeLie("image/jpeg", Buffer.from([0xff, 0xd8, 0xff, 0xe0]))).toBeUndefined()
    expect(mediaTypeLie("IMAGE/GIF", Buffer.from("GIF89a...."))).toBeUndefined()
    expect(mediaTypeLie("image/webp", Buffer.from("RIFF\0\0\0\0WEBPVP8 "))).toBeUndefined()
    expect(mediaTypeLie("image/webp", Buffer.from("RIFF\0\0\0\0WAVE"))).toMatch(/not a WebP image/)
  })

  it("refuses a 1.0 part with both bytes and a URL when it is decoded, and reads a 0.3 file with both as its bytes", () => {
    const both = Schema.decodeUnknownEither(V1.Part)({ raw: base64("x"), url: "https://x.example/x", filename: "x" })
    expect(Either.isLeft(both)).toBe(true)
    expect(String(Either.isLeft(both) ? both.left.message : "")).toMatch(/exactly one of text, raw, url or data, but has several/)
    const v03 = Schema.decodeUnknownSync(V03.Part)({ kind: "file", file: { bytes: base64("x"), uri: "https://x.example/x", name: "x" } })
    expect(answerParts(agentMessage([partFromV03(v03)]))).toEqual([{ ...none, kind: "file", name: "x", size: 1, sha256: sha256("x") }])
  })

  it("lists 10 000 tiny file parts quickly, in order", () => {
    const parts = Array.from({ length: 10_000 }, (_, i): V1.Part => ({ raw: base64(String(i)), filename: `f${i}.txt` }))
    const started = Date.now()
    const views = answerParts(task({ artifacts: [{ artifactId: "a", parts }] }))
    expect(Date.now() - started).toBeLessThan(5_000)
    expect(views).toHaveLength(10_000)
    expect(views[9_999]).toMatchObject({ kind: "file", name: "f9999.txt", size: 4, artifact_id: "a" })
    expect(resultText(task({ artifacts: [{ artifactId: "a", parts }] })).split("\n")).toHaveLength(10_000)
  })
})

describe("files and data in the final status message of a task with artifacts", () => {
  it("are among the parts after the artifacts', once: the status text is not repeated, what the artifacts hold is not listed twice", () => {
    const report = { raw: base64("%PDF-1"), filename: "report.pdf", mediaType: "application/pdf" }
    const done = task({
      artifacts: [{ artifactId: "a1", parts: [{ text: "Report ready" }, { url: "https://files.test/a.csv" }, { data: { rows: 2 } }] }],
      status: {
        state: "TASK_STATE_COMPLETED",
        message: agentMessage([{ text: "Done" }, report, { url: "https://files.test/a.csv" }, { data: { pages: 1 } }, {
          data: { rows: 2 }
        }])
      }
    })
    expect(answerParts(done).map((part) => [part.kind, part.name ?? part.url ?? part.text ?? part.data, part.artifact_id])).toEqual([
      ["text", "Report ready", "a1"],
      ["file", "https://files.test/a.csv", "a1"],
      ["data", { rows: 2 }, "a1"],
      ["file", "report.pdf", null],
      ["data", { pages: 1 }, null]
    ])
    expect(answerParts(done)[3]).toMatchObject({ size: 6, sha256: sha256("%PDF-1") })
  })

  it("takes data the artifacts hold with its keys in another order as held", () => {
    const done = task({
      artifacts: [{ artifactId: "a1", parts: [{ text: "Rows" }, { data: { rows: 2, cols: { b: 1, a: 2 } } }] }],
      status: { state: "TASK_STATE_COMPLETED", message: agentMessage([{ text: "Done" }, { data: { cols: { a: 2, b: 1 }, rows: 2 } }]) }
    })
    expect(answerParts(done).map((part) => part.kind)).toEqual(["text", "data"])
  })
})
