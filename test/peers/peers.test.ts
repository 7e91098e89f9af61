// Proves the test peers behave like real A2A agents, using raw fetch and the SDK's own
// client only (none of our product code).
import { Role, TaskState } from "@a2a-js/sdk"
import type { Message, Part, StreamResponse, Task } from "@a2a-js/sdk"
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client"
import type { Client } from "@a2a-js/sdk/client"
import { randomUUID } from "node:crypto"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import {
  AUTH_REQUIRED_TEXT,
  chunkTexts,
  combinedText,
  dataPartFor,
  echoText,
  failureReason,
  FILES_AND_DATA_TEXT,
  INPUT_REQUIRED_QUESTION,
  parseDirective,
  PEER_DATA,
  PEER_IMAGE,
  REPORT,
  REPORT_PATH,
  withBehaviour
} from "./behaviours.js"
import { startLegacyAgent } from "./legacyCardStub.js"
import type { LegacyAgentHandle } from "./legacyCardStub.js"
import { startSdkAgent } from "./sdkAgent.js"
import type { SdkAgentHandle } from "./sdkAgent.js"
import { startV03Agent } from "./v03Agent.js"
import type { V03AgentHandle } from "./v03Agent.js"
import { startWebhookSink } from "./webhookSink.js"
import type { WebhookDelivery, WebhookSink } from "./webhookSink.js"

interface HttpResult {
  readonly status: number
  readonly headers: Headers
  readonly body: unknown
}

/** Walk into parsed wire JSON; undefined as soon as a step is missing. */
const at = (value: unknown, ...path: ReadonlyArray<string | number>): unknown =>
  path.reduce<unknown>(
    (current, key) => typeof current === "object" && current !== null ? (current as Record<string | number, unknown>)[key] : undefined,
    value
  )

const listAt = (value: unknown, ...path: ReadonlyArray<string | number>): ReadonlyArray<unknown> => {
  const found = at(value, ...path)
  return Array.isArray(found) ? found : []
}

// Non-JSON bodies (e.g. express's HTML 404 page) come back as undefined.
const parseLenient = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

const postJson = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<HttpResult> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: JSON.stringify(body)
  })
  return { status: response.status, headers: response.headers, body: parseLenient(await response.text()) }
}

const getJson = async (url: string, headers: Record<string, string> = {}): Promise<HttpResult> => {
  const response = await fetch(url, { headers })
  return { status: response.status, headers: response.headers, body: parseLenient(await response.text()) }
}

const rpc = (url: string, method: string, params: unknown, headers: Record<string, string> = {}): Promise<HttpResult> =>
  postJson(url, { jsonrpc: "2.0", id: randomUUID(), method, params }, headers)

const V1 = { "a2a-version": "1.0" }

/** A v1.0 ProtoJSON user message. */
const v1Message = (text: string, extra: Record<string, string> = {}) => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra
})

/** A v0.3 JSON-RPC user message (kind shapes). */
const v03Message = (text: string, extra: Record<string, string> = {}) => ({
  kind: "message",
  messageId: randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
  ...extra
})

/** A ts-proto user message for the SDK client. */
const sdkMessage = (text: string, ids: { taskId?: string; contextId?: string } = {}): Message => ({
  messageId: randomUUID(),
  contextId: ids.contextId ?? "",
  taskId: ids.taskId ?? "",
  role: Role.ROLE_USER,
  parts: [{ content: { $case: "text", value: text }, mediaType: "text/plain", filename: "", metadata: undefined }],
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const sdkSend = (message: Message, returnImmediately = false) => ({
  tenant: "",
  message,
  configuration: returnImmediately
    ? { acceptedOutputModes: [], taskPushNotificationConfig: undefined, returnImmediately: true }
    : undefined,
  metadata: undefined
})

const textOfParts = (parts: ReadonlyArray<Part>): string =>
  parts.flatMap((part) => (part.content?.$case === "text" ? [part.content.value] : [])).join("")

const expectTask = (result: Message | Task): Task => {
  if (!("status" in result)) throw new Error(`expected a Task, got ${JSON.stringify(result)}`)
  return result
}

const clientFor = (baseUrl: string, transport: "JSONRPC" | "HTTP+JSON"): Promise<Client> =>
  new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, { preferredTransports: [transport] })).createFromUrl(
    baseUrl
  )

