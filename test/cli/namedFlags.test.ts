/**
 * Every flag and command that relay's own words name (hints, suggestions, messages, help) exists:
 * each `--flag` in a string of the sources is an option of some command in the built CLI's help,
 * and each `relay <command>` they name has help of its own. Hints given as actions are checked
 * per door in test/e2e/hints.test.ts; this catches the words written out. The examples help shows
 * (cli/examples.ts) are checked closer: each names a command that exists and only its flags.
 *
 * README.md is held to the same: every `relay …` line in its code is a real command with options that
 * command has, its exit codes and `--json` error codes are the ones the sources define, and the commands
 * it says take --json and --verbose do. What the commands do is held to the README in readmeClaims.test.ts.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { EXAMPLES } from "../../src/cli/examples.js"
import * as exitCodesModule from "../../src/cli/exitCodes.js"
import { runRelay } from "../helpers/cli.js"
import { helpSections, listedCommands, optionFlags } from "../helpers/helpText.js"
import { tempHome } from "../helpers/stateHome.js"

/** Every command path, as the root's help lists them ("" is the root); read before the tests are collected. */
const home = tempHome()
const COMMANDS: ReadonlyArray<string> = ["", ...listedCommands((await runRelay(["--help"], { stateDir: home.stateDir })).stdout)]

const SRC = Path.join(import.meta.dirname, "../../src")
const README = Path.join(import.meta.dirname, "../../README.md")

const sourceFiles = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(Path.join(dir, entry.name)) : entry.name.endsWith(".ts") ? [Path.join(dir, entry.name)] : []
  )

