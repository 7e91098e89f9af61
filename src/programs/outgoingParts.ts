/**
 * What a message carries besides its text (A2A v1.0 §4.1.6): files read from disk, files by URL,
 * files given as base64, and JSON data, made into parts the same way for every door (`relay
 * message send --file`, MCP send_message `files`). All is judged before anything is read in
 * full: who may read a path (the door's ReadPermission), that it is a regular file, and that the
 * encoded request stays within the request limit. A file's share is known from its size (base64
 * takes 4/3 of it), so a file too large is refused without being read, and nothing is sent.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as Path from "node:path"
import { isBase64, standardBase64 } from "../a2a/parts.js"
import type * as V1 from "../a2a/v1.js"
import { InvalidInput } from "../domain/errors.js"
import { exceedsJsonDepth, MAX_JSON_DEPTH } from "../domain/limits.js"
import { mediaTypeOfName } from "../domain/mediaTypes.js"
import { type FileNotAllowed, FileUnreadable, RequestTooLarge } from "../domain/outgoingPartErrors.js"
import type { StateDir } from "../services/StateDir.js"
import { type FileRefusal, openJudged, readOpened } from "./localFiles.js"
import type { ReadPermission } from "./readPermission.js"

/** Where a part comes from, as the doors take it. */
export type PartSource =
  /** A file on disk, sent by its bytes; named after it, its media type from its extension, unless given. */
  | { readonly _tag: "FilePath"; readonly path: string; readonly name?: string | undefined; readonly mediaType?: string | undefined }
  /** A file by reference; its name and media type come from the URL's path when not given. */
  | { readonly _tag: "FileUrl"; readonly url: string; readonly name?: string | undefined; readonly mediaType?: string | undefined }
  /** A file's bytes given as base64 (MCP content_base64). */
  | { readonly _tag: "FileContent"; readonly base64: string; readonly name: string; readonly mediaType?: string | undefined }
  /** A JSON value (MCP data). */
  | { readonly _tag: "Data"; readonly value: unknown }
  /** JSON text, from the command line (`--data JSON`) or a file (`--data @file.json`). */
  | { readonly _tag: "DataText"; readonly text: string }
  | { readonly _tag: "DataFile"; readonly path: string }

export interface OutgoingPartsInput {
  /** The message's text, which counts toward the limit too. */
  readonly text: string
  readonly sources: ReadonlyArray<PartSource>
  /** Largest encoded request (`--max-request-bytes`, default MAX_AGENT_BODY_BYTES). */
  readonly maxRequestBytes: number
  readonly mayRead: ReadPermission
}

/**
 * What a request holds besides its text and parts, with room to spare: the JSON-RPC envelope, the
 * message, context and task ids, the configuration and a push URL (~300 bytes without one).
 */
const ENVELOPE_BYTES = 4 * 1024
/** One part's keys and punctuation in the longest spelling, v0.3's `{"kind":"file","file":{"bytes":…,"name":…,"mimeType":…}}`. */
const PART_BYTES = 128

const base64Length = (bytes: number) => Math.ceil(bytes / 3) * 4
const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value) ?? "")

const DEFAULT_MEDIA_TYPE = "application/octet-stream"

/** A part not yet read: its share of the request, and how to make it. */
interface Planned {
  /** What it is, for a refusal: `The file report.pdf`. */
  readonly what: string
  readonly size: number
  readonly requestBytes: number
  readonly isFile: boolean
  readonly make: Effect.Effect<V1.Part, FileUnreadable | InvalidInput, FileSystem.FileSystem>
}

/**
 * A path as may be read, a regular file, with its size: not read yet. Opened and judged now for its
 * size, and again when read: the second open must find the same file (localFiles.ts, openJudged).
 */
