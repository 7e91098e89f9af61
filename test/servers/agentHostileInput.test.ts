// Hostile input at the agent server (issue 15, item 2): well over a thousand generated malformed
// bodies (broken JSON, invalid UTF-8, bad envelopes, unknown methods, wrong and missing fields in
// every method of both generations, __proto__ keys, deep nesting, huge strings, wrong content
// types) each get the error their route defines, and the server stays up; traversal and
// header injection on REST paths are refused; an oversized body is refused before it is read.
import { randomUUID } from "node:crypto"
import http from "node:http"
import net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { tooDeep } from "../fuzz/corpus.js"
import { reportFigures, runPool } from "../helpers/figures.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { type Json, v03Message, V1_HEADERS, v1Message } from "./wire.js"

let agent: AgentHandle
let base: string

beforeAll(async () => {
  agent = await startAgent()
  base = agent.baseUrl
})

afterAll(async () => {
  await agent?.close()
})

// ---------------------------------------------------------------------------
// Cases: where a body goes, and what its answer must be

type Route = "rpc 1.0" | "rpc 0.3" | "rest 1.0" | "rest 0.3"

interface Case {
  readonly name: string
  readonly route: Route
  /** Defaults: POST / for JSON-RPC, /message:send and /v1/message:send for REST. */
  readonly path?: string
  readonly body: string | Buffer
  readonly contentType?: string
  readonly accept?: string
  /** JSON-RPC error code, or for REST the reason (1.0) or code (0.3) expected; "accepted" when the body is fine. */
  readonly expect: number | string
}

interface Reply {
  readonly status: number
  readonly contentType: string
  readonly json: Json
  readonly bytes: number
}

const HEADERS_OF: Record<Route, Record<string, string>> = { "rpc 1.0": V1_HEADERS, "rpc 0.3": {}, "rest 1.0": V1_HEADERS, "rest 0.3": {} }
const DEFAULT_PATH: Record<Route, string> = { "rpc 1.0": "/", "rpc 0.3": "/", "rest 1.0": "/message:send", "rest 0.3": "/v1/message:send" }

const send = async (hostile: Case): Promise<Reply> => {
  const response = await fetch(`${base}${hostile.path ?? DEFAULT_PATH[hostile.route]}`, {
    method: "POST",
    headers: {
      "content-type": hostile.contentType ?? "application/json",
      ...(hostile.accept ? { accept: hostile.accept } : {}),
      ...HEADERS_OF[hostile.route]
    },
    body: hostile.body
  })
  const text = await response.text()
  const contentType = response.headers.get("content-type") ?? ""
  // A streaming method answers its errors as the stream's one event.
  const json = contentType.includes("text/event-stream")
    ? JSON.parse(text.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("").trim() || "{}") as Json
    : JSON.parse(text) as Json
  return { status: response.status, contentType, json, bytes: text.length }
}

/** Why the reply is not the one the case expects, or undefined when it is. */
const mismatch = (hostile: Case, reply: Reply): string | undefined => {
  const { json, status } = reply
  const isRpc = hostile.route.startsWith("rpc")
  if (hostile.expect === "accepted") {
    const task = isRpc ? json["result"]?.["task"] ?? json["result"] : json["task"]
    return status === 200 && typeof task?.["id"] === "string" ? undefined : `not accepted`
  }
  if (isRpc) {
    if (status !== 200 || json["jsonrpc"] !== "2.0" || json["error"]?.["code"] !== hostile.expect) {
      return `expected JSON-RPC ${hostile.expect}`
    }
    return typeof json["error"]["message"] === "string" ? undefined : "no message"
  }
  if (hostile.route === "rest 1.0") {
    if (status !== 400 || !reply.contentType.startsWith("application/a2a+json")) return "expected a 400 in application/a2a+json"
    return json["error"]?.["status"] === "INVALID_ARGUMENT" && json["error"]["details"]?.[0]?.["reason"] === hostile.expect
      ? undefined
      : `expected ${hostile.expect}`
  }
  return status === 400 && json["code"] === hostile.expect ? undefined : `expected 400 {code: ${hostile.expect}}`
}

// JSON-RPC codes, and the ErrorInfo reasons of 1.0 REST.
const PARSE = -32700
const INVALID_REQUEST = -32600
const NOT_FOUND = -32601
const PARAMS = -32602
const CONTENT_TYPE = -32005

