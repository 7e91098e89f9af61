/** Human views of A2A results, shared by the message and task commands. */
import { Effect } from "effect"
import * as Path from "node:path"
import { partText } from "../a2a/text.js"
import { answerTooLarge } from "../domain/answerFold.js"
import { type AnswerPart, isTextAlone } from "../domain/answerParts.js"
import { fileSummary } from "../domain/fileParts.js"
import { act } from "../domain/hints.js"
import type { InterfaceUsed, MessageResult, PushConfigView, TaskView, Truncation } from "../domain/results.js"
import { checkOnTask, terminalHint } from "./hints.js"
import { type CommandFailed, type Field, fields, reportError, type Style } from "./output.js"
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
      terminalHint([
        "Save credentials with:\n  ",
        act("SaveCredentials", { agentUrl }),
        "\nthen reply with: ",
        act("ReplyInSession", { agentUrl })
      ])
  }
  if (view.needs_input) {
    return `\n${style.yellow("The agent is waiting for your answer.")} ` +
      terminalHint(["Reply with:\n  ", act("ReplyInSession", { agentUrl })])
  }
  if ((view.state === "working" || view.state === "submitted") && view.task_id !== null) {
    return `\n${style.yellow("The task is still running.")} ` +
      terminalHint(checkOnTask({ agentUrl, taskId: view.task_id }))
  }
  return ""
}

/** The row naming the interface a result came over (`GRPC, A2A 1.0`), when a call answered. */
const interfaceRow = (style: Style, used: InterfaceUsed): ReadonlyArray<Field> =>
  used.binding === undefined ? [] : [["Interface", `${used.binding}, A2A ${used.protocol_version}`, style.dim]]

export const taskLines = (style: Style, view: Pick<TaskView, "task_id" | "context_id" | "state"> & InterfaceUsed) =>
  fields(style, [
    ["Task ID", view.task_id],
    ["Context ID", view.context_id],
    ["State", view.state, statePaint(style, view.state)],
    ...interfaceRow(style, view)
  ])

/** Ids and state, then the answer (only its files when its text was streamed), then the next step when the agent waits for the user. */
export const messageView = (agentUrl: string, showText: boolean) => (result: MessageResult, style: Style) => {
  const header = fields(style, [
    ["Context ID", result.context_id],
    ["Task ID", result.task_id],
    ["State", result.state, statePaint(style, result.state)],
    ...interfaceRow(style, result)
  ])
  const answer = answerBody(result, !showText)
  const body = answer !== "" ? `\n\n${answer}` : showText ? `\n\n${style.dim("(no text in the response)")}` : ""
  return `${header}${body}${nextStep(style, agentUrl, result)}`
}

/** An answer's text keeps its lines (it is the answer); its other control characters are shown. */
const answerText = (text: string) => escapeForTerminal(text, "lines")

/**
 * Files listed one per line before the rest are counted in one line: an answer of 10 000 tiny
 * files is saved whole, but does not scroll its text away (--json lists every one).
 */
export const MAX_FILE_LINES = 20

/** One file on one line: `saved hello.txt (text/plain, 31 bytes) → /path/…`, `a.png (image/png) at https://…`, or why it was not saved. */
const fileLine = (part: AnswerPart) => escapeForTerminal(`${part.path === null ? "" : "saved "}${fileSummary(part)}`)

/** The line that stands for the files not listed, naming their folder when they were all saved in one. */
const moreFilesLine = (files: ReadonlyArray<AnswerPart>) => {
  const folders = new Set(files.map((file) => (file.path === null ? null : Path.dirname(file.path))))
  const [folder] = folders
  const where = folders.size === 1 && folder !== null && folder !== undefined ? ` saved in ${escapeForTerminal(folder)}` : ""
  return `… and ${files.length} more files${where} (--json lists every one)`
}

/**
 * The answer's parts as the terminal shows them, in order: text as it came (the chunks of one
 * artifact joined), data as its whole JSON, indented, and one line per file (MAX_FILE_LINES at
 * most); an answer of text alone is its text. With `filesOnly`, the file lines alone (the text was
 * streamed already).
 */
export const answerBody = (answer: Pick<TaskView, "text" | "parts">, filesOnly = false): string => {
  const { parts } = answer
  if (isTextAlone(parts)) return filesOnly ? "" : answerText(answer.text)
  let body = ""
  let previous: AnswerPart | undefined
  let fileLines = 0
  const unlisted: Array<AnswerPart> = []
  for (const part of parts) {
    if (filesOnly && part.kind !== "file") continue
    if (part.kind === "file" && fileLines++ >= MAX_FILE_LINES) {
      unlisted.push(part)
      continue
    }
    const piece = part.kind === "file" ? fileLine(part) : answerText(part.kind === "text" ? part.text ?? "" : partText({ data: part.data }))
    const joins = part.kind === "text" && previous?.kind === "text" && part.artifact_id !== null &&
      part.artifact_id === previous.artifact_id
    body += previous === undefined ? piece : `${joins ? "" : "\n"}${piece}`
    previous = part
  }
  return unlisted.length === 0 ? body : `${body}\n${moreFilesLine(unlisted)}`
}

type HistoryLines = ReadonlyArray<{ readonly role: string; readonly text: string }>

/** History messages (getTask with a history length), each message's lines indented under its role. */
const historyText = (style: Style, history: HistoryLines | undefined) => {
  if (history === undefined) return ""
  if (history.length === 0) return `\n\n${style.dim("(no history)")}`
  const entries = history.map((entry) =>
    `  ${style.dim(`${escapeForTerminal(entry.role)}:`)} ${answerText(entry.text).split("\n").join("\n    ")}`
  )
  return `\n\n${style.bold(`History (${history.length}):`)}\n${entries.join("\n")}`
}

export const taskViewText = (agentUrl: string) => (view: TaskView & { readonly history?: HistoryLines }, style: Style) => {
  const answer = answerBody(view)
  return `${taskLines(style, view)}${answer === "" ? "" : `\n\n${answer}`}${historyText(style, view.history)}${
    nextStep(style, agentUrl, view)
  }`
}

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