const measure = (path: string, mayRead: ReadPermission) =>
  Effect.gen(function*() {
    const realPath = yield* mayRead(path)
    const unreadable = (refusal: FileRefusal) => new FileUnreadable({ path, ...refusal })
    const { identity, size } = yield* Effect.scoped(openJudged(realPath)).pipe(Effect.mapError(unreadable))
    const read = Effect.scoped(Effect.gen(function*() {
      const file = yield* openJudged(realPath)
      if (file.identity !== identity) return yield* Effect.fail(CHANGED_SINCE_MEASURED)
      // A file still being written would be sent cut at the size it had, or short of it.
      if (file.size !== size) return yield* Effect.fail(RESIZED_SINCE_MEASURED)
      const bytes = yield* readOpened(file.handle, size)
      return bytes.length === size ? bytes : yield* Effect.fail(RESIZED_SINCE_MEASURED)
    })).pipe(Effect.mapError(unreadable))
    return { size, read }
  })

const CHANGED_SINCE_MEASURED: FileRefusal = { reason: "another file was put in its place since it was measured; try again" }
const RESIZED_SINCE_MEASURED: FileRefusal = {
  reason: "it changed size since it was measured (is it still being written?); try again once it is complete"
}

const filePart = (raw: string, filename: string | undefined, mediaType: string | undefined): V1.RawPart => ({
  raw,
  ...(filename === undefined ? {} : { filename }),
  ...(mediaType === undefined ? {} : { mediaType })
})

const planFile = ({ path, ...given }: Extract<PartSource, { _tag: "FilePath" }>, mayRead: ReadPermission) =>
  Effect.gen(function*() {
    const name = given.name ?? Path.basename(path)
    const { size, read } = yield* measure(path, mayRead)
    const mediaType = given.mediaType ?? (yield* mediaTypeOfName(name)) ?? DEFAULT_MEDIA_TYPE
    return {
      what: `The file ${path}`,
      size,
      requestBytes: base64Length(size) + jsonBytes(name) + jsonBytes(mediaType) + PART_BYTES,
      isFile: true,
      // Read once into one buffer, encoded once; the buffer is left behind with this scope.
      make: Effect.map(read, (bytes): V1.Part => filePart(bytes.toString("base64"), name, mediaType))
    } satisfies Planned
  })

/** The last segment of a URL's path, decoded: `report.pdf` of `https://host/files/report.pdf?v=2`. */
const urlFileName = (url: URL): string | undefined => {
  const last = url.pathname.split("/").at(-1) ?? ""
  try {
    return decodeURIComponent(last) || undefined
  } catch {
    return last || undefined
  }
}

const planUrl = (source: Extract<PartSource, { _tag: "FileUrl" }>) =>
  Effect.gen(function*() {
    if (!URL.canParse(source.url)) {
      return yield* new InvalidInput({
        reason: `${source.url} is not an absolute URL`,
        suggestion: "Give the file's URL with its scheme, e.g. https://example.com/report.pdf"
      })
    }
    const name = source.name ?? urlFileName(new URL(source.url))
    const mediaType = source.mediaType ?? (name === undefined ? undefined : yield* mediaTypeOfName(name))
    const part: V1.UrlPart = {
      url: source.url,
      ...(name === undefined ? {} : { filename: name }),
      ...(mediaType === undefined ? {} : { mediaType })
    }
    return {
      what: `The file URL ${source.url}`,
      size: jsonBytes(part),
      requestBytes: jsonBytes(part) + PART_BYTES,
      isFile: false,
      make: Effect.succeed(part)
    } satisfies Planned
  })

const planContent = (source: Extract<PartSource, { _tag: "FileContent" }>) =>
  Effect.gen(function*() {
    if (!isBase64(source.base64)) {
      return yield* new InvalidInput({
        reason: `The content of ${source.name} is not base64`,
        suggestion: "Give the file's bytes in base64 (standard or URL-safe alphabet), or the file's path or URL instead"
      })
    }
    const mediaType = source.mediaType ?? (yield* mediaTypeOfName(source.name)) ?? DEFAULT_MEDIA_TYPE
    const raw = standardBase64(source.base64)
    return {
      what: `The file ${source.name}`,
      size: Math.floor(raw.length * 3 / 4),
      requestBytes: raw.length + jsonBytes(source.name) + jsonBytes(mediaType) + PART_BYTES,
      isFile: true,
      make: Effect.succeed(filePart(raw, source.name, mediaType))
    } satisfies Planned
  })

