/**
 * programs/tasks and programs/pushConfig against real A2A peers: get (with history), list (pages,
 * filters, v0.3 refusal), cancel, resubscribe, and push configs whose secrets never come back.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect, Option } from "effect"
import { terminalHint } from "../../src/cli/hints.js"
import { deletePushConfig, getPushConfig, listPushConfigs, setPushConfig } from "../../src/programs/pushConfig.js"
import { sendMessage } from "../../src/programs/sendMessage.js"
import { cancelTask, getTask, listTasks, resubscribe } from "../../src/programs/tasks.js"
import type { TaskUpdate } from "../../src/programs/taskUpdates.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import { ProgramLayer, rpcMethodOf, startTaskOn } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { CANCELED_TEXT, combinedText, echoText, INPUT_REQUIRED_QUESTION, withBehaviour } from "../peers/behaviours.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"

let sdk: SdkAgentHandle
let lister: SdkAgentHandle
let v03: V03AgentHandle
let noPush: SdkAgentHandle

beforeAll(async () => {
  ;[sdk, lister, v03, noPush] = await Promise.all([
    startSdkAgent(),
    // A peer of its own, so the listing knows exactly which tasks exist.
    startSdkAgent({ name: "Lister" }),
    startV03Agent(),
    startSdkAgent({ capabilities: { pushNotifications: false } })
  ])
})

afterAll(async () => {
  await Promise.all([sdk?.close(), lister?.close(), v03?.close(), noPush?.close()])
})

const send = (agentUrl: string, text: string, useSession = false) => sendMessage({ agentUrl: agentUrlOf(agentUrl), text, useSession })

describe("getTask", () => {
  it.live("shows the task view; with history_length it returns that many history messages and asks the agent for them", () =>
    Effect.gen(function*() {
      const first = yield* send(sdk.baseUrl, withBehaviour("input-required", "first"))
      yield* send(sdk.baseUrl, "second", true)
      const taskId = first.task_id!
      const before = sdk.requests.length

      const plain = yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId })
      expect(plain).toEqual({
        task_id: taskId,
        context_id: first.context_id,
        state: "completed",
        text: combinedText(["first", "second"]),
        parts: expect.any(Array),
        needs_input: false,
        needs_auth: false,
        kind: "task",
        updated_at: expect.any(String),
        binding: "JSONRPC",
        protocol_version: "1.0"
      })
      expect(plain.parts.map((part) => part.kind)).toEqual(plain.parts.map(() => "text"))
      expect("history" in plain).toBe(false)

      const full = yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId, historyLength: 10 })
      expect(full.history).toEqual([
        { role: "user", text: withBehaviour("input-required", "first") },
        { role: "agent", text: INPUT_REQUIRED_QUESTION },
        { role: "user", text: "second" }
      ])
      const last = yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId, historyLength: 1 })
      expect(last.history).toEqual([{ role: "user", text: "second" }])
      const none = yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId, historyLength: 0 })
      expect(none.history).toEqual([])

      const asked = sdk.requests.slice(before).filter((r) => rpcMethodOf(r) === "GetTask")
        .map((r) => (r.body as { params: { historyLength?: number } }).params.historyLength)
      expect(asked).toEqual([undefined, 10, 1, 0])
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("keeps the session's task state current when it looks at the session's task", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore
      const { taskId, contextId } = yield* Effect.promise(() => startTaskOn(sdk.jsonRpcUrl, "quick one"))
      yield* store.update(agentUrlOf(sdk.baseUrl), { context_id: contextId, task_id: taskId, last_state: "submitted" })
      const other = yield* Effect.promise(() => startTaskOn(sdk.jsonRpcUrl, "another one"))
      // Let both finish (echo completes at once), then look.
      yield* Effect.sleep("100 millis")
      yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId: other.taskId })
      expect(Option.getOrThrow(yield* store.get(agentUrlOf(sdk.baseUrl)))).toMatchObject({ task_id: taskId, last_state: "submitted" })
      const view = yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId })
      expect(view.state).toBe("completed")
      expect(Option.getOrThrow(yield* store.get(agentUrlOf(sdk.baseUrl)))).toMatchObject({ task_id: taskId, last_state: "completed" })
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("an unknown or empty task id is an error with a code and a hint", () =>
    Effect.gen(function*() {
      const unknown = yield* Effect.flip(getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId: "no-such-task" }))
      expect(unknown._tag).toBe("TaskNotFound")
      expect(unknown).toMatchObject({ code: "not_found", taskId: "no-such-task", listable: true })
      expect(unknown.message).toContain("does not have task no-such-task")
      const empty = yield* Effect.flip(getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId: " " }))
      expect(empty._tag).toBe("InvalidInput")
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("listTasks", () => {
  it.live("pages through every task with page size and page token; each listed task carries its answer", () =>
    Effect.gen(function*() {
      const sent = [
        yield* send(lister.baseUrl, "one"),
        yield* send(lister.baseUrl, "two"),
        yield* send(lister.baseUrl, withBehaviour("input-required", "three"))
      ]
      const page1 = yield* listTasks({ agentUrl: agentUrlOf(lister.baseUrl), pageSize: 2 })
      expect(page1.count).toBe(2)
      expect(page1.total_size).toBe(3)
      expect(page1.next_page_token).toEqual(expect.any(String))
      const page2 = yield* listTasks({ agentUrl: agentUrlOf(lister.baseUrl), pageSize: 2, pageToken: page1.next_page_token! })
      expect(page2.count).toBe(1)
      expect(page2.next_page_token).toBeNull()
      const listed = [...page1.tasks, ...page2.tasks]
      expect(listed.map((t) => t.task_id).sort()).toEqual(sent.map((r) => r.task_id).sort())
      const byId = new Map(listed.map((t) => [t.task_id, t]))
      expect(byId.get(sent[0]!.task_id!)).toMatchObject({ state: "completed", text: echoText("one") })
      expect(byId.get(sent[2]!.task_id!)).toMatchObject({ state: "input-required", needs_input: true })
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("filters by state in either spelling and by context", () =>
    Effect.gen(function*() {
      const waiting = yield* listTasks({ agentUrl: agentUrlOf(lister.baseUrl), status: "input-required" })
      const waitingProto = yield* listTasks({ agentUrl: agentUrlOf(lister.baseUrl), status: "TASK_STATE_INPUT_REQUIRED" })
      expect(waiting.tasks.map((t) => t.state)).toEqual(["input-required"])
      expect(waitingProto.tasks.map((t) => t.task_id)).toEqual(waiting.tasks.map((t) => t.task_id))
      const context = waiting.tasks[0]!.context_id!
      const inContext = yield* listTasks({ agentUrl: agentUrlOf(lister.baseUrl), contextId: context })
      expect(inContext.tasks.map((t) => t.context_id)).toEqual([context])
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("refuses a bad state or page size without asking the agent", () =>
    Effect.gen(function*() {
      const before = lister.requests.length
      const badState = yield* Effect.flip(listTasks({ agentUrl: agentUrlOf(lister.baseUrl), status: "sleeping" }))
      const badSize = yield* Effect.flip(listTasks({ agentUrl: agentUrlOf(lister.baseUrl), pageSize: 0 }))
      expect([badState._tag, badSize._tag]).toEqual(["InvalidInput", "InvalidInput"])
      expect(lister.requests.slice(before).filter((r) => rpcMethodOf(r) === "ListTasks")).toHaveLength(0)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("a v0.3 agent has no task listing: unsupported_operation", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(listTasks({ agentUrl: agentUrlOf(v03.baseUrl) }))
      expect(error._tag).toBe("UnsupportedOperation")
      expect(error).toMatchObject({ code: "unsupported_operation" })
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("cancelTask", () => {
  it.live("cancels a running task and returns the state after cancellation; the session follows", () =>
    Effect.gen(function*() {
      const { taskId } = yield* Effect.promise(() => startTaskOn(sdk.jsonRpcUrl, withBehaviour("slow-cancellable", "wait")))
      const view = yield* cancelTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId })
      expect(view).toMatchObject({ task_id: taskId, state: "canceled", text: CANCELED_TEXT, needs_input: false })
      const store = yield* SessionStore
      expect(Option.getOrThrow(yield* store.get(agentUrlOf(sdk.baseUrl)))).toMatchObject({ task_id: taskId, last_state: "canceled" })
      expect((yield* getTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId })).state).toBe("canceled")
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("a finished task cannot be cancelled: the agent's TaskNotCancelable error, with a hint", () =>
    Effect.gen(function*() {
      const done = yield* send(sdk.baseUrl, "already done")
      const error = yield* Effect.flip(cancelTask({ agentUrl: agentUrlOf(sdk.baseUrl), taskId: done.task_id! }))
      expect(error._tag).toBe("ProtocolError")
      expect(error.message).toContain("TaskNotCancelable")
      expect(error.code).toBe("protocol_error")
      expect(terminalHint(error.hint)).toContain("already finished")
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("resubscribe", () => {
  it.live("follows a running task's stream to its end, reporting each state", () =>
    Effect.gen(function*() {
      const { taskId } = yield* Effect.promise(() => startTaskOn(sdk.jsonRpcUrl, withBehaviour("slow-cancellable", "later")))
      const updates: Array<TaskUpdate> = []
      const view = yield* resubscribe({
        agentUrl: agentUrlOf(sdk.baseUrl),
        taskId,
        onUpdate: (update) => Effect.sync(() => updates.push(update))
      }).pipe(Effect.timeout("10 seconds"))
      expect(view).toMatchObject({ task_id: taskId, state: "completed", text: echoText("later") })
      expect(updates[0]!.view.state).toBe("working")
      expect(updates.at(-1)!.view.state).toBe("completed")
      expect(updates.map((u) => u.delta).join("")).toBe(echoText("later"))
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("a finished task has no stream to rejoin: its final state is the answer, reported once, not a hang", () =>
    Effect.gen(function*() {
      const done = yield* send(sdk.baseUrl, "finished")
      const updates: Array<TaskUpdate> = []
      const view = yield* resubscribe({
        agentUrl: agentUrlOf(sdk.baseUrl),
        taskId: done.task_id!,
        onUpdate: (update) => Effect.sync(() => updates.push(update))
      }).pipe(Effect.timeout("10 seconds"))
      expect(view).toMatchObject({ task_id: done.task_id, state: "completed", text: echoText("finished") })
      expect(updates.map((update) => update.delta)).toEqual([echoText("finished")])
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("push notification configs", () => {
  const TOKEN_A = "webhook-token-aaaa-1111"
  const TOKEN_B = "webhook-token-bbbb-2222"

  it.live("set, get (by id and first), list and delete; tokens are masked and never returned raw", () =>
    Effect.gen(function*() {
      const task = yield* send(sdk.baseUrl, "configure me")
      const taskId = task.task_id!
      const access = { agentUrl: agentUrlOf(sdk.baseUrl), taskId }

      const a = yield* setPushConfig({ ...access, webhookUrl: "http://127.0.0.1:9/hook-a", webhookToken: TOKEN_A })
      const b = yield* setPushConfig({ ...access, webhookUrl: "http://127.0.0.1:9/hook-b", webhookToken: TOKEN_B })
      expect(a).toEqual({
        task_id: taskId,
        config_id: expect.any(String),
        url: "http://127.0.0.1:9/hook-a",
        token: `…${TOKEN_A.slice(-4)}`,
        auth_scheme: null
      })
      // The agent received the real token; only the output is masked.
      const sentTokens = sdk.requests.filter((r) => rpcMethodOf(r) === "CreateTaskPushNotificationConfig")
        .map((r) => (r.body as { params: { taskId: string; token?: string } }).params)
        .filter((params) => params.taskId === taskId)
        .map((params) => params.token)
      expect(sentTokens).toEqual([TOKEN_A, TOKEN_B])

      expect(yield* getPushConfig({ ...access, configId: b.config_id! })).toEqual(b)
      // Without an id: the newest config.
      expect(yield* getPushConfig(access)).toEqual(b)
      const listed = yield* listPushConfigs(access)
      expect(listed.count).toBe(2)
      expect(listed.configs.map((c) => c.config_id).sort()).toEqual([a.config_id, b.config_id].sort())

      expect(yield* deletePushConfig({ ...access, configId: a.config_id! })).toEqual({
        task_id: taskId,
        config_id: a.config_id,
        deleted: true
      })
      expect((yield* listPushConfigs(access)).configs.map((c) => c.config_id)).toEqual([b.config_id])
      yield* deletePushConfig({ ...access, configId: b.config_id! })
      const none = yield* Effect.flip(getPushConfig(access))
      expect(none).toMatchObject({
        _tag: "NotFound",
        code: "not_found",
        message: expect.stringContaining("push notification config of task")
      })

      const everything = JSON.stringify([a, b, listed])
      expect(everything).not.toContain(TOKEN_A)
      expect(everything).not.toContain(TOKEN_B)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("refuses a webhook URL that is not http(s), and an agent without push notifications", () =>
    Effect.gen(function*() {
      const badUrl = yield* Effect.flip(setPushConfig({ agentUrl: agentUrlOf(sdk.baseUrl), taskId: "t", webhookUrl: "file:///etc/passwd" }))
      expect(badUrl._tag).toBe("InvalidInput")
      const unsupported = yield* Effect.flip(
        setPushConfig({ agentUrl: agentUrlOf(noPush.baseUrl), taskId: "t", webhookUrl: "http://127.0.0.1:9/x" })
      )
      expect(unsupported).toMatchObject({ _tag: "UnsupportedOperation", code: "unsupported_operation" })
    }).pipe(Effect.provide(ProgramLayer)))
})
