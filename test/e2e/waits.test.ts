/**
 * Limits are limits: MCP `timeout_seconds` (and the server's default wait) and the terminal's
 * `--wait` bound the whole call, connection and discovery included, against an agent that never
 * answers (not even its card) and one that is slow (a task that works for 3 s).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { Duration, ManagedRuntime } from "effect"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { SLOW_TASK_MS, withBehaviour } from "../peers/behaviours.js"
import { closeServer, listenOnLoopback } from "../peers/httpUtil.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

/** How far past its limit a bounded call may end (issue: "within 1 s of the limit"). */
const SLACK_MS = 1000
/**
 * A spawned CLI also pays for its start-up, which a busy machine stretches unevenly; the
 * in-process MCP tests above hold the 1 s bound itself.
 */
const PROCESS_SLACK_MS = 2 * SLACK_MS

const home = tempHome()
let runtime: AppRuntime
let mcp: Client
let shortDefault: Client
let silent: http.Server
let silentUrl: string
let slow: SdkAgentHandle
/** What starting the CLI costs on this machine, so spawned timings measure relay's own wait. */
let startupMs: number

const timed = async <A>(run: () => Promise<A>): Promise<{ readonly value: A; readonly ms: number }> => {
  const started = performance.now()
  const value = await run()
  return { value, ms: performance.now() - started }
}

beforeAll(async () => {
  // Accepts every request and never answers it.
  silent = http.createServer(() => {})
  silentUrl = await listenOnLoopback(silent)
  slow = await startSdkAgent()
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime))
  shortDefault = await connectTools(contextFor(runtime, { defaultWait: Duration.seconds(2) }))
  // The slower of two starts: a busy machine makes start-up vary more than the wait itself.
  const starts = [
    await timed(() => runRelay(["--version"], { stateDir: home.stateDir })),
    await timed(() => runRelay(["--version"], { stateDir: home.stateDir }))
  ]
  startupMs = Math.max(...starts.map((start) => start.ms))
})

afterAll(async () => {
  await Promise.allSettled([mcp?.close(), shortDefault?.close()])
  await Promise.allSettled([closeServer(silent), slow?.close()])
  await runtime?.dispose()
  home.cleanup()
})

const errorCodeOf = (result: CallToolResult) => (result._meta?.["a2a-relay/error"] as { code: string } | undefined)?.code

describe("MCP waits", () => {
  it("timeout_seconds bounds a send to an agent that never answers, discovery included", async () => {
    const { value, ms } = await timed(() => callTool(mcp, "send_message", { agent_url: silentUrl, message: "hello?", timeout_seconds: 2 }))
    expect(value.isError, textOf(value)).toBe(true)
    expect(errorCodeOf(value)).toBe("timeout")
    expect(textOf(value)).toMatch(/did not answer within 2s/)
    expect(ms).toBeGreaterThanOrEqual(2000)
    expect(ms).toBeLessThan(2000 + SLACK_MS)
  })

  it("the server's default wait bounds a call that gives no timeout_seconds", async () => {
    const { value, ms } = await timed(() => callTool(shortDefault, "send_message", { agent_url: silentUrl, message: "hello?" }))
    expect(errorCodeOf(value)).toBe("timeout")
    expect(ms).toBeGreaterThanOrEqual(2000)
    expect(ms).toBeLessThan(2000 + SLACK_MS)
  })

  it("a slow task comes back as still working at the limit, pointing at wait_for_task", async () => {
    const { value, ms } = await timed(() =>
      callTool(mcp, "send_message", { agent_url: slow.baseUrl, message: withBehaviour("slow-cancellable", "slow"), timeout_seconds: 1 })
    )
    expect(value.isError ?? false, textOf(value)).toBe(false)
    const result = value.structuredContent as Record<string, unknown>
    expect(result).toMatchObject({ state: "working" })
    expect(String(result["next_step"])).toContain("wait_for_task")
    expect(ms).toBeGreaterThanOrEqual(1000)
    expect(ms).toBeLessThan(Math.min(1000 + SLACK_MS, SLOW_TASK_MS))

    const waited = await timed(() =>
      callTool(mcp, "wait_for_task", { agent_url: slow.baseUrl, task_id: result["task_id"], timeout_seconds: 1 })
    )
    expect((waited.value.structuredContent as Record<string, unknown>)["state"]).toMatch(/working|completed/)
    expect(waited.ms).toBeLessThan(1000 + SLACK_MS)
  })

  it("wait_for_task is bounded against an agent that never answers", async () => {
    const { value, ms } = await timed(() => callTool(mcp, "wait_for_task", { agent_url: silentUrl, task_id: "t-1", timeout_seconds: 1 }))
    expect(errorCodeOf(value)).toBe("timeout")
    expect(ms).toBeLessThan(1000 + SLACK_MS)
  })
})

describe("terminal --wait", () => {
  it("bounds message send against an agent that never answers: an error, exit 1", async () => {
    const { value, ms } = await timed(() =>
      runRelay(["message", "send", "--url", silentUrl, "--wait", "2", "hello?"], { stateDir: home.stateDir })
    )
    expect(value.code).toBe(1)
    expect(value.stderr).toMatch(/did not answer within 2s/)
    expect(ms - startupMs).toBeLessThan(2000 + PROCESS_SLACK_MS)
    expect(ms).toBeGreaterThanOrEqual(2000)
  })

  it("leaves a slow task running and says how to check on it", async () => {
    const { value, ms } = await timed(() =>
      runRelay(["message", "send", "--url", slow.baseUrl, "--wait", "1", withBehaviour("slow-cancellable", "slow")], {
        stateDir: home.stateDir
      })
    )
    // A wait that ran out is a failure (README: Exit codes), with the handle to check on the task.
    expect(value.code, value.stderr).toBe(1)
    expect(value.stdout).toMatch(/State\s+working/)
    const taskId = /Task ID\s+(\S+)/.exec(value.stdout)?.[1]
    expect(taskId).toBeDefined()
    expect(value.stdout).toContain(`relay task get --url ${slow.baseUrl}`)
    expect(value.stdout).toContain(`relay task resubscribe --url ${slow.baseUrl}`)
    expect(value.stdout).toContain(taskId)
    expect(ms - startupMs).toBeLessThan(1000 + PROCESS_SLACK_MS)
  })

  it("refuses a --wait that is not a positive number of seconds", async () => {
    const result = await runRelay(["message", "send", "--url", slow.baseUrl, "--wait", "0", "hi"], { stateDir: home.stateDir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--wait")
  })
})
