/** `relay mcp install|uninstall|config` as a user runs them: real HOME, real files, exit codes. */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { relayBin, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

let home: ReturnType<typeof tempHome>
beforeEach(() => (home = tempHome()))
afterEach(() => home.cleanup())

const env = () => ({ HOME: home.parent, XDG_CONFIG_HOME: Path.join(home.parent, ".config"), CODEX_HOME: "" })

describe("relay mcp install", () => {
  it("writes the entry with absolute paths to node and this relay, then reports it unchanged", async () => {
    const first = await runRelay(["mcp", "install", "--client", "claude-desktop", "--json"], { stateDir: home.stateDir, env: env() })
    expect(first.code).toBe(0)
    const result = JSON.parse(first.stdout)
    expect(result).toMatchObject({ client: "claude-desktop", scope: "user", action: "added", backup: null })
    expect(result.file).toBe(Path.join(home.parent, ".config", "Claude", "claude_desktop_config.json"))
    const written = JSON.parse(Fs.readFileSync(result.file, "utf8"))
    // The shell's RELAY_HOME goes with the entry, so the assistant and the terminal share one store; and relay says so.
    expect(written.mcpServers["a2a-relay"]).toEqual({
      command: process.execPath,
      args: [Fs.realpathSync(relayBin), "mcp"],
      env: { RELAY_HOME: home.stateDir }
    })
    expect(result.notes).toEqual([`The entry sets RELAY_HOME=${home.stateDir}, so Claude Desktop and this shell share one store.`])

    const second = await runRelay(["mcp", "install", "--client", "claude-desktop"], { stateDir: home.stateDir, env: env() })
    expect(second.stdout).toContain("Already up to date")
  })

  it("refuses an unparsable file with exit 1 and a JSON error, touching nothing", async () => {
    const file = Path.join(home.parent, ".codex", "config.toml")
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, "model = \n")
    const run = await runRelay(["mcp", "install", "--client", "codex", "--json"], { stateDir: home.stateDir, env: env() })
    expect(run.code).toBe(1)
    expect(JSON.parse(run.stderr).error.code).toBe("client_config_unparsable")
    expect(Fs.readFileSync(file, "utf8")).toBe("model = \n")
    expect(Fs.readdirSync(Path.dirname(file))).toEqual(["config.toml"])
  })

  it("a dry run for Codex prints the TOML table it would write, and project scope says to trust the folder", async () => {
    const run = await runRelay(["mcp", "install", "--client", "codex", "--scope", "project", "--dry-run"], {
      stateDir: home.stateDir,
      env: env(),
      cwd: home.parent
    })
    expect(run.code).toBe(0)
    expect(run.stdout).toContain(`[mcp_servers.a2a-relay]\ncommand = "${process.execPath}"`)
    expect(run.stdout).toContain(`[mcp_servers.a2a-relay.env]\nRELAY_HOME = "${home.stateDir}"`)
    expect(run.stdout).toContain("Codex reads .codex/config.toml only in a trusted project")
    expect(Fs.existsSync(Path.join(home.parent, ".codex"))).toBe(false)
  })

  it("Gemini settings with comments are read and written as JSON with comments", async () => {
    const file = Path.join(home.parent, ".gemini", "settings.json")
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, `{\n  // dark, please\n  "theme": "GitHub"\n}\n`)
    const run = await runRelay(["mcp", "install", "--client", "gemini", "--json"], { stateDir: home.stateDir, env: env() })
    expect(run.code).toBe(0)
    const text = Fs.readFileSync(file, "utf8")
    expect(text).toContain("// dark, please")
    expect(text).toContain(`"a2a-relay": {`)
  })

  it("an unparsable file is reported with its line and column", async () => {
    const file = Path.join(home.parent, ".cursor", "mcp.json")
    Fs.mkdirSync(Path.dirname(file), { recursive: true })
    Fs.writeFileSync(file, `{\n  "mcpServers": {\n    "x": \n  }\n}\n`)
    const run = await runRelay(["mcp", "install", "--client", "cursor"], { stateDir: home.stateDir, env: env() })
    expect(run.code).toBe(1)
    expect(run.stderr).toContain("value expected at line 4, column 3")
  })

  it("config prints the entry without writing; uninstall removes it", async () => {
    const config = await runRelay(["mcp", "config", "--client", "codex"], { stateDir: home.stateDir, env: env() })
    expect(config.stdout).toContain("[mcp_servers.a2a-relay]")
    expect(Fs.existsSync(Path.join(home.parent, ".codex"))).toBe(false)
    await runRelay(["mcp", "install", "--client", "gemini"], { stateDir: home.stateDir, env: env() })
    const removed = await runRelay(["mcp", "uninstall", "--client", "gemini", "--json"], { stateDir: home.stateDir, env: env() })
    expect(JSON.parse(removed.stdout).action).toBe("removed")
    expect(JSON.parse(Fs.readFileSync(Path.join(home.parent, ".gemini", "settings.json"), "utf8")).mcpServers).toEqual({})
  })
})
