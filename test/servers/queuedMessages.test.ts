// A message to a task that is still working (issue 27, item 19; A2A 1.0 §3.4.3 lets a client
// continue a task): it is accepted and handled after the current turn, in order, by the mock agent
// (--latency, so tasks stay working) and by a language model (which sees the earlier answer); a
// blocking send answers once its turn is done, a stream runs from the task as it stands through
// that turn, cancel drops what waits, and past MAX_QUEUED_MESSAGES one more is refused. Driven
// by the official clients (1.3.0 and 0.3.14, JSON-RPC and HTTP+JSON) and on the wire.
import { TaskState } from "@a2a-js/sdk"
import { Duration } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_QUEUED_MESSAGES } from "../../src/domain/limits.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import {
  answerOf,
  asTask,
  BINDINGS,
  collect,
  sdkClient,
  send,
  stateOf,
  textOf,
  userMessage,
  v03Client,
  v03Message,
  v03Task,
  v03Text
} from "./sdkClients.js"
import { type Json, post, rpc, V1_HEADERS } from "./wire.js"

const LATENCY_MS = 300

/** The mock agent whose every turn stays working for LATENCY_MS first. */
let mock: AgentHandle
/** The scripted language model ("slow: …" answers after 80 ms a word). */
let model: AgentHandle

beforeAll(async () => {
  ;[mock, model] = await Promise.all([
    startAgent({ model: "mock", settings: { latency: Duration.millis(LATENCY_MS) } }),
    startAgent()
  ])
})

