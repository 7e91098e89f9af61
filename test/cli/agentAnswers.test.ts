/**
 * What the terminal shows of answers that are odd but not wrong, or wrong: the built CLI
 * (`npm run build` first) against a stub agent writing in the Python SDK's style. A task state
 * A2A does not define is shown as `unknown (X)` with a warning; an answer relay cannot read is
 * named by its field and the agent, its raw text only with --verbose; never a decode tree.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { startPythonStyleAgent, TASK_ID } from "../peers/pythonStyleAgent.js"
import type { Stub } from "../services/a2aClientHarness.js"

const home = tempHome()
let agent: Stub

beforeAll(async () => {
  agent = await startPythonStyleAgent()
})

afterAll(async () => {
  await agent?.close()
  home.cleanup()
})

const relay = (...args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir })

const DECODE_TREE = /└─|├─|<->|\bExpected\b/

describe("answers from an agent in the Python SDK's style", () => {
  it("reads a task written in proto field names and enum numbers", async () => {
    const result = await relay("task", "get", "--url", agent.baseUrl, TASK_ID)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("input-required")
    expect(result.stdout).toContain("Booking a trip")
  })

  it("shows a state A2A does not define as unknown (X), with a warning, and succeeds", async () => {
    const result = await relay("task", "get", "--url", agent.baseUrl, "weird")
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("unknown (TASK_STATE_WEIRD)")
    expect(result.stderr).toContain("sent task state \"TASK_STATE_WEIRD\", which A2A does not define")
    expect(`${result.stdout}${result.stderr}`).not.toMatch(DECODE_TREE)
    const json = await relay("task", "get", "--url", agent.baseUrl, "weird", "--json")
    expect(JSON.parse(json.stdout)).toMatchObject({ task_id: "weird", state: "unknown (TASK_STATE_WEIRD)" })
  })

  it("message send to an agent that answers a state A2A does not define ends at once, showing it as unknown (X)", async () => {
    const result = await relay("message", "send", "--url", agent.baseUrl, "weird")
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("unknown (TASK_STATE_WEIRD)")
    expect(`${result.stdout}${result.stderr}`).not.toMatch(DECODE_TREE)
  })

  it("names the field and the agent of an answer it cannot read; the raw answer only with --verbose", async () => {
    const result = await relay("task", "get", "--url", agent.baseUrl, "broken")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(
      `The agent at ${agent.baseUrl}/rpc sent an invalid response: status.message.parts[0] needs exactly one of`
    )
    expect(result.stderr).not.toContain("m-broken")
    expect(result.stderr).not.toMatch(DECODE_TREE)
    const verbose = await relay("task", "get", "--url", agent.baseUrl, "broken", "--verbose")
    expect(verbose.code).toBe(1)
    expect(verbose.stderr).toContain("\"message_id\":\"m-broken\"")
  })
})
