/** The terminal's names for the actions hints suggest: relay commands and their flags. */
import { type Hint, renderHint, type Vocabulary } from "../domain/hints.js"
import { loginCommand } from "../domain/oauth.js"

const agent = (url: string | undefined) => url ?? "<agent>"

export const TERMINAL_WORDS: Vocabulary = {
  SaveCredentials: (a) => `relay auth set --url ${agent(a.agentUrl)} --bearer-token <TOKEN> (or --api-key <KEY>)`,
  Login: (a) => loginCommand(a),
  GiveCredentials: () => "--bearer-token <TOKEN> or --api-key <KEY>",
  AllowCrossOriginCredentials: () => "--allow-cross-origin-credentials",
  ValidateCard: (a) => `relay card validate ${a.source}`,
  GetCard: (a) => `relay card get --url ${a.agentUrl}`,
  ListTasks: (a) => `relay task list --url ${agent(a.agentUrl)}`,
  GetTask: (a) => `relay task get --url ${agent(a.agentUrl)} ${a.taskId ?? "<task-id>"}`,
  FollowTask: (a) => `relay task resubscribe --url ${a.agentUrl} ${a.taskId}`,
  ListPushConfigs: (a) => `relay task notification list --url ${a.agentUrl} ${a.taskId}`,
  SetPushConfig: (a) => `relay task notification set --url ${a.agentUrl} ${a.taskId} --webhook-url <URL>`,
  ClearSession: (a) => `relay session clear --url ${a.agentUrl}`,
  SendNewMessage: (a) => `relay message send --url ${a.agentUrl} <text> (without --continue or --task-id)`,
  PinInterface: (a) =>
    `--protocol 1.0|0.3 and --binding jsonrpc|rest${a.offered === undefined ? "" : ` (the card offers ${a.offered.join(", ") || "none"})`}`,
  RaiseRequestTimeout: () => "--timeout <seconds>",
  RaiseStreamIdleTimeout: () => "--stream-idle-timeout <seconds>",
  RaiseWait: () => "--wait <seconds>",
  RaiseResponseLimit: () => "--max-response-bytes <bytes>",
  ShowDetails: () => "--verbose"
}

export const terminalHint = (hint: Hint): string => renderHint(hint, TERMINAL_WORDS)