const collect = async (stream: AsyncGenerator<StreamResponse, void, undefined>): Promise<StreamResponse[]> => {
  const events: StreamResponse[] = []
  for await (const event of stream) events.push(event)
  return events
}

/** Split a raw SSE body into the JSON of its data fields. */
const sseData = (body: string): unknown[] =>
  body
    .split(/\r?\n\r?\n/)
    .map((frame) =>
      frame
        .split(/\r?\n/)
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trim())
        .join("\n")
    )
    .filter((data) => data !== "")
    .map((data) => JSON.parse(data) as unknown)

const hasStatus = (state: string) => (delivery: WebhookDelivery): boolean => at(delivery.body, "statusUpdate", "status", "state") === state

describe("behaviour directives", () => {
  it("splits a leading behaviour:<name> off the text", () => {
    expect(parseDirective("behaviour:fail boom")).toEqual({ name: "fail", rest: "boom" })
    expect(parseDirective("plain text")).toEqual({ name: undefined, rest: "plain text" })
    expect(withBehaviour("message-only", "hi")).toBe("behaviour:message-only hi")
  })
})

describe("v1.0 SDK peer", () => {
  let agent: SdkAgentHandle
  let sink: WebhookSink

  beforeAll(async () => {
    agent = await startSdkAgent()
    sink = await startWebhookSink()
  })
  afterAll(async () => {
    await agent.close()
    await sink.close()
  })

  it("serves a card carrying the bound port, JSON-RPC first", async () => {
    const { status, body } = await getJson(agent.cardUrl, V1)
    expect(status).toBe(200)
    expect(at(body, "supportedInterfaces")).toEqual([
      { url: agent.jsonRpcUrl, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
      { url: agent.restUrl, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }
    ])
    expect(agent.jsonRpcUrl.startsWith(agent.baseUrl)).toBe(true)
    expect(body).toMatchObject({ capabilities: { streaming: true, pushNotifications: true } })
  })

  it("completes SendMessage over JSON-RPC with A2A-Version 1.0 and records the header", async () => {
    const before = agent.requests.length
    const { body } = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("hello") }, V1)
    expect(body).toMatchObject({
      result: { task: { status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: echoText("hello") }] }] } }
    })
    const recorded = agent.requests.slice(before)
    expect(recorded).toHaveLength(1)
    expect(recorded[0]).toMatchObject({ method: "POST", path: "/a2a/jsonrpc", status: 200, body: { method: "SendMessage" } })
    expect(recorded[0]?.headers["a2a-version"]).toBe("1.0")
  })

  it("rejects SendMessage without A2A-Version with -32009", async () => {
    const before = agent.requests.length
    const { body } = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("hello") })
    expect(at(body, "error", "code")).toBe(-32009)
    expect(agent.requests[before]?.headers["a2a-version"]).toBeUndefined()
  })

  it("completes message:send over REST", async () => {
    const { status, body } = await postJson(
      `${agent.restUrl}/message:send`,
      { message: v1Message("over rest") },
      { ...V1, "content-type": "application/a2a+json" }
    )
    expect(status).toBe(200)
    expect(body).toMatchObject({
      task: { status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: echoText("over rest") }] }] }
    })
  })

  it("picks behaviours per message: message-only, fail, data-and-file, unknown", async () => {
    const send = (text: string) => rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message(text) }, V1)

    const reply = await send(withBehaviour("message-only", "hi"))
    expect(at(reply.body, "result", "message")).toMatchObject({ role: "ROLE_AGENT", parts: [{ text: echoText("hi") }] })

    const failed = await send(withBehaviour("fail", "boom"))
    expect(at(failed.body, "result", "task", "status")).toMatchObject({
      state: "TASK_STATE_FAILED",
      message: { role: "ROLE_AGENT", parts: [{ text: failureReason("boom") }] }
    })

    const mixed = await send(withBehaviour("data-and-file", "abc"))
    expect(listAt(mixed.body, "result", "task", "artifacts", 0, "parts")).toEqual([
      expect.objectContaining({ text: echoText("abc") }),
      expect.objectContaining({ data: dataPartFor("abc"), mediaType: "application/json" }),
      expect.objectContaining({ raw: Buffer.from("abc").toString("base64"), filename: "echo.txt", mediaType: "text/plain" })
    ])

    const unknown = await send("behaviour:nope x")
    expect(at(unknown.body, "result", "task", "status", "state")).toBe("TASK_STATE_FAILED")
    expect(at(unknown.body, "result", "task", "status", "message", "parts", 0, "text")).toContain("Unknown test behaviour \"nope\"")
  })

  it("files-and-data: an image as bytes, a report by a URL it serves, a data part", async () => {
    const { body } = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message(withBehaviour("files-and-data", "q3")) }, V1)
    expect(at(body, "result", "task", "artifacts")).toEqual([
      expect.objectContaining({
        artifactId: "chart",
        parts: [expect.objectContaining({ raw: PEER_IMAGE.bytesBase64, filename: PEER_IMAGE.name, mediaType: PEER_IMAGE.mimeType })]
      }),
      expect.objectContaining({
        artifactId: "report",
        parts: [expect.objectContaining({ url: `${agent.baseUrl}${REPORT_PATH}`, filename: REPORT.name, mediaType: REPORT.mimeType })]
      }),
      expect.objectContaining({ artifactId: "figures", parts: [expect.objectContaining({ data: PEER_DATA })] })
    ])
    expect(at(body, "result", "task", "status", "message", "parts", 0, "text")).toBe(FILES_AND_DATA_TEXT)
    const report = await fetch(`${agent.baseUrl}${REPORT_PATH}`)
    expect([report.headers.get("content-type"), Buffer.from(await report.arrayBuffer())]).toEqual([REPORT.mimeType, REPORT.bytes])
  })

  it.each(["JSONRPC", "HTTP+JSON"] as const)("streams chunked-artifact in order over %s", async (transport) => {
    const client = await clientFor(agent.baseUrl, transport)
    const events = await collect(client.sendMessageStream(sdkSend(sdkMessage(withBehaviour("chunked-artifact", "xyz")))))
    expect(events.map((event) => event.payload?.$case)).toEqual([
      "task",
      "statusUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "artifactUpdate",
      "statusUpdate"
    ])
    const chunks = events.flatMap((event) => (event.payload?.$case === "artifactUpdate" ? [event.payload.value] : []))
    expect(chunks.map((chunk) => [chunk.append, chunk.lastChunk])).toEqual([
      [false, false],
      [true, false],
      [true, true]
    ])
    expect(chunks.map((chunk) => textOfParts(chunk.artifact?.parts ?? []))).toEqual(chunkTexts("xyz"))
    const last = events.at(-1)?.payload
    expect(last?.$case === "statusUpdate" ? last.value.status?.state : undefined).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(agent.requests.at(-1)?.path).toBe(transport === "JSONRPC" ? "/a2a/jsonrpc" : "/a2a/rest/message:stream")
  })

  it("runs an input-required multi-turn task", async () => {
    const client = await clientFor(agent.baseUrl, "JSONRPC")
    const first = expectTask(await client.sendMessage(sdkSend(sdkMessage(withBehaviour("input-required", "first")))))
    expect(first.status?.state).toBe(TaskState.TASK_STATE_INPUT_REQUIRED)
    expect(textOfParts(first.status?.message?.parts ?? [])).toBe(INPUT_REQUIRED_QUESTION)

    const second = expectTask(
      await client.sendMessage(sdkSend(sdkMessage("second", { taskId: first.id, contextId: first.contextId })))
    )
    expect(second.id).toBe(first.id)
    expect(second.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(textOfParts(second.artifacts[0]?.parts ?? [])).toBe(combinedText(["first", "second"]))
  })

  it("parks auth-required tasks with a status message", async () => {
    const { body } = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message(withBehaviour("auth-required", "x")) }, V1)
    expect(at(body, "result", "task", "status")).toMatchObject({
      state: "TASK_STATE_AUTH_REQUIRED",
      message: { parts: [{ text: AUTH_REQUIRED_TEXT }] }
    })
  })

  it("cancels a slow-cancellable task well before it would complete", async () => {
    const client = await clientFor(agent.baseUrl, "JSONRPC")
    const started = Date.now()
    const submitted = expectTask(await client.sendMessage(sdkSend(sdkMessage(withBehaviour("slow-cancellable", "wait")), true)))
    const canceled = await client.cancelTask({ tenant: "", id: submitted.id, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
    expect(Date.now() - started).toBeLessThan(1500)
    const fetched = await client.getTask({ tenant: "", id: submitted.id })
    expect(fetched.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("cancels a task parked in input-required", async () => {
    const parked = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message(withBehaviour("input-required", "q")) }, V1)
    const taskId = at(parked.body, "result", "task", "id")
    const canceled = await rpc(agent.jsonRpcUrl, "CancelTask", { id: taskId }, V1)
    expect(at(canceled.body, "result", "status", "state")).toBe("TASK_STATE_CANCELED")
  })

  it("delivers push notifications with X-A2A-Notification-Token when only a token is set", async () => {
    const { body } = await rpc(
      agent.jsonRpcUrl,
      "SendMessage",
      { message: v1Message("push token"), configuration: { taskPushNotificationConfig: { url: `${sink.url}/token`, token: "tok-1" } } },
      V1
    )
    const done = await sink.waitFor((d) => d.path === "/token" && hasStatus("TASK_STATE_COMPLETED")(d))
    expect(done.headers["x-a2a-notification-token"]).toBe("tok-1")
    expect(done.headers["authorization"]).toBeUndefined()
    expect(done.headers["content-type"]).toContain("application/a2a+json")
    expect(at(done.body, "statusUpdate", "taskId")).toBe(at(body, "result", "task", "id"))
  })

  it("delivers push notifications with Authorization when authentication is set", async () => {
    await rpc(
      agent.jsonRpcUrl,
      "SendMessage",
      {
        message: v1Message("push auth"),
        configuration: {
          taskPushNotificationConfig: { url: `${sink.url}/auth`, authentication: { scheme: "Bearer", credentials: "hook-secret" } }
        }
      },
      V1
    )
    const done = await sink.waitFor((d) => d.path === "/auth" && hasStatus("TASK_STATE_COMPLETED")(d))
    expect(done.headers["authorization"]).toBe("Bearer hook-secret")
    const first = await sink.waitFor((d) => d.path === "/auth")
    expect(Object.keys(first.body ?? {})).toEqual(["task"])
  })
})

describe("v1.0 SDK peer options", () => {
  const started: Array<{ close(): Promise<void> }> = []
  afterEach(async () => {
    await Promise.all(started.splice(0).map((peer) => peer.close()))
  })
  const start = async (...args: Parameters<typeof startSdkAgent>): Promise<SdkAgentHandle> => {
    const agent = await startSdkAgent(...args)
    started.push(agent)
    return agent
  }
  const bindingsOf = (card: unknown): ReadonlyArray<unknown> =>
    listAt(card, "supportedInterfaces").map((entry) => `${String(at(entry, "protocolBinding"))}@${String(at(entry, "protocolVersion"))}`)

  it("declares and mounts only the requested bindings, in order", async () => {
    const restOnly = await start({ bindings: ["HTTP+JSON"] })
    expect(bindingsOf((await getJson(restOnly.cardUrl, V1)).body)).toEqual(["HTTP+JSON@1.0"])
    expect((await rpc(restOnly.jsonRpcUrl, "SendMessage", { message: v1Message("x") }, V1)).status).toBe(404)

    const restFirst = await start({ bindings: ["HTTP+JSON", "JSONRPC"], capabilities: { streaming: false } })
    const card = (await getJson(restFirst.cardUrl, V1)).body
    expect(bindingsOf(card)).toEqual(["HTTP+JSON@1.0", "JSONRPC@1.0"])
    expect(at(card, "capabilities", "streaming")).toBe(false)
  })

  it("answers 401 with WWW-Authenticate without the bearer token, keeps the card open", async () => {
    const agent = await start({ requireBearer: "s3cret", extendedCard: true })
    const card = await getJson(agent.cardUrl, V1)
    expect(card.status).toBe(200)
    expect(at(card.body, "capabilities", "extendedAgentCard")).toBe(true)
    expect(at(card.body, "securitySchemes", "bearer")).toBeDefined()

    const anonymous = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("x") }, V1)
    expect(anonymous.status).toBe(401)
    expect(anonymous.headers.get("www-authenticate")).toMatch(/^Bearer/)
    expect(agent.requests.at(-1)).toMatchObject({ path: "/a2a/jsonrpc", status: 401 })
    expect(agent.requests.at(-1)?.headers["authorization"]).toBeUndefined()
    const wrong = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("x") }, { ...V1, authorization: "Bearer nope" })
    expect(wrong.status).toBe(401)

    const auth = { ...V1, authorization: "Bearer s3cret" }
    const ok = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("x") }, auth)
    expect(at(ok.body, "result", "task", "status", "state")).toBe("TASK_STATE_COMPLETED")
    expect(agent.requests.at(-1)?.headers["authorization"]).toBe("Bearer s3cret")

    const extended = await rpc(agent.jsonRpcUrl, "GetExtendedAgentCard", {}, auth)
    expect(listAt(extended.body, "result", "skills").map((skill) => at(skill, "id"))).toContain("extended-only")
  })

  it("speaks v0.3 without the header when legacyCompat is on", async () => {
    const agent = await start({ legacyCompat: true })
    const legacyCard = (await getJson(agent.cardUrl)).body
    expect(legacyCard).toMatchObject({ protocolVersion: "0.3", url: agent.jsonRpcUrl, preferredTransport: "JSONRPC" })
    const modernCard = (await getJson(agent.cardUrl, V1)).body
    expect(bindingsOf(modernCard)).toEqual(expect.arrayContaining(["JSONRPC@1.0", "JSONRPC@0.3", "HTTP+JSON@1.0", "HTTP+JSON@0.3"]))

    const legacy = await rpc(agent.jsonRpcUrl, "message/send", { message: v03Message("old") })
    expect(at(legacy.body, "result")).toMatchObject({
      kind: "task",
      status: { state: "completed" },
      artifacts: [{ parts: [{ kind: "text", text: echoText("old") }] }]
    })

    const modern = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("new") }, V1)
    expect(at(modern.body, "result", "task", "status", "state")).toBe("TASK_STATE_COMPLETED")
  })
})