const envelope = (method: string, params: unknown) => JSON.stringify({ jsonrpc: "2.0", id: "h", method, params })

// ---------------------------------------------------------------------------
// Generators

/** Every prefix of valid bodies: broken JSON at each place it can break. */
const brokenJson = (): Case[] => {
  const rpc1 = envelope("SendMessage", { message: v1Message("cut") })
  const rpc03 = envelope("message/send", { message: v03Message("cut") })
  const rest1 = JSON.stringify({ message: v1Message("cut") })
  const rest03 = JSON.stringify({ message: { messageId: randomUUID(), role: "ROLE_USER", content: [{ text: "cut" }] } })
  // Every proper prefix, the empty one aside (a REST body may be empty).
  const prefixes = (text: string) => Array.from({ length: text.length - 1 }, (_, index) => text.slice(0, index + 1))
  return [
    ...prefixes(rpc1).map((body): Case => ({ name: `rpc 1.0 cut at ${body.length}`, route: "rpc 1.0", body, expect: PARSE })),
    ...prefixes(rpc03).map((body): Case => ({ name: `rpc 0.3 cut at ${body.length}`, route: "rpc 0.3", body, expect: PARSE })),
    ...prefixes(rest1).map((body): Case => ({ name: `rest 1.0 cut at ${body.length}`, route: "rest 1.0", body, expect: "PARSE_ERROR" })),
    ...prefixes(rest03).map((body): Case => ({ name: `rest 0.3 cut at ${body.length}`, route: "rest 0.3", body, expect: PARSE })),
    ...[
      "{",
      "}",
      "[",
      "{\"jsonrpc\":\"2.0\",}",
      "{'jsonrpc':'2.0'}",
      "{\"a\":1}{\"b\":2}",
      "NaN",
      "undefined",
      "{\"a\":01}",
      "{\"a\":\"\\x41\"}",
      "\u0000",
      "{\"a\":Infinity}"
    ]
      .map((body): Case => ({ name: `rpc 1.0 not JSON: ${JSON.stringify(body)}`, route: "rpc 1.0", body, expect: PARSE }))
  ]
}

const INVALID_UTF8: ReadonlyArray<ReadonlyArray<number>> = [[0xff], [0xc3, 0x28], [0xed, 0xa0, 0x80], [0xf8, 0x88, 0x80, 0x80, 0x80], [
  0x80
], [0xe2, 0x82]]

