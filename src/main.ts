#!/usr/bin/env node
/**
 * relay's entry point. It loads nothing but the version: `relay --version` answers at once, and
 * every other command line loads the CLI (app.ts), which loads only the command group it names.
 */
import { VERSION } from "./version.js"

const args = process.argv.slice(2)
if (args.length === 1 && args[0] === "--version") {
  process.stdout.write(`${VERSION}\n`)
} else {
  const { run } = await import("./app.js")
  run(process.argv)
}
