/**
 * Push notification use cases: record one the webhook receiver accepted, and list or follow the
 * log. `relay notifications list` and the MCP tool `get_push_notifications` call the same programs.
 */
import { Clock, Effect, Either, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidInput, type StateFileUnavailable } from "../domain/errors.js"
import { exceedsJsonDepth, MAX_STORED_JSON_DEPTH } from "../domain/limits.js"
import {
  type NotificationFilter,
  type NotificationRecord,
  parseSince,
  summarizeNotification
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

/**
 * The record as stored, its fields in the log's order. Built by assignment rather than spreads:
 * the spreads' temporary objects were a tenth of the receiver's garbage.
 */
export const notificationRecord = (incoming: IncomingNotification, id: string, receivedAt: string): NotificationRecord => {
  const summary = summarizeNotification(incoming.body)
  const tooDeep = tooDeepToStore(incoming)
  const record: Record<string, unknown> = { id, received_at: receivedAt, path: incoming.path, token_present: incoming.tokenPresent }
  if (incoming.contentType !== undefined) record["headers_summary"] = { content_type: incoming.contentType }
  record["kind"] = summary.kind
  record["protocol"] = summary.protocol
  record["task_id"] = summary.task_id
  record["context_id"] = summary.context_id
  record["state"] = summary.state
  record["text"] = summary.text
  record["body"] = tooDeep ? null : incoming.body
  if (tooDeep) record["body_text"] = incoming.rawText
  return record as unknown as NotificationRecord
}

/**
 * Summarises, stamps (id, time) and appends a notification to the log; returns the stored record.
 * Runs once per notification received, so it is two flatMaps rather than a generator or
 * Effect.fn (whose span and call-site capture cost ~15 µs a call).
 */
export const recordNotification = (incoming: IncomingNotification): Effect.Effect<NotificationRecord, StateFileUnavailable, NotificationLog> =>
  Effect.flatMap(NotificationLog, (log) =>
    Effect.flatMap(Clock.currentTimeMillis, (now) => {
      const record = notificationRecord(incoming, randomUUID(), new Date(now).toISOString())
      return Effect.as(log.append(record), record)
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
