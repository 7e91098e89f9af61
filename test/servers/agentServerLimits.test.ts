// The agent server's doors against the fuzz corpus (issue 18): JSON nested deeper than
// MAX_JSON_DEPTH is refused in the door's own envelope before anything is stored, on every
// door that takes a body, in both bindings and generations; the deepest accepted request
// stores a task every route can still list; ids, URLs and bodies past their limits are refused;
// tasks holding files are kept within the store's byte budget; and a defect answers a 500 in the envelope of its route, never HTML or a stack.
import { Effect, Layer, Option } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { deepestAccepted, OVERSIZED, type Payload, tooDeep } from "../fuzz/corpus.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { type Answer, type Json, openStream, post, request, rpc, sendV1, V1_HEADERS } from "./wire.js"

// Room for the corpus' 200 000 levels (1.2 MB of JSON): they are refused for their depth, not their size.
const MAX_BODY_BYTES = 2 * 1024 * 1024

let agent: AgentHandle
let base: string

beforeAll(async () => {
  agent = await startAgent({ maxBodyBytes: MAX_BODY_BYTES })
  base = agent.baseUrl
})

afterAll(async () => {
  await agent?.close()
})

const taskCount = async () => (await rpc(base, "ListTasks", { pageSize: 1 })).json["result"]["totalSize"] as number

const v1MessageJson = (extra: string) => `{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"text":"deep"}],"metadata":${extra}}`
const v03MessageJson = (extra: string) =>
  `{"kind":"message","messageId":"${randomUUID()}","role":"user","parts":[{"kind":"text","text":"deep"}],"metadata":${extra}}`
const rpcJson = (method: string, params: string) => `{"jsonrpc":"2.0","id":"deep","method":"${method}","params":${params}}`

/** A door's answer: a JSON one, or the events of a stream and its content type. */
interface Reply {
  readonly answer?: Answer
  readonly events?: Json[]
  readonly contentType?: string | null
}

const postText = (path: string, body: string, headers: Record<string, string>) => post(`${base}${path}`, body, headers)

const streamText = async (path: string, body: string, headers: Record<string, string>): Promise<Reply> => {
  const { response, events } = await openStream(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body
  })
  return {
    events: (await events()).map((event) => ({ event: event.event, ...event.data })),
    contentType: response.headers.get("content-type")
  }
}

interface Door {
  readonly name: string
  /** The level of the body the payload lands at (the body's root is level 1). */
  readonly offset: number
  readonly send: (payload: string) => Promise<Reply>
  /** What a refused request gets at this door. */
  readonly expectRefused: (reply: Reply) => void
  /** What an accepted one gets; the task it stored, if any. */
  readonly expectAccepted?: (reply: Reply) => string
}

const jsonRpcRefusal = ({ answer }: Reply) => {
  expect(answer?.status).toBe(200)
  expect(answer?.json).toMatchObject({ jsonrpc: "2.0", id: "deep", error: { code: -32602, data: [{ reason: "INVALID_PARAMS" }] } })
  expect(answer?.json["error"]["message"]).toContain("deeper than 64 levels")
}
const restV1Refusal = ({ answer }: Reply) => {
  expect(answer?.status).toBe(400)
  expect(answer?.json).toMatchObject({ error: { code: 400, status: "INVALID_ARGUMENT", details: [{ reason: "INVALID_PARAMS" }] } })
}
const restV03Refusal = ({ answer }: Reply) => {
  expect(answer?.status).toBe(400)
  expect(answer?.json).toMatchObject({ code: -32602 })
}
const completedTask = (task: Json | undefined) => {
  expect(task?.["status"]?.["state"]).toMatch(/TASK_STATE_COMPLETED|completed/)
  return task!["id"] as string
}

