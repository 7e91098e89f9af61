/**
 * `relay … --help` for every command of the tree, from the built CLI at fixed widths: the full
 * path in the usage line, every option once, examples, nothing wider than the terminal and none of
 * @effect/cli's boilerplate; the root lists every command once, the global options and the exit
 * codes. The tree itself is read from the sources, so a command added later is checked too.
 */
import { spawnSync } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { commandSpec, levels } from "../../src/cli/commandTree.js"
import { renderHelp } from "../../src/cli/help.js"
import { loadWholeTree } from "../../src/cli/root.js"
import { type CliResult, relayBin, runRelay } from "../helpers/cli.js"
import { exampleCommands, listedCommands, optionFlags, usageLines } from "../helpers/helpText.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
const ALL = levels(commandSpec(await loadWholeTree()))
/** Spawned at one width; rendered in-process at others (spawning is slow on a loaded machine). */
const WIDTH = 72
const OTHER_WIDTHS = [40, 55, 100, 160] as const
const wordsOf = (path: string) => path.split(" ").slice(1)

const helps = new Map<string, CliResult>()
const key = (path: string, width: number) => `${width} ${path}`

/** Runs `relay <path> --help` for every command, a few at a time. */
beforeAll(async () => {
  const jobs = [...ALL]
  const next = async (): Promise<void> => {
    const job = jobs.shift()
    if (job === undefined) return
    helps.set(
      key(job.path, WIDTH),
      await runRelay([...wordsOf(job.path), "--help"], { stateDir: home.stateDir, env: { COLUMNS: String(WIDTH) } })
    )
    return next()
  }
  await Promise.all([next(), next(), next()])
}, 240_000)

afterAll(home.cleanup)

describe(`relay <command> --help at ${WIDTH} columns`, () => {
  const width = WIDTH
  it.each(ALL.map((level) => [level.path, level] as const))("%s", (path, { spec }) => {
    const result = helps.get(key(path, width))!
    expect(result.code, result.stderr).toBe(0)
    expect(result.stderr).toBe("")
    const text = result.stdout
    // The usage line names the whole path.
    expect(usageLines(text)[0]).toMatch(new RegExp(`^${path}( |$)`))
    // Every option once, nothing else.
    const own = spec.options.flatMap((option) => option.flags).sort()
    const shown = optionFlags(text, ["OPTIONS"]).sort()
    expect(shown).toEqual(own)
    expect(exampleCommands(text).length).toBeGreaterThanOrEqual(2)
    const wide = text.split("\n").filter((line) => line.length > width)
    expect(wide).toEqual([])
    expect(text).not.toContain("This setting is optional")
    expect(text).not.toContain("A true or false value")
    // Every subcommand below, once each.
    const below = ALL.filter((level) => level.path.startsWith(`${path} `)).map((level) => wordsOf(level.path).join(" "))
    expect(listedCommands(text)).toEqual(below)
  })
})

describe.each(OTHER_WIDTHS)("at %i columns", (width) => {
  it("no line of any command's help is wider, and every option is still listed once", () => {
    for (const level of ALL) {
      const text = renderHelp(level, width)
      expect(text.split("\n").filter((line) => line.length > width), `${level.path} at ${width}`).toEqual([])
      expect(optionFlags(text, ["OPTIONS"]).sort(), level.path).toEqual(level.spec.options.flatMap((option) => option.flags).sort())
      expect(exampleCommands(text), level.path).toEqual(exampleCommands(helps.get(key(level.path, WIDTH))!.stdout))
    }
  })
})

describe("the root's help", () => {
  const root = () => helps.get(key("relay", WIDTH))!.stdout

  it("lists every command path once, each with its description", () => {
    const listed = listedCommands(root())
    expect(listed).toEqual(ALL.slice(1).map((level) => wordsOf(level.path).join(" ")))
    expect(new Set(listed).size).toBe(listed.length)
    expect(root()).toContain("task notification set")
    expect(root()).not.toContain("task task")
  })

  it("lists the global options and the exit codes", () => {
    expect(optionFlags(root(), ["GLOBAL OPTIONS"])).toEqual(["-h", "--help", "--version", "--log-level"])
    expect(root()).toMatch(/^EXIT CODES$/m)
    expect(root()).toMatch(/^ {2}4 +agent unreachable/m)
  })

  it("gives an option's choices, default and requirement on its row", async () => {
    const mcp = helps.get(key("relay mcp install", WIDTH))!.stdout
    expect(mcp).toMatch(/--client string +The MCP client: claude-desktop, .*\(required\)/s)
    expect(mcp).toMatch(/--scope string +user \(default: every project\) or project/)
    const agent = helps.get(key("relay server agent", WIDTH))!.stdout
    expect(agent).toMatch(/--auth, --no-auth +Require an API key/)
    expect(helps.get(key("relay", WIDTH))!.stdout).toMatch(
      /--log-level string .*\(one of:\s+all,\s+trace,\s+debug,\s+info,\s+warning,\s+error,\s+fatal,\s+none\)/s
    )
  })
})

