/** relay mcp install/uninstall on sample configuration files of every client, on the real disk. */
import * as TOML from "@decimalturn/toml-patch"
import * as NodeContext from "@effect/platform-node/NodeContext"
import { Effect, Either, Layer } from "effect"
import * as Jsonc from "jsonc-parser"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { configPath, type Launcher, MCP_CLIENTS, type McpClientId, mcpClients, type Whereabouts } from "../../src/domain/mcpClients.js"
import { installMcpClient, relayEntries, uninstallMcpClient } from "../../src/programs/mcpClients.js"
import { type ClientConfigFiles, clientConfigFilesAt } from "../../src/services/ClientConfigFiles.js"

const launcher: Launcher = { command: "/usr/bin/node", args: ["/opt/relay/dist/main.js", "mcp"] }

/** A file each client might already have: another server, settings relay knows nothing of, comments where allowed. */
const samples: Record<McpClientId, string> = {
  "claude-desktop":
    `{\n  "globalShortcut": "Ctrl+Space",\n  "mcpServers": {\n    "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }\n  }\n}\n`,
  "claude-code":
    `{\n  "numStartups": 12,\n  "projects": { "/home/me/app": { "allowedTools": [] } },\n  "mcpServers": {\n    "files": { "type": "stdio", "command": "npx", "args": [] }\n  }\n}\n`,
  cursor: `{\n    "mcpServers": {\n        "files": { "command": "npx", "args": [] }\n    }\n}\n`,
  vscode:
    `// my MCP servers\n{\n  "inputs": [],\n  "servers": {\n    // the filesystem one\n    "files": { "type": "stdio", "command": "npx", "args": [], },\n  },\n}\n`,
  windsurf: `{\n  "mcpServers": {\n    "files": { "command": "npx", "args": [], "disabled": false }\n  }\n}\n`,
  // Gemini CLI reads its settings as JSON with comments.
  gemini:
    `{\n  // my look\n  "theme": "GitHub",\n  "selectedAuthType": "oauth-personal",\n  "mcpServers": { /* local ones */\n    // the filesystem\n    "files": { "command": "npx", "args": [] }\n  }\n}\n`,
  codex:
    `# Codex settings\nmodel = "o3" # the default model\n\n[mcp_servers.files]\n# the filesystem server\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-filesystem"]\n`
}

const broken: Record<McpClientId, string> = {
  "claude-desktop": `{ "mcpServers": { `,
  "claude-code": `{ "mcpServers": [] }`,
  // Comments are JSONC; Cursor reads plain JSON.
  cursor: `// note\n{ "mcpServers": {} }`,
  vscode: `{ "servers": { "files": } }`,
  windsurf: `not json`,
  // Comments, but no comma after the last member: Gemini's parser refuses it.
  gemini: `{ "mcpServers": { "a": 1 }, }`,
  codex: `model = "o3"\n[mcp_servers\n`
}

const parse = (client: McpClientId, text: string): Record<string, any> =>
  mcpClients[client].format === "toml" ? TOML.parse(text) as Record<string, any> : Jsonc.parse(text)

let root: string
let where: Whereabouts
beforeEach(() => {
  root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-clients-"))
  const home = Path.join(root, "home")
  where = { platform: "linux", home, cwd: Path.join(root, "project"), env: {} }
})
afterEach(() => Fs.rmSync(root, { recursive: true, force: true }))

const run = <A, E>(effect: Effect.Effect<A, E, ClientConfigFiles>) =>
  Effect.runPromise(
    Effect.either(effect).pipe(Effect.provide(clientConfigFilesAt(where, launcher).pipe(Layer.provide(NodeContext.layer))))
  ) as Promise<Either.Either<A, E>>

const target = (client: McpClientId) => ({ client, scope: "user" as const, name: "a2a-relay" })
const fileOf = (client: McpClientId) => configPath(mcpClients[client], "user", where)!
const write = (file: string, text: string) => {
  Fs.mkdirSync(Path.dirname(file), { recursive: true })
  Fs.writeFileSync(file, text)
}
const backupsBeside = (file: string) => Fs.readdirSync(Path.dirname(file)).filter((name) => name.endsWith(".bak"))

