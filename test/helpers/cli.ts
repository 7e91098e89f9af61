/** Runs the built CLI (dist/main.js) as a user would, with its own state directory. */
import { spawn } from "node:child_process"
import { fileURLToPath } from "node:url"

export const relayBin = fileURLToPath(new URL("../../dist/main.js", import.meta.url))

export interface CliResult {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
}

export const runRelay = (
  args: ReadonlyArray<string>,
  options: { readonly stateDir: string; readonly input?: string; readonly env?: Record<string, string>; readonly timeoutMs?: number }
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: options.stateDir, NO_COLOR: "1", ...options.env },
      stdio: ["pipe", "pipe", "pipe"]
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

/** A command that must succeed with `--json`: its parsed result. */
export const relayJson = async (args: ReadonlyArray<string>, stateDir: string): Promise<Record<string, unknown>> => {
  const result = await runRelay([...args, "--json"], { stateDir })
  if (result.code !== 0) throw new Error(`relay ${args.join(" ")} exited ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout) as Record<string, unknown>
}
