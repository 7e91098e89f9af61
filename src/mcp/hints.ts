/**
 * The MCP door's names for the actions hints suggest: tools and their parameters, written as
 * `tool (parameter value, …)`. What no tool can do is said as what comes closest.
 */
import { loginCommand } from "../domain/authNeeded.js"
import { cardOffers, type Hint, renderHint, type Vocabulary } from "../domain/hints.js"

const agent = (url: string | undefined) => (url === undefined ? "agent_url" : `agent_url ${url}`)

export const ASSISTANT_WORDS: Vocabulary = {
  SaveCredentials: (a) => `set_agent_credentials (${agent(a.agentUrl)}, bearer_token or api_key)`,
  // Only the user can log in: secrets and consent never pass through the assistant.
  Login: (a) => `the user running \`${loginCommand(a)}\` in a terminal (relay's MCP tools cannot log in)`,
  GiveCredentials: () => "bearer_token or api_key in this call",
  AllowCrossOriginCredentials: () =>
    "the user's consent: relay sends credentials to another origin only when its user allows it on the terminal",
  AllowInterfaceHost: (a) =>
    `the user's consent: relay sends requests to ${a.host} only when its user allows that host where the MCP server is started`,
  ValidateCard: (a) => `validate_agent_card (source ${a.source})`,
  GetCard: (a) => `get_agent_card (agent_url ${a.agentUrl})`,
  ListTasks: (a) => `list_tasks (${agent(a.agentUrl)})`,
  GetTask: (a) => `get_task (${agent(a.agentUrl)}, task_id${a.taskId === undefined ? "" : ` ${a.taskId}`})`,
  FollowTask: (a) => `wait_for_task (agent_url ${a.agentUrl}, task_id ${a.taskId})`,
  ListPushConfigs: (a) => `list_task_notifications (agent_url ${a.agentUrl}, task_id ${a.taskId})`,
  SetPushConfig: (a) => `set_task_notification (agent_url ${a.agentUrl}, task_id ${a.taskId}, webhook_url)`,
  ClearSession: (a) => `clear_session_data (agent_url ${a.agentUrl})`,
  ReplyInSession: (a) => `send_message (agent_url ${a.agentUrl}, use_session true)`,
  SendNewMessage: (a) => `send_message (agent_url ${a.agentUrl}) without task_id or use_session`,
  PinInterface: (a) => `an agent that offers what relay speaks${cardOffers(a.offered)}; validate_agent_card shows the card`,
  RaiseRequestTimeout: () => "a later retry (the agent was slow to answer one request)",
  RaiseStreamIdleTimeout: () => "wait_for_task, which follows the task without a stream",
  RaiseWait: () => "a larger timeout_seconds",
  RaiseResponseLimit: () => "a terminal command, where the user can raise relay's response limit (the MCP server keeps its default)",
  RaiseAnswerLimit: () => "the user starting the MCP server with a larger answer limit (RELAY_MAX_ANSWER_BYTES)",
  RaiseRequestLimit: () => "the user starting the MCP server with a larger request limit",
  SendFileByUrl: () => "send_message (files with a url instead of the file's bytes)",
  ShowDetails: () => "the relay MCP server log (stderr)",
  ListAgents: () => "list_agents",
  AddAgent: (a) => `add_agent (${a.name === undefined ? "name" : `name ${a.name}`}, url)`,
  RemoveAgent: (a) => `remove_agent (name ${a.name})`
}

export const assistantHint = (hint: Hint): string => renderHint(hint, ASSISTANT_WORDS)
