/** `relay task …`: inspect, list, cancel and follow an agent's tasks, and their push configs. */
import { Command, Options } from "@effect/cli"
import { Effect, Option, Redacted } from "effect"
import type { TaskStateName } from "../a2a/v1.js"
import type { AgentAccess } from "../programs/agentTarget.js"
import { deletePushConfig, getPushConfig, listPushConfigs, setPushConfig } from "../programs/pushConfig.js"
import { cancelTask, getTask, listTasks, resubscribe } from "../programs/tasks.js"
import { withSuggestions } from "./commandTree.js"
import { optional } from "./optional.js"
import {
  agentOptions,
  answerFileOptions,
  historyLength,
  maxAnswerBytes,
  secretOption,
  taskIdArg,
  wholeNumber,
  withAgentAccess,
  withAnswerFiles
} from "./options.js"
import { fields, render } from "./output.js"
import { progressPrinter } from "./progress.js"
import { ClientServices } from "./services.js"
import { taskTable } from "./taskTable.js"
import { escapeForTerminal } from "./terminalText.js"
import { answerBody, failWhenCut, pushConfigText, taskLines, taskViewText } from "./views.js"

const taskInput = (access: AgentAccess, values: { readonly taskId: string; readonly historyLength?: Option.Option<number> }) => ({
  ...access,
  taskId: values.taskId,
  historyLength: values.historyLength === undefined ? undefined : Option.getOrUndefined(values.historyLength)
})

const get = Command.make(
  "get",
  { ...agentOptions, historyLength, ...answerFileOptions, taskId: taskIdArg },
  (values) =>
    withAgentAccess(values, (access) =>
      render(
        values,
        withAnswerFiles(values, (answerFiles) => getTask({ ...taskInput(access, values), answerFiles })),
        taskViewText(access.agentUrl)
      ))
).pipe(
  Command.withDescription("Show a task's state and answer, saving the files it carries")
)

const cancel = Command.make(
  "cancel",
  { ...agentOptions, taskId: taskIdArg },
  (values) => withAgentAccess(values, (access) => render(values, cancelTask(taskInput(access, values)), taskViewText(access.agentUrl)))
).pipe(
  Command.withDescription("Cancel a running task and show its state afterwards")
)

const resubscribeCommand = Command.make(
  "resubscribe",
  { ...agentOptions, maxAnswerBytes, ...answerFileOptions, taskId: taskIdArg },
  (values) =>
    withAgentAccess(values, (access) => {
      const { onUpdate, showingAllOf, unprinted } = progressPrinter({ streamText: !values.json, showStates: !values.json })
      const following = showingAllOf(withAnswerFiles(
        values,
        (answerFiles) => resubscribe({ ...taskInput(access, values), maxAnswerBytes: values.maxAnswerBytes, onUpdate, answerFiles })
      ))
      // The text was streamed: the files follow the summary.
      return render(values, following, (view, style) => {
        const files = answerBody(view, true)
        return `${unprinted()}\n${taskLines(style, view)}${files === "" ? "" : `\n\n${files}`}`
      }).pipe(Effect.tap(failWhenCut(values.json)))
    })
).pipe(Command.withDescription("Follow a running task's stream again (after a disconnect)"))

const contextId = optional(Options.text("context-id"), "Only tasks of this context")
/** The states a task can be listed by, as completions offer them (any spelling of a state is accepted). */
const LISTED_STATES: Record<Exclude<TaskStateName, "unknown">, string> = {
  submitted: "Received, not started yet",
  working: "The agent is working on it",
  "input-required": "Waiting for your next message",
  "auth-required": "Waiting for credentials",
  completed: "Finished with an answer",
  failed: "Ended with an error",
  canceled: "Canceled before it finished",
  rejected: "The agent declined it"
}
const status = optional(Options.text("status"), "Only tasks in this state (e.g. working)").pipe(
  withSuggestions(Object.entries(LISTED_STATES))
)
const pageSize = optional(wholeNumber("page-size", "tasks", 1, 100), "Tasks per page, 1–100 (default 50)")
const pageToken = optional(Options.text("page-token"), "Page to fetch, from a previous listing")