/** Invalid UTF-8 where JSON expects structure is a parse error; inside a string it decodes to U+FFFD and is taken. */
const invalidUtf8 = (): Case[] => {
  const text = envelope("SendMessage", { message: v1Message("bytes MARK here") })
  const structural = [...text.matchAll(/[{,:]/g)].map((match) => match.index! + 1)
  return INVALID_UTF8.flatMap((bytes) => [
    ...structural.map((at): Case => ({
      name: `bytes ${bytes} at ${at}`,
      route: "rpc 1.0",
      body: Buffer.concat([Buffer.from(text.slice(0, at)), Buffer.from(bytes), Buffer.from(text.slice(at))]),
      expect: PARSE
    })),
    {
      name: `bytes ${bytes} inside the text`,
      route: "rpc 1.0",
      body: Buffer.concat(
        text.split("MARK").flatMap((part, index) => (index === 0 ? [Buffer.from(part)] : [Buffer.from(bytes), Buffer.from(part)]))
      ),
      expect: "accepted"
    }
  ])
}

/** Envelopes JSON-RPC 2.0 does not allow, in both generations. */
const badEnvelopes = (): Case[] => {
  const good = { jsonrpc: "2.0", id: "e", method: "GetTask", params: { id: "x" } }
  const bodies = [
    "1",
    "\"text\"",
    "null",
    "true",
    "[]",
    "[1]",
    JSON.stringify([good]),
    ...["1.0", 2, null, "2.0 ", "", ["2.0"]].map((jsonrpc) => JSON.stringify({ ...good, jsonrpc })),
    JSON.stringify({ id: "e", method: "GetTask" }),
    ...[1, null, {}, [], true].map((method) => JSON.stringify({ ...good, method })),
    JSON.stringify({ jsonrpc: "2.0", id: "e" }),
    ...[{}, [], true].map((id) => JSON.stringify({ ...good, id }))
  ]
  return (["rpc 1.0", "rpc 0.3"] as const).flatMap((route) =>
    bodies.map((body): Case => ({ name: `${route} envelope ${body.slice(0, 60)}`, route, body, expect: INVALID_REQUEST }))
  )
}

const STRANGE_METHODS = [
  "__proto__",
  "constructor",
  "toString",
  "hasOwnProperty",
  "valueOf",
  "prototype",
  "Frobnicate",
  "sendmessage",
  "SENDMESSAGE",
  " SendMessage",
  "SendMessage ",
  "message/send/",
  "/message/send",
  "tasks/get/../cancel",
  "message\u0000send",
  "tasks\\get",
  "GetTask\n",
  "💥",
  "",
  "x".repeat(100_000)
]

/** Method names no table has (both generations, both with and without A2A-Version). */
const unknownMethods = (): Case[] =>
  (["rpc 1.0", "rpc 0.3"] as const).flatMap((route) =>
    STRANGE_METHODS.map((method): Case => ({
      name: `${route} method ${JSON.stringify(method.slice(0, 30))}`,
      route,
      body: envelope(method, {}),
      expect: NOT_FOUND
    }))
  )

type Params = Record<string, unknown>
const WRONG: Record<"string" | "object" | "array" | "int" | "enum", ReadonlyArray<unknown>> = {
  string: [1, true, [], {}, 1.5],
  object: [1, "s", true, []],
  array: [1, "s", true, {}],
  int: ["x", true, [], {}, 1.5, -1e300],
  // ProtoJSON takes an enum's number as well as its name: numbers are not wrong.
  enum: [true, "BOGUS", [], {}, "task_state_completed_not"]
}
type Kind = keyof typeof WRONG

/** A copy of `params` with the value at `path` replaced (undefined removes it). */
const withValue = (params: Params, path: ReadonlyArray<string | number>, value: unknown): Params => {
  const copy = structuredClone(params)
  let node: any = copy
  for (const key of path.slice(0, -1)) node = node[key]
  const last = path[path.length - 1]!
  if (value === undefined) delete node[last]
  else node[last] = value
  return copy
}

interface MethodShape {
  readonly route: Route
  readonly method?: string
  readonly path?: string
  readonly accept?: string
  readonly params: () => Params
  /** Fields and what they must be; `required` ones are also removed. */
  readonly fields: ReadonlyArray<{ readonly path: ReadonlyArray<string | number>; readonly kind: Kind; readonly required?: boolean }>
  readonly expect: number | string
}

const v1MessageFields = [
  { path: ["message"], kind: "object", required: true },
  { path: ["message", "messageId"], kind: "string", required: true },
  { path: ["message", "role"], kind: "enum", required: true },
  { path: ["message", "parts"], kind: "array", required: true },
  { path: ["message", "parts", 0, "text"], kind: "string" },
  { path: ["message", "contextId"], kind: "string" },
  { path: ["message", "taskId"], kind: "string" },
  { path: ["message", "metadata"], kind: "object" },
  { path: ["configuration"], kind: "object" },
  { path: ["configuration", "historyLength"], kind: "int" }
] as const
const v03MessageFields = [
  { path: ["message"], kind: "object", required: true },
  { path: ["message", "messageId"], kind: "string", required: true },
  { path: ["message", "role"], kind: "enum", required: true },
  { path: ["message", "parts"], kind: "array", required: true },
  { path: ["message", "parts", 0, "text"], kind: "string" },
  { path: ["message", "parts", 0, "kind"], kind: "enum" },
  { path: ["message", "contextId"], kind: "string" },
  { path: ["message", "metadata"], kind: "object" }
] as const
const withConfig = (message: Json) => ({ message, configuration: { historyLength: 1 } })

const SHAPES: ReadonlyArray<MethodShape> = [
  { route: "rpc 1.0", method: "SendMessage", params: () => withConfig(v1Message("typed")), fields: v1MessageFields, expect: PARAMS },
  {
    route: "rpc 1.0",
    method: "SendStreamingMessage",
    accept: "text/event-stream",
    params: () => withConfig(v1Message("typed")),
    fields: v1MessageFields,
    expect: PARAMS
  },
  { route: "rest 1.0", params: () => withConfig(v1Message("typed")), fields: v1MessageFields, expect: "INVALID_PARAMS" },
  { route: "rpc 0.3", method: "message/send", params: () => ({ message: v03Message("typed") }), fields: v03MessageFields, expect: PARAMS },
  {
    route: "rpc 0.3",
    method: "message/stream",
    accept: "text/event-stream",
    params: () => ({ message: v03Message("typed") }),
    fields: v03MessageFields,
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "GetTask",
    params: () => ({ id: "t", historyLength: 1 }),
    fields: [{ path: ["id"], kind: "string", required: true }, { path: ["historyLength"], kind: "int" }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "ListTasks",
    params: () => ({ pageSize: 5, contextId: "c", status: "TASK_STATE_WORKING" }),
    fields: [{ path: ["pageSize"], kind: "int" }, { path: ["contextId"], kind: "string" }, { path: ["status"], kind: "enum" }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "CancelTask",
    params: () => ({ id: "t" }),
    fields: [{ path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "SubscribeToTask",
    accept: "text/event-stream",
    params: () => ({ id: "t" }),
    fields: [{ path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "CreateTaskPushNotificationConfig",
    params: () => ({ taskId: "t", url: "http://127.0.0.1:9/hook", token: "tok" }),
    fields: [{ path: ["taskId"], kind: "string", required: true }, { path: ["url"], kind: "string", required: true }, {
      path: ["token"],
      kind: "string"
    }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "GetTaskPushNotificationConfig",
    params: () => ({ taskId: "t", id: "c" }),
    fields: [{ path: ["taskId"], kind: "string", required: true }, { path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "ListTaskPushNotificationConfigs",
    params: () => ({ taskId: "t", pageSize: 5 }),
    fields: [{ path: ["taskId"], kind: "string", required: true }, { path: ["pageSize"], kind: "int" }],
    expect: PARAMS
  },
  {
    route: "rpc 1.0",
    method: "DeleteTaskPushNotificationConfig",
    params: () => ({ taskId: "t", id: "c" }),
    fields: [{ path: ["taskId"], kind: "string", required: true }, { path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  },
  {
    route: "rpc 0.3",
    method: "tasks/get",
    params: () => ({ id: "t", historyLength: 1 }),
    fields: [{ path: ["id"], kind: "string", required: true }, { path: ["historyLength"], kind: "int" }],
    expect: PARAMS
  },
  {
    route: "rpc 0.3",
    method: "tasks/cancel",
    params: () => ({ id: "t" }),
    fields: [{ path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  },
  {
    route: "rpc 0.3",
    method: "tasks/pushNotificationConfig/set",
    params: () => ({ taskId: "t", pushNotificationConfig: { url: "http://127.0.0.1:9/hook" } }),
    fields: [{ path: ["taskId"], kind: "string", required: true }, { path: ["pushNotificationConfig"], kind: "object", required: true }, {
      path: ["pushNotificationConfig", "url"],
      kind: "string",
      required: true
    }],
    expect: PARAMS
  },
  {
    route: "rpc 0.3",
    method: "tasks/pushNotificationConfig/list",
    params: () => ({ id: "t" }),
    fields: [{ path: ["id"], kind: "string", required: true }],
    expect: PARAMS
  }
]

/** Each field of each method given every wrong type, and each required one left out. */
const wrongFields = (): Case[] =>
  SHAPES.flatMap((shape) =>
    shape.fields.flatMap((field) => {
      const values = [...WRONG[field.kind], ...(field.required ? [undefined] : [])]
      return values.map((value): Case => {
        const params = withValue(shape.params(), field.path, value)
        return {
          name: `${shape.route} ${shape.method ?? "message:send"} ${field.path.join(".")} = ${
            value === undefined ? "(missing)" : JSON.stringify(value)
          }`,
          route: shape.route,
          ...(shape.accept ? { accept: shape.accept } : {}),
          body: shape.method === undefined ? JSON.stringify(params) : envelope(shape.method, params),
          expect: shape.expect
        }
      })
    })
  )

/** The proto field names (ProtoJSON's other name style) with wrong types where a required field is named. */
const protoNames = (): Case[] => {
  const message = (extra: Json) => ({ role: "ROLE_USER", parts: [{ text: "snake" }], ...extra })
  const bodies: Array<[string, Params]> = [
    ["SendMessage", { message: message({ message_id: 5 }) }],
    ["SendMessage", { message: message({ message_id: ["m"] }) }],
    ["SendMessage", { message: message({ message_id: null }) }],
    ["GetTaskPushNotificationConfig", { task_id: 5, id: "c" }],
    ["DeleteTaskPushNotificationConfig", { task_id: {}, id: "c" }],
    ["CreateTaskPushNotificationConfig", { task_id: true, url: "http://127.0.0.1:9/hook" }]
  ]
  return bodies.map(([method, params]): Case => ({
    name: `proto names ${method} ${JSON.stringify(params).slice(0, 60)}`,
    route: "rpc 1.0",
    body: envelope(method, params),
    expect: PARAMS
  }))
}

/** `__proto__` and friends as keys: read as plain keys, never as the object's prototype. */
const prototypeKeys = (): Case[] => {
  const message = JSON.stringify(v1Message("proto"))
  return [
    {
      name: "envelope fields under __proto__",
      route: "rpc 1.0",
      body: "{\"__proto__\":{\"jsonrpc\":\"2.0\",\"method\":\"GetTask\"},\"id\":\"p\"}",
      expect: INVALID_REQUEST
    },
    {
      name: "method under __proto__",
      route: "rpc 1.0",
      body: "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"__proto__\":{\"method\":\"GetTask\"}}",
      expect: INVALID_REQUEST
    },
    {
      name: "GetTask id under __proto__",
      route: "rpc 1.0",
      body: "{\"jsonrpc\":\"2.0\",\"id\":\"p\",\"method\":\"GetTask\",\"params\":{\"__proto__\":{\"id\":\"x\"}}}",
      expect: PARAMS
    },
    {
      name: "message under __proto__",
      route: "rpc 1.0",
      body: `{"jsonrpc":"2.0","id":"p","method":"SendMessage","params":{"__proto__":{"message":${message}}}}`,
      expect: PARAMS
    },
    {
      name: "role under __proto__",
      route: "rpc 1.0",
      body:
        `{"jsonrpc":"2.0","id":"p","method":"SendMessage","params":{"message":{"messageId":"m","parts":[{"text":"x"}],"__proto__":{"role":"ROLE_USER"}}}}`,
      expect: PARAMS
    },
    { name: "rest message under __proto__", route: "rest 1.0", body: `{"__proto__":{"message":${message}}}`, expect: "INVALID_PARAMS" },
    ...["__proto__", "constructor", "prototype"].flatMap((key): Case[] => [
      {
        name: `metadata ${key}`,
        route: "rpc 1.0",
        body: envelope("SendMessage", {
          message: { ...v1Message("proto"), metadata: JSON.parse(`{"${key}":{"polluted":true,"prototype":{"polluted":true}}}`) }
        }),
        expect: "accepted"
      },
      {
        name: `data part ${key}`,
        route: "rest 1.0",
        body: `{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"data":{"${key}":{"polluted":true}}}]}}`,
        expect: "accepted"
      },
      {
        name: `params ${key}`,
        route: "rpc 0.3",
        body: `{"jsonrpc":"2.0","id":"p","method":"tasks/get","params":{"id":"nope","${key}":{"polluted":true}}}`,
        expect: -32001
      }
    ])
  ]
}

/** Nesting past the limit in message metadata, from the shared corpus. */
const deepNesting = (): Case[] =>
  tooDeep(4).map((payload): Case => ({
    name: `metadata ${payload.name}`,
    route: "rpc 1.0",
    body:
      `{"jsonrpc":"2.0","id":"d","method":"SendMessage","params":{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"deep"}],"metadata":${payload.json}}}}`,
    expect: PARAMS
  }))

const MiB = 1024 * 1024
/** A mebibyte where a short string belongs is refused; in a text part it is a message like any other. */
const hugeStrings = (): Case[] => {
  const huge = "h".repeat(MiB)
  return [
    {
      name: "1 MiB jsonrpc",
      route: "rpc 1.0",
      body: JSON.stringify({ jsonrpc: huge, id: "u", method: "GetTask" }),
      expect: INVALID_REQUEST
    },
    { name: "1 MiB method", route: "rpc 1.0", body: envelope(huge, {}), expect: NOT_FOUND },
    {
      name: "1 MiB messageId",
      route: "rpc 1.0",
      body: envelope("SendMessage", { message: v1Message("x", { messageId: huge }) }),
      expect: PARAMS
    },
    { name: "1 MiB role", route: "rpc 1.0", body: envelope("SendMessage", { message: v1Message("x", { role: huge }) }), expect: PARAMS },
    {
      name: "1 MiB task id in 0.3",
      route: "rpc 0.3",
      body: envelope("message/send", { message: v03Message("x", { taskId: huge }) }),
      expect: PARAMS
    },
    {
      name: "1 MiB context id in REST",
      route: "rest 1.0",
      body: JSON.stringify({ message: v1Message("x", { contextId: huge }) }),
      expect: "INVALID_PARAMS"
    },
    { name: "1 MiB text", route: "rpc 1.0", body: envelope("SendMessage", { message: v1Message(huge) }), expect: "accepted" }
  ]
}

const WRONG_TYPES = [
  "text/plain",
  "application/xml",
  "text/html",
  "multipart/form-data; boundary=x",
  "application/x-www-form-urlencoded",
  "application/jsonp",
  "image/png",
  "application/json-seq"
]

/** Bodies declared as anything but JSON. */
const wrongContentTypes = (): Case[] =>
  WRONG_TYPES.flatMap((contentType): Case[] => [
    { name: `rpc 1.0 as ${contentType}`, route: "rpc 1.0", contentType, body: envelope("GetTask", { id: "x" }), expect: CONTENT_TYPE },
    { name: `rpc 0.3 as ${contentType}`, route: "rpc 0.3", contentType, body: envelope("tasks/get", { id: "x" }), expect: CONTENT_TYPE },
    {
      name: `rest 1.0 as ${contentType}`,
      route: "rest 1.0",
      contentType,
      body: JSON.stringify({ message: v1Message("x") }),
      expect: "CONTENT_TYPE_NOT_SUPPORTED"
    },
    {
      name: `rest 0.3 as ${contentType}`,
      route: "rest 0.3",
      contentType,
      body: JSON.stringify({ message: v1Message("x") }),
      expect: CONTENT_TYPE
    }
  ])

const CORPUS: ReadonlyArray<readonly [string, () => Case[]]> = [
  ["broken JSON", brokenJson],
  ["invalid UTF-8", invalidUtf8],
  ["bad envelopes", badEnvelopes],
  ["unknown methods", unknownMethods],
  ["wrong or missing fields", wrongFields],
  ["proto field names", protoNames],
  ["prototype keys", prototypeKeys],
  ["deep nesting", deepNesting],
  ["huge strings", hugeStrings],
  ["wrong content types", wrongContentTypes]
]

const health = async () => (await fetch(`${base}/health`)).status

describe("generated malformed bodies", () => {
  let tried = 0

  it.each(CORPUS.map(([name, generate]) => [name, generate] as const))(
    "%s: each gets its route's error, and the server stays up",
    async (_name, generate) => {
      const cases = generate()
      const problems = await runPool(cases.length, 20, async (index) => {
        const hostile = cases[index]!
        const reply = await send(hostile).catch((error: unknown) => ({
          status: 0,
          contentType: "",
          json: { failed: String(error) },
          bytes: 0
        }))
        const problem = mismatch(hostile, reply)
        return problem === undefined
          ? undefined
          : `${hostile.name}: ${problem}, got ${reply.status} ${JSON.stringify(reply.json).slice(0, 300)}`
      })
      expect(problems.filter((problem) => problem !== undefined)).toEqual([])
      expect(await health()).toBe(200)
      tried += cases.length
    }
  )

  it("polluted no prototype, and tried over a thousand bodies", () => {
    expect(({} as Record<string, unknown>)["polluted"]).toBeUndefined()
    expect(Object.prototype).not.toHaveProperty("polluted")
    expect(tried).toBeGreaterThanOrEqual(1000)
    reportFigures("hostile bodies", { "bad inputs tried": tried, "wrong answers": 0, "server restarts": 0 })
  })
})

// ---------------------------------------------------------------------------
// Paths and headers

/** A raw HTTP/1.1 exchange: what the server first answers, or "closed" when it hangs up without a word. */
const rawExchange = (port: number, raw: string | Buffer, timeoutMs = 3000) =>
  new Promise<string>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(raw))
    let answer = ""
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`no answer within ${timeoutMs} ms`))
    }, timeoutMs)
    const done = () => {
      clearTimeout(timer)
      socket.destroy()
      resolve(answer === "" ? "closed" : answer)
    }
    socket.on("data", (chunk) => {
      answer += String(chunk)
      if (answer.includes("\r\n\r\n")) done()
    })
    socket.on("end", done)
    socket.on("error", done)
  })

const statusOf = (answer: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1] ?? 0)

/** A GET with the path exactly as written (node's client does not normalise it). */
const getRaw = (path: string) =>
  new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const request = http.get(
      { host: "127.0.0.1", port: Number(new URL(base).port), path, headers: V1_HEADERS, agent: false },
      (response) => {
        let body = ""
        response.on("data", (chunk) => (body += String(chunk)))
        response.on("end", () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body }))
      }
    )
    request.setTimeout(3000, () => request.destroy(new Error("no answer within 3 s")))
    request.on("error", reject)
  })

const TRAVERSALS = [
  "/../../../../etc/passwd",
  "/tasks/../../../../etc/passwd",
  "/tasks/..%2F..%2F..%2Fetc%2Fpasswd",
  "/%2e%2e/%2e%2e/etc/passwd",
  "/v1/tasks/..%5c..%5c..%5cwindows%5cwin.ini",
  "/tasks/%2e%2e%2f%2e%2e%2fetc%2fpasswd",
  "/.well-known/../../etc/passwd",
  "/acme/../../../etc/passwd",
  "/tasks/%00",
  "/tasks/..%00/passwd",
  "/tasks/....//....//etc/passwd",
  "//etc/passwd",
  "/tasks/%252e%252e%252fetc%252fpasswd",
  "/file:///etc/passwd"
]
const INJECTIONS = [
  "/tasks/x%0d%0aSet-Cookie:%20a=b",
  "/tasks/x%0aX-Injected:%20yes",
  "/v1/tasks/x%0d%0a%0d%0a<html>",
  "/tasks/x%E5%98%8A%E5%98%8DX-Injected:%20yes"
]

describe("paths and headers", () => {
  it("refuses traversal and header injection on REST paths: a JSON 4xx, no file, no injected header", async () => {
    for (const path of [...TRAVERSALS, ...INJECTIONS]) {
      const answer = await getRaw(path)
      expect([400, 404], path).toContain(answer.status)
      expect(answer.headers["content-type"], path).toMatch(/json/)
      // A JSON error (which may quote the id, escaped), never a file's contents.
      expect(() => JSON.parse(answer.body), path).not.toThrow()
      expect(answer.body, path).not.toMatch(/root:x?:0|\[fonts\]/)
      expect(answer.headers["set-cookie"], path).toBeUndefined()
      expect(answer.headers["x-injected"], path).toBeUndefined()
    }
    // Raw CR or LF in the request line or a header value never reaches a route: node's parser answers 400.
    const port = Number(new URL(base).port)
    const raws = [
      "GET /tasks/x\r\nX-Injected: yes HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
      "GET /tasks/x HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\rX-Injected: yes\r\n\r\n",
      "GET /tasks/x HTTP/1.1\r\nHost: 127.0.0.1\r\nA2A-Version: 1.0\nX-Injected: yes\r\n\r\n"
    ]
    for (const raw of raws) {
      const answer = await rawExchange(port, raw)
      expect(answer === "closed" || [400, 404].includes(statusOf(answer)), JSON.stringify(raw)).toBe(true)
      expect(answer).not.toMatch(/x-injected/i)
    }
    expect(await health()).toBe(200)
    reportFigures("paths and headers", {
      "traversal attempts refused": TRAVERSALS.length,
      "injection attempts refused": INJECTIONS.length + raws.length
    })
  })

  it("answers 413 to a declared oversized body at once, before any of it is sent, on every door", async () => {
    const port = Number(new URL(base).port)
    // 100 MiB declared; only the head is ever sent, so an answer proves nothing was waited for or buffered.
    for (
      const [path, headers] of [["/", "A2A-Version: 1.0\r\n"], ["/message:send", "A2A-Version: 1.0\r\n"], ["/v1/message:send", ""]] as const
    ) {
      const started = Date.now()
      const answer = await rawExchange(
        port,
        `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n${headers}Content-Length: ${
          100 * MiB
        }\r\n\r\n{"jsonrpc"`
      )
      expect(statusOf(answer), path).toBe(413)
      expect(Date.now() - started).toBeLessThan(2000)
    }
    expect(process.memoryUsage().rss).toBeLessThan(2048 * MiB)
    expect(await health()).toBe(200)
  })
})
