/**
 * The tools of a task's push notification configs at the agent: set, get, list and delete
 * (what arrived at relay's webhook is read by get_push_notifications, notificationTools.ts).
 */
import { Effect } from "effect"
import * as z from "zod"
import type { PushConfigView } from "../domain/results.js"
import type { deletePushConfig, listPushConfigs } from "../programs/pushConfig.js"
import { pushConfigShape, type ResultOf, shapeOf } from "./resultShapes.js"
import { contacting, oneOf, READ_ONLY_REMOTE, taskId, type ToolKit, withPrograms } from "./toolKit.js"

const summarizePush = (config: PushConfigView) =>
  `Push notifications for task ${config.task_id ?? "?"} go to ${config.url}${config.config_id ? ` (config ${config.config_id})` : ""}`

export const registerPushTools = ({ server, handle, atAgent }: ToolKit) => {
  server.registerTool(
    "set_task_notification",
    {
      title: "Set a task's push notifications",
      description: "Ask the agent to POST the task's updates to a webhook (e.g. the URL printed by relay server push). " +
        "Use for long tasks you do not want to poll. Next: get_push_notifications reads what arrived; " +
        "get_task_notification shows the config.",
      inputSchema: {
        ...contacting,
        task_id: taskId,
        webhook_url: z.string().optional().describe("The webhook URL (required; 'url' is accepted too)"),
        url: z.string().optional().describe("Alternate name of webhook_url"),
        webhook_token: z.string().optional().describe("Token the agent sends with each notification"),
        token: z.string().optional().describe("Alternate name of webhook_token")
      },
      outputSchema: pushConfigShape,
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true }
    },
    (args, extra) =>
      handle(
        extra,
        args,
        Effect.flatMap(oneOf("webhook_url", args.webhook_url, args.url, "url"), (webhookUrl) =>
          atAgent(
            args,
            (access) =>
              withPrograms(({ setPushConfig }) =>
                setPushConfig({ ...access, taskId: args.task_id, webhookUrl, webhookToken: args.webhook_token ?? args.token })
              )
          )),
        summarizePush
      )
  )

  server.registerTool(
    "get_task_notification",
    {
      title: "Get a task's push notification config",
      description: "Show where an agent sends a task's push notifications (secrets masked). Use to check a webhook set " +
        "with set_task_notification or send_message push_url. Next: get_push_notifications for what arrived.",
      inputSchema: { ...contacting, task_id: taskId, config_id: z.string().optional().describe("Config id; omit for the newest one") },
      outputSchema: pushConfigShape,
      annotations: READ_ONLY_REMOTE
    },
    (args, extra) =>
      handle(
        extra,
        args,
        atAgent(
          args,
          (access) => withPrograms(({ getPushConfig }) => getPushConfig({ ...access, taskId: args.task_id, configId: args.config_id }))
        ),
        summarizePush
      )
  )

  server.registerTool(
    "list_task_notifications",
    {
      title: "List a task's push notification configs",
      description: "List every webhook an agent sends a task's updates to (secrets masked). Use to find a config_id. " +
        "Next: delete_task_notification to stop one, get_push_notifications for what arrived.",
      inputSchema: { ...contacting, task_id: taskId },
      outputSchema: shapeOf<ResultOf<typeof listPushConfigs>>()({ count: z.number(), configs: z.array(z.object(pushConfigShape)) }),
      annotations: READ_ONLY_REMOTE
    },
    (args, extra) =>
      handle(
        extra,
        args,
        atAgent(args, (access) => withPrograms(({ listPushConfigs }) => listPushConfigs({ ...access, taskId: args.task_id }))),
        (r) => r.count === 0 ? "No push configs" : r.configs.map(summarizePush).join("\n")
      )
  )

  server.registerTool(
    "delete_task_notification",
    {
      title: "Delete a task's push notification config",
      description: "Stop an agent sending a task's updates to one webhook. Use when notifications are no longer wanted; " +
        "config_id comes from list_task_notifications. Next: list_task_notifications to confirm.",
      inputSchema: { ...contacting, task_id: taskId, config_id: z.string().describe("The config id (from list_task_notifications)") },
      outputSchema: shapeOf<ResultOf<typeof deletePushConfig>>()({ task_id: z.string(), config_id: z.string(), deleted: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
    },
    (args, extra) =>
      handle(
        extra,
        args,
        atAgent(
          args,
          (access) =>
            withPrograms(({ deletePushConfig }) => deletePushConfig({ ...access, taskId: args.task_id, configId: args.config_id }))
        ),
        (r) => `Deleted push config ${r.config_id} of task ${r.task_id}`
      )
  )
}
