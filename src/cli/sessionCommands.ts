/** `relay session list|show|clear`: the saved conversation state per agent. */
import { Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { InvalidInput } from "../domain/errors.js"
import type { SessionSummary } from "../domain/session.js"
import { clearSessions, listSessions, showSession } from "../programs/sessions.js"
import * as SessionStore from "../services/SessionStore.js"
import { agentOf, agentUrl, outputOptions } from "./options.js"
import { fields, render, type Style } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

const sessionFields = (style: Style, session: SessionSummary, indent = "") =>
  fields(style, [
    ["Context ID", session.context_id],
    ["Task ID", session.task_id],
    ["Last state", session.last_state],
    ["Credentials", session.has_credentials ? "saved" : null],
    // Only agents whose card is off the well-known paths have one.
    ...(session.card_url === null ? [] : [["Card URL", session.card_url] as const]),
    ["Updated", session.updated_at]
  ], indent)

const list = Command.make("list", outputOptions, (flags) =>
  render(flags, listSessions(), ({ count, sessions }, style) =>
    count === 0
      ? style.dim("No saved sessions")
      : [
        style.bold(`Saved sessions (${count})`),
        ...sessions.map((s) => `\n${style.cyan(escapeForTerminal(s.agent_url))}\n${sessionFields(style, s, "  ")}`)
      ]
        .join("\n"))).pipe(Command.withDescription("List the saved session of every agent"))

const show = Command.make(
  "show",
  { ...outputOptions, url: agentUrl },
  ({ url, ...flags }) =>
    render(
      flags,
      Effect.flatMap(agentOf(url), showSession),
      (session, style) =>
        `${style.bold("Session for")} ${style.cyan(escapeForTerminal(session.agent_url))}\n${sessionFields(style, session)}`
    )
).pipe(
  Command.withDescription("Show the saved context, task and state of one agent")
)

const all = Options.boolean("all").pipe(Options.withDescription("Clear the sessions of every agent"))

const clear = Command.make(
  "clear",
  { ...outputOptions, url: agentUrl, all },
  ({ url, all, ...flags }) => {
    // Without --url or --all: the default agent (RELAY_AGENT, relay agent use), as for every command.
    const target = !all
      ? agentOf(url)
      : Option.isNone(url)
      ? Effect.succeed(undefined)
      : Effect.fail(
        new InvalidInput({
          reason: "Give either --url or --all, not both",
          suggestion: "Use relay session clear --url <agent>, or --all for every agent"
        })
      )
    return render(
      flags,
      Effect.flatMap(target, clearSessions),
      (result, style) =>
        style.green(
          result.all
            ? `Cleared ${result.cleared} session(s)`
            : result.cleared
            ? `Cleared session for ${result.agent_url}`
            : `No session state saved for ${result.agent_url}`
        ) +
        (result.credentials_kept ? `\n${style.dim("Saved credentials were kept; remove them with relay auth clear.")}` : "")
    )
  }
).pipe(
  Command.withDescription(
    "Forget the context and task ids of one agent (--url, else the default agent) or all (--all); credentials are kept"
  )
)

export const sessionCommand = Command.make("session").pipe(
  Command.withDescription("Saved per-agent sessions, shared with relay mcp"),
  Command.withSubcommands([list, show, clear]),
  Command.provide(SessionStore.layer)
)
