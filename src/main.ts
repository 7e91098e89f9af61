#!/usr/bin/env node
/**
 * relay's entry point. It loads nothing but the version: `relay --version` answers at once, and
 * every other command line loads the CLI (app.ts, from the bundle's chunks through bundleLoader.ts),
 * which loads only the command group it names.
 */
import { loadBundled } from "./bundleLoader.js"
import { VERSION } from "./version.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  loadBundled<typeof import("./app.js")>("app").run(process.argv)
}
