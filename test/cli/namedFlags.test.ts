/**
 * Every flag and command that relay's own words name (hints, suggestions, messages, help) exists:
 * each `--flag` in a string of the sources is an option of some command in the built CLI's help,
 * and each `relay <command>` they name has help of its own. Hints given as actions are checked
 * per door in test/e2e/hints.test.ts; this catches the words written out. The examples help shows
 * (cli/examples.ts) are checked closer: each names a command that exists and only its flags.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { EXAMPLES } from "../../src/cli/examples.js"
import { runRelay } from "../helpers/cli.js"
import { listedCommands, optionFlags } from "../helpers/helpText.js"
import { tempHome } from "../helpers/stateHome.js"

/** Every command path, as the root's help lists them ("" is the root). */
let COMMANDS: Array<string> = []

const SRC = Path.join(import.meta.dirname, "../../src")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(Path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [Path.join(dir, entry.name)] : [])

/** The code of a file without its comments (flags in comments are prose, not promises). */
const codeOf = (file: string) =>
  Fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((line) => !/^\s*\/\//.test(line)).join("\n")

/** What the sources name inside string literals: flags, and `relay a b` command paths. */
const named = () => {
  const strings = sourceFiles(SRC).flatMap((file) => codeOf(file).match(/"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g) ?? [])
  const flags = new Set(strings.flatMap((text) => text.match(/(?<![\w-])--[a-z][a-z-]*[a-z]/g) ?? []))
  const commands = new Set(strings.flatMap((text) =>
    [...text.matchAll(/\brelay ((?:message|task|card|session|auth|mcp|server|notifications|check|doctor|completions)\b(?: (?:notification|install|uninstall|config|send|stream|get|list|cancel|resubscribe|set|delete|validate|show|clear|agent|push)\b)*)/g)]
      .map((match) => match[1]!.trim())))
  return { flags: [...flags].sort(), commands: [...commands].sort() }
}

const home = tempHome()
const helps = new Map<string, string>()

beforeAll(async () => {
  const root = await runRelay(["--help"], { stateDir: home.stateDir })
  COMMANDS = ["", ...listedCommands(root.stdout)]
  for (const command of COMMANDS) {
    const result = await runRelay([...command.split(" ").filter((word) => word !== ""), "--help"], { stateDir: home.stateDir })
    helps.set(command, result.stdout)
  }
}, 240_000)

describe("what relay's words name exists", () => {
  it("every --flag in the sources is an option of some command", () => {
    const all = [...helps.values()].join("\n")
    const missing = named().flags.filter((flag) => !all.includes(flag))
    expect(missing).toEqual([])
  })

  it("every `relay <command>` in the sources is a command", () => {
    const missing = named().commands.filter((command) => !COMMANDS.includes(command) && !COMMANDS.some((known) => known.startsWith(`${command} `)))
    expect(missing).toEqual([])
  })
})

/** The command an example runs (the words after `relay` that are commands) and the flags it gives. */
const exampleParts = (line: string) => {
  const words = line.slice(line.search(/\brelay /)).split(" ").slice(1)
  let path = ""
  for (const word of words) {
    const longer = path === "" ? word : `${path} ${word}`
    if (!COMMANDS.includes(longer)) break
    path = longer
  }
  return { path, flags: words.filter((word) => /^--?[a-zA-Z]/.test(word)) }
}

describe("the examples help shows", () => {
  it("are keyed by commands that exist, and every command has some", () => {
    const keys = Object.keys(EXAMPLES).map((path) => path.replace(/^relay ?/, "")).sort()
    expect(keys).toEqual([...COMMANDS].sort())
  })

  it.each(Object.entries(EXAMPLES).flatMap(([path, examples]) => examples.map(([, line]) => [path, line] as const)))(
    "%s: %s names its command's own flags",
    (_path, line) => {
      const { path, flags } = exampleParts(line)
      expect(helps.has(path), line).toBe(true)
      const known = [...optionFlags(helps.get(path)!), ...optionFlags(helps.get("")!, ["GLOBAL OPTIONS"])]
      for (const flag of flags) expect(known, `${line}: ${flag}`).toContain(flag)
    }
  )
})
