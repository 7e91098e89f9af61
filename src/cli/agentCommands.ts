/**
 * `relay agent add|list|show|use|remove|refresh|discover`: agents by name, so `--url NAME` (or
 * `--agent NAME`, or no flag at all for the default) stands for the agent's URL everywhere. The
 * names live in the session store, shared with `relay mcp` (list_agents, add_agent, remove_agent).
 */
import { Args, Command, Options } from "@effect/cli"
import { Effect, Option } from "effect"
import { absurd } from "effect/Function"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import type { Described } from "../domain/errors.js"
import type { CardCheck, DiscoveredAgent, Discovery, RefreshResult } from "../programs/agentCards.js"
import { type AgentList, type AgentView, listAgents, removeAgent, showAgent, useAgent } from "../programs/agentNames.js"
import type { A2aClient } from "../services/A2aClient.js"
import * as SessionStore from "../services/SessionStore.js"
import { withValuesFrom } from "./commandTree.js"
import { AGENT_NAMES_COMMAND, cardUrl, outputOptions } from "./options.js"
import { CommandFailed, EXIT_FAILURE, fields, type OutputFlags, render, type Style, writeErr } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

const NAME_RULE = "letters, digits, '.', '_' or '-' (lower-cased)"

/** A saved agent's name: completions offer them. */
const nameArg = Args.text({ name: "NAME" }).pipe(
  Args.withDescription(`The agent's name: ${NAME_RULE}`),
  withValuesFrom(AGENT_NAMES_COMMAND)
)

/** The name `add` gives: a new one, so completions offer none. */
const newNameArg = Args.text({ name: "NAME" }).pipe(Args.withDescription(`The name to give the agent: ${NAME_RULE}`))

/**
 * The card programs, with the A2A client and the card validator, and the services they use: loaded
 * by the commands that read cards (add, refresh, discover), never by list or the completions.
 */
const withCards = <A, E extends Described>(
  flags: OutputFlags,
  use: (cards: typeof import("../programs/agentCards.js")) => Effect.Effect<A, E, A2aClient | SessionStore.SessionStore>,
  human: (result: A, style: Style) => string
) =>
  Effect.promise(() => Promise.all([import("../programs/agentCards.js"), import("./services.js")])).pipe(
    Effect.flatMap(([cards, { ClientServices }]) => Effect.provide(render(flags, use(cards), human), ClientServices))
  )

// ---------------------------------------------------------------------------
// Views

/** Skill names, the first few: a card may list thousands. */
const SKILLS_SHOWN = 10
/** A description in a listing: its first line, cut (show gives it whole). */
const LISTED_DESCRIPTION_CHARS = 160

const skillLine = (agent: Pick<AgentView, "skills" | "skills_omitted">) => {
  const names = agent.skills.slice(0, SKILLS_SHOWN).map((skill) => skill.name || skill.id)
  const more = agent.skills.length - names.length + agent.skills_omitted
  return names.length === 0 ? null : `${names.join(", ")}${more > 0 ? ` (and ${more} more)` : ""}`
}

const shortened = (text: string | null) =>
  text === null ? null : text.length > LISTED_DESCRIPTION_CHARS ? `${text.slice(0, LISTED_DESCRIPTION_CHARS - 1)}…` : text

const heading = (style: Style, agent: AgentView) => `${style.cyan(agent.name)}${agent.is_default ? style.dim(" (default)") : ""}`

const agentFields = (style: Style, agent: AgentView, indent: string, description: string | null) =>
  fields(style, [
    ["URL", agent.url],
    ["Card", agent.card_name],
    ["About", description],
    ["Skills", skillLine(agent)],
    ["Credentials", agent.has_credentials ? "saved" : null],
    ...(agent.card_url === null ? [] : [["Card URL", agent.card_url] as const]),
    ["Card read", agent.card_read_at]
  ], indent)

const listView = (list: AgentList, style: Style) =>
  list.count === 0
    ? style.dim("No agents saved; add one with relay agent add NAME URL")
    : [
      style.bold(`Agents (${list.count})`),
      ...list.agents.map((agent) => `\n${heading(style, agent)}\n${agentFields(style, agent, "  ", shortened(agent.description))}`)
    ].join("\n")

