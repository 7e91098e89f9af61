/**
 * The parts of an agent's answer as MCP content, after the summary, so an assistant sees what the
 * agent sent and not only its name: images as `image` content and audio as `audio` content (their
 * bytes, read back from where relay saved them, must be the format they claim: an agent that
 * calls garbage `image/png` gets a link instead), small text files as an embedded `resource` with
 * their text, data parts as their JSON, and every other file as a `resource_link` to the saved
 * file (`file://`) or to its http(s) URL. The structured content keeps every part as well.
 *
 * Bounded: each image or audio file at most 5 MiB, each text file or data part at most 256 KiB, all that goes
 * inline in one result at most 8 MiB (as sent: base64, and text as a JSON string, escapes and all),
 * and at most 100 blocks; past any of these a file is linked instead, and past the last the
 * rest are counted in one line.
 */
import { FileSystem } from "@effect/platform"
import type { ContentBlock, ResourceLink } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { mediaTypeEssence } from "../a2a/parts.js"
import type { AnswerPart } from "../domain/answerParts.js"
import { MCP_ANSWER_CONTENT } from "../domain/limits.js"
import { audioTypeOf, imageTypeOf, isTextLike } from "../domain/mediaTypes.js"

/** What the MCP door needs of an answer part. */
export type ContentPart = Pick<AnswerPart, "kind" | "name" | "media_type" | "size" | "path" | "url" | "data">

/** A file relay saved or an agent linked (an answer's, or a push notification's): what a `resource_link` says of it. */
export type LinkedFile = Pick<AnswerPart, "name" | "media_type" | "size" | "path" | "url">

export interface ContentLimits {
  /** Largest image or audio file shown inline. */
  readonly mediaBytes: number
  /** Largest text file embedded with its text. */
  readonly textBytes: number
  /** Most bytes all inline content of one result may take, as sent (base64 for media). */
  readonly inlineBytes: number
  /** Most content blocks for the parts of one result. */
  readonly blocks: number
}

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4

const isHttp = (url: string) => /^https?:\/\//i.test(url)

/**
 * A link to the file: the saved copy, else its http(s) URL (never another scheme: an agent's
 * `file:///etc/passwd` must not become a link for the assistant to open); undefined when neither.
 */
export const fileLink = (file: LinkedFile, description?: string): ResourceLink | undefined => {
  const uri = file.path !== null ? pathToFileURL(file.path).href : file.url !== null && isHttp(file.url) ? file.url : undefined
  if (uri === undefined) return undefined
  const name = file.name ?? (file.path !== null ? Path.basename(file.path) : Path.posix.basename(new URL(uri).pathname) || "file")
  return {
    type: "resource_link",
    uri,
    name,
    ...(file.media_type === null ? {} : { mimeType: file.media_type }),
    ...(file.size === null ? {} : { size: file.size }),
    ...(description === undefined ? {} : { description })
  }
}

/** The saved file's bytes when it is a regular file of at most `maxBytes`; undefined otherwise (then it is linked). */
const readSaved = (path: string, maxBytes: number) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const info = yield* fs.stat(path)
    if (info.type !== "File" || Number(info.size) > maxBytes) return undefined
    const bytes = yield* fs.readFile(path)
    return bytes.length > maxBytes ? undefined : bytes
  }).pipe(Effect.orElseSucceed(() => undefined))

const utf8 = new TextDecoder("utf-8", { fatal: true })

const decodeUtf8 = (bytes: Uint8Array): string | undefined => {
  try {
    return utf8.decode(bytes)
  } catch {
    return undefined
  }
}

/** A block for one part, and the inline bytes it takes. */
interface Placed {
  readonly block: ContentBlock | undefined
  readonly inlineBytes: number
}

const linked = (file: LinkedFile, description?: string): Placed => ({ block: fileLink(file, description), inlineBytes: 0 })

const megabytes = (bytes: number) => `${bytes / (1024 * 1024)} MiB`

