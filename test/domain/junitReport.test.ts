// --fail-on: which findings fail a run, and how the JUnit report shows the rest (CI reads both).
import { describe, expect, it } from "vitest"
import { CHECK_REPORT_SCHEMA_ID, type CheckReport, type CheckResult, runFailed, summarize } from "../../src/domain/conformance.js"
import { junitXml } from "../../src/domain/junitReport.js"

const result = (id: string, severity: CheckResult["severity"], status: CheckResult["status"], detail = ""): CheckResult => ({
  id,
  group: "card",
  severity,
  title: `title of ${id}`,
  spec: "A2A v1.0 §8.6.1",
  interface: null,
  status,
  detail,
  duration_ms: 5
})

const reportOf = (results: ReadonlyArray<CheckResult>): CheckReport => ({
  schema: CHECK_REPORT_SCHEMA_ID,
  agent_url: "http://127.0.0.1:8000",
  card_url: null,
  dry_run: false,
  interfaces: [],
  results,
  tasks_created: [],
  summary: summarize(results),
  duration_ms: 10
})

const shouldOnly = reportOf([
  result("card.served", "must", "warning", "no card at the well-known path"),
  result("card.caching", "should", "failed", "neither Cache-Control nor ETag"),
  result("card.valid", "must", "passed")
])

describe("--fail-on", () => {
  it("must (the default): a failed SHOULD check or a warning does not fail the run; should: they do", () => {
    expect(runFailed(shouldOnly, "must")).toBe(false)
    expect(runFailed(shouldOnly, "should")).toBe(true)
    const mustFailed = reportOf([...shouldOnly.results, result("tasks.get", "must", "failed", "GetTask failed")])
    expect(runFailed(mustFailed, "must")).toBe(true)
  })

  it("JUnit: below the level, findings go to <system-out>, not <failure>; at it, they are failures", () => {
    const lenient = junitXml(shouldOnly, "must")
    expect(lenient).not.toContain("<failure")
    expect(lenient).toContain(`<testsuites name="relay check http://127.0.0.1:8000" tests="3" failures="0" errors="0" skipped="0"`)
    expect(lenient).toContain(
      "<system-out>failed SHOULD check (not failing with --fail-on must): neither Cache-Control nor ETag (A2A v1.0 §8.6.1, SHOULD)</system-out>"
    )
    expect(lenient).toContain(
      "<system-out>warning (not failing with --fail-on must): no card at the well-known path (A2A v1.0 §8.6.1, MUST)</system-out>"
    )
    const strict = junitXml(shouldOnly, "should")
    expect(strict).toContain(`failures="2"`)
    expect(strict).toContain(`<failure message="neither Cache-Control nor ETag" type="should">`)
    expect(strict).toContain(`<failure message="no card at the well-known path" type="warning">`)
  })
})
