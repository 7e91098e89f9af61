/**
 * `relay mcp install|uninstall|config`: put relay's entry into an MCP client's configuration, take
 * it out, or show it. Only that entry changes; a backup is kept before any write; a file that
 * cannot be parsed is refused untouched; running twice changes nothing the second time.
 */
import { Effect, Either, Option } from "effect"
import { ClientConfigUnparsable, InvalidInput } from "../domain/errors.js"
import { sameValue, serversIn, tomlSection, withoutServer, withServer } from "../domain/mcpClientConfig.js"
import {
  configPath,
  MCP_CLIENTS,
  type McpClient,
  type McpClientId,
  mcpClients,
  type Scope,
  SCOPES,
  serverEntry
} from "../domain/mcpClients.js"
import { ClientConfigFiles } from "../services/ClientConfigFiles.js"

export interface ClientTarget {
  readonly client: McpClientId
  readonly scope: Scope
  readonly name: string
}

export interface InstallResult {
  readonly client: McpClientId
  readonly scope: Scope
  readonly file: string
  readonly name: string
  readonly action: "added" | "updated" | "unchanged" | "removed" | "absent"
  /** The copy of the file as it was, or null when nothing was written (or the file was new). */
  readonly backup: string | null
  readonly dry_run: boolean
  readonly entry: Record<string, unknown> | null
  /** The entry as it reads in the file (TOML for Codex), or null when removing. */
  readonly snippet: string | null
  /** What the user should know: the store the entry points at, a client that must trust the folder first. */
  readonly notes: ReadonlyArray<string>
}

/** The entry as it reads in the client's file. */
const snippetOf = (client: McpClient, name: string, entry: Record<string, unknown>) =>
  client.format === "toml"
    ? tomlSection(client, name, entry)
    : JSON.stringify({ [client.serversKey]: { [name]: entry } }, null, 2)

const notesOn = (client: McpClient, scope: Scope, entry: Record<string, unknown> | undefined) => {
  const store = (entry?.env as { RELAY_HOME?: string } | undefined)?.RELAY_HOME
  return [
    ...(store === undefined ? [] : [`The entry sets RELAY_HOME=${store}, so ${client.title} and this shell share one store.`]),
    ...(scope === "project" && entry !== undefined && client.projectTrust !== undefined ? [client.projectTrust] : [])
  ]
}

const fileOf = (client: McpClient, scope: Scope) =>
  Effect.gen(function*() {
    const files = yield* ClientConfigFiles
    const file = configPath(client, scope, files.where)
    if (file !== undefined) return file
    return yield* new InvalidInput({
      reason: `${client.title} has no ${scope}-scope configuration`,
      suggestion: `Use --scope user for ${client.id}.`
    })
  })

const parsed = <A>(file: string, result: Either.Either<A, string>) =>
  Either.isRight(result)
    ? Effect.succeed(result.right)
    : Effect.fail(new ClientConfigUnparsable({ file, reason: result.left }))

type Edit = (text: string, client: McpClient) => Either.Either<string, string>

/** Reads, checks, edits and (unless a dry run) writes the file with a backup first. */
const change = (target: ClientTarget, dryRun: boolean, entry: Record<string, unknown> | undefined, edit: Edit) =>
  Effect.gen(function*() {
    const files = yield* ClientConfigFiles
    const client = mcpClients[target.client]
    const file = yield* fileOf(client, target.scope)
    const existing = yield* files.read(file)
    const text = Option.getOrElse(existing, () => "")
    const servers = yield* parsed(file, serversIn(text, client))
    const current = servers[target.name]
    const action: InstallResult["action"] = entry === undefined
      ? (current === undefined ? "absent" : "removed")
      : current === undefined
      ? "added"
      : sameValue(current, entry)
      ? "unchanged"
      : "updated"
    const result = {
      ...target,
      file,
      action,
      dry_run: dryRun,
      entry: entry ?? null,
      snippet: entry === undefined ? null : snippetOf(client, target.name, entry),
      notes: notesOn(client, target.scope, entry)
    }
    if (dryRun || action === "unchanged" || action === "absent") return { ...result, backup: null } satisfies InstallResult
    const updated = yield* parsed(file, edit(text, client))
    const backup = Option.isSome(existing) ? yield* files.backup(file) : null
    yield* files.write(file, updated)
    return { ...result, backup } satisfies InstallResult
  })

export const installMcpClient = Effect.fn("installMcpClient")(function*(target: ClientTarget, dryRun: boolean) {
  const files = yield* ClientConfigFiles
  const entry = serverEntry(mcpClients[target.client], files.launcher)
  return yield* change(target, dryRun, entry, (text, client) => withServer(text, client, target.name, entry))
})

