// Bundles the CLI: Node resolves and parses ~2,000 ESM files of Effect otherwise (the figures
// behind this file's choices: bench/README.md, "Start-up").
//
// dist/main.cjs is the entry (src/main.ts: `--version`, and src/bundleLoader.ts). The CLI itself
// (src/app.ts) is split at the dynamic imports of cli/root.ts (one per command group) and of the
// heavy dependencies into dist/chunks/: a command loads only the chunks it uses. The chunks are
// plain CommonJS modules, and each gets V8's code cache, trained by running a few commands with
// the Node that builds the package (src/codeCacheLoader.ts says why, and where it is used).
import * as AnsiDoc from "@effect/printer-ansi/AnsiDoc"
import { decode, encode } from "@jridgewell/sourcemap-codec"
import { build, transform } from "esbuild"
import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { tmpdir } from "node:os"
import { join, relative } from "node:path"
import { deepImports } from "./deepImports.mjs"

rmSync("dist/chunks", { recursive: true, force: true })
rmSync("dist/completions", { recursive: true, force: true })

/**
 * @effect/cli imports YAML, TOML and INI parsers for options read from config files, which relay
 * never declares, and every command parsed at start-up. Each becomes a module whose parse says
 * so, should one ever be used.
 */
const withoutConfigFileParsers = {
  name: "without-config-file-parsers",
  setup(build) {
    build.onResolve(
      { filter: /^(yaml|toml|ini)$/ },
      (args) => args.importer.includes("@effect/cli") ? { path: args.path, namespace: "unused-parser" } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "unused-parser" }, (args) => ({
      contents: `export const parse = () => { throw new Error("relay reads no ${args.path} option files") }`,
      loader: "js"
    }))
  }
}

/**
 * @grpc/grpc-js requires @grpc/proto-loader (and protobufjs behind it, a third of its chunk) only
 * to describe its channelz and ORCA services, which relay never serves; relay's messages go through
 * its own codec. The loader becomes a module that says so, should one ever be asked for.
 */
const withoutProtoLoader = {
  name: "without-proto-loader",
  setup(build) {
    build.onResolve(
      { filter: /^@grpc\/proto-loader$/ },
      (args) => /@grpc[\\/]grpc-js[\\/]/.test(args.importer) ? { path: args.path, namespace: "unused-proto-loader" } : undefined
    )
    build.onLoad({ filter: /.*/, namespace: "unused-proto-loader" }, () => ({
      contents: "export const loadSync = () => { throw new Error(\"relay serves no channelz or ORCA service\") }",
      loader: "js"
    }))
  }
}

/**
 * @effect/platform-node-shared's file system imports node:crypto for one use, the random names of
 * temporary files, and so every command loaded it.
 * It gets the module when it first names one. (A name it used and this lacks would be undefined:
 * esbuild warns, and the build stops, below.)
 */
const CRYPTO_ON_FIRST_USE = "crypto-on-first-use"
const cryptoOnFirstUse = {
  name: CRYPTO_ON_FIRST_USE,
  setup(build) {
    build.onResolve(
      { filter: /^node:crypto$/ },
      (args) =>
        /@effect[\\/]platform-node-shared[\\/].*[\\/]fileSystem\.js$/.test(args.importer)
          ? { path: args.path, namespace: CRYPTO_ON_FIRST_USE }
          : undefined
    )
    build.onLoad({ filter: /.*/, namespace: CRYPTO_ON_FIRST_USE }, () => ({
      contents: "export const randomBytes = (size) => process.getBuiltinModule(\"node:crypto\").randomBytes(size)",
      loader: "js"
    }))
  }
}

/**
 * Each of @effect/cli's eight prompt modules renders its "beep" through the printer as it loads
 * (part of every command's start-up), though only a prompt rings it. The text is
 * the same every time: the build renders it once, with the same printer, and writes it in their
 * place; should a module make it otherwise, the build stops.
 */
const RENDER_BEEP = /const renderBeep = \/\*#__PURE__\*\/Doc\.render\(Doc\.beep, \{\s*style: "pretty"\s*\}\);/
const beepRenderedOnce = {
  name: "beep-rendered-once",
  setup(build) {
    const beep = AnsiDoc.render(AnsiDoc.beep, { style: "pretty" })
    build.onLoad({ filter: /@effect[\\/]cli[\\/]dist[\\/]esm[\\/]internal[\\/]prompt[\\/][\w-]+\.js$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      if (!source.includes("renderBeep")) return undefined
      if (!RENDER_BEEP.test(source)) throw new Error(`${args.path} no longer makes renderBeep as scripts/bundle.mjs expects`)
      return { contents: source.replace(RENDER_BEEP, `const renderBeep = ${JSON.stringify(beep)};`), loader: "js" }
    })
  }
}