const list = Command.make(
  "list",
  { ...agentOptions, contextId, status, pageSize, pageToken },
  (values) =>
    withAgentAccess(values, (access) =>
      render(
        values,
        listTasks({
          ...access,
          contextId: Option.getOrUndefined(values.contextId),
          status: Option.getOrUndefined(values.status),
          pageSize: Option.getOrUndefined(values.pageSize),
          pageToken: Option.getOrUndefined(values.pageToken)
        }),
        (result, style) =>
          [
            result.count === 0 ? style.dim("No tasks") : taskTable(result.tasks, style),
            ...(result.next_page_token === null ? [] : [
              style.dim(
                `\n${result.count}${result.total_size ? ` of ${result.total_size}` : ""} tasks. More: --page-token ${
                  escapeForTerminal(result.next_page_token)
                }`
              )
            ])
          ].join("\n")
      ))
).pipe(Command.withDescription("List the agent's tasks, one row each (A2A 1.0 agents)"))

// ---------------------------------------------------------------------------
// task notification …

const webhookUrl = Options.text("webhook-url").pipe(Options.withDescription("The URL that receives the notifications"))
const webhookToken = optional(secretOption("webhook-token"), "Token the agent sends with each notification")
const configId = Options.text("config-id").pipe(Options.withDescription("The push config's id"))

const notificationSet = Command.make(
  "set",
  { ...agentOptions, taskId: taskIdArg, webhookUrl, webhookToken },
  (values) =>
    withAgentAccess(values, (access) =>
      render(
        values,
        setPushConfig({
          ...taskInput(access, values),
          webhookUrl: values.webhookUrl,
          webhookToken: Option.getOrUndefined(Option.map(values.webhookToken, Redacted.value))
        }),
        (config, style) => `${style.green("Push notifications configured")}\n${pushConfigText(config, style)}`
      ))
).pipe(
  Command.withDescription("Send this task's updates to a webhook")
)

const notificationGet = Command.make(
  "get",
  { ...agentOptions, taskId: taskIdArg, configId: Options.optional(configId) },
  (values) =>
    withAgentAccess(
      values,
      (access) =>
        render(values, getPushConfig({ ...taskInput(access, values), configId: Option.getOrUndefined(values.configId) }), pushConfigText)
    )
).pipe(
  Command.withDescription("Show a task's push config (the newest one without --config-id)")
)

const notificationList = Command.make(
  "list",
  { ...agentOptions, taskId: taskIdArg },
  (values) =>
    withAgentAccess(values, (access) =>
      render(values, listPushConfigs(taskInput(access, values)), (result, style) =>
        result.count === 0
          ? style.dim("No push configs")
          : result.configs.map((config) => pushConfigText(config, style)).join("\n\n")))
).pipe(
  Command.withDescription("List a task's push configs")
)

const notificationDelete = Command.make(
  "delete",
  { ...agentOptions, taskId: taskIdArg, configId },
  (values) =>
    withAgentAccess(
      values,
      (access) =>
        render(values, deletePushConfig({ ...taskInput(access, values), configId: values.configId }), (result, style) =>
          `${style.green("Deleted")}\n${fields(style, [["Task ID", result.task_id], ["Config ID", result.config_id]])}`)
    )
).pipe(
  Command.withDescription("Remove a task's push config")
)

const notification = Command.make("notification").pipe(
  Command.withDescription("Push notification configs of a task"),
  Command.withSubcommands([notificationSet, notificationGet, notificationList, notificationDelete])
)

export const taskCommand = Command.make("task").pipe(
  Command.withDescription("Inspect and control an agent's tasks"),
  Command.withSubcommands([get, list, cancel, resubscribeCommand, notification]),
  Command.provide(ClientServices)
)