const skillView = (style: Style, skill: AgentView["skills"][number]) => {
  const tags = skill.tags.length === 0 ? "" : style.dim(` [${escapeForTerminal(skill.tags.join(", "))}]`)
  const modes = style.dim(
    ` (in: ${escapeForTerminal(skill.input_modes.join(", ") || "any")}; out: ${escapeForTerminal(skill.output_modes.join(", ") || "any")})`
  )
  const about = skill.description === "" ? "" : `: ${escapeForTerminal(skill.description)}`
  return `  - ${style.bold(escapeForTerminal(skill.name || skill.id))}${about}${tags}${modes}`
}

const showView = (agent: AgentView, style: Style) =>
  [
    heading(style, agent),
    agentFields(style, agent, "", agent.description),
    ...agent.skills.map((skill) => skillView(style, skill)),
    ...(agent.skills_omitted === 0 ? [] : [style.dim(`  (and ${agent.skills_omitted} more skills the card listed)`)])
  ].join("\n")

/** The card's issues on stderr: `add` warns about them, never refuses. */
const warnAboutCard = (name: string, check: CardCheck) =>
  check.error_count === 0 && check.warning_count === 0
    ? Effect.void
    : writeErr([
      `warning: the card has ${check.error_count} error(s) and ${check.warning_count} warning(s); relay card validate ${name} lists them all`,
      ...check.issues.map((issue) =>
        `  ${issue.severity} ${issue.code} at ${escapeForTerminal(issue.path || "/")}: ${escapeForTerminal(issue.message)}`
      )
    ].join("\n"))

// ---------------------------------------------------------------------------
// Commands

const urlArg = Args.text({ name: "URL" }).pipe(Args.withDescription("The agent's base URL, or the URL of its card file (….json)"))
const description = Options.text("description").pipe(
  Options.withDescription("Your own words for the agent, shown instead of its card's description"),
  Options.optional
)

const add = Command.make(
  "add",
  { ...outputOptions, name: newNameArg, url: urlArg, cardUrl, description },
  (values) =>
    Effect.flatMap(agentOfUrl(values, values.url), (agentUrl) =>
      withCards(values, (cards) =>
        cards.addAgent({
          name: values.name,
          agentUrl,
          cardUrl: Option.getOrUndefined(values.cardUrl),
          description: Option.getOrUndefined(values.description)
        }).pipe(Effect.tap((added) => warnAboutCard(added.agent.name, added.card_check))), ({ agent }, style) =>
        `${style.green(`Added ${agent.name}`)}: ${escapeForTerminal(agent.url)}${
          agent.card_name === null ? "" : ` (${escapeForTerminal(agent.card_name)})`
        }\n` +
        style.dim(`Use it as --url ${agent.name}, or make it the default with relay agent use ${agent.name}`)))
).pipe(Command.withDescription("Save an agent under a name: its card is read, checked (issues warn) and summarised"))

/** The URL argument of add and discover, decoded here, once: a URL, never a name. */
const agentOfUrl = (flags: OutputFlags, url: string) =>
  canonicalAgentUrl(url).pipe(Effect.catchAll((error) => render(flags, Effect.fail(error), absurd)))

/** One line a name: the name, a tab, its URL (what completions offer, with the URL as its description). */
const nameLines = (list: AgentList) => list.agents.map((agent) => `${agent.name}\t${agent.url}\n`).join("")

const names = Options.boolean("names").pipe(
  Options.withDescription("Print only each name and its URL, a tab between, one agent a line (for scripts and shell completions)")
)

const list = Command.make("list", { ...outputOptions, names }, (values) =>
  values.names && !values.json
    ? Effect.flatMap(
      listAgents(),
      (list) => (list.count === 0 ? Effect.void : Effect.sync(() => void process.stdout.write(nameLines(list))))
    ).pipe(
      Effect.catchAll((error) => render(values, Effect.fail(error), absurd))
    )
    : render(values, listAgents(), listView)).pipe(
    Command.withDescription("List the saved agents: name, URL, the card's name, description and skills, when the card was read")
  )

const show = Command.make("show", { ...outputOptions, name: nameArg }, (values) => render(values, showAgent(values.name), showView)).pipe(
  Command.withDescription("Show one saved agent, with each skill's description, tags and modes")
)

const use = Command.make(
  "use",
  { ...outputOptions, name: nameArg },
  (values) =>
    render(
      values,
      useAgent(values.name),
      (agent, style) =>
        `${style.green(`${agent.name} is the default agent`)}: ${escapeForTerminal(agent.url)}\n` +
        style.dim("Commands given no --url use it (RELAY_AGENT, when set, comes first)")
    )
).pipe(
  Command.withDescription("Make a saved agent the default of commands given no --url")
)

