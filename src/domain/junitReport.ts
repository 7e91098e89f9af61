/**
 * A conformance report as JUnit XML (the format CI systems show as test results): one testsuite
 * per group and interface, one testcase per check. A check that fails the run at the --fail-on
 * level carries a <failure>; a finding below that level (a failed SHOULD check or a warning, with
 * `must`) is written to the testcase's <system-out> so CI shows it without failing; skipped checks
 * carry a <skipped> with the reason.
 */
import { type CheckReport, type CheckResult, DEFAULT_FAIL_ON, type FailOn, failsRun } from "./conformance.js"

const escapeXml = (text: string) =>
  // Characters XML 1.0 cannot carry at all are dropped; the five specials are escaped.
  text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/gu, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&apos;")

const seconds = (ms: number) => (ms / 1000).toFixed(3)

const suiteName = (result: CheckResult) =>
  result.interface === null ? result.group : `${result.group} (${result.interface.protocol} ${result.interface.binding})`

const testcase = (result: CheckResult, failOn: FailOn) => {
  const head = `    <testcase classname="${escapeXml(`relay.check.${suiteName(result)}`)}" name="${
    escapeXml(`${result.id}: ${result.title}`)
  }" time="${seconds(result.duration_ms)}"`
  const cite = result.spec === null ? "" : ` (${result.spec}, ${result.severity.toUpperCase()})`
  const body = (element: string) => `${head}>\n      ${element}\n    </testcase>`
  if (result.status === "passed") return `${head} />`
  if (result.status === "skipped") return body(`<skipped message="${escapeXml(result.detail)}" />`)
  const type = result.status === "warning" ? "warning" : result.severity
  return failsRun(result, failOn)
    ? body(`<failure message="${escapeXml(result.detail)}" type="${type}">${escapeXml(`${result.detail}${cite}`)}</failure>`)
    : body(
      `<system-out>${
        escapeXml(
          `${type === "warning" ? "warning" : "failed SHOULD check"} (not failing with --fail-on ${failOn}): ${result.detail}${cite}`
        )
      }</system-out>`
    )
}

export const junitXml = (report: CheckReport, failOn: FailOn = DEFAULT_FAIL_ON): string => {
  const suites = new Map<string, Array<CheckResult>>()
  for (const result of report.results) suites.set(suiteName(result), [...(suites.get(suiteName(result)) ?? []), result])
  const skippedIn = (results: ReadonlyArray<CheckResult>) => results.filter((r) => r.status === "skipped").length
  const failuresIn = (results: ReadonlyArray<CheckResult>) => results.filter((r) => failsRun(r, failOn)).length
  const body = [...suites].map(([name, results]) =>
    [
      `  <testsuite name="${escapeXml(name)}" tests="${results.length}" failures="${failuresIn(results)}" errors="0" skipped="${
        skippedIn(results)
      }" time="${seconds(results.reduce((sum, r) => sum + r.duration_ms, 0))}">`,
      ...results.map((result) => testcase(result, failOn)),
      "  </testsuite>"
    ].join("\n")
  )
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${escapeXml(`relay check ${report.agent_url}`)}" tests="${report.results.length}" failures="${
      failuresIn(report.results)
    }" errors="0" skipped="${report.summary.skipped}" time="${seconds(report.duration_ms)}">`,
    ...body,
    "</testsuites>",
    ""
  ].join("\n")
}
