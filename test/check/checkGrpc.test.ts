// `relay check` over gRPC: relay's own agent passes every must-check on its gRPC interfaces (both
// generations, beside JSON-RPC and REST), and the gRPC checks fail against a gRPC door that gets
// the status codes, the ErrorInfo, the empty a2a-version or the stream's end wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CheckReport } from "../../src/domain/conformance.js"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"
import { startBrokenGrpcAgent } from "./brokenGrpcAgent.js"
import { failedMusts, idsWith, resultsOf, runCheck } from "./checkHarness.js"

let agent: AgentHandle
beforeAll(async () => {
  agent = await startAgent({ model: "echo", grpc: {} })
})
const home = tempHome()
afterAll(async () => {
  await agent.close()
  home.cleanup()
})

describe("relay check against relay's own agent over gRPC", () => {
  it("passes every must-check on every interface, the gRPC ones included", async () => {
    const report = await runCheck(agent.baseUrl, { bindings: ["JSONRPC", "HTTP+JSON", "GRPC"] })
    expect(report.interfaces.map((i) => `${i.protocol}/${i.binding}`).sort()).toEqual(
      ["0.3/grpc", "0.3/jsonrpc", "0.3/rest", "1.0/grpc", "1.0/jsonrpc", "1.0/rest"]
    )
    expect(failedMusts(report)).toEqual([])
    expect(idsWith(report, "failed")).toEqual([])
    // The gRPC checks ran on both gRPC interfaces, and the shared ones over gRPC too.
    for (const id of ["transport.grpc-error-status", "transport.grpc-version-empty", "streaming.first-event", "streaming.closes"]) {
      const grpc = resultsOf(report, id).filter((r) => r.interface?.binding === "grpc")
      expect(grpc.map((r) => `${r.interface?.protocol} ${r.status}`), id).toEqual(["1.0 passed", "0.3 passed"])
    }
    expect(resultsOf(report, "transport.grpc-error-status")[0]?.detail).toMatch(
      /CancelTask of a task in TASK_STATE_COMPLETED: FAILED_PRECONDITION TASK_NOT_CANCELABLE/
    )
    expect(resultsOf(report, "equivalence.task-visible")[0]?.detail).toMatch(/seen over 6 interfaces/)
    expect(resultsOf(report, "equivalence.same-answers")[0]?.detail).toMatch(/answered alike over 6 interfaces/)
  }, 30_000)
})

describe("relay check --binding grpc (dist/main.cjs)", () => {
  it("loads gRPC as the bundle has it and exits 0: every gRPC check passes on both generations", async () => {
    const result = await runRelay(["check", agent.baseUrl, "--binding", "grpc", "--json"], { stateDir: home.stateDir, timeoutMs: 30_000 })
    expect(result.code, result.stderr).toBe(0)
    const report = JSON.parse(result.stdout) as CheckReport
    expect(report.interfaces.map((i) => `${i.protocol}/${i.binding}`)).toEqual(["1.0/grpc", "0.3/grpc"])
    expect(idsWith(report, "failed")).toEqual([])
    expect(resultsOf(report, "transport.grpc-error-status").map((r) => r.status)).toEqual(["passed", "passed"])
  }, 40_000)
})

describe("relay check against a gRPC agent that gets gRPC's rules wrong", () => {
  it("fails the status codes, the ErrorInfo, the empty a2a-version and the stream's end", async () => {
    const broken = await startBrokenGrpcAgent()
    try {
      const report = await runCheck(broken.baseUrl, {
        bindings: ["GRPC"],
        only: ["transport.grpc-error-status", "transport.grpc-version-empty", "streaming.closes", "streaming.first-event"],
        timeoutSeconds: 2
      })
      expect(report.interfaces.map((i) => `${i.protocol}/${i.binding}`)).toEqual(["1.0/grpc"])
      expect(idsWith(report, "failed")).toEqual([
        "transport.grpc-error-status@1.0/grpc",
        "transport.grpc-version-empty@1.0/grpc",
        "streaming.first-event@1.0/grpc",
        "streaming.closes@1.0/grpc"
      ])
      const detail = (id: string) => resultsOf(report, id)[0]?.detail ?? ""
      expect(detail("transport.grpc-error-status")).toContain("GetTask of an unknown task: no google.rpc.ErrorInfo")
      expect(detail("transport.grpc-error-status")).toMatch(
        /CancelTask of a task in TASK_STATE_COMPLETED: not FAILED_PRECONDITION \(9\) but gRPC status 13/
      )
      expect(detail("transport.grpc-error-status")).toMatch(/a2a-version 99.0: not FAILED_PRECONDITION/)
      expect(detail("transport.grpc-version-empty")).toMatch(/without a2a-version: not NOT_FOUND \(5\) but gRPC status 3/)
      expect(detail("streaming.closes")).toMatch(/did not close within 2s/)
      // Over JSON-RPC the same task has an artifact that gRPC leaves out.
      const across = await runCheck(broken.baseUrl, { bindings: ["JSONRPC", "GRPC"], only: ["equivalence"], timeoutSeconds: 2 })
      expect(idsWith(across, "failed")).toEqual(["equivalence.same-answers"])
      expect(resultsOf(across, "equivalence.same-answers")[0]?.detail).toMatch(/1\.0 grpc .*"artifacts":\[\]/)
    } finally {
      await broken.close()
    }
  }, 20_000)
})
