/** Runs the built CLI (dist/main.cjs) as a user would, with its own state directory. */
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import { fileURLToPath } from "node:url"

export const relayBin = fileURLToPath(new URL("../../dist/main.cjs", import.meta.url))

/** For a suite's beforeAll: the suites that run the built CLI say so at once when it is not built. */
export const requireBuiltRelay = (): void => {
  if (!Fs.existsSync(relayBin)) throw new Error(`${relayBin} is missing: run npm run build first`)
}

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runRelay = (
  args: ReadonlyArray<string>,
  options: {
    readonly stateDir: string
    readonly input?: string
    readonly env?: Record<string, string>
    readonly timeoutMs?: number
    /** The folder relay runs in (project-scope files are written there). */
    readonly cwd?: string
  }
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: options.stateDir, NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"],
      ...(options.cwd === undefined ? {} : { cwd: options.cwd })
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`relay ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 20_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    child.stdin.end(options.input ?? "")
  })

/** A running relay whose stderr can be watched before it ends (e.g. for a login URL). */
export interface RunningRelay {
  /** The first match of `pattern` in stderr so far or to come (fails after `timeoutMs`). */
  readonly stderrMatch: (pattern: RegExp, timeoutMs?: number) => Promise<RegExpExecArray>
  readonly done: Promise<CliResult>
}

export const startRelay = (
  args: ReadonlyArray<string>,
  options: { readonly stateDir: string; readonly input?: string; readonly env?: Record<string, string>; readonly timeoutMs?: number }
): RunningRelay => {
  let stderr = ""
  const watchers = new Set<() => void>()
  const child = spawn(process.execPath, [relayBin, ...args], {
    env: { ...process.env, RELAY_HOME: options.stateDir, NO_COLOR: "1", ...options.env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  let stdout = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => {
    stderr += chunk
    for (const watcher of watchers) watcher()
  })
  child.stdin.end(options.input ?? "")
  const done = new Promise<CliResult>((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`relay ${args.join(" ")} timed out\nstdout: ${stdout}\nstderr: ${stderr}`))
    }, options.timeoutMs ?? 30_000)
    child.on("error", reject)
    child.on("close", (code) => {
      clearTimeout(timer)
      for (const watcher of watchers) watcher()
      resolve({ code, stdout, stderr })
    })
  })
  const stderrMatch = (pattern: RegExp, timeoutMs = 15_000) =>
    new Promise<RegExpExecArray>((resolve, reject) => {
      const timer = setTimeout(() => {
        watchers.delete(check)
        reject(new Error(`no ${pattern} in relay's stderr: ${stderr}`))
      }, timeoutMs)
      function check() {
        const match = pattern.exec(stderr)
        if (match !== null) {
          clearTimeout(timer)
          watchers.delete(check)
          resolve(match)
        } else if (child.exitCode !== null) {
          clearTimeout(timer)
          watchers.delete(check)
          reject(new Error(`relay ended without ${pattern}: ${stderr}`))
        }
      }
      watchers.add(check)
      check()
    })
  return { stderrMatch, done }
}

/**
 * A command that must succeed with `--json`: its parsed result. A streamed command prints NDJSON
 * updates first, and its result is the last line.
 */
export const relayJson = async (args: ReadonlyArray<string>, stateDir: string): Promise<Record<string, unknown>> => {
  const result = await runRelay([...args, "--json"], { stateDir })
  if (result.code !== 0) throw new Error(`relay ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
  const streamed = args.includes("stream") || args.includes("--stream")
  return JSON.parse(streamed ? result.stdout.trimEnd().split("\n").at(-1)! : result.stdout) as Record<string, unknown>
}

/** A `relay server agent` started by startAgentServer: its process and its `--json` start-up line. */
export interface AgentServerProcess {
  readonly child: ChildProcess
  /** The start-up line: url, and grpc_address when --grpc-port was given, among others. */
  readonly info: { readonly url: string; readonly grpc_address?: string } & Record<string, unknown>
  /** Kills it (SIGKILL) unless it has ended. */
  readonly kill: () => void
}

/**
 * `relay server agent --host 127.0.0.1 --port 0 --json` with `args` (model, store, …), resolved
 * with its start-up line within 20 s; it fails with its stderr when it ends or says nothing.
 */
export const startAgentServer = (
  args: ReadonlyArray<string>,
  options: { readonly stateDir: string; readonly env?: Record<string, string> }
): Promise<AgentServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, "server", "agent", "--host", "127.0.0.1", "--port", "0", "--json", ...args], {
      env: { ...process.env, RELAY_HOME: options.stateDir, NO_COLOR: "1", ...options.env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    const kill = () => void (child.exitCode === null && child.kill("SIGKILL"))
    let stdout = ""
    let stderr = ""
    const timer = setTimeout(() => {
      kill()
      reject(new Error(`relay server agent ${args.join(" ")}: no start-up line within 20 s: ${stderr}`))
    }, 20_000)
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child.stdout.on("data", (chunk) => {
      stdout += chunk
      const line = /^(\{.*\})\n/.exec(stdout)
      if (line === null) return
      clearTimeout(timer)
      resolve({ child, info: JSON.parse(line[1]!), kill })
    })
    child.once("exit", (code) => {
      clearTimeout(timer)
      reject(new Error(`relay server agent ${args.join(" ")} exited ${code}: ${stderr}`))
    })
  })
