// The agent server as SDKs other than the JS one talk to it: bodies in the Python SDK's style
// (proto field names, enum numbers) on every route of both generations and bindings; the
// JSON-RPC error ladder, rung by rung, on both generations; and error bodies a person can read,
// checked over a corpus of broken requests on every route.
import { FastCheck as fc } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { unknownProtoFields, V03_PROTO, V1_PROTO } from "../helpers/protoFields.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"

type Json = Record<string, any>

interface Answer {
  readonly status: number
  readonly contentType: string
  readonly text: string
  readonly json: Json
}

const V1 = { "a2a-version": "1.0" }

const call = async (method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
    signal: AbortSignal.timeout(5000)
  })
  const text = await response.text()
  const contentType = response.headers.get("content-type") ?? ""
  const json = contentType.includes("json") && text !== "" ? (JSON.parse(text) as Json) : {}
  return { status: response.status, contentType, text, json }
}

/** The `data:` payloads of a whole SSE answer. */
const sseData = (answer: Answer): Json[] =>
  answer.text.split("\n\n").flatMap((frame) => {
    const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("")
    return data === "" ? [] : [JSON.parse(data) as Json]
  })

let agent: AgentHandle
let base: string
let sink: WebhookSink

beforeAll(async () => {
  ;[agent, sink] = await Promise.all([startAgent(), startWebhookSink()])
  base = agent.baseUrl
})

afterAll(async () => {
  await Promise.all([agent?.close(), sink?.close()])
})

const rpc = (method: string, params: unknown, headers: Record<string, string> = V1, id: unknown = 1, accept = "application/json") =>
  call("POST", `${base}/`, { jsonrpc: "2.0", id, method, params }, { accept, ...headers })

// ---------------------------------------------------------------------------
// Bodies as the Python SDK writes them: proto field names, enums as numbers

const pyMessage = (text: string, extra: Json = {}) => ({ message_id: randomUUID(), role: 1, parts: [{ text }], ...extra })
const pyMessageV03Rest = (text: string, extra: Json = {}) => ({ message_id: randomUUID(), role: 1, content: [{ text }], ...extra })
const pyMessageV03Rpc = (text: string, extra: Json = {}) => ({
  message_id: randomUUID(),
  role: 1,
  parts: [{ kind: "text", text }],
  ...extra
})

