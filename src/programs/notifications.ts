/**
 * Push notification use cases: record one the webhook receiver accepted, and list or follow the
 * log. `relay notifications list` and the MCP tool `get_push_notifications` call the same programs.
 */
import { Clock, Effect, Either, Stream } from "effect"
import { createHash, randomUUID } from "node:crypto"
import { InvalidInput, type StateFileUnavailable } from "../domain/errors.js"
import { exceedsJsonDepth, MAX_STORED_JSON_DEPTH } from "../domain/limits.js"
import {
  describeNotification,
  type FoundFile,
  type FoundFiles,
  type NotificationFile,
  type NotificationFilter,
  type NotificationReading,
  type NotificationRecord,
  parseSince
} from "../domain/notification.js"
import { NotificationLog } from "../services/NotificationLog.js"

/** A notification as the webhook receiver got it: already authorised and parsed as JSON. */
export interface IncomingNotification {
  /** Request path without the query string. */
  readonly path: string
  readonly tokenPresent: boolean
  readonly contentType?: string | undefined
  readonly body: unknown
  /** The body as received, kept only when the parsed value is too deep to store as JSON. */
  readonly rawText: string
  /**
   * A depth the caller already checked the body does not nest beyond (the receiver refuses
   * anything deeper than MAX_JSON_DEPTH): when it is within MAX_STORED_JSON_DEPTH the body is not
   * walked again. Absent, the body is checked here.
   */
  readonly checkedDepth?: number | undefined
}

/** Whether the body must be kept as text: only a body not known to be shallow enough is walked. */
const tooDeepToStore = (incoming: IncomingNotification): boolean =>
  (incoming.checkedDepth === undefined || incoming.checkedDepth > MAX_STORED_JSON_DEPTH) &&
  exceedsJsonDepth(incoming.body, MAX_STORED_JSON_DEPTH)

/** What the record says of its file parts: each one, and how many more there were. */
export interface RecordedFiles {
  readonly files: ReadonlyArray<NotificationFile>
  readonly omitted: number
}

/**
 * The record as stored, its fields in the log's order. Built by assignment rather than spreads:
 * the spreads' temporary objects were a tenth of the receiver's garbage.
 */
export const notificationRecord = (
  incoming: IncomingNotification,
  id: string,
  receivedAt: string,
  reading: NotificationReading = describeNotification(incoming.body),
  recorded?: RecordedFiles
): NotificationRecord => {
  const summary = reading.summary
  const tooDeep = tooDeepToStore(incoming)
  const record: Record<string, unknown> = { id, received_at: receivedAt, path: incoming.path, token_present: incoming.tokenPresent }
  if (incoming.contentType !== undefined) record["headers_summary"] = { content_type: incoming.contentType }
  record["kind"] = summary.kind
  record["protocol"] = summary.protocol
  record["task_id"] = summary.task_id
  record["context_id"] = summary.context_id
  record["state"] = summary.state
  record["text"] = summary.text
  if (recorded !== undefined) {
    record["files"] = recorded.files
    if (recorded.omitted > 0) record["files_omitted"] = recorded.omitted
  }
  record["body"] = tooDeep ? null : incoming.body
  if (tooDeep) record["body_text"] = incoming.rawText
  return record as unknown as NotificationRecord
}

/** Names, media types and URLs come from the agent: kept within these lengths (the body has them whole). */
const FILE_NAME_MAX = 256
const FILE_URL_MAX = 8192

const cut = (value: string | undefined, max: number): string | null => (value === undefined ? null : value.slice(0, max))

/** What the receiver says of a file part before any byte is saved. */
const describedFile = (view: FoundFile, note: string | null): NotificationFile => ({
  kind: "file",
  text: null,
  name: cut(view.name, FILE_NAME_MAX),
  media_type: cut(view.mediaType, FILE_NAME_MAX),
  size: null,
  sha256: null,
  path: null,
  url: cut(view.url, FILE_URL_MAX),
  note: note ??
    (view.url !== undefined && view.url.length > FILE_URL_MAX ? `URL cut to ${FILE_URL_MAX} characters (the body has it whole)` : null),
  data: null,
  artifact_id: view.artifactId
})

