/**
 * File parts read from JSON as an agent sent it, in either generation, without trusting its shape:
 * v1.0 `{raw | url, filename, mediaType}` (A2A v1.0 §4.1.6), v0.3 `{kind: "file", file: {bytes |
 * uri, name, mimeType}}` (v0.3 §6.5.2, §6.6) and the v0.3 proto JSON of its REST binding
 * `{file: {fileWithBytes | fileWithUri, mimeType}}`. The push receiver records what it finds and
 * `relay check` judges it: both must survive a hostile part, so every oddity is a problem in words.
 * It imports no A2A schemas (a2a/parts.ts holds none): the MCP server words recorded files before it loads the A2A model.
 */

import { isBase64 } from "../a2a/parts.js"

type JsonObject = Readonly<Record<string, unknown>>

const asObject = (value: unknown): JsonObject | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined

/** A file part as found: its fields when they are strings, and what is wrong with it. */
export interface FilePartView {
  /** The shape it was found in. */
  readonly shape: "1.0" | "0.3"
  readonly name: string | undefined
  readonly mediaType: string | undefined
  /** The content as sent (base64), when it has bytes. */
  readonly bytes: string | undefined
  readonly url: string | undefined
  /** Why the part is not well formed (`raw is not base64`, …); empty when it is. A missing media type is not among them. */
  readonly problems: ReadonlyArray<string>
}

const text = (value: unknown): string | undefined => (typeof value === "string" && value !== "" ? value : undefined)

interface Member {
  readonly key: string
  readonly value: unknown
}

/** The first of these keys the object has, and its value. */
const member = (object: JsonObject, keys: ReadonlyArray<string>): Member | undefined => {
  for (const key of keys) if (key in object) return { key, value: object[key] }
  return undefined
}

/** The content members of a file: exactly one of bytes and a URL is well formed. */
const contentProblems = (bytes: Member | undefined, url: Member | undefined): ReadonlyArray<string> => {
  if (bytes !== undefined && url !== undefined) return [`both bytes (${bytes.key}) and a URL (${url.key}), where exactly one belongs`]
  if (bytes === undefined && url === undefined) return ["neither bytes nor a URL"]
  if (bytes !== undefined) {
    if (typeof bytes.value !== "string") return [`${bytes.key} is not a base64 string`]
    return isBase64(bytes.value) ? [] : [`${bytes.key} is not base64`]
  }
  return typeof url?.value === "string" && url.value !== "" ? [] : [`${url?.key} is not a URL`]
}

const V1_BYTES = ["raw"]
const V1_URL = ["url"]
const V03_BYTES = ["bytes", "fileWithBytes", "file_with_bytes"]
const V03_URL = ["uri", "fileWithUri", "file_with_uri"]

const v1View = (part: JsonObject): FilePartView => {
  const bytes = member(part, V1_BYTES)
  const url = member(part, V1_URL)
  const others = ["text", "data"].filter((key) => key in part && !(key === "data" && part[key] === null))
  const problems = [
    ...contentProblems(bytes, url),
    ...(others.length === 0 ? [] : [`${others.join(" and ")} beside the file, where a part has exactly one of text, raw, url and data`])
  ]
  return {
    shape: "1.0",
    name: text(part["filename"]),
    mediaType: text(part["mediaType"] ?? part["media_type"]),
    bytes: typeof bytes?.value === "string" ? bytes.value : undefined,
    url: typeof url?.value === "string" ? url.value : undefined,
    problems
  }
}

const v03View = (part: JsonObject): FilePartView => {
  const file = asObject(part["file"])
  if (file === undefined) {
    return { shape: "0.3", name: undefined, mediaType: undefined, bytes: undefined, url: undefined, problems: ["file is not an object"] }
  }
  const bytes = member(file, V03_BYTES)
  const url = member(file, V03_URL)
  return {
    shape: "0.3",
    name: text(file["name"]),
    mediaType: text(file["mimeType"] ?? file["mime_type"] ?? file["mediaType"]),
    bytes: typeof bytes?.value === "string" ? bytes.value : undefined,
    url: typeof url?.value === "string" ? url.value : undefined,
    problems: contentProblems(bytes, url)
  }
}

/**
 * The part as a file part, or undefined when it is none: v1.0's has `raw` or `url`, v0.3's a
 * `file` (with `kind: "file"`, or no kind at all as in the REST binding).
 */
export const filePartView = (part: unknown): FilePartView | undefined => {
  const object = asObject(part)
  if (object === undefined) return undefined
  if (object["kind"] === "file" || (object["kind"] === undefined && "file" in object)) return v03View(object)
  if (object["kind"] === undefined && ("raw" in object || "url" in object)) return v1View(object)
  return undefined
}

// ---------------------------------------------------------------------------
// Recorded files in words

/** A file as a record keeps it (NotificationFile in notification.ts has this shape; named here so neither module imports the other). */
export interface RecordedFile {
  readonly name: string | null
  readonly media_type: string | null
  readonly size: number | null
  readonly path: string | null
  readonly url: string | null
  readonly note: string | null
}

/**
 * One file of a record in words, for people and assistants alike:
 * `hello.txt (text/plain, 31 bytes) → /state/notifications-files/…`, `a.png (image/png) at https://…`,
 * `x (text/plain): not saved: raw is not base64`; a file received in an answer alike. Foreign
 * text: a terminal escapes it.
 */
export const fileSummary = (file: RecordedFile): string => {
  const facts = [file.media_type, file.size === null ? null : `${file.size} bytes`].filter((fact) => fact !== null)
  const where = file.path !== null ? ` → ${file.path}` : file.url !== null ? ` at ${file.url}` : ""
  return `${file.name ?? "(no name)"}${facts.length === 0 ? "" : ` (${facts.join(", ")})`}${where}${
    file.note === null ? "" : `: ${file.note}`
  }`
}

/** The file lines of a record: one per file, then how many more were not recorded. */
export const fileSummaries = (record: {
  readonly files?: ReadonlyArray<RecordedFile> | undefined
  readonly files_omitted?: number | undefined
}): ReadonlyArray<string> => [
  ...(record.files ?? []).map((file) => `file ${fileSummary(file)}`),
  ...(record.files_omitted === undefined ? [] : [`… and ${record.files_omitted} more file parts, not recorded`])
]
