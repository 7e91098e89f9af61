// A stub A2A agent that writes every answer as the Python SDK does: proto field names
// (`context_id`, `status_update`) and enums as numbers, in each of the four dialects (JSON-RPC and
// HTTP+JSON, at 1.0 and 0.3), with its card in proto names too. A few task ids answer what no
// SDK should: a state and a role A2A does not define (`weird`), and a part that cannot be read
// (`broken`).
import type http from "node:http"
import type { Binding } from "../../src/a2a/dialects.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import type * as V1 from "../../src/a2a/v1.js"
import { answerWriters, protoStyled } from "../helpers/protoJsonStyle.js"
import { startStub, type Stub, type StubRequest, type StubRoute } from "../services/a2aClientHarness.js"

export const TASK_ID = "t1"
export const CONFIG_ID = "c1"

const agentMessage: V1.Message = {
  messageId: "m-agent",
  contextId: "ctx-1",
  taskId: TASK_ID,
  role: "ROLE_AGENT",
  parts: [{ text: "Which city?" }]
}

/** The task every dialect answers, in the domain model. */
export const TASK: V1.Task = {
  id: TASK_ID,
  contextId: "ctx-1",
  status: { state: "TASK_STATE_INPUT_REQUIRED", message: agentMessage, timestamp: "2026-03-01T10:00:00Z" },
  artifacts: [{ artifactId: "a1", name: "answer", parts: [{ text: "Booking a trip" }] }],
  history: [{ messageId: "m-user", contextId: "ctx-1", taskId: TASK_ID, role: "ROLE_USER", parts: [{ text: "Book a trip" }] }, agentMessage]
}