/**
 * The MCP v2 server SDK imports its platform defaults from "@modelcontextprotocol/server/_shims": under
 * Node that module loads Ajv with its formats (295 KB) as the default JSON Schema engine, though relay
 * always passes its own (src/mcp/server.ts, @cfworker/json-schema). The build gives the SDK the same
 * defaults with that engine, so `relay mcp` does not load Ajv at start.
 */
const MCP_SHIMS = "mcp-server-shims"
const mcpShimsWithoutAjv = {
  name: MCP_SHIMS,
  setup(build) {
    build.onResolve({ filter: /^@modelcontextprotocol\/server\/_shims$/ }, () => ({ path: "_shims", namespace: MCP_SHIMS }))
    build.onLoad({ filter: /.*/, namespace: MCP_SHIMS }, () => ({
      contents: [
        "export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator } from \"@modelcontextprotocol/server/validators/cf-worker\"",
        "export { default as process } from \"node:process\""
      ].join("\n"),
      resolveDir: process.cwd(),
      loader: "js"
    }))
  }
}

const shared = { bundle: true, platform: "node", target: "node20", metafile: true, logLevel: "warning" }

const cli = await build({
  ...shared,
  entryPoints: { app: "src/app.ts" },
  outdir: "dist/chunks",
  entryNames: "[name]",
  chunkNames: "[name]-[hash]",
  outExtension: { ".js": ".cjs" },
  splitting: true,
  // Shorter code for the same functions (see asCommonJs: the chunks keep every name).
  minifySyntax: true,
  format: "esm",
  write: false,
  // Each chunk's map rides along inline through asCommonJs, which writes it beside the chunk.
  sourcemap: "inline",
  sourcesContent: false,
  plugins: [deepImports, withoutConfigFileParsers, withoutProtoLoader, cryptoOnFirstUse, beepRenderedOnce, mcpShimsWithoutAjv],
  // jsonc-parser's "main" is a UMD build whose require() calls esbuild cannot follow; its ES build bundles.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" }
})

/**
 * esbuild splits ES modules only; each chunk then becomes a CommonJS module: imports of other
 * chunks become require("./<chunk>.cjs") (dynamic ones too), which Node's require serves, or
 * src/codeCacheLoader.ts on Node 20 (src/bundleLoader.ts chooses).
 *
 * esbuild's CommonJS form then copies a chunk's exports (an object of getters) into a second
 * object of getters calling the first: two calls for each use of a name from another chunk, and
 * the copy alone showed in `relay session list`'s start-up. The first object, marked as an ES
 * module's, is the same exports in one.
 */
const EXPORTS_COPY = /^module\.exports = __toCommonJS\((\w+)\);$/m

/**
 * Every command reads its chunks' source (V8 keeps it for the functions the code cache lacks):
 * written without whitespace, and with minifySyntax above, it is smaller. Names are kept, so errors and stack traces still name their functions and
 * classes, only at column numbers; and with --enable-source-maps, at their place in src/.
 *
 * Resolves with the chunk's code and its source map (to the sources, through each step: esbuild
 * reads the map inline at the end of its input).
 */
const asCommonJs = async (esm) => {
  const { code, warnings } = await transform(esm, {
    format: "cjs",
    loader: "js",
    target: "node20",
    supported: { "dynamic-import": false },
    sourcemap: "inline"
  })
  if (warnings.length > 0) throw new Error(`a chunk does not convert to CommonJS: ${warnings.map((warning) => warning.text).join("; ")}`)
  if (!EXPORTS_COPY.test(code)) throw new Error("a chunk's CommonJS exports are not in the form esbuild wrote them before")
  // One line, with nothing of the sources on it, so the map is still right.
  const commonJs = code.replace(EXPORTS_COPY, "module.exports = __defProp($1, \"__esModule\", { value: true });")
  const minified = await transform(commonJs, {
    loader: "js",
    target: "node20",
    minifyWhitespace: true,
    sourcemap: "external",
    sourcesContent: false
  })
  return { code: minified.code.replace(/\n$/, ""), map: JSON.parse(minified.map) }
}

