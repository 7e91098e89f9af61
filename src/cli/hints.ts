/** The terminal's names for the actions hints suggest: relay commands and their flags. */
import { loginCommand } from "../domain/authNeeded.js"
import { act, cardOffers, type Hint, renderHint, type Vocabulary } from "../domain/hints.js"
import { escapeForTerminal } from "./terminalText.js"

/**
 * An argument as a shell reads it: agent-supplied ids and URLs are quoted when they hold anything
 * but plain characters, so a suggested command cannot run something else when pasted.
 */
const arg = (raw: string) => {
  const value = escapeForTerminal(raw, "line")
  return /^[A-Za-z0-9._:/@%+=,-]+$/.test(value) ? value : `'${value.replaceAll("'", "'\\''")}'`
}

const agent = (url: string | undefined) => (url === undefined ? "<agent>" : arg(url))

export const TERMINAL_WORDS: Vocabulary = {
  SaveCredentials: (a) => `relay auth set --url ${agent(a.agentUrl)} --bearer-token <TOKEN> (or --api-key <KEY>)`,
  Login: (a) => loginCommand(a),
  GiveCredentials: () => "--bearer-token <TOKEN> or --api-key <KEY>",
  AllowCrossOriginCredentials: () => "--allow-cross-origin-credentials",
  AllowInterfaceHost: (a) => `--allow-interface-host ${arg(a.host)}`,
  ValidateCard: (a) => `relay card validate ${arg(a.source)}`,
  GetCard: (a) => `relay card get --url ${arg(a.agentUrl)}`,
  ListTasks: (a) => `relay task list --url ${agent(a.agentUrl)}`,
  GetTask: (a) => `relay task get --url ${agent(a.agentUrl)} ${a.taskId === undefined ? "<task-id>" : arg(a.taskId)}`,
  FollowTask: (a) => `relay task resubscribe --url ${arg(a.agentUrl)} ${arg(a.taskId)}`,
  ListPushConfigs: (a) => `relay task notification list --url ${arg(a.agentUrl)} ${arg(a.taskId)}`,
  SetPushConfig: (a) => `relay task notification set --url ${arg(a.agentUrl)} ${arg(a.taskId)} --webhook-url <URL>`,
  ClearSession: (a) => `relay session clear --url ${arg(a.agentUrl)}`,
  ReplyInSession: (a) => `relay message send --url ${arg(a.agentUrl)} --continue <text>`,
  SendNewMessage: (a) => `relay message send --url ${arg(a.agentUrl)} <text> (without --continue or --task-id)`,
  PinInterface: (a) => `--protocol 1.0|0.3 and --binding jsonrpc|rest|grpc${cardOffers(a.offered)}`,
  RaiseRequestTimeout: () => "--timeout <seconds>",
  RaiseStreamIdleTimeout: () => "--stream-idle-timeout <seconds>",
  RaiseWait: () => "--wait <seconds>",
  RaiseResponseLimit: () => "--max-response-bytes <bytes>",
  RaiseAnswerLimit: () => "--max-answer-bytes <bytes>",
  RaiseRequestLimit: () => "--max-request-bytes <bytes>",
  SendFileByUrl: () => "--file-url <URL>",
  ShowDetails: () => "--verbose",
  ListAgents: () => "relay agent list",
  AddAgent: (a) => `relay agent add ${a.name === undefined ? "<name>" : arg(a.name)} <url>`,
  RemoveAgent: (a) => `relay agent remove ${arg(a.name)}`
}

export const terminalHint = (hint: Hint): string => renderHint(hint, TERMINAL_WORDS)

/** How to get back to a task relay stopped following while it may still run (a wait that ran out, a signal, a silent stream). */
export const checkOnTask = (task: { readonly agentUrl: string; readonly taskId: string }): Hint => [
  "Check on it with:\n  ",
  act("GetTask", task),
  "\nor follow it with:\n  ",
  act("FollowTask", task)
]
