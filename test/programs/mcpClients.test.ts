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
  "claude-desktop": `{\n  "globalShortcut": "Ctrl+Space",\n  "mcpServers": {\n    "files": { "command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"] }\n  }\n}\n`,
  "claude-code": `{\n  "numStartups": 12,\n  "projects": { "/home/me/app": { "allowedTools": [] } },\n  "mcpServers": {\n    "files": { "type": "stdio", "command": "npx", "args": [] }\n  }\n}\n`,
  cursor: `{\n    "mcpServers": {\n        "files": { "command": "npx", "args": [] }\n    }\n}\n`,
  vscode: `// my MCP servers\n{\n  "inputs": [],\n  "servers": {\n    // the filesystem one\n    "files": { "type": "stdio", "command": "npx", "args": [], },\n  },\n}\n`,
  windsurf: `{\n  "mcpServers": {\n    "files": { "command": "npx", "args": [], "disabled": false }\n  }\n}\n`,
  gemini: `{\n  "theme": "GitHub",\n  "selectedAuthType": "oauth-personal",\n  "mcpServers": {\n    "files": { "command": "npx", "args": [] }\n  }\n}\n`,
  codex: `# Codex settings\nmodel = "o3" # the default model\n\n[mcp_servers.files]\n# the filesystem server\ncommand = "npx"\nargs = ["-y", "@modelcontextprotocol/server-filesystem"]\n`
}

const broken: Record<McpClientId, string> = {
  "claude-desktop": `{ "mcpServers": { `,
  "claude-code": `{ "mcpServers": [] }`,
  // Comments are JSONC; Cursor reads plain JSON.
  cursor: `// note\n{ "mcpServers": {} }`,
  vscode: `{ "servers": { "files": } }`,
  windsurf: `not json`,
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
  Effect.runPromise(Effect.either(effect).pipe(Effect.provide(clientConfigFilesAt(where, launcher).pipe(Layer.provide(NodeContext.layer))))) as Promise<Either.Either<A, E>>

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
    expect(entries).toEqual([{ client: "cursor", scope: "user", file: fileOf("cursor"), name: "a2a-relay", missing: ["/opt/relay/dist/main.js"] }])
  })
})
