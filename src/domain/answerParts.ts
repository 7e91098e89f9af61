/**
 * The parts of an answer as every door shows them (README: Files and data): in order, each as a
 * plain snake_case view `{kind, text, name, media_type, size, sha256, path, url, data,
 * artifact_id, note}`, null for what a part does not have. The parts are those the answer's text
 * is taken from (a2a/text.ts resultText): a task's artifacts, else its status message, else the
 * agent's messages in its history; a direct message's own parts. Beside a task's artifacts come
 * the files and data of its status message the artifacts do not hold (its text is not repeated).
 *
 * A file's bytes are never in the view: its size and sha256 are, and `path` once a door saved it
 * (services/ReceivedFiles.ts). What is odd about a file part is said in `note`, never thrown:
 * bytes that are not base64 (no size, nothing saved), a declared image whose bytes are not that
 * image. A file with both bytes and a URL cannot reach this model: A2A 1.0 answers with one are
 * refused as malformed when decoded, and a 0.3 file is read as its bytes (a2a/v03.ts).
 */
import { Schema } from "effect"
import { base64Head, base64Pieces, base64Size, isBase64, mediaTypeEssence, partKind } from "../a2a/parts.js"
import { artifactsText, partsText } from "../a2a/text.js"
import type * as V1 from "../a2a/v1.js"
import { imageFormatName, imageTypeOf } from "./mediaTypes.js"

/** What is known of a file, received in an answer or pushed to the webhook: the same keys at every door. */
export const fileFacts = {
  /** As the agent named it: never used as is for a saved file's path. */
  name: Schema.NullOr(Schema.String),
  media_type: Schema.NullOr(Schema.String),
  /** Bytes of its content; null for a file by URL, or bytes that are not base64. */
  size: Schema.NullOr(Schema.Number),
  /** Hex sha256 of its content, when it came with its bytes. */
  sha256: Schema.NullOr(Schema.String),
  /** Where its bytes were saved; null when they were not (see note). */
  path: Schema.NullOr(Schema.String),
  /** A file given by reference. */
  url: Schema.NullOr(Schema.String),
  /** What is odd about it, or why it was not saved. */
  note: Schema.NullOr(Schema.String)
}

export const AnswerPart = Schema.Struct({
  kind: Schema.Literal("text", "file", "data"),
  /**
   * A text part's text beside file or data parts, where its place among them matters; null in an
   * answer of text alone (its text is the result's `text`, once) and for the other kinds.
   */
  text: Schema.NullOr(Schema.String),
  ...fileFacts,
  /** A data part's JSON value (null for the other kinds, and for a data part holding null). */
  data: Schema.Unknown,
  /** The artifact the part belongs to; null for a message's parts. */
  artifact_id: Schema.NullOr(Schema.String)
})
export type AnswerPart = typeof AnswerPart.Type

/** A part of the answer and the artifact it belongs to. */
export interface LocatedPart {
  readonly part: V1.Part
  readonly artifactId: string | null
}

const fromMessage = (message: V1.Message | undefined): ReadonlyArray<LocatedPart> =>
  (message?.parts ?? []).map((part) => ({ part, artifactId: null }))

/** The content of a file part, bytes or URL. */
const fileContent = (part: V1.Part): string | undefined => ("raw" in part ? part.raw : "url" in part ? part.url : undefined)

/** JSON with every object's keys sorted: the same data, whatever order an agent wrote its keys in. */
const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : inner)

/** What names a file or data part among others (its bytes, URL or JSON); undefined for text. */
const contentKey = (part: V1.Part): string | undefined => {
  const file = fileContent(part)
  if (file !== undefined) return `file:${file}`
  return "data" in part ? `data:${canonicalJson(part.data)}` : undefined
}

/**
 * The files and data of the status message that the artifacts do not hold already: its text repeats
 * or frames theirs, but what an agent put only there is part of the answer, never dropped unseen.
 */
const statusExtras = (status: V1.Message | undefined, fromArtifacts: ReadonlyArray<LocatedPart>): ReadonlyArray<LocatedPart> => {
  const extras = (status?.parts ?? []).filter((part) => contentKey(part) !== undefined)
  if (extras.length === 0) return []
  const held = new Set(fromArtifacts.map(({ part }) => contentKey(part)))
  return extras.filter((part) => !held.has(contentKey(part))).map((part) => ({ part, artifactId: null }))
}

