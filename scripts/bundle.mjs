// Bundles the CLI: Node resolves and parses ~2,000 ESM files of Effect otherwise, which measured
// 0.85 s for `relay --version` against 0.2 s bundled (2-core machine, Node 20).
//
// The bundle splits at the dynamic imports of cli/root.ts (one per command group) and of the heavy
// dependencies, into dist/chunks/: a command loads only the chunks it uses.
import { build } from "esbuild"
import { rmSync, writeFileSync } from "node:fs"
import { deepImports } from "./deepImports.mjs"

rmSync("dist/chunks", { recursive: true, force: true })

/**
 * @effect/cli imports YAML, TOML and INI parsers for options read from config files, which relay
 * never declares: 400 KB that every command parsed at start-up (~10% of `relay session list`'s
 * CPU time, 2-core machine). Each becomes a module whose parse says so, should one ever be used.
 */
const withoutConfigFileParsers = {
  name: "without-config-file-parsers",
  setup(build) {
    build.onResolve({ filter: /^(yaml|toml|ini)$/ }, (args) =>
      args.importer.includes("@effect/cli") ? { path: args.path, namespace: "unused-parser" } : undefined)
    build.onLoad({ filter: /.*/, namespace: "unused-parser" }, (args) => ({
      contents: `export const parse = () => { throw new Error("relay reads no ${args.path} option files") }`,
      loader: "js"
    }))
  }
}

const result = await build({
  entryPoints: { main: "src/main.ts" },
  outdir: "dist",
  chunkNames: "chunks/[name]-[hash]",
  splitting: true,
  bundle: true,
  platform: "node",
  format: "esm",
  target: "node20",
  sourcemap: true,
  metafile: true,
  logLevel: "warning",
  plugins: [deepImports, withoutConfigFileParsers],
  // jsonc-parser's "main" is a UMD build whose require() calls esbuild cannot follow; its ES build bundles.
  alias: { "jsonc-parser": "jsonc-parser/lib/esm/main.js" },
  // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
  banner: { js: "import { createRequire as __relayRequire } from 'node:module'; const require = __relayRequire(import.meta.url);" }
})

// Which sources each output holds, for test/cli/lazyLoading.test.ts and for anyone asking why a
// command loads what it loads (`npx esbuild-visualizer`-style tools read it too).
writeFileSync("dist/meta.json", JSON.stringify(result.metafile))
