// The client reads answers and stream events as agents of other SDK families write them (proto
// field names, enum numbers), in all four dialects; tolerates enum values A2A does not define;
// and names the field and the agent when an answer cannot be read, keeping the raw answer for
// --verbose.
import { describe, expect, it } from "@effect/vitest"
import { Effect, Logger, LogLevel } from "effect"
import { afterAll, beforeAll } from "vitest"
import type { Binding } from "../../src/a2a/dialects.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { taskView } from "../../src/domain/results.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { CONFIG, CONFIG_ID, EVENTS, startPythonStyleAgent, TASK, TASK_ID } from "../peers/pythonStyleAgent.js"
import { collect, DIALECTS, sendRequest, type Stub, withCapturedLogs, withClient } from "./a2aClientHarness.js"

let agent: Stub

beforeAll(async () => {
  agent = await startPythonStyleAgent()
})

afterAll(async () => {
  await agent?.close()
})

const targetOf = (binding: Binding, protocol: ProtocolVersion): Target => ({ agentUrl: agentUrlOf(agent.baseUrl), binding, protocol })

describe.each(DIALECTS)("answers in proto field names and enum numbers, %s %s", (binding, protocol) => {
  const target = () => targetOf(binding, protocol)

  it.live("reads sends, tasks and cancels", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      expect(yield* a2a.send(target(), sendRequest("Book a trip"))).toEqual({ task: TASK })
      expect(yield* a2a.getTask(target(), { id: TASK_ID })).toEqual(TASK)
      expect(yield* a2a.cancelTask(target(), { id: TASK_ID })).toEqual(TASK)
      if (protocol === "1.0") expect((yield* a2a.listTasks(target(), {})).tasks).toEqual([TASK])
    })))

  it.live("reads every SSE event", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      expect(yield* collect(a2a.stream(target(), sendRequest("Book a trip")))).toEqual(EVENTS)
    })))

  it.live("reads push configs", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      expect(yield* a2a.createPushConfig(target(), CONFIG)).toEqual(CONFIG)
      expect(yield* a2a.getPushConfig(target(), { taskId: TASK_ID, id: CONFIG_ID })).toEqual(CONFIG)
      expect(yield* a2a.listPushConfigs(target(), { taskId: TASK_ID })).toEqual([CONFIG])
    })))
})

describe("enum values A2A does not define", () => {
  it.live.each(DIALECTS)(
    "are shown as unknown with a warning, never a failed call (%s %s)",
    ([binding, protocol]) =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const { result: task, logs } = yield* withCapturedLogs(a2a.getTask(targetOf(binding, protocol), { id: "weird" }))
        expect(task.status).toMatchObject({ state: "TASK_STATE_UNSPECIFIED", unknownState: "TASK_STATE_WEIRD" })
        expect(task.status.message?.role).toBe("ROLE_UNSPECIFIED")
        expect(taskView(task).state).toBe("unknown (TASK_STATE_WEIRD)")
        const warnings = logs.filter((line) => line.startsWith("WARN"))
        expect(warnings).toEqual([
          expect.stringContaining(`sent task state "TASK_STATE_WEIRD", which A2A does not define; relay shows it as unknown`),
          expect.stringContaining("a message role other than user or agent")
        ])
        expect(warnings[0]).toContain(agent.baseUrl)
        // Once per agent and value.
        const again = yield* withCapturedLogs(a2a.getTask(targetOf(binding, protocol), { id: "weird" }))
        expect(again.logs.filter((line) => line.startsWith("WARN"))).toEqual([])
      }))
  )

  it.live("in a send result too", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result: response, logs } = yield* withCapturedLogs(a2a.send(targetOf("JSONRPC", "1.0"), sendRequest("weird")))
      expect("task" in response && taskView(response.task).state).toBe("unknown (TASK_STATE_WEIRD)")
      expect(logs.filter((line) => line.startsWith("WARN"))).toHaveLength(2)
    })))
})

describe("an answer the client cannot read", () => {
  it.live("names the field and the agent, and keeps the raw answer for the debug log", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const failing = Effect.flip(a2a.getTask(targetOf("JSONRPC", "1.0"), { id: "broken" }))
      const { result: error, logs } = yield* withCapturedLogs(Logger.withMinimumLogLevel(failing, LogLevel.Debug))
      expect(error).toMatchObject({ _tag: "InvalidResponse", url: `${agent.baseUrl}/rpc` })
      expect(error.message).toBe(
        `The agent at ${agent.baseUrl}/rpc sent an invalid response: status.message.parts[0] needs exactly one of text, raw, url or data, but has none`
      )
      expect(error.message).not.toContain("m-broken")
      expect(logs.filter((line) => line.startsWith("DEBUG")).join("\n")).toContain("\"message_id\":\"m-broken\"")
    })))
})
