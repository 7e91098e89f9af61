// The agent server on the wire, with plain fetch: the card (generations, ETag, Host), every
// JSON-RPC and REST error, the REST path families (v1.0 + tenant, v0.3 under /v1, the
// product's own paths), task semantics (streaming without buffering, several subscribers,
// failures, conversation context, input-required turns), push delivery and shutdown.
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import http from "node:http"
import net from "node:net"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { validateCard } from "../../src/a2a/validation/cardValidation.js"
import type { AgentDecision } from "../../src/programs/agent/settings.js"
import { taskStoreLayer } from "../../src/servers/agent/taskStores.js"
import { cutOffAfter, endlessUpload } from "../peers/httpUtil.js"
import { startWebhookSink, type WebhookDelivery, type WebhookSink } from "../peers/webhookSink.js"
import { type AgentHandle, eventually, SLOW_WORD_MS, startAgent } from "./agentHarness.js"
import {
  type Answer,
  type Json,
  openStream,
  post,
  request,
  rpc,
  sendV1,
  type SseEvent,
  streamRpc,
  v03Message,
  V1_HEADERS,
  v1Message
} from "./wire.js"

// ---------------------------------------------------------------------------
// Wire helpers

const answerText = (task: Json) =>
  ((task["artifacts"] ?? []) as Json[]).flatMap((artifact) => (artifact["parts"] as Json[]).map((part) => part["text"] ?? "")).join("")