const DOORS: ReadonlyArray<Door> = [
  {
    name: "JSON-RPC 1.0 SendMessage, message metadata",
    offset: 4,
    send: async (payload) => ({ answer: await postText("/", rpcJson("SendMessage", `{"message":${v1MessageJson(payload)}}`), V1_HEADERS) }),
    expectRefused: jsonRpcRefusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["result"]["task"])
  },
  {
    name: "JSON-RPC 1.0 SendMessage, a data part",
    offset: 6,
    send: async (payload) => ({
      answer: await postText(
        "/",
        rpcJson("SendMessage", `{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","parts":[{"data":${payload}}]}}`),
        V1_HEADERS
      )
    }),
    expectRefused: jsonRpcRefusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["result"]["task"])
  },
  {
    name: "JSON-RPC 1.0 SendStreamingMessage, message metadata",
    offset: 4,
    send: (payload) => streamText("/", rpcJson("SendStreamingMessage", `{"message":${v1MessageJson(payload)}}`), V1_HEADERS),
    expectRefused: (reply) => {
      expect(reply.contentType).toContain("text/event-stream")
      expect(reply.events).toEqual([
        expect.objectContaining({ event: "error", id: "deep", error: expect.objectContaining({ code: -32602 }) })
      ])
    },
    expectAccepted: ({ events }) =>
      completedTask(
        events?.[events.length - 1]?.["result"]["statusUpdate"] === undefined
          ? undefined
          : { id: events[0]!["result"]["task"]["id"], status: events[events.length - 1]!["result"]["statusUpdate"]["status"] }
      )
  },
  {
    name: "JSON-RPC 0.3 message/send, message metadata",
    offset: 4,
    send: async (payload) => ({ answer: await postText("/", rpcJson("message/send", `{"message":${v03MessageJson(payload)}}`), {}) }),
    expectRefused: jsonRpcRefusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["result"])
  },
  {
    name: "REST 1.0 POST /message:send, message metadata",
    offset: 3,
    send: async (payload) => ({ answer: await postText("/message:send", `{"message":${v1MessageJson(payload)}}`, V1_HEADERS) }),
    expectRefused: restV1Refusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["task"])
  },
  {
    name: "REST 1.0 POST /{tenant}/message:send, message metadata",
    offset: 3,
    send: async (payload) => ({ answer: await postText("/acme/message:send", `{"message":${v1MessageJson(payload)}}`, V1_HEADERS) }),
    expectRefused: restV1Refusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["task"])
  },
  {
    name: "REST 0.3 POST /v1/message:send, message metadata",
    offset: 3,
    send: async (payload) => ({
      answer: await postText(
        "/v1/message:send",
        `{"message":{"messageId":"${randomUUID()}","role":"ROLE_USER","content":[{"text":"deep"}],"metadata":${payload}},"configuration":{"blocking":true}}`,
        {}
      )
    }),
    expectRefused: restV03Refusal,
    expectAccepted: ({ answer }) => completedTask(answer?.json["task"])
  },
  {
    name: "REST 1.0 POST /tasks/{id}:cancel, metadata",
    offset: 2,
    send: async (payload) => ({ answer: await postText(`/tasks/${randomUUID()}:cancel`, `{"metadata":${payload}}`, V1_HEADERS) }),
    expectRefused: restV1Refusal
  }
]

/** Every route that lists or reads tasks answers, and with valid JSON. */
const expectEveryReadWorks = async (taskIds: ReadonlyArray<string>) => {
  const listings: Array<Answer> = [
    await rpc(base, "ListTasks", { pageSize: 100 }),
    await request(`${base}/tasks?pageSize=100`, { headers: V1_HEADERS }),
    await request(`${base}/acme/tasks?pageSize=100`, { headers: V1_HEADERS }),
    // With A2A-Version 1.0, /v1 is a tenant like any other.
    await request(`${base}/v1/tasks?pageSize=100`, { headers: V1_HEADERS })
  ]
  for (const listing of listings) {
    expect(listing.status).toBe(200)
    const listed = ((listing.json["result"] ?? listing.json)["tasks"] as Json[]).map((task) => task["id"])
    expect(listed).toEqual(expect.arrayContaining([...taskIds]))
  }
  for (const id of taskIds) {
    expect((await rpc(base, "GetTask", { id })).json["result"]["id"]).toBe(id)
    expect((await rpc(base, "tasks/get", { id }, {})).json["result"]["id"]).toBe(id)
    expect((await request(`${base}/tasks/${id}`, { headers: V1_HEADERS })).status).toBe(200)
    expect((await request(`${base}/v1/tasks/${id}`)).status).toBe(200)
  }
}