const remove = Command.make(
  "remove",
  { ...outputOptions, name: nameArg },
  (values) =>
    render(values, removeAgent(values.name), (result, style) =>
      result.removed
        ? `${style.green(`Removed ${result.name}`)} (${escapeForTerminal(result.url ?? "")}); ${
          style.dim("the URL's session and credentials are kept")
        }`
        : style.dim(`No agent is named ${result.name}`))
).pipe(
  Command.withDescription("Forget a name (and the default, if it was); the URL's session and credentials stay")
)

const refreshView = (result: RefreshResult, style: Style) =>
  result.count === 0
    ? style.dim("No agents saved")
    : result.agents.map((outcome) =>
      outcome.ok
        ? `${style.green("✓")} ${outcome.name}: ${escapeForTerminal(outcome.card_name ?? "unnamed card")}, ${outcome.skill_count} skill(s)`
        : `${style.red("✗")} ${outcome.name}: ${escapeForTerminal(outcome.error?.message ?? "", "lines").split("\n").join("\n    ")}`
    ).join("\n")

const refresh = Command.make(
  "refresh",
  { ...outputOptions, name: Args.optional(nameArg) },
  (values) =>
    withCards(values, (cards) => cards.refreshAgents(Option.getOrUndefined(values.name)), refreshView).pipe(
      // A card that could not be read is shown above, and fails the command for scripts.
      Effect.flatMap((result) => (result.failed === 0 ? Effect.void : Effect.fail(new CommandFailed({ exitCode: EXIT_FAILURE }))))
    )
).pipe(Command.withDescription("Read the cards of every saved agent (or of NAME) again; exit 1 when one cannot be read"))

const discoveredLine = (style: Style, agent: DiscoveredAgent) => {
  const title = escapeForTerminal(agent.card_name ?? agent.identifier ?? "unnamed")
  const where = agent.agent_url === null ? "" : ` ${escapeForTerminal(agent.agent_url)}`
  if (agent.error !== null) return `${style.red("✗")} ${title}${where}\n    ${style.dim(escapeForTerminal(agent.error))}`
  const name = agent.name === null ? "" : agent.added ? style.green(` added as ${agent.name}`) : style.dim(` saved as ${agent.name}`)
  const skills = agent.skills.length === 0
    ? ""
    : `\n    ${
      style.dim(
        `skills: ${escapeForTerminal(agent.skills.slice(0, SKILLS_SHOWN).join(", "))}${agent.skills.length > SKILLS_SHOWN ? " …" : ""}`
      )
    }`
  return `${style.green("✓")} ${title}${where}${name}${skills}`
}

const discoveryView = (adding: boolean) => (result: Discovery, style: Style) =>
  [
    style.bold(`Agents in ${escapeForTerminal(result.catalog_url)} (${result.count})`),
    ...result.agents.map((agent) => discoveredLine(style, agent)),
    ...(result.not_read === 0 ? [] : [style.dim(`${result.not_read} more A2A entries were not read`)]),
    ...(adding || !result.agents.some((agent) => agent.error === null && agent.name === null)
      ? []
      : [style.dim("Save them under their cards' names with --add")])
  ].join("\n")

const addAll = Options.boolean("add").pipe(
  Options.withDescription("Save every agent the catalog names under its card's name, slugged (a name already taken gets -2, -3, …)")
)

const discover = Command.make(
  "discover",
  { ...outputOptions, url: Args.text({ name: "URL" }).pipe(Args.withDescription("The domain, or the catalog's own URL")), add: addAll },
  (values) =>
    Effect.flatMap(
      agentOfUrl(values, values.url),
      (url) => withCards(values, (cards) => cards.discoverAgents({ url, add: values.add }), discoveryView(values.add))
    )
).pipe(
  Command.withDescription("List the agents a domain's AI catalog (/.well-known/ai-catalog.json, a proposal) names; --add saves them")
)

export const agentCommand = Command.make("agent").pipe(
  Command.withDescription("Agents by name: --url NAME, a default agent, and a catalog an assistant can choose from"),
  Command.withSubcommands([add, list, show, use, remove, refresh, discover]),
  Command.provide(SessionStore.layer)
)
