// Builds the minimal Effect CLI of bench/fixtures/minimal-cli.ts into one ESM file in a temporary
// directory, bundled like relay (esbuild, platform node, ESM), so its start-up is comparable.
import { build } from "esbuild"
import { join } from "node:path"
import { benchDir, tempRelayHome } from "./processes.mjs"

/** Resolves with the path of the bundled minimal CLI (removed with the other temporary directories). */
export const buildMinimalCli = async () => {
  const outfile = join(tempRelayHome(), "minimal-cli.mjs")
  await build({
    entryPoints: [join(benchDir, "fixtures", "minimal-cli.ts")],
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    logLevel: "warning",
    // CommonJS dependencies inside an ESM bundle still call require() for Node built-ins.
    banner: { js: "import { createRequire as __benchRequire } from 'node:module'; const require = __benchRequire(import.meta.url);" }
  })
  return outfile
}
