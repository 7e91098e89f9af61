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

/** Which alphabet each character code belongs to: 1 standard only (+ /), 2 URL-safe only (- _), 3 both. */
const ALPHABETS = (() => {
  const table = new Uint8Array(128)
  for (const char of "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789") table[char.charCodeAt(0)] = 3
  table["+".charCodeAt(0)] = 1
  table["/".charCodeAt(0)] = 1
  table["-".charCodeAt(0)] = 2
  table["_".charCodeAt(0)] = 2
  return table
})()

/**
 * Whether `text` is base64 as ProtoJSON reads bytes: the standard or the URL-safe alphabet (not
 * both at once), padded or not. Node's decoder skips whatever is not base64, so this is checked
 * first: otherwise a file that is not base64 would be taken as other bytes. One pass over the
 * text, with no copy of it: a file's base64 is megabytes.
 */
export const isBase64 = (text: string): boolean => {
  const padding = text.endsWith("==") ? 2 : text.endsWith("=") ? 1 : 0
  const digits = text.length - padding
  if (digits % 4 === 1 || (padding > 0 && text.length % 4 !== 0)) return false
  // The alphabets the text can still be in: both at first, then those its characters allow.
  let alphabets = 3
  for (let index = 0; index < digits && alphabets !== 0; index++) {
    const code = text.charCodeAt(index)
    alphabets &= code < 128 ? ALPHABETS[code]! : 0
  }
  return alphabets !== 0
}

/** Bytes that base64 (checked with isBase64) decodes to, without decoding it. */
export const base64Size = (base64: string): number => {
  const padding = base64.endsWith("==") ? 2 : base64.endsWith("=") ? 1 : 0
  return Math.floor(((base64.length - padding) * 3) / 4)
}

/** Characters of base64 decoded at a time: a multiple of 4, so each piece decodes on its own. */
const BASE64_PIECE = 1024 * 1024

/**
 * The bytes of base64 (checked with isBase64), a piece at a time, each decoded into the same
 * buffer: never the whole file in memory at once, nor a new buffer per piece for the collector
 * to find. A piece is good until the next one is asked for: use it (hash it, write it) at once.
 */
export function* base64Pieces(base64: string): Generator<Uint8Array> {
  // No larger than the bytes there are: an answer of many small files must not make a piece's buffer for each.
  const piece = Buffer.allocUnsafe((Math.min(BASE64_PIECE, Math.ceil(base64.length / 4) * 4) / 4) * 3)
  for (let start = 0; start < base64.length; start += BASE64_PIECE) {
    yield piece.subarray(0, piece.write(base64.slice(start, start + BASE64_PIECE), "base64"))
  }
}

/** The first bytes of base64 (at most `count`, a multiple of 3), decoding only those. */
export const base64Head = (base64: string, count: number): Buffer => Buffer.from(base64.slice(0, (count / 3) * 4), "base64")

/** Base64 as relay writes it: the standard alphabet, padded (what every reader of either generation takes). */
export const standardBase64 = (text: string): string =>
  text.length % 4 === 0 && !/[-_]/.test(text) ? text : Buffer.from(text, "base64").toString("base64")

/** The bytes of a file part's base64 (checked with isBase64 first). */
export const bytesOf = (part: V1.RawPart): Buffer => Buffer.from(part.raw, "base64")

/** A media type without its parameters, lower case: `Text/Plain; charset=utf-8` is `text/plain`. */
export const mediaTypeEssence = (mediaType: string | undefined): string => (mediaType ?? "").split(";")[0]!.trim().toLowerCase()