describe.each(MCP_CLIENTS)("relay mcp install --client %s", (client) => {
  const serversKey = mcpClients[client].serversKey

  it("merges one entry, keeps every neighbour, backs the file up and is idempotent", async () => {
    const file = fileOf(client)
    write(file, samples[client])
    const before = parse(client, samples[client])

    const first = Either.getOrThrow(await run(installMcpClient(target(client), false)))
    expect(first.action).toBe("added")
    const after = parse(client, Fs.readFileSync(file, "utf8"))
    expect(after[serversKey]["a2a-relay"]).toMatchObject({ command: launcher.command, args: launcher.args })
    // Everything else is as it was.
    const { "a2a-relay": _added, ...otherServers } = after[serversKey]
    expect({ ...after, [serversKey]: otherServers }).toEqual(before)
    expect(Fs.readFileSync(first.backup!, "utf8")).toBe(samples[client])

    const written = Fs.readFileSync(file, "utf8")
    const second = Either.getOrThrow(await run(installMcpClient(target(client), false)))
    expect(second.action).toBe("unchanged")
    expect(second.backup).toBeNull()
    expect(Fs.readFileSync(file, "utf8")).toBe(written)
    expect(backupsBeside(file)).toHaveLength(1)
  })

  it("keeps comments and the layout of untouched lines", async () => {
    const file = fileOf(client)
    write(file, samples[client])
    await run(installMcpClient(target(client), false))
    const written = Fs.readFileSync(file, "utf8")
    for (const line of samples[client].split("\n").filter((line) => line.includes("#") || line.includes("//"))) {
      expect(written).toContain(line)
    }
    for (const line of samples[client].split("\n").filter((line) => line.includes("files"))) expect(written).toContain(line)
  })

  it("uninstall removes only its entry", async () => {
    const file = fileOf(client)
    write(file, samples[client])
    await run(installMcpClient(target(client), false))
    const removed = Either.getOrThrow(await run(uninstallMcpClient(target(client), false)))
    expect(removed.action).toBe("removed")
    expect(parse(client, Fs.readFileSync(file, "utf8"))).toEqual(parse(client, samples[client]))
    const again = Either.getOrThrow(await run(uninstallMcpClient(target(client), false)))
    expect(again.action).toBe("absent")
  })

  it("refuses a file it cannot parse and touches nothing", async () => {
    const file = fileOf(client)
    write(file, broken[client])
    const result = await run(installMcpClient(target(client), false))
    expect(Either.isLeft(result) && (result.left as { code: string }).code).toBe("client_config_unparsable")
    expect(Fs.readFileSync(file, "utf8")).toBe(broken[client])
    expect(backupsBeside(file)).toEqual([])
  })

  it("creates a missing file with the entry alone; a dry run writes nothing", async () => {
    const file = fileOf(client)
    const dry = Either.getOrThrow(await run(installMcpClient(target(client), true)))
    expect(dry).toMatchObject({ action: "added", dry_run: true, backup: null, file })
    expect(Fs.existsSync(file)).toBe(false)
    await run(installMcpClient(target(client), false))
    expect(Object.keys(parse(client, Fs.readFileSync(file, "utf8")))).toEqual([serversKey])
  })
})

describe("project scope and what doctor reads", () => {
  it("writes the project file in the project folder; Windsurf and Claude Desktop have none", async () => {
    const done = Either.getOrThrow(await run(installMcpClient({ client: "vscode", scope: "project", name: "a2a-relay" }, false)))
    expect(done.file).toBe(Path.join(where.cwd, ".vscode", "mcp.json"))
    const refused = await run(installMcpClient({ client: "windsurf", scope: "project", name: "a2a-relay" }, false))
    expect(Either.isLeft(refused) && (refused.left as { code: string }).code).toBe("invalid_input")
  })

  it("lists the entries that start relay and the paths they name that are missing", async () => {
    await run(installMcpClient(target("cursor"), false))
    write(fileOf("gemini"), samples.gemini)
    const entries = Either.getOrThrow(await run(relayEntries))
    expect(entries).toEqual([
      { client: "cursor", scope: "user", file: fileOf("cursor"), name: "a2a-relay", missing: ["/opt/relay/dist/main.js"], relayHome: null }
    ])
  })

  it("recognises every shape of entry that starts relay mcp, whatever its paths, and nothing else", async () => {
    const servers = {
      installed: { command: "/usr/local/bin/relay", args: ["mcp"] },
      byNode: { command: "node", args: ["/home/me/src/a2a/dist/main.cjs", "mcp"], env: { RELAY_HOME: "/srv/relay" } },
      windows: { command: "C:\\nodejs\\node.exe", args: ["C:\\tools\\dist\\main.cjs", "mcp"] },
      npx: { command: "npx", args: ["-y", "a2a-relay@0.1.0", "mcp"] },
      overHttp: { command: "relay", args: ["mcp", "-t", "streamable-http"] },
      otherNodeServer: { command: "node", args: ["/opt/relay-tools/server.js"] },
      relayNamedButNot: { command: "/opt/relay-proxy/bin/proxy", args: ["--relay"] },
      npxOther: { command: "npx", args: ["-y", "relay-mcp-bridge"] },
      url: { url: "http://127.0.0.1:8090/mcp" }
    }
    write(fileOf("cursor"), JSON.stringify({ mcpServers: servers }))
    const entries = Either.getOrThrow(await run(relayEntries))
    expect(entries.map((entry) => entry.name)).toEqual(["installed", "byNode", "windows", "npx", "overHttp"])
    expect(entries.find((entry) => entry.name === "byNode")?.relayHome).toBe("/srv/relay")
  })
})