/** The first SSE event of a response, leaving the rest unread. */
const readFirstEvent = async (response: Response, started: number): Promise<SseEvent> => {
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  while (!buffer.includes("\n\n")) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the stream ended before its first event: ${buffer}`)
    buffer += value
  }
  const data = buffer.slice(0, buffer.indexOf("\n\n")).split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5))
    .join("")
  return { event: undefined, data: JSON.parse(data) as Json, at: Date.now() - started }
}

/** The status of the answer to a request whose body never completes; rejects after 2 s without one. */
const statusOfPartialRequest = (port: number, raw: string) =>
  new Promise<number>((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1", () => socket.write(raw))
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error("no answer within 2 s"))
    }, 2000)
    socket.once("data", (chunk) => {
      clearTimeout(timer)
      socket.destroy()
      resolve(Number(/^HTTP\/1\.1 (\d{3})/.exec(String(chunk))?.[1] ?? 0))
    })
    socket.once("error", reject)
  })

const kindOf = (event: Json) => Object.keys(event)[0]
const stateOf = (event: Json): string | undefined => event["task"]?.["status"]?.["state"] ?? event["statusUpdate"]?.["status"]?.["state"]

// ---------------------------------------------------------------------------

let agent: AgentHandle
let base: string

/** Asks for input once when a message says "need input", then answers. */
const askOnce = {
  decide: (message: { readonly parts: ReadonlyArray<unknown> }): AgentDecision =>
    JSON.stringify(message.parts).includes("need input") ? { _tag: "AskForInput", question: "What is your name?" } : { _tag: "Answer" }
}

beforeAll(async () => {
  agent = await startAgent({ settings: { policy: askOnce }, maxBodyBytes: 64 * 1024 })
  base = agent.baseUrl
})

afterAll(async () => {
  await agent?.close()
})

describe("agent card", () => {
  it("is served at /, agent-card.json and the legacy agent.json paths, hybrid without A2A-Version", async () => {
    const answers = await Promise.all(
      ["/", "/.well-known/agent-card.json", "/.well-known/agent.json", "/.well-known/a2a/agent.json"].map((path) =>
        request(`${base}${path}`)
      )
    )
    for (const answer of answers) {
      expect(answer.status).toBe(200)
      expect(answer.json).toEqual(answers[0]!.json)
    }
    const card = answers[0]!.json
    expect(card["protocolVersion"]).toBe("0.3.0")
    expect(card["url"]).toBe(`${base}/`)
    expect(card["preferredTransport"]).toBe("JSONRPC")
    expect(card["additionalInterfaces"]).toEqual([{ url: base, transport: "HTTP+JSON" }])
    expect(card["capabilities"]).toMatchObject({ streaming: true, pushNotifications: true })
    // No --auth, so no extended card to advertise (issue 19.5).
    expect(card["supportsAuthenticatedExtendedCard"]).toBe(false)
    expect(validateCard(card).generation).toBe("hybrid")
    expect(validateCard(card).valid).toBe(true)
  })

  it("is the strict v1.0 card for A2A-Version: 1.0, with one interface per binding and version", async () => {
    const { json: card, headers } = await request(`${base}/.well-known/agent-card.json`, { headers: V1_HEADERS })
    expect(card["url"]).toBeUndefined()
    expect(card["protocolVersion"]).toBeUndefined()
    expect(card["supportedInterfaces"]).toEqual([
      { url: `${base}/`, protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: base, protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      { url: `${base}/`, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: base, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }
    ])
    expect(card["capabilities"]).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: false })
    expect(card["securitySchemes"]).toBeUndefined()
    const validation = validateCard(card)
    expect(validation.generation).toBe("1.0")
    expect(validation.issues.filter((issue) => issue.severity === "error")).toEqual([])
    expect(headers.get("vary")).toBe("A2A-Version")
    expect(headers.get("cache-control")).toMatch(/max-age=\d+/)
    expect(headers.get("etag")).toMatch(/^W\/".+"$/)
  })

  it("answers 304 to a matching If-None-Match and uses a different ETag per generation", async () => {
    const v1 = await fetch(`${base}/.well-known/agent-card.json`, { headers: V1_HEADERS })
    const hybrid = await fetch(`${base}/.well-known/agent-card.json`)
    const etag = v1.headers.get("etag")!
    expect(hybrid.headers.get("etag")).not.toBe(etag)
    const again = await fetch(`${base}/.well-known/agent-card.json`, { headers: { ...V1_HEADERS, "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(again.headers.get("etag")).toBe(etag)
  })

  it("advertises the address the client used (Host header), so 0.0.0.0 binds still give reachable URLs", async () => {
    // fetch may not set Host, node:http may.
    const cardFor = (host: string) =>
      new Promise<Json>((resolve, reject) => {
        http.get(`${base}/.well-known/agent-card.json`, { headers: { ...V1_HEADERS, host } }, (response) => {
          let body = ""
          response.on("data", (chunk: Buffer) => (body += chunk.toString()))
          response.on("end", () => resolve(JSON.parse(body) as Json))
        }).on("error", reject)
      })
    expect((await cardFor("agent.example:1234"))["supportedInterfaces"][0]["url"]).toBe("http://agent.example:1234/")
    // A Host that is not a plain host[:port] is not echoed; the address the request came in on is.
    expect((await cardFor("evil.example/<x>"))["supportedInterfaces"][0]["url"]).toBe(`${base}/`)
  })

  it("answers /health", async () => {
    expect(await request(`${base}/health`)).toMatchObject({ status: 200, json: { status: "ok" } })
  })

  it("answers HEAD on the card and /health with the headers and no body", async () => {
    for (const path of ["/.well-known/agent-card.json", "/health"]) {
      const response = await fetch(`${base}${path}`, { method: "HEAD" })
      expect(response.status).toBe(200)
      expect(response.headers.get("content-type")).toContain("application/json")
      expect(await response.text()).toBe("")
    }
  })
})

describe("JSON-RPC errors", () => {
  const errorOf = (answer: Answer) => answer.json["error"] as Json

  it("-32700 for malformed JSON, with id null", async () => {
    const answer = await post(`${base}/`, "{not json", V1_HEADERS)
    expect(answer.status).toBe(200)
    expect(answer.json).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: -32700 } })
  })

  it("-32600 for a bad envelope: wrong jsonrpc, missing method, batches", async () => {
    expect(errorOf(await post(`${base}/`, { jsonrpc: "1.0", id: 7, method: "GetTask" }, V1_HEADERS))["code"]).toBe(-32600)
    const noMethod = await post(`${base}/`, { jsonrpc: "2.0", id: 8 }, V1_HEADERS)
    expect(noMethod.json).toMatchObject({ id: 8, error: { code: -32600 } })
    expect(errorOf(await post(`${base}/`, [{ jsonrpc: "2.0", id: 1, method: "GetTask" }], V1_HEADERS))["code"]).toBe(-32600)
  })

  it("-32601 for an unknown method and for a 0.3 method under A2A-Version 1.0", async () => {
    expect(errorOf(await rpc(base, "Frobnicate", {}))["code"]).toBe(-32601)
    expect(errorOf(await rpc(base, "message/send", { message: v03Message("x") }))["code"]).toBe(-32601)
  })

  it("-32602 with an INVALID_PARAMS ErrorInfo for bad params and for a blank message", async () => {
    const missing = errorOf(await rpc(base, "SendMessage", { configuration: {} }))
    expect(missing).toMatchObject({
      code: -32602,
      data: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "INVALID_PARAMS", domain: "a2a-protocol.org" }]
    })
    expect(errorOf(await rpc(base, "SendMessage", { message: v1Message("   ") }))["code"]).toBe(-32602)
    expect(errorOf(await rpc(base, "SendMessage", { message: { ...v1Message("hi"), role: "ROLE_AGENT" } }))["code"]).toBe(-32602)
  })

  it("-32001 TASK_NOT_FOUND for an unknown task, echoing a string id", async () => {
    const answer = await rpc(base, "GetTask", { id: "no-such-task" }, V1_HEADERS, "req-42")
    expect(answer.json).toMatchObject({
      id: "req-42",
      error: { code: -32001, data: [{ reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }] }
    })
  })

  it("-32002 for canceling a completed task and -32004 (as an event stream's one error event) for subscribing to one", async () => {
    const task = await sendV1(base, "finished")
    expect(errorOf(await rpc(base, "CancelTask", { id: task["id"] }))).toMatchObject({
      code: -32002,
      data: [{ reason: "TASK_NOT_CANCELABLE" }]
    })
    const { response, events } = await streamRpc(base, "SubscribeToTask", { id: task["id"] })
    expect(response.headers.get("content-type")).toContain("text/event-stream")
    const [only, ...rest] = await events()
    expect(rest).toEqual([])
    expect(only).toMatchObject({
      event: "error",
      data: { id: "s-1", error: { code: -32004, data: [{ reason: "UNSUPPORTED_OPERATION" }] } }
    })
  })

  it("serves a v1.0 method without A2A-Version as 1.0, and 0.3 methods as 0.3", async () => {
    const v1 = await rpc(base, "SendMessage", { message: v1Message("no header") }, {})
    expect(v1.json["result"]["task"]["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    const v03 = await rpc(base, "message/send", { message: v03Message("old style") }, {})
    expect(v03.json["result"]).toMatchObject({ kind: "task", status: { state: "completed" } })
    const pinned = await rpc(base, "message/send", { message: v03Message("pinned") }, { "a2a-version": "0.3" })
    expect(pinned.json["result"]["kind"]).toBe("task")
    const byQuery = await post(`${base}/?A2A-Version=1.0`, {
      jsonrpc: "2.0",
      id: 3,
      method: "GetTask",
      params: { id: v1.json["result"]["task"]["id"] }
    })
    expect(byQuery.json["result"]["id"]).toBe(v1.json["result"]["task"]["id"])
  })

  it("-32009 VERSION_NOT_SUPPORTED for a version the agent does not speak", async () => {
    expect(errorOf(await rpc(base, "GetTask", { id: "x" }, { "a2a-version": "2.0" }))).toMatchObject({
      code: -32009,
      data: [{ reason: "VERSION_NOT_SUPPORTED" }]
    })
  })

  it("-32005 for a body that is not JSON by Content-Type", async () => {
    const answer = await post(`${base}/`, "{}", { "content-type": "text/plain" })
    expect(errorOf(answer)["code"]).toBe(-32005)
  })

  it("413 for a body over the limit, on JSON-RPC and REST", async () => {
    const huge = "x".repeat(70 * 1024)
    const jsonRpc = await rpc(base, "SendMessage", { message: v1Message(huge) })
    expect(jsonRpc.status).toBe(413)
    expect(errorOf(jsonRpc)["code"]).toBe(-32600)
    const rest = await post(`${base}/message:send`, { message: v1Message(huge) }, V1_HEADERS)
    expect(rest.status).toBe(413)
    expect(rest.json["error"]["code"]).toBe(413)
  })
})

describe("REST", () => {
  it("answers an unknown task with 404 and a google.rpc.Status body", async () => {
    const answer = await request(`${base}/tasks/no-such-task`, { headers: V1_HEADERS })
    expect(answer.status).toBe(404)
    expect(answer.json).toEqual({
      error: {
        code: 404,
        status: "NOT_FOUND",
        message: "Task no-such-task not found",
        details: [{ "@type": "type.googleapis.com/google.rpc.ErrorInfo", reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" }]
      }
    })
  })

  it("answers paths it does not serve with 404 and no ErrorInfo, and refuses other versions on v1.0 paths", async () => {
    const unknown = await request(`${base}/nothing/here/at/all`, { headers: V1_HEADERS })
    expect(unknown.status).toBe(404)
    expect(unknown.json["error"]["details"]).toEqual([])
    const wrongVersion = await post(`${base}/message:send`, { message: v1Message("x") }, { "a2a-version": "0.3" })
    expect(wrongVersion.status).toBe(400)
    expect(wrongVersion.json["error"]).toMatchObject({ status: "FAILED_PRECONDITION", details: [{ reason: "VERSION_NOT_SUPPORTED" }] })
  })

  it("sends, gets, lists and cancels on the v1.0 paths, with and without a tenant prefix", async () => {
    const sent = await post(`${base}/message:send`, { message: v1Message("over rest") }, V1_HEADERS)
    expect(sent.status).toBe(200)
    expect(sent.headers.get("content-type")).toContain("application/a2a+json")
    const id = sent.json["task"]["id"] as string
    expect((await request(`${base}/acme/tasks/${id}?historyLength=0`, { headers: V1_HEADERS })).json).toMatchObject({ id })
    const tenantSend = await post(`${base}/acme/message:send`, { message: v1Message("tenant") }, V1_HEADERS)
    expect(answerText(tenantSend.json["task"])).toBe("tenant")
    const listed = await request(`${base}/tasks?pageSize=1&includeArtifacts=true`, { headers: V1_HEADERS })
    expect(listed.json["tasks"]).toHaveLength(1)
    expect(listed.json["nextPageToken"]).not.toBe("")
    const canceled = await post(`${base}/tasks/${id}:cancel`, {}, V1_HEADERS)
    expect(canceled.status).toBe(400)
    expect(canceled.json["error"]).toMatchObject({ status: "FAILED_PRECONDITION", details: [{ reason: "TASK_NOT_CANCELABLE" }] })
  })

  it("accepts :subscribe on both GET and POST", async () => {
    const task =
      (await post(`${base}/message:send`, { message: v1Message("slow: a b c"), configuration: { returnImmediately: true } }, V1_HEADERS))
        .json["task"]
    const viaGet = await openStream(`${base}/tasks/${task["id"]}:subscribe`, { headers: V1_HEADERS })
    const viaPost = await openStream(`${base}/tasks/${task["id"]}:subscribe`, { method: "POST", headers: V1_HEADERS })
    expect(viaGet.response.headers.get("content-type")).toContain("text/event-stream")
    const [a, b] = await Promise.all([viaGet.events(), viaPost.events()])
    for (const events of [a, b]) {
      expect(kindOf(events[0]!.data)).toBe("task")
      expect(stateOf(events[events.length - 1]!.data)).toBe("TASK_STATE_COMPLETED")
    }
  })

  it("serves the product's own paths: /messages, /tasks/{id}, /cancel, /stream and /notification", async () => {
    const sent = await post(`${base}/messages`, {
      message: v1Message("slow: one two three four five"),
      configuration: { returnImmediately: true }
    })
    const id = sent.json["task"]["id"] as string
    const stream = await openStream(`${base}/tasks/${id}/stream`, {})
    const put = await request(`${base}/tasks/${id}/notification`, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ url: "http://127.0.0.1:9/hook", token: "s3cret" })
    })
    expect(put.status).toBe(200)
    expect(put.json).toMatchObject({ taskId: id, url: "http://127.0.0.1:9/hook" })
    const got = await request(`${base}/tasks/${id}/notification`)
    expect(got.json).toMatchObject({ id: put.json["id"], url: "http://127.0.0.1:9/hook" })
    expect(got.json["token"]).not.toBe("s3cret")
    const canceled = await post(`${base}/tasks/${id}/cancel`, {})
    expect(canceled.json["status"]["state"]).toBe("TASK_STATE_CANCELED")
    const events = await stream.events()
    expect(kindOf(events[0]!.data)).toBe("task")
    expect(stateOf(events[events.length - 1]!.data)).toBe("TASK_STATE_CANCELED")
    expect((await request(`${base}/tasks/${id}`)).json["status"]["state"]).toBe("TASK_STATE_CANCELED")
  })

  it("speaks v0.3 proto JSON under /v1 without A2A-Version", async () => {
    const sent = await post(`${base}/v1/message:send`, {
      message: { messageId: randomUUID(), role: "ROLE_USER", content: [{ text: "proto" }] },
      configuration: { blocking: true }
    })
    expect(sent.json["task"]).toMatchObject({ status: { state: "TASK_STATE_COMPLETED" } })
    expect(sent.json["task"]["artifacts"][0]["parts"]).toEqual([{ text: "proto" }])
    const slow = await post(`${base}/v1/message:send`, {
      message: { messageId: randomUUID(), role: "ROLE_USER", content: [{ text: "slow: x y z" }] },
      configuration: {}
    })
    expect(slow.json["task"]["status"]["state"]).toBe("TASK_STATE_SUBMITTED")
    const canceled = await post(`${base}/v1/tasks/${slow.json["task"]["id"]}:cancel`, {})
    expect(canceled.json["status"]["state"]).toBe("TASK_STATE_CANCELLED")
    const missing = await request(`${base}/v1/tasks/nope`)
    expect(missing.status).toBe(404)
    expect(missing.json).toMatchObject({ code: -32001 })
  })
})

describe("tasks", () => {
  it("writes each answer chunk to the stream as the model produces it", async () => {
    const words = 6
    const { events } = await streamRpc(base, "SendStreamingMessage", { message: v1Message(`slow: ${"w ".repeat(words).trim()}`) })
    const all = await events()
    const chunks = all.filter((event) => kindOf(event.data["result"]) === "artifactUpdate")
    const done = all[all.length - 1]!
    expect(stateOf(done.data["result"])).toBe("TASK_STATE_COMPLETED")
    expect(chunks.length).toBe(words + 1)
    // The first chunk arrives about one word in, long before the last.
    expect(chunks[0]!.at).toBeLessThan(done.at - SLOW_WORD_MS * (words - 3))
    expect(all.every((event) => event.data["id"] === "s-1")).toBe(true)
  })

  it("gives several subscribers of one task the same events in the same order", async () => {
    const task = await sendV1(base, "slow: a b c d", { configuration: { returnImmediately: true } })
    const streams = await Promise.all([1, 2, 3].map(() => streamRpc(base, "SubscribeToTask", { id: task["id"] })))
    const results = await Promise.all(streams.map((stream) => stream.events()))
    const tails = results.map((events) => {
      const updates = events.slice(1).map((event) => JSON.stringify(event.data["result"]))
      return updates.slice(updates.findIndex((update) => update.includes("TASK_STATE_WORKING") || update.includes("artifactUpdate")))
    })
    const shortest = Math.min(...tails.map((tail) => tail.length))
    expect(shortest).toBeGreaterThanOrEqual(2)
    for (const tail of tails) expect(tail.slice(-shortest)).toEqual(tails[0]!.slice(-shortest))
    for (const events of results) expect(kindOf(events[0]!.data["result"])).toBe("task")
  })

  it("lets a stream's client leave early: the task carries on and the server keeps answering", async () => {
    const controller = new AbortController()
    const started = Date.now()
    const response = await fetch(`${base}/`, {
      method: "POST",
      headers: { "content-type": "application/json", ...V1_HEADERS },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "SendStreamingMessage", params: { message: v1Message("slow: a b c d") } }),
      signal: controller.signal
    })
    const first = (await readFirstEvent(response, started)).data["result"]["task"] as Json
    controller.abort()
    await eventually("the abandoned task to complete", async () => {
      const answer = await rpc(base, "GetTask", { id: first["id"] })
      return answer.json["result"]?.["status"]?.["state"] === "TASK_STATE_COMPLETED"
    })
    expect(answerText((await rpc(base, "GetTask", { id: first["id"] })).json["result"])).toBe("a b c d")
  })

  it("fails the task with the model's reason in its status message", async () => {
    const task = await sendV1(base, "fail: the model is on fire")
    expect(task["status"]["state"]).toBe("TASK_STATE_FAILED")
    expect(JSON.stringify(task["status"]["message"]["parts"])).toContain("the model is on fire")
    const { events } = await streamRpc(base, "SendStreamingMessage", { message: v1Message("fail: streaming fire") })
    const all = await events()
    expect(stateOf(all[all.length - 1]!.data["result"])).toBe("TASK_STATE_FAILED")
  })

  it("never leaves a task hanging: a silent model times out into failed", async () => {
    const impatient = await startAgent({ modelTimeout: "200 millis" })
    try {
      const task = await sendV1(impatient.baseUrl, "hang")
      expect(task["status"]["state"]).toBe("TASK_STATE_FAILED")
      expect(JSON.stringify(task["status"]["message"])).toContain("no answer within")
    } finally {
      await impatient.close()
    }
  })

  it("gives the model the earlier turns of the conversation", async () => {
    const contextId = randomUUID()
    await sendV1(base, "my name is Ada", { message: { contextId } })
    const second = await sendV1(base, "what is my name?", { message: { contextId } })
    expect(second["contextId"]).toBe(contextId)
    const prompt = agent.model.prompts[agent.model.prompts.length - 1]!
    const turns = prompt.content.map((message) => [message.role, JSON.stringify(message.content)])
    expect(turns.map(([role]) => role)).toEqual(["system", "user", "assistant", "user"])
    expect(turns[1]![1]).toContain("my name is Ada")
    expect(turns[3]![1]).toContain("what is my name?")
  })

  it("continues an input-required task on the same task id, and checks ids", async () => {
    const first = await sendV1(base, "I need input")
    expect(first["status"]["state"]).toBe("TASK_STATE_INPUT_REQUIRED")
    expect(JSON.stringify(first["status"]["message"])).toContain("What is your name?")
    const wrongContext = await rpc(base, "SendMessage", { message: v1Message("Ada", { taskId: first["id"], contextId: randomUUID() }) })
    expect(wrongContext.json["error"]["code"]).toBe(-32602)
    const { events } = await streamRpc(base, "SendStreamingMessage", {
      message: v1Message("Ada", { taskId: first["id"], contextId: first["contextId"] })
    })
    const all = await events()
    expect(all[0]!.data["result"]["task"]["id"]).toBe(first["id"])
    expect(stateOf(all[all.length - 1]!.data["result"])).toBe("TASK_STATE_COMPLETED")
    const done = (await rpc(base, "GetTask", { id: first["id"] })).json["result"]
    expect(done["history"].map((message: Json) => message["role"])).toEqual(["ROLE_USER", "ROLE_AGENT", "ROLE_USER"])
    expect(answerText(done)).toBe("Ada")
    const afterEnd = await rpc(base, "SendMessage", { message: v1Message("more", { taskId: first["id"] }) })
    expect(afterEnd.json["error"]["code"]).toBe(-32004)
    const unknown = await rpc(base, "SendMessage", { message: v1Message("who?", { taskId: randomUUID() }) })
    expect(unknown.json["error"]["code"]).toBe(-32001)
  })

  it("ends a stream at input-required (final in 0.3)", async () => {
    const { events } = await streamRpc(base, "message/stream", { message: v03Message("need input please") }, {})
    const all = await events()
    const last = all[all.length - 1]!.data["result"]
    expect(last).toMatchObject({ kind: "status-update", status: { state: "input-required" }, final: true })
  })

  it("honours historyLength on send and checks ListTasks parameters", async () => {
    const task = await sendV1(base, "short history", { configuration: { historyLength: 0 } })
    expect(task["history"]).toBeUndefined()
    expect((await rpc(base, "ListTasks", { pageSize: 1000 })).json["error"]["code"]).toBe(-32602)
    expect((await rpc(base, "ListTasks", { pageToken: "garbage!" })).json["error"]["code"]).toBe(-32602)
    const page = (await rpc(base, "ListTasks", undefined)).json["result"]
    expect(page["pageSize"]).toBe(50)
    expect(page["tasks"].every((listed: Json) => listed["artifacts"] === undefined)).toBe(true)
  })
})

describe("push notifications", () => {
  let sink: WebhookSink

  beforeAll(async () => {
    sink = await startWebhookSink()
  })

  afterAll(async () => {
    await sink?.close()
  })

  const forPath = (path: string) => (delivery: WebhookDelivery) => delivery.path === path

  it("posts every v1.0 event as a StreamResponse with Authorization: <scheme> <credentials>", async () => {
    const path = `/v1-auth-${randomUUID()}`
    const task = await sendV1(base, "notify me", {
      configuration: {
        taskPushNotificationConfig: { url: `${sink.url}${path}`, authentication: { scheme: "Bearer", credentials: "push-cred" } }
      }
    })
    const deliveries = await sink.waitForCount(forPath(path), 4)
    expect(deliveries.map((delivery) => kindOf(delivery.body as Json))).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"])
    expect(deliveries.map((delivery) => stateOf(delivery.body as Json)).filter(Boolean)).toEqual([
      "TASK_STATE_SUBMITTED",
      "TASK_STATE_WORKING",
      "TASK_STATE_COMPLETED"
    ])
    for (const delivery of deliveries) {
      expect(delivery.headers["authorization"]).toBe("Bearer push-cred")
      expect(delivery.headers["content-type"]).toBe("application/a2a+json")
      expect(delivery.headers["x-a2a-notification-token"]).toBeUndefined()
    }
    expect((deliveries[0]!.body as Json)["task"]["id"]).toBe(task["id"])
  })

  it("sends X-A2A-Notification-Token when the config has only a token", async () => {
    const path = `/v1-token-${randomUUID()}`
    await sendV1(base, "token only", { configuration: { taskPushNotificationConfig: { url: `${sink.url}${path}`, token: "tok-1" } } })
    const deliveries = await sink.waitForCount(forPath(path), 4)
    for (const delivery of deliveries) {
      expect(delivery.headers["x-a2a-notification-token"]).toBe("tok-1")
      expect(delivery.headers["authorization"]).toBeUndefined()
    }
  })

  it("posts the whole v0.3 Task with X-A2A-Notification-Token to configs made over 0.3", async () => {
    const path = `/v03-${randomUUID()}`
    await rpc(base, "message/send", {
      message: v03Message("old push"),
      configuration: { pushNotificationConfig: { url: `${sink.url}${path}`, token: "tok-03" } }
    }, {})
    const deliveries = await sink.waitForCount(forPath(path), 4)
    expect(deliveries.map((delivery) => (delivery.body as Json)["kind"])).toEqual(["task", "task", "task", "task"])
    expect(deliveries.map((delivery) => (delivery.body as Json)["status"]["state"])).toEqual([
      "submitted",
      "working",
      "working",
      "completed"
    ])
    expect(answerText(deliveries[3]!.body as Json)).toBe("old push")
    for (const delivery of deliveries) {
      expect(delivery.headers["x-a2a-notification-token"]).toBe("tok-03")
      expect(delivery.headers["content-type"]).toBe("application/json")
    }
  })

  it("gives a webhook that falls behind the task as it stands in place of the updates it has not taken, losing no state", async () => {
    const bodies: Array<Json> = []
    // Each post answered after 30 ms: far slower than the 1 ms the model takes for each chunk.
    const slow = http.createServer((request, response) => {
      let body = ""
      request.on("data", (chunk) => (body += chunk))
      request.on("end", () => {
        bodies.push(JSON.parse(body) as Json)
        setTimeout(() => response.end(), 30)
      })
    })
    await new Promise<void>((resolve) => slow.listen(0, "127.0.0.1", resolve))
    const webhook = `http://127.0.0.1:${(slow.address() as net.AddressInfo).port}/slow`
    const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-fold-"))
    const onDir = () => startAgent({ model: "mock", push: { maxWaiting: 5 }, storeLayer: taskStoreLayer({ _tag: "file", dir }) })
    let streaming = await onDir()
    try {
      const task = await sendV1(streaming.baseUrl, "stream 300 every 1ms", {
        configuration: { returnImmediately: true, taskPushNotificationConfig: { url: webhook } }
      })
      await eventually("the completion posted", () => bodies.some((body) => stateOf(body) === "TASK_STATE_COMPLETED"), 20_000)
      expect(bodies.length).toBeLessThan(150)
      expect(bodies.filter((body) => kindOf(body) === "task").length).toBeGreaterThan(1)
      // A receiver that takes each body as it comes ends with the whole answer.
      let text = ""
      for (const body of bodies) {
        if (kindOf(body) === "task") text = answerText(body["task"])
        if (kindOf(body) === "artifactUpdate") {
          const chunk = (body["artifactUpdate"]["artifact"]["parts"] as Array<Json>).map((part) => part["text"]).join("")
          text = body["artifactUpdate"]["append"] === true ? text + chunk : chunk
        }
      }
      const stored = (await rpc(streaming.baseUrl, "GetTask", { id: task["id"] })).json["result"] as Json
      expect(text).toBe(answerText(stored))
      expect(text.split("\n").filter(Boolean)).toHaveLength(300)
      expect(stateOf(bodies[bodies.length - 1]!)).toBe("TASK_STATE_COMPLETED")
      // The updates folded away were settled in the store: once the last post is answered, a restart posts none of them.
      await new Promise((resolve) => setTimeout(resolve, 300))
      const posted = bodies.length
      await streaming.close()
      streaming = await onDir()
      await new Promise((resolve) => setTimeout(resolve, 500))
      expect(bodies.length).toBe(posted)
    } finally {
      await streaming.close()
      await new Promise((resolve) => slow.close(resolve))
      Fs.rmSync(dir, { recursive: true, force: true })
    }
  })

  it("delivers only later events to a config created on a running task", async () => {
    const path = `/later-${randomUUID()}`
    const task = await sendV1(base, "slow: p q", { configuration: { returnImmediately: true } })
    await eventually(
      "the task to start",
      async () => (await rpc(base, "GetTask", { id: task["id"] })).json["result"]["status"]["state"] !== "TASK_STATE_SUBMITTED"
    )
    const created = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: task["id"], url: `${sink.url}${path}` })
    expect(created.json["result"]["id"]).toEqual(expect.any(String))
    const last = await sink.waitFor((delivery) => delivery.path === path && stateOf(delivery.body as Json) === "TASK_STATE_COMPLETED")
    const all = sink.deliveries.filter(forPath(path))
    expect(all.every((delivery) => kindOf(delivery.body as Json) !== "task")).toBe(true)
    expect(all[all.length - 1]).toBe(last)
  })

  it("retries a failing webhook without holding the task back", async () => {
    const failing = await startWebhookSink({ status: 503 })
    try {
      const started = Date.now()
      const task = await sendV1(base, "retry me", { configuration: { taskPushNotificationConfig: { url: `${failing.url}/down` } } })
      expect(task["status"]["state"]).toBe("TASK_STATE_COMPLETED")
      expect(Date.now() - started).toBeLessThan(500)
      // 1 attempt + 3 retries of the first event before the next one is tried.
      const attempts = await failing.waitForCount(() => true, 5, 3000)
      expect(attempts.slice(0, 4).every((delivery) => kindOf(delivery.body as Json) === "task")).toBe(true)
      expect(kindOf(attempts[4]!.body as Json)).toBe("statusUpdate")
    } finally {
      await failing.close()
    }
  })

  it("refuses webhook URLs that are not http(s) or point at link-local addresses", async () => {
    const task = await sendV1(base, "guarded")
    for (const url of ["file:///etc/passwd", "http://169.254.169.254/latest/meta-data"]) {
      const answer = await rpc(base, "CreateTaskPushNotificationConfig", { taskId: task["id"], url })
      expect(answer.json["error"]["code"]).toBe(-32602)
    }
  })
})