/** A JSON value as a data part, refused when it nests deeper than any door accepts. */
const dataPart = (value: unknown, where: string): Effect.Effect<V1.Part, InvalidInput> =>
  exceedsJsonDepth(value)
    ? Effect.fail(new InvalidInput({ reason: `${where} nests deeper than ${MAX_JSON_DEPTH} levels`, suggestion: "Send flatter data" }))
    : Effect.succeed({ data: value })

/** JSON text as a value, or a usage error naming where it stops being JSON (line and column). */
const parseData = (text: string, where: string) =>
  Effect.flatMap(Effect.promise(() => import("../domain/jsonProblems.js")), ({ parseJsonText }) => {
    const parsed = parseJsonText(text, { comments: false, trailingCommas: false })
    return "problem" in parsed
      ? Effect.fail(
        new InvalidInput({ reason: `${where} is not JSON: ${parsed.problem}`, suggestion: "Give a JSON value, e.g. {\"name\": \"Ada\"}" })
      )
      : dataPart(parsed.value, where)
  })

const planData = (make: Planned["make"], size: number, what = "The data"): Planned => ({
  what,
  size,
  requestBytes: size + PART_BYTES,
  isFile: false,
  make
})

const planDataFile = (path: string, mayRead: ReadPermission) =>
  Effect.map(measure(path, mayRead), ({ size, read }) =>
    planData(
      Effect.flatMap(read, (bytes) => parseData(bytes.toString("utf8"), `The data in ${path}`)),
      size,
      `The data file ${path}`
    ))

const plan = (
  source: PartSource,
  mayRead: ReadPermission
): Effect.Effect<Planned, FileUnreadable | FileNotAllowed | InvalidInput, FileSystem.FileSystem | StateDir> => {
  switch (source._tag) {
    case "FilePath":
      return planFile(source, mayRead)
    case "FileUrl":
      return planUrl(source)
    case "FileContent":
      return planContent(source)
    case "Data":
      return Effect.succeed(planData(dataPart(source.value, "The data"), jsonBytes(source.value)))
    case "DataText":
      // Parsed at once: a typing mistake is reported before any file is looked at.
      return Effect.map(parseData(source.text, "The data"), (part) => planData(Effect.succeed(part), Buffer.byteLength(source.text)))
    case "DataFile":
      return planDataFile(source.path, mayRead)
  }
}

/** The first part that takes the request past the limit, counted in order after the envelope and the text. */
const pastTheLimit = (text: string, planned: ReadonlyArray<Planned>, limit: number): RequestTooLarge | undefined => {
  const textBytes = text === "" ? 0 : jsonBytes(text) + PART_BYTES
  let requestBytes = ENVELOPE_BYTES + textBytes
  if (requestBytes > limit) {
    return new RequestTooLarge({
      what: text === "" ? "The message" : "The text",
      size: Buffer.byteLength(text),
      requestBytes,
      limit,
      isFile: false
    })
  }
  for (const part of planned) {
    requestBytes += part.requestBytes
    if (requestBytes > limit) return new RequestTooLarge({ what: part.what, size: part.size, requestBytes, limit, isFile: part.isFile })
  }
  return undefined
}

/**
 * The parts of `sources`, in their order (they follow the text in the message). Every file is
 * checked and measured first; only when the whole request fits is any file read.
 */
export const outgoingParts = Effect.fn("outgoingParts")(function*(input: OutgoingPartsInput) {
  if (input.sources.length === 0) return []
  const planned = yield* Effect.forEach(input.sources, (source) => plan(source, input.mayRead))
  const tooLarge = pastTheLimit(input.text, planned, input.maxRequestBytes)
  if (tooLarge !== undefined) return yield* tooLarge
  return yield* Effect.forEach(planned, (part) => part.make)
})