/**
 * Relay's own sources are mapped, not its dependencies': a stack frame in Effect's code keeps its
 * place in the chunk, and the maps stay a tenth of what they would be (the package under 6 MB).
 */
const isOwnSource = (source) => !source.includes("node_modules/")

/**
 * Pieces of code joined by line breaks, and their maps joined into one: each piece's mappings
 * moved down to its first line (Node reads no index maps, whose sections would do it). What maps to
 * no source of relay's own, a piece without a map (code of the build's own) included, is marked as
 * mapped to nothing: a stack frame there would otherwise take the place of the mapping before it.
 */
const joinedWithMaps = (pieces) => {
  const sources = new Map()
  const names = new Map()
  const indexIn = (indexes, value) => indexes.get(value) ?? indexes.set(value, indexes.size).get(value)
  const lines = []
  for (const { code, map } of pieces) {
    const decoded = map === undefined ? [] : decode(map.mappings)
    for (let line = 0; line < code.split("\n").length; line++) {
      const segments = []
      for (const [column, source, sourceLine, sourceColumn, name] of decoded[line] ?? [[0]]) {
        const own = source !== undefined && isOwnSource(map.sources[source])
        if (own) {
          segments.push([
            column,
            indexIn(sources, map.sources[source]),
            sourceLine,
            sourceColumn,
            ...(name === undefined ? [] : [indexIn(names, map.names[name])])
          ])
        } else if (segments.length === 0 || segments.at(-1).length > 1) segments.push([column])
      }
      lines.push(segments)
    }
  }
  return {
    code: pieces.map(({ code }) => code).join("\n"),
    map: { version: 3, sources: [...sources.keys()], names: [...names.keys()], mappings: encode(lines) }
  }
}

const missingImports = cli.warnings.filter((warning) => warning.text.includes("will always be undefined"))
if (missingImports.length > 0) {
  throw new Error(`the bundle imports names nothing exports: ${missingImports.map((warning) => warning.text).join("; ")}`)
}

/**
 * The chunks every command loads, the CLI's entry and all it imports statically (17 of them), are
 * written into the entry's file: a command reads one file and compiles one, where it did each of
 * them (see bench/README.md, "Start-up"). The file stays a plain CommonJS module, whichever loader
 * reads it (src/bundleLoader.ts): each packed chunk is a function in it, run when first required,
 * and every chunk that imports one requires it through the entry (`__requirePacked`). The chunks
 * that the command groups share stay files: packed with one group, another would hold a second copy.
 */
const ENTRY_CHUNK = "dist/chunks/app.cjs"
const chunkName = (path) => path.slice("dist/chunks/".length)

const staticImportsOf = (outputs, entry) => {
  const found = new Set()
  const visit = (path) => {
    if (found.has(path)) return
    found.add(path)
    for (const { path: imported, kind } of outputs[path].imports) {
      if (kind === "import-statement" && imported.startsWith("dist/chunks/")) visit(imported)
    }
  }
  visit(entry)
  return found
}

const packedWithEntry = [...staticImportsOf(cli.metafile.outputs, ENTRY_CHUNK)].filter((path) => path !== ENTRY_CHUNK)

const commonJsOf = new Map()
for (const chunk of cli.outputFiles) commonJsOf.set(relative(process.cwd(), chunk.path), await asCommonJs(chunk.text))

/**
 * The entry's require, for its own code, its packed chunks and every chunk that imports one: a
 * packed chunk runs once, registered before it runs (chunks may require each other in a cycle);
 * anything else is the entry's require (all chunks lie in one directory).
 */
const REQUIRE_PACKED = `var __packedModules = {};
function __requirePacked(id) {
  var name = id.startsWith("./") ? id.slice(2) : "";
  if (!Object.hasOwn(__packedChunks, name)) return require(id);
  var packed = __packedModules[name];
  if (packed === undefined) {
    packed = __packedModules[name] = { exports: {} };
    __packedChunks[name](packed.exports, __requirePacked, packed, require("node:path").join(__dirname, name), __dirname);
  }
  return packed.exports;
}`

const packedEntry = () => [
  { code: "var __packedChunks = {" },
  ...packedWithEntry.flatMap((path) => [
    { code: `${JSON.stringify(chunkName(path))}: function (exports, require, module, __filename, __dirname) {` },
    commonJsOf.get(path),
    { code: "}," }
  ]),
  { code: `};\n${REQUIRE_PACKED}\n(function (require) {` },
  commonJsOf.get(ENTRY_CHUNK),
  { code: "})(__requirePacked);\nObject.defineProperty(module.exports, \"__requirePacked\", { value: __requirePacked });" }
]

