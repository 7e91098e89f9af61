/**
 * Push notifications as the webhook receiver records them, and a lenient summary of their bodies.
 *
 * Senders differ (A2A v1.0 posts a StreamResponse wrapper, v0.3 the bare Task or event with a
 * `kind`), and a receiver must never lose a delivery because its shape was unexpected: anything
 * that is JSON is kept verbatim in `body`, and the summary says `unknown` where it cannot tell.
 * The summariser only looks at a few known paths, so hostile nesting costs it nothing.
 */
import { Either, Schema } from "effect"
import { ProtocolVersion } from "../a2a/protocolVersion.js"
import * as ProtoJson from "../a2a/protoJson.js"
import { eventText } from "../a2a/text.js"
import { decodePushPayload } from "../a2a/translate.js"
import * as V03 from "../a2a/v03.js"
import * as V1 from "../a2a/v1.js"
import { fileFacts } from "./answerParts.js"
import { InvalidInput } from "./errors.js"
import { type FilePartView, filePartView } from "./fileParts.js"
import { MAX_ID_CHARS } from "./limits.js"

export const NotificationKind = Schema.Literal("task", "status-update", "artifact-update", "message", "unknown")
export type NotificationKind = typeof NotificationKind.Type

/** Which protocol generation the body's shape belongs to, if any. */
export const ProtocolGeneration = Schema.Literal(...ProtocolVersion.literals, "unknown")
export type ProtocolGeneration = typeof ProtocolGeneration.Type

/** Longest text excerpt a summary carries. */
export const TEXT_EXCERPT_MAX = 200
/** Ids and states longer than this are cut in the summary (the body keeps them whole). */
const SUMMARY_FIELD_MAX = 256
/** Parts looked at per message or artifact; the excerpt is short anyway. */
const PARTS_SCANNED = 20
/** File parts recorded per notification; more are only counted, so 10 000 tiny parts cost no more than 100. */
export const MAX_FILES_RECORDED = 100

/** What can be told about a notification body without trusting its shape. */
export interface NotificationSummary {
  readonly kind: NotificationKind
  readonly protocol: ProtocolGeneration
  readonly task_id: string | null
  readonly context_id: string | null
  /** v0.3-style lower-case state (`working`, `input-required`, …) whatever the sender's spelling. */
  readonly state: string | null
  /** Up to 200 characters of the text the notification carries, whitespace collapsed. */
  readonly text: string | null
}

/**
 * A file part of a notification as the receiver recorded it, in the shape of a file among an
 * answer's parts (answerParts.ts: the same keys at every door): what the agent said of it (name,
 * media type), what arrived (size and sha256 of its bytes, or its URL), where its bytes were saved
 * (`notifications-files/<sha256>` beside the log; the name, cut to 256 characters, never reaches a
 * path), or a note saying why they were not. Records written before it had `kind`, `text`, `data`
 * and `artifact_id` read with them filled in.
 */
export const NotificationFile = Schema.Struct({
  kind: Schema.optionalWith(Schema.Literal("file"), { default: () => "file" as const }),
  text: Schema.optionalWith(Schema.Null, { default: () => null }),
  ...fileFacts,
  data: Schema.optionalWith(Schema.Null, { default: () => null }),
  artifact_id: Schema.optionalWith(Schema.NullOr(Schema.String), { default: () => null })
})
export type NotificationFile = typeof NotificationFile.Type

export const NotificationRecord = Schema.Struct({
  id: Schema.String,
  received_at: Schema.String,
  path: Schema.String,
  /** Whether the request carried a token header; the token itself is never stored. */
  token_present: Schema.Boolean,
  headers_summary: Schema.optional(Schema.Struct({ content_type: Schema.optional(Schema.String) })),
  kind: NotificationKind,
  protocol: ProtocolGeneration,
  task_id: Schema.NullOr(Schema.String),
  context_id: Schema.NullOr(Schema.String),
  state: Schema.NullOr(Schema.String),
  text: Schema.NullOr(Schema.String),
  /** The file parts of the answer the notification carries, at most MAX_FILES_RECORDED; absent when it has none. */
  files: Schema.optional(Schema.Array(NotificationFile)),
  /** How many more file parts it had than were recorded. */
  files_omitted: Schema.optional(Schema.Number),
  /** The parsed JSON body; null when it was too deeply nested to store as JSON (see body_text). */
  body: Schema.Unknown,
  /** The raw body text, only when `body` could not be stored as JSON. */
  body_text: Schema.optional(Schema.String)
})
export type NotificationRecord = typeof NotificationRecord.Type

// ---------------------------------------------------------------------------
// Summary

