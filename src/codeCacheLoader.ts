/**
 * Requires the bundle's chunks with the V8 code cache the build wrote for them, where it fits the
 * Node that runs them (src/bundleLoader.ts chooses).
 *
 * V8's code cache of a script holds every function compiled when it was made. Node's own module
 * compile cache (Node ≥ 22.1) is made as a module is compiled, before any of its functions ran,
 * so it holds little more than each chunk's top level; and Node 20 has none. So the build
 * (scripts/bundle.mjs) runs the commands whose start-up matters and writes, at their exit, each
 * chunk's cache beside it (`<chunk>.cache`), and this loader compiles each chunk as a vm.Script
 * (the one way to V8's code cache), in Node's CommonJS wrapper, with that cache. What it gains,
 * on Node 20 and beyond: see bench/README.md ("Start-up").
 *
 * The caches fit only the V8 that wrote them (V8 checks its version, flags and the source), the
 * build's: `code-cache.json` beside them names it. Nothing is written at run time, except when
 * the build asks for it (RELAY_WRITE_CODE_CACHE).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join } from "node:path"
import type { Script } from "node:vm"

interface LoadedChunk {
  readonly module: { exports: unknown }
  readonly script: Script
  readonly cached: boolean
}

type ChunkFunction = (
  exports: unknown,
  require: (id: string) => unknown,
  module: { exports: unknown },
  filename: string,
  dirname: string
) => void

const nodeRequire = createRequire(import.meta.url)
const loaded = new Map<string, LoadedChunk>()

const cacheFileOf = (file: string) => `${file}.cache`

/** Names the V8 the caches beside it were written by. */
const manifestIn = (chunksDir: string) => join(chunksDir, "code-cache.json")

/** True when the build wrote code caches in `chunksDir` for the V8 running now. */
export const codeCacheFits = (chunksDir: string): boolean => {
  try {
    return (JSON.parse(readFileSync(manifestIn(chunksDir), "utf8")) as { readonly v8?: unknown }).v8 === process.versions.v8
  } catch {
    return false
  }
}

const readIfPresent = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/** Node's CommonJS wrapper, the same at build and at run time (the cache is of this exact source). */
const asScriptSource = (chunkSource: string) => `(function (exports, require, module, __filename, __dirname) {${chunkSource}\n})`

/**
 * The name stack traces give a chunk: the same wherever the package lies, because a Script built
 * from a code cache keeps the name it was trained under (Node 20), which would otherwise be the
 * build machine's path.
 */
const scriptNameOf = (file: string) => `relay/dist/chunks/${basename(file)}`

/**
 * V8 checks a code cache's header (its version, flags, source and length) but, unless asked, not
 * its content: a damaged .cache file (a bad disk, a partial copy) made every command die inside
 * V8's deserializer (a fatal error, SIGTRAP), where a checked one is refused and the chunk compiles
 * without it. Set before the first chunk compiles, in the build's training runs as in every command,
 * so that the caches are written with their checksum and V8 accepts them (the flag is in the hash
 * of flags a cache is checked against).
 */
let vm: typeof import("node:vm") | undefined
const scriptCompiler = () => {
  if (vm === undefined) {
    process.getBuiltinModule("node:v8").setFlagsFromString("--verify-snapshot-checksum")
    vm = process.getBuiltinModule("node:vm")
  }
  return vm
}

const compile = (file: string, cachedData?: Buffer) =>
  new (scriptCompiler().Script)(asScriptSource(readFileSync(file, "utf8")), { filename: scriptNameOf(file), cachedData })

/** The chunk's function, compiled with its cache; registered as loaded first. */
const chunkFunction = (file: string, module: { exports: unknown }): ChunkFunction => {
  const cachedData = readIfPresent(cacheFileOf(file))
  const script = compile(file, cachedData)
  loaded.set(file, { module, script, cached: cachedData !== undefined && !script.cachedDataRejected })
  return script.runInThisContext() as ChunkFunction
}

const requireChunk = (file: string): { exports: unknown } => {
  const known = loaded.get(file)
  if (known !== undefined) return known.module
  const module = { exports: {} }
  const requireFrom = (id: string): unknown => (id.startsWith("./") ? requireChunk(join(dirname(file), id)).exports : nodeRequire(id))
  // Registered (chunkFunction) before it runs: chunks may require each other in a cycle, as CommonJS modules may.
  chunkFunction(file, module)(module.exports, requireFrom, module, file, dirname(file))
  return module
}

const writeCacheIfMissing = (file: string, script: () => Script) => {
  if (!existsSync(cacheFileOf(file))) writeFileSync(cacheFileOf(file), script().createCachedData())
}

/**
 * The build's training runs (scripts/bundle.mjs) set RELAY_WRITE_CODE_CACHE. At exit, each chunk
 * this run loaded without a cache gets one holding every function the run compiled; with "all"
 * (the last run), every other chunk gets one of what compiles up front.
 */
const writeCodeCacheAtExit = (chunksDir: string, everyChunk: boolean) =>
  process.once("exit", () => {
    for (const [file, { script, cached }] of loaded) if (!cached) writeCacheIfMissing(file, () => script)
    writeFileSync(manifestIn(chunksDir), `${JSON.stringify({ v8: process.versions.v8 })}\n`)
    if (!everyChunk) return
    for (const name of readdirSync(chunksDir).filter((name) => name.endsWith(".cjs"))) {
      writeCacheIfMissing(join(chunksDir, name), () => compile(join(chunksDir, name)))
    }
  })

/** Requires a chunk (dist/chunks/<name>.cjs) with its code cache and returns its exports. */
export const requireWithCodeCache = (file: string): unknown => {
  const training = process.env.RELAY_WRITE_CODE_CACHE
  if (training !== undefined && loaded.size === 0) writeCodeCacheAtExit(dirname(file), training === "all")
  return requireChunk(file).exports
}
