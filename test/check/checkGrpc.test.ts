// `relay check` over gRPC: relay's own agent passes every must-check on its gRPC interfaces (both
// generations, beside JSON-RPC and REST), and the gRPC checks fail against a gRPC door that gets
// the status codes, the ErrorInfo, the empty a2a-version or the stream's end wrong.
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"
import { failedMusts, idsWith, resultsOf, runCheck } from "./checkHarness.js"

let agent: AgentHandle
beforeAll(async () => {
  agent = await startAgent({ model: "echo", grpc: {} })
})
afterAll(() => agent.close())

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
  }, 30_000)
})