describe("Codex's TOML", () => {
  const codexFile = () => fileOf("codex")

  it("is always the [mcp_servers.<name>] table, with no empty [mcp_servers] header and a final newline", async () => {
    await run(installMcpClient(target("codex"), false))
    const fresh = Fs.readFileSync(codexFile(), "utf8")
    expect(fresh).toBe(`[mcp_servers.a2a-relay]\ncommand = "/usr/bin/node"\nargs = [ "/opt/relay/dist/main.js", "mcp" ]\n`)

    // A one-line inline entry becomes the table form, so a later [mcp_servers.a2a-relay.env] can be added.
    write(codexFile(), `model = "o3"\n\n[mcp_servers]\na2a-relay = { command = "relay" }\nfiles = { command = "npx" }`)
    const updated = Either.getOrThrow(await run(installMcpClient(target("codex"), false)))
    expect(updated.action).toBe("updated")
    const text = Fs.readFileSync(codexFile(), "utf8")
    expect(text).toContain("[mcp_servers.a2a-relay]\n")
    expect(text).not.toContain("a2a-relay = {")
    expect(text.endsWith("\n")).toBe(true)
    expect(TOML.parse(`${text}\n[mcp_servers.a2a-relay.env]\nX = "1"\n`)).toMatchObject({
      mcp_servers: { "a2a-relay": { env: { X: "1" } } }
    })

    const removed = Either.getOrThrow(await run(uninstallMcpClient(target("codex"), false)))
    expect(removed.action).toBe("removed")
    expect(Fs.readFileSync(codexFile(), "utf8")).toBe(`model = "o3"\n\n[mcp_servers]\nfiles = { command = "npx" }\n`)
  })

  it("leaves no [mcp_servers] header behind when relay's entry was the only one", async () => {
    write(codexFile(), `model = "o3"\n`)
    await run(installMcpClient(target("codex"), false))
    await run(uninstallMcpClient(target("codex"), false))
    expect(Fs.readFileSync(codexFile(), "utf8")).toBe(`model = "o3"\n`)
  })

  it("a dry run shows the TOML it would write; project scope says the folder must be trusted", async () => {
    const dry = Either.getOrThrow(await run(installMcpClient({ client: "codex", scope: "project", name: "a2a-relay" }, true)))
    expect(dry.snippet).toBe(`[mcp_servers.a2a-relay]\ncommand = "/usr/bin/node"\nargs = [ "/opt/relay/dist/main.js", "mcp" ]\n`)
    expect(dry.notes.join(" ")).toMatch(/trust/)
    const gemini = Either.getOrThrow(await run(installMcpClient({ client: "gemini", scope: "project", name: "a2a-relay" }, true)))
    expect(gemini.notes.join(" ")).toMatch(/trusted folder/)
    const user = Either.getOrThrow(await run(installMcpClient(target("codex"), true)))
    expect(user.notes).toEqual([])
  })
})

describe("JSON with comments", () => {
  it("keeps a comment after the last server on that server's line", async () => {
    write(fileOf("gemini"), `{\n  "mcpServers": {\n    "files": { "command": "npx" } // local files\n  }\n}\n`)
    await run(installMcpClient(target("gemini"), false))
    const text = Fs.readFileSync(fileOf("gemini"), "utf8")
    expect(text).toContain(`"files": { "command": "npx" }, // local files\n    "a2a-relay": {`)
    expect(Jsonc.parse(text).mcpServers["a2a-relay"]).toMatchObject({ command: launcher.command })
  })
})

describe("unparsable files", () => {
  it("name the line and column of the problem, not a byte offset", async () => {
    write(fileOf("cursor"), `{\n  "mcpServers": {\n    "a": ,\n  }\n}\n`)
    write(fileOf("codex"), `model = "o3"\n[mcp_servers\n`)
    const json = await run(installMcpClient(target("cursor"), false))
    const toml = await run(installMcpClient(target("codex"), false))
    expect(Either.isLeft(json) && (json.left as { reason: string }).reason).toBe("value expected at line 3, column 10")
    expect(Either.isLeft(toml) && (toml.left as { reason: string }).reason).toMatch(/at line 2, column \d+$/)
  })
})