/** A chunk that imports packed ones requires every chunk through the entry. */
const importsPacked = (path) => cli.metafile.outputs[path].imports.some(({ path: imported }) => packedWithEntry.includes(imported))
const chunkFile = (
  path
) => [...(importsPacked(path) ? [{ code: "var require = require(\"./app.cjs\").__requirePacked;" }] : []), commonJsOf.get(path)]

/** Writes a chunk and, beside it, its source map (`<chunk>.map`), which the chunk names at its end. */
const writeChunk = (path, pieces) => {
  const { code, map } = joinedWithMaps(pieces)
  writeFileSync(path, `${code}\n//# sourceMappingURL=${chunkName(path)}.map\n`)
  writeFileSync(`${path}.map`, JSON.stringify({ ...map, file: chunkName(path) }))
}

mkdirSync("dist/chunks", { recursive: true })
for (const path of commonJsOf.keys()) {
  if (path === ENTRY_CHUNK) writeChunk(path, packedEntry())
  else if (!packedWithEntry.includes(path)) writeChunk(path, chunkFile(path))
}

/** The metafile as the files are: the entry's file holds the sources of the chunks packed into it. */
const asWritten = (outputs) => {
  const written = { ...outputs }
  for (const path of packedWithEntry) {
    written[ENTRY_CHUNK] = { ...written[ENTRY_CHUNK], inputs: { ...written[ENTRY_CHUNK].inputs, ...outputs[path].inputs } }
    delete written[path]
  }
  return written
}

/**
 * The entry is CommonJS too: an ES module entry costs every command Node's ES module loader.
 */
const entry = await build({
  ...shared,
  entryPoints: { main: "src/main.ts" },
  outdir: "dist",
  outExtension: { ".js": ".cjs" },
  format: "cjs",
  sourcemap: "linked",
  sourcesContent: false,
  define: { "import.meta.url": "__entryUrl" },
  banner: { js: "\"use strict\"; const __entryUrl = require(\"node:url\").pathToFileURL(__filename).href;" }
})

// Which sources each output holds, for test/cli/lazyLoading.test.ts and for anyone asking why a
// command loads what it loads (`npx esbuild-visualizer`-style tools read it too).
writeFileSync(
  "dist/meta.json",
  JSON.stringify({
    inputs: { ...cli.metafile.inputs, ...entry.metafile.inputs },
    outputs: { ...asWritten(cli.metafile.outputs), ...entry.metafile.outputs }
  })
)

/**
 * Training: the commands whose start-up matters most run once with RELAY_WRITE_CODE_CACHE, each
 * writing the cache of the chunks it loaded first (session list's then card validate's, then the
 * MCP server's answering initialize and tools/list); the last caches every other chunk too.
 */
const MCP_HANDSHAKE = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "build", version: "0" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" }
].map((message) => JSON.stringify(message)).join("\n") + "\n"

const TRAINING = [
  { args: ["session", "list"] },
  { args: ["card", "validate", "--file", "bench/fixtures/valid-card.json"] },
  { args: ["mcp"], input: MCP_HANDSHAKE },
  { args: ["server", "agent", "--help"], last: true }
]

const home = mkdtempSync(join(tmpdir(), "relay-build-"))
try {
  for (const { args, input, last } of TRAINING) {
    const run = spawnSync(process.execPath, ["dist/main.cjs", ...args], {
      input,
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, RELAY_HOME: home, RELAY_WRITE_CODE_CACHE: last ? "all" : "1" }
    })
    if (run.status !== 0) throw new Error(`training run relay ${args.join(" ")} exited ${run.status}: ${run.stderr}`)
  }

  /**
   * The completion scripts, written by the CLI from its command tree: `relay completions SHELL`
   * prints these files (src/main.ts), which every new shell sources; writing one from the tree
   * loads every command group.
   */
  mkdirSync("dist/completions")
  for (const shell of ["bash", "zsh", "fish"]) {
    const run = spawnSync(process.execPath, ["dist/main.cjs", "completions", shell], {
      encoding: "utf8",
      timeout: 60_000,
      env: { ...process.env, RELAY_HOME: home }
    })
    if (run.status !== 0) throw new Error(`relay completions ${shell} exited ${run.status}: ${run.stderr}`)
    writeFileSync(`dist/completions/relay.${shell}`, run.stdout)
  }
} finally {
  rmSync(home, { recursive: true, force: true })
}