export const uninstallMcpClient = Effect.fn("uninstallMcpClient")(function*(target: ClientTarget, dryRun: boolean) {
  return yield* change(target, dryRun, undefined, (text, client) => withoutServer(text, client, target.name))
})

export interface ClientConfigSnippet {
  readonly client: McpClientId | null
  /** Where install would write it (user scope); null for the generic snippet. */
  readonly file: string | null
  readonly name: string
  readonly entry: Record<string, unknown>
  /** The entry as it reads in the file. */
  readonly snippet: string
  readonly notes: ReadonlyArray<string>
}

/** The entry for one client, or the common `mcpServers` JSON most clients accept. */
export const mcpClientSnippet = Effect.fn("mcpClientSnippet")(function*(clientId: McpClientId | undefined, name: string) {
  const files = yield* ClientConfigFiles
  const client = mcpClients[clientId ?? "claude-desktop"]
  const entry = serverEntry(client, files.launcher)
  return {
    client: clientId ?? null,
    file: clientId === undefined ? null : configPath(client, "user", files.where) ?? null,
    name,
    entry,
    snippet: snippetOf(client, name, entry),
    notes: notesOn(client, "user", entry)
  } satisfies ClientConfigSnippet
})

/** A configured server that starts relay, whether the programs it names are there, and the store it uses. */
export interface RelayEntry {
  readonly client: McpClientId
  readonly scope: Scope
  readonly file: string
  readonly name: string
  /** Absolute paths in command and args that do not exist. */
  readonly missing: ReadonlyArray<string>
  /** The RELAY_HOME the entry sets, or null when it uses relay's default store. */
  readonly relayHome: string | null
}

interface StdioEntry {
  readonly command: string
  readonly args: ReadonlyArray<string>
  readonly env: Readonly<Record<string, unknown>>
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

const stdioEntry = (entry: unknown): StdioEntry | undefined => {
  if (!isRecord(entry) || typeof entry.command !== "string") return undefined
  const args = Array.isArray(entry.args) && entry.args.every((arg) => typeof arg === "string") ? entry.args : []
  return { command: entry.command, args, env: isRecord(entry.env) ? entry.env : {} }
}

/** A program's own name: "relay" for /usr/local/bin/relay, C:\\…\\relay.cmd or npx.exe's "npx". */
const programName = (command: string) => command.split(/[\\/]/).at(-1)!.replace(/\.(cmd|exe|ps1)$/i, "").toLowerCase()

/**
 * The shapes of an entry that starts `relay mcp`, whatever the paths: the ones `relay mcp install` writes
 * (the `relay` on PATH, or node and relay's main file) and the ones people write by hand (`npx a2a-relay`).
 */
const startsRelay = ({ args, command }: StdioEntry): boolean => {
  const program = programName(command)
  if (program === "relay") return args[0] === "mcp"
  if (program === "node" || program === "nodejs") return /(^|[\\/])(main\.c?js|relay)$/.test(args[0] ?? "") && args[1] === "mcp"
  if (program === "npx" || program === "pnpx" || program === "bunx") {
    const at = args.findIndex((arg) => /^a2a-relay(@.+)?$/.test(arg))
    return at >= 0 && args[at + 1] === "mcp"
  }
  return false
}

const absolutePaths = (entry: StdioEntry) =>
  [entry.command, ...entry.args].filter((part) => part.startsWith("/") || /^[A-Za-z]:[\\/]/.test(part))

/** Every client configuration (both scopes) with an entry that starts relay; unreadable files are skipped. */
export const relayEntries = Effect.gen(function*() {
  const files = yield* ClientConfigFiles
  const found: Array<RelayEntry> = []
  for (const id of MCP_CLIENTS) {
    const client = mcpClients[id]
    for (const scope of SCOPES) {
      const file = configPath(client, scope, files.where)
      if (file === undefined) continue
      const text = yield* files.read(file).pipe(Effect.orElseSucceed(() => Option.none<string>()))
      if (Option.isNone(text)) continue
      const servers = Either.getOrElse(serversIn(text.value, client), () => ({}))
      for (const [name, value] of Object.entries(servers)) {
        const entry = stdioEntry(value)
        if (entry === undefined || !startsRelay(entry)) continue
        const missing: Array<string> = []
        for (const path of absolutePaths(entry)) if (!(yield* files.exists(path))) missing.push(path)
        const relayHome = typeof entry.env.RELAY_HOME === "string" && entry.env.RELAY_HOME !== "" ? entry.env.RELAY_HOME : null
        found.push({ client: id, scope, file, name, missing, relayHome })
      }
    }
  }
  return found
})
