/**
 * The MCP clients `relay mcp install` knows: where each keeps its configuration on Linux, macOS and
 * Windows, in which format and under which key, and the entry it expects for a stdio server.
 *
 * Paths follow each client's documentation:
 * - Claude Desktop: claude_desktop_config.json in the app's config folder (%APPDATA%\Claude,
 *   ~/Library/Application Support/Claude; ~/.config/Claude on Linux builds).
 * - Claude Code: ~/.claude.json (user scope), .mcp.json at the project root (project scope).
 * - Cursor: ~/.cursor/mcp.json, .cursor/mcp.json.
 * - VS Code: mcp.json in the user profile folder (Code/User), .vscode/mcp.json; key "servers"; JSONC.
 * - Windsurf: ~/.codeium/windsurf/mcp_config.json (user only).
 * - Gemini CLI: ~/.gemini/settings.json, .gemini/settings.json.
 * - Codex: $CODEX_HOME/config.toml (default ~/.codex), .codex/config.toml; tables [mcp_servers.<name>].
 */
import * as NodePath from "node:path"

export const MCP_CLIENTS = ["claude-desktop", "claude-code", "cursor", "vscode", "windsurf", "gemini", "codex"] as const
export type McpClientId = typeof MCP_CLIENTS[number]

export const SCOPES = ["user", "project"] as const
export type Scope = typeof SCOPES[number]

export type ConfigFormat = "json" | "jsonc" | "toml"
export type Platform = "linux" | "darwin" | "win32"

/** What a path is built from: the home directory and the environment variables clients honour. */
export interface Whereabouts {
  readonly platform: Platform
  readonly home: string
  /** The project directory, for project scope. */
  readonly cwd: string
  readonly env: Readonly<Record<string, string | undefined>>
}

/** An OS-independent description of a user-scope path: a base folder and the segments below it. */
type UserPath = (where: Whereabouts) => ReadonlyArray<string>

export interface McpClient {
  readonly id: McpClientId
  readonly title: string
  readonly format: ConfigFormat
  /** The top-level key holding the servers, by name. */
  readonly serversKey: string
  readonly user: UserPath
  /** Relative to the project directory; absent when the client has no project configuration. */
  readonly project?: ReadonlyArray<string>
  /** Clients whose schema names the transport of each entry. */
  readonly typed: boolean
}

const pathsOf = (where: Whereabouts) => where.platform === "win32" ? NodePath.win32 : NodePath.posix

/** The folder where desktop apps keep their settings: %APPDATA%, Application Support, XDG config. */
const appConfigHome = (where: Whereabouts): string => {
  const paths = pathsOf(where)
  if (where.platform === "win32") return where.env.APPDATA ?? paths.join(where.home, "AppData", "Roaming")
  if (where.platform === "darwin") return paths.join(where.home, "Library", "Application Support")
  return where.env.XDG_CONFIG_HOME || paths.join(where.home, ".config")
}

const underHome = (...segments: ReadonlyArray<string>): UserPath => (where) => [where.home, ...segments]

export const mcpClients: Record<McpClientId, McpClient> = {
  "claude-desktop": {
    id: "claude-desktop",
    title: "Claude Desktop",
    format: "json",
    serversKey: "mcpServers",
    user: (where) => [appConfigHome(where), "Claude", "claude_desktop_config.json"],
    typed: false
  },
  "claude-code": {
    id: "claude-code",
    title: "Claude Code",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".claude.json"),
    project: [".mcp.json"],
    typed: true
  },
  cursor: {
    id: "cursor",
    title: "Cursor",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".cursor", "mcp.json"),
    project: [".cursor", "mcp.json"],
    typed: false
  },
  vscode: {
    id: "vscode",
    title: "VS Code",
    format: "jsonc",
    serversKey: "servers",
    user: (where) => [appConfigHome(where), "Code", "User", "mcp.json"],
    project: [".vscode", "mcp.json"],
    typed: true
  },
  windsurf: {
    id: "windsurf",
    title: "Windsurf",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".codeium", "windsurf", "mcp_config.json"),
    typed: false
  },
  gemini: {
    id: "gemini",
    title: "Gemini CLI",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".gemini", "settings.json"),
    project: [".gemini", "settings.json"],
    typed: false
  },
  codex: {
    id: "codex",
    title: "Codex",
    format: "toml",
    serversKey: "mcp_servers",
    user: (where) => [where.env.CODEX_HOME || pathsOf(where).join(where.home, ".codex"), "config.toml"],
    project: [".codex", "config.toml"],
    typed: false
  }
}

/** The configuration file of a client at a scope, or undefined when the client has no such scope. */
export const configPath = (client: McpClient, scope: Scope, where: Whereabouts): string | undefined => {
  const paths = pathsOf(where)
  if (scope === "user") return paths.join(...client.user(where))
  return client.project === undefined ? undefined : paths.join(where.cwd, ...client.project)
}

/** How the client starts relay: an absolute program and its arguments. */
export interface Launcher {
  readonly command: string
  readonly args: ReadonlyArray<string>
}

/** The entry relay adds under the client's servers key. */
export const serverEntry = (client: McpClient, launcher: Launcher): Record<string, unknown> =>
  client.typed
    ? { type: "stdio", command: launcher.command, args: [...launcher.args] }
    : { command: launcher.command, args: [...launcher.args] }

export const DEFAULT_SERVER_NAME = "a2a-relay"