afterAll(async () => {
  await Promise.all([mock?.close(), model?.close()])
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const historyTexts = (task: { history: ReadonlyArray<{ parts: Parameters<typeof textOf>[0] }> }) =>
  task.history.map((message) => textOf(message.parts))
const answers = (task: { artifacts: ReadonlyArray<{ parts: Parameters<typeof textOf>[0] }> }) =>
  task.artifacts.map((artifact) => textOf(artifact.parts))

describe.each(BINDINGS)("@a2a-js/sdk 1.3.0 client, a message to a working task over %s", (binding) => {
  it("is accepted at once with returnImmediately, and every waiting message is answered after the turn before it, in order", async () => {
    const client = await sdkClient(mock.baseUrl, binding)
    const first = asTask(await client.sendMessage(send(userMessage("first"), { returnImmediately: true })))
    const queued = asTask(await client.sendMessage(send(userMessage("second", { taskId: first.id }), { returnImmediately: true })))
    // The task as it stands: still on its first turn; the message joins the history when its turn begins.
    expect(queued.id).toBe(first.id)
    expect(queued.status?.state).toBe(TaskState.TASK_STATE_WORKING)
    expect(historyTexts(queued)).toEqual(["first"])
    const began = Date.now()
    const done = asTask(await client.sendMessage(send(userMessage("third", { taskId: first.id, contextId: first.contextId }))))
    // Three turns of LATENCY_MS each, one after the other; the blocking send answers after the last.
    expect(Date.now() - began).toBeGreaterThanOrEqual(2 * LATENCY_MS - 50)
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(historyTexts(done)).toEqual(["first", "second", "third"])
    expect(answers(done)).toEqual(["first", "second", "third"])
  })

  it("streams from the task as it stands through the queued turn, with no settled state before its end", async () => {
    const client = await sdkClient(mock.baseUrl, binding)
    const first = asTask(await client.sendMessage(send(userMessage("one"), { returnImmediately: true })))
    const events = await collect(client.sendMessageStream(send(userMessage("two", { taskId: first.id }))))
    expect(events[0]?.payload?.$case).toBe("task")
    expect(events.map(stateOf).filter((state) => state !== undefined)).toEqual([
      TaskState.TASK_STATE_WORKING, // the snapshot: on the first turn
      TaskState.TASK_STATE_WORKING, // the first turn answered; the queued one begins
      TaskState.TASK_STATE_COMPLETED
    ])
    const chunks = events.flatMap((
      event
    ) => (event.payload?.$case === "artifactUpdate" ? [textOf(event.payload.value.artifact?.parts ?? [])] : []))
    expect(chunks.join("")).toBe("onetwo")
  })

  it("is dropped with the queue when the task is canceled: the waiting sender gets the canceled task", async () => {
    const client = await sdkClient(mock.baseUrl, binding)
    const first = asTask(await client.sendMessage(send(userMessage("long"), { returnImmediately: true })))
    await client.sendMessage(send(userMessage("never", { taskId: first.id }), { returnImmediately: true }))
    const waiting = client.sendMessage(send(userMessage("nor this", { taskId: first.id })))
    await sleep(50)
    expect((await client.cancelTask({ tenant: "", id: first.id, metadata: undefined })).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(asTask(await waiting).status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    await sleep(3 * LATENCY_MS)
    const later = await client.getTask({ tenant: "", id: first.id, historyLength: undefined })
    expect(later.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(historyTexts(later)).toEqual(["long"])
    expect(later.artifacts).toEqual([])
  })

  it("answers the question of an input-required turn when it waited for it; a failed turn drops it", async () => {
    const client = await sdkClient(mock.baseUrl, binding)
    const asking = asTask(await client.sendMessage(send(userMessage("input-required"), { returnImmediately: true })))
    const answered = asTask(await client.sendMessage(send(userMessage("blue", { taskId: asking.id }))))
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(historyTexts(answered)).toEqual(["input-required", expect.stringContaining("needs more input"), "blue"])
    expect(answerOf(answered)).toBe("blue")

    const failing = asTask(await client.sendMessage(send(userMessage("fail: out of ink"), { returnImmediately: true })))
    const dropped = asTask(await client.sendMessage(send(userMessage("more", { taskId: failing.id }))))
    expect(dropped.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(textOf(dropped.status?.message?.parts ?? [])).toBe("out of ink")
    expect(historyTexts(dropped)).toEqual(["fail: out of ink", "out of ink"])
  })
})

describe.each(BINDINGS)("a2a-sdk-v03 (0.3.14) client, a message to a working task over %s", (binding) => {
  it("is answered after the current turn: completed with both answers in order", async () => {
    const client = await v03Client(mock.baseUrl, binding)
    const first = v03Task(await client.sendMessage({ message: v03Message("alpha"), configuration: { blocking: false } }))
    const done = v03Task(await client.sendMessage({ message: v03Message("beta", { taskId: first.id, contextId: first.contextId }) }))
    expect(done.status.state).toBe("completed")
    expect((done.history ?? []).map((message) => v03Text(message.parts))).toEqual(["alpha", "beta"])
    expect((done.artifacts ?? []).map((artifact) => v03Text(artifact.parts))).toEqual(["alpha", "beta"])
  })

  it("streams through the queued turn, final only on the last status", async () => {
    const client = await v03Client(mock.baseUrl, binding)
    const first = v03Task(await client.sendMessage({ message: v03Message("gamma"), configuration: { blocking: false } }))
    const events = await collect(client.sendMessageStream({ message: v03Message("delta", { taskId: first.id }) }))
    const statuses = events.flatMap((event) => (event.kind === "status-update" ? [[event.status.state, event.final]] : []))
    expect(statuses).toEqual([["working", false], ["completed", true]])
    expect(events[0]?.kind === "task" ? events[0].status.state : undefined).toBe("working")
  })
})

describe("the language model and a queued message", () => {
  it("reads it in its own turn, after the answer to the turn before it", async () => {
    const first = await rpc(model.baseUrl, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "slow: a b c" }] },
      configuration: { returnImmediately: true }
    })
    const taskId = first.json["result"]["task"]["id"] as string
    const done = await rpc(model.baseUrl, "SendMessage", {
      message: { messageId: randomUUID(), role: "ROLE_USER", taskId, parts: [{ text: "what did you say?" }] }
    })
    expect(done.json["result"]["task"]["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    const prompt = model.model.prompts[model.model.prompts.length - 1]!
    expect(prompt.content.map((message) => [message.role, JSON.stringify(message.content)])).toEqual([
      ["system", expect.any(String)],
      ["user", expect.stringContaining("slow: a b c")],
      ["assistant", expect.stringContaining("a b c")],
      ["user", expect.stringContaining("what did you say?")]
    ])
  })
})

describe(`at most ${MAX_QUEUED_MESSAGES} messages wait for one task`, () => {
  const v1Message = (text: string, taskId: string) => ({
    message: { messageId: randomUUID(), role: "ROLE_USER", taskId, parts: [{ text }] }
  })
  const v03RpcMessage = (text: string, taskId: string) => ({
    message: { kind: "message", messageId: randomUUID(), role: "user", taskId, parts: [{ kind: "text", text }] }
  })
  const QUEUE_FULL = new RegExp(`already holds ${MAX_QUEUED_MESSAGES} messages for its next turns`)
  /** A turn long enough that the queue fills however slowly the machine sends (cancel ends it). */
  let slow: AgentHandle
  beforeAll(async () => {
    slow = await startAgent({ model: "mock", settings: { latency: Duration.seconds(60) } })
  })
  afterAll(() => slow?.close())

  it("refuses one more with UnsupportedOperation at every door, in both generations", async () => {
    const base = slow.baseUrl
    const started = await rpc(base, "SendMessage", { ...v1Message("busy", ""), configuration: { returnImmediately: true } })
    const taskId = started.json["result"]["task"]["id"] as string
    for (let index = 1; index <= MAX_QUEUED_MESSAGES; index++) {
      const queued = await rpc(base, "SendMessage", { ...v1Message(`waits ${index}`, taskId), configuration: { returnImmediately: true } })
      expect(queued.json["result"]["task"]["status"]["state"]).toBe("TASK_STATE_WORKING")
    }
    const refusals: Array<[string, Json]> = [
      ["JSON-RPC 1.0", (await rpc(base, "SendMessage", v1Message("one too many", taskId))).json["error"]],
      ["JSON-RPC 0.3", (await rpc(base, "message/send", v03RpcMessage("one too many", taskId), {})).json["error"]]
    ]
    for (const [door, error] of refusals) {
      expect([door, error]).toEqual([door, expect.objectContaining({ code: -32004, message: expect.stringMatching(QUEUE_FULL) })])
    }
    const rest = await post(`${base}/message:send`, v1Message("one too many", taskId), V1_HEADERS)
    expect(rest.status).toBe(400)
    expect(rest.json["error"]).toMatchObject({ details: [{ reason: "UNSUPPORTED_OPERATION" }], message: expect.stringMatching(QUEUE_FULL) })
    const restV03 = await post(`${base}/v1/message:send`, {
      message: { messageId: randomUUID(), role: "ROLE_USER", taskId, content: [{ text: "one too many" }] }
    })
    expect(restV03.status).toBe(400)
    expect(restV03.json).toMatchObject({ code: -32004, message: expect.stringMatching(QUEUE_FULL) })
    // Canceling drops them all: the task is canceled with only its first message.
    const canceled = await rpc(base, "CancelTask", { id: taskId })
    expect(canceled.json["result"]["status"]["state"]).toBe("TASK_STATE_CANCELED")
    expect((canceled.json["result"]["history"] as Json[]).length).toBe(1)
  })
})
