/**
 * What a language model (OpenAI-compatible or Ollama) receives of the parts of a user's message:
 * text as text; images (PNG, JPEG, GIF, WebP; bytes, or an http(s) URL) as image inputs; text-like
 * files (text/*, JSON, XML, YAML, …) as their text under a line naming them; data parts as their
 * whole JSON; any other file as one line naming it (name, media type, size or URL). A file whose
 * bytes are not what its media type says (an "image" that is not one, "text" that is not UTF-8)
 * is named, with what is wrong, instead of being passed on. Each provider then writes the image
 * inputs its own way (Responses `input_image`, Chat Completions `image_url`, Ollama `images`).
 */
import type * as Prompt from "@effect/ai/Prompt"
import { allText, bytesOf, mediaTypeEssence } from "../../a2a/parts.js"
import { partsText, partText } from "../../a2a/text.js"
import type * as V1 from "../../a2a/v1.js"
import type { ModelModes } from "../../domain/agentTurn.js"

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, index) => bytes[at + index] === byte)

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0))

/** The image types models take, each with the first bytes every such file starts with. */
const IMAGE_SIGNATURES: Readonly<Record<string, (bytes: Uint8Array) => boolean>> = {
  "image/png": (bytes) => startsWith(bytes, [0x89, ...ascii("PNG\r\n"), 0x1a, 0x0a]),
  "image/jpeg": (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]),
  "image/gif": (bytes) => startsWith(bytes, ascii("GIF8")),
  "image/webp": (bytes) => startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8)
}

export const IMAGE_TYPES: ReadonlyArray<string> = Object.keys(IMAGE_SIGNATURES)

const TEXT_LIKE_TYPES: ReadonlySet<string> = new Set([
  "application/json",
  "application/x-ndjson",
  "application/xml",
  "application/yaml",
  "application/x-yaml",
  "application/toml",
  "application/javascript",
  "application/x-sh",
  "application/sql",
  "application/graphql"
])

/** Whether a file of this media type (its essence) is text a model can read as it is. */
export const isTextLike = (essence: string): boolean =>
  essence.startsWith("text/") || TEXT_LIKE_TYPES.has(essence) || essence.endsWith("+json") || essence.endsWith("+xml")

/** What a language model takes (text, data, text-like files, images) and gives (text). */
export const languageModelModes: ModelModes = {
  input: ["text/plain", "text/markdown", "text/csv", "application/json", ...IMAGE_TYPES],
  output: ["text/plain"]
}

export type UserPart = Prompt.TextPartEncoded | Prompt.FilePartEncoded

const line = (text: string): UserPart => ({ type: "text", text })

/** One line naming the file (see partText), with why its content is not passed on, if that is not plain. */
const fileLine = (part: V1.RawPart | V1.UrlPart, problem?: string): UserPart =>
  line(problem === undefined ? partText(part) : `${partText(part)} (${problem})`)

const httpUrl = (text: string): URL | undefined => {
  try {
    const url = new URL(text)
    return url.protocol === "http:" || url.protocol === "https:" ? url : undefined
  } catch {
    return undefined
  }
}

const imageInput = (part: V1.RawPart | V1.UrlPart, mediaType: string): UserPart => {
  const named = part.filename === undefined ? {} : { fileName: part.filename }
  if ("url" in part) {
    const url = httpUrl(part.url)
    return url === undefined ? fileLine(part, "not an http(s) URL") : { type: "file", mediaType, ...named, data: url }
  }
  const bytes = bytesOf(part)
  return IMAGE_SIGNATURES[mediaType]!(bytes)
    ? { type: "file", mediaType, ...named, data: bytes }
    : fileLine(part, `its bytes are not ${mediaType}`)
}

const utf8 = new TextDecoder("utf-8", { fatal: true })

const textFile = (part: V1.RawPart): UserPart => {
  try {
    return line(`${partText(part)}:\n${utf8.decode(bytesOf(part))}`)
  } catch {
    return fileLine(part, "its bytes are not UTF-8 text")
  }
}

/** One part as the model reads it. */
export const promptPart = (part: V1.Part): UserPart => {
  if ("text" in part) return line(part.text)
  if ("data" in part) return line(`[data: ${JSON.stringify(part.data)}]`)
  const essence = mediaTypeEssence(part.mediaType)
  if (essence in IMAGE_SIGNATURES) return imageInput(part, essence)
  if ("raw" in part && isTextLike(essence)) return textFile(part)
  return fileLine(part)
}

/** A user's message as the model reads it: its text alone when it is all text (the common case), else one piece per part. */
export const userContent = (parts: ReadonlyArray<V1.Part>): string | Array<UserPart> =>
  allText(parts) ? partsText(parts) : parts.map(promptPart)
