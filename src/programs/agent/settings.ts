/**
 * How the local agent behaves: its policy (answer, or ask for input first), the model's
 * instructions, how much of the conversation the model sees and how long each turn stays working.
 */
import { Context, Duration } from "effect"
import type * as V1 from "../../a2a/v1.js"

/** What the agent does with a message before calling the model. */
export type AgentDecision =
  | { readonly _tag: "Answer" }
  | { readonly _tag: "AskForInput"; readonly question: string }

export interface AgentPolicy {
  /** `message` is the newest user message of `task` (already in its history). */
  readonly decide: (message: V1.Message, task: V1.Task) => AgentDecision
}

/** The default: always answer. */
export const answerAlways: AgentPolicy = { decide: () => ({ _tag: "Answer" }) }

export interface AgentSettingsValue {
  readonly policy: AgentPolicy
  /** The model's instructions, sent before the conversation. */
  readonly systemPrompt: string
  /** How many earlier messages of the conversation the model sees. */
  readonly contextMessages: number
  /** How long each turn stays working before the model is asked (`--latency`), so it can be watched. */
  readonly latency: Duration.Duration
}

export const DEFAULT_SYSTEM_PROMPT = "You are relay's local A2A agent, used to test and develop A2A clients. " +
  "Answer helpfully and concisely in plain text."

/** The agent's behaviour; programs use the defaults unless a layer provides other settings. */
export class AgentSettings extends Context.Reference<AgentSettings>()("relay/AgentSettings", {
  defaultValue: (): AgentSettingsValue => ({
    policy: answerAlways,
    systemPrompt: DEFAULT_SYSTEM_PROMPT,
    contextMessages: 20,
    latency: Duration.zero
  })
}) {}