/** An image or audio file as such when its bytes are one of the formats relay knows; else a link saying why. */
const mediaBlock = (part: ContentPart, path: string, kind: "image" | "audio", limits: ContentLimits, room: number) =>
  Effect.gen(function*() {
    const size = part.size ?? Infinity
    if (size > limits.mediaBytes) return linked(part, `${kind} over ${megabytes(limits.mediaBytes)}: saved, not shown`)
    if (base64Length(size) > room) return linked(part, `not shown: this result already carries ${megabytes(limits.inlineBytes)} inline`)
    const bytes = yield* readSaved(path, Math.min(limits.mediaBytes, size))
    if (bytes === undefined) return linked(part)
    const sniffed = kind === "image" ? imageTypeOf(bytes) : audioTypeOf(bytes)
    if (sniffed === undefined) return linked(part, `its bytes are not ${part.media_type ?? kind}`)
    const data = Buffer.from(bytes).toString("base64")
    return { block: { type: kind, data, mimeType: sniffed }, inlineBytes: data.length } satisfies Placed
  })

/**
 * The bytes text takes in the MCP message, as a JSON string: a quote or a control character takes
 * two to six, so text is measured as sent, not as read.
 */
const sentBytes = (text: string) => Buffer.byteLength(JSON.stringify(text))

/** A small text file embedded with its text, when it is UTF-8; else a link. */
const textBlock = (part: ContentPart, path: string, limits: ContentLimits, room: number) =>
  Effect.gen(function*() {
    const size = part.size ?? Infinity
    if (size > limits.textBytes || size > room) return linked(part)
    const bytes = yield* readSaved(path, Math.min(limits.textBytes, size))
    const text = bytes === undefined ? undefined : decodeUtf8(bytes)
    if (text === undefined) return linked(part, bytes === undefined ? undefined : "its bytes are not UTF-8 text")
    const inlineBytes = sentBytes(text)
    if (inlineBytes > room) return linked(part, `not shown: this result already carries ${megabytes(limits.inlineBytes)} inline`)
    const resource = { uri: pathToFileURL(path).href, text, ...(part.media_type === null ? {} : { mimeType: part.media_type }) }
    return { block: { type: "resource", resource }, inlineBytes } satisfies Placed
  })

/** A data part's JSON, when it is no larger than a text file shown inline (both as sent); else a line saying where it is. */
const dataBlock = (part: ContentPart, limits: ContentLimits, room: number): Placed => {
  const json = JSON.stringify(part.data) ?? "null"
  const bytes = sentBytes(json)
  return bytes > Math.min(room, limits.textBytes)
    ? { block: { type: "text", text: `[data: ${Buffer.byteLength(json)} bytes of JSON, in structuredContent.parts]` }, inlineBytes: 0 }
    : { block: { type: "text", text: json }, inlineBytes: bytes }
}

const fileBlock = (part: ContentPart, limits: ContentLimits, room: number): Effect.Effect<Placed, never, FileSystem.FileSystem> => {
  if (part.path === null) return Effect.succeed(linked(part))
  const essence = mediaTypeEssence(part.media_type ?? undefined)
  if (essence.startsWith("image/")) return mediaBlock(part, part.path, "image", limits, room)
  if (essence.startsWith("audio/")) return mediaBlock(part, part.path, "audio", limits, room)
  if (isTextLike(essence)) return textBlock(part, part.path, limits, room)
  return Effect.succeed(linked(part))
}

/** The content blocks for an answer's parts, in their order (text parts are in the summary already). */
export const answerContent = (
  parts: ReadonlyArray<ContentPart>,
  limits: ContentLimits = MCP_ANSWER_CONTENT
): Effect.Effect<Array<ContentBlock>, never, FileSystem.FileSystem> =>
  Effect.gen(function*() {
    const blocks: Array<ContentBlock> = []
    const shown = parts.filter((part) => part.kind !== "text")
    let inline = 0
    for (const part of shown.slice(0, limits.blocks)) {
      const room = limits.inlineBytes - inline
      const placed = part.kind === "data" ? dataBlock(part, limits, room) : yield* fileBlock(part, limits, room)
      inline += placed.inlineBytes
      if (placed.block !== undefined) blocks.push(placed.block)
    }
    const left = shown.length - limits.blocks
    if (left > 0) blocks.push({ type: "text", text: `[… and ${left} more file or data parts, in structuredContent.parts]` })
    return blocks
  })

/** Links to files already described elsewhere (push notifications' files): at most `blocks`, the rest counted. */
export const fileLinks = (
  files: ReadonlyArray<LinkedFile>,
  limits: Pick<ContentLimits, "blocks"> = MCP_ANSWER_CONTENT
): Array<ContentBlock> => {
  const links = files.flatMap((file) => fileLink(file) ?? [])
  const left = links.length - limits.blocks
  return left > 0
    ? [...links.slice(0, limits.blocks), { type: "text", text: `[… and ${left} more files, in the structured result]` }]
    : links
}
