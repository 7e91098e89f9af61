/**
 * Every flag and command that relay's own words name (hints, suggestions, messages, help) exists:
 * each `--flag` in a string of the sources is an option of some command in the built CLI's help,
 * and each `relay <command>` they name has help of its own. Hints given as actions are checked
 * per door in test/e2e/hints.test.ts; this catches the words written out.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const COMMANDS = [
  "", "message send", "message stream", "task get", "task list", "task cancel", "task resubscribe",
  "task notification set", "task notification get", "task notification list", "task notification delete",
  "card get", "card validate", "session list", "session show", "session clear", "auth set", "auth show",
  "auth clear", "mcp", "server agent", "server push", "notifications list", "check",
  "doctor", "completions", "mcp install", "mcp uninstall", "mcp config"
]

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
  for (const command of COMMANDS) {
    const result = await runRelay([...command.split(" ").filter((word) => word !== ""), "--help"], { stateDir: home.stateDir })
    helps.set(command, result.stdout)
  }
}, 120_000)

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