describe("JSON nesting at every door that takes a body", () => {
  it.each(DOORS.map((door) => [door.name, door] as const))("%s: refuses too deep before storing anything", async (_name, door) => {
    const before = await taskCount()
    for (const payload of tooDeep(door.offset)) {
      const reply = await door.send(payload.json)
      try {
        door.expectRefused(reply)
      } catch (error) {
        throw new Error(`${payload.name}: ${String(error)}`)
      }
    }
    expect(await taskCount()).toBe(before)
    expect((await request(`${base}/health`)).status).toBe(200)
  })

  it("takes the deepest accepted request at each door, and every route still lists and reads what it stored", async () => {
    const stored: Array<string> = []
    for (const door of DOORS) {
      if (door.expectAccepted === undefined) continue
      for (const payload of deepestAccepted(door.offset)) stored.push(door.expectAccepted(await door.send(payload.json)))
    }
    expect(stored).toHaveLength(7 * 3)
    await expectEveryReadWorks(stored)
  })

  it("reproduces the report: metadata 5 000 levels deep on POST /message:send is a 400, and ListTasks keeps answering", async () => {
    const deep: Payload = tooDeep(3).find((payload) => payload.depth === 5_000)!
    const sent = await postText("/message:send", `{"message":${v1MessageJson(deep.json)}}`, V1_HEADERS)
    expect(sent.status).toBe(400)
    await expectEveryReadWorks([])
  })
})

describe("sizes past their limits", () => {
  it("refuses an id longer than 1024 characters, and a push URL longer than 8192, storing nothing", async () => {
    const before = await taskCount()
    const long = OVERSIZED.id
    for (const message of [{ messageId: long }, { contextId: long }, { taskId: long }]) {
      const viaRpc = await rpc(base, "SendMessage", {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }], ...message }
      })
      expect(viaRpc.json["error"]).toMatchObject({ code: -32602, message: expect.stringContaining("longer than 1024 characters") })
      const viaRest = await post(`${base}/message:send`, {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }], ...message }
      }, V1_HEADERS)
      expect(viaRest.status).toBe(400)
    }
    expect(await taskCount()).toBe(before)
    const task = await sendV1(base, "hook me")
    const config = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: task["id"], url: OVERSIZED.url })
    expect(config.json["error"]).toMatchObject({ code: -32602, message: expect.stringContaining("url is longer than 8192") })
    const longConfigId = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: task["id"], id: long, url: "http://127.0.0.1:9/x" })
    expect(longConfigId.json["error"]["code"]).toBe(-32602)
  })

  it("refuses an id with a NUL (text a PostgreSQL store cannot hold, so no store keeps it), storing nothing", async () => {
    const before = await taskCount()
    for (const message of [{ messageId: "m\u0000" }, { contextId: "ctx\u0000x" }, { taskId: "\u0000" }]) {
      const viaRpc = await rpc(base, "SendMessage", {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "x" }], ...message }
      })
      expect(viaRpc.json["error"]).toMatchObject({ code: -32602, message: expect.stringContaining("must not contain a NUL character") })
    }
    expect(await taskCount()).toBe(before)
    const task = await sendV1(base, "hook me")
    const config = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: task["id"], id: "a\u0000b", url: "http://127.0.0.1:9/x" })
    expect(config.json["error"]).toMatchObject({ code: -32602, message: expect.stringContaining("push notification config id must not") })
  })

  it("does not echo a huge id back in an error", async () => {
    const huge = "y".repeat(100_000)
    const answer = await rpc(base, "GetTask", { id: huge })
    expect(answer.json["error"]["code"]).toBe(-32001)
    expect(answer.json["error"]["message"]).toContain("(100000 characters)")
    expect(JSON.stringify(answer.json).length).toBeLessThan(1000)
  })

  it("answers a body over the limit with 413 in each door's envelope", async () => {
    const big = JSON.stringify({ pad: "z".repeat(MAX_BODY_BYTES) })
    const viaRpc = await postText("/", big, V1_HEADERS)
    expect(viaRpc.status).toBe(413)
    expect(viaRpc.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32600 } })
    const viaRest = await postText("/message:send", big, V1_HEADERS)
    expect(viaRest.status).toBe(413)
    expect(viaRest.json).toMatchObject({ error: { code: 413, status: "RESOURCE_EXHAUSTED" } })
    const viaV03 = await postText("/v1/message:send", big, {})
    expect(viaV03.status).toBe(413)
    expect(viaV03.json).toMatchObject({ code: -32602 })
  })
})

