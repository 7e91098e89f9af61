/**
 * The completion scripts of the built CLI, driven through each shell's own completion machinery:
 * bash's COMPREPLY, zsh's compadd (stubbed to print what it is given), fish's `complete -C`. The
 * command tree read from the sources says what every level must offer, so a command or option added
 * later is checked too.
 */
import { Options } from "@effect/cli"
import { execFileSync, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { beforeAll, describe, expect, it } from "vitest"
import { commandSpec, GLOBAL_OPTIONS, levels, optionsOf, type OptionSpec, withSuggestions } from "../../src/cli/commandTree.js"
import { completionScript, oneLine } from "../../src/cli/completions.js"
import { loadWholeTree } from "../../src/cli/root.js"
import { relayBin, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const SHELLS = ["bash", "zsh", "fish"] as const
type Shell = typeof SHELLS[number]

const TREE = commandSpec(await loadWholeTree())
const ALL = levels(TREE)
const wordsOf = (path: string) => path.split(" ")

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

/** zsh and fish come from Debian packages; .ci/run installs them, and so does this, loudly, when it can. */
const ensureShells = () => {
  const missing = SHELLS.filter((shell) => !has(shell))
  if (missing.length === 0) return
  if (process.getuid?.() === 0) {
    execFileSync("apt-get", ["install", "-y", "-qq", ...missing], { stdio: "inherit", timeout: 300_000 })
  }
  const still = SHELLS.filter((shell) => !has(shell))
  if (still.length > 0) {
    throw new Error(`Cannot drive completions: ${still.join(", ")} not installed (apt-get install -y ${still.join(" ")})`)
  }
}

const scripts = {} as Record<Shell, string>
beforeAll(async () => {
  ensureShells()
  const home = tempHome()
  for (const shell of SHELLS) {
    const run = await runRelay(["completions", shell], { stateDir: home.stateDir })
    expect(run.code).toBe(0)
    scripts[shell] = run.stdout
  }
  home.cleanup()
}, 320_000)

/** A candidate as the shell offers it: its description ("" where the shell shows none) and whether a space follows it. */
interface Offered {
  readonly word: string
  readonly description: string
  readonly space: boolean
}

const END = "<<end>>"
const quote = (word: string) => `'${word}'`

/** One completion request per line typed so far (the last word is the one being completed), each followed by END. */
const requests = (shell: Shell, lines: ReadonlyArray<ReadonlyArray<string>>) =>
  lines.map((typed) => {
    const words = typed.map(quote).join(" ")
    return {
      bash: `COMP_WORDS=(${words}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); COMPREPLY=(); nospace=0; __relay_complete
if (( \${#COMPREPLY[@]} )); then for c in "\${COMPREPLY[@]}"; do printf '%s\\t\\t%s\\n' "$c" "$nospace"; done; else echo '<files>'; fi`,
      zsh: `words=(${words}); CURRENT=\${#words}; __relay_complete`,
      fish: `complete -C ${JSON.stringify(typed.join(" "))}`
    }[shell] + `\necho '${END}'`
  }).join("\n")

/**
 * Stand-ins for what only a real completion can call: bash's compopt (which refuses outside one)
 * records nospace; zsh's compadd prints each word it is given that matches what is typed, with its
 * display text and suffix; where a shell would offer files, '<files>'.
 */
const STANDINS: Record<Shell, string> = {
  bash: "compopt(){ [[ $1 == -o && $2 == nospace ]] && nospace=1; }",
  zsh: `compdef(){ :; }; _files(){ print -r -- '<files>'; }
compadd(){
  local -a __display; local __suffix=' '
  while (( $# )); do
    case $1 in -d) __display=("\${(@P)2}"); shift 2 ;; -S) __suffix=$2; shift 2 ;; -l) shift ;; --) shift; break ;; *) print -u2 "compadd $1?"; return 1 ;; esac
  done
  local c; for c in "$@"; do [[ $c == "\${words[CURRENT]}"* ]] && print -r -- "$c"$'\\t'"\${__display[1]}"$'\\t'"$__suffix"; done
}`,
  fish: "function __fish_complete_path; echo '<files>'; end"
}

const parse = (shell: Shell, line: string): Offered => {
  const [word = "", shown = "", extra = ""] = line.split("\t")
  if (shell === "bash") return { word, description: "", space: extra !== "1" }
  // zsh shows "word   -- description" (or the word alone); fish prints "word<TAB>description".
  if (shell === "zsh") return { word, description: shown.includes(" -- ") ? shown.replace(/^\S+\s+-- /, "") : "", space: extra !== "" }
  return { word, description: shown, space: true }
}

/** What the shell offers for each line typed so far, in one run of the shell. */
const completeAll = (shell: Shell, lines: ReadonlyArray<ReadonlyArray<string>>, prelude = ""): Array<Array<Offered>> => {
  const program = `${prelude}\n${shell === "fish" ? scripts.fish : `${STANDINS[shell]}\n${scripts[shell]}`}\n${
    shell === "fish" ? STANDINS.fish : ""
  }\n${requests(shell, lines)}`
  const result = spawnSync(shell, shell === "zsh" ? ["-f", "-c", program] : ["-c", program], { encoding: "utf8", timeout: 60_000 })
  expect(result.stderr).toBe("")
  const answers = result.stdout.split(`${END}\n`).slice(0, lines.length)
  expect(answers).toHaveLength(lines.length)
  return answers.map((answer) =>
    answer.split("\n").filter((line) => line !== "").map((line) => parse(shell, line)).sort((a, b) => a.word.localeCompare(b.word))
  )
}

const complete = (shell: Shell, typed: ReadonlyArray<string>) => completeAll(shell, [typed])[0]!
const wordsOffered = (shell: Shell, typed: ReadonlyArray<string>) => complete(shell, typed).map((offered) => offered.word)
const sorted = (words: ReadonlyArray<string>) => [...words].sort((a, b) => a.localeCompare(b))

describe.each(SHELLS)("relay completions %s", (shell) => {
  it("offers every top-level command", () => {
    expect(wordsOffered(shell, ["relay", ""])).toEqual(
      ["agent", "auth", "card", "check", "completions", "doctor", "mcp", "message", "notifications", "server", "session", "task"]
    )
  })

  it("offers a subcommand's own options, not only the global ones (relay message send --<TAB>)", () => {
    const offered = wordsOffered(shell, ["relay", "message", "send", "--"])
    expect(offered).toEqual(expect.arrayContaining(["--url", "--bearer-token", "--context-id", "--push-url", "--json", "--help"]))
    expect(offered).not.toContain("--transport")
  })

  it("offers the right words two levels down (relay task notification <TAB>)", () => {
    expect(wordsOffered(shell, ["relay", "task", "notification", ""])).toEqual(["delete", "get", "list", "set"])
  })

  it("offers each choice as its own word (relay mcp -t <TAB>)", () => {
    expect(wordsOffered(shell, ["relay", "mcp", "-t", ""])).toEqual(["sse", "stdio", "streamable-http"])
    expect(wordsOffered(shell, ["relay", "mcp", "install", "--client", "c"])).toEqual(["claude-code", "claude-desktop", "codex", "cursor"])
  })

  it("skips option values when finding the command (relay mcp install --scope project --<TAB>)", () => {
    const offered = wordsOffered(shell, ["relay", "mcp", "install", "--scope", "project", "--d"])
    expect(offered).toEqual(["--dry-run"])
  })

  it("offers the shells to relay completions <TAB>", () => {
    expect(wordsOffered(shell, ["relay", "completions", ""])).toEqual(["bash", "fish", "zsh"])
    // Only at the argument's place: after it, file names as for any other word.
    expect(wordsOffered(shell, ["relay", "completions", "bash", ""])).toEqual(["<files>"])
  })

  it("offers the kinds of model to relay server agent -m <TAB>, with no space after a prefix", () => {
    const offered = complete(shell, ["relay", "server", "agent", "-m", ""])
    expect(offered.map((candidate) => candidate.word)).toEqual(["echo", "gateway:", "mock", "ollama:", "openai:"])
    expect(wordsOffered(shell, ["relay", "server", "agent", "--port", "0", "--model", "o"])).toEqual(["ollama:", "openai:"])
    if (shell !== "fish") {
      expect(complete(shell, ["relay", "server", "agent", "-m", "oll"])).toEqual([
        expect.objectContaining({ word: "ollama:", space: false })
      ])
      expect(complete(shell, ["relay", "server", "agent", "-m", "ec"])).toEqual([expect.objectContaining({ word: "echo", space: true })])
    }
  })

  it("offers the task states to relay task list --status <TAB>", () => {
    expect(wordsOffered(shell, ["relay", "task", "list", "--url", "http://127.0.0.1:1", "--status", ""])).toEqual(
      sorted(["submitted", "working", "input-required", "auth-required", "completed", "failed", "canceled", "rejected"])
    )
  })

  it("offers the groups of checks to relay check --only and --skip", () => {
    const groups = sorted(["card", "transport", "messaging", "tasks", "streaming", "push", "auth", "equivalence"])
    expect(wordsOffered(shell, ["relay", "check", "--only", ""])).toEqual(groups)
    expect(wordsOffered(shell, ["relay", "check", "http://127.0.0.1:1", "--skip", ""])).toEqual(groups)
  })

  it("offers at every level exactly its options and the global ones, never @effect/cli's --wizard or --completions", () => {
    const flags = (options: ReadonlyArray<OptionSpec>) => options.flatMap((option) => option.flags)
    const answers = completeAll(shell, ALL.map(({ path }) => [...wordsOf(path), "-"]))
    ALL.forEach(({ path, spec }, index) => {
      const offered = answers[index]!.map((candidate) => candidate.word)
      expect(offered, path).toEqual(sorted([...flags(spec.options), ...flags(GLOBAL_OPTIONS)]))
      expect(offered, path).not.toContain("--wizard")
      expect(offered, path).not.toContain("--completions")
    })
    expect(scripts[shell]).not.toMatch(/--wizard|--completions/)
  })

  it("offers every fixed choice and suggested value at every level: options' values and arguments'", () => {
    const cases = ALL.flatMap(({ path, spec }) => [
      ...[...spec.options, ...GLOBAL_OPTIONS].filter((option) => option.suggestions.length > 0).flatMap((option) =>
        option.flags.map((flag) => ({ typed: [...wordsOf(path), flag, ""], expected: option.suggestions }))
      ),
      ...(spec.args[0]?.suggestions.length ? [{ typed: [...wordsOf(path), ""], expected: spec.args[0].suggestions }] : [])
    ])
    expect(cases.length).toBeGreaterThan(40)
    const answers = completeAll(shell, cases.map(({ typed }) => typed))
    cases.forEach(({ expected, typed }, index) => {
      expect(answers[index]!.map((candidate) => candidate.word), typed.join(" ")).toEqual(sorted(expected.map((value) => value.value)))
    })
  })

  it("offers the saved agent names after --url and --agent, and to relay agent use|show|remove, asking relay for them as it completes", () => {
    const home = tempHome()
    Fs.mkdirSync(home.stateDir, { recursive: true, mode: 0o700 })
    const agent = (url: string) => ({ url, added_at: "2026-01-01T00:00:00.000Z" })
    Fs.writeFileSync(
      Path.join(home.stateDir, "sessions.json"),
      JSON.stringify({
        version: 3,
        sessions: {},
        agents: { local: agent("http://127.0.0.1:8000"), research: agent("https://research.example") }
      }),
      { mode: 0o600 }
    )
    // The scripts run `relay agent list --names`: here relay is the build, on this state directory.
    const relay = `${JSON.stringify(process.execPath)} ${JSON.stringify(relayBin)}`
    const prelude = shell === "fish"
      ? `function relay; env RELAY_HOME=${JSON.stringify(home.stateDir)} ${relay} $argv; end`
      : `relay() { RELAY_HOME=${JSON.stringify(home.stateDir)} ${relay} "$@"; }`
    const lines = [
      ["relay", "message", "send", "--url", ""],
      ["relay", "task", "list", "--agent", "r"],
      ["relay", "agent", "use", ""],
      ["relay", "agent", "show", ""],
      ["relay", "agent", "remove", "l"],
      ["relay", "check", ""],
      ["relay", "card", "validate", ""]
    ]
    const answers = completeAll(shell, lines, prelude)
    home.cleanup()
    expect(answers.map((answer) => answer.map((offered) => offered.word))).toEqual([
      ["local", "research"],
      ["research"],
      ["local", "research"],
      ["local", "research"],
      ["local"],
      ["local", "research"],
      ["local", "research"]
    ])
    if (shell !== "bash") expect(answers[0]![1]!.description).toBe("https://research.example")
  })

  it("is the script the command tree gives: the build's copy (dist/completions) is in step with the sources", () => {
    expect(scripts[shell]).toBe(completionScript(TREE, shell))
  })
})

// bash has no place for a description; zsh and fish show it beside each candidate.
describe.each(["zsh", "fish"] as const)("relay completions %s", (shell) => {
  it("shows each candidate's one-line description: commands, options and values", () => {
    const lines = ALL.flatMap(({ path, spec }) => [
      [...wordsOf(path), "-"],
      ...(spec.subcommands.length > 0 ? [[...wordsOf(path), ""]] : []),
      ...spec.options.filter((option) => option.suggestions.length > 0).map((option) => [...wordsOf(path), option.flags[0]!, ""])
    ])
    const answers = completeAll(shell, lines)
    const undescribed = answers.flatMap((answer, index) =>
      answer.filter((candidate) => candidate.description === "").map((candidate) => `${lines[index]!.join(" ")} → ${candidate.word}`)
    )
    expect(undescribed).toEqual([])
    const root = complete(shell, ["relay", ""])
    expect(root.find((candidate) => candidate.word === "message")?.description).toBe(
      oneLine(TREE.subcommands.find((sub) => sub.name === "message")!.description)
    )
    const models = complete(shell, ["relay", "server", "agent", "-m", ""])
    expect(models.find((candidate) => candidate.word === "mock")?.description).toMatch(/scriptable test agent/)
    const url = complete(shell, ["relay", "message", "send", "--ur"])
    expect(url).toEqual([
      expect.objectContaining({ word: "--url", description: "The A2A agent: a name (relay agent add) or its base URL" })
    ])
  })
})

describe("one-line descriptions", () => {
  it("keep the first sentence, drop asides in parentheses when too long, then cut at a word", () => {
    expect(oneLine("Show help. Also: relay help COMMAND")).toBe("Show help")
    expect(oneLine("Only tasks in this state (e.g. working)")).toBe("Only tasks in this state (e.g. working)")
    expect(oneLine("Print a completion script: source <(relay completions bash), and more words to make it long"))
      .toBe("Print a completion script: source <(relay completions…")
    expect(oneLine("Port for the HTTP transports (default 8090; 0 picks a free one and prints it on stderr)"))
      .toBe("Port for the HTTP transports")
  })
})

describe("values declared with withSuggestions", () => {
  it("reach the tree through optional and repeated, and describe choices", () => {
    const [text, list, choice] = optionsOf(Options.all(
      [
        Options.text("model").pipe(Options.withDescription("The model"), Options.optional, withSuggestions([["echo", "Echoes"]])),
        Options.text("only").pipe(Options.repeated, withSuggestions([["card", "The card"], ["push", "Push"]])),
        Options.choice("scope", ["user", "project"]).pipe(withSuggestions([["project", "This folder"]]))
      ] as const
    ))
    expect(text!.suggestions).toEqual([{ value: "echo", description: "Echoes" }])
    expect(list!.suggestions.map((suggestion) => suggestion.value)).toEqual(["card", "push"])
    expect(choice!.suggestions).toEqual([{ value: "user", description: "" }, { value: "project", description: "This folder" }])
  })

  it("refuse a value that is not among an option's choices", () => {
    const stray = Options.choice("scope", ["user", "project"]).pipe(withSuggestions([["global", "Everywhere"]]))
    expect(() => optionsOf(stray)).toThrow("global: suggested but not among the choices user, project")
  })
})