describe("auth and shutdown", () => {
  it("keeps the card and /health open and answers 401 with WWW-Authenticate elsewhere", async () => {
    const secured = await startAgent({ key: "k-123" })
    try {
      expect((await request(`${secured.baseUrl}/.well-known/agent-card.json`)).status).toBe(200)
      expect((await request(`${secured.baseUrl}/health`)).status).toBe(200)
      const refused = await rpc(secured.baseUrl, "GetTask", { id: "x" })
      expect(refused.status).toBe(401)
      expect(refused.headers.get("www-authenticate")).toContain("Bearer")
      const restRefused = await request(`${secured.baseUrl}/tasks/x`, { headers: { "x-api-key": "wrong" } })
      expect(restRefused.status).toBe(401)
      expect(restRefused.json["error"]["status"]).toBe("UNAUTHENTICATED")
      const bearer = await rpc(secured.baseUrl, "GetTask", { id: "x" }, { ...V1_HEADERS, authorization: "Bearer k-123" })
      expect(bearer.json["error"]["code"]).toBe(-32001)
      const apiKey = await request(`${secured.baseUrl}/tasks/x`, { headers: { "x-api-key": "k-123" } })
      expect(apiKey.status).toBe(404)
    } finally {
      await secured.close()
    }
  })

  it("answers a request it refuses at once, without waiting for a body it will not read", async () => {
    const secured = await startAgent({ key: "k-123" })
    try {
      const { port } = new URL(secured.baseUrl)
      // Each request announces 900 bytes and sends 5: only a server that reads the body would wait
      // (a refused JSON-RPC call is read for its id, but for half a second at most).
      const partial = (head: string) => statusOfPartialRequest(Number(port), `${head}\r\nContent-Length: 900\r\n\r\n{"a":`)
      expect(await partial("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json")).toBe(401)
      expect(await partial("POST /message:send HTTP/1.1\r\nHost: x\r\nContent-Type: application/json")).toBe(401)
      expect(await partial("POST / HTTP/1.1\r\nHost: x\r\nX-API-Key: k-123\r\nContent-Type: text/plain")).toBe(200)
      expect(await partial("GET /health HTTP/1.1\r\nHost: x")).toBe(200)
    } finally {
      await secured.close()
    }
  })

  it("closes the connection of a client without the key that keeps uploading, after its 401", async () => {
    const secured = await startAgent({ key: "k-123" })
    try {
      const port = Number(new URL(secured.baseUrl).port)
      const head = (path: string) =>
        `POST ${path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${2 ** 40}\r\n\r\n`
      // Kept alive, node would read the upload to its end (or to the request timeout) for nobody.
      expect(cutOffAfter(await endlessUpload(port, head("/"), 5000), "HTTP/1.1 401")).toBe(true)
      expect(cutOffAfter(await endlessUpload(port, head("/message:send"), 5000), "HTTP/1.1 401")).toBe(true)
      // A refusal of a body read whole keeps its connection.
      const refused = await rpc(secured.baseUrl, "GetTask", { id: "x" })
      expect(refused.status).toBe(401)
      expect(refused.headers.get("connection")).not.toBe("close")
    } finally {
      await secured.close()
    }
  })

  it("closes open streams when the server shuts down", async () => {
    const doomed = await startAgent()
    const { response, events } = await streamRpc(doomed.baseUrl, "SendStreamingMessage", { message: v1Message("hang") })
    expect(response.status).toBe(200)
    const ended = events().then(() => "ended", () => "ended")
    const started = Date.now()
    await doomed.close()
    expect(await ended).toBe("ended")
    expect(Date.now() - started).toBeLessThan(2000)
  })
})
