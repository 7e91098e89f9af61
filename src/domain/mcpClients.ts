/**
 * The MCP clients `relay mcp install` knows: where each keeps its configuration on Linux, macOS and
 * Windows, in which format and under which key, and the entry it expects for a stdio server.
 *
 * Each row cites the client's own documentation for its paths and entry format (checked November 2026);
 * where a client documents no path for an OS, the row says what relay assumes instead.
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
  /** JSONC clients that also accept a comma after the last member (VS Code's parser; Gemini's does not). */
  readonly trailingCommas?: boolean
  /** Said after a project-scope install, when the client reads a project's file only once trusted. */
  readonly projectTrust?: string
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
  // https://modelcontextprotocol.io/docs/develop/connect-local-servers: claude_desktop_config.json under
  // %APPDATA%\Claude (Windows) and ~/Library/Application Support/Claude (macOS), key mcpServers, {command, args}.
  // Anthropic ships no Linux build and documents no Linux path: ~/.config/Claude (XDG) is what community builds use.
  "claude-desktop": {
    id: "claude-desktop",
    title: "Claude Desktop",
    format: "json",
    serversKey: "mcpServers",
    user: (where) => [appConfigHome(where), "Claude", "claude_desktop_config.json"],
    typed: false
  },
  // https://code.claude.com/docs/en/mcp (installation scopes): user scope in ~/.claude.json (top-level
  // mcpServers; %USERPROFILE%\.claude.json on Windows), project scope in .mcp.json at the project root;
  // `claude mcp add` itself writes {type: "stdio", command, args}.
  "claude-code": {
    id: "claude-code",
    title: "Claude Code",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".claude.json"),
    project: [".mcp.json"],
    typed: true
  },
  // https://cursor.com/docs/mcp (formerly docs.cursor.com/context/model-context-protocol): ~/.cursor/mcp.json
  // (global; %USERPROFILE%\.cursor on Windows) and .cursor/mcp.json (project), key mcpServers, {command, args};
  // the transport is inferred from the fields.
  cursor: {
    id: "cursor",
    title: "Cursor",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".cursor", "mcp.json"),
    project: [".cursor", "mcp.json"],
    typed: false
  },
  // https://code.visualstudio.com/docs/copilot/reference/mcp-configuration: mcp.json in the user profile or
  // .vscode/mcp.json, key "servers", and `type: "stdio"` is required. The profile folder (default profile) is
  // Code/User under %APPDATA%, ~/Library/Application Support or ~/.config:
  // https://code.visualstudio.com/docs/configure/settings#_settings-file-locations
  vscode: {
    id: "vscode",
    title: "VS Code",
    format: "jsonc",
    serversKey: "servers",
    user: (where) => [appConfigHome(where), "Code", "User", "mcp.json"],
    project: [".vscode", "mcp.json"],
    typed: true,
    trailingCommas: true
  },
  // https://docs.windsurf.com/windsurf/cascade/mcp: ~/.codeium/windsurf/mcp_config.json, "the same schema as
  // Claude Desktop" (mcpServers, {command, args}). Windsurf documents no per-project MCP file.
  windsurf: {
    id: "windsurf",
    title: "Windsurf",
    format: "json",
    serversKey: "mcpServers",
    user: underHome(".codeium", "windsurf", "mcp_config.json"),
    typed: false
  },
  // https://geminicli.com/docs/tools/mcp-server/ and https://geminicli.com/docs/cli/configuration:
  // ~/.gemini/settings.json (user) and .gemini/settings.json (project), key mcpServers, {command, args}.
  // Gemini strips // and /* */ comments before parsing (JSON with comments, no trailing commas), and reads a
  // project's settings only in a trusted folder (https://geminicli.com/docs/cli/trusted-folders).
  gemini: {
    id: "gemini",
    title: "Gemini CLI",
    format: "jsonc",
    serversKey: "mcpServers",
    user: underHome(".gemini", "settings.json"),
    project: [".gemini", "settings.json"],
    typed: false,
    projectTrust: "Gemini CLI reads .gemini/settings.json only in a trusted folder: trust this folder in Gemini CLI first."
  },
  // https://developers.openai.com/codex/mcp and /codex/config-reference: ~/.codex/config.toml ($CODEX_HOME
  // when set), project overrides in .codex/config.toml (read only in trusted projects), tables
  // [mcp_servers.<name>] with command and args.
  codex: {
    id: "codex",
    title: "Codex",
    format: "toml",
    serversKey: "mcp_servers",
    user: (where) => [where.env.CODEX_HOME || pathsOf(where).join(where.home, ".codex"), "config.toml"],
    project: [".codex", "config.toml"],
    typed: false,
    projectTrust: "Codex reads .codex/config.toml only in a trusted project: trust this folder in Codex first."
  }
}

/** The configuration file of a client at a scope, or undefined when the client has no such scope. */
export const configPath = (client: McpClient, scope: Scope, where: Whereabouts): string | undefined => {
  const paths = pathsOf(where)
  if (scope === "user") return paths.join(...client.user(where))
  return client.project === undefined ? undefined : paths.join(where.cwd, ...client.project)
}

/** How the client starts relay: an absolute program, its arguments and the environment it needs. */
export interface Launcher {
  readonly command: string
  readonly args: ReadonlyArray<string>
  /** RELAY_HOME when the installing shell sets it, so the assistant and the terminal share one store. */
  readonly env?: Readonly<Record<string, string>>
}

/** The entry relay adds under the client's servers key. */
export const serverEntry = (client: McpClient, launcher: Launcher): Record<string, unknown> => {
  const env = launcher.env !== undefined && Object.keys(launcher.env).length > 0 ? { env: { ...launcher.env } } : {}
  return client.typed
    ? { type: "stdio", command: launcher.command, args: [...launcher.args], ...env }
    : { command: launcher.command, args: [...launcher.args], ...env }
}

export const DEFAULT_SERVER_NAME = "a2a-relay"
