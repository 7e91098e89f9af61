// Child processes for the benchmarks: every one started here is remembered, so the orchestrator
// can stop them all at the end, whatever failed. Every wait has a timeout.
import { spawn } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
export const benchDir = join(here, "..")
export const relayBin = join(benchDir, "..", "dist", "main.cjs")

const running = new Set()
const adopted = new Set()
const tempDirs = new Set()

/** Progress for the person watching: stderr, so stdout keeps only the table. */
export const progress = (text) => process.stderr.write(`bench: ${text}\n`)

/** A fresh, empty state directory for one relay process (RELAY_HOME), removed by stopAll. */
export const tempRelayHome = () => {
  const dir = mkdtempSync(join(tmpdir(), "relay-bench-"))
  tempDirs.add(dir)
  return dir
}

/** The environment a relay child runs with: no colours, its own state directory. */
export const relayEnv = (relayHome) => ({ ...process.env, NO_COLOR: "1", RELAY_HOME: relayHome })

/** Spawns a child and remembers it until it exits. */
export const track = (command, args, options) => {
  const child = spawn(command, args, options)
  running.add(child)
  child.once("exit", () => running.delete(child))
  // A child that cannot start reports through "exit" waits below; an unhandled "error" would crash us.
  child.on("error", () => {})
  return child
}

/** Resolves when `child` exits (with its code or signal), rejects after `ms`. */
export const exitOf = (child, ms, what) =>
  new Promise((resolve, reject) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve(child.exitCode ?? child.signalCode)
    const timer = setTimeout(() => reject(new Error(`${what} did not exit within ${ms} ms`)), ms)
    child.once("exit", (code, signal) => {
      clearTimeout(timer)
      resolve(code ?? signal)
    })
  })

/**
 * Starts a long-running server and resolves with `{ child, url }` once `findUrl` finds its
 * address in what it printed so far (stdout or stderr, whichever `stream` names).
 */
export const startServer = (
  label,
  command,
  args,
  { env = process.env, stream = "stdout", stdout = "pipe", findUrl, timeoutMs = 30_000 } = {}
) =>
  new Promise((resolve, reject) => {
    const child = track(command, args, { stdio: ["ignore", stdout, "pipe"], env })
    let seen = ""
    let stderr = ""
    const fail = (error) => {
      clearTimeout(timer)
      child.kill("SIGKILL")
      reject(error)
    }
    const timer = setTimeout(() => fail(new Error(`${label} printed no address within ${timeoutMs} ms:\n${stderr}`)), timeoutMs)
    child.stderr.on("data", (chunk) => (stderr += chunk))
    child[stream].on("data", (chunk) => {
      if (seen === undefined) return
      seen += chunk
      const url = findUrl(seen)
      if (url === undefined) return
      seen = undefined
      clearTimeout(timer)
      // Keep reading what it prints later, so a full pipe never blocks it.
      child.stdout?.resume()
      child.stderr.resume()
      resolve({ child, url })
    })
    child.once("exit", (code, signal) => fail(new Error(`${label} exited (${code ?? signal}) before it printed its address:\n${stderr}`)))
  })

/** The URL in the first line of JSON a `relay server … --json` prints. */
export const jsonLineUrl = (text) => {
  const newline = text.indexOf("\n")
  return newline < 0 ? undefined : JSON.parse(text.slice(0, newline)).url
}

/** The first http:// URL printed after "listening on". */
export const listeningUrl = (text) => /listening on (http:\/\/[^\s]+)/.exec(text)?.[1]

/**
 * Starts `relay server agent` with a model, bound to 127.0.0.1 on a free port, over the task store
 * given (memory unless told: the figures before stores were durable were measured so), in `relayHome`.
 */
export const startRelayAgent = (model, { store = "memory", relayHome = tempRelayHome() } = {}) =>
  startServer(`relay server agent -m ${model} --store ${store}`, process.execPath, [
    relayBin,
    "server",
    "agent",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    "--json",
    "--model",
    model,
    "--store",
    store
  ], { env: relayEnv(relayHome), findUrl: jsonLineUrl })

/** Remembers a process spawned elsewhere (by an SDK's transport), so stopAll ends it too. */
export const adopt = (pid) => {
  if (pid !== undefined && pid !== null) adopted.add(pid)
}

/** Forgets an adopted process that has ended (its pid may be reused). */
export const release = (pid) => adopted.delete(pid)

const killPid = (pid, signal) => {
  try {
    process.kill(pid, signal)
  } catch {
    // Already gone.
  }
}

/** Stops a child: SIGTERM, then SIGKILL if it lingers. */
export const stop = async (child) => {
  if (child === undefined || child.exitCode !== null || child.signalCode !== null) return
  child.kill("SIGTERM")
  await exitOf(child, 5_000, "child").catch(() => {
    child.kill("SIGKILL")
    return exitOf(child, 5_000, "killed child")
  })
}

/** Stops every child still running and removes the temporary state directories. */
export const stopAll = async () => {
  await Promise.allSettled([...running].map(stop))
  for (const pid of adopted) killPid(pid, "SIGKILL")
  adopted.clear()
  for (const dir of tempDirs) rmSync(dir, { recursive: true, force: true })
  tempDirs.clear()
}

// Last resort when the orchestrator dies before stopAll: no child outlives it.
process.once("exit", () => {
  for (const child of running) child.kill("SIGKILL")
  for (const pid of adopted) killPid(pid, "SIGKILL")
})

/** Resident memory of a process in bytes (Linux /proc/<pid>/status VmRSS). */
export const residentBytes = (pid) => {
  const status = readFileSync(`/proc/${pid}/status`, "utf8")
  const kilobytes = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1]
  if (kilobytes === undefined) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(kilobytes) * 1024
}

export const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms))

/** Rejects after `ms` unless `promise` settles first. */
export const withTimeout = (promise, ms, what) => {
  let timer
  const timeout = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took more than ${ms} ms`)), ms)
  })
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer))
}
