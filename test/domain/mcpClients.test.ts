import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { serversIn } from "../../src/domain/mcpClientConfig.js"
import { configPath, MCP_CLIENTS, mcpClients, serverEntry, type Whereabouts } from "../../src/domain/mcpClients.js"

const mac: Whereabouts = { platform: "darwin", home: "/Users/me", cwd: "/Users/me/app", env: {} }
const linux: Whereabouts = { platform: "linux", home: "/home/me", cwd: "/home/me/app", env: { XDG_CONFIG_HOME: "/home/me/.cfg" } }
const windows: Whereabouts = {
  platform: "win32",
  home: "C:\\Users\\me",
  cwd: "C:\\src\\app",
  env: { APPDATA: "C:\\Users\\me\\AppData\\Roaming" }
}

const userPaths = (where: Whereabouts) => Object.fromEntries(MCP_CLIENTS.map((id) => [id, configPath(mcpClients[id], "user", where)]))

describe("MCP client configuration paths", () => {
  it("macOS", () => {
    expect(userPaths(mac)).toEqual({
      "claude-desktop": "/Users/me/Library/Application Support/Claude/claude_desktop_config.json",
      "claude-code": "/Users/me/.claude.json",
      cursor: "/Users/me/.cursor/mcp.json",
      vscode: "/Users/me/Library/Application Support/Code/User/mcp.json",
      windsurf: "/Users/me/.codeium/windsurf/mcp_config.json",
      gemini: "/Users/me/.gemini/settings.json",
      codex: "/Users/me/.codex/config.toml"
    })
  })

  it("Linux, honouring XDG_CONFIG_HOME and CODEX_HOME", () => {
    expect(userPaths(linux)).toMatchObject({
      "claude-desktop": "/home/me/.cfg/Claude/claude_desktop_config.json",
      vscode: "/home/me/.cfg/Code/User/mcp.json",
      codex: "/home/me/.codex/config.toml"
    })
    expect(configPath(mcpClients.codex, "user", { ...linux, env: { CODEX_HOME: "/srv/codex" } })).toBe("/srv/codex/config.toml")
    expect(configPath(mcpClients.vscode, "user", { ...linux, env: {} })).toBe("/home/me/.config/Code/User/mcp.json")
  })

  it("Windows", () => {
    expect(userPaths(windows)).toEqual({
      "claude-desktop": "C:\\Users\\me\\AppData\\Roaming\\Claude\\claude_desktop_config.json",
      "claude-code": "C:\\Users\\me\\.claude.json",
      cursor: "C:\\Users\\me\\.cursor\\mcp.json",
      vscode: "C:\\Users\\me\\AppData\\Roaming\\Code\\User\\mcp.json",
      windsurf: "C:\\Users\\me\\.codeium\\windsurf\\mcp_config.json",
      gemini: "C:\\Users\\me\\.gemini\\settings.json",
      codex: "C:\\Users\\me\\.codex\\config.toml"
    })
  })

  it("project scope where the client has one", () => {
    const project = Object.fromEntries(MCP_CLIENTS.map((id) => [id, configPath(mcpClients[id], "project", mac)]))
    expect(project).toEqual({
      "claude-desktop": undefined,
      "claude-code": "/Users/me/app/.mcp.json",
      cursor: "/Users/me/app/.cursor/mcp.json",
      vscode: "/Users/me/app/.vscode/mcp.json",
      windsurf: undefined,
      gemini: "/Users/me/app/.gemini/settings.json",
      codex: "/Users/me/app/.codex/config.toml"
    })
  })
})

describe("MCP client entry formats, as each client documents them", () => {
  const launcher = { command: "/usr/bin/node", args: ["/opt/relay/main.js", "mcp"] }
  const shapes = Object.fromEntries(MCP_CLIENTS.map((id) => {
    const client = mcpClients[id]
    return [id, { format: client.format, key: client.serversKey, entry: serverEntry(client, launcher) }]
  }))

  it("names the format, the servers key and the stdio entry of every client", () => {
    const plain = { command: "/usr/bin/node", args: ["/opt/relay/main.js", "mcp"] }
    const typed = { type: "stdio", ...plain }
    expect(shapes).toEqual({
      "claude-desktop": { format: "json", key: "mcpServers", entry: plain },
      "claude-code": { format: "json", key: "mcpServers", entry: typed },
      cursor: { format: "json", key: "mcpServers", entry: plain },
      // VS Code's mcp.json takes comments, keys its servers "servers" and requires the type.
      vscode: { format: "jsonc", key: "servers", entry: typed },
      windsurf: { format: "json", key: "mcpServers", entry: plain },
      // Gemini CLI strips comments before parsing its settings.
      gemini: { format: "jsonc", key: "mcpServers", entry: plain },
      // [mcp_servers.<name>] tables.
      codex: { format: "toml", key: "mcp_servers", entry: plain }
    })
  })

  it("carries the installing shell's RELAY_HOME in the entry's env", () => {
    const entry = serverEntry(mcpClients.cursor, { ...launcher, env: { RELAY_HOME: "/srv/relay" } })
    expect(entry).toEqual({ command: "/usr/bin/node", args: ["/opt/relay/main.js", "mcp"], env: { RELAY_HOME: "/srv/relay" } })
  })
})

describe("MCP client configuration text", () => {
  const vscode = mcpClients.vscode

  it("keeps a `__proto__` server name of a JSONC file as a name (not the object's prototype)", () => {
    const text = `{\n  // mine\n  "${vscode.serversKey}": { "__proto__": { "command": "x" }, "other": { "command": "y" }, },\n}\n`
    const servers = Either.getOrThrow(serversIn(text, vscode))
    expect(Object.keys(servers)).toEqual(["__proto__", "other"])
    expect(Object.getPrototypeOf(servers)).toBe(Object.prototype)
    expect(servers["__proto__"]).toEqual({ command: "x" })
  })
})
