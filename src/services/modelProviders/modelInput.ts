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
import { IMAGE_TYPES, imageTypeOf, isTextLike } from "../../domain/mediaTypes.js"

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
  return imageTypeOf(bytes) === mediaType
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
  if (IMAGE_TYPES.includes(essence)) return imageInput(part, essence)
  if ("raw" in part && isTextLike(essence)) return textFile(part)
  return fileLine(part)
}

/** A user's message as the model reads it: its text alone when it is all text (the common case), else one piece per part. */
export const userContent = (parts: ReadonlyArray<V1.Part>): string | Array<UserPart> =>
  allText(parts) ? partsText(parts) : parts.map(promptPart)
