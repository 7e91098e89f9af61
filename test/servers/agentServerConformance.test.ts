// The points an independent conformance pass checked in the agent server (issue 19), on every
// route each touches, in both bindings and generations where it applies: ListTasks pageSize and
// statusTimestampAfter, errors of streaming methods before their first event, the request id
// of a refused call, the extended card only with --auth, and a push config that does not exist;
// and what the official TCK found (issue 27): a v0.3 part without `kind` is refused.
import * as V03Client from "a2a-sdk-v03/client"
import net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { storeBackends } from "./storeBackends.js"
import { type Answer, type Json, openStream, post, request, rpc, sendV1, streamRpc, V1_HEADERS } from "./wire.js"

const KEY = "conformance-key-0123"
const KEYED = { "x-api-key": KEY }

describe.each(storeBackends())("over the $name store", (backend) => {
  /** Without --auth. */
  let agent: AgentHandle
  /** With --auth. */
  let secured: AgentHandle
  let base: string

  beforeAll(async () => {
    ;[agent, secured] = await Promise.all([
      startAgent({ storeLayer: backend.layer() }),
      startAgent({ key: KEY, storeLayer: backend.layer() })
    ])
    base = agent.baseUrl
  })

  afterAll(async () => {
    await Promise.all([agent?.close(), secured?.close()])
  })

  const errorOf = (answer: Answer) => answer.json["error"] as Json
  const getV1 = (path: string, headers: Record<string, string> = {}) =>
    request(`${base}${path}`, { headers: { ...V1_HEADERS, ...headers } })

  describe("ListTasks pageSize (1.0 only, JSON-RPC and REST)", () => {
    it("refuses an explicit 0 as it refuses -1 and 101; only an absent pageSize takes 50", async () => {
      for (const pageSize of [0, -1, 101]) {
        expect(errorOf(await rpc(base, "ListTasks", { pageSize }))).toMatchObject({
          code: -32602,
          message: expect.stringContaining(`pageSize must be between 1 and 100, not ${pageSize}`)
        })
        for (const path of ["/tasks", "/a-tenant/tasks"]) {
          const answer = await getV1(`${path}?pageSize=${pageSize}`)
          expect(answer.status).toBe(400)
          expect(answer.json).toMatchObject({ error: { status: "INVALID_ARGUMENT", message: expect.stringContaining("pageSize") } })
        }
      }
      expect((await rpc(base, "ListTasks", {})).json["result"]["pageSize"]).toBe(50)
      expect((await getV1("/tasks")).json["pageSize"]).toBe(50)
    })

    it("takes 0 as unset in ListTaskPushNotificationConfigs, whose page_size has no presence", async () => {
      const task = await sendV1(base, "configs")
      const listed = await rpc(base, "ListTaskPushNotificationConfigs", { taskId: task["id"], pageSize: 0 })
      expect(listed.json["result"]).toMatchObject({ configs: [] })
      expect((await getV1(`/tasks/${task["id"]}/pushNotificationConfigs?pageSize=0`)).status).toBe(200)
    })
  })

  describe("ListTasks statusTimestampAfter (1.0 only, JSON-RPC and REST)", () => {
    const listBoth = async (after: string, contextId: string) => ({
      rpc: await rpc(base, "ListTasks", { statusTimestampAfter: after, contextId }),
      rest: await getV1(`/tasks?statusTimestampAfter=${encodeURIComponent(after)}&contextId=${contextId}`)
    })

    it("refuses what is not an RFC 3339 timestamp, naming the field", async () => {
      const notTimestamps = [
        "-1",
        "1",
        "12/31/2020",
        "2020-01-01",
        "2020-01-01T00:00:00",
        "2020-01-01 00:00:00Z",
        "2020-01-01t00:00:00z",
        "2020-13-01T00:00:00Z",
        "2021-02-29T00:00:00Z",
        "2020-01-01T24:00:00Z",
        "2020-01-01T00:00:60Z",
        "2020-01-01T00:00:00.1234567890Z",
        "2020-01-01T00:00:00+24:00",
        "0000-01-01T00:00:00Z"
      ]
      for (const text of notTimestamps) {
        const { rpc: viaRpc, rest } = await listBoth(text, "any")
        expect(errorOf(viaRpc), text).toMatchObject({
          code: -32602,
          message: expect.stringContaining("statusTimestampAfter must be an RFC 3339")
        })
        expect(rest.status, text).toBe(400)
        expect(errorOf(rest)["message"]).toContain("statusTimestampAfter must be an RFC 3339")
      }
    })

    it("accepts a fraction of up to nine digits or an offset, and lists the tasks at or after it", async () => {
      const task = await sendV1(base, "timestamped")
      const contextId = task["contextId"] as string
      const at = Date.parse(task["status"]["timestamp"] as string)
      const iso = (millis: number) => new Date(millis).toISOString()
      const cases: ReadonlyArray<readonly [string, boolean]> = [
        [iso(at), true],
        [iso(at).replace(/\.\d{3}Z$/, (fraction) => `${fraction.slice(0, 4)}000000Z`), true],
        // One nanosecond later is after the task's (millisecond) time.
        [iso(at).replace(/\.\d{3}Z$/, (fraction) => `${fraction.slice(0, 4)}000001Z`), false],
        [iso(at + 1), false],
        [iso(at + 3_600_000).replace("Z", "+01:00"), true],
        [iso(at - 1_800_000).replace("Z", "-00:30"), true],
        ["2020-01-01T00:00:00Z", true]
      ]
      for (const [after, listed] of cases) {
        const { rpc: viaRpc, rest } = await listBoth(after, contextId)
        const ids = (page: Json) => (page["tasks"] as Json[]).map((listedTask) => listedTask["id"])
        expect(ids(viaRpc.json["result"]), after).toEqual(listed ? [task["id"]] : [])
        expect(ids(rest.json), after).toEqual(listed ? [task["id"]] : [])
      }
    })
  })

  describe("errors of streaming methods before their first event", () => {
    it.each(
      [
        ["1.0", "SubscribeToTask", { id: "no-such-task" }, -32001],
        ["1.0", "SendStreamingMessage", { message: { role: "ROLE_USER" } }, -32602],
        ["0.3", "tasks/resubscribe", { id: "no-such-task" }, -32001],
        ["0.3", "message/stream", { message: { kind: "message" } }, -32602]
      ] as const
    )("JSON-RPC %s %s: an event stream of one error event with the request's id", async (version, method, params, code) => {
      const { response, events } = await streamRpc(base, method, params, version === "1.0" ? V1_HEADERS : {})
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("text/event-stream")
      const all = await events()
      expect(all).toHaveLength(1)
      expect(all[0]).toMatchObject({ event: "error", data: { jsonrpc: "2.0", id: "s-1", error: { code } } })
    })

    it("REST: the error's HTTP status with google.rpc.Status in 1.0 (tenant paths too) and {code, message} in 0.3", async () => {
      const streamed = (path: string, init: RequestInit & { headers: Record<string, string> }) =>
        openStream(`${base}${path}`, { ...init, headers: { accept: "text/event-stream", ...init.headers } })
      for (const path of ["/tasks/no-such-task:subscribe", "/a-tenant/tasks/no-such-task:subscribe"]) {
        for (const method of ["GET", "POST"]) {
          const { response } = await streamed(path, { method, headers: V1_HEADERS })
          expect(response.status).toBe(404)
          expect(response.headers.get("content-type")).toBe("application/a2a+json")
          expect(await response.json()).toMatchObject({ error: { status: "NOT_FOUND", details: [{ reason: "TASK_NOT_FOUND" }] } })
        }
      }
      const badSend = await streamed("/message:stream", {
        method: "POST",
        headers: { ...V1_HEADERS, "content-type": "application/json" },
        body: JSON.stringify({ message: {} })
      })
      expect(badSend.response.status).toBe(400)
      expect(await badSend.response.json()).toMatchObject({ error: { status: "INVALID_ARGUMENT" } })

      const v03 = await streamed("/v1/tasks/no-such-task:subscribe", { method: "GET", headers: {} })
      expect(v03.response.status).toBe(404)
      expect(await v03.response.json()).toMatchObject({ code: -32001 })
      const v03Send = await streamed("/v1/message:stream", {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: "{\"message\":{}}"
      })
      expect(v03Send.response.status).toBe(400)
      expect(await v03Send.response.json()).toMatchObject({ code: -32602 })
    })

    it("reaches the official 0.3 JSON-RPC client as the typed error (a plain JSON answer was lost on it)", async () => {
      const client = await new V03Client.ClientFactory(V03Client.ClientFactoryOptions.createFrom(V03Client.ClientFactoryOptions.default, {
        preferredTransports: ["JSONRPC"]
      })).createFromUrl(base)
      let failure: unknown
      try {
        for await (const _event of client.resubscribeTask({ id: "no-such-task" })) {
          // no event is expected
        }
      } catch (error) {
        failure = error
      }
      expect((failure as Error | undefined)?.message).toContain("Task no-such-task not found")
      expect(((failure as Error).cause as Error).name).toBe("TaskNotFoundError")
    })
  })

  /** The raw answer to a request written by hand (head and part of a body), within 3 s. */
  const rawExchange = (raw: string) =>
    new Promise<{ readonly status: number; readonly body: string; readonly ms: number }>((resolve, reject) => {
      const started = Date.now()
      const socket = net.connect(Number(new URL(secured.baseUrl).port), "127.0.0.1", () => socket.write(raw))
      let text = ""
      const timer = setTimeout(() => {
        socket.destroy()
        reject(new Error(`no complete answer within 3 s: ${text}`))
      }, 3000)
      socket.on("data", (chunk) => {
        text += String(chunk)
        const head = text.indexOf("\r\n\r\n")
        const length = Number(/content-length: (\d+)/i.exec(text)?.[1] ?? -1)
        if (head < 0 || length < 0 || text.length < head + 4 + length) return
        clearTimeout(timer)
        socket.destroy()
        resolve({ status: Number(text.slice(9, 12)), body: text.slice(head + 4, head + 4 + length), ms: Date.now() - started })
      })
      socket.once("error", reject)
    })

  describe("a refused JSON-RPC call (--auth)", () => {
    it("answers 401 with the request's id, string or number, in 1.0 and 0.3, without a key or with a wrong one", async () => {
      const cases = [
        [V1_HEADERS, "GetTask", "req-7"],
        [{ ...V1_HEADERS, "x-api-key": "wrong" }, "SendMessage", 42],
        [{}, "tasks/get", "legacy-1"],
        [{ authorization: "Bearer wrong" }, "message/send", 0]
      ] as const
      for (const [headers, method, id] of cases) {
        const answer = await rpc(secured.baseUrl, method, { id: "x" }, headers, id)
        expect(answer.status).toBe(401)
        expect(answer.headers.get("www-authenticate")).toContain("Bearer")
        expect(answer.json).toEqual({ jsonrpc: "2.0", id, error: { code: -32000, message: expect.stringContaining("API key") } })
      }
    })

    it("answers id null when the id cannot be read: not JSON, over 64 KiB, or a body not sent within half a second", async () => {
      expect((await post(`${secured.baseUrl}/`, "{not json", V1_HEADERS)).json).toMatchObject({ id: null, error: { code: -32000 } })
      const big = { jsonrpc: "2.0", id: "big", method: "SendMessage", params: { pad: "x".repeat(70 * 1024) } }
      expect((await post(`${secured.baseUrl}/`, big, V1_HEADERS)).json).toMatchObject({ id: null, error: { code: -32000 } })
      // The head and 10 of 100 announced bytes: answered once the wait is over, not when the client gives up.
      const slow = await rawExchange(`POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"id":"sl`)
      expect(slow.status).toBe(401)
      expect(JSON.parse(slow.body)).toMatchObject({ id: null, error: { code: -32000 } })
      expect(slow.ms).toBeGreaterThanOrEqual(400)
      expect(slow.ms).toBeLessThan(1500)
    })
  })

  describe("the extended card", () => {
    const extendedRoutes = (url: string, headers: Record<string, string>) => [
      rpc(url, "GetExtendedAgentCard", undefined, { ...V1_HEADERS, ...headers }),
      rpc(url, "agent/getAuthenticatedExtendedCard", undefined, headers),
      request(`${url}/extendedAgentCard`, { headers: { ...V1_HEADERS, ...headers } }),
      request(`${url}/v1/card`, { headers })
    ]

    it("is not advertised without --auth, and asking for it is UnsupportedOperation in 1.0, not configured in 0.3", async () => {
      expect((await getV1("/.well-known/agent-card.json")).json["capabilities"]["extendedAgentCard"]).toBe(false)
      expect((await request(`${base}/.well-known/agent-card.json`)).json["supportsAuthenticatedExtendedCard"]).toBe(false)
      const [v1Rpc, v03Rpc, v1Rest, v03Rest] = await Promise.all(extendedRoutes(base, {}))
      expect(errorOf(v1Rpc!)).toMatchObject({ code: -32004, data: [{ reason: "UNSUPPORTED_OPERATION" }] })
      expect(errorOf(v03Rpc!)).toMatchObject({ code: -32007 })
      expect(v1Rest!.status).toBe(400)
      expect(errorOf(v1Rest!)).toMatchObject({ status: "FAILED_PRECONDITION", details: [{ reason: "UNSUPPORTED_OPERATION" }] })
      expect(v03Rest!.status).toBe(400)
      expect(v03Rest!.json).toMatchObject({ code: -32007 })
    })

    it("is advertised with --auth, refused without the key and served with it, on all four routes", async () => {
      const url = secured.baseUrl
      expect((await request(`${url}/.well-known/agent-card.json`, { headers: V1_HEADERS })).json["capabilities"]["extendedAgentCard"]).toBe(
        true
      )
      expect((await request(`${url}/.well-known/agent-card.json`)).json["supportsAuthenticatedExtendedCard"]).toBe(true)
      for (const refused of await Promise.all(extendedRoutes(url, {}))) expect(refused.status).toBe(401)
      const served = await Promise.all(extendedRoutes(url, KEYED))
      const descriptions = served.map((answer) => (answer.json["result"] ?? answer.json)["description"])
      for (const description of descriptions) expect(description).toContain("Model chosen because: a test")
    })
  })

  describe("a push config that does not exist", () => {
    it("is TaskNotFound (as the spec names it) with a message that says the config was not found, on all four routes", async () => {
      const task = await sendV1(base, "no configs")
      const id = task["id"] as string
      const message = `Push notification config nope not found for task ${id}`
      const v1Rpc = await rpc(base, "GetTaskPushNotificationConfig", { taskId: id, id: "nope" })
      expect(errorOf(v1Rpc)).toMatchObject({ code: -32001, message, data: [{ reason: "TASK_NOT_FOUND" }] })
      const v1Rest = await getV1(`/tasks/${id}/pushNotificationConfigs/nope`)
      expect(v1Rest.status).toBe(404)
      expect(errorOf(v1Rest)).toMatchObject({ status: "NOT_FOUND", message })
      const v03Rpc = await rpc(base, "tasks/pushNotificationConfig/get", { id, pushNotificationConfigId: "nope" }, {})
      expect(errorOf(v03Rpc)).toMatchObject({ code: -32001, message })
      const v03Rest = await request(`${base}/v1/tasks/${id}/pushNotificationConfigs/nope`)
      expect(v03Rest.status).toBe(404)
      expect(v03Rest.json).toMatchObject({ code: -32001, message })
      // 0.3's get by task id alone, on a task without configs.
      const current = await rpc(base, "tasks/pushNotificationConfig/get", { id }, {})
      expect(errorOf(current)).toMatchObject({ code: -32001, message: `Push notification config not found for task ${id}` })
    })

    it("set without an id gets a new UUID in 1.0 and the task's id in 0.3, which 0.3's get and delete by task id find", async () => {
      const task = await sendV1(base, "configs without ids")
      const id = task["id"] as string
      const hook = "http://127.0.0.1:9/hook"
      const v1 = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: id, url: hook })
      expect(v1.json["result"]["id"]).toMatch(/^[0-9a-f-]{36}$/)
      const v03 = await rpc(base, "tasks/pushNotificationConfig/set", { taskId: id, pushNotificationConfig: { url: hook } }, {})
      expect(v03.json["result"]["pushNotificationConfig"]["id"]).toBe(id)
      const byTask = await rpc(base, "tasks/pushNotificationConfig/get", { id, pushNotificationConfigId: id }, {})
      expect(byTask.json["result"]["pushNotificationConfig"]).toMatchObject({ id, url: hook })
      await rpc(base, "tasks/pushNotificationConfig/delete", { id, pushNotificationConfigId: id }, {})
      const left = await rpc(base, "tasks/pushNotificationConfig/list", { id }, {})
      expect((left.json["result"] as Json[]).map((config) => config["pushNotificationConfig"]["id"])).toEqual([v1.json["result"]["id"]])
      const rest = await post(`${base}/v1/tasks/${id}/pushNotificationConfigs`, { config: { pushNotificationConfig: { url: hook } } })
      expect(rest.status).toBe(201)
      expect(rest.json["name"]).toBe(`tasks/${id}/pushNotificationConfigs/${id}`)
    })
  })

  describe("a v0.3 part without kind (v0.3 §6.5, §8.1)", () => {
    const v03Params = (parts: ReadonlyArray<Json>) => ({ message: { kind: "message", messageId: "m-kindless", role: "user", parts } })
    const KINDLESS = [{ kind: "text", text: "fine" }, { text: "no kind" }]
    const invalidPart = {
      code: -32602,
      message: "message.parts[1].kind is required",
      data: [{ metadata: { field: "message.parts[1].kind" } }]
    }

    it("is -32602 naming the part over JSON-RPC (message/send, and message/stream's one error event)", async () => {
      const sent = await rpc(base, "message/send", v03Params(KINDLESS), {})
      expect(errorOf(sent)).toMatchObject(invalidPart)
      const { events } = await streamRpc(base, "message/stream", v03Params([{ data: { a: 1 } }]), {})
      expect(await events()).toMatchObject([{
        event: "error",
        data: { id: "s-1", error: { code: -32602, message: "message.parts[0].kind is required" } }
      }])
      for (const kind of ["text", "data", "file"]) {
        const part = kind === "text" ? { text: "x" } : kind === "data" ? { data: { a: 1 } } : { file: { uri: "https://example.com/a.txt" } }
        expect(errorOf(await rpc(base, "message/send", v03Params([part]), {}))).toMatchObject({ code: -32602 })
        expect((await rpc(base, "message/send", v03Params([{ kind, ...part }]), {})).json["result"]).toMatchObject({ kind: "task" })
      }
    })

    it("is 400 with -32602 over HTTP+JSON 0.3 in the JSON-RPC shape (`parts`); the proto shape (`content`) has no kind", async () => {
      const rest = await post(`${base}/v1/message:send`, { message: { messageId: "m-rest", role: "ROLE_USER", parts: KINDLESS } })
      expect(rest.status).toBe(400)
      expect(rest.json).toMatchObject({ code: -32602, message: "message.parts[1].kind is required" })
      const proto = await post(`${base}/v1/message:send`, {
        message: { messageId: "m-proto", role: "ROLE_USER", content: [{ text: "fine" }] }
      })
      expect(proto.status).toBe(200)
      expect(proto.json["task"]["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    })
  })
})
