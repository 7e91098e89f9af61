/**
 * Push notification use cases: record one the webhook receiver accepted, and list or follow the
 * log. `relay notifications list` and the MCP tool `get_push_notifications` call the same programs.
 */
import { Clock, Effect, Either, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { InvalidInput } from "../domain/errors.js"
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
}

/**
 * Summarises, stamps (id, time) and appends a notification to the log; returns the stored record.
 * Runs once per notification received, so it is a plain generator: Effect.fn's span and call-site
 * capture cost ~15 µs a call, more than the rest of it besides the summary.
 */
export const recordNotification = (incoming: IncomingNotification) => Effect.gen(function*() {
  const log = yield* NotificationLog
  const receivedAt = new Date(yield* Clock.currentTimeMillis).toISOString()
  // The receiver refuses bodies deeper than MAX_JSON_DEPTH; this guards the log against any other caller.
  const tooDeep = exceedsJsonDepth(incoming.body, MAX_STORED_JSON_DEPTH)
  const record: NotificationRecord = {
    id: randomUUID(),
    received_at: receivedAt,
    path: incoming.path,
    token_present: incoming.tokenPresent,
    ...(incoming.contentType === undefined ? {} : { headers_summary: { content_type: incoming.contentType } }),
    ...summarizeNotification(incoming.body),
    body: tooDeep ? null : incoming.body,
    ...(tooDeep ? { body_text: incoming.rawText } : {})
  }
  yield* log.append(record)
  return record
})

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
