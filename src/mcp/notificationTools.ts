/**
 * get_push_notifications: what arrived at relay's webhook (relay server push), with the files each
 * notification carried as resource links.
 */
import { Effect } from "effect"
import * as z from "zod"
import type { AnswerPart } from "../domain/answerParts.js"
import { fileSummaries } from "../domain/fileParts.js"
import type { NotificationRecord } from "../domain/notification.js"
import { fileLinks } from "./answerContent.js"
import { answerPart, nullableString, shapeOf } from "./resultShapes.js"
import { READ_ONLY_LOCAL, type ToolKit, withPrograms } from "./toolKit.js"

/** A notification as get_push_notifications lists it: the record without its body, path and headers, its files as answer parts. */
interface ListedNotification
  extends
    Pick<NotificationRecord, "id" | "received_at" | "task_id" | "context_id" | "kind" | "state" | "text" | "protocol" | "files_omitted">
{
  readonly files?: ReadonlyArray<AnswerPart>
}

interface NotificationList {
  readonly count: number
  readonly notifications: ReadonlyArray<ListedNotification>
}

const listed = (r: NotificationRecord): ListedNotification => ({
  id: r.id,
  received_at: r.received_at,
  task_id: r.task_id,
  context_id: r.context_id,
  kind: r.kind,
  state: r.state,
  text: r.text,
  protocol: r.protocol,
  ...(r.files === undefined ? {} : { files: r.files }),
  ...(r.files_omitted === undefined ? {} : { files_omitted: r.files_omitted })
})

export const registerNotificationTools = ({ server, handle }: ToolKit) => {
  server.registerTool(
    "get_push_notifications",
    {
      title: "Read received push notifications",
      description: "Read the push notifications received by relay server push (oldest first, newest last), with the " +
        "files each carried (files[].path: where their bytes were saved; each also as a resource_link). Use after send_message with push_url or " +
        "set_task_notification; filter by task, time or count. Next: get_task for the task's full answer.",
      inputSchema: {
        task_id: z.string().optional(),
        since: z.string().optional().describe("ISO time, or a duration such as 10m or 2h"),
        limit: z.number().int().min(1).max(1000).optional().describe("Keep only the newest N")
      },
      outputSchema: shapeOf<NotificationList>()({
        count: z.number(),
        notifications: z.array(z.object({
          id: z.string(),
          received_at: z.string(),
          task_id: nullableString,
          context_id: nullableString,
          kind: z.string(),
          state: nullableString,
          text: nullableString,
          protocol: z.string(),
          files: z.array(answerPart).optional().describe("The file parts it carried, shaped as an answer's parts (absent when none)"),
          files_omitted: z.number().optional()
        }))
      }),
      annotations: READ_ONLY_LOCAL
    },
    (args, extra) =>
      handle(
        extra,
        args,
        withPrograms(({ listNotifications }) =>
          Effect.map(listNotifications({ taskId: args.task_id, since: args.since, limit: args.limit }), (records): NotificationList => ({
            count: records.length,
            notifications: records.map(listed)
          }))
        ),
        (r) =>
          r.count === 0
            ? "No push notifications received (is relay server push running, and was push_url given?)"
            : r.notifications.map((n) =>
              [
                `${n.received_at} task ${n.task_id ?? "?"}: ${n.state ?? n.kind}${n.text ? ` — ${n.text}` : ""}`,
                ...fileSummaries(n).map((line) => `  ${line}`)
              ].join("\n")
            ).join("\n"),
        (r) => Effect.succeed(fileLinks(r.notifications.flatMap((n) => n.files ?? [])))
      )
  )
}
