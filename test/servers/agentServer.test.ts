// Suite C (reference §6c): the official A2A clients drive relay's agent server through every
// operation: @a2a-js/sdk 1.3.0 over JSON-RPC and HTTP+JSON at protocol 1.0, and the 0.3.14
// client (npm alias a2a-sdk-v03) over both bindings at 0.3. Send, stream (event order), get,
// list, cancel, resubscribe, push configs, the extended card and auth (401, then a retry).
import { TaskState } from "@a2a-js/sdk"
import { createAuthenticatingFetchWithRetry } from "@a2a-js/sdk/client"
import type * as V03 from "a2a-sdk-v03"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentHandle, eventually, SLOW_WORD_MS, startAgent } from "./agentHarness.js"
import {
  answerOf,
  asTask,
  BINDINGS,
  collect,
  rejection,
  sdkClient as sdkClientAt,
  send,
  stateOf,
  textOf,
  userMessage,
  v03Client as v03ClientAt,
  v03Message,
  v03Task,
  v03Text
} from "./sdkClients.js"
import { storeBackends } from "./storeBackends.js"

describe.each(storeBackends())("over the $name store", (backend) => {
  let agent: AgentHandle

  beforeAll(async () => {
    agent = await startAgent({ storeLayer: backend.layer() })
  })

  afterAll(async () => {
    await agent?.close()
  })

  const sdkClient = (binding: (typeof BINDINGS)[number]) => sdkClientAt(agent.baseUrl, binding)
  const v03Client = (binding: (typeof BINDINGS)[number]) => v03ClientAt(agent.baseUrl, binding)

  describe.each(BINDINGS)("@a2a-js/sdk 1.3.0 client over %s", (binding) => {
    it("reads the card and picks the 1.0 interface of its binding", async () => {
      const client = await sdkClient(binding)
      expect(client.protocolVersion).toBe("1.0")
      expect(client.transport.protocolName).toBe(binding)
    })

    it("sends a message and gets the completed task with the answer as an artifact", async () => {
      const client = await sdkClient(binding)
      const task = asTask(await client.sendMessage(send(userMessage("hello there"))))
      expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
      expect(answerOf(task)).toBe("hello there")
      expect(task.history.map((message) => textOf(message.parts))).toEqual(["hello there"])
      expect(task.contextId).not.toBe("")
    })

    it("streams the task first, then working, the answer's chunks and completed, in order", async () => {
      const client = await sdkClient(binding)
      const events = await collect(client.sendMessageStream(send(userMessage("one two three"))))
      const kinds = events.map((event) => event.payload?.$case)
      expect(kinds).toEqual([
        "task",
        "statusUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "artifactUpdate",
        "statusUpdate"
      ])
      expect(events.map(stateOf).filter((state) => state !== undefined)).toEqual([
        TaskState.TASK_STATE_SUBMITTED,
        TaskState.TASK_STATE_WORKING,
        TaskState.TASK_STATE_COMPLETED
      ])
      const chunks = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [event.payload.value] : []))
      expect(chunks.map((chunk) => textOf(chunk.artifact?.parts ?? []))).toEqual(["one ", "two ", "three", ""])
      expect(chunks.map((chunk) => chunk.append)).toEqual([false, true, true, true])
      expect(chunks.map((chunk) => chunk.lastChunk)).toEqual([false, false, false, true])
      expect(new Set(chunks.map((chunk) => chunk.artifact?.artifactId)).size).toBe(1)
    })

    it("gets a task with historyLength 0, 1 and unset", async () => {
      const client = await sdkClient(binding)
      const task = asTask(await client.sendMessage(send(userMessage("remember me"))))
      const full = await client.getTask({ tenant: "", id: task.id, historyLength: undefined })
      expect(full.history.map((message) => textOf(message.parts))).toEqual(["remember me"])
      expect(answerOf(full)).toBe("remember me")
      expect((await client.getTask({ tenant: "", id: task.id, historyLength: 0 })).history).toEqual([])
      expect((await client.getTask({ tenant: "", id: task.id, historyLength: 1 })).history).toHaveLength(1)
    })

    it("lists a context's tasks newest first, page by page, artifacts only on request", async () => {
      const client = await sdkClient(binding)
      const contextId = randomUUID()
      const ids: string[] = []
      for (const text of ["first", "second", "third"]) {
        ids.push(asTask(await client.sendMessage(send(userMessage(text, { contextId })))).id)
      }
      const list = (pageToken: string, includeArtifacts = false) =>
        client.listTasks({
          tenant: "",
          contextId,
          status: TaskState.TASK_STATE_UNSPECIFIED,
          pageSize: 2,
          pageToken,
          historyLength: undefined,
          statusTimestampAfter: undefined,
          includeArtifacts
        })
      const first = await list("")
      expect(first.totalSize).toBe(3)
      expect(first.pageSize).toBe(2)
      expect(first.tasks.map((task) => task.id)).toEqual([ids[2], ids[1]])
      expect(first.tasks.every((task) => task.artifacts.length === 0)).toBe(true)
      expect(first.nextPageToken).not.toBe("")
      const second = await list(first.nextPageToken)
      expect(second.tasks.map((task) => task.id)).toEqual([ids[0]])
      expect(second.nextPageToken).toBe("")
      const withArtifacts = await list("", true)
      expect(withArtifacts.tasks.map(answerOf)).toEqual(["third", "second"])
    })

    it("cancels a running task, which then cannot be canceled again", async () => {
      const client = await sdkClient(binding)
      const started = asTask(await client.sendMessage(send(userMessage("slow: a b c d e f g h i j k l"), { returnImmediately: true })))
      expect(started.status?.state).toBe(TaskState.TASK_STATE_SUBMITTED)
      const canceled = await client.cancelTask({ tenant: "", id: started.id, metadata: undefined })
      expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
      // The model call was interrupted: the task stays canceled with no answer.
      await new Promise((resolve) => setTimeout(resolve, SLOW_WORD_MS * 2))
      const later = await client.getTask({ tenant: "", id: started.id, historyLength: undefined })
      expect(later.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
      expect(later.artifacts).toEqual([])
      const again = await rejection(client.cancelTask({ tenant: "", id: started.id, metadata: undefined }))
      expect(again.name).toBe("TaskNotCancelableError")
    })

    it("resubscribes to a running task: the task first, then the same events as the original stream", async () => {
      const client = await sdkClient(binding)
      const original = client.sendMessageStream(send(userMessage("slow: x y z")))
      const head = await original.next()
      expect(head.value?.payload?.$case).toBe("task")
      const taskId = head.value?.payload?.$case === "task" ? head.value.payload.value.id : ""
      const [rest, resubscribed] = await Promise.all([
        collect(original),
        collect(client.resubscribeTask({ tenant: "", id: taskId }))
      ])
      expect(resubscribed[0]?.payload?.$case).toBe("task")
      expect(stateOf(resubscribed[resubscribed.length - 1]!)).toBe(TaskState.TASK_STATE_COMPLETED)
      const tail = resubscribed.slice(1).map((event) => JSON.stringify(event))
      expect(rest.map((event) => JSON.stringify(event)).slice(-tail.length)).toEqual(tail)
      expect(answerOf(await client.getTask({ tenant: "", id: taskId, historyLength: undefined }))).toBe("x y z")
    })

    it("refuses to subscribe to a finished task and answers unknown tasks with TaskNotFound", async () => {
      const client = await sdkClient(binding)
      const task = asTask(await client.sendMessage(send(userMessage("done"))))
      const subscribed = await rejection(collect(client.resubscribeTask({ tenant: "", id: task.id })))
      // Over JSON-RPC the error comes in the event stream, whose errors @a2a-js wraps as their cause.
      const typed = binding === "JSONRPC" ? (subscribed.cause as Error) : subscribed
      expect(typed.name).toBe("UnsupportedOperationError")
      const missing = await rejection(client.getTask({ tenant: "", id: randomUUID(), historyLength: undefined }))
      expect(missing.name).toBe("TaskNotFoundError")
    })

    it("creates, reads (redacted), lists and deletes push configs", async () => {
      const client = await sdkClient(binding)
      const task = asTask(await client.sendMessage(send(userMessage("configs"))))
      const created = await client.createTaskPushNotificationConfig({
        tenant: "",
        id: "",
        taskId: task.id,
        url: "http://127.0.0.1:9/hook",
        token: "secret-token",
        authentication: { scheme: "Bearer", credentials: "secret-credentials" }
      })
      expect(created.id).not.toBe("")
      expect(created.taskId).toBe(task.id)
      const read = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id })
      expect(read.url).toBe("http://127.0.0.1:9/hook")
      expect(read.token).not.toContain("secret")
      expect(read.authentication?.scheme).toBe("Bearer")
      expect(read.authentication?.credentials).not.toContain("secret")
      const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })
      expect(listed.configs.map((config) => config.id)).toEqual([created.id])
      await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id })
      // Deleting it again is TaskNotFound, the spec's error for a config that is not there.
      const again = await rejection(client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: created.id }))
      expect(again.name).toBe("TaskNotFoundError")
      const after = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })
      expect(after.configs).toEqual([])
    })

    it("declares no extended card without --auth: the public card is all there is", async () => {
      const client = await sdkClient(binding)
      const card = await client.getAgentCard()
      expect(card.capabilities?.extendedAgentCard).toBe(false)
      expect(card.description).not.toContain("Model chosen because")
    })
  })

  describe.each(BINDINGS)("@a2a-js/sdk 1.3.0 client against the server with --auth over %s", (binding) => {
    const KEY = "test-key-0123456789"
    let secured: AgentHandle

    beforeAll(async () => {
      secured = await startAgent({ key: KEY, storeLayer: backend.layer() })
    })

    afterAll(async () => {
      await secured?.close()
    })

    const clientWith = (fetchImpl: typeof fetch) => sdkClientAt(secured.baseUrl, binding, fetchImpl)

    it("reads the open card with its security schemes, and is refused without the key", async () => {
      const statuses: number[] = []
      const recording: typeof fetch = async (input, init) => {
        const response = await fetch(input, init)
        statuses.push(response.status)
        return response
      }
      const client = await clientWith(recording) // the card needs no key
      const card =
        (await (await fetch(`${secured.baseUrl}/.well-known/agent-card.json`, { headers: { "A2A-Version": "1.0" } })).json()) as {
          securitySchemes: Record<string, unknown>
          securityRequirements: unknown[]
        }
      expect(Object.keys(card.securitySchemes).sort()).toEqual(["apiKey", "bearer"])
      expect(card.securityRequirements).toHaveLength(2)
      expect(await rejection(client.sendMessage(send(userMessage("hi"))))).toBeInstanceOf(Error)
      expect(await rejection(client.getAgentCard())).toBeInstanceOf(Error) // the extended card needs the key
      expect(statuses).toEqual([401, 401])
    })

    it("retries with the key after a 401 (createAuthenticatingFetchWithRetry) and then succeeds", async () => {
      let retries = 0
      let saved: Record<string, string> = {}
      const authFetch = createAuthenticatingFetchWithRetry(fetch, {
        headers: async () => saved,
        shouldRetryWithHeaders: async (_request, response) => {
          if (response.status !== 401) return undefined
          expect(response.headers.get("www-authenticate")).toContain("Bearer")
          retries++
          return { Authorization: `Bearer ${KEY}` }
        },
        onSuccessfulRetry: async (headers) => {
          saved = headers
        }
      })
      const client = await clientWith(authFetch)
      const task = asTask(await client.sendMessage(send(userMessage("let me in"))))
      expect(answerOf(task)).toBe("let me in")
      expect(retries).toBe(1)
      // Later calls carry the saved header from the start.
      const again = await client.getTask({ tenant: "", id: task.id, historyLength: undefined })
      expect(again.id).toBe(task.id)
      expect(retries).toBe(1)
    })

    it("serves the extended card through GetExtendedAgentCard with the key", async () => {
      const client = await clientWith(fetch)
      const card = await client.getAgentCard({ serviceParameters: { "X-API-Key": KEY } })
      expect(card.capabilities?.extendedAgentCard).toBe(true)
      expect(card.description).toContain("Model chosen because: a test")
      expect(card.supportedInterfaces[0]?.url).toBe(`${secured.baseUrl}/`)
    })

    it("accepts the key as X-API-Key", async () => {
      const client = await clientWith(fetch)
      const task = asTask(await client.sendMessage(send(userMessage("api key")), { serviceParameters: { "X-API-Key": KEY } }))
      expect(answerOf(task)).toBe("api key")
      const wrong = await rejection(client.sendMessage(send(userMessage("nope")), { serviceParameters: { "X-API-Key": "wrong" } }))
      expect(wrong).toBeInstanceOf(Error)
    })
  })

  describe.each(BINDINGS)("a2a-sdk-v03 (0.3.14) client over %s", (binding) => {
    it("sends a message and gets the completed task", async () => {
      const client = await v03Client(binding)
      const task = v03Task(await client.sendMessage({ message: v03Message("hello 0.3") }))
      expect(task.status.state).toBe("completed")
      expect(v03Text(task.artifacts?.[0]?.parts ?? [])).toBe("hello 0.3")
    })

    it("streams task, working, chunks and a final completed status", async () => {
      const client = await v03Client(binding)
      const events = await collect(client.sendMessageStream({ message: v03Message("a b") }))
      expect(events.map((event) => event.kind)).toEqual([
        "task",
        "status-update",
        "artifact-update",
        "artifact-update",
        "artifact-update",
        "status-update"
      ])
      const last = events[events.length - 1]
      expect(last?.kind === "status-update" ? [last.status.state, last.final] : undefined).toEqual(["completed", true])
      const first = events[1]
      expect(first?.kind === "status-update" ? [first.status.state, first.final] : undefined).toEqual(["working", false])
    })

    it("gets, cancels and resubscribes", async () => {
      const client = await v03Client(binding)
      const done = v03Task(await client.sendMessage({ message: v03Message("get me") }))
      const got = await client.getTask({ id: done.id, historyLength: 1 })
      expect(got.id).toBe(done.id)
      expect(got.history?.map((message) => v03Text(message.parts))).toEqual(["get me"])

      const running = v03Task(
        await client.sendMessage({
          message: v03Message("slow: p q r s t u v w x y"),
          configuration: { blocking: false }
        })
      )
      const resubscribed = client.resubscribeTask({ id: running.id })
      const snapshot = await resubscribed.next()
      expect(snapshot.value?.kind).toBe("task")
      const canceled = await client.cancelTask({ id: running.id })
      expect(canceled.status.state).toBe("canceled")
      const rest = await collect(resubscribed)
      const last = rest[rest.length - 1]
      expect(last?.kind === "status-update" ? [last.status.state, last.final] : undefined).toEqual(["canceled", true])
      const again = await rejection(client.cancelTask({ id: running.id }))
      expect(again.name).toBe("TaskNotCancelableError")
      const missing = await rejection(client.getTask({ id: randomUUID() }))
      expect(missing.name).toBe("TaskNotFoundError")
    })

    it("sets, gets, lists and deletes push configs", async () => {
      const client = await v03Client(binding)
      const task = v03Task(await client.sendMessage({ message: v03Message("push configs") }))
      const set = await client.setTaskPushNotificationConfig({
        taskId: task.id,
        pushNotificationConfig: { url: "http://127.0.0.1:9/v03", token: "v03-secret" }
      })
      const id = set.pushNotificationConfig.id ?? ""
      expect(id).not.toBe("")
      const got = await client.getTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id } as V03.TaskIdParams)
      expect(got.pushNotificationConfig.url).toBe("http://127.0.0.1:9/v03")
      expect(got.pushNotificationConfig.token).not.toContain("secret")
      const listed = await client.listTaskPushNotificationConfig({ id: task.id })
      expect(listed.map((config) => config.pushNotificationConfig.id)).toEqual([id])
      await client.deleteTaskPushNotificationConfig({ id: task.id, pushNotificationConfigId: id })
      await eventually("the config to be gone", async () => (await client.listTaskPushNotificationConfig({ id: task.id })).length === 0)
    })
  })
})
