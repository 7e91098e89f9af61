// `relay check` as a program: our own agent passes every must-check on both generations and both
// bindings; the official SDK servers fail exactly the checks they are known to fail; every fault
// planted in a broken stub is reported by the check meant for it, and nothing else fails.
import { Duration, Effect, Either } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { CHECKS, MAX_TASKS_PER_INTERFACE, summaryLine } from "../../src/domain/conformance.js"
import { startAgent } from "../servers/agentHarness.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"
import { CARD_WITHOUT_INTERFACES_FAULT, PLANTED_FAULTS, startBrokenAgent } from "./brokenAgent.js"
import { failedMusts, idsWith, planCheck, resultsOf, runCheck } from "./checkHarness.js"

const cleanups: Array<() => Promise<void>> = []
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((close) => close()))
})
const started = <T extends { close(): Promise<void> }>(handle: T): T => {
  cleanups.push(() => handle.close())
  return handle
}

const ALL_INTERFACES = ["1.0/jsonrpc", "1.0/rest", "0.3/jsonrpc", "0.3/rest"]
const interfacesOf = (report: { readonly interfaces: ReadonlyArray<{ protocol: string; binding: string }> }) =>
  report.interfaces.map((i) => `${i.protocol}/${i.binding}`)

describe("relay check against relay's own agent", () => {
  it("passes every must-check on both generations and both bindings (echo model)", async () => {
    const agent = started(await startAgent())
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report).sort()).toEqual([...ALL_INTERFACES].sort())
    expect(failedMusts(report)).toEqual([])
    // Every must-check that applies ran on every interface it applies to.
    expect(resultsOf(report, "transport.parse-error").map((r) => r.interface?.binding)).toEqual(["jsonrpc", "jsonrpc"])
    expect(resultsOf(report, "tasks.list").map((r) => r.status)).toEqual(["passed", "passed"])
    expect(report.summary.passed + report.summary.failed + report.summary.skipped).toBe(report.results.length)
    for (const id of ["streaming.framing", "streaming.first-event", "streaming.closes", "streaming.subscribe-unknown"]) {
      expect(resultsOf(report, id).map((r) => r.status), id).toEqual(["passed", "passed", "passed", "passed"])
    }
    expect(resultsOf(report, "equivalence.task-visible").map((r) => r.status)).toEqual(["passed"])
    expect(resultsOf(report, "push.config-roundtrip").map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"])
    // A real delivery, to the receiver the run starts on loopback, on every interface.
    expect(resultsOf(report, "push.delivery").map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"])
    // No credentials asked for: the auth checks say why they did not run.
    expect(resultsOf(report, "auth.refused-without-credentials")[0]?.detail).toMatch(/asks for no credentials/)
  }, 30_000)

  it("with --auth: refuses a request without credentials, and every must-check passes with the key", async () => {
    const agent = started(await startAgent({ key: "k-123456789" }))
    const report = await runCheck(agent.baseUrl, { apiKey: "k-123456789" })
    expect(failedMusts(report)).toEqual([])
    expect(resultsOf(report, "auth.refused-without-credentials").map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"])
  }, 30_000)

  it("passes every must-check with the mock model, and cancels a task that stays working", async () => {
    const agent = started(await startAgent({ model: "mock", settings: { latency: Duration.millis(400) } }))
    const report = await runCheck(agent.baseUrl)
    expect(failedMusts(report)).toEqual([])
    expect(idsWith(report, "failed")).toEqual([])
    expect(resultsOf(report, "tasks.cancel-working").map((r) => r.status)).toEqual(["passed", "passed", "passed", "passed"])
    // Bounded: the tasks it made are listed, at most the budget per interface.
    expect(report.tasks_created.length).toBeGreaterThan(0)
    for (const id of ALL_INTERFACES) {
      expect(report.tasks_created.filter((t) => `${t.interface.protocol}/${t.interface.binding}` === id).length)
        .toBeLessThanOrEqual(MAX_TASKS_PER_INTERFACE)
    }
  }, 40_000)
})

describe("relay check against the official SDK servers", () => {
  it("@a2a-js/sdk 1.3.0: 1.0 only; -32602 for a request without a method and a message without parts accepted", async () => {
    const agent = started(await startSdkAgent())
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report)).toEqual(["1.0/jsonrpc", "1.0/rest"])
    expect(idsWith(report, "failed").slice().sort()).toEqual([
      "messaging.invalid-params@1.0/jsonrpc",
      "messaging.invalid-params@1.0/rest",
      "transport.invalid-request@1.0/jsonrpc"
    ])
    expect(resultsOf(report, "transport.invalid-request")[0]?.detail).toContain("-32602")
    for (const id of ["transport.version-refused", "tasks.list", "messaging.unknown-task", "tasks.cancel-terminal"]) {
      expect(resultsOf(report, id).map((r) => r.status)).toEqual(["passed", "passed"])
    }
    // Its echo finishes at once: the cancel of a working task is skipped, saying why.
    for (const result of resultsOf(report, "tasks.cancel-working")) {
      expect(result.status).toBe("skipped")
      expect(result.detail).toMatch(/stays working/)
    }
  }, 30_000)

  it("@a2a-js/sdk 1.3.0 with legacyCompat: both generations checked, the same faults on each", async () => {
    const agent = started(await startSdkAgent({ legacyCompat: true }))
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report)).toEqual(ALL_INTERFACES)
    expect(idsWith(report, "failed").slice().sort()).toEqual([
      "messaging.invalid-params@0.3/jsonrpc",
      "messaging.invalid-params@0.3/rest",
      "messaging.invalid-params@1.0/jsonrpc",
      "messaging.invalid-params@1.0/rest",
      "transport.invalid-request@1.0/jsonrpc"
    ])
  }, 30_000)

  it("@a2a-js/sdk 1.3.0 cancels a slow task it was asked to cancel", async () => {
    const agent = started(await startSdkAgent({ behaviour: "slow-cancellable" }))
    const report = await runCheck(agent.baseUrl, { only: ["tasks.cancel-working"], protocols: ["1.0"], bindings: ["JSONRPC"] })
    expect(report.results.map((r) => [r.id, r.status])).toEqual([["tasks.cancel-working", "passed"]])
  }, 30_000)

  it("@a2a-js/sdk 0.3.14: 0.3 only; historyLength 0 still returns history; REST resubscribe to an unknown task breaks", async () => {
    const agent = started(await startV03Agent())
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report)).toEqual(["0.3/jsonrpc", "0.3/rest"])
    expect(idsWith(report, "failed").slice().sort()).toEqual([
      "messaging.invalid-params@0.3/jsonrpc",
      "messaging.invalid-params@0.3/rest",
      "streaming.subscribe-unknown@0.3/rest",
      "tasks.history-length@0.3/jsonrpc",
      "tasks.history-length@0.3/rest"
    ])
    // v0.3 has no ListTasks and no A2A-Version negotiation: those checks are not run at all.
    expect(resultsOf(report, "tasks.list")).toEqual([])
    expect(resultsOf(report, "push.config-roundtrip").map((r) => r.status)).toEqual(["passed", "passed"])
    expect(resultsOf(report, "push.delivery").map((r) => r.status)).toEqual(["passed", "passed"])
    expect(resultsOf(report, "streaming.subscribe-unknown")[1]?.detail).toMatch(/InternalError/)
    expect(resultsOf(report, "transport.version-refused")).toEqual([])
  }, 30_000)
})