describe("v0.3 SDK peer (0.3.14)", () => {
  let agent: V03AgentHandle
  let sink: WebhookSink
  beforeAll(async () => {
    agent = await startV03Agent()
    sink = await startWebhookSink()
  })
  afterAll(async () => {
    await agent.close()
    await sink.close()
  })

  it("serves a v0.3 card pointing at its JSON-RPC endpoint", async () => {
    const { body } = await getJson(agent.cardUrl)
    expect(body).toMatchObject({ protocolVersion: "0.3.0", url: agent.jsonRpcUrl, preferredTransport: "JSONRPC" })
    expect(at(body, "supportedInterfaces")).toBeUndefined()
    expect(listAt(body, "additionalInterfaces")).toContainEqual({ url: agent.restUrl, transport: "HTTP+JSON" })
  })

  it("answers message/send in kind shapes and -32601 on SendMessage", async () => {
    const { body } = await rpc(agent.jsonRpcUrl, "message/send", { message: v03Message("hi") })
    expect(at(body, "result")).toMatchObject({
      kind: "task",
      status: { state: "completed" },
      artifacts: [{ parts: [{ kind: "text", text: echoText("hi") }] }]
    })

    const v1 = await rpc(agent.jsonRpcUrl, "SendMessage", { message: v1Message("hi") }, V1)
    expect(at(v1.body, "error", "code")).toBe(-32601)
  })

  it("files-and-data: an image as bytes, a report by a URL it serves, a data part", async () => {
    const { body } = await rpc(agent.jsonRpcUrl, "message/send", { message: v03Message(withBehaviour("files-and-data", "q3")) })
    expect(listAt(body, "result", "artifacts").map((artifact) => at(artifact, "parts"))).toEqual([
      [{ kind: "file", file: { bytes: PEER_IMAGE.bytesBase64, name: PEER_IMAGE.name, mimeType: PEER_IMAGE.mimeType } }],
      [{ kind: "file", file: { uri: `${agent.baseUrl}${REPORT_PATH}`, name: REPORT.name, mimeType: REPORT.mimeType } }],
      [{ kind: "data", data: PEER_DATA }]
    ])
    const report = await fetch(`${agent.baseUrl}${REPORT_PATH}`)
    expect(Buffer.from(await report.arrayBuffer())).toEqual(REPORT.bytes)
  })

  it("streams with final flags on message/stream", async () => {
    const response = await fetch(agent.jsonRpcUrl, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        jsonrpc: "2.0",
        id: 9,
        method: "message/stream",
        params: { message: v03Message(withBehaviour("chunked-artifact", "q")) }
      })
    })
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const results = sseData(await response.text()).map((frame) => at(frame, "result"))
    expect(results.map((result) => at(result, "kind"))).toEqual([
      "task",
      "status-update",
      "artifact-update",
      "artifact-update",
      "artifact-update",
      "status-update"
    ])
    expect(results[1]).toMatchObject({ final: false, status: { state: "working" } })
    expect(results.at(-1)).toMatchObject({ final: true, status: { state: "completed" } })
  })

  it("cancels a running slow-cancellable task via tasks/cancel", async () => {
    const started = Date.now()
    const running = await rpc(agent.jsonRpcUrl, "message/send", {
      message: v03Message(withBehaviour("slow-cancellable", "z")),
      configuration: { blocking: false }
    })
    const canceled = await rpc(agent.jsonRpcUrl, "tasks/cancel", { id: at(running.body, "result", "id") })
    expect(at(canceled.body, "result")).toMatchObject({ kind: "task", status: { state: "canceled" } })
    expect(Date.now() - started).toBeLessThan(1500)
  })

  it("pushes the full Task with X-A2A-Notification-Token", async () => {
    await rpc(agent.jsonRpcUrl, "message/send", {
      message: v03Message("push"),
      configuration: { pushNotificationConfig: { url: `${sink.url}/v03`, token: "tok-3" } }
    })
    const done = await sink.waitFor((d) => at(d.body, "status", "state") === "completed")
    expect(done.headers["x-a2a-notification-token"]).toBe("tok-3")
    expect(done.body).toMatchObject({ kind: "task", status: { state: "completed" } })
  })
})

