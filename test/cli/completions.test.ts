/**
 * The completion scripts, driven through each shell's own completion machinery: bash's COMPREPLY,
 * zsh's compadd (stubbed to print what it is given), fish's `complete -C`.
 */
import { execFileSync, spawnSync } from "node:child_process"
import { beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const SHELLS = ["bash", "zsh", "fish"] as const
type Shell = typeof SHELLS[number]

const has = (shell: string) => spawnSync("sh", ["-c", `command -v ${shell}`]).status === 0

/** zsh and fish come from Debian packages; .ci/run installs them, and so does this, loudly, when it can. */
const ensureShells = () => {
  const missing = SHELLS.filter((shell) => !has(shell))
  if (missing.length === 0) return
  if (process.getuid?.() === 0) {
    execFileSync("apt-get", ["install", "-y", "-qq", ...missing], { stdio: "inherit", timeout: 300_000 })
  }
  const still = SHELLS.filter((shell) => !has(shell))
  if (still.length > 0) throw new Error(`Cannot drive completions: ${still.join(", ")} not installed (apt-get install -y ${still.join(" ")})`)
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

/** The candidates a shell offers for the words typed so far (the last one is the word being completed). */
const complete = (shell: Shell, typed: ReadonlyArray<string>): Array<string> => {
  const quoted = typed.map((word) => `'${word}'`).join(" ")
  const program = {
    bash: `${scripts.bash}\nCOMP_WORDS=(${quoted}); COMP_CWORD=$((\${#COMP_WORDS[@]} - 1)); __relay_complete; printf '%s\\n' "\${COMPREPLY[@]}"`,
    // zsh filters candidates by the typed prefix itself; the stub applies the same filter.
    zsh: `compdef(){ :; }; _files(){ print -r -- '<files>'; }
compadd(){ [[ $1 == -- ]] && shift; local c; for c in "$@"; do [[ $c == "\${words[CURRENT]}"* ]] && print -r -- $c; done; }
${scripts.zsh}\nwords=(${quoted}); CURRENT=\${#words}; __relay_complete`,
    fish: `${scripts.fish}\ncomplete -C ${JSON.stringify(typed.join(" "))}`
  }[shell]
  const args = shell === "zsh" ? ["-f", "-c", program] : ["-c", program]
  const result = spawnSync(shell, args, { encoding: "utf8", timeout: 20_000 })
  expect(result.stderr).toBe("")
  // fish prints "candidate<TAB>description"; keep the candidate.
  return result.stdout.split("\n").filter((line) => line !== "").map((line) => line.split("\t")[0]!).sort()
}

describe.each(SHELLS)("relay completions %s", (shell) => {
  it("offers every top-level command", () => {
    expect(complete(shell, ["relay", ""])).toEqual(
      ["auth", "card", "check", "completions", "doctor", "mcp", "message", "notifications", "server", "session", "task"]
    )
  })

  it("offers a subcommand's own options, not only the global ones (relay message send --<TAB>)", () => {
    const offered = complete(shell, ["relay", "message", "send", "--"])
    expect(offered).toEqual(expect.arrayContaining(["--url", "--bearer-token", "--context-id", "--push-url", "--json", "--help"]))
    expect(offered).not.toContain("--transport")
  })

  it("offers the right words two levels down (relay task notification <TAB>)", () => {
    expect(complete(shell, ["relay", "task", "notification", ""])).toEqual(["delete", "get", "list", "set"])
  })

  it("offers each choice as its own word (relay mcp -t <TAB>)", () => {
    expect(complete(shell, ["relay", "mcp", "-t", ""])).toEqual(["sse", "stdio", "streamable-http"])
    expect(complete(shell, ["relay", "mcp", "install", "--client", "c"])).toEqual(["claude-code", "claude-desktop", "codex", "cursor"])
  })

  it("skips option values when finding the command (relay mcp install --scope project --<TAB>)", () => {
    const offered = complete(shell, ["relay", "mcp", "install", "--scope", "project", "--d"])
    expect(offered).toEqual(["--dry-run"])
  })
})
