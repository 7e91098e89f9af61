/**
 * Hints say what to do next. When the next step is something relay itself does, the hint names
 * it as an Action (what to do and with which arguments) instead of words, and each door names
 * the action in its own vocabulary: commands and flags on the terminal (cli/hints.ts), tools and
 * parameters under MCP (mcp/hints.ts). So no hint names a flag an assistant cannot pass.
 */
import { Schema } from "effect"

export type Action =
  /** Keep credentials for the agent (`relay auth set` / `set_agent_credentials`). */
  | { readonly _tag: "SaveCredentials"; readonly agentUrl?: string | undefined }
  /** Obtain OAuth tokens for the agent: only the user can (`relay auth login`), never an assistant. */
  | {
    readonly _tag: "Login"
    readonly agentUrl: string
    readonly flow?: "client_credentials" | "authorization_code" | "device_code" | string | undefined
    readonly clientId?: string | undefined
  }
  /** Pass credentials with this one call. */
  | { readonly _tag: "GiveCredentials" }
  /** Let credentials go to the interface origins the card names. */
  | { readonly _tag: "AllowCrossOriginCredentials" }
  /** Let requests go to an interface host outside the card's class of address. */
  | { readonly _tag: "AllowInterfaceHost"; readonly host: string }
  | { readonly _tag: "ValidateCard"; readonly source: string }
  | { readonly _tag: "GetCard"; readonly agentUrl: string }
  /** The agent may be unknown where the hint is made; the door then asks for it. */
  | { readonly _tag: "ListTasks"; readonly agentUrl?: string | undefined }
  | { readonly _tag: "GetTask"; readonly agentUrl?: string | undefined; readonly taskId?: string | undefined }
  /** Follow a running task until it settles. */
  | { readonly _tag: "FollowTask"; readonly agentUrl: string; readonly taskId: string }
  | { readonly _tag: "ListPushConfigs"; readonly agentUrl: string; readonly taskId: string }
  | { readonly _tag: "SetPushConfig"; readonly agentUrl: string; readonly taskId: string }
  /** Forget the saved context and task of the agent. */
  | { readonly _tag: "ClearSession"; readonly agentUrl: string }
  /** Answer the agent in the saved conversation (its task waiting for input). */
  | { readonly _tag: "ReplyInSession"; readonly agentUrl: string }
  /** Send a new message outside the saved task. */
  | { readonly _tag: "SendNewMessage"; readonly agentUrl: string }
  /** Choose the protocol version or binding instead of the card's first. */
  | { readonly _tag: "PinInterface"; readonly offered?: ReadonlyArray<string> | undefined }
  | { readonly _tag: "RaiseRequestTimeout" }
  | { readonly _tag: "RaiseStreamIdleTimeout" }
  | { readonly _tag: "RaiseWait" }
  | { readonly _tag: "RaiseResponseLimit" }
  /** Allow a larger whole answer (all its events together). */
  | { readonly _tag: "RaiseAnswerLimit" }
  /** Allow a larger request (the files and data sent with a message). */
  | { readonly _tag: "RaiseRequestLimit" }
  /** Send a file by reference (its URL) instead of its bytes. */
  | { readonly _tag: "SendFileByUrl" }
  /** Where the raw exchange and details are. */
  | { readonly _tag: "ShowDetails" }
  /** The agents saved by name. */
  | { readonly _tag: "ListAgents" }
  /** Save an agent under a name. */
  | { readonly _tag: "AddAgent"; readonly name?: string | undefined }
  | { readonly _tag: "RemoveAgent"; readonly name: string }

export type ActionTag = Action["_tag"]

/** Builds an action: `act("GetTask", { agentUrl, taskId })`. */
export const act = <Tag extends ActionTag>(
  _tag: Tag,
  // `{} extends X`: whether X has no required keys, so its argument may be left out.
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  ...args: {} extends Omit<Extract<Action, { readonly _tag: Tag }>, "_tag"> ? [Omit<Extract<Action, { readonly _tag: Tag }>, "_tag">?]
    : [Omit<Extract<Action, { readonly _tag: Tag }>, "_tag">]
): Extract<Action, { readonly _tag: Tag }> => ({ ...args[0], _tag }) as Extract<Action, { readonly _tag: Tag }>

/** " (the card offers …)" after a PinInterface action when it knows what the card offers, in every door's words. */
export const cardOffers = (offered: ReadonlyArray<string> | undefined): string =>
  offered === undefined ? "" : ` (the card offers ${offered.join(", ") || "none"})`

/** A hint: plain words, or words and actions to be named by the door that shows them. */
export type Hint = string | ReadonlyArray<string | Action>

/** How one door names every action; a door that cannot do one says what comes closest. */
export type Vocabulary = { readonly [Tag in ActionTag]: (action: Extract<Action, { readonly _tag: Tag }>) => string }

export const renderHint = (hint: Hint, words: Vocabulary): string =>
  typeof hint === "string"
    ? hint
    : hint.map((part) => (typeof part === "string" ? part : (words[part._tag] as (action: Action) => string)(part))).join("")

/** For error fields: a hint is words, or a list of words and actions. */
export const HintSchema: Schema.Schema<Hint> = Schema.declare(
  (input: unknown): input is Hint => typeof input === "string" || Array.isArray(input),
  { identifier: "Hint" }
)

/** Every action of a hint, for checks that each one names something real. */
export const actionsOf = (hint: Hint): ReadonlyArray<Action> =>
  typeof hint === "string" ? [] : hint.filter((part): part is Action => typeof part !== "string")
