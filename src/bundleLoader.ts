/**
 * Loads the bundled CLI: dist/chunks/, plain CommonJS modules (scripts/bundle.mjs). Compiling them
 * is most of a command's start-up unless the compiled code is cached (see bench/README.md).
 *
 * - Where the build's code caches fit the running Node (the Node 20 the package is built with),
 *   src/codeCacheLoader.ts requires the chunks with them: they hold every function the commands
 *   whose start-up matters compiled, where Node's own compile cache holds little more than each
 *   chunk's top level.
 * - Anywhere else, Node's require loads the chunks, with Node's module compile cache on where Node
 *   has one (≥ 22.1: in the system's temporary directory, or NODE_COMPILE_CACHE;
 *   NODE_DISABLE_COMPILE_CACHE turns it off).
 * - With source maps on (--enable-source-maps) too, since Node applies them only to what its own
 *   require loads: stack traces then point into src/ through the chunks' .map files.
 */
import * as NodeModule from "node:module"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { codeCacheFits, requireWithCodeCache } from "./codeCacheLoader.js"

const chunksDir = join(dirname(fileURLToPath(import.meta.url)), "chunks")

/** Node's module compile cache, where Node has one (≥ 22.1; @types/node is Node 20's). */
const enableCompileCache = () => (NodeModule as unknown as { readonly enableCompileCache?: () => unknown }).enableCompileCache?.()

/** Loads an entry of the bundle (dist/chunks/<name>.cjs) and returns its exports. */
export const loadBundled = <Exports>(name: string): Exports => {
  const entry = join(chunksDir, `${name}.cjs`)
  // The build's training runs write the code caches (codeCacheLoader.ts).
  const training = process.env.RELAY_WRITE_CODE_CACHE !== undefined
  if (training || (!process.sourceMapsEnabled && codeCacheFits(chunksDir))) return requireWithCodeCache(entry) as Exports
  enableCompileCache()
  return NodeModule.createRequire(import.meta.url)(entry) as Exports
}
