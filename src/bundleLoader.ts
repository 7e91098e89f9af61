/**
 * Loads the bundled CLI (dist/chunks/, CommonJS) with V8's code cache.
 *
 * Compiling the bundle is most of a command's start-up: the minimal Effect CLI of
 * bench/fixtures/minimal-cli.ts took 157 ms with its code compiled at start and 105 ms with a
 * code cache (`node -e ""` 63 ms; 2-core machine, Node 20). Node 20 has no module compile cache
 * (module.enableCompileCache came with Node 22), and V8's code cache is reachable only through
 * vm.Script, which runs scripts, not ES modules: so scripts/bundle.mjs turns each chunk into a
 * CommonJS module and writes beside it the cache of its compiled functions (`<chunk>.cache`),
 * and this loader requires the chunks, one file one Script, with that cache. The entry's file
 * holds the chunks every command loads (definePacked), so that most commands compile few files.
 *
 * The cache is built with the package, for the Node that built it. Under another Node, V8
 * rejects it (it checks its version, flags and the source) and the chunk compiles as without it.
 * Nothing is written at run time, except when the build asks for it (RELAY_WRITE_CODE_CACHE).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs"
import { createRequire } from "node:module"
import { basename, dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { setFlagsFromString } from "node:v8"
import { Script } from "node:vm"

/**
 * V8 checks a code cache's header (its version, flags, source and length) but, unless asked, not
 * its content: a damaged .cache file (a bad disk, a partial copy) made every command die inside
 * V8's deserializer (a fatal error, SIGTRAP), where a checked one is refused and the chunk compiles
 * without it. Set before the first chunk compiles, in the build's training runs as in every command,
 * so that the caches are written with their checksum and V8 accepts them (the flag is in the hash
 * of flags a cache is checked against).
 */
setFlagsFromString("--verify-snapshot-checksum")

interface LoadedChunk {
  readonly module: { exports: unknown }
  /** Undefined for a chunk packed into another's file: its code is in that file's Script. */
  readonly script: Script | undefined
  readonly cached: boolean
}

type ChunkFunction = (
  exports: unknown,
  require: (id: string) => unknown,
  module: { exports: unknown },
  filename: string,
  dirname: string,
  definePacked: (chunks: Record<string, ChunkFunction>) => void
) => void

const chunksDir = join(dirname(fileURLToPath(import.meta.url)), "chunks")
const nodeRequire = createRequire(import.meta.url)
const loaded = new Map<string, LoadedChunk>()

/**
 * Chunks written inside another chunk's file (the entry's: the chunks every command loads, see
 * scripts/bundle.mjs), by file. That file defines them first; each runs when first required.
 */
const packed = new Map<string, ChunkFunction>()
const definePacked = (chunks: Record<string, ChunkFunction>) => {
  for (const [name, run] of Object.entries(chunks)) packed.set(join(chunksDir, name), run)
}

const cacheFileOf = (file: string) => `${file}.cache`

const readIfPresent = (file: string): Buffer | undefined => {
  try {
    return readFileSync(file)
  } catch {
    return undefined
  }
}

/** The CommonJS wrapper, the same at build and at run time (the cache is of this exact source). */
const asScriptSource = (chunkSource: string) =>
  `(function (exports, require, module, __filename, __dirname, definePacked) {${chunkSource}\n})`

/**
 * The name stack traces give a chunk: the same wherever the package lies, because a Script built
 * from a code cache keeps the name it was trained under (Node 20), which would otherwise be the
 * build machine's path.
 */
const scriptNameOf = (file: string) => `relay/dist/chunks/${basename(file)}`

const compile = (file: string, cachedData?: Buffer) =>
  new Script(asScriptSource(readFileSync(file, "utf8")), { filename: scriptNameOf(file), cachedData })

/** A chunk requires another by "./name.cjs"; anything else is Node's (built-in modules). */
const requireFrom = (id: string): unknown => (id.startsWith("./") ? requireChunk(join(chunksDir, id)).exports : nodeRequire(id))

/** The chunk's function, from its pack or compiled with its cache; registered as loaded first. */
const chunkFunction = (file: string, module: { exports: unknown }): ChunkFunction => {
  const inPack = packed.get(file)
  if (inPack !== undefined) {
    loaded.set(file, { module, script: undefined, cached: true })
    return inPack
  }
  const cachedData = readIfPresent(cacheFileOf(file))
  const script = compile(file, cachedData)
  loaded.set(file, { module, script, cached: cachedData !== undefined && !script.cachedDataRejected })
  return script.runInThisContext() as ChunkFunction
}

const requireChunk = (file: string): { exports: unknown } => {
  const known = loaded.get(file)
  if (known !== undefined) return known.module
  const module = { exports: {} }
  // Registered (chunkFunction) before it runs: chunks may require each other in a cycle, as ES modules may.
  chunkFunction(file, module)(module.exports, requireFrom, module, file, chunksDir, definePacked)
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
const writeCodeCacheAtExit = (everyChunk: boolean) =>
  process.once("exit", () => {
    for (const [file, { script, cached }] of loaded) if (!cached && script !== undefined) writeCacheIfMissing(file, () => script)
    if (!everyChunk) return
    for (const name of readdirSync(chunksDir).filter((name) => name.endsWith(".cjs"))) {
      writeCacheIfMissing(join(chunksDir, name), () => compile(join(chunksDir, name)))
    }
  })

/** Loads an entry of the bundle (dist/chunks/<name>.cjs) and returns its exports. */
export const loadBundled = <Exports>(name: string): Exports => {
  const training = process.env.RELAY_WRITE_CODE_CACHE
  if (training !== undefined && loaded.size === 0) writeCodeCacheAtExit(training === "all")
  return requireChunk(join(chunksDir, `${name}.cjs`)).exports as Exports
}