/** The parts the answer's text is taken from, in order (the same choice as resultText). */
export const locatedParts = (result: V1.Task | V1.Message): ReadonlyArray<LocatedPart> => {
  if (!("status" in result)) return fromMessage(result)
  if (artifactsText(result) !== "") {
    const fromArtifacts = (result.artifacts ?? []).flatMap((artifact) =>
      artifact.parts.map((part) => ({ part, artifactId: artifact.artifactId }))
    )
    return [...fromArtifacts, ...statusExtras(result.status.message, fromArtifacts)]
  }
  const status = result.status.message
  if (status !== undefined && partsText(status.parts) !== "") return fromMessage(status)
  return (result.history ?? []).filter((message) => message.role === "ROLE_AGENT").flatMap(fromMessage)
}

const EMPTY: Omit<AnswerPart, "kind" | "artifact_id"> = {
  text: null,
  name: null,
  media_type: null,
  size: null,
  sha256: null,
  path: null,
  url: null,
  note: null,
  data: null
}

/** node:crypto on first use: the commands that never see a file do not load it. */
const sha256 = () => process.getBuiltinModule("node:crypto").createHash("sha256")

export const sha256Hex = (bytes: Uint8Array): string => sha256().update(bytes).digest("hex")

/** The sha256 of what base64 (checked with isBase64) holds, decoded a piece at a time. */
const base64Sha256Hex = (base64: string): string => {
  const hash = sha256()
  for (const piece of base64Pieces(base64)) hash.update(piece)
  return hash.digest("hex")
}

/** Enough leading bytes to tell every image format relay knows (mediaTypes.ts signatures). */
const SIGNATURE_BYTES = 12

/**
 * A media type that lies about an image: the one lie that misleads (an assistant would be shown
 * the bytes as that image). Other media types are reported as the agent gave them; relay only
 * saves the bytes, never opens them.
 */
export const mediaTypeLie = (mediaType: string | undefined, bytes: Uint8Array): string | undefined => {
  const essence = mediaTypeEssence(mediaType)
  const format = imageFormatName(essence)
  return format === undefined || imageTypeOf(bytes) === essence
    ? undefined
    : `its media type says ${essence}, but the bytes are not a ${format} image`
}

const fileView = (part: V1.RawPart | V1.UrlPart, file: AnswerPart): AnswerPart => {
  if ("url" in part) return { ...file, url: part.url }
  if (!isBase64(part.raw)) return { ...file, note: "not saved: its bytes are not base64" }
  // Told from the base64 as it is: the bytes are decoded whole only to be saved (answerFiles.ts).
  const note = mediaTypeLie(part.mediaType, base64Head(part.raw, SIGNATURE_BYTES)) ?? null
  return { ...file, size: base64Size(part.raw), sha256: base64Sha256Hex(part.raw), note }
}

/** One part as shown, before any door saved it (`path` null). */
export const partView = ({ part, artifactId }: LocatedPart): AnswerPart => {
  const kind = partKind(part)
  const view: AnswerPart = { kind, ...EMPTY, name: part.filename ?? null, media_type: part.mediaType ?? null, artifact_id: artifactId }
  switch (kind) {
    case "text":
      return { ...view, text: (part as V1.TextPart).text }
    case "data":
      return { ...view, data: (part as V1.DataPart).data }
    case "file":
      return fileView(part as V1.RawPart | V1.UrlPart, view)
  }
}

/**
 * The answer's parts, in order, as shown. An answer of text alone does not repeat its text here:
 * the result's `text` has it, and a cut answer of 32 MiB would otherwise be written out twice more.
 */
export const answerParts = (result: V1.Task | V1.Message): ReadonlyArray<AnswerPart> => {
  const parts = locatedParts(result).map(partView)
  return isTextAlone(parts) ? parts.map((part) => ({ ...part, text: null })) : parts
}

/** Whether an answer's parts are all text (or none): its text is then the result's `text`. */
export const isTextAlone = (parts: ReadonlyArray<AnswerPart>): boolean => parts.every((part) => part.kind === "text")

/** The bytes of a file part that carries them as base64, decoded a piece at a time as they are read (undefined for any other part). */
export const partBytes = (part: V1.Part): { readonly size: number; readonly pieces: () => Iterable<Uint8Array> } | undefined =>
  "raw" in part && isBase64(part.raw) ? { size: base64Size(part.raw), pieces: () => base64Pieces(part.raw) } : undefined
