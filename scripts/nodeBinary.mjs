// The `node` binary of one Node version, from the npm registry's node-<platform>-<arch> package (so
// no download beyond the registry), installed once into a cache folder (RELAY_NODE_CACHE, default
// ~/.cache/relay-ci/node). Used by scripts/check-packed-install.mjs, and run as
// `node scripts/nodeBinary.mjs 22.23.3` (prints the path) by tests that need a newer Node than
// relay's floor (test/stress/mcpConformance.test.ts).
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"

export const nodeCache = process.env.RELAY_NODE_CACHE ?? Path.join(Os.homedir(), ".cache", "relay-ci", "node")

/** The path of the `node` binary of `version` (e.g. "22.23.3"), installing it first if the cache lacks it. */
export const nodeBinary = (version) => {
  const packageName = `node-${process.platform}-${process.arch}`
  const prefix = Path.join(nodeCache, version)
  const binary = Path.join(prefix, "node_modules", packageName, "bin", "node")
  if (!Fs.existsSync(binary)) {
    execFileSync("npm", [
      "install",
      "--prefix",
      prefix,
      "--no-save",
      "--no-package-lock",
      "--no-audit",
      "--no-fund",
      `${packageName}@${version}`
    ], {
      stdio: ["ignore", "ignore", "inherit"]
    })
  }
  const reported = execFileSync(binary, ["--version"], { encoding: "utf8" }).trim()
  if (reported !== `v${version}`) throw new Error(`${binary} is ${reported}, not v${version}`)
  return binary
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(nodeBinary(process.argv[2]))
