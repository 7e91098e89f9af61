/** `relay mcp install|uninstall|config`: connect an MCP client to relay without editing its files by hand. */
import { Command, Options } from "@effect/cli"
import { Effect } from "effect"
import { DEFAULT_SERVER_NAME, MCP_CLIENTS, mcpClients, SCOPES } from "../domain/mcpClients.js"
import type { ClientTarget, InstallResult } from "../programs/mcpClients.js"
import * as ClientConfigFiles from "../services/ClientConfigFiles.js"
import { withSuggestions } from "./commandTree.js"
import { outputOptions } from "./options.js"
import { render, type Style } from "./output.js"

/** The programs, with their TOML and JSONC editors, load when one of these commands runs (not with `relay mcp`). */
const programs = Effect.promise(() => import("../programs/mcpClients.js"))

const client = Options.choice("client", MCP_CLIENTS).pipe(
  Options.withDescription(`The MCP client: ${MCP_CLIENTS.join(", ")}`),
  withSuggestions(MCP_CLIENTS.map((id) => [id, mcpClients[id].title]))
)
const scope = Options.choice("scope", SCOPES).pipe(
  Options.withDescription("user (default: every project) or project (the current folder's configuration)"),
  Options.withDefault("user" as const),
  withSuggestions([["user", "Every project (the default)"], ["project", "The current folder's configuration"]])
)
const name = Options.text("name").pipe(
  Options.withDescription(`The server's name in the client (default ${DEFAULT_SERVER_NAME})`),
  Options.withDefault(DEFAULT_SERVER_NAME)
)
const dryRun = Options.boolean("dry-run").pipe(Options.withDescription("Say what would change; write nothing"))

const actionWords: Record<InstallResult["action"], string> = {
  added: "Added",
  updated: "Updated",
  unchanged: "Already up to date:",
  removed: "Removed",
  absent: "Not installed:"
}

const describeChange = (result: InstallResult, style: Style) => {
  const title = mcpClients[result.client].title
  const verb = result.dry_run && result.action !== "unchanged" && result.action !== "absent"
    ? `Would be ${result.action === "removed" ? "removed" : result.action}:`
    : actionWords[result.action]
  const lines = [`${style.green(verb)} "${result.name}" for ${title} (${result.scope}) in ${result.file}`]
  if (result.backup !== null) lines.push(style.dim(`Backup of the previous file: ${result.backup}`))
  if (result.snippet !== null && result.action !== "unchanged") lines.push(style.dim(result.snippet.trimEnd()))
  lines.push(...result.notes)
  if (!result.dry_run && (result.action === "added" || result.action === "updated" || result.action === "removed")) {
    lines.push(style.dim(`Restart ${title} (or reload its MCP servers) to pick the change up.`))
  }
  return lines.join("\n")
}

const targetOf = ({ client, name, scope }: ClientTarget): ClientTarget => ({ client, scope, name })

const install = Command.make(
  "install",
  { ...outputOptions, client, scope, name, dryRun },
  (values) => render(values, Effect.flatMap(programs, (run) => run.installMcpClient(targetOf(values), values.dryRun)), describeChange)
).pipe(
  Command.withDescription("Add relay to an MCP client's configuration (keeps a backup; changes nothing else)"),
  Command.provide(ClientConfigFiles.layer)
)

const uninstall = Command.make(
  "uninstall",
  { ...outputOptions, client, scope, name, dryRun },
  (values) => render(values, Effect.flatMap(programs, (run) => run.uninstallMcpClient(targetOf(values), values.dryRun)), describeChange)
).pipe(
  Command.withDescription("Remove relay's entry from an MCP client's configuration"),
  Command.provide(ClientConfigFiles.layer)
)

const config = Command.make("config", { ...outputOptions, client: Options.optional(client), name }, (values) =>
  render(
    values,
    Effect.flatMap(programs, (run) => run.mcpClientSnippet(values.client._tag === "Some" ? values.client.value : undefined, values.name)),
    (result) => result.file === null ? result.snippet.trimEnd() : `# ${result.file}\n${result.snippet.trimEnd()}`
  )).pipe(
    Command.withDescription("Print relay's entry for an MCP client's configuration, without writing it"),
    Command.provide(ClientConfigFiles.layer)
  )

export const mcpClientCommands = [install, uninstall, config] as const
