// `relay check` as a program: our own agent passes every must-check on both generations and both
// bindings; the official SDK servers fail exactly the checks they are known to fail; every fault
// planted in a broken stub is reported by the check meant for it, and nothing else fails.
import { Duration, Effect, Either } from "effect"
import http from "node:http"
import type { AddressInfo } from "node:net"
import { afterEach, describe, expect, it } from "vitest"
import { CHECKS, MAX_TASKS_PER_INTERFACE, summaryLine } from "../../src/domain/conformance.js"
import { closeServer, listenOnLoopback, readBodyText, sendJson, tryParseJson } from "../peers/httpUtil.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"
import { startAgent } from "../servers/agentHarness.js"
import { checksFor, type Fault, PLANTED_FAULTS, startBrokenAgent, TASK_FAULTS, WELL_KNOWN_CARD } from "./brokenAgent.js"
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
const statusesOf = (report: Awaited<ReturnType<typeof runCheck>>, id: string) => resultsOf(report, id).map((r) => r.status)

describe("relay check against relay's own agent", () => {
  it("passes every must-check on both generations and both bindings (echo model)", async () => {
    const agent = started(await startAgent())
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report).sort()).toEqual([...ALL_INTERFACES].sort())
    expect(failedMusts(report)).toEqual([])
    // The new checks ran where they apply: ListTasks on 1.0, the proto-named push body on 0.3 REST.
    for (
      const id of [
        "tasks.list-filters",
        "tasks.list-pages",
        "tasks.list-artifacts",
        "tasks.list-history-length",
        "tasks.negative-history-length",
        "tasks.list-invalid-timestamp"
      ]
    ) {
      expect(statusesOf(report, id), id).toEqual(["passed", "passed"])
    }
    expect(statusesOf(report, "push.rest-proto-fields")).toEqual(["passed"])
    expect(resultsOf(report, "messaging.part-without-kind").map((r) => [r.interface, r.status])).toEqual([[{
      protocol: "0.3",
      binding: "jsonrpc"
    }, "passed"]])
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

  it("passes every must-check with the mock model: follow-ups, a live subscription, the cancel of a working task", async () => {
    const agent = started(await startAgent({ model: "mock", settings: { latency: Duration.millis(250) } }))
    const report = await runCheck(agent.baseUrl)
    expect(idsWith(report, "failed")).toEqual([])
    // A follow-up to a working task is queued behind the current turn (A2A 1.0 §3.4.3).
    expect(statusesOf(report, "messaging.follow-up-working")).toEqual(["passed", "passed", "passed", "passed"])
    expect(statusesOf(report, "tasks.cancel-working")).toEqual(["passed", "passed", "passed", "passed"])
    expect(statusesOf(report, "messaging.follow-up-input-required")).toEqual(["passed", "passed", "passed", "passed"])
    expect(statusesOf(report, "streaming.subscribe-live")).toEqual(["passed", "passed"])
    // Bounded: the tasks it made are listed, at most the budget per interface.
    expect(report.tasks_created.length).toBeGreaterThan(0)
    for (const id of ALL_INTERFACES) {
      expect(report.tasks_created.filter((t) => `${t.interface.protocol}/${t.interface.binding}` === id).length)
        .toBeLessThanOrEqual(MAX_TASKS_PER_INTERFACE)
    }
  }, 40_000)
})