/**
 * One file part recorded: a malformed one with the reason, one by URL as its URL, one with bytes
 * saved beside the log (or the reason it could not be). The bytes are bounded by the receiver's
 * body limit, which they arrived within; the log's own bound is the service's to apply.
 */
const recordFile = (log: NotificationLog["Type"], view: FoundFile): Effect.Effect<NotificationFile> => {
  if (view.problems.length > 0) return Effect.succeed(describedFile(view, `not saved: ${view.problems.join("; ")}`))
  if (view.bytes === undefined) return Effect.succeed(describedFile(view, null))
  // Checked to be base64 (filePartView), so node's lenient decoder reads exactly what was sent.
  const bytes = Buffer.from(view.bytes, "base64")
  const sha256 = createHash("sha256").update(bytes).digest("hex")
  const file = { ...describedFile(view, null), size: bytes.length, sha256 }
  return Effect.match(log.saveFile(sha256, bytes), {
    onSuccess: (path) => ({ ...file, path }),
    onFailure: (error) => ({ ...file, note: `not saved: ${error.message}` })
  })
}

const recordFiles = (log: NotificationLog["Type"], found: FoundFiles): Effect.Effect<RecordedFiles> =>
  Effect.map(Effect.forEach(found.views, (view) => recordFile(log, view)), (files) => ({ files, omitted: found.omitted }))

/**
 * Summarises, stamps (id, time) and appends a notification to the log, its files saved first;
 * returns the stored record. Runs once per notification received, so it is plain flatMaps rather
 * than a generator or Effect.fn (whose span and call-site capture cost on every call; see
 * bench/README.md), and a body
 * without file parts takes no step more than before.
 */
export const recordNotification = (
  incoming: IncomingNotification
): Effect.Effect<NotificationRecord, StateFileUnavailable, NotificationLog> =>
  Effect.flatMap(NotificationLog, (log) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const reading = describeNotification(incoming.body)
      const append = (recorded?: RecordedFiles) => {
        const record = notificationRecord(incoming, randomUUID(), new Date(now).toISOString(), reading, recorded)
        return Effect.as(log.append(record), record)
      }
      return reading.files.views.length === 0 ? append() : Effect.flatMap(recordFiles(log, reading.files), append)
    }))

/** Filters as users and MCP tools give them; `since` is an ISO time or a duration like `10m`. */
export interface NotificationQuery {
  readonly taskId?: string | undefined
  readonly since?: string | undefined
  readonly limit?: number | undefined
}

const toFilter = (query: NotificationQuery): Effect.Effect<NotificationFilter, InvalidInput> =>
  Effect.gen(function*() {
    if (query.limit !== undefined && (!Number.isInteger(query.limit) || query.limit < 1)) {
      return yield* new InvalidInput({
        reason: `The limit must be a positive whole number, not ${query.limit}`,
        suggestion: "Give a limit such as 20 for the newest 20 notifications, or none for all"
      })
    }
    const now = yield* Clock.currentTimeMillis
    const since = query.since === undefined ? undefined : yield* Either.match(parseSince(query.since, now), {
      onLeft: Effect.fail,
      onRight: Effect.succeed
    })
    const taskId = query.taskId === "" ? undefined : query.taskId
    return { taskId, since, limit: query.limit }
  })

/** The logged notifications, oldest first, newest last; `limit` keeps the newest N. */
export const listNotifications = Effect.fn("listNotifications")(function*(query: NotificationQuery = {}) {
  const filter = yield* toFilter(query)
  const log = yield* NotificationLog
  return yield* log.read(filter)
})

/** What `listNotifications` gives, then each new matching notification as it is logged, until interrupted. */
export const followNotifications = (query: NotificationQuery = {}) =>
  Stream.unwrap(Effect.gen(function*() {
    const filter = yield* toFilter(query)
    const log = yield* NotificationLog
    return log.follow(filter)
  }))