/** The code of a file without its comments (flags in comments are prose, not promises). */
const codeOf = (file: string) =>
  Fs.readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "").split("\n").filter((line) => !/^\s*\/\//.test(line)).join("\n")

/** What the sources name inside string literals: flags, and `relay a b` command paths. */
const named = () => {
  const strings = sourceFiles(SRC).flatMap((file) => codeOf(file).match(/"(?:[^"\\\n]|\\.)*"|`(?:[^`\\]|\\.)*`/g) ?? [])
  const flags = new Set(strings.flatMap((text) => text.match(/(?<![\w-])--[a-z][a-z-]*[a-z]/g) ?? []))
  const commands = new Set(
    strings.flatMap((text) =>
      [...text.matchAll(
        /\brelay ((?:message|task|card|session|auth|mcp|server|notifications|check|doctor|completions|agent)\b(?: (?:notification|install|uninstall|config|send|stream|get|list|cancel|resubscribe|set|delete|validate|show|clear|agent|push|add|use|remove|refresh|discover)\b)*)/g
      )]
        .map((match) => match[1]!.trim())
    )
  )
  return { flags: [...flags].sort(), commands: [...commands].sort() }
}

const helps = new Map<string, string>()

beforeAll(async () => {
  for (const command of COMMANDS) {
    const result = await runRelay([...command.split(" ").filter((word) => word !== ""), "--help"], { stateDir: home.stateDir })
    helps.set(command, result.stdout)
  }
}, 240_000)

/** Flags the sources hand to V8 (src/codeCacheLoader.ts), or V8 flags README names (bench/README.md's heap growth), not options of relay. */
const V8_FLAGS = new Set(["--heap-growing-percent", "--verify-snapshot-checksum"])

describe("what relay's words name exists", () => {
  it("every --flag in the sources is an option of some command", () => {
    const all = [...helps.values()].join("\n")
    const missing = named().flags.filter((flag) => !all.includes(flag) && !V8_FLAGS.has(flag))
    expect(missing).toEqual([])
  })

  it("every `relay <command>` in the sources is a command", () => {
    const missing = named().commands.filter((command) =>
      !COMMANDS.includes(command) && !COMMANDS.some((known) => known.startsWith(`${command} `))
    )
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

// ---------------------------------------------------------------------------------------------
// README.md
// ---------------------------------------------------------------------------------------------

/** The code of the README: each line of its fenced blocks and each inline `span` (table pipes unescaped). */
const readmeCode = (): ReadonlyArray<string> => {
  const text = Fs.readFileSync(README, "utf8")
  const fences = [...text.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].flatMap((match) => match[1]!.split("\n"))
  const prose = text.replace(/^```[^\n]*\n[\s\S]*?^```/gm, "")
  const spans = [...prose.matchAll(/`([^`\n]+)`/g)].map((match) => match[1]!.replaceAll("\\|", "|"))
  return [...fences, ...spans]
}

const GROUPS = new Set(
  COMMANDS.flatMap((command) => {
    const words = command.split(" ")
    return words.slice(1).map((_, end) => words.slice(0, end + 1).join(" "))
  }).filter((prefix) => !COMMANDS.includes(prefix))
)

/** One `relay …` invocation: its command path and the text of its options and arguments. */
interface Invocation {
  readonly line: string
  readonly command: string
  readonly rest: string
}

/**
 * The invocations of a line of code: `relay` as the program of a shell segment (first word, or after
 * `VAR=value`, `<(`, `$(` or another program's ` -- `), then command words, up to the next separator;
 * comments are dropped, and `a|b|c` alternatives (`relay completions bash|zsh|fish`) expand to each.
 */
const invocationsOf = (line: string): ReadonlyArray<Invocation> =>
  line.replace(/(?:^|\s)#\s.*$/, "").split(/\s\|\s|&&|;|\s&(?:\s|$)/).flatMap((segment) => {
    const programStart = /^\s*(?:\$\s+)?(?:[A-Z_][A-Z0-9_]*=\S*\s+)*(?:.*?(?:<\(|\$\(|\s--\s))?/.source
    const match = new RegExp(`${programStart}relay((?:\\s+[a-z][a-z|-]*)*)(.*)$`).exec(segment)
    if (match === null) return []
    const words = match[1]!.trim().split(/\s+/).filter((word) => word !== "")
    const paths: Array<Array<string>> = [[]]
    let used = 0
    for (const word of words) {
      const grown = paths.flatMap((path) => word.split("|").map((choice) => [...path, choice]))
      if (!grown.every((path) => COMMANDS.includes(path.join(" ")) || GROUPS.has(path.join(" ")))) break
      paths.splice(0, paths.length, ...grown)
      used += 1
    }
    const rest = [...words.slice(used), match[2]!].join(" ").trim()
    return paths.map((path) => ({ line, command: path.join(" "), rest }))
  })

const flagsIn = (text: string) => text.match(/(?<![\w-])(?:--[a-z][a-z-]*[a-z]|-[a-zA-Z])(?![\w-])/g) ?? []
const helpHas = (help: string, flag: string) => new RegExp(`(?<![\\w-])${flag}(?![\\w-])`).test(help)

describe("README.md names only what exists", () => {
  const invocations = readmeCode().flatMap(invocationsOf)

  it("finds the README's commands (the check itself works)", () => {
    expect(invocations.length).toBeGreaterThan(50)
    expect(invocationsOf("relay task notification get|list|delete --url U TASK_ID").map((one) => one.command))
      .toEqual(["task notification get", "task notification list", "task notification delete"])
    expect(invocationsOf("relay server push &   # the receiver, relay's own").map((one) => one.rest)).toEqual([""])
    expect(invocationsOf("npx @modelcontextprotocol/inspector --cli relay mcp --method tools/list")).toEqual([])
    expect(invocationsOf("relay sessions list")[0]).toMatchObject({ command: "", rest: "sessions list" })
  })

  it("every `relay …` is a whole command, not a group or a word relay does not know", () => {
    const wrong = invocations.filter(({ command, rest }) => GROUPS.has(command) || (command === "" && /^\s*[a-z]/.test(rest)))
    expect(wrong.map(({ line }) => line)).toEqual([])
  })

  it("every option written after a command is one of that command's options", () => {
    const wrong = invocations.flatMap(({ command, line, rest }) =>
      flagsIn(rest).filter((flag) => !helpHas(helps.get(command) ?? "", flag)).map((flag) => `${flag} in: ${line}`)
    )
    expect(wrong).toEqual([])
  })

  it("every option it names on its own (`--wait S`) is an option of some command", () => {
    const all = [...helps.values()].join("\n")
    const alone = readmeCode().filter((code) => /^\[?-/.test(code.trim()))
    expect(alone.length).toBeGreaterThan(20)
    const named = new Set(alone.flatMap((line) => line.match(/(?<![\w-])--[a-z][a-z-]*[a-z](?![\w-])/g) ?? []))
    const missing = [...named].filter((flag) => !helpHas(all, flag) && !V8_FLAGS.has(flag))
    expect(missing).toEqual([])
  })

  it("says rightly which commands take --json and --verbose: every one but relay completions (a shell script)", () => {
    expect(Fs.readFileSync(README, "utf8")).toContain("Every command accepts `--help`, and every one but `relay completions`")
    // A group only lists its commands; a command has options or arguments.
    const runnable = [...helps].filter(([command, help]) =>
      command !== "" && (helpSections(help).has("OPTIONS") || helpSections(help).has("ARGUMENTS"))
    )
    expect(runnable.length).toBeGreaterThan(20)
    const missing = runnable.filter(([command]) => command !== "completions").flatMap(([command, help]) =>
      ["--json", "--verbose"].filter((flag) => !optionFlags(help).includes(flag)).map((flag) => `${command} ${flag}`)
    )
    expect(missing).toEqual([])
    expect(optionFlags(helps.get("completions")!)).not.toContain("--json")
  })

  it("lists every exit code and every --json error code the sources define", () => {
    const readme = Fs.readFileSync(README, "utf8")
    const exitCodes = [
      ...Object.values(exitCodesModule as Record<string, unknown>).filter((value) => typeof value === "number"),
      ...Object.values(exitCodesModule.EXIT_ON_SIGNAL)
    ]
    expect(exitCodes).toHaveLength(7)
    // The first cells of the exit code table: "| 3 |", "| 130 / 143 |".
    const documented = [...readme.matchAll(/^\| ([\d /]+) \|/gm)].flatMap((row) => row[1]!.split("/").map(Number))
    expect(exitCodes.filter((code) => !documented.includes(code as number))).toEqual([])
    // MCP tool results have codes of their own; the terminal's are in the domain and cli layers.
    const terminal = sourceFiles(SRC).filter((file) => !file.includes(`${Path.sep}mcp${Path.sep}`))
    const sources = terminal.map(codeOf).join("\n")
    const errorCodes = new Set([
      ...[...sources.matchAll(/readonly code = "([a-z_]+)"/g)].map((match) => match[1]!),
      ...[...sources.matchAll(/writeJsonError\("([a-z_]+)"/g)].map((match) => match[1]!)
    ])
    expect(errorCodes.size).toBeGreaterThan(20)
    expect([...errorCodes].filter((code) => !readme.includes(`\`${code}\``))).toEqual([])
  })
})
