// The MCP tool check_agent: the same program as `relay check`, with progress per group and the
// report as structured content (the schema of `relay check --json`).
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CHECK_REPORT_SCHEMA_ID, type CheckReport } from "../../src/domain/conformance.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"
import { type BrokenAgent, startBrokenAgent } from "./brokenAgent.js"

const home = tempHome()
let runtime: AppRuntime
let client: Client
let agent: AgentHandle
let broken: BrokenAgent
beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  client = await connectTools(contextFor(runtime))
  agent = await startAgent()
  broken = await startBrokenAgent()
})
afterAll(async () => {
  await client.close()
  await agent.close()
  await broken.close()
  await runtime.dispose()
  home.cleanup()
})

describe("check_agent", () => {
  it("reports progress per group and returns the report as structured content", async () => {
    const messages: Array<string> = []
    const result = await callTool(client, "check_agent", { agent_url: agent.baseUrl, protocol: "1.0", binding: "jsonrpc" }, {
      onprogress: (progress) => messages.push(progress.message ?? ""),
      timeoutMs: 30_000
    })
    expect(result.isError ?? false).toBe(false)
    const report = result.structuredContent as unknown as CheckReport
    expect(report.schema).toBe(CHECK_REPORT_SCHEMA_ID)
    expect(report.interfaces.map((i) => `${i.protocol}/${i.binding}`)).toEqual(["1.0/jsonrpc"])
    expect(report.summary.failed).toBe(0)
    expect(textOf(result).split("\n").at(-1)).toMatch(/^\d+ passed, 0 failed, \d+ skipped$/)
    for (const group of ["card", "transport (1.0 jsonrpc)", "messaging (1.0 jsonrpc)", "tasks (1.0 jsonrpc)", "streaming (1.0 jsonrpc)"]) {
      expect(messages.some((m) => m.startsWith(`${group}: `)), group).toBe(true)
    }
  }, 40_000)

  it("names the failed checks in its text, and refuses unknown groups with a usage error", async () => {
    const result = await callTool(client, "check_agent", { agent_url: broken.baseUrl, only: ["transport"] }, { timeoutMs: 30_000 })
    expect(textOf(result)).toMatch(/✘ transport\.parse-error \(1\.0 jsonrpc\)/)
    const refused = await callTool(client, "check_agent", { agent_url: broken.baseUrl, only: ["nonsense"] })
    expect(refused.isError).toBe(true)
    expect(textOf(refused)).toMatch(/Unknown check group or id: nonsense/)
  }, 40_000)
})
