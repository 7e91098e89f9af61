/**
 * The built CLI on a real pseudo-terminal, as a person types at it: util-linux `script` gives relay
 * a terminal for stdin, stdout and stderr, and what we write is typed into it. The terminal's own
 * echo is what shows whether relay turned it off.
 */
import { spawn } from "node:child_process"
import { relayBin } from "./cli.js"

export interface TerminalSession {
  /** Everything the terminal showed so far (stdout and stderr together, CRLF as the terminal sends it). */
  readonly screen: () => string
  /** Waits until the screen shows `pattern` (fails after `timeoutMs`). */
  readonly waitFor: (pattern: RegExp, timeoutMs?: number) => Promise<void>
  /** Types text (a key press each character; "\r" is Enter, "\u0003" Ctrl-C). */
  readonly type: (text: string) => void
  /** relay's exit code (script -e passes it on). */
  readonly exited: Promise<number | null>
}

const quoted = (word: string) => `'${word.replaceAll("'", "'\\''")}'`

export const onTerminal = (
  args: ReadonlyArray<string>,
  options: { readonly stateDir: string; readonly env?: Record<string, string>; readonly timeoutMs?: number }
): TerminalSession => {
  const command = [process.execPath, relayBin, ...args].map(quoted).join(" ")
  const child = spawn("script", ["-qec", command, "/dev/null"], {
    env: { ...process.env, RELAY_HOME: options.stateDir, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let screen = ""
  child.stdout.on("data", (chunk) => (screen += chunk))
  child.stderr.on("data", (chunk) => (screen += chunk))
  const timer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs ?? 20_000)
  let closed = false
  const exited = new Promise<number | null>((resolve, reject) => {
    child.on("error", reject)
    child.on("close", (code) => {
      closed = true
      clearTimeout(timer)
      resolve(code)
    })
  })
  const waitFor = async (pattern: RegExp, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs
    while (!pattern.test(screen)) {
      if (Date.now() > deadline || closed) throw new Error(`the terminal never showed ${pattern}: ${JSON.stringify(screen)}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  return { screen: () => screen, waitFor, type: (text) => void child.stdin.write(text), exited }
}
