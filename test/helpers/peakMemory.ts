/**
 * Peak memory of spawned processes, for the suites that hold relay to a memory bound whatever an
 * agent sends: VmHWM sampled from /proc every 10 ms until the child exits.
 */
import type { ChildProcessWithoutNullStreams } from "node:child_process"
import * as Fs from "node:fs"

/** Peak resident memory so far (kB), or undefined once the process is gone. */
export const peakRssKb = (pid: number): number | undefined => {
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(Fs.readFileSync(`/proc/${pid}/status`, "utf8"))
    return match ? Number(match[1]) : undefined
  } catch {
    return undefined
  }
}

export interface Measured {
  readonly code: number | null
  readonly stdout: string
  readonly stderr: string
  readonly peakKb: number
}

/** Samples the peak RSS of a running child until it exits (killed past `deadlineMs`); then what it printed. */
export const measure = (
  child: ChildProcessWithoutNullStreams,
  deadlineMs: number,
  until: Promise<unknown> = Promise.resolve()
): Promise<Measured> =>
  new Promise((resolve, reject) => {
    let stdout = ""
    let stderr = ""
    let peakKb = 0
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const sampler = setInterval(() => (peakKb = Math.max(peakKb, peakRssKb(child.pid!) ?? 0)), 10)
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`no exit within ${deadlineMs} ms (peak ${peakKb} kB)\nstderr: ${stderr}`))
    }, deadlineMs)
    // "close", not "exit": by then stdout and stderr are read to their end.
    child.once("close", (code) => {
      clearInterval(sampler)
      clearTimeout(deadline)
      void until.then(() => resolve({ code, stdout, stderr, peakKb }))
    })
  })