type JsonObject = Readonly<Record<string, unknown>>

const asObject = (value: unknown): JsonObject | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as JsonObject) : undefined

const asArray = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : [])

const shortString = (value: unknown): string | null => typeof value === "string" && value !== "" ? value.slice(0, SUMMARY_FIELD_MAX) : null

/**
 * An id as the summary keeps it: as long as an agent server takes an id, so a filter by task id
 * finds it (a longer one is cut, and a filter compares the same cut: see matchesFilter).
 */
const idString = (value: unknown): string | null => typeof value === "string" && value !== "" ? value.slice(0, MAX_ID_CHARS) : null

const V1_STATE_PREFIX = "TASK_STATE_"

/**
 * `TASK_STATE_INPUT_REQUIRED` → `input-required`; v0.3 names pass through lower-cased.
 * `TASK_STATE_UNSPECIFIED` is v0.3's `unknown`, and the British `CANCELLED` (v0.3 REST) is `canceled`.
 */
export const normalizeTaskState = (raw: string): string => {
  const name = raw.startsWith(V1_STATE_PREFIX) ? raw.slice(V1_STATE_PREFIX.length).replace(/_/g, "-") : raw
  const lower = name.toLowerCase().slice(0, SUMMARY_FIELD_MAX)
  if (lower === "unspecified") return "unknown"
  if (lower === "cancelled") return "canceled"
  return lower
}

const stateOf = (status: unknown): string | null => {
  const raw = asObject(status)?.["state"]
  // ProtoJSON may send an enum as its number.
  const byNumber = typeof raw === "number" ? V1.parseTaskState(raw) : undefined
  if (byNumber !== undefined) return V1.stateName(byNumber)
  const state = shortString(raw)
  return state === null ? null : normalizeTaskState(state)
}

/** Text of the text parts (v1.0 `{text}` and v0.3 `{kind:"text",text}` alike), other parts skipped. */
const partsText = (parts: unknown): string =>
  asArray(parts).slice(0, PARTS_SCANNED)
    .map((part) => asObject(part)?.["text"])
    .filter((text): text is string => typeof text === "string")
    // Each piece is cut before joining so a huge string costs no more than a short one.
    .map((text) => text.slice(0, TEXT_EXCERPT_MAX * 4))
    .join(" ")

const messageText = (message: unknown): string => partsText(asObject(message)?.["parts"])

const isAgentMessage = (message: unknown) => {
  const role = asObject(message)?.["role"]
  return role === "ROLE_AGENT" || role === "agent"
}

/** A task's answer: its status message, else its last artifact, else its last agent message. */
const taskText = (task: JsonObject): string => {
  const fromStatus = messageText(asObject(task["status"])?.["message"])
  if (fromStatus !== "") return fromStatus
  const lastArtifact = asArray(task["artifacts"]).at(-1)
  const fromArtifact = partsText(asObject(lastArtifact)?.["parts"])
  if (fromArtifact !== "") return fromArtifact
  return messageText(asArray(task["history"]).filter(isAgentMessage).at(-1))
}

/** Collapses whitespace and cuts to 200 characters, marking the cut with an ellipsis. */
export const excerpt = (text: string): string | null => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat === "") return null
  return flat.length > TEXT_EXCERPT_MAX ? `${flat.slice(0, TEXT_EXCERPT_MAX - 1)}…` : flat
}

type EventKind = Exclude<NotificationKind, "unknown">

/** An event found in a body by its shape: what it is, the object that holds its fields, and its generation. */
interface LocatedEvent {
  readonly kind: EventKind
  readonly event: JsonObject
  readonly protocol: ProtocolGeneration
}

/** The summary of a located event, with the text given. */
const summarizeEvent = ({ kind, event, protocol }: LocatedEvent, text: string | null): NotificationSummary => ({
  kind,
  protocol,
  task_id: idString(kind === "task" ? event["id"] : event["taskId"]),
  context_id: idString(event["contextId"]),
  state: kind === "task" || kind === "status-update" ? stateOf(event["status"]) : null,
  text
})

/** The text found by scanning the event's fields, for a body that does not decode as A2A. */
const scannedText = ({ kind, event }: LocatedEvent): string => {
  switch (kind) {
    case "task":
      return taskText(event)
    case "status-update":
      return messageText(asObject(event["status"])?.["message"])
    case "artifact-update":
      return partsText(asObject(event["artifact"])?.["parts"])
    case "message":
      return messageText(event)
  }
}

/** v1.0 StreamResponse member names and the kind each one carries. */
const V1_MEMBERS: ReadonlyArray<readonly [string, EventKind]> = [
  ["task", "task"],
  ["statusUpdate", "status-update"],
  ["artifactUpdate", "artifact-update"],
  ["message", "message"]
]