describe("legacy agent.json stub", () => {
  let agent: LegacyAgentHandle
  beforeAll(async () => {
    agent = await startLegacyAgent()
  })
  afterAll(async () => {
    await agent.close()
  })

  it("serves only /.well-known/agent.json", async () => {
    expect((await getJson(`${agent.baseUrl}/.well-known/agent-card.json`)).status).toBe(404)
    const { status, body } = await getJson(agent.cardUrl)
    expect(status).toBe(200)
    expect(body).toMatchObject({ url: agent.rpcUrl, protocolVersion: "0.2.5" })
    expect(at(body, "supportedInterfaces")).toBeUndefined()
    expect(agent.requests.map((r) => [r.method, r.path, r.status])).toEqual([
      ["GET", "/.well-known/agent-card.json", 404],
      ["GET", "/.well-known/agent.json", 200]
    ])
  })

  it("answers message/send at the card url and -32601 otherwise", async () => {
    const cardUrl = String(at((await getJson(agent.cardUrl)).body, "url"))
    const { body } = await rpc(cardUrl, "message/send", { message: v03Message("legacy") })
    expect(at(body, "result")).toMatchObject({
      kind: "task",
      status: { state: "completed" },
      artifacts: [{ parts: [{ kind: "text", text: echoText("legacy") }] }]
    })
    expect(agent.requests.at(-1)?.body).toMatchObject({ method: "message/send" })

    const v1 = await rpc(cardUrl, "SendMessage", { message: v1Message("x") }, V1)
    expect(at(v1.body, "error", "code")).toBe(-32601)
  })
})

describe("webhook sink", () => {
  it("records raw bodies and rejects waits on timeout", async () => {
    const sink = await startWebhookSink()
    try {
      await fetch(`${sink.url}/raw?x=1`, { method: "POST", body: "not json" })
      const delivery = await sink.waitFor((d) => d.path === "/raw", 500)
      expect(delivery).toMatchObject({ url: "/raw?x=1", rawBody: "not json", body: undefined })
      await expect(sink.waitFor((d) => d.path === "/never", 50)).rejects.toThrow(/0\/1 matching/)
    } finally {
      await sink.close()
    }
  })
})