/** The stream every dialect sends, in the domain model. */
export const EVENTS: ReadonlyArray<V1.StreamResponse> = [
  { task: { id: TASK_ID, contextId: "ctx-1", status: { state: "TASK_STATE_SUBMITTED" } } },
  { statusUpdate: { taskId: TASK_ID, contextId: "ctx-1", status: { state: "TASK_STATE_WORKING" } } },
  {
    artifactUpdate: {
      taskId: TASK_ID,
      contextId: "ctx-1",
      artifact: { artifactId: "a1", name: "answer", parts: [{ text: "Booked" }] },
      append: false,
      lastChunk: true
    }
  },
  { statusUpdate: { taskId: TASK_ID, contextId: "ctx-1", status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-03-01T10:00:01Z" } } }
]

export const CONFIG: V1.TaskPushNotificationConfig = {
  id: CONFIG_ID,
  taskId: TASK_ID,
  url: "https://hooks.example/a2a",
  token: "push-token",
  authentication: { scheme: "Bearer", credentials: "push-secret" }
}

/** Answers in no SDK's style: what a careless or newer agent may send. */
const ODD_TASKS: Readonly<Record<string, unknown>> = {
  weird: {
    id: "weird",
    context_id: "ctx-1",
    status: { state: "TASK_STATE_WEIRD", message: { message_id: "m", role: "ROLE_ROBOT", parts: [{ text: "beep" }] } }
  },
  broken: { id: "broken", status: { state: 3, message: { message_id: "m-broken", role: 2, parts: [{}] } } }
}

export const DIALECT_PATHS: Readonly<Record<`${Exclude<Binding, "GRPC">} ${ProtocolVersion}`, string>> = {
  "JSONRPC 1.0": "/rpc",
  "HTTP+JSON 1.0": "/rest",
  "JSONRPC 0.3": "/rpc03",
  "HTTP+JSON 0.3": "/rest03"
}

const py = protoStyled

const sse = (res: http.ServerResponse, payloads: ReadonlyArray<unknown>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const payload of payloads) res.write(`data: ${JSON.stringify(payload)}\n\n`)
  res.end()
  return undefined
}

const paramsOf = (request: StubRequest): Record<string, any> =>
  ((request.body as Record<string, any>)?.["params"] ?? {}) as Record<string, any>

/** The odd task a request asks for (by its id, or by the text of the message it sends). */
const oddTaskOf = (request: StubRequest, pathId?: string): unknown => {
  const params = paramsOf(request)
  const key = pathId ?? params["id"] ?? params["message"]?.["parts"]?.[0]?.["text"]
  return typeof key === "string" ? ODD_TASKS[key] : undefined
}

const jsonRpcRoute = (binding: Binding, version: ProtocolVersion): StubRoute => (request, res) => {
  const write = answerWriters(binding, version)
  const body = request.body as Record<string, any>
  const answer = (result: unknown) => ({ body: { jsonrpc: "2.0", id: body["id"], result } })
  const odd = oddTaskOf(request)
  const task = odd ?? py(write.task(TASK))
  switch (body["method"]) {
    case "SendMessage":
      return answer(odd === undefined ? py(write.send({ task: TASK })) : { task: odd })
    case "message/send":
      return answer(odd ?? py(write.send({ task: TASK })))
    case "SendStreamingMessage":
    case "message/stream":
      return sse(res, EVENTS.map((event) => ({ jsonrpc: "2.0", id: body["id"], result: py(write.event(event)) })))
    case "GetTask":
    case "tasks/get":
    case "CancelTask":
    case "tasks/cancel":
      return answer(task)
    case "ListTasks":
      return answer(py({ tasks: [write.task(TASK)], nextPageToken: "", pageSize: 50, totalSize: 1 }))
    case "CreateTaskPushNotificationConfig":
    case "GetTaskPushNotificationConfig":
    case "tasks/pushNotificationConfig/set":
    case "tasks/pushNotificationConfig/get":
      return answer(py(write.pushConfig(CONFIG)))
    case "ListTaskPushNotificationConfigs":
      return answer(py({ configs: [write.pushConfig(CONFIG)] }))
    case "tasks/pushNotificationConfig/list":
      return answer(py([write.pushConfig(CONFIG)]))
    default:
      return { body: { jsonrpc: "2.0", id: body["id"], error: { code: -32601, message: "Method not found" } } }
  }
}

const restRoutes = (prefix: string, binding: Binding, version: ProtocolVersion): Record<string, StubRoute> => {
  const write = answerWriters(binding, version)
  const configs = `${prefix}/tasks/${TASK_ID}/pushNotificationConfigs`
  const ok = (body: unknown): StubRoute => () => ({ body })
  const routes: Record<string, StubRoute> = {
    [`POST ${prefix}/message:send`]: ok(py(write.send({ task: TASK }))),
    [`POST ${prefix}/message:stream`]: (_, res) => sse(res, EVENTS.map((event) => py(write.event(event)))),
    [`GET ${prefix}/tasks/${TASK_ID}`]: ok(py(write.task(TASK))),
    [`POST ${prefix}/tasks/${TASK_ID}:cancel`]: ok(py(write.task(TASK))),
    [`POST ${configs}`]: ok(py(write.pushConfig(CONFIG))),
    [`GET ${configs}/${CONFIG_ID}`]: ok(py(write.pushConfig(CONFIG))),
    [`GET ${configs}`]: ok(py({ configs: [write.pushConfig(CONFIG)] }))
  }
  if (version === "1.0") {
    routes[`GET ${prefix}/tasks`] = ok(py({ tasks: [write.task(TASK)], nextPageToken: "", pageSize: 50, totalSize: 1 }))
  }
  for (const [id, task] of Object.entries(ODD_TASKS)) routes[`GET ${prefix}/tasks/${id}`] = ok(task)
  return routes
}

/** The card, in proto field names, listing the JSON-RPC 1.0 interface first. */
const card = (baseUrl: string) => ({
  name: "Python-style agent",
  description: "Answers in proto field names and enum numbers",
  version: "1.0.0",
  supported_interfaces: (Object.entries(DIALECT_PATHS) as ReadonlyArray<[string, string]>).map(([dialect, path]) => {
    const [binding, version] = dialect.split(" ")
    return { url: `${baseUrl}${path}`, protocol_binding: binding, protocol_version: version }
  }),
  capabilities: { streaming: true, push_notifications: true },
  default_input_modes: ["text/plain"],
  default_output_modes: ["text/plain"],
  skills: [{ id: "trips", name: "Trips", description: "Books trips", tags: ["travel"] }]
})

export const startPythonStyleAgent = (): Promise<Stub> =>
  startStub((baseUrl) => ({
    "GET /.well-known/agent-card.json": () => ({ body: card(baseUrl) }),
    "POST /rpc": jsonRpcRoute("JSONRPC", "1.0"),
    "POST /rpc03": jsonRpcRoute("JSONRPC", "0.3"),
    ...restRoutes("/rest", "HTTP+JSON", "1.0"),
    ...restRoutes("/rest03/v1", "HTTP+JSON", "0.3")
  }))