const V03_KINDS: ReadonlyArray<EventKind> = ["task", "status-update", "artifact-update", "message"]

const isV03Kind = (kind: unknown): kind is EventKind => V03_KINDS.some((known) => known === kind)

/** The generation a bare (unwrapped, kind-less) object's state spelling points to. */
const generationOfState = (status: unknown): ProtocolGeneration => {
  const state = asObject(status)?.["state"]
  if (typeof state !== "string") return "unknown"
  return state.startsWith(V1_STATE_PREFIX) ? "1.0" : "0.3"
}

/** Shapes without a wrapper or a `kind`, told apart by their required fields. */
const guessBareEvent = (object: JsonObject): EventKind | undefined => {
  if (typeof object["taskId"] === "string" && asObject(object["artifact"]) !== undefined) return "artifact-update"
  if (typeof object["taskId"] === "string" && asObject(object["status"]) !== undefined) return "status-update"
  if (typeof object["id"] === "string" && asObject(object["status"]) !== undefined) return "task"
  return undefined
}

const UNKNOWN: NotificationSummary = {
  kind: "unknown",
  protocol: "unknown",
  task_id: null,
  context_id: null,
  state: null,
  text: null
}

const v1Names = ProtoJson.normalizer(V1.StreamResponse)
const v03Names = ProtoJson.normalizer(V03.StreamEvent)

/** The body with proto field names (`status_update`, `task_id`) renamed to their JSON names, in either generation's shape. */
const withJsonNames = (object: JsonObject): JsonObject => v03Names(v1Names(object)) as JsonObject

/**
 * Summarises any JSON body: a v1.0 StreamResponse (`{task}`, `{statusUpdate}`, `{artifactUpdate}`,
 * `{message}`), a v0.3 Task or event (`kind`), either of those inside a JSON-RPC `result`, or a
 * bare task/event recognised by its fields. Everything else is `unknown`.
 */
export const summarizeNotification = (body: unknown): NotificationSummary => describeNotification(body).summary

/** What the receiver reads in a body: its summary and the file parts of the answer it carries. */
export interface NotificationReading {
  readonly summary: NotificationSummary
  readonly files: FoundFiles
}

/** A file part found, and the artifact it belongs to (null for a message's). */
export interface FoundFile extends FilePartView {
  readonly artifactId: string | null
}

/** File parts found, in order, and how many more there were. */
export interface FoundFiles {
  readonly views: ReadonlyArray<FoundFile>
  readonly omitted: number
}

const NO_FILES: FoundFiles = { views: [], omitted: 0 }

/** The summary and the file parts, the event located once for both. */
export const describeNotification = (body: unknown): NotificationReading => {
  const located = locateEvent(body)
  if (located === undefined) return { summary: UNKNOWN, files: NO_FILES }
  // A body that decodes as A2A is rendered as every other view renders the task (text.ts); the
  // field scan is the fallback for bodies that do not, so it runs only for them.
  const decoded = Either.getOrUndefined(decodePushPayload(unwrapJsonRpc(body)))
  const summary = summarizeEvent(located, excerpt(decoded === undefined ? scannedText(located) : eventText(decoded.event)))
  return { summary, files: filesOf(answerPartLists(located)) }
}

/**
 * The file parts of any A2A answer (a SendMessage result, a pushed body; either generation and
 * binding), read as leniently as the receiver reads notifications; undefined when it is none.
 */
export const answerFiles = (answer: unknown): FoundFiles | undefined => {
  const located = locateEvent(answer)
  return located === undefined ? undefined : filesOf(answerPartLists(located))
}

/** A message's or an artifact's parts (`content` in the v0.3 proto JSON). */
const partsOf = (holder: unknown): unknown => {
  const object = asObject(holder)
  return object === undefined ? undefined : object["parts"] ?? object["content"]
}

/** Parts found in a message or an artifact, and the artifact's id. */
interface PartList {
  readonly parts: unknown
  readonly artifactId: string | null
}

const ofMessage = (message: unknown): PartList => ({ parts: partsOf(message), artifactId: null })

const ofArtifact = (artifact: unknown): PartList => {
  const id = asObject(artifact)?.["artifactId"] ?? asObject(artifact)?.["artifact_id"]
  return { parts: partsOf(artifact), artifactId: typeof id === "string" ? id.slice(0, SUMMARY_FIELD_MAX) : null }
}

