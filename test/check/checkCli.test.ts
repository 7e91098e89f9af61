// `relay check` as a user runs it (dist/main.cjs): the terminal report, --json, and the exit codes
// 0 nothing failed (at the --fail-on level), 1 a check failed, 2 usage, 4 agent unreachable.
import * as Fs from "node:fs"
import http from "node:http"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHECK_REPORT_SCHEMA_ID, type CheckReport } from "../../src/domain/conformance.js"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { closeServer, listenOnLoopback } from "../peers/httpUtil.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"
import { type BrokenAgent, startBrokenAgent } from "./brokenAgent.js"

const home = tempHome()
let agent: AgentHandle
let broken: BrokenAgent
beforeAll(async () => {
  agent = await startAgent()
  broken = await startBrokenAgent()
})
afterAll(async () => {
  await agent.close()
  await broken.close()
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>) => runRelay(["check", ...args], { stateDir: home.stateDir, timeoutMs: 30_000 })
const SUMMARY = /^(\d+) passed, (\d+) failed, (\d+) skipped$/

describe("relay check", () => {
  it("exits 0 against relay's own agent; grouped lines, the summary last", async () => {
    const result = await relay([agent.baseUrl])
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trimEnd().split("\n")
    expect(lines.at(-1)).toMatch(SUMMARY)
    expect(SUMMARY.exec(lines.at(-1) ?? "")?.[2]).toBe("0")
    expect(lines).toContain("transport · 1.0 jsonrpc")
    expect(lines).toContain("tasks · 0.3 rest")
    expect(result.stdout).toMatch(/^ {2}✔ card\.served /m)
  }, 40_000)

  it("exits 1 with ✘ lines for the faults of a broken agent; --json is the documented report", async () => {
    const text = await relay(["--url", broken.baseUrl, "--protocol", "1.0", "--binding", "jsonrpc"])
    expect(text.code).toBe(1)
    expect(text.stdout).toMatch(/^ {2}✘ transport\.parse-error /m)
    expect(text.stdout.trimEnd().split("\n").at(-1)).toMatch(/^\d+ passed, [1-9]\d* failed, \d+ skipped$/)

    const json = await relay([broken.baseUrl, "--json", "--only", "transport,card"])
    expect(json.code).toBe(1)
    const report = JSON.parse(json.stdout) as CheckReport
    expect(report.schema).toBe(CHECK_REPORT_SCHEMA_ID)
    expect(new Set(report.results.map((r) => r.group))).toEqual(new Set(["card", "transport"]))
    expect(report.results.find((r) => r.id === "transport.parse-error")).toMatchObject({
      status: "failed",
      severity: "must",
      interface: { protocol: "1.0", binding: "jsonrpc" }
    })
    expect(report.summary.failed).toBe(report.results.filter((r) => r.status === "failed").length)
  }, 40_000)

  it("--junit FILE writes the report as JUnit XML, failures and skips included", async () => {
    const file = Path.join(home.parent, "report.xml")
    const result = await relay([broken.baseUrl, "--junit", file, "--only", "transport,tasks,auth"])
    expect(result.code).toBe(1)
    const xml = Fs.readFileSync(file, "utf8")
    const summary = SUMMARY.exec(result.stdout.trimEnd().split("\n").at(-1) ?? "")
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites /)
    expect(xml).toContain(`tests="${Number(summary?.[1]) + Number(summary?.[2]) + Number(summary?.[3])}" failures="${summary?.[2]}"`)
    expect(xml).toContain(`<testsuite name="transport (1.0 jsonrpc)"`)
    expect(xml).toMatch(
      /<testcase classname="relay\.check\.transport \(1\.0 jsonrpc\)" name="transport\.parse-error: [^"]+" time="\d+\.\d{3}">\n\s+<failure message="expected a JSON-RPC error -32700/
    )
    expect(xml).toMatch(/<skipped message="the card asks for no credentials/)
  }, 40_000)

  it("--fail-on must (the default) reports a failed SHOULD check with ! and exits 0; --fail-on should exits 1", async () => {
    const file = Path.join(home.parent, "should.xml")
    const lenient = await relay([broken.baseUrl, "--only", "card", "--junit", file])
    expect(lenient.code, lenient.stderr).toBe(0)
    expect(lenient.stdout).toMatch(
      /^ {2}! card\.caching \(should\) .*\n\s+neither Cache-Control nor ETag is sent with the card \[A2A v1\.0 §8\.6\.1\]$/m
    )
    expect(lenient.stdout).toContain("1 SHOULD-level finding(s) marked ! do not fail the run (--fail-on should fails on them)")
    expect(lenient.stdout.trimEnd().split("\n").at(-1)).toBe("4 passed, 1 failed, 0 skipped")
    expect(Fs.readFileSync(file, "utf8")).not.toContain("<failure")

    const strict = await relay([broken.baseUrl, "--only", "card", "--junit", file, "--fail-on", "should"])
    expect(strict.code).toBe(1)
    expect(strict.stdout).toMatch(/^ {2}✘ card\.caching \(should\) /m)
    expect(Fs.readFileSync(file, "utf8")).toMatch(/<failure message="neither Cache-Control nor ETag is sent with the card" type="should">/)
  }, 40_000)

  it("--card-url: a card found only there is a warning naming its path", async () => {
    const elsewhere = await startBrokenAgent({ faults: [], cardPath: "/api/agents/broken/card.json" })
    try {
      const result = await relay([elsewhere.baseUrl, "--card-url", `${elsewhere.baseUrl}/api/agents/broken/card.json`, "--only", "card"])
      expect(result.code, result.stderr).toBe(0)
      expect(result.stdout).toMatch(
        /^ {2}! card\.served .*\n\s+warning: no card at the well-known path \/\.well-known\/agent-card\.json \(HTTP 404\); the card was found only at \/api\/agents\/broken\/card\.json/m
      )
      expect(result.stdout.trimEnd().split("\n").at(-1)).toBe("4 passed, 0 failed, 0 skipped, 1 warning")
      expect(
        (await relay([
          elsewhere.baseUrl,
          "--card-url",
          `${elsewhere.baseUrl}/api/agents/broken/card.json`,
          "--only",
          "card",
          "--fail-on",
          "should"
        ])).code
      ).toBe(1)
    } finally {
      await elsewhere.close()
    }
  }, 40_000)

  it("--dry-run lists the checks, sends nothing, exits 0", async () => {
    const before = broken.requestCount()
    const result = await relay([broken.baseUrl, "--dry-run"])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(/^ {2}– tasks\.cancel-working .*\n\s+skipped: dry run: nothing sent$/m)
    expect(broken.requestCount()).toBe(before)
  })

  it("exits 2 on usage errors: no URL, an unknown group", async () => {
    expect((await relay([])).code).toBe(2)
    const unknown = await relay([broken.baseUrl, "--only", "nonsense"])
    expect(unknown.code).toBe(2)
    expect(unknown.stderr).toMatch(/Unknown check group or id: nonsense/)
  })

  it("exits 4 when the agent cannot be reached", async () => {
    // A port that was just free: nothing listens there any more.
    const server = http.createServer()
    const url = await listenOnLoopback(server)
    await closeServer(server)
    const result = await relay([url, "--timeout", "2"])
    expect(result.code).toBe(4)
    expect(result.stderr).toMatch(/Cannot reach the agent/)
  })
})