describe("relay check against the official SDK servers", () => {
  // Its known gaps: -32602 for a request without a method; a message without parts accepted; over
  // JSON-RPC, GetTask takes historyLength -1; ListTasks' statusTimestampAfter keeps only tasks
  // strictly after it (the proto says "greater than or equal").
  it("@a2a-js/sdk 1.3.0: 1.0 only, failing exactly its known gaps", async () => {
    const agent = started(await startSdkAgent())
    const report = await runCheck(agent.baseUrl)
    expect(interfacesOf(report)).toEqual(["1.0/jsonrpc", "1.0/rest"])
    expect(idsWith(report, "failed").slice().sort()).toEqual([
      "messaging.invalid-params@1.0/jsonrpc",
      "messaging.invalid-params@1.0/rest",
      "tasks.list-filters@1.0/jsonrpc",
      "tasks.list-filters@1.0/rest",
      "tasks.negative-history-length@1.0/jsonrpc",
      "transport.invalid-request@1.0/jsonrpc"
    ])
    expect(resultsOf(report, "transport.invalid-request")[0]?.detail).toContain("-32602")
    expect(resultsOf(report, "tasks.list-filters")[0]?.detail).toMatch(/statusTimestampAfter=.* left out task/)
    expect(resultsOf(report, "tasks.negative-history-length")[0]?.detail).toMatch(/^GetTask with historyLength -1 was not refused/)
    for (const id of ["transport.version-refused", "tasks.list", "messaging.unknown-task", "tasks.cancel-terminal"]) {
      expect(resultsOf(report, id).map((r) => r.status)).toEqual(["passed", "passed"])
    }
    // Its echo finishes at once: the cancel of a working task is skipped, saying why.
    for (const result of resultsOf(report, "tasks.cancel-working")) {
      expect(result.status).toBe("skipped")
      expect(result.detail).toMatch(/stays working/)
    }
  }, 30_000)

  it(
    "@a2a-js/sdk 1.3.0 with legacyCompat: both generations checked, the same gaps, and the proto-named v0.3 push body refused",
    async () => {
      const agent = started(await startSdkAgent({ legacyCompat: true }))
      const report = await runCheck(agent.baseUrl)
      expect(interfacesOf(report)).toEqual(ALL_INTERFACES)
      expect(idsWith(report, "failed").slice().sort()).toEqual([
        "messaging.invalid-params@0.3/jsonrpc",
        "messaging.invalid-params@0.3/rest",
        "messaging.invalid-params@1.0/jsonrpc",
        "messaging.invalid-params@1.0/rest",
        "push.rest-proto-fields@0.3/rest",
        "tasks.list-filters@1.0/jsonrpc",
        "tasks.list-filters@1.0/rest",
        "tasks.negative-history-length@1.0/jsonrpc",
        "transport.invalid-request@1.0/jsonrpc"
      ])
      expect(resultsOf(report, "push.rest-proto-fields")[0]?.detail).toMatch(/HTTP 400.*missing pushNotificationConfig/)
    },
    30_000
  )

  it("both SDKs continue a task waiting for input, take a message for a working task, and stream a live task to a subscriber", async () => {
    const only = ["messaging.follow-up-input-required", "messaging.follow-up-working", "streaming.subscribe-live"]
    const asking = [
      started(await startSdkAgent({ behaviour: "input-required", legacyCompat: true })),
      started(await startV03Agent({ behaviour: "input-required" }))
    ]
    for (const agent of asking) {
      const report = await runCheck(agent.baseUrl, { only: ["messaging.follow-up-input-required"] })
      expect(idsWith(report, "passed").length, agent.baseUrl).toBe(report.interfaces.length)
    }
    // Three chunks 30 ms apart: long enough to be working when the follow-up and the subscription arrive.
    const chunking = [
      started(await startSdkAgent({ behaviour: "chunked-artifact", legacyCompat: true })),
      started(await startV03Agent({ behaviour: "chunked-artifact" }))
    ]
    const [v1, v03] = await Promise.all(chunking.map((agent) => runCheck(agent.baseUrl, { only })))
    expect(idsWith(v1!, "passed").slice().sort()).toEqual([
      "messaging.follow-up-working@0.3/jsonrpc",
      "messaging.follow-up-working@0.3/rest",
      "messaging.follow-up-working@1.0/jsonrpc",
      "messaging.follow-up-working@1.0/rest",
      "streaming.subscribe-live@1.0/jsonrpc",
      "streaming.subscribe-live@1.0/rest"
    ])
    expect(idsWith(v03!, "passed").slice().sort()).toEqual([
      "messaging.follow-up-working@0.3/jsonrpc",
      "messaging.follow-up-working@0.3/rest"
    ])
  }, 30_000)

  it("@a2a-js/sdk 1.3.0 cancels a slow task it was asked to cancel", async () => {
    const agent = started(await startSdkAgent({ behaviour: "slow-cancellable" }))
    const report = await runCheck(agent.baseUrl, { only: ["tasks.cancel-working"], protocols: ["1.0"], bindings: ["JSONRPC"] })
    expect(report.results.map((r) => [r.id, r.status])).toEqual([["tasks.cancel-working", "passed"]])
  }, 30_000)

  it(
    "@a2a-js/sdk 0.3.14: 0.3 only; a part without kind taken; historyLength 0 still returns history; REST resubscribe to an unknown task breaks",
    async () => {
      const agent = started(await startV03Agent())
      const report = await runCheck(agent.baseUrl)
      expect(interfacesOf(report)).toEqual(["0.3/jsonrpc", "0.3/rest"])
      expect(idsWith(report, "failed").slice().sort()).toEqual([
        "messaging.invalid-params@0.3/jsonrpc",
        "messaging.invalid-params@0.3/rest",
        "messaging.part-without-kind@0.3/jsonrpc",
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
      // Its card is v0.3: the card checks cite v0.3's sections, and v1.0's caching advice is not held against it.
      expect(resultsOf(report, "card.valid")[0]?.spec).toBe("A2A v0.3 §5.5")
      expect(resultsOf(report, "card.caching")[0]).toMatchObject({ status: "skipped", spec: null })
      expect(statusesOf(report, "push.rest-proto-fields")).toEqual(["passed"])
    },
    30_000
  )
})

describe("relay check against a broken agent", () => {
  const failingIds = (report: Awaited<ReturnType<typeof runCheck>>) =>
    [...new Set(report.results.filter((r) => r.status === "failed").map((r) => r.id))].sort()

  for (
    const [name, faults] of [["the transport and task faults", PLANTED_FAULTS], [
      "the follow-up, ListTasks and subscription faults",
      TASK_FAULTS
    ]] as const
  ) {
    it(`reports each of ${name} with the check meant for it, and no other failure`, async () => {
      const agent = started(await startBrokenAgent({ faults }))
      const report = await runCheck(agent.baseUrl)
      expect(failingIds(report)).toEqual(checksFor(faults))
    }, 30_000)
  }

  // Verdicts an independent run found wrong: each fault alone, with the checks it touches.
  const runWith = async (fault: Fault, only: ReadonlyArray<string>) =>
    runCheck(started(await startBrokenAgent({ faults: [fault] })).baseUrl, { only })

  it("tasks.history-length cannot pass when GetTask answers something that is not the task", async () => {
    const report = await runWith("GetTask with historyLength 0 answers something that is not a task", ["tasks.history-length"])
    expect(resultsOf(report, "tasks.history-length")[0]).toMatchObject({
      status: "failed",
      detail: expect.stringMatching(/did not answer with task .*\{"ok":true\}/)
    })
  })

  it("a state A2A does not define is shown as sent, not as TASK_STATE_UNSPECIFIED", async () => {
    const report = await runWith("tasks are answered in state TASK_STATE_WEIRD", ["messaging.send", "messaging.task-shape"])
    expect(resultsOf(report, "messaging.send")[0]?.detail).toBe("a Task, TASK_STATE_WEIRD")
    expect(resultsOf(report, "messaging.task-shape")[0]?.detail).toBe("the task's state TASK_STATE_WEIRD is not a known state")
    expect(report.tasks_created.map((t) => t.state)).toEqual(["TASK_STATE_WEIRD"])
    expect(JSON.stringify(report)).not.toContain("UNSPECIFIED")
  })

  it("streaming.closes cannot pass when the answer is not an event stream", async () => {
    const report = await runWith("a streaming message is answered with plain JSON", ["streaming.content-type", "streaming.closes"])
    expect(report.results.map((r) => [r.id, r.status])).toEqual([["streaming.content-type", "failed"], ["streaming.closes", "skipped"]])
    expect(resultsOf(report, "streaming.closes")[0]?.detail).toMatch(/not an event stream/)
  })

  it("a card found only at the URL given is a warning naming its path, not a pass", async () => {
    const agent = started(await startBrokenAgent({ faults: [], cardPath: "/api/agents/broken/agent-card.json" }))
    const report = await runCheck(agent.baseUrl, { only: ["card"], cardUrl: `${agent.baseUrl}/api/agents/broken/agent-card.json` })
    expect(resultsOf(report, "card.served")[0]).toMatchObject({ status: "warning", spec: "A2A v1.0 §8.2" })
    expect(resultsOf(report, "card.served")[0]?.detail).toBe(
      `no card at the well-known path ${WELL_KNOWN_CARD} (HTTP 404); the card was found only at /api/agents/broken/agent-card.json`
    )
    expect(report.summary).toMatchObject({ failed: 0, warnings: 1 })
    expect(summaryLine(report.summary)).toMatch(/, 1 warning$/)
    // At the well-known path too: a pass.
    const both = started(await startBrokenAgent({ faults: [] }))
    const atBoth = await runCheck(both.baseUrl, { only: ["card.served"], cardUrl: `${both.baseUrl}${WELL_KNOWN_CARD}` })
    expect(statusesOf(atBoth, "card.served")).toEqual(["passed"])
  })

  it("a v0.3 card is judged by v0.3's sections, and not by v1.0's caching advice", async () => {
    const agent = started(await startBrokenAgent({ faults: ["no Cache-Control or ETag on the card"], v03Card: true }))
    const report = await runCheck(agent.baseUrl, { only: ["card"] })
    expect(report.results.map((r) => [r.id, r.status, r.spec])).toEqual([
      ["card.served", "passed", "A2A v0.3 §5.3"],
      ["card.valid", "passed", "A2A v0.3 §5.5"],
      ["card.interfaces", "passed", "A2A v0.3 §5.6"],
      ["card.caching", "skipped", null],
      ["card.interface-hosts", "passed", null]
    ])
  })

  it("without a card, one failure names the root cause and every other check is skipped with it", async () => {
    const agent = started(await startBrokenAgent({ noCard: true }))
    const report = await runCheck(agent.baseUrl)
    expect(idsWith(report, "failed")).toEqual(["card.served"])
    const cause = resultsOf(report, "card.served")[0]?.detail ?? ""
    expect(cause).toMatch(/^no card: No agent card found for .*\/\.well-known\/agent-card\.json/)
    const others = report.results.filter((r) => r.id !== "card.served")
    expect(others.length).toBe(CHECKS.length - 1)
    expect(new Set(others.map((r) => `${r.status}: ${r.detail}`))).toEqual(new Set([`skipped: ${cause}`]))
    // Even when the card checks were not asked for.
    const tasksOnly = await runCheck(agent.baseUrl, { only: ["tasks"] })
    expect(idsWith(tasksOnly, "failed")).toEqual(["card.served"])
    expect(tasksOnly.results.filter((r) => r.group === "tasks").every((r) => r.status === "skipped")).toBe(true)
  })

  it("reports a card without interfaces, and runs no interface check", async () => {
    const agent = started(await startBrokenAgent({ withInterfaces: false }))
    const report = await runCheck(agent.baseUrl)
    expect(resultsOf(report, "card.interfaces")[0]?.status).toBe("failed")
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
    expect([...new Set(report.results.map((r) => r.id))]).toEqual([
      "card.served",
      "card.valid",
      "card.interfaces",
      "card.interface-hosts",
      "tasks.list"
    ])
    const refused = await Effect.runPromise(Effect.either(Effect.tryPromise(() => runCheck(agent.baseUrl, { only: ["nonsense"] }))))
    expect(Either.isLeft(refused) && String(refused.left.error)).toMatch(/Unknown check group or id: nonsense/)
  })
})

describe("relay check against an agent that echoes the credentials it was sent", () => {
  const TOKEN = "echoed-bearer-token-0123456789"

  /**
   * A v1.0 JSON-RPC agent that answers every request with an error quoting its Authorization header;
   * `tokenAt`: where in the answer's text the token starts (padded before it).
   */
  const startEchoingAgent = async (tokenAt?: number) => {
    const server = http.createServer((req, res) => {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
      if (req.method === "GET" && req.url === WELL_KNOWN_CARD) {
        return sendJson(res, 200, {
          name: "Echoing agent",
          description: "Quotes the request's headers back",
          version: "1.0.0",
          supportedInterfaces: [{ url: `${base}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
          capabilities: {},
          defaultInputModes: ["text/plain"],
          defaultOutputModes: ["text/plain"],
          skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }]
        })
      }
      void readBodyText(req).then((body) => {
        const id = (tryParseJson(body) as { id?: unknown } | undefined)?.id ?? null
        const quoted = `you sent ${req.headers.authorization ?? "nothing"}`
        const before = JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: "" } }).length - 3
        const pad = tokenAt === undefined ? "" : "x".repeat(Math.max(0, tokenAt - before - "you sent Bearer ".length))
        sendJson(res, 200, { jsonrpc: "2.0", id, error: { code: -32603, message: `${pad}${quoted}` } })
      })
    })
    const baseUrl = await listenOnLoopback(server)
    return { baseUrl, close: () => closeServer(server) }
  }

  it("shows the token masked in every detail, never whole", async () => {
    const agent = started(await startEchoingAgent())
    const report = await runCheck(agent.baseUrl, {
      bearerToken: TOKEN,
      protocols: ["1.0"],
      bindings: ["JSONRPC"],
      only: ["transport", "messaging"]
    })
    const text = JSON.stringify(report)
    expect(text).not.toContain(TOKEN)
    // The agent's words are still quoted, the token as relay auth show shows it.
    expect(report.results.some((result) => result.detail.includes("you sent Bearer …6789"))).toBe(true)
  }, 30_000)

  it("masks the token before a detail is cut short, so a cut through it shows no part of it", async () => {
    // The token straddles the cut of an answer's excerpt (at 200 characters).
    const agent = started(await startEchoingAgent(190))
    const report = await runCheck(agent.baseUrl, {
      bearerToken: TOKEN,
      protocols: ["1.0"],
      bindings: ["JSONRPC"],
      only: ["transport", "messaging"]
    })
    const details = report.results.map((result) => result.detail)
    expect(details.some((detail) => detail.includes("xxxxxxxxxx"))).toBe(true)
    expect(JSON.stringify(details)).not.toContain(TOKEN.slice(0, 6))
  }, 30_000)
})
