/** `relay notifications list`: the push notifications `relay server push` logged, shared with relay mcp. */
import { Command, Options } from "@effect/cli"
import { Effect, Option, Stream } from "effect"
import { fileSummaries } from "../domain/fileParts.js"
import type { NotificationRecord } from "../domain/notification.js"
import { followNotifications, listNotifications, type NotificationQuery } from "../programs/notifications.js"
import * as NotificationLog from "../services/NotificationLog.js"
import { untilStopped } from "./ending.js"
import { optional } from "./optional.js"
import { outputOptions, wholeNumber } from "./options.js"
import { makeStyle, render, reportError, type Style, withLogLevel, writeErr, writeOut } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"
import { stateColor } from "./views.js"

/**
 * One notification for people: when, where, what it says; never the token, only whether one came.
 * Everything the sender chose (path, ids, state, text, file names) is escaped: three lines, then
 * one line per file part.
 */
export const formatNotification = (record: NotificationRecord, style: Style): string => {
  const headline = [
    style.dim(escapeForTerminal(record.received_at)),
    `POST ${style.cyan(escapeForTerminal(record.path))}`,
    style.bold(escapeForTerminal(record.kind)),
    ...(record.state === null ? [] : [stateColor(style, record.state)])
  ].join("  ")
  const details = escapeForTerminal([
    `task ${record.task_id ?? "-"}`,
    ...(record.context_id === null ? [] : [`context ${record.context_id}`]),
    `A2A ${record.protocol}`,
    `token ${record.token_present ? "present" : "none"}`
  ].join("  "))
  const text = record.text === null ? [] : [`  ${escapeForTerminal(JSON.stringify(record.text))}`]
  const files = fileSummaries(record).map((line) => `  ${escapeForTerminal(line)}`)
  return [headline, `  ${style.dim(details)}`, ...text, ...files].join("\n")
}

const taskId = optional(Options.text("task-id"), "Only notifications about this task")
const since = optional(Options.text("since"), "Only notifications received since this ISO time, or this long ago: 90s, 10m, 2h, 1d")
const limit = optional(wholeNumber("limit", "notifications", 1), "Only the newest N notifications")
const follow = Options.boolean("follow").pipe(
  Options.withAlias("f"),
  Options.withDescription("Keep printing new notifications as they arrive, until Ctrl+C (--json: one JSON line each)")
)

const followToStdout = (query: NotificationQuery, json: boolean) => {
  const style = makeStyle(process.stdout)
  return untilStopped(writeErr("Following notifications; press Ctrl+C to stop.")).pipe(
    Effect.zipRight(
      Stream.runForEach(
        followNotifications(query),
        (record) => writeOut(json ? JSON.stringify(record) : `${formatNotification(record, style)}\n`)
      )
    ),
    Effect.catchAll((error) => reportError(error, json))
  )
}

const list = Command.make(
  "list",
  { ...outputOptions, taskId, since, limit, follow },
  ({ taskId, since, limit, follow, ...flags }) => {
    const query: NotificationQuery = {
      taskId: Option.getOrUndefined(taskId),
      since: Option.getOrUndefined(since),
      limit: Option.getOrUndefined(limit)
    }
    if (follow) {
      return followToStdout(query, flags.json).pipe(
        withLogLevel(flags)
      )
    }
    // Like every list: {count, notifications} (README, JSON shapes).
    const listed = Effect.map(listNotifications(query), (notifications) => ({ count: notifications.length, notifications }))
    return render(flags, listed, ({ count, notifications }, style) =>
      count === 0
        ? style.dim("No notifications logged")
        : [style.bold(`Notifications (${count}), oldest first`), ...notifications.map((r) => formatNotification(r, style))]
          .join("\n\n"))
  }
).pipe(Command.withDescription("Show the push notifications relay server push received (--follow to keep watching)"))

export const notificationsCommand = Command.make("notifications").pipe(
  Command.withDescription("Push notifications logged by relay server push"),
  Command.withSubcommands([list]),
  Command.provide(NotificationLog.layer())
)
