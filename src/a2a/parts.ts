/**
 * What a part holds, beyond its shape: the kind of a part, and the bytes of a file part as
 * ProtoJSON writes them (base64). The schemas (v1.ts, v03.ts) check a part's shape; these check
 * its content where the agent server takes a message.
 */
import type * as V1 from "./v1.js"

export type PartKind = "text" | "file" | "data"

export const partKind = (part: V1.Part): PartKind => ("text" in part ? "text" : "data" in part ? "data" : "file")

export const isTextPart = (part: V1.Part): part is V1.TextPart => "text" in part

/** Whether every part is text: the common message, which takes the paths built for text alone. */
export const allText = (parts: ReadonlyArray<V1.Part>): boolean => parts.every(isTextPart)

const STANDARD = /^[A-Za-z0-9+/]*={0,2}$/
const URL_SAFE = /^[A-Za-z0-9_-]*={0,2}$/

/**
 * Whether `text` is base64 as ProtoJSON reads bytes: the standard or the URL-safe alphabet (not
 * both at once), padded or not. Node's decoder skips whatever is not base64, so this is checked
 * first: otherwise a file that is not base64 would be taken as other bytes.
 */
export const isBase64 = (text: string): boolean => {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
  const digits = text.length - padding
  if (digits % 4 === 1 || (padding > 0 && text.length % 4 !== 0)) return false
  return STANDARD.test(text) || URL_SAFE.test(text)
}

/** Base64 as relay writes it: the standard alphabet, padded (what every reader of either generation takes). */
export const standardBase64 = (text: string): string =>
  text.length % 4 === 0 && !/[-_]/.test(text) ? text : Buffer.from(text, "base64").toString("base64")

/** The bytes of a file part's base64 (checked with isBase64 first). */
export const bytesOf = (part: V1.RawPart): Buffer => Buffer.from(part.raw, "base64")

/** A media type without its parameters, lower case: `Text/Plain; charset=utf-8` is `text/plain`. */
export const mediaTypeEssence = (mediaType: string | undefined): string =>
  (mediaType ?? "").split(";")[0]!.trim().toLowerCase()
