/**
 * What a file is, judged by its first bytes rather than by the media type its sender claims: the
 * image and audio formats relay hands to a model or an assistant, and the media types that are text.
 *
 * Why a hand check and not a library: `file-type` (the maintained sniffer) is ESM-only, reads
 * through its own tokenizer stack and knows hundreds of formats; relay needs a yes or no for ten,
 * each fixed by its format's specification to a few leading bytes (PNG, JFIF/EXIF, GIF87a/89a,
 * RIFF/WEBP, RIFF/WAVE, MPEG audio frames and ID3, ADTS, Ogg, FLAC, ISO BMFF `ftyp`, EBML).
 */
import { Effect } from "effect"

// ---------------------------------------------------------------------------
// Names and media types (mime-types)

/**
 * mime-types (and its table, mime-db) is loaded when a file is first sent or saved without a
 * name, not with every message. A CommonJS package: its exports are the module's default, in
 * the bundle and under node alike.
 */
const loadMimeTypes = () => import("mime-types").then((module) => module.default)
let mimeTypes: ReturnType<typeof loadMimeTypes> | undefined
const withMimeTypes = <A>(use: (mime: Awaited<ReturnType<typeof loadMimeTypes>>) => A): Effect.Effect<A> =>
  Effect.map(Effect.promise(() => (mimeTypes ??= loadMimeTypes())), use)

/** The media type a file name's extension names (`report.pdf`: `application/pdf`), if it names one. */
export const mediaTypeOfName = (name: string): Effect.Effect<string | undefined> =>
  /\.[^./\\]+$/.test(name) ? withMimeTypes((mime) => mime.lookup(name) || undefined) : Effect.succeed(undefined)

/** The usual extension of a media type (`png` for `image/png`), if it has one. */
export const extensionOfMediaType = (mediaType: string): Effect.Effect<string | undefined> =>
  withMimeTypes((mime) => mime.extension(mediaType) || undefined)

// ---------------------------------------------------------------------------
// First bytes

const startsWith = (bytes: Uint8Array, prefix: ReadonlyArray<number>, at = 0) =>
  bytes.length >= at + prefix.length && prefix.every((byte, index) => bytes[at + index] === byte)

const ascii = (text: string) => [...text].map((char) => char.charCodeAt(0))

type Signature = (bytes: Uint8Array) => boolean

/** The image formats models and assistants take, each with its name and the first bytes every such file starts with. */
const IMAGE_FORMATS: Readonly<Record<string, { readonly name: string; readonly matches: Signature }>> = {
  "image/png": { name: "PNG", matches: (bytes) => startsWith(bytes, [0x89, ...ascii("PNG\r\n"), 0x1a, 0x0a]) },
  "image/jpeg": { name: "JPEG", matches: (bytes) => startsWith(bytes, [0xff, 0xd8, 0xff]) },
  "image/gif": { name: "GIF", matches: (bytes) => startsWith(bytes, ascii("GIF87a")) || startsWith(bytes, ascii("GIF89a")) },
  "image/webp": { name: "WebP", matches: (bytes) => startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WEBP"), 8) }
}

/** An MPEG audio frame header: 11 sync bits, then a layer that is not the reserved 00 (00 is ADTS's). */
const mpegFrame: Signature = (bytes) => bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xe0) === 0xe0 && (bytes[1]! & 0x06) !== 0

/** The common audio formats, each with its leading bytes. */
const AUDIO_SIGNATURES: Readonly<Record<string, Signature>> = {
  "audio/wav": (bytes) => startsWith(bytes, ascii("RIFF")) && startsWith(bytes, ascii("WAVE"), 8),
  "audio/mpeg": (bytes) => startsWith(bytes, ascii("ID3")) || mpegFrame(bytes),
  "audio/aac": (bytes) => bytes.length >= 2 && bytes[0] === 0xff && (bytes[1]! & 0xf6) === 0xf0,
  "audio/ogg": (bytes) => startsWith(bytes, ascii("OggS")),
  "audio/flac": (bytes) => startsWith(bytes, ascii("fLaC")),
  "audio/mp4": (bytes) => startsWith(bytes, ascii("ftyp"), 4),
  "audio/webm": (bytes) => startsWith(bytes, [0x1a, 0x45, 0xdf, 0xa3])
}

const typeOf = (signatures: Readonly<Record<string, Signature>>, bytes: Uint8Array): string | undefined =>
  Object.keys(signatures).find((mediaType) => signatures[mediaType]!(bytes))

export const IMAGE_TYPES: ReadonlyArray<string> = Object.keys(IMAGE_FORMATS)

/** The name of an image format relay knows (`PNG` for image/png); undefined for any other media type. */
export const imageFormatName = (mediaType: string): string | undefined => IMAGE_FORMATS[mediaType]?.name

/** The image type (PNG, JPEG, GIF, WebP) the bytes are, whatever they were called; undefined for anything else. */
export const imageTypeOf = (bytes: Uint8Array): string | undefined =>
  IMAGE_TYPES.find((mediaType) => IMAGE_FORMATS[mediaType]!.matches(bytes))

/** The audio type (WAV, MP3, AAC, Ogg, FLAC, MP4, WebM) the bytes are; undefined for anything else. */
export const audioTypeOf = (bytes: Uint8Array): string | undefined => typeOf(AUDIO_SIGNATURES, bytes)

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
