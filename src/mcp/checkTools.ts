/**
 * check_agent: relay check's conformance run as a tool, with its groups reported as progress. The
 * checks and their push receiver load on the first call, not with the server.
 */
import { Duration, Effect } from "effect"
import * as z from "zod"
import type { Binding } from "../a2a/dialects.js"
import { CHECK_GROUPS, type CheckReport, summaryLine } from "../domain/conformance.js"
import { withProgressMessages } from "./progress.js"
import { checkReportShape } from "./resultShapes.js"
import { contacting, loadedOnFirstUse, type ToolKit, withPrograms } from "./toolKit.js"

const BINDINGS: Readonly<Record<"jsonrpc" | "rest" | "grpc", Binding>> = { jsonrpc: "JSONRPC", rest: "HTTP+JSON", grpc: "GRPC" }

/** The whole check_agent call waits at most this long. */
const CHECK_WAIT_LIMIT = Duration.minutes(3)

const summarizeCheck = (report: CheckReport) =>
  [
    ...report.results.filter((r) => r.status === "failed" || r.status === "warning").slice(0, 10).map((r) =>
      `${r.status === "failed" ? "✘" : "!"} ${r.id}${r.interface ? ` (${r.interface.protocol} ${r.interface.binding})` : ""}: ${r.detail}`
    ),
    summaryLine(report.summary)
  ].join("\n")

export const registerCheckTools = ({ server, context, handle, atAgent, heartbeat }: ToolKit) => {
  const checkModules = loadedOnFirstUse(() => Promise.all([import("../programs/check/checkAgent.js"), context.loadCheckRun()]))

  server.registerTool("check_agent", {
    title: "Check an agent's A2A conformance",
    description: "Run relay's conformance checks against an A2A agent (card, transport, messaging, tasks, streaming, push, " +
      "auth, equivalence; both protocol generations and every binding the card declares: JSON-RPC, HTTP+JSON, gRPC) and return every check's " +
      "verdict with its spec section. Creates a few tasks on the agent (listed in tasks_created). Use when building or " +
      "debugging an agent, or before relying on one. Next: send_message, or fix the failed checks and run it again.",
    inputSchema: {
      ...contacting,
      protocol: z.enum(["1.0", "0.3", "all"]).optional().describe("Protocol generations to check (default all)"),
      binding: z.enum(["jsonrpc", "rest", "grpc", "all"]).optional().describe("Bindings to check (default all the card declares)"),
      only: z.array(z.string()).optional().describe(`Only these groups (${CHECK_GROUPS.join(", ")}) or check ids`),
      skip: z.array(z.string()).optional().describe("Leave out these groups or check ids"),
      timeout_seconds: z.number().int().min(1).max(60).optional().describe("Seconds each request may take (default 10)"),
      dry_run: z.boolean().optional().describe("List the checks only; send nothing")
    },
    outputSchema: checkReportShape,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  }, (args, extra) =>
    handle(
      extra,
      args,
      // The checks and their push receiver load on the first check_agent call, not with the server.
      withPrograms(({ RequestTimeout }) =>
        Effect.flatMap(checkModules, ([{ checkAgent, planChecks }, checkRunLayer]) =>
          withProgressMessages(extra, "Checking the agent", (say) => {
            const plan = { agentUrl: args.agent_url, only: args.only ?? [], skip: args.skip ?? [] }
            // A dry run names the URL as given and sends nothing; a real run decodes it here, once.
            return args.dry_run === true ? planChecks(plan) : atAgent(args, (access) =>
              checkAgent({
                ...plan,
                ...access,
                protocols: args.protocol === undefined || args.protocol === "all" ? ["1.0", "0.3"] : [args.protocol],
                bindings: args.binding === undefined || args.binding === "all"
                  ? Object.values(BINDINGS)
                  : [BINDINGS[args.binding]],
                timeoutSeconds: args.timeout_seconds,
                onGroupDone: (group, results) =>
                  say(
                    `${group}${results[0]?.interface ? ` (${results[0].interface.protocol} ${results[0].interface.binding})` : ""}: ` +
                      `${
                        results.filter((r) => r.status === "passed").length
                      }/${results.length} passed`
                  )
              }))
          }, heartbeat).pipe(
            // As in relay check: push.delivery's receiver listens on loopback for the length of the run.
            Effect.provide(checkRunLayer)
          )).pipe(
            Effect.timeoutFail({
              duration: CHECK_WAIT_LIMIT,
              onTimeout: () => new RequestTimeout({ url: args.agent_url, after: Duration.format(CHECK_WAIT_LIMIT), limit: "wait" })
            })
          )
      ),
      summarizeCheck
    ))
}