describe("bodies in the Python SDK's style, on every route", () => {
  it("v1.0 HTTP+JSON: send, stream, get, list, cancel, subscribe and push configs", async () => {
    const sent = await call("POST", `${base}/message:send`, {
      message: pyMessage("hello python", { metadata: { trace_id: "t-1" } }),
      configuration: { accepted_output_modes: ["text/plain"], history_length: 1, return_immediately: false }
    }, V1)
    expect(sent.status).toBe(200)
    const task = sent.json["task"]
    expect(task["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    expect(task["history"]).toHaveLength(1)

    const streamed = sseData(
      await call("POST", `${base}/message:stream`, { message: pyMessage("streamed words") }, { ...V1, accept: "text/event-stream" })
    )
    expect(streamed.at(-1)?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_COMPLETED")

    const got = await call("GET", `${base}/tasks/${task["id"]}?history_length=0`, undefined, V1)
    expect(got.status).toBe(200)
    expect(got.json["history"]).toBeUndefined()

    const listed = await call(
      "GET",
      `${base}/tasks?context_id=${task["contextId"]}&status=3&page_size=5&include_artifacts=true`,
      undefined,
      V1
    )
    expect(listed.status).toBe(200)
    expect(listed.json["tasks"].map((t: Json) => t["id"])).toEqual([task["id"]])
    expect(listed.json["tasks"][0]["artifacts"]).toBeDefined()

    const hanging = await call(
      "POST",
      `${base}/message:send`,
      { message: pyMessage("hang"), configuration: { return_immediately: true } },
      V1
    )
    const hangingId = hanging.json["task"]["id"]
    const config = await call("POST", `${base}/tasks/${hangingId}/pushNotificationConfigs`, {
      id: "py-config",
      url: `${sink.url}/py`,
      token: "py-token",
      authentication: { scheme: "Bearer", credentials: "py-secret" }
    }, V1)
    expect(config.status).toBe(201)
    expect(config.json).toMatchObject({ id: "py-config", taskId: hangingId, url: `${sink.url}/py` })
    expect((await call("GET", `${base}/tasks/${hangingId}/pushNotificationConfigs/py-config`, undefined, V1)).json["id"]).toBe("py-config")
    expect((await call("GET", `${base}/tasks/${hangingId}/pushNotificationConfigs?page_size=10`, undefined, V1)).json["configs"])
      .toHaveLength(1)
    expect((await call("DELETE", `${base}/tasks/${hangingId}/pushNotificationConfigs/py-config`, undefined, V1)).status).toBe(204)

    const subscribed = call("GET", `${base}/tasks/${hangingId}:subscribe`, undefined, { ...V1, accept: "text/event-stream" })
    const canceled = await call("POST", `${base}/tasks/${hangingId}:cancel`, { metadata: { reason: "python says stop" } }, V1)
    expect(canceled.json["status"]["state"]).toBe("TASK_STATE_CANCELED")
    const events = sseData(await subscribed)
    expect(events.at(-1)?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_CANCELED")
  })

  it("v1.0 HTTP+JSON, the product's own paths", async () => {
    const sent = await call(
      "POST",
      `${base}/messages`,
      { message: pyMessage("own path"), configuration: { return_immediately: false } },
      V1
    )
    const id = sent.json["task"]["id"]
    const config = await call("PUT", `${base}/tasks/${id}/notification`, { url: `${sink.url}/own`, token: "tok" }, V1)
    expect(config.json).toMatchObject({ taskId: id, url: `${sink.url}/own` })
  })

  it("v1.0 JSON-RPC: every method with params in proto names", async () => {
    const sent = await rpc("SendMessage", {
      message: pyMessage("json-rpc python"),
      configuration: { history_length: 2, return_immediately: false, accepted_output_modes: ["text/plain"] }
    })
    const task = sent.json["result"]["task"]
    expect(task["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    expect(task["history"]).toHaveLength(1)
    const streamed = sseData(await rpc("SendStreamingMessage", { message: pyMessage("rpc stream") }, V1, "s", "text/event-stream"))
    expect(streamed.at(-1)?.["result"]?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_COMPLETED")
    expect((await rpc("GetTask", { id: task["id"], history_length: 1 })).json["result"]["history"]).toHaveLength(1)
    const listed = await rpc("ListTasks", { context_id: task["contextId"], status: 3, page_size: 2, include_artifacts: false })
    expect(listed.json["result"]["tasks"].map((t: Json) => t["id"])).toEqual([task["id"]])

    const hanging =
      (await rpc("SendMessage", { message: pyMessage("hang"), configuration: { return_immediately: true } })).json["result"]["task"]
    const created = await rpc("CreateTaskPushNotificationConfig", { task_id: hanging["id"], id: "rpc-config", url: `${sink.url}/rpc` })
    expect(created.json["result"]).toMatchObject({ taskId: hanging["id"], id: "rpc-config" })
    expect((await rpc("GetTaskPushNotificationConfig", { task_id: hanging["id"], id: "rpc-config" })).json["result"]["id"]).toBe(
      "rpc-config"
    )
    expect((await rpc("ListTaskPushNotificationConfigs", { task_id: hanging["id"], page_size: 5 })).json["result"]["configs"]).toHaveLength(
      1
    )
    expect((await rpc("DeleteTaskPushNotificationConfig", { task_id: hanging["id"], id: "rpc-config" })).json).not.toHaveProperty("error")
    const subscribed = rpc("SubscribeToTask", { id: hanging["id"] }, V1, "sub", "text/event-stream")
    expect((await rpc("CancelTask", { id: hanging["id"], metadata: { why_not: true } })).json["result"]["status"]["state"]).toBe(
      "TASK_STATE_CANCELED"
    )
    expect(sseData(await subscribed).at(-1)?.["result"]?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_CANCELED")
    // Without --auth there is no extended card (issue 19.5): the method answers UnsupportedOperation.
    expect((await rpc("GetExtendedAgentCard", {})).json["error"]["code"]).toBe(-32004)
  })

  it("v0.3 HTTP+JSON under /v1: `content` parts, `push_notification`, `push_notification_config`", async () => {
    const sent = await call("POST", `${base}/v1/message:send`, {
      message: pyMessageV03Rest("hello v0.3"),
      configuration: { accepted_output_modes: ["text/plain"], history_length: 1, blocking: true }
    })
    expect(sent.status).toBe(200)
    const task = sent.json["task"]
    expect(task["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    expect(task["history"][0]["content"]).toEqual([{ text: "hello v0.3" }])

    const byRequest = await call("POST", `${base}/v1/message:send`, {
      request: pyMessageV03Rest("under request"),
      configuration: { blocking: true }
    })
    expect(byRequest.json["task"]["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    const streamed = sseData(
      await call("POST", `${base}/v1/message:stream`, { message: pyMessageV03Rest("v03 stream") }, { accept: "text/event-stream" })
    )
    expect(streamed.at(-1)?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_COMPLETED")
    expect((await call("GET", `${base}/v1/tasks/${task["id"]}?history_length=1`)).json["history"]).toHaveLength(1)

    const hanging = (await call("POST", `${base}/v1/message:send`, { message: pyMessageV03Rest("hang"), configuration: {} })).json["task"]
    expect(hanging["status"]["state"]).not.toBe("TASK_STATE_COMPLETED")
    const created = await call("POST", `${base}/v1/tasks/${hanging["id"]}/pushNotificationConfigs`, {
      parent: `tasks/${hanging["id"]}`,
      config_id: "v03-config",
      config: {
        name: `tasks/${hanging["id"]}/pushNotificationConfigs/v03-config`,
        push_notification_config: { url: `${sink.url}/v03`, token: "t" }
      }
    })
    expect(created.status).toBe(201)
    expect(created.json["pushNotificationConfig"]["url"]).toBe(`${sink.url}/v03`)
    const bare = await call("POST", `${base}/v1/task/${hanging["id"]}/pushNotificationConfigs`, {
      push_notification_config: { id: "v03-bare", url: `${sink.url}/bare`, authentication: { schemes: ["Bearer"], credentials: "c" } }
    })
    expect(bare.status).toBe(201)
    const path = `${base}/v1/tasks/${hanging["id"]}/pushNotificationConfigs`
    expect((await call("GET", `${path}/v03-bare`)).json["pushNotificationConfig"]["url"]).toBe(`${sink.url}/bare`)
    expect((await call("GET", path)).json["configs"]).toHaveLength(2)
    expect((await call("DELETE", `${path}/v03-bare`)).status).toBe(204)
    const subscribed = call("GET", `${base}/v1/tasks/${hanging["id"]}:subscribe`, undefined, { accept: "text/event-stream" })
    expect((await call("POST", `${base}/v1/tasks/${hanging["id"]}:cancel`, {})).json["status"]["state"]).toBe("TASK_STATE_CANCELLED")
    expect(sseData(await subscribed).at(-1)?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_CANCELLED")
  })

  it("v0.3 JSON-RPC: every method with params in proto names", async () => {
    const noVersion = {}
    const sent = await rpc("message/send", {
      message: pyMessageV03Rpc("rpc v0.3"),
      configuration: { accepted_output_modes: ["text/plain"], history_length: 1, blocking: true }
    }, noVersion)
    const task = sent.json["result"]
    expect(task).toMatchObject({ kind: "task", status: { state: "completed" } })
    const streamed = sseData(
      await rpc("message/stream", { message: pyMessageV03Rpc("v03 rpc stream") }, noVersion, "s", "text/event-stream")
    )
    expect(streamed.at(-1)?.["result"]).toMatchObject({ kind: "status-update", final: true, status: { state: "completed" } })
    expect((await rpc("tasks/get", { id: task["id"], history_length: 1 }, noVersion)).json["result"]["history"]).toHaveLength(1)

    const hanging =
      (await rpc("message/send", { message: pyMessageV03Rpc("hang"), configuration: { blocking: false } }, noVersion)).json["result"]
    const set = await rpc("tasks/pushNotificationConfig/set", {
      task_id: hanging["id"],
      push_notification_config: { id: "rpc03", url: `${sink.url}/rpc03` }
    }, noVersion)
    expect(set.json["result"]).toMatchObject({ taskId: hanging["id"], pushNotificationConfig: { id: "rpc03" } })
    const get = await rpc("tasks/pushNotificationConfig/get", { id: hanging["id"], push_notification_config_id: "rpc03" }, noVersion)
    expect(get.json["result"]["pushNotificationConfig"]["url"]).toBe(`${sink.url}/rpc03`)
    expect((await rpc("tasks/pushNotificationConfig/list", { id: hanging["id"] }, noVersion)).json["result"]).toHaveLength(1)
    const deleted = await rpc("tasks/pushNotificationConfig/delete", { id: hanging["id"], push_notification_config_id: "rpc03" }, noVersion)
    expect(deleted.json).not.toHaveProperty("error")
    const subscribed = rpc("tasks/resubscribe", { id: hanging["id"] }, noVersion, "sub", "text/event-stream")
    expect((await rpc("tasks/cancel", { id: hanging["id"] }, noVersion)).json["result"]["status"]["state"]).toBe("canceled")
    expect(sseData(await subscribed).at(-1)?.["result"]?.["status"]?.["state"]).toBe("canceled")
  })
})

describe("answers with only the fields the proto defines (strict ProtoJSON readers refuse others)", () => {
  /** A message with every kind of part, names and metadata included: what v0.3 REST cannot carry must go. */
  const richParts = [
    { text: "look", metadata: { note: "n" } },
    { url: "https://files.example/a.pdf", mediaType: "application/pdf", filename: "a.pdf" },
    { raw: "aGk=", mediaType: "text/plain", filename: "hi.txt" },
    { data: [1, 2] }
  ]

  it("v0.3 HTTP+JSON under /v1", async () => {
    const message = { messageId: randomUUID(), role: "ROLE_USER", parts: richParts }
    const v03Message = () => ({ messageId: randomUUID(), role: "ROLE_USER", content: [{ text: "in v0.3" }], metadata: { a: 1 } })
    const v1Sent = await call("POST", `${base}/message:send`, { message }, V1)
    const id = v1Sent.json["task"]["id"]
    await call("POST", `${base}/v1/tasks/${id}/pushNotificationConfigs`, {
      pushNotificationConfig: {
        id: "strict",
        url: `${sink.url}/strict`,
        token: "t",
        authentication: { schemes: ["Bearer"], credentials: "c" }
      }
    })
    const answers: ReadonlyArray<readonly [string, string, unknown]> = [
      ["GET /v1/tasks/{id}", "Task", (await call("GET", `${base}/v1/tasks/${id}`)).json],
      ["POST /v1/message:send", "SendMessageResponse", (await call("POST", `${base}/v1/message:send`, { message: v03Message() })).json],
      ...sseData(await call("POST", `${base}/v1/message:stream`, { message: v03Message() }, { accept: "text/event-stream" }))
        .map((event): readonly [string, string, unknown] => ["POST /v1/message:stream", "StreamResponse", event]),
      [
        "GET /v1/tasks/{id}/pushNotificationConfigs/strict",
        "TaskPushNotificationConfig",
        (await call("GET", `${base}/v1/tasks/${id}/pushNotificationConfigs/strict`)).json
      ],
      [
        "GET /v1/tasks/{id}/pushNotificationConfigs",
        "ListTaskPushNotificationConfigResponse",
        (await call("GET", `${base}/v1/tasks/${id}/pushNotificationConfigs`)).json
      ]
    ]
    for (const [route, type, json] of answers) expect(unknownProtoFields(V03_PROTO, type, json), route).toEqual([])
    const history = (answers[0]![2] as Json)["history"][0]["content"]
    expect(history).toEqual([
      { text: "look" },
      { file: { fileWithUri: "https://files.example/a.pdf", mimeType: "application/pdf" } },
      { file: { fileWithBytes: "aGk=", mimeType: "text/plain" } },
      { data: { data: { value: [1, 2] } } }
    ])
  })

  it("v1.0, both bindings", async () => {
    const message = () => ({ messageId: randomUUID(), role: "ROLE_USER", parts: richParts })
    const sent = await call("POST", `${base}/message:send`, { message: message() }, V1)
    const id = sent.json["task"]["id"]
    await rpc("CreateTaskPushNotificationConfig", {
      taskId: id,
      id: "strict",
      url: `${sink.url}/v1`,
      authentication: { scheme: "Bearer", credentials: "c" }
    })
    const answers: ReadonlyArray<readonly [string, string, unknown]> = [
      ["POST /message:send", "SendMessageResponse", sent.json],
      ["GET /tasks/{id}", "Task", (await call("GET", `${base}/tasks/${id}`, undefined, V1)).json],
      ["GET /tasks", "ListTasksResponse", (await call("GET", `${base}/tasks?includeArtifacts=true`, undefined, V1)).json],
      ...sseData(await call("POST", `${base}/message:stream`, { message: message() }, { ...V1, accept: "text/event-stream" }))
        .map((event): readonly [string, string, unknown] => ["POST /message:stream", "StreamResponse", event]),
      [
        "GET /tasks/{id}/pushNotificationConfigs",
        "ListTaskPushNotificationConfigsResponse",
        (await call("GET", `${base}/tasks/${id}/pushNotificationConfigs`, undefined, V1)).json
      ],
      ["GET /.well-known/agent-card.json", "AgentCard", (await call("GET", `${base}/.well-known/agent-card.json`, undefined, V1)).json],
      ["SendMessage", "SendMessageResponse", (await rpc("SendMessage", { message: message() })).json["result"]],
      ["GetTask", "Task", (await rpc("GetTask", { id })).json["result"]],
      [
        "GetTaskPushNotificationConfig",
        "TaskPushNotificationConfig",
        (await rpc("GetTaskPushNotificationConfig", { taskId: id, id: "strict" })).json["result"]
      ]
    ]
    for (const [route, type, json] of answers) expect(unknownProtoFields(V1_PROTO, type, json), route).toEqual([])
  })
})

// ---------------------------------------------------------------------------
// The JSON-RPC error ladder

const GENERATIONS = [
  {
    name: "1.0",
    headers: V1,
    send: "SendMessage",
    message: () => ({ messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }] })
  },
  {
    name: "0.3",
    headers: {},
    send: "message/send",
    message: () => ({ kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hi" }] })
  }
] as const

describe.each(GENERATIONS)("the JSON-RPC error ladder, A2A $name", (generation) => {
  const raw = (body: unknown) => call("POST", `${base}/`, body, generation.headers)
  const envelope = (fields: Json) => raw({ jsonrpc: "2.0", ...fields })
  const expectError = (answer: Answer, code: number, id: unknown, message: RegExp) => {
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ jsonrpc: "2.0", id, error: { code } })
    expect(answer.json["error"]["message"]).toMatch(message)
  }

  it("-32700: a body that is not JSON, answered with id null", async () => {
    expectError(await raw("{\"jsonrpc\":\"2.0\",\"id\":1,"), -32700, null, /^Parse error/)
  })

  it("-32600: a broken envelope, whatever the method or params", async () => {
    expectError(await raw("[]"), -32600, null, /Batch/)
    expectError(await raw("\"text\""), -32600, null, /JSON object/)
    expectError(await raw({ jsonrpc: "1.0", id: 3, method: generation.send }), -32600, 3, /jsonrpc must be "2.0"/)
    expectError(await raw({ id: 4, method: generation.send }), -32600, 4, /jsonrpc must be "2.0"/)
    expectError(await envelope({ id: 5 }), -32600, 5, /method is required/)
    expectError(await envelope({ id: 6, method: 42, params: "broken too" }), -32600, 6, /method must be a string/)
    expectError(await envelope({ id: { no: 1 }, method: generation.send }), -32600, null, /id must be a string, a number or null/)
    expectError(await envelope({ id: [1], method: "NoSuchMethod", params: 7 }), -32600, null, /id must be/)
  })

  it("-32601: an unknown method, before any look at its params or its id", async () => {
    expectError(await envelope({ id: 7, method: "message/ssend", params: {} }), -32601, 7, /Method not found: message\/ssend/)
    expectError(await envelope({ method: "message/ssend", params: {} }), -32601, null, /Method not found/)
    expectError(await envelope({ method: "NoSuchMethod", params: "not an object" }), -32601, null, /Method not found/)
  })

  it("-32602: params that are not an object, miss a field or have one of the wrong type", async () => {
    expectError(await envelope({ id: 8, method: generation.send, params: [1] }), -32602, 8, /^params must be an object$/)
    expectError(await envelope({ id: 9, method: generation.send }), -32602, 9, /^params is required$/)
    expectError(await envelope({ id: 10, method: generation.send, params: {} }), -32602, 10, /^message is required$/)
    const noId = { ...generation.message(), messageId: undefined }
    expectError(
      await envelope({ id: 11, method: generation.send, params: { message: noId } }),
      -32602,
      11,
      /^message\.messageId is required$/
    )
    const wrongType = { ...generation.message(), messageId: 12 }
    expectError(
      await envelope({ id: 12, method: generation.send, params: { message: wrongType } }),
      -32602,
      12,
      /^message\.messageId must be a string, not 12$/
    )
    // Without an id, bad params still get -32602 (with id null).
    expectError(await envelope({ method: generation.send, params: {} }), -32602, null, /^message is required$/)
  })

  it("-32600 for a request that is fine but has no id: A2A has no notifications", async () => {
    const answer = await envelope({ method: generation.send, params: { message: generation.message() } })
    expectError(answer, -32600, null, /A2A requests need an id/)
    expect(answer.json["error"]["message"]).not.toMatch(/must be a string, a number or null/)
  })

  it("-32600 for a missing id on every method whose params are valid", async () => {
    const methods = generation.name === "1.0"
      ? [["GetTask", { id: "x" }], ["ListTasks", {}], ["CancelTask", { id: "x" }], ["GetExtendedAgentCard", {}]]
      : [["tasks/get", { id: "x" }], ["tasks/cancel", { id: "x" }], ["tasks/pushNotificationConfig/list", { id: "x" }]]
    for (const [method, params] of methods) {
      expectError(await envelope({ method, params }), -32600, null, /A2A requests need an id/)
    }
  })

  it("answers an explicit null id like any other id", async () => {
    const answer = await envelope({ id: null, method: generation.send, params: { message: generation.message() } })
    expect(answer.json).toMatchObject({ id: null, result: {} })
  })
})

// ---------------------------------------------------------------------------
// Error bodies a person can read, over a corpus of broken requests

/** Marks of a Schema tree or a schema's own notation in a message. */
const SCHEMA_TREE = /└─|├─|<->|\bExpected\b|readonly |\{ readonly|Encoded side|Type side|Transformation process|\bv0\.3 [A-Z]\w+\b/

interface Route {
  readonly method: string
  readonly path: string
  readonly headers: Record<string, string>
  /** A valid body to break; undefined for routes read from the query string. */
  readonly body?: Json
  readonly query?: Record<string, string>
}

const ROUTES = (): ReadonlyArray<Route> => [
  { method: "POST", path: "/message:send", headers: V1, body: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } } },
  {
    method: "POST",
    path: "/message:stream",
    headers: V1,
    body: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }
  },
  { method: "POST", path: "/messages", headers: V1, body: { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } } },
  { method: "GET", path: "/tasks", headers: V1, query: { pageSize: "5", status: "TASK_STATE_WORKING", historyLength: "1" } },
  { method: "GET", path: "/tasks/nope", headers: V1, query: { historyLength: "1" } },
  { method: "POST", path: "/tasks/nope:cancel", headers: V1, body: { metadata: { a: 1 } } },
  { method: "POST", path: "/tasks/nope/pushNotificationConfigs", headers: V1, body: { url: "https://h.example/x", token: "t" } },
  { method: "GET", path: "/tasks/nope/pushNotificationConfigs", headers: V1, query: { pageSize: "3" } },
  {
    method: "POST",
    path: "/v1/message:send",
    headers: {},
    body: { message: { messageId: "m", role: "ROLE_USER", content: [{ text: "x" }] } }
  },
  {
    method: "POST",
    path: "/v1/message:stream",
    headers: {},
    body: { message: { messageId: "m", role: "ROLE_USER", content: [{ text: "x" }] } }
  },
  { method: "GET", path: "/v1/tasks/nope", headers: {}, query: { historyLength: "1" } },
  {
    method: "POST",
    path: "/v1/tasks/nope/pushNotificationConfigs",
    headers: {},
    body: { pushNotificationConfig: { url: "https://h.example/x" } }
  },
  ...[
    ["SendMessage", V1, { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }],
    ["SendStreamingMessage", V1, { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "x" }] } }],
    ["GetTask", V1, { id: "nope", historyLength: 1 }],
    ["ListTasks", V1, { pageSize: 5, status: "TASK_STATE_WORKING" }],
    ["CancelTask", V1, { id: "nope" }],
    ["CreateTaskPushNotificationConfig", V1, { taskId: "nope", url: "https://h.example/x" }],
    ["ListTaskPushNotificationConfigs", V1, { taskId: "nope", pageSize: 2 }],
    ["message/send", {}, { message: { kind: "message", messageId: "m", role: "user", parts: [{ kind: "text", text: "x" }] } }],
    ["tasks/get", {}, { id: "nope", historyLength: 1 }],
    ["tasks/pushNotificationConfig/set", {}, { taskId: "nope", pushNotificationConfig: { url: "https://h.example/x" } }],
    ["tasks/pushNotificationConfig/get", {}, { id: "nope", pushNotificationConfigId: "c" }]
  ].map(([method, headers, params]): Route => ({
    method: "POST",
    path: "/",
    headers: headers as Record<string, string>,
    body: { jsonrpc: "2.0", id: 1, method, params }
  }))
]

/** A JSON value that breaks a field: the wrong type, or nothing at all. */
const breakage = fc.oneof(
  fc.constant(undefined),
  fc.constant(null),
  fc.integer(),
  fc.double(),
  fc.string({ maxLength: 12 }),
  fc.boolean(),
  fc.constant([]),
  fc.constant({}),
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }),
  fc.dictionary(fc.string({ maxLength: 6 }), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 3 })
)

/** Every path to a field of a JSON value, the value itself included. */
const fieldPaths = (json: unknown, path: ReadonlyArray<string> = []): Array<ReadonlyArray<string>> =>
  typeof json === "object" && json !== null
    ? [path, ...Object.entries(json).flatMap(([key, value]) => fieldPaths(value, [...path, key]))]
    : [path]

/** `json` with the field at `path` set to `value` (removed when undefined). */
const withField = (json: unknown, path: ReadonlyArray<string>, value: unknown): unknown => {
  if (path.length === 0) return value
  const [head, ...rest] = path
  const object = (Array.isArray(json) ? [...json] : { ...(json as Json) }) as Json
  const next = withField(object[head!], rest, value)
  if (next === undefined) delete object[head!]
  else object[head!] = next
  return object
}

const messagesOf = (answer: Answer): string[] => {
  if (answer.text.startsWith("data:") || answer.contentType.includes("event-stream")) {
    return sseData(answer).flatMap((event) => (event["error"] ? [String(event["error"]["message"])] : []))
  }
  const error = answer.json["error"]
  if (error !== undefined) return [String(error["message"])]
  return typeof answer.json["message"] === "string" ? [answer.json["message"]] : []
}

describe("error bodies a person can read", () => {
  it("no answer to a broken request on any route carries a Schema tree, and each says what is wrong in one line", async () => {
    const routes = ROUTES()
    const corpus = fc.sample(
      fc.tuple(fc.nat(), fc.nat(), breakage).map(([routeIndex, pathIndex, value]) => {
        const route = routes[routeIndex % routes.length]!
        const source = route.body ?? route.query!
        const paths = fieldPaths(source)
        const path = paths[pathIndex % paths.length]!
        return { route, broken: withField(source, path, value) }
      }),
      { numRuns: 400, seed: 42 }
    )
    let errors = 0
    for (const { route, broken } of corpus) {
      const query = route.body === undefined && typeof broken === "object" && broken !== null
        ? `?${new URLSearchParams(
          Object.entries(broken).map(([k, v]): [string, string] => [k, typeof v === "string" ? v : JSON.stringify(v)])
        )}`
        : ""
      const body = route.body === undefined ? undefined : broken === undefined ? "" : JSON.stringify(broken)
      const answer = await call(route.method, `${base}${route.path}${query}`, body, {
        ...route.headers,
        accept: "application/json, text/event-stream"
      })
      for (const message of messagesOf(answer)) {
        errors++
        expect(message, `${route.method} ${route.path} ${JSON.stringify(broken)}`).not.toMatch(SCHEMA_TREE)
        expect(message).not.toContain("\n")
      }
      expect(answer.text).not.toMatch(/└─|├─/)
    }
    // The corpus did reach the decoders.
    expect(errors).toBeGreaterThan(100)
  }, 60_000)

  it("names the field by its path, on both bindings and generations", async () => {
    const rest = await call("POST", `${base}/message:send`, { message: { role: "ROLE_USER", parts: [{ text: "hi" }] } }, V1)
    expect(rest.status).toBe(400)
    expect(rest.json["error"]).toMatchObject({
      message: "message.messageId is required",
      details: [{ reason: "INVALID_PARAMS", metadata: { field: "message.messageId" } }]
    })
    const restV03 = await call("POST", `${base}/v1/message:send`, { message: { message_id: "m", role: 1, content: [{}] } })
    expect(restV03.json).toMatchObject({ code: -32602, message: "message.content[0] needs one of text, file or data" })
    const query = await call("GET", `${base}/tasks?page_size=ten`, undefined, V1)
    expect(query.json["error"]["message"]).toBe("pageSize must be an integer, not \"ten\"")
    const rpcV1 = await rpc("SendMessage", { message: { messageId: "m", role: "ROLE_USER", parts: [{ text: "a", raw: "b" }] } })
    expect(rpcV1.json["error"]).toMatchObject({
      code: -32602,
      message: "message.parts[0] needs exactly one of text, raw, url or data, but has several",
      data: [{ metadata: { field: "message.parts[0]" } }]
    })
    const rpcV03 = await rpc("tasks/get", { id: 7 }, {})
    expect(rpcV03.json["error"]["message"]).toBe("id must be a string, not 7")
  })
})
