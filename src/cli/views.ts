/** Human views of A2A results, shared by the message and task commands. */
import { Effect } from "effect"
import { answerTooLarge } from "../domain/answerFold.js"
import { act } from "../domain/hints.js"
import type { MessageResult, PushConfigView, TaskView, Truncation } from "../domain/results.js"
import { checkOnTask, terminalHint } from "./hints.js"
import { type CommandFailed, fields, reportError, type Style } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

/** The paint of a task state, by what it asks of the user: done, failed, waiting, or running. */
export const statePaint = (style: Style, state: string): (text: string) => string =>
  state === "completed"
    ? style.green
    : state === "failed" || state === "rejected"
    ? style.red
    : state === "canceled" || state === "input-required" || state === "auth-required"
    ? style.yellow
    : style.cyan

/** A task state, escaped and coloured (see statePaint). */
export const stateColor = (style: Style, state: string) => statePaint(style, state)(escapeForTerminal(state))

/** What to do next when the agent is waiting for the user, or the task still runs after the wait. */
const nextStep = (
  style: Style,
  agentUrl: string,
  view: { readonly needs_input: boolean; readonly needs_auth: boolean; readonly state: string; readonly task_id: string | null }
) => {
  if (view.needs_auth) {
    return `\n${style.yellow("The agent needs authentication.")} ` +
      terminalHint(["Save credentials with:\n  ", act("SaveCredentials", { agentUrl }), "\nthen reply with: ", act("ReplyInSession", { agentUrl })])
  }
  if (view.needs_input) {
    return `\n${style.yellow("The agent is waiting for your answer.")} ` + terminalHint(["Reply with:\n  ", act("ReplyInSession", { agentUrl })])
  }
  if ((view.state === "working" || view.state === "submitted") && view.task_id !== null) {
    return `\n${style.yellow("The task is still running.")} ` +
      terminalHint(checkOnTask({ agentUrl, taskId: view.task_id }))
  }
  return ""
}

export const taskLines = (style: Style, view: Pick<TaskView, "task_id" | "context_id" | "state">) =>
  fields(style, [
    ["Task ID", view.task_id],
    ["Context ID", view.context_id],
    ["State", view.state, statePaint(style, view.state)]
  ])

/** Ids and state, then the text, then the next step when the agent waits for the user. */
export const messageView = (agentUrl: string, showText: boolean) => (result: MessageResult, style: Style) => {
  const header = fields(style, [
    ["Context ID", result.context_id],
    ["Task ID", result.task_id],
    ["State", result.state, statePaint(style, result.state)]
  ])
  const body = !showText ? "" : result.text === "" ? `\n\n${style.dim("(no text in the response)")}` : `\n\n${answerText(result.text)}`
  return `${header}${body}${nextStep(style, agentUrl, result)}`
}

/** An answer's text keeps its lines (it is the answer); its other control characters are shown. */
const answerText = (text: string) => escapeForTerminal(text, "lines")

type HistoryLines = ReadonlyArray<{ readonly role: string; readonly text: string }>

/** History messages (getTask with a history length), each message's lines indented under its role. */
const historyText = (style: Style, history: HistoryLines | undefined) => {
  if (history === undefined) return ""
  if (history.length === 0) return `\n\n${style.dim("(no history)")}`
  const entries = history.map((entry) =>
    `  ${style.dim(`${escapeForTerminal(entry.role)}:`)} ${answerText(entry.text).split("\n").join("\n    ")}`)
  return `\n\n${style.bold(`History (${history.length}):`)}\n${entries.join("\n")}`
}

export const taskViewText = (agentUrl: string) => (view: TaskView & { readonly history?: HistoryLines }, style: Style) =>
  `${taskLines(style, view)}${view.text === "" ? "" : `\n\n${answerText(view.text)}`}${historyText(style, view.history)}${
    nextStep(style, agentUrl, view)
  }`

/**
 * An answer cut at its limit (`truncated`), once shown, is reported as response_too_large: one
 * line on stderr (JSON with --json) and exit 1.
 */
export const failWhenCut = (json: boolean) => (result: Truncation): Effect.Effect<void, CommandFailed> => {
  const cut = answerTooLarge(result)
  return cut === undefined ? Effect.void : reportError(cut, json)
}

export const pushConfigText = (config: PushConfigView, style: Style) =>
  fields(style, [
    ["Task ID", config.task_id],
    ["Config ID", config.config_id],
    ["URL", config.url],
    ["Token", config.token],
    ["Auth scheme", config.auth_scheme]
  ])
