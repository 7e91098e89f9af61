// Our own A2aClient against relay's agent server, in all six dialects (JSON-RPC, HTTP+JSON and
// gRPC, each at 1.0 and 0.3): the same round trips the SDK clients make.
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import type { Binding } from "../../src/a2a/dialects.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { resultText } from "../../src/a2a/text.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { collect, foldEvents, kindsOf, sendRequest, taskOf, withClient } from "../services/a2aClientHarness.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"

let agent: AgentHandle
/** The same server with --auth: the only kind that has an extended card. */
let secured: AgentHandle
const KEY = "client-test-key-0123"

beforeAll(async () => {
  ;[agent, secured] = await Promise.all([startAgent({ grpc: {} }), startAgent({ key: KEY, grpc: {} })])
})

afterAll(async () => {
  await Promise.all([agent?.close(), secured?.close()])
})

const DIALECTS: ReadonlyArray<readonly [Binding, ProtocolVersion]> = [
  ["JSONRPC", "1.0"],
  ["HTTP+JSON", "1.0"],
  ["JSONRPC", "0.3"],
  ["HTTP+JSON", "0.3"],
  ["GRPC", "1.0"],
  ["GRPC", "0.3"]
]

describe.each(DIALECTS)("A2aClient over %s at %s", (binding, protocol) => {
  const target = (): Target => ({ agentUrl: agentUrlOf(agent.baseUrl), binding, protocol })

  it.live("picks the interface it was asked for", () =>
    withClient(Effect.gen(function*() {
      const endpoint = yield* (yield* A2aClient).endpoint(target())
      expect([endpoint.binding, endpoint.version]).toEqual([binding, protocol])
    })))

  it.live("sends, then gets the task with its history", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const task = taskOf(yield* a2a.send(target(), sendRequest("round trip")))
      expect(task.status.state).toBe("TASK_STATE_COMPLETED")
      expect(resultText(task)).toBe("round trip")
      const got = yield* a2a.getTask(target(), { id: task.id, historyLength: 1 })
      expect(got.history?.map((message) => message.role)).toEqual(["ROLE_USER"])
      expect(resultText(got)).toBe("round trip")
    })))

  it.live("streams task, working, chunks and completed", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const events = yield* collect(a2a.stream(target(), sendRequest("streamed words")))
      expect(kindsOf(events)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"])
      const task = foldEvents(events)
      expect(task?.status.state).toBe("TASK_STATE_COMPLETED")
      expect(resultText(task!)).toBe("streamed words")
    })))

  it.live("cancels a running task and resubscribes to one", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const running = taskOf(
        yield* a2a.send(target(), sendRequest("slow: a b c d e f g h", { configuration: { returnImmediately: true } }))
      )
      const canceled = yield* a2a.cancelTask(target(), { id: running.id })
      expect(canceled.status.state).toBe("TASK_STATE_CANCELED")

      const slow = taskOf(yield* a2a.send(target(), sendRequest("slow: w x y z", { configuration: { returnImmediately: true } })))
      const events = yield* collect(a2a.subscribe(target(), { id: slow.id }))
      expect(kindsOf(events)[0]).toBe("task")
      expect(foldEvents(events)?.status.state).toBe("TASK_STATE_COMPLETED")
    })))

  it.live("creates, gets, lists and deletes a push config", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const task = taskOf(yield* a2a.send(target(), sendRequest("push")))
      const created = yield* a2a.createPushConfig(target(), { taskId: task.id, url: "http://127.0.0.1:9/hook", token: "t0ken" })
      expect(created.id).toEqual(expect.any(String))
      const got = yield* a2a.getPushConfig(target(), { taskId: task.id, id: created.id! })
      expect(got.url).toBe("http://127.0.0.1:9/hook")
      expect((yield* a2a.listPushConfigs(target(), { taskId: task.id })).map((config) => config.id)).toEqual([created.id])
      yield* a2a.deletePushConfig(target(), { taskId: task.id, id: created.id! })
      expect(yield* a2a.listPushConfigs(target(), { taskId: task.id })).toEqual([])
    })))

  it.live("reads the extended card of a server with --auth, and finds none declared without", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const card = yield* a2a.extendedCard({
        ...target(),
        agentUrl: agentUrlOf(secured.baseUrl),
        credentials: { kind: "bearer", token: KEY },
        // gRPC is at another port of the host, another origin: the key goes there only when allowed.
        allowCrossOriginCredentials: binding === "GRPC"
      })
      expect(card.card.description).toContain("Model chosen because")
      expect(yield* Effect.flip(a2a.extendedCard(target()))).toMatchObject({ _tag: "UnsupportedOperation" })
    })))

  it.live("reports an unknown task as TaskNotFound", () =>
    withClient(Effect.gen(function*() {
      const error = yield* Effect.flip((yield* A2aClient).getTask(target(), { id: randomUUID() }))
      expect(error).toMatchObject({ _tag: "ProtocolError", a2aCode: -32001 })
    })))
})

describe("A2aClient ListTasks (1.0 only)", () => {
  it.live.each(["JSONRPC", "HTTP+JSON", "GRPC"] as const)(
    "pages through a context over %s",
    (binding) =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const target: Target = { agentUrl: agentUrlOf(agent.baseUrl), binding, protocol: "1.0" }
        const contextId = randomUUID()
        for (const text of ["a", "b", "c"]) yield* a2a.send(target, sendRequest(text, { contextId }))
        const first = yield* a2a.listTasks(target, { contextId, pageSize: 2 })
        expect(first.tasks).toHaveLength(2)
        const second = yield* a2a.listTasks(target, { contextId, pageSize: 2, pageToken: first.nextPageToken })
        expect(second.tasks).toHaveLength(1)
        expect(second.nextPageToken).toBe("")
      }))
  )
})
