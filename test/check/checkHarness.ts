// Runs the conformance program in process against a URL, with the real client and raw HTTP.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import type { CheckReport, CheckResult } from "../../src/domain/conformance.js"
import { checkAgent, type CheckAgentInput, type CheckPlanInput, planChecks } from "../../src/programs/check/checkAgent.js"
import { checkReceiverLayer } from "../../src/servers/webhook/checkReceiver.js"
import * as RawGrpc from "../../src/services/RawGrpc.js"
import * as RawHttp from "../../src/services/RawHttp.js"
import { ProgramLayer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const CheckLayer = Layer.mergeAll(
  ProgramLayer,
  RawHttp.layer.pipe(Layer.provide(NodeHttpClient.layerUndici)),
  RawGrpc.layer,
  checkReceiverLayer
)

export const runCheck = (agentUrl: string, input: Partial<CheckAgentInput> = {}): Promise<CheckReport> =>
  Effect.runPromise(
    checkAgent({
      agentUrl: agentUrlOf(agentUrl),
      protocols: ["1.0", "0.3"],
      bindings: ["JSONRPC", "HTTP+JSON"],
      only: [],
      skip: [],
      timeoutSeconds: 5,
      ...input
    }).pipe(
      Effect.provide(CheckLayer)
    )
  )

/** The dry run of runCheck: the checks it would run against the URL, none sent. */
export const planCheck = (agentUrl: string, input: Partial<CheckPlanInput> = {}): Promise<CheckReport> =>
  Effect.runPromise(planChecks({ agentUrl, only: [], skip: [], ...input }))

/** `id@protocol/binding` (or `id` for agent checks) of every result with this status. */
export const idsWith = (report: CheckReport, status: CheckResult["status"]): ReadonlyArray<string> =>
  report.results.filter((r) => r.status === status).map((r) =>
    r.interface === null ? r.id : `${r.id}@${r.interface.protocol}/${r.interface.binding}`
  )

/** The results of one check id, on every interface it ran. */
export const resultsOf = (report: CheckReport, id: string) => report.results.filter((r) => r.id === id)

/** `id@protocol/binding` of every failed MUST check. */
export const failedMusts = (report: CheckReport) =>
  idsWith({ ...report, results: report.results.filter((r) => r.severity === "must") }, "failed")
