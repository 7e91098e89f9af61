/**
 * A conformance report as JUnit XML (the format CI systems show as test results): one testsuite
 * per group and interface, one testcase per check; failed checks carry a <failure>, skipped ones
 * a <skipped> with the reason.
 */
import type { CheckReport, CheckResult } from "./conformance.js"

const escapeXml = (text: string) =>
  // Characters XML 1.0 cannot carry at all are dropped; the five specials are escaped.
  text.replace(/[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD]/gu, "").replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;").replace(/'/g, "&apos;")

const seconds = (ms: number) => (ms / 1000).toFixed(3)

const suiteName = (result: CheckResult) =>
  result.interface === null ? result.group : `${result.group} (${result.interface.protocol} ${result.interface.binding})`

const testcase = (result: CheckResult) => {
  const head = `    <testcase classname="${escapeXml(`relay.check.${suiteName(result)}`)}" name="${escapeXml(`${result.id}: ${result.title}`)}" time="${seconds(result.duration_ms)}"`
  const cite = result.spec === null ? "" : ` (${result.spec}, ${result.severity.toUpperCase()})`
  if (result.status === "passed") return `${head} />`
  if (result.status === "skipped") return `${head}>\n      <skipped message="${escapeXml(result.detail)}" />\n    </testcase>`
  return `${head}>\n      <failure message="${escapeXml(result.detail)}" type="${result.severity}">${escapeXml(`${result.detail}${cite}`)}</failure>\n    </testcase>`
}

export const junitXml = (report: CheckReport): string => {
  const suites = new Map<string, Array<CheckResult>>()
  for (const result of report.results) suites.set(suiteName(result), [...(suites.get(suiteName(result)) ?? []), result])
  const count = (results: ReadonlyArray<CheckResult>, status: CheckResult["status"]) => results.filter((r) => r.status === status).length
  const body = [...suites].map(([name, results]) =>
    [
      `  <testsuite name="${escapeXml(name)}" tests="${results.length}" failures="${count(results, "failed")}" errors="0" skipped="${count(results, "skipped")}" time="${seconds(results.reduce((sum, r) => sum + r.duration_ms, 0))}">`,
      ...results.map(testcase),
      "  </testsuite>"
    ].join("\n")
  )
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<testsuites name="${escapeXml(`relay check ${report.agent_url}`)}" tests="${report.results.length}" failures="${report.summary.failed}" errors="0" skipped="${report.summary.skipped}" time="${seconds(report.duration_ms)}">`,
    ...body,
    "</testsuites>",
    ""
  ].join("\n")
}