describe("asking for help", () => {
  const relayRun = (args: ReadonlyArray<string>, env: Record<string, string> = {}) =>
    runRelay(args, { stateDir: home.stateDir, env: { COLUMNS: String(WIDTH), ...env } })

  it("-h, --help anywhere before --, and `relay help COMMAND` show the same help", async () => {
    const expected = helps.get(key("relay message send", WIDTH))!.stdout
    for (
      const args of [["help", "message", "send"], ["message", "send", "-h"], ["message", "--help", "send"], [
        "message",
        "send",
        "--url",
        "http://x",
        "hi",
        "--help"
      ]]
    ) {
      const result = await relayRun(args)
      expect(result.code, args.join(" ")).toBe(0)
      expect(result.stdout, args.join(" ")).toBe(expected)
    }
    const root = await relayRun(["help"])
    expect(root.stdout).toBe(helps.get(key("relay", WIDTH))!.stdout)
  })

  it("an option's value is not taken for a command", async () => {
    const result = await relayRun(["mcp", "-t", "install", "--help"])
    expect(result.code).toBe(0)
    expect(usageLines(result.stdout)[0]).toMatch(/^relay mcp \[options\]/)
  })

  it("--help after -- is the message, not a request for help", async () => {
    const result = await relayRun(["message", "send", "--", "--help"])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
  })

  it("an unknown command is a usage error: exit 2, on stderr, JSON with --json", async () => {
    const plain = await relayRun(["message", "bogus", "--help"])
    expect(plain.code).toBe(2)
    expect(plain.stdout).toBe("")
    expect(plain.stderr).toContain("error: unknown command 'bogus' for relay message")
    expect(plain.stderr).toContain("hint: Use one of send, stream;")
    const json = await relayRun(["help", "bogus", "--json"])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stderr).error.code).toBe("usage")
  })

  it("a wrong subcommand is named at its own level, whichever group was loaded", async () => {
    const plain = await relayRun(["auth", "nope"])
    expect(plain.code).toBe(2)
    expect(plain.stderr).toMatch(/error: unknown command 'nope' for relay auth\nhint: Use one of set, show, /)
    const json = await relayRun(["message", "sned", "--url", "http://x", "--json"])
    expect(json.code).toBe(2)
    expect(JSON.parse(json.stderr).error).toEqual({
      code: "usage",
      message: "unknown command 'sned' for relay message",
      hint: "Did you mean send?"
    })
  })

  it("a command that only groups others, named alone, shows its help", async () => {
    for (const path of [["task", "notification"], ["message"], []]) {
      const result = await relayRun(path)
      expect(result.code, path.join(" ")).toBe(0)
      expect(result.stdout, path.join(" ")).toBe(helps.get(key(["relay", ...path].join(" "), WIDTH))!.stdout)
    }
  })

  /** Help on a real terminal `columns` wide (util-linux `script` runs relay on a pty of its own), without $COLUMNS. */
  const helpOnTerminal = (path: ReadonlyArray<string>, columns: number) => {
    const env: Record<string, string | undefined> = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }
    delete env["COLUMNS"]
    const command = `stty cols ${columns} rows 50; exec '${process.execPath}' '${relayBin}' ${path.join(" ")} --help`
    const result = spawnSync("script", ["-qec", command, "/dev/null"], {
      env,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
      timeout: 30_000
    })
    expect(result.error, "util-linux script (Debian: bsdutils) runs relay on a terminal").toBeUndefined()
    expect(result.status, result.stderr).toBe(0)
    return result.stdout.replace(/\r\n/g, "\n")
  }

  it.each([120, 50])("on a terminal %i columns wide, wraps to its width", (columns) => {
    const level = ALL.find((candidate) => candidate.path === "relay message send")!
    const text = helpOnTerminal(wordsOf(level.path), columns)
    expect(text).toBe(renderHelp(level, columns))
    const widest = Math.max(...text.split("\n").map((line) => line.length))
    expect(widest).toBeLessThanOrEqual(columns)
    expect(widest).toBeGreaterThan(columns - 10)
  })

  it("off a terminal without COLUMNS, 80 columns", async () => {
    const result = await relayRun(["message", "send", "--help"], { COLUMNS: "" })
    const lengths = result.stdout.split("\n").map((line) => line.length)
    expect(Math.max(...lengths)).toBeLessThanOrEqual(80)
    expect(Math.max(...lengths)).toBeGreaterThan(72)
  })
})
