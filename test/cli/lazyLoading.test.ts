/**
 * Each command loads only what it uses (issue #13): the bundle is split per command group and per
 * heavy dependency (scripts/bundle.mjs, cli/root.ts). This spawns the built CLI with a module-load
 * recorder, maps each loaded chunk back to its sources through the build's metafile, and checks
 * that the quick commands never load the MCP SDK, zod, ajv, the model layer, the A2A client or
 * the HTTP client, while `relay mcp` does load the MCP SDK (so the check can fail); that every
 * chunk they load comes with a code cache V8 accepts (src/codeCacheLoader.ts), and that where the
 * caches do not fit the running Node, Node's require loads the chunks (src/bundleLoader.ts).
 */
import { spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { INITIALIZED, initializeRequest } from "../helpers/mcpMessages.js"

const dist = Path.dirname(relayBin)
const recorder = fileURLToPath(new URL("../fixtures/recordLoadedModules.mjs", import.meta.url))

interface Metafile {
  readonly outputs: Record<string, { readonly inputs: Record<string, unknown> }>
}

interface Loaded {
  /** dist/main.cjs and the chunks, relative to the checkout. */
  readonly file: string
  /** What V8 did with a chunk's code cache; undefined for the entry (dist/main.cjs). */
  readonly cache: "accepted" | "rejected" | "none" | undefined
}

/** Every line test/fixtures/recordLoadedModules.mjs recorded while a command line ran. */
const recordOf = (args: ReadonlyArray<string>, input = "", bin = relayBin): Array<string> => {
  const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-lazy-"))
  const record = Path.join(home, "loaded.txt")
  const result = spawnSync(process.execPath, ["--import", recorder, bin, ...args], {
    env: { ...process.env, RELAY_HOME: home, RELAY_TEST_LOADED_MODULES: record },
    input,
    encoding: "utf8",
    timeout: 20_000
  })
  expect(result.error).toBeUndefined()
  return Fs.readFileSync(record, "utf8").split("\n")
}

/** Node's built-in modules a command line loaded, as "node:<name>" ("node:internal/…" included). */
const builtinsLoadedBy = (args: ReadonlyArray<string>, input = ""): Set<string> =>
  new Set(recordOf(args, input).filter((line) => line.startsWith("node:")))

/** Every file of the bundle (relayBin's, or a copy's) a command line loaded. */
const filesLoadedBy = (args: ReadonlyArray<string>, input = "", bin = relayBin): Array<Loaded> => {
  return recordOf(args, input, bin).filter((line) => line.startsWith("file:")).map((line) => {
    const [url, cache] = line.split(" cache=")
    return { file: Path.relative(Path.dirname(Path.dirname(bin)), fileURLToPath(url!)), cache: cache as Loaded["cache"] }
  })
}

/** The sources (bundle inputs) of every chunk a command line loaded. */
const sourcesLoadedBy = (args: ReadonlyArray<string>, input = ""): Set<string> => {
  const meta = JSON.parse(Fs.readFileSync(Path.join(dist, "meta.json"), "utf8")) as Metafile
  return new Set(filesLoadedBy(args, input).flatMap(({ file }) => Object.keys(meta.outputs[file]?.inputs ?? {})))
}

/** Two card servers, their URLs printed on one line: a card whose one interface, on port 9 (nothing there), is JSON-RPC; one gRPC. */
const CARD_SERVERS = `
const http = require("node:http")
const serve = (binding, url) => new Promise((resolve) => {
  const card = JSON.stringify({ name: "x", description: "x", version: "1", capabilities: {}, skills: [],
    defaultInputModes: ["text/plain"], defaultOutputModes: ["text/plain"],
    supportedInterfaces: [{ url, protocolBinding: binding, protocolVersion: "1.0" }] })
  const server = http.createServer((req, res) => res.setHeader("content-type", "application/json").end(card))
  server.listen(0, "127.0.0.1", () => resolve("http://127.0.0.1:" + server.address().port))
})
Promise.all([serve("JSONRPC", "http://127.0.0.1:9/"), serve("GRPC", "127.0.0.1:9")]).then((urls) => console.log(urls.join(" ")))
`

const HEAVY = {
  // Both SDK lines: the v2 server (with its core) that serves the tools, the v1 package for the old SSE transport.
  "the MCP SDK": "node_modules/@modelcontextprotocol/",
  zod: "node_modules/zod/",
  ajv: "node_modules/ajv/",
  "the model layer": "src/services/ModelAccess.ts",
  "@effect/ai": "node_modules/@effect/ai",
  "the A2A client": "src/services/A2aClient.ts",
  "the HTTP client (undici)": "node_modules/undici/",
  "the OAuth client (openid-client)": "node_modules/openid-client/",
  "gRPC (@grpc/grpc-js)": "node_modules/@grpc/grpc-js/",
  "protobuf (@bufbuild/protobuf)": "node_modules/@bufbuild/protobuf/",
  // Not heavy in bytes, but its eight error classes cost ~1.5 ms to build (domain/authNeeded.ts).
  "the OAuth errors": "src/domain/oauth.ts"
}

/**
 * A source as the project sees it: esbuild names dependencies by their real path, which is outside
 * the checkout when node_modules is a link (a git worktree sharing one install).
 */
const fromProject = (source: string) => {
  const at = source.indexOf("node_modules/")
  return at < 0 ? source : source.slice(at)
}

const loads = (sources: Set<string>, prefix: string) => [...sources].some((source) => fromProject(source).startsWith(prefix))

describe("start-up loads only what a command uses", () => {
  // `agent list --names` too: the completion scripts run it at every <TAB> after --url.
  it.each([["--version"], ["session", "list"], ["session", "list", "--json"], ["agent", "list"], ["agent", "list", "--names"]])(
    "relay %s %s %s loads none of the heavy parts",
    (...args) => {
      const sources = sourcesLoadedBy(args)
      expect(sources.size).toBeGreaterThan(0)
      for (const [name, prefix] of Object.entries(HEAVY)) expect(loads(sources, prefix), `loads ${name}`).toBe(false)
    }
  )

  /**
   * What only some commands use is loaded when first used: the terminal (node:readline, and
   * process.stdin behind it) by a prompt (cli/lazyTerminal.ts); node:crypto by what compares
   * secrets (domain/secretCheck.ts) or names a temporary file (scripts/bundle.mjs).
   */
  it.each([["session", "list"], ["session", "list", "--json"]])(
    "relay %s %s %s loads none of Node's modules it does not use",
    (...args) => {
      const builtins = builtinsLoadedBy(args)
      expect(builtins.has("node:fs")).toBe(true)
      // (Not node:internal/…: the recorder's module hooks load some of those themselves.)
      for (const unused of ["node:readline", "node:crypto"]) {
        expect(builtins.has(unused), `loads ${unused}`).toBe(false)
      }
    }
  )

  it("relay session list reads under 1.1 MB of chunk source (split per group, written without whitespace)", () => {
    const bytes = filesLoadedBy(["session", "list"]).reduce(
      (sum, { file }) => sum + Fs.statSync(Path.join(Path.dirname(dist), file)).size,
      0
    )
    expect(bytes).toBeGreaterThan(100_000)
    // 1.02 MB since wave 3's gRPC, PostgreSQL and MCP v2 entry points: esbuild splits the Effect modules
    // they share with the CLI into more chunks, and a name from another chunk is written qualified
    // (import_chunk_X.name), ~48 KB more text in app.cjs for ~4 KB more code (bench/README.md).
    expect(bytes).toBeLessThan(1_100_000)
  })

  it("relay session list reads and compiles at most 10 chunk files: what every command loads is one (scripts/bundle.mjs)", () => {
    const chunks = filesLoadedBy(["session", "list"]).filter(({ file }) => file.startsWith("dist/chunks/"))
    expect(chunks[0]?.file).toBe("dist/chunks/app.cjs")
    expect(chunks.length).toBeLessThanOrEqual(10)
  })

  // `relay completions SHELL` too: every new shell runs it, and it prints the script the build wrote.
  it.each(["--version", "completions bash", "completions fish"])("relay %s loads no Effect at all", (line) => {
    expect(loads(sourcesLoadedBy(line.split(" ")), "node_modules/effect/")).toBe(false)
  })

  it.each([["session", "list"], ["card", "validate", "--help"], ["mcp"]])(
    "relay %s %s %s loads every chunk with its code cache, which V8 accepts",
    (...args) => {
      const chunks = filesLoadedBy(args).filter(({ file }) => file.startsWith("dist/chunks/"))
      expect(chunks.length).toBeGreaterThan(3)
      expect(chunks.filter(({ cache }) => cache !== "accepted")).toEqual([])
    }
  )

  it("relay mcp (stdio) does load the MCP SDK (the v2 server, not the v1 package), and neither the model layer nor the OAuth client", () => {
    const sources = sourcesLoadedBy(["mcp"], "")
    expect(loads(sources, "node_modules/@modelcontextprotocol/server/")).toBe(true)
    expect(loads(sources, "node_modules/@modelcontextprotocol/sdk/")).toBe(false)
    expect(loads(sources, HEAVY["the model layer"])).toBe(false)
    expect(loads(sources, HEAVY["the OAuth client (openid-client)"])).toBe(false)
  })

  it("a command that speaks JSON-RPC loads neither gRPC nor protobuf; one whose agent offers only gRPC loads both (#33)", async () => {
    // The cards come from a child process: spawnSync holds this one's event loop.
    const cards = spawn(process.execPath, ["-e", CARD_SERVERS], { stdio: ["ignore", "pipe", "inherit"] })
    try {
      const [jsonRpcAgent, grpcAgent] = await new Promise<Array<string>>((resolve) =>
        cards.stdout.once("data", (chunk) => resolve(String(chunk).trim().split(" ")))
      )
      const overJsonRpc = sourcesLoadedBy(["task", "get", "--url", jsonRpcAgent!, "t"])
      expect(loads(overJsonRpc, HEAVY["the A2A client"])).toBe(true)
      expect(loads(overJsonRpc, HEAVY["gRPC (@grpc/grpc-js)"])).toBe(false)
      expect(loads(overJsonRpc, HEAVY["protobuf (@bufbuild/protobuf)"])).toBe(false)
      const overGrpc = sourcesLoadedBy(["task", "get", "--url", grpcAgent!, "t"])
      expect(loads(overGrpc, HEAVY["gRPC (@grpc/grpc-js)"])).toBe(true)
      expect(loads(overGrpc, HEAVY["protobuf (@bufbuild/protobuf)"])).toBe(true)
      // Nor does gRPC bring protobufjs, which grpc-js needs only for services relay does not serve (scripts/bundle.mjs).
      expect(loads(overGrpc, "node_modules/protobufjs/")).toBe(false)
    } finally {
      cards.kill()
    }
  })

  it("relay mcp answers initialize and tools/list without the A2A client or model; the first tool call loads them", () => {
    const handshake = [
      initializeRequest("test", 1),
      INITIALIZED,
      { jsonrpc: "2.0", id: 2, method: "tools/list" }
    ]
    const lines = (messages: ReadonlyArray<object>) => messages.map((message) => JSON.stringify(message)).join("\n") + "\n"
    const listed = sourcesLoadedBy(["mcp"], lines(handshake))
    expect(loads(listed, HEAVY["the A2A client"])).toBe(false)
    expect(loads(listed, "src/a2a/v1.ts")).toBe(false)
    // The SDK's Node default JSON Schema engine (Ajv, bundled in its ajvProvider) stays out (scripts/bundle.mjs).
    expect([...listed].filter((source) => /ajvProvider|node_modules\/ajv\//.test(source))).toEqual([])

    const called = sourcesLoadedBy(
      ["mcp"],
      lines([...handshake, { jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_sessions", arguments: {} } }])
    )
    expect(loads(called, HEAVY["the A2A client"])).toBe(true)
    expect(loads(called, "src/a2a/v1.ts")).toBe(true)
  })

  it("relay mcp answers a 2026-07-28 client's server/discover and tools/list without the A2A client", () => {
    const meta = {
      "io.modelcontextprotocol/protocolVersion": "2026-07-28",
      "io.modelcontextprotocol/clientCapabilities": {},
      "io.modelcontextprotocol/clientInfo": { name: "test", version: "0" }
    }
    const messages = [
      { jsonrpc: "2.0", id: 1, method: "server/discover", params: { _meta: meta } },
      { jsonrpc: "2.0", id: 2, method: "tools/list", params: { _meta: meta } }
    ]
    const listed = sourcesLoadedBy(["mcp"], messages.map((message) => JSON.stringify(message)).join("\n") + "\n")
    expect(loads(listed, "node_modules/@modelcontextprotocol/server/")).toBe(true)
    expect(loads(listed, HEAVY["the A2A client"])).toBe(false)
  })
})

/** A copy of the built CLI, elsewhere: as a package installed from this build lies. */
const copyOfDist = () => {
  const copy = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-cache-")), "dist")
  Fs.cpSync(dist, copy, { recursive: true })
  return copy
}

describe("a copied build", () => {
  it("names its chunks in stack traces the same wherever it lies, not by the build's path (src/codeCacheLoader.ts)", () => {
    const copy = copyOfDist()
    // A command group's chunk gone: the failure's stack runs through the entry chunk, loaded from its cache.
    for (const name of Fs.readdirSync(Path.join(copy, "chunks")).filter((name) => /^sessionCommands-.*\.cjs$/.test(name))) {
      Fs.rmSync(Path.join(copy, "chunks", name))
    }
    const result = spawnSync(process.execPath, [Path.join(copy, "main.cjs"), "session", "list"], {
      env: { ...process.env, RELAY_HOME: Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-cache-home-")) },
      encoding: "utf8",
      timeout: 20_000
    })
    Fs.rmSync(Path.dirname(copy), { recursive: true, force: true })
    expect(result.status).toBe(1)
    expect(result.stderr).toContain("at relay/dist/chunks/app.cjs:")
    expect(result.stderr).not.toContain(dist)
  })
})

describe("a damaged code cache", () => {
  /** A copy of the built CLI whose entry chunk's cache has its content (not its header) damaged. */
  const distWithDamagedCache = () => {
    const copy = copyOfDist()
    const cacheFile = Path.join(copy, "chunks", "app.cjs.cache")
    const cache = Fs.readFileSync(cacheFile)
    // Past V8's header (version, flags, source hash, length), which V8 always checks.
    for (let at = 200; at < cache.length; at += 997) cache[at] = cache[at]! ^ 0x5a
    Fs.writeFileSync(cacheFile, cache)
    return copy
  }

  it("is refused and the command runs as without it, instead of V8 dying in its deserializer (src/codeCacheLoader.ts)", () => {
    const home = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-cache-home-"))
    const copy = distWithDamagedCache()
    const result = spawnSync(process.execPath, [Path.join(copy, "main.cjs"), "session", "list"], {
      env: { ...process.env, RELAY_HOME: home },
      encoding: "utf8",
      timeout: 20_000
    })
    Fs.rmSync(Path.dirname(copy), { recursive: true, force: true })
    expect(result.signal).toBeNull()
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("No saved sessions")
  })
})

describe("a build whose code caches another V8 wrote (Node 22 and later, for a package built with Node 20)", () => {
  it("loads its chunks, plain CommonJS modules, with Node's require, and works (src/bundleLoader.ts)", () => {
    const copy = copyOfDist()
    Fs.writeFileSync(Path.join(copy, "chunks", "code-cache.json"), JSON.stringify({ v8: "another V8" }))
    const loaded = filesLoadedBy(["session", "list"], "", Path.join(copy, "main.cjs"))
    const result = spawnSync(process.execPath, [Path.join(copy, "main.cjs"), "session", "list"], {
      env: { ...process.env, RELAY_HOME: Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-cache-home-")) },
      encoding: "utf8",
      timeout: 20_000
    })
    Fs.rmSync(Path.dirname(copy), { recursive: true, force: true })
    const chunks = loaded.filter(({ file }) => file.startsWith("dist/chunks/"))
    expect(chunks[0]?.file).toBe("dist/chunks/app.cjs")
    // Node's require compiled them (Module#_compile), not a vm.Script with a cache.
    expect(chunks.filter(({ cache }) => cache !== undefined)).toEqual([])
    expect(result.stdout).toContain("No saved sessions")
    expect(result.status).toBe(0)
  })
})
