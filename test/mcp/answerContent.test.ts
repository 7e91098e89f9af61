// The parts of an answer as MCP content (#29 item 6): images and audio inline when their bytes
// are what they claim and they fit, small UTF-8 text files embedded, data as JSON, every other
// file a resource_link (file:// for a saved file, http(s) for a linked one, nothing else), all
// within the per-result bounds.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"
import { MCP_ANSWER_CONTENT } from "../../src/domain/limits.js"
import { answerContent, type ContentLimits, type ContentPart, fileLink } from "../../src/mcp/answerContent.js"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"

const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-answer-content-"))
afterAll(() => Fs.rmSync(dir, { recursive: true, force: true }))

const PNG = Buffer.from(IMAGE_PNG_BASE64, "base64")
const WAV = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WAVEfmt "), Buffer.alloc(32)])

/** A saved file part: the bytes written under the test directory, described as relay describes them. */
const saved = (name: string, mediaType: string | null, bytes: Uint8Array): ContentPart => {
  const path = Path.join(dir, name)
  Fs.writeFileSync(path, bytes)
  return { kind: "file", name, media_type: mediaType, size: bytes.length, path, url: null, data: null }
}

const linkedPart = (url: string, mediaType: string | null = null): ContentPart => ({
  kind: "file",
  name: null,
  media_type: mediaType,
  size: null,
  path: null,
  url,
  data: null
})

const dataPart = (data: unknown): ContentPart => ({ kind: "data", name: null, media_type: null, size: null, path: null, url: null, data })

const contentOf = (parts: ReadonlyArray<ContentPart>, limits?: ContentLimits) =>
  Effect.runPromise(answerContent(parts, limits).pipe(Effect.provide(NodeContext.layer)))

