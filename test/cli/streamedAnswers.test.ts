/**
 * The terminal while an agent streams fast and without end (built CLI, `npm run build` first):
 * Ctrl-C and SIGTERM end `relay message stream` within a second or two however long it has
 * streamed many small events (each event costs the same, the text so far does not grow it: it
 * took 80–95 s before), and an answer past `--max-answer-bytes` is cut: what was kept is shown,
 * then response_too_large, exit 1.
 */
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CliResult, relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { type Progress, startEndlessAgent } from "../peers/hugeAnswers.js"
import type { Stub } from "../services/a2aClientHarness.js"

const home = tempHome()
const progress: Progress = { written: 0, cutShort: false }
let fast: Stub
let chunky: Stub

beforeAll(async () => {
  requireBuiltRelay()
  ;[fast, chunky] = await Promise.all([startEndlessAgent(16, progress), startEndlessAgent(10_000, progress)])
})

afterAll(async () => {
  await Promise.allSettled([fast?.close(), chunky?.close()])
  home.cleanup()
})

/** How long a stream runs before the signal: long enough for the old quadratic rendering to lag by seconds. */
const STREAMING_MS = 6000

/** Streams for STREAMING_MS, sends `signal`, and measures how long relay takes to end. */
const stopWhileStreaming = (args: ReadonlyArray<string>, signal: NodeJS.Signals) =>
  new Promise<CliResult & { readonly endedAfterMs: number }>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    let signalledAt = 0
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const signalTimer = setTimeout(() => {
      signalledAt = Date.now()
      child.kill(signal)
    }, STREAMING_MS)
    const deadline = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`relay ${args.join(" ")} did not end after ${signal}\nstderr: ${stderr}`))
    }, STREAMING_MS + 15_000)
    child.on("close", (code) => {
      clearTimeout(signalTimer)
      clearTimeout(deadline)
      resolve({ code, stdout, stderr, endedAfterMs: Date.now() - signalledAt })
    })
  })

describe("a fast stream of many small events", () => {
  it("Ctrl-C ends relay message stream at once: exit 130, the text streamed so far on stdout", async () => {
    const result = await stopWhileStreaming(["message", "stream", "--url", fast.baseUrl, "hi"], "SIGINT")
    expect(result.code, result.stderr).toBe(130)
    expect(result.endedAfterMs).toBeLessThan(2000)
    expect(result.stderr).toContain("interrupted by SIGINT")
    expect(result.stdout.length).toBeGreaterThan(10_000)
    expect(result.stdout).toMatch(/^a+$/)
  })

  it("SIGTERM ends relay message stream --json at once: exit 143, the updates so far on stdout", async () => {
    const result = await stopWhileStreaming(["message", "stream", "--url", fast.baseUrl, "--json", "hi"], "SIGTERM")
    expect(result.code, result.stderr).toBe(143)
    expect(result.endedAfterMs).toBeLessThan(2000)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "interrupted" } })
    expect(result.stdout.split("\n").length).toBeGreaterThan(500)
  })
})

describe("an answer past --max-answer-bytes", () => {
  const LIMIT = 200_000

  it("is shown as far as it was kept, then response_too_large on stderr and exit 1", async () => {
    const result = await runRelay(["message", "stream", "--url", chunky.baseUrl, "--max-answer-bytes", String(LIMIT), "hi"], {
      stateDir: home.stateDir
    })
    expect(result.code, result.stderr).toBe(1)
    const streamed = /^a+/.exec(result.stdout)?.[0] ?? ""
    expect(streamed.length).toBeGreaterThan(LIMIT - 20_000)
    expect(streamed.length).toBeLessThanOrEqual(LIMIT)
    expect(result.stdout).toContain("State")
    expect(result.stderr).toContain(`error: The agent's answer grew past the ${LIMIT}-byte limit for a whole answer`)
    expect(result.stderr).toContain("--max-answer-bytes")
  })

  it("with --json: the NDJSON updates, then the result marked truncated with its size, then the JSON error", async () => {
    const result = await runRelay(["message", "stream", "--url", chunky.baseUrl, "--json", "hi"], {
      stateDir: home.stateDir,
      env: { RELAY_MAX_ANSWER_BYTES: String(LIMIT) }
    })
    expect(result.code, result.stderr).toBe(1)
    const last = JSON.parse(result.stdout.trimEnd().split("\n").at(-1)!) as Record<string, unknown>
    expect(last).toMatchObject({ task_id: "endless", state: "working", truncated: true, limit_bytes: LIMIT })
    expect(last["kept_bytes"]).toBeLessThanOrEqual(LIMIT)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "response_too_large" } })
  })
})