describe("relay check against a broken agent", () => {
  it("reports every planted fault with the check meant for it, and no other failure", async () => {
    const agent = started(await startBrokenAgent())
    const report = await runCheck(agent.baseUrl)
    const failing = new Set(report.results.filter((r) => r.status === "failed").map((r) => r.id))
    for (const [fault, id] of Object.entries(PLANTED_FAULTS)) {
      expect(failing.has(id), `${fault} → ${id}`).toBe(true)
    }
    expect([...failing].sort()).toEqual([...new Set(Object.values(PLANTED_FAULTS))].sort())
  }, 30_000)

  it("reports a card without interfaces, and runs no interface check", async () => {
    const agent = started(await startBrokenAgent({ withInterfaces: false }))
    const report = await runCheck(agent.baseUrl)
    expect(resultsOf(report, CARD_WITHOUT_INTERFACES_FAULT)[0]?.status).toBe("failed")
    expect(report.interfaces).toEqual([])
    expect(report.results.filter((r) => r.interface !== null)).toEqual([])
  }, 30_000)

  it("a dry run lists every check and sends nothing", async () => {
    const agent = started(await startBrokenAgent())
    const report = await planCheck(agent.baseUrl)
    expect(report.results.map((r) => r.id)).toEqual(CHECKS.map((c) => c.id))
    expect(report.results.every((r) => r.status === "skipped")).toBe(true)
    expect(summaryLine(report.summary)).toBe(`0 passed, 0 failed, ${CHECKS.length} skipped`)
    expect(agent.requestCount()).toBe(0)
  })

  it("--only and --skip select groups and ids; unknown names are a usage error", async () => {
    const agent = started(await startBrokenAgent())
    const report = await runCheck(agent.baseUrl, { only: ["card", "tasks.list"], skip: ["card.caching"] })
    expect([...new Set(report.results.map((r) => r.id))]).toEqual(["card.served", "card.valid", "card.interfaces", "card.interface-hosts", "tasks.list"])
    const refused = await Effect.runPromise(Effect.either(Effect.tryPromise(() => runCheck(agent.baseUrl, { only: ["nonsense"] }))))
    expect(Either.isLeft(refused) && String(refused.left.error)).toMatch(/Unknown check group or id: nonsense/)
  })
})