describe("answerContent", () => {
  it("shows a PNG as image content, its bytes base64, its type from its bytes", async () => {
    const [block] = await contentOf([saved("relay.png", "image/png", PNG)])
    expect(block).toEqual({ type: "image", data: IMAGE_PNG_BASE64, mimeType: "image/png" })
  })

  it("calls an image what its bytes are, not what the agent said (a PNG sent as image/jpeg)", async () => {
    const [block] = await contentOf([saved("relay.jpg", "image/jpeg", PNG)])
    expect(block).toMatchObject({ type: "image", mimeType: "image/png" })
  })

  it("links an 'image/png' whose bytes are no image, saying so", async () => {
    const part = saved("lie.png", "image/png", Buffer.from("<script>not a picture</script>"))
    const [block] = await contentOf([part])
    expect(block).toEqual({
      type: "resource_link",
      uri: pathToFileURL(part.path!).href,
      name: "lie.png",
      mimeType: "image/png",
      size: part.size,
      description: "its bytes are not image/png"
    })
  })

  it("links an image past the media limit instead of inlining it", async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(MCP_ANSWER_CONTENT.mediaBytes + 1 - PNG.length)])
    const [block] = await contentOf([saved("big.png", "image/png", big)])
    expect(block).toMatchObject({ type: "resource_link", name: "big.png", size: MCP_ANSWER_CONTENT.mediaBytes + 1 })
    expect((block as { description: string }).description).toContain("over 5 MiB")
  })

  it("shows audio as audio content when its bytes are audio, and links it when they are not", async () => {
    const [audio, lie] = await contentOf([saved("hi.wav", "audio/wav", WAV), saved("lie.mp3", "audio/mpeg", Buffer.from("plain text"))])
    expect(audio).toEqual({ type: "audio", data: WAV.toString("base64"), mimeType: "audio/wav" })
    expect(lie).toMatchObject({ type: "resource_link", name: "lie.mp3", description: "its bytes are not audio/mpeg" })
  })

  it("embeds a small text file or JSON with its text; links text that is not UTF-8 or past 256 KiB", async () => {
    const text = saved("hello.txt", "text/plain; charset=utf-8", Buffer.from("Hello, files! ✓\n"))
    const json = saved("form.json", "application/json", Buffer.from("{\"a\":1}"))
    const latin1 = saved("latin1.txt", "text/plain", Buffer.from([0x63, 0x61, 0x66, 0xe9]))
    const large = saved("large.txt", "text/plain", Buffer.alloc(MCP_ANSWER_CONTENT.textBytes + 1, "a"))
    const blocks = await contentOf([text, json, latin1, large])
    expect(blocks[0]).toEqual({
      type: "resource",
      resource: { uri: pathToFileURL(text.path!).href, text: "Hello, files! ✓\n", mimeType: "text/plain; charset=utf-8" }
    })
    expect(blocks[1]).toMatchObject({ type: "resource", resource: { text: "{\"a\":1}", mimeType: "application/json" } })
    expect(blocks[2]).toMatchObject({ type: "resource_link", name: "latin1.txt", description: "its bytes are not UTF-8 text" })
    expect(blocks[3]).toMatchObject({ type: "resource_link", name: "large.txt" })
  })

  it("links any other file, such as a PDF, to its saved copy", async () => {
    const pdf = saved("report.pdf", "application/pdf", Buffer.from("%PDF-1.7\n"))
    expect(await contentOf([pdf])).toEqual([
      { type: "resource_link", uri: pathToFileURL(pdf.path!).href, name: "report.pdf", mimeType: "application/pdf", size: 9 }
    ])
  })

  it("links a file given by an http(s) URL, and nothing for another scheme", async () => {
    const blocks = await contentOf([
      linkedPart("https://files.example/a/report.pdf?v=2", "application/pdf"),
      linkedPart("file:///etc/passwd")
    ])
    expect(blocks).toEqual([{
      type: "resource_link",
      uri: "https://files.example/a/report.pdf?v=2",
      name: "report.pdf",
      mimeType: "application/pdf"
    }])
  })

  it("gives each data part as one JSON text block, whole; text parts add nothing (the summary has them)", async () => {
    const data = { form: { name: "Ada", long: "x".repeat(500) } }
    const text: ContentPart = { kind: "text", name: null, media_type: "text/plain", size: null, path: null, url: null, data: null }
    expect(await contentOf([text, dataPart(data), dataPart([1, 2])])).toEqual([
      { type: "text", text: JSON.stringify(data) },
      { type: "text", text: "[1,2]" }
    ])
  })

  it("inlines at most the result's budget: past it, images are linked", async () => {
    const limits: ContentLimits = { ...MCP_ANSWER_CONTENT, inlineBytes: Math.ceil(PNG.length / 3) * 4 + 10 }
    const first = saved("first.png", "image/png", PNG)
    const second = saved("second.png", "image/png", PNG)
    const [one, two] = await contentOf([first, second], limits)
    expect(one).toMatchObject({ type: "image" })
    expect(two).toMatchObject({ type: "resource_link", name: "second.png" })
    expect((two as { description: string }).description).toContain("already carries")
  })

  it("counts text and data inline as sent, escapes and all: control characters and quotes cannot take a result past its budget", async () => {
    const limits: ContentLimits = { ...MCP_ANSWER_CONTENT, inlineBytes: 64 * 1024 }
    // Each 8 KiB as read: 48 KiB as sent (\u0001 is six characters in JSON), and 16 KiB of quotes twice escaped (32 KiB).
    const controls = Array.from({ length: 4 }, (_, n) => saved(`controls-${n}.txt`, "text/plain", Buffer.alloc(8 * 1024, 1)))
    const quotes = Array.from({ length: 4 }, () => dataPart("\"".repeat(8 * 1024)))
    const blocks = await contentOf([...controls, ...quotes], limits)
    const sent = blocks.reduce((total, block) => total + Buffer.byteLength(JSON.stringify(block)), 0)
    expect(sent).toBeLessThan(limits.inlineBytes + 4 * 1024)
    expect(blocks[0]).toMatchObject({ type: "resource" })
    expect(blocks[1]).toMatchObject({ type: "resource_link", name: "controls-1.txt" })
    expect(blocks.filter((block) => block.type === "text" && block.text.startsWith("[data:"))).toHaveLength(4)
  })

  it("makes at most `blocks` blocks and counts the rest in one line", async () => {
    const parts = Array.from({ length: 10_000 }, (_, index) => dataPart(index))
    const blocks = await contentOf(parts)
    expect(blocks).toHaveLength(MCP_ANSWER_CONTENT.blocks + 1)
    expect(blocks.at(-1)).toEqual({
      type: "text",
      text: `[… and ${10_000 - MCP_ANSWER_CONTENT.blocks} more file or data parts, in structuredContent.parts]`
    })
  })

  it("links a saved file that is gone (nothing read, no failure)", async () => {
    const gone: ContentPart = {
      kind: "file",
      name: "gone.png",
      media_type: "image/png",
      size: 10,
      path: Path.join(dir, "missing.png"),
      url: null,
      data: null
    }
    expect(await contentOf([gone])).toMatchObject([{ type: "resource_link", name: "gone.png" }])
  })
})

describe("fileLink", () => {
  it("names a nameless saved file after its path", () => {
    expect(fileLink({ name: null, media_type: null, size: null, path: "/state/files/t1/file.bin", url: null })).toEqual({
      type: "resource_link",
      uri: "file:///state/files/t1/file.bin",
      name: "file.bin"
    })
  })
})