describe("tasks holding files, past the store's byte budget", () => {
  it("forgets the oldest finished tasks and keeps a working one, whatever it holds", async () => {
    const budget = await startAgent({ store: { maxBytes: 4_000_000 } })
    try {
      // An image, which a model takes as such: its text stays the message's text ("hang" hangs).
      const png = Buffer.alloc(1_000_000)
      png.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])
      const file = { raw: png.toString("base64"), filename: "f.png", mediaType: "image/png" }
      const withFile = (text: string) => ({ message: { parts: [{ text }, file] } })
      // Each task holds ~1.33 MB of base64; the one that hangs stays working.
      const working = await sendV1(budget.baseUrl, "hang", { ...withFile("hang"), configuration: { returnImmediately: true } })
      const finished: Array<string> = []
      for (let i = 0; i < 4; i++) finished.push((await sendV1(budget.baseUrl, `file ${i}`, withFile(`file ${i}`)))["id"] as string)
      const state = async (id: string) => {
        const answer = await rpc(budget.baseUrl, "GetTask", { id, historyLength: 0 })
        return answer.json["result"]?.["status"]["state"] ?? answer.json["error"]["code"]
      }
      expect(await state(working["id"] as string)).toBe("TASK_STATE_WORKING")
      expect(await Promise.all(finished.map(state))).toEqual([-32001, -32001, -32001, "TASK_STATE_COMPLETED"])
    } finally {
      await budget.close()
    }
  })
})

// ---------------------------------------------------------------------------
// A defect (here: a stored value JSON cannot write, which the real store never keeps)

const unwritable = {
  id: "unwritable",
  contextId: "c",
  status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-01T00:00:00.000Z" },
  metadata: { big: 10n }
} as unknown as V1.Task

const unwritableStore = Layer.scoped(
  TaskStore.TaskStore,
  Effect.map(TaskStore.make(), (store) =>
    TaskStore.TaskStore.of({
      ...store,
      storage: {
        ...store.storage,
        get: () => Effect.succeed(Option.some({ task: unwritable, version: 1, queued: [] })),
        list: () => Effect.succeed({ tasks: [unwritable], totalSize: 1 })
      }
    }))
)

describe("a defect", () => {
  let broken: AgentHandle

  beforeAll(async () => {
    broken = await startAgent({ storeLayer: unwritableStore })
  })

  afterAll(async () => {
    await broken?.close()
  })

  const neverHtmlNorStack = (answer: Answer) => {
    const text = JSON.stringify(answer.json)
    expect(text).not.toMatch(/<html|<pre|\bat .*\(.*:\d+:\d+\)|BigInt/i)
  }

  it("answers a JSON-RPC 500 with the request's id on the JSON-RPC route, in both generations", async () => {
    for (const [method, headers] of [["GetTask", V1_HEADERS], ["ListTasks", V1_HEADERS], ["tasks/get", {}]] as const) {
      const answer = await rpc(broken.baseUrl, method, { id: "unwritable" }, headers, `call-${method}`)
      expect(answer.status).toBe(500)
      expect(answer.headers.get("content-type")).toBe("application/json")
      expect(answer.json).toMatchObject({
        jsonrpc: "2.0",
        id: `call-${method}`,
        error: { code: -32603, message: expect.stringContaining("Internal error"), data: [{ reason: "INTERNAL_ERROR" }] }
      })
      neverHtmlNorStack(answer)
    }
  })

  it("answers google.rpc.Status on 1.0 REST routes and {code, message} on 0.3 ones", async () => {
    for (const path of ["/tasks/unwritable", "/tasks", "/acme/tasks"]) {
      const answer = await request(`${broken.baseUrl}${path}`, { headers: V1_HEADERS })
      expect(answer.status).toBe(500)
      expect(answer.headers.get("content-type")).toBe("application/a2a+json")
      expect(answer.json).toMatchObject({ error: { code: 500, status: "INTERNAL", details: [{ reason: "INTERNAL_ERROR" }] } })
      neverHtmlNorStack(answer)
    }
    const v03 = await request(`${broken.baseUrl}/v1/tasks/unwritable`)
    expect(v03.status).toBe(500)
    expect(v03.json).toMatchObject({ code: -32603 })
    neverHtmlNorStack(v03)
  })
})
