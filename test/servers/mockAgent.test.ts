// The scriptable test agent (`relay server agent -m mock`, with and without --latency) driven by
// the official clients: @a2a-js/sdk 1.3.0 and the 0.3.14 client, each over JSON-RPC and HTTP+JSON.
// Every scenario: cancel while working, list while working, continue after input-required,
// auth-required, fail, reject, a stream of 50 chunks, a large artifact, a data part and a file
// part; and a follow-up to a finished task, refused with UnsupportedOperation (also on the wire).
import { TaskState } from "@a2a-js/sdk"
import type { Part } from "@a2a-js/sdk"
import type * as V03 from "a2a-sdk-v03"
import { Duration } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { FILE_TEXT, fillerText, SCENARIOS } from "../../src/services/modelProviders/mock.js"
import { type AgentHandle, eventually, startAgent } from "./agentHarness.js"
import {
  answerOf,
  asTask,
  BINDINGS,
  collect,
  rejection,
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

const LATENCY_MS = 600

/** The mock with --latency (tasks stay working) and without (scenarios run at once). */
let slow: AgentHandle
let fast: AgentHandle

beforeAll(async () => {
  ;[slow, fast] = await Promise.all([
    startAgent({ model: "mock", settings: { latency: Duration.millis(LATENCY_MS) } }),
    startAgent({ model: "mock" })
  ])
})

afterAll(async () => {
  await Promise.all([slow?.close(), fast?.close()])
})

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const chunkTexts = (count: number) => Array.from({ length: count }, (_, i) => `chunk ${i + 1} of ${count}\n`)

const FOLLOW_UP_REFUSED = /completed and accepts no more messages; send without a taskId/

describe("the mock agent's card", () => {
  it("lists every scenario as an example of its skill", async () => {
    const card = (await (await fetch(`${fast.baseUrl}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })).json()) as {
      skills: Array<{ id: string; examples: string[]; description: string }>
    }
    expect(card.skills.map((skill) => skill.id)).toEqual(["test-scenarios"])
    expect(card.skills[0]!.examples).toEqual(SCENARIOS.map((scenario) => scenario.send))
    for (
      const example of [
        "input-required",
        "auth-required",
        "fail: disk full",
        "reject: not my job",
        "stream 50 every 20ms",
        "large 1MB",
        "data",
        "file"
      ]
    ) {
      expect(card.skills[0]!.examples).toContain(example)
    }
  })
})

// ---------------------------------------------------------------------------
// @a2a-js/sdk 1.3.0

const firstPart = (artifacts: ReadonlyArray<{ name: string; parts: Part[] }>, name: string): Part => {
  const artifact = artifacts.find((candidate) => candidate.name === name)
  if (artifact?.parts[0] === undefined) throw new Error(`no ${name} artifact in ${JSON.stringify(artifacts)}`)
  return artifact.parts[0]
}

describe.each(BINDINGS)("@a2a-js/sdk 1.3.0 client and the mock agent over %s", (binding) => {
  it("cancels a task while it is working (--latency): it stays canceled, without an answer", async () => {
    const client = await sdkClient(slow.baseUrl, binding)
    const started = asTask(await client.sendMessage(send(userMessage("take your time"), { returnImmediately: true })))
    const stateNow = async () => (await client.getTask({ tenant: "", id: started.id, historyLength: undefined })).status?.state
    await eventually("the task to be working", async () => (await stateNow()) === TaskState.TASK_STATE_WORKING)
    const canceled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    await sleep(LATENCY_MS + 200)
    const later = await client.getTask({ tenant: "", id: started.id, historyLength: undefined })
    expect(later.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(later.artifacts).toEqual([])
  })

  it("lists a task while it is working (--latency), and not once it completed", async () => {
    const client = await sdkClient(slow.baseUrl, binding)
    const contextId = randomUUID()
    const started = asTask(await client.sendMessage(send(userMessage("list me", { contextId }), { returnImmediately: true })))
    const working = async () =>
      (await client.listTasks({
        tenant: "",
        contextId,
        status: TaskState.TASK_STATE_WORKING,
        pageSize: 10,
        pageToken: "",
        historyLength: undefined,
        statusTimestampAfter: undefined,
        includeArtifacts: false
      })).tasks.map((task) => task.id)
    await eventually("ListTasks to show the working task", async () => (await working()).includes(started.id))
    await eventually(
      "the task to complete",
      async () =>
        (await client.getTask({ tenant: "", id: started.id, historyLength: undefined })).status?.state === TaskState.TASK_STATE_COMPLETED,
      LATENCY_MS * 5
    )
    expect(await working()).toEqual([])
  })

  it("continues an input-required task with the follow-up (--latency on both turns)", async () => {
    const client = await sdkClient(slow.baseUrl, binding)
    const asked = asTask(await client.sendMessage(send(userMessage("input-required"))))
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect(textOf(asked.status?.message?.parts ?? [])).toContain("send any message with this task's id")
    const began = Date.now()
    const answered = asTask(await client.sendMessage(send(userMessage("blue", { taskId: asked.id, contextId: asked.contextId }))))
    expect(Date.now() - began).toBeGreaterThanOrEqual(LATENCY_MS - 50)
    expect(answered.id).toBe(asked.id)
    expect(answered.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(answerOf(answered)).toBe("blue")
    expect(answered.history.map((message) => textOf(message.parts))).toEqual([
      "input-required",
      textOf(asked.status?.message?.parts ?? []),
      "blue"
    ])
  })

  it("streams 50 chunks of one artifact at the pace asked for, then completes", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const began = Date.now()
    const events = await collect(client.sendMessageStream(send(userMessage("stream 50 every 10ms"))))
    expect(Date.now() - began).toBeGreaterThanOrEqual(49 * 10)
    const chunks = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [event.payload.value] : []))
    expect(chunks.map((chunk) => textOf(chunk.artifact?.parts ?? []))).toEqual(chunkTexts(50))
    expect(chunks.map((chunk) => chunk.append)).toEqual([false, ...Array<boolean>(49).fill(true)])
    expect(chunks.map((chunk) => chunk.lastChunk)).toEqual([...Array<boolean>(49).fill(false), true])
    expect(new Set(chunks.map((chunk) => chunk.artifact?.artifactId)).size).toBe(1)
    expect(events.map(stateOf).filter((state) => state !== undefined)).toEqual([
      TaskState.TASK_STATE_SUBMITTED,
      TaskState.TASK_STATE_WORKING,
      TaskState.TASK_STATE_COMPLETED
    ])
    const taskId = events[0]?.payload?.$case === "task" ? events[0].payload.value.id : ""
    const stored = await client.getTask({ tenant: "", id: taskId, historyLength: undefined })
    expect(answerOf(stored)).toBe(chunkTexts(50).join(""))
  })

  it("asks to authenticate (auth-required), then completes on the follow-up", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const asked = asTask(await client.sendMessage(send(userMessage("auth-required"))))
    expect(asked.status?.state).toBe(TaskState.TASK_STATE_AUTH_REQUIRED)
    expect(textOf(asked.status?.message?.parts ?? [])).toContain("authenticate")
    const done = asTask(await client.sendMessage(send(userMessage("signed in", { taskId: asked.id }))))
    expect(done.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(answerOf(done)).toBe("signed in")
  })

  it("fails the task with the reason given", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const task = asTask(await client.sendMessage(send(userMessage("fail: Disk full"))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_FAILED)
    expect(textOf(task.status?.message?.parts ?? [])).toBe("Disk full")
    expect(task.artifacts).toEqual([])
  })

  it("rejects the task with the reason given", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const task = asTask(await client.sendMessage(send(userMessage("reject: not my job"))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_REJECTED)
    expect(textOf(task.status?.message?.parts ?? [])).toBe("not my job")
  })

  it("answers with a large artifact of exactly the size asked for", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const task = asTask(await client.sendMessage(send(userMessage("large 1MB"))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    const part = firstPart(task.artifacts, "large")
    expect(part.content?.$case === "text" ? part.content.value : undefined).toBe(fillerText(1024 * 1024))
  })

  it("answers with a data part", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const task = asTask(await client.sendMessage(send(userMessage("data"))))
    const part = firstPart(task.artifacts, "data")
    expect(part.content?.$case).toBe("data")
    expect(part.content?.value).toEqual({
      scenario: "data",
      from: "relay mock agent",
      numbers: [1, 2, 3],
      nested: { ok: true, nothing: null }
    })
    expect(part.mediaType).toBe("application/json")
  })

  it("answers with a file part", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const task = asTask(await client.sendMessage(send(userMessage("file"))))
    const part = firstPart(task.artifacts, "file")
    expect(part.content?.$case).toBe("raw")
    expect(Buffer.from(part.content?.value as Uint8Array).toString("utf8")).toBe(FILE_TEXT)
    expect([part.filename, part.mediaType]).toEqual(["hello.txt", "text/plain"])
  })

  it("refuses a follow-up to a finished task with UnsupportedOperation, saying to send without a taskId", async () => {
    const client = await sdkClient(fast.baseUrl, binding)
    const done = asTask(await client.sendMessage(send(userMessage("all done"))))
    const refused = await rejection(client.sendMessage(send(userMessage("one more", { taskId: done.id }))))
    expect(refused.name).toBe("UnsupportedOperationError")
    expect(refused.message).toMatch(FOLLOW_UP_REFUSED)
    const streamed = await rejection(collect(client.sendMessageStream(send(userMessage("one more", { taskId: done.id })))))
    // Over JSON-RPC the refusal arrives as the stream's error event, which @a2a-js 1.3 wraps (cause).
    expect((streamed.cause as Error | undefined)?.name ?? streamed.name).toBe("UnsupportedOperationError")
    expect((await client.getTask({ tenant: "", id: done.id, historyLength: undefined })).history).toHaveLength(1)
  })
})

// ---------------------------------------------------------------------------
// The 0.3.14 client

const v03StatusText = (task: V03.Task) => v03Text(task.status.message?.parts ?? [])

const v03Artifact = (task: V03.Task, name: string): V03.Part => {
  const part = task.artifacts?.find((artifact) => artifact.name === name)?.parts[0]
  if (part === undefined) throw new Error(`no ${name} artifact in ${JSON.stringify(task.artifacts)}`)
  return part
}

describe.each(BINDINGS)("a2a-sdk-v03 (0.3.14) client and the mock agent over %s", (binding) => {
  it("cancels a task while it is working (--latency)", async () => {
    const client = await v03Client(slow.baseUrl, binding)
    const started = v03Task(await client.sendMessage({ message: v03Message("take your time"), configuration: { blocking: false } }))
    await eventually("the task to be working", async () => (await client.getTask({ id: started.id })).status.state === "working")
    expect((await client.cancelTask({ id: started.id })).status.state).toBe("canceled")
    await sleep(LATENCY_MS + 200)
    const later = await client.getTask({ id: started.id })
    expect(later.status.state).toBe("canceled")
    expect(later.artifacts ?? []).toEqual([])
  })

  it("continues an input-required task with the follow-up (--latency on both turns)", async () => {
    const client = await v03Client(slow.baseUrl, binding)
    const asked = v03Task(await client.sendMessage({ message: v03Message("input-required") }))
    expect(asked.status.state).toBe("input-required")
    expect(v03StatusText(asked)).toContain("send any message with this task's id")
    const answered = v03Task(await client.sendMessage({ message: v03Message("green", { taskId: asked.id, contextId: asked.contextId }) }))
    expect(answered.status.state).toBe("completed")
    expect(v03Text(answered.artifacts?.[0]?.parts ?? [])).toBe("green")
  })

  it("streams 50 chunks of one artifact, then a final completed status", async () => {
    const client = await v03Client(fast.baseUrl, binding)
    const events = await collect(client.sendMessageStream({ message: v03Message("stream 50 every 5ms") }))
    expect(events.map((event) => event.kind)).toEqual([
      "task",
      "status-update",
      ...Array<string>(50).fill("artifact-update"),
      "status-update"
    ])
    const chunks = events.flatMap((event) => (event.kind === "artifact-update" ? [event] : []))
    expect(chunks.map((chunk) => v03Text(chunk.artifact.parts))).toEqual(chunkTexts(50))
    expect(chunks.map((chunk) => chunk.lastChunk === true)).toEqual([...Array<boolean>(49).fill(false), true])
    // The 0.3.14 client's REST reader drops `append` (relay sends it: see the 1.0 tests and the wire).
    if (binding === "JSONRPC") expect(chunks.slice(1).every((chunk) => chunk.append === true)).toBe(true)
    const last = events[events.length - 1]
    expect(last?.kind === "status-update" ? [last.status.state, last.final] : undefined).toEqual(["completed", true])
  })

  it("asks to authenticate (auth-required), then completes on the follow-up", async () => {
    const client = await v03Client(fast.baseUrl, binding)
    const asked = v03Task(await client.sendMessage({ message: v03Message("auth-required") }))
    expect(asked.status.state).toBe("auth-required")
    const done = v03Task(await client.sendMessage({ message: v03Message("signed in", { taskId: asked.id }) }))
    expect(done.status.state).toBe("completed")
  })

  it("fails and rejects tasks with the reasons given", async () => {
    const client = await v03Client(fast.baseUrl, binding)
    const failed = v03Task(await client.sendMessage({ message: v03Message("fail: out of paper") }))
    expect([failed.status.state, v03StatusText(failed)]).toEqual(["failed", "out of paper"])
    const rejected = v03Task(await client.sendMessage({ message: v03Message("reject") }))
    expect([rejected.status.state, v03StatusText(rejected)]).toEqual(["rejected", "the mock agent was asked to reject the task"])
  })

  it("answers with a large artifact, a data part and a file part", async () => {
    const client = await v03Client(fast.baseUrl, binding)
    const large = v03Artifact(v03Task(await client.sendMessage({ message: v03Message("large 200KB") })), "large")
    expect(large.kind === "text" ? large.text : undefined).toBe(fillerText(200 * 1024))
    const data = v03Artifact(v03Task(await client.sendMessage({ message: v03Message("data") })), "data")
    expect(data.kind === "data" ? data.data : undefined).toMatchObject({ scenario: "data", numbers: [1, 2, 3] })
    const file = v03Artifact(v03Task(await client.sendMessage({ message: v03Message("file") })), "file")
    expect(file.kind === "file" ? file.file : undefined).toEqual({
      bytes: Buffer.from(FILE_TEXT).toString("base64"),
      // The v0.3 proto's FilePart has no name, so HTTP+JSON 0.3 cannot carry it.
      ...(binding === "JSONRPC" ? { name: "hello.txt" } : {}),
      mimeType: "text/plain"
    })
  })

  it("refuses a follow-up to a finished task with UnsupportedOperation, saying to send without a taskId", async () => {
    const client = await v03Client(fast.baseUrl, binding)
    const done = v03Task(await client.sendMessage({ message: v03Message("all done") }))
    const refused = await rejection(client.sendMessage({ message: v03Message("one more", { taskId: done.id }) }))
    expect(refused.name).toBe("UnsupportedOperationError")
    // Its JSON-RPC errors keep the server's words in errorResponse, the REST ones in the message.
    const response = (refused as Error & { errorResponse?: { error: { message: string } } }).errorResponse
    expect(response?.error.message ?? refused.message).toMatch(FOLLOW_UP_REFUSED)
  })
})

// ---------------------------------------------------------------------------
// The follow-up refusal on the wire: code, HTTP status and reason in every dialect

describe("a follow-up to a finished task, on the wire", () => {
  const post = async (path: string, body: unknown, headers: Record<string, string> = {}) => {
    const response = await fetch(`${fast.baseUrl}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json", ...headers },
      body: JSON.stringify(body)
    })
    return { status: response.status, json: (await response.json()) as Record<string, any> }
  }
  const finishedTask = async () => {
    const answer = await post("/", {
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "finish" }] } }
    }, { "a2a-version": "1.0" })
    return answer.json["result"]["task"]["id"] as string
  }
  const v1FollowUp = (taskId: string) => ({ message: { messageId: randomUUID(), role: "ROLE_USER", taskId, parts: [{ text: "more" }] } })
  const v03FollowUp = (taskId: string) => ({
    message: { kind: "message", messageId: randomUUID(), role: "user", taskId, parts: [{ kind: "text", text: "more" }] }
  })

  it("JSON-RPC 1.0: -32004 with reason UNSUPPORTED_OPERATION", async () => {
    const answer = await post("/", { jsonrpc: "2.0", id: 7, method: "SendMessage", params: v1FollowUp(await finishedTask()) }, {
      "a2a-version": "1.0"
    })
    expect(answer.json["error"]).toMatchObject({ code: -32004, data: [{ reason: "UNSUPPORTED_OPERATION", domain: "a2a-protocol.org" }] })
    expect(answer.json["error"]["message"]).toMatch(FOLLOW_UP_REFUSED)
  })

  it("HTTP+JSON 1.0: 400 with reason UNSUPPORTED_OPERATION", async () => {
    const answer = await post("/message:send", v1FollowUp(await finishedTask()), { "a2a-version": "1.0" })
    expect(answer.status).toBe(400)
    expect(answer.json["error"]).toMatchObject({ code: 400, details: [{ reason: "UNSUPPORTED_OPERATION" }] })
    expect(answer.json["error"]["message"]).toMatch(FOLLOW_UP_REFUSED)
  })

  it("JSON-RPC 0.3: -32004", async () => {
    const answer = await post("/", { jsonrpc: "2.0", id: 8, method: "message/send", params: v03FollowUp(await finishedTask()) })
    expect(answer.json["error"]).toMatchObject({ code: -32004 })
    expect(answer.json["error"]["message"]).toMatch(FOLLOW_UP_REFUSED)
  })

  it("HTTP+JSON 0.3: 400 with code -32004", async () => {
    const taskId = await finishedTask()
    const answer = await post("/v1/message:send", {
      message: { messageId: randomUUID(), role: "ROLE_USER", taskId, content: [{ text: "more" }] }
    })
    expect(answer.status).toBe(400)
    expect(answer.json).toMatchObject({ code: -32004 })
    expect(answer.json["message"]).toMatch(FOLLOW_UP_REFUSED)
  })
})
