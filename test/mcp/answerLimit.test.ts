/**
 * relay mcp is bounded like the terminal: send_message and wait_for_task against an agent whose
 * answer never ends stop at the server's limit for a whole answer (`relay mcp --max-answer-bytes`,
 * RELAY_MAX_ANSWER_BYTES) and answer isError with response_too_large, carrying what was kept as
 * structured content (`truncated`, `kept_bytes`, `limit_bytes`) that matches the tool's schema.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { ERROR_META_KEY } from "../../src/mcp/toolResult.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type Progress, startEndlessAgent } from "../peers/hugeAnswers.js"
import type { Stub } from "../services/a2aClientHarness.js"

const LIMIT = 100_000
const home = tempHome()
const progress: Progress = { written: 0, cutShort: false }
let runtime: AppRuntime
let mcp: Client
let agent: Stub

beforeAll(async () => {
  agent = await startEndlessAgent(5000, progress)
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime, { maxAnswerBytes: LIMIT }))
})

afterAll(async () => {
  await mcp?.close()
  await agent?.close()
  await runtime?.dispose()
  home.cleanup()
})

describe.each([
  ["send_message", { message: "hi", stream: true }],
  ["send_message", { message: "hi" }],
  ["wait_for_task", { task_id: "endless" }]
])("%s %j on an answer without end", (tool, args) => {
  it("answers isError response_too_large with what was kept, marked truncated", async () => {
    const result = await callTool(mcp, tool, { agent_url: agent.baseUrl, ...args })
    expect(result.isError).toBe(true)
    expect(result._meta?.[ERROR_META_KEY]).toMatchObject({ code: "response_too_large" })
    expect(textOf(result)).toContain(`${LIMIT}-byte limit`)
    expect(textOf(result)).toContain("RELAY_MAX_ANSWER_BYTES")
    const kept = result.structuredContent as Record<string, unknown>
    expect(kept).toMatchObject({ task_id: "endless", state: "working", truncated: true, limit_bytes: LIMIT })
    expect(kept["kept_bytes"]).toBeLessThanOrEqual(LIMIT)
    expect(String(kept["text"]).length).toBeGreaterThan(LIMIT - 10_000)
  })
})
