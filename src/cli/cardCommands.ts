/** `relay card get|validate`: an agent's card, and a validator that reports every issue. */
import { Args, Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { getCard, validateCard } from "../programs/cards.js"
import { anyFile } from "../programs/readPermission.js"
import { withValuesFrom } from "./commandTree.js"
import { AGENT_NAMES_COMMAND, agentOptions, maxResponseBytes, outputOptions, withAgentAccess } from "./options.js"
import { CommandFailed, EXIT_FAILURE, fields, render } from "./output.js"
import { ClientServices } from "./services.js"
import { escapeForTerminal } from "./terminalText.js"

const authenticated = Options.boolean("authenticated").pipe(
  Options.withDescription("Fetch the extended card the agent shows to authenticated clients")
)

const get = Command.make("get", { ...agentOptions, authenticated }, (values) =>
  withAgentAccess(values, (access) =>
    render(
      values,
      getCard({ ...access, authenticated: values.authenticated }),
      // The card is the result; the human view is the same JSON, for piping into jq as well (escaping
      // the control characters JSON leaves raw keeps it the same JSON value).
      (result) => escapeForTerminal(JSON.stringify(result.card, null, 2), "lines")
    ))).pipe(
    Command.withDescription(
      "Print an agent's card as JSON, null fields omitted (save it with > card.json; --json adds its URL and generation)"
    )
  )

const source = Args.text({ name: "SOURCE" }).pipe(
  Args.withDescription("An agent's name (relay agent add), agent URL, card URL, or card file"),
  withValuesFrom(AGENT_NAMES_COMMAND)
)
const file = Options.boolean("file").pipe(Options.withDescription("Treat SOURCE as a file path"))

const severityMark = { error: "✗", warning: "!", info: "i" } as const

const validate = Command.make(
  "validate",
  { ...outputOptions, source, file, maxResponseBytes },
  (values) =>
    render(
      values,
      validateCard({ source: values.source, fromFile: values.file, maxResponseBytes: values.maxResponseBytes }, anyFile),
      (result, style) => {
        const heading = result.valid ? style.green("Valid agent card") : style.red("Invalid agent card")
        const summary = fields(style, [
          ["Agent", result.agent_name],
          ["Protocol", result.protocol_version],
          ["Generation", result.generation],
          ["Streaming", String(result.capabilities.streaming)],
          ["Push", String(result.capabilities.push_notifications)],
          ["Source", result.source]
        ])
        const issues = result.issues.map((issue) => {
          const color = issue.severity === "error" ? style.red : issue.severity === "warning" ? style.yellow : style.dim
          const where = escapeForTerminal(issue.path || "/")
          return `  ${color(`${severityMark[issue.severity]} ${issue.code}`)} ${where}: ${escapeForTerminal(issue.message)}\n    ${
            style.dim(escapeForTerminal(issue.hint))
          }`
        })
        return [heading, summary, ...(issues.length === 0 ? [] : [`\nIssues (${result.issues.length}):`, ...issues])].join("\n")
      }
    ).pipe(
      // An invalid card is a result (printed above) and a failure for scripts: exit 1.
      Effect.flatMap((result) => result.valid ? Effect.void : Effect.fail(new CommandFailed({ exitCode: EXIT_FAILURE })))
    )
).pipe(Command.withDescription("Validate an agent card from an agent's name, a URL or a file; exit 1 when invalid"))

export const cardCommand = Command.make("card").pipe(
  Command.withDescription("Agent cards: fetch and validate"),
  Command.withSubcommands([get, validate]),
  Command.provide(ClientServices)
)