/** Where the answer's parts are: a task's status message, its artifacts and the agent's messages in its history. */
const answerPartLists = ({ kind, event }: LocatedEvent): ReadonlyArray<PartList> => {
  switch (kind) {
    case "task":
      return [
        ofMessage(asObject(event["status"])?.["message"]),
        ...asArray(event["artifacts"]).map(ofArtifact),
        ...asArray(event["history"]).filter(isAgentMessage).map(ofMessage)
      ]
    case "status-update":
      return [ofMessage(asObject(event["status"])?.["message"])]
    case "artifact-update":
      return [ofArtifact(event["artifact"])]
    case "message":
      return [ofMessage(event)]
  }
}

/** Every file part of the lists, the first MAX_FILES_RECORDED kept; a text-only answer costs a look at each part. */
const filesOf = (lists: ReadonlyArray<PartList>): FoundFiles => {
  let views: Array<FoundFile> | undefined
  let omitted = 0
  for (const list of lists) {
    for (const part of asArray(list.parts)) {
      const view = filePartView(part)
      if (view === undefined) continue
      if (views === undefined) views = []
      if (views.length < MAX_FILES_RECORDED) views.push({ ...view, artifactId: list.artifactId })
      else omitted++
    }
  }
  return views === undefined ? NO_FILES : { views, omitted }
}

/** Some senders post the JSON-RPC stream envelope instead of its result. */
const unwrapJsonRpc = (body: unknown): unknown => {
  const outer = asObject(body)
  return outer !== undefined && typeof outer["jsonrpc"] === "string" ? asObject(outer["result"]) ?? outer : body
}

const locateEvent = (body: unknown): LocatedEvent | undefined => {
  const outer = asObject(body)
  if (outer === undefined) return undefined
  const object = withJsonNames(asObject(unwrapJsonRpc(outer)) ?? outer)

  const kinds = V1_MEMBERS.filter(([member]) => asObject(object[member]) !== undefined)
  const [wrapped] = kinds
  if (kinds.length === 1 && wrapped !== undefined && object["kind"] === undefined) {
    return { kind: wrapped[1], event: asObject(object[wrapped[0]]) ?? {}, protocol: "1.0" }
  }
  if (isV03Kind(object["kind"])) return { kind: object["kind"], event: object, protocol: "0.3" }
  const guessed = guessBareEvent(object)
  return guessed === undefined ? undefined : { kind: guessed, event: object, protocol: generationOfState(object["status"]) }
}

// ---------------------------------------------------------------------------
// Filters

export interface NotificationFilter {
  readonly taskId?: string | undefined
  /** Only notifications received at or after this instant. */
  readonly since?: Date | undefined
  /** Keep only the newest N. */
  readonly limit?: number | undefined
}

export const matchesFilter = (filter: NotificationFilter) => (record: NotificationRecord): boolean =>
  (filter.taskId === undefined || record.task_id === filter.taskId.slice(0, MAX_ID_CHARS)) &&
  (filter.since === undefined || Date.parse(record.received_at) >= filter.since.getTime())

/** Records oldest first, filtered, then cut to the newest `limit`. */
export const selectNotifications = (
  records: ReadonlyArray<NotificationRecord>,
  filter: NotificationFilter
): ReadonlyArray<NotificationRecord> => {
  const matching = records.filter(matchesFilter(filter))
  return filter.limit === undefined ? matching : matching.slice(Math.max(0, matching.length - filter.limit))
}

const UNIT_MS: Readonly<Record<string, number>> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000
}

const RELATIVE = /^(\d+(?:\.\d+)?)\s*(ms|s|m|h|d|w)$/
// Date.parse accepts "10" as a year; only ISO-looking dates count as absolute times.
const ISO_DATE = /^\d{4}-\d{2}-\d{2}/

/** `--since`: an ISO time (`2025-01-31T10:00:00Z`) or a duration back from now (`90s`, `10m`, `2h`, `1d`). */
export const parseSince = (input: string, nowMs: number): Either.Either<Date, InvalidInput> => {
  const text = input.trim()
  const relative = RELATIVE.exec(text)
  if (relative !== null) {
    const [, amount = "0", unit = "s"] = relative
    return Either.right(new Date(nowMs - Number(amount) * (UNIT_MS[unit] ?? 1_000)))
  }
  const absolute = ISO_DATE.test(text) ? Date.parse(text) : Number.NaN
  return Number.isNaN(absolute)
    ? Either.left(
      new InvalidInput({
        reason: `Cannot read "${input}" as a time`,
        suggestion: "Give an ISO time such as 2025-01-31T10:00:00Z, or a duration back from now such as 10m, 2h or 1d"
      })
    )
    : Either.right(new Date(absolute))
}
