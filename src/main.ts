#!/usr/bin/env node
/**
 * relay's entry point. It loads nothing but the version: `relay --version` answers at once, so does
 * `relay completions SHELL` (every new shell runs it) from the script the build wrote, and every
 * other command line loads the CLI (app.ts, from the bundle's chunks through bundleLoader.ts),
 * which loads only the command group it names.
 */
import { readFileSync } from "node:fs"
import { loadBundled } from "./bundleLoader.js"
import { VERSION } from "./version.js"

/**
 * The completion script scripts/bundle.mjs wrote beside this file for `shell` (dist/completions/),
 * or undefined: not a shell it wrote one for, or a build without them. The CLI then writes it from
 * the command tree, as the build did.
 */
const prebuiltCompletions = (shell: string | undefined): string | undefined => {
  if (shell === undefined || !/^[a-z]+$/.test(shell)) return undefined
  try {
    return readFileSync(new URL(`completions/relay.${shell}`, import.meta.url), "utf8")
  } catch {
    return undefined
  }
}

const args = process.argv.slice(2)
const completions = args.length === 2 && args[0] === "completions" ? prebuiltCompletions(args[1]) : undefined
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else if (completions !== undefined) {
  process.stdout.write(completions)
} else {
  loadBundled<typeof import("./app.js")>("app").run(process.argv)
}
