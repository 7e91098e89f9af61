/**
 * Suite B (reference §6c): the A2aClient against v0.3 peers — @a2a-js/sdk 1.3.0 with its v0.3
 * compatibility layer (pinned to 0.3), the pure v0.3 SDK 0.3.14 (detection, `kind` shapes,
 * `final`, push bodies), automatic fallback from 1.0 on -32601 / -32009 / 404 unless the version
 * is pinned, and a pre-0.3 agent serving only /.well-known/agent.json.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import type { Binding } from "../../src/a2a/dialects.js"
import { errorInfoDetail } from "../../src/a2a/errors.js"
import { partsText, resultText } from "../../src/a2a/text.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { CANCELED_TEXT, chunkTexts, combinedText, echoText, INPUT_REQUIRED_QUESTION } from "../peers/behaviours.js"
import { type LegacyAgentHandle, startLegacyAgent } from "../peers/legacyCardStub.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"
import {
  BINDINGS,
  collect,
  describeRequest,
  foldEvents,
  headerOf,
  hintOf,
  kindsOf,
  messageOf,
  recording,
  reply,
  rpcErrorReply,
  rpcMethodOf,
  sendRequest,
  stateOfEvent,
  stubPool,
  taskOf,
  v1Card,
  withCapturedLogs,
  withClient
} from "./a2aClientHarness.js"

let compat: SdkAgentHandle
let v03: V03AgentHandle
let legacy: LegacyAgentHandle
let sink: WebhookSink
const stubs = stubPool()

beforeAll(async () => {
  ;[compat, v03, legacy, sink] = await Promise.all([
    startSdkAgent({ legacyCompat: true, extendedCard: true }),
    startV03Agent({ extendedCard: true }),
    startLegacyAgent(),
    startWebhookSink()
  ])
})

afterAll(async () => {
  await Promise.all([compat, v03, legacy, sink].map((server) => server?.close()))
  await stubs.closeAll()
})

const stub = stubs.start

/** v0.3 paths: JSON-RPC slash methods, REST under /v1. */
const v03Wire = (binding: Binding, base: { readonly jsonRpc: string; readonly rest: string }) =>
  binding === "JSONRPC"
    ? { send: `POST ${base.jsonRpc} message/send`, stream: `POST ${base.jsonRpc} message/stream` }
    : { send: `POST ${base.rest}/v1/message:send`, stream: `POST ${base.rest}/v1/message:stream` }

const pathOf = (url: string) => new URL(url).pathname

/**
 * The operations both v0.3 servers must support, over one binding: `peer` gives its request log
 * and interface paths, `target` addresses its v0.3 interface.
 */
const v03Operations = (
  binding: Binding,
  peer: () => { readonly requests: SdkAgentHandle["requests"]; readonly paths: { readonly jsonRpc: string; readonly rest: string } },
  target: (extra?: Partial<Target>) => Target
) => {
  it.live("sends in the v0.3 shapes with A2A-Version 0.3 and reads the Task back into the v1.0 model", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result, sent } = yield* recording(peer().requests, a2a.send(target(), sendRequest("hello")))
      const task = taskOf(result)
      expect(task.status.state).toBe("TASK_STATE_COMPLETED")
      expect(resultText(task)).toBe(echoText("hello"))
      const post = sent.find((r) => r.method === "POST")!
      expect(describeRequest(post)).toBe(v03Wire(binding, peer().paths).send)
      expect(headerOf(post, "a2a-version")).toBe("0.3")
      const body = post.body as { params?: { message?: unknown }; message?: unknown }
      // JSON-RPC 0.3 uses `kind` objects; REST 0.3 uses the proto JSON (`content`, ROLE_USER).
      expect(binding === "JSONRPC" ? body.params?.message : body.message).toMatchObject(
        binding === "JSONRPC"
          ? { kind: "message", role: "user", parts: [{ kind: "text", text: "hello" }] }
          : { role: "ROLE_USER", content: [{ text: "hello" }] }
      )
    })))

  it.live("gets a direct Message and continues an input-required task", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const message = messageOf(yield* a2a.send(target(), sendRequest("behaviour:message-only hi")))
      expect(message.role).toBe("ROLE_AGENT")
      expect(partsText(message.parts)).toBe(echoText("hi"))
      const first = taskOf(yield* a2a.send(target(), sendRequest("behaviour:input-required one")))
      expect(first.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
      expect(partsText(first.status.message?.parts ?? [])).toBe(INPUT_REQUIRED_QUESTION)
      const second = taskOf(yield* a2a.send(target(), sendRequest("two", { taskId: first.id, contextId: first.contextId! })))
      expect(resultText(second)).toBe(combinedText(["one", "two"]))
    })))

  it.live("streams status and chunked artifacts in order and stops at the final event", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result: events, sent } = yield* recording(
        peer().requests,
        collect(a2a.stream(target(), sendRequest("behaviour:chunked-artifact hi")))
      )
      expect(describeRequest(sent.find((r) => r.method === "POST")!)).toBe(v03Wire(binding, peer().paths).stream)
      expect(kindsOf(events)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"])
      const chunks = events.flatMap((event) => ("artifactUpdate" in event ? [event.artifactUpdate] : []))
      expect(chunks.map((c) => [c.append ?? false, c.lastChunk ?? false])).toEqual([[false, false], [true, false], [true, true]])
      const final = foldEvents(events)!
      expect(final.status.state).toBe("TASK_STATE_COMPLETED")
      expect(resultText(final).replace(/\n/g, "")).toBe(chunkTexts("hi").join(""))

      const parked = yield* collect(a2a.stream(target(), sendRequest("behaviour:input-required one")))
      expect(stateOfEvent(parked.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED")
    })))

  it.live("gets a task with historyLength 0 (no history) and N (the latest N)", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const first = taskOf(yield* a2a.send(target(), sendRequest("behaviour:input-required one")))
      yield* a2a.send(target(), sendRequest("two", { taskId: first.id, contextId: first.contextId! }))
      const none = yield* a2a.getTask(target(), { id: first.id, historyLength: 0 })
      expect(none.history ?? []).toEqual([])
      expect(none.status.state).toBe("TASK_STATE_COMPLETED")
      const latest = yield* a2a.getTask(target(), { id: first.id, historyLength: 1 })
      expect(latest.history?.map((m) => partsText(m.parts))).toEqual(["two"])
    })))

  it.live("cancels a working task, and resubscribes after a disconnect (snapshot first)", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const opened = yield* collect(a2a.stream(target(), sendRequest("behaviour:slow-cancellable long")).pipe(Stream.take(2)))
      const id = foldEvents(opened)!.id
      const events = yield* collect(
        a2a.subscribe(target(), { id }).pipe(Stream.tap((event) => ("task" in event ? a2a.cancelTask(target(), { id }) : Effect.void)))
      )
      expect(kindsOf(events)[0]).toBe("task")
      expect(stateOfEvent(events[0])).toBe("TASK_STATE_WORKING")
      expect(stateOfEvent(events.at(-1))).toBe("TASK_STATE_CANCELED")
      const canceled = yield* a2a.getTask(target(), { id })
      expect(partsText(canceled.status.message?.parts ?? [])).toBe(CANCELED_TEXT)
    })))

  it.live("maps unknown task to -32001 and cancelling a finished task to -32002", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      expect(yield* Effect.flip(a2a.getTask(target(), { id: randomUUID() }))).toMatchObject({ _tag: "ProtocolError", a2aCode: -32001 })
      const done = taskOf(yield* a2a.send(target(), sendRequest("done")))
      expect(yield* Effect.flip(a2a.cancelTask(target(), { id: done.id }))).toMatchObject({ _tag: "ProtocolError", a2aCode: -32002 })
    })))

  it.live("creates, gets, lists and deletes push configs", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const task = taskOf(yield* a2a.send(target(), sendRequest("push me")))
      const config = { taskId: task.id, id: randomUUID(), url: `${sink.url}/crud`, token: randomUUID() }
      const created = yield* a2a.createPushConfig(target(), config)
      expect(created).toMatchObject(config)
      expect(yield* a2a.getPushConfig(target(), { taskId: task.id, id: config.id })).toMatchObject(config)
      expect((yield* a2a.listPushConfigs(target(), { taskId: task.id })).map((c) => c.id)).toEqual([config.id])
      yield* a2a.deletePushConfig(target(), { taskId: task.id, id: config.id })
      expect(yield* a2a.listPushConfigs(target(), { taskId: task.id })).toEqual([])
    })))

  it.live("fetches the extended card with credentials", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const extended = yield* a2a.extendedCard(target({ credentials: { kind: "bearer", token: "any" } }))
      expect(extended.card.skills.map((s) => s.id)).toContain("extended-only")
    })))

  it.live("refuses ListTasks (not in v0.3) without sending anything", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      yield* a2a.discover(target())
      const { result, sent } = yield* recording(peer().requests, Effect.flip(a2a.listTasks(target(), {})))
      expect(result).toMatchObject({ _tag: "UnsupportedOperation", code: "unsupported_operation" })
      expect(sent).toEqual([])
    })))
}

describe("@a2a-js/sdk 1.3.0 with legacyCompat", () => {
  const paths = () => ({ requests: compat.requests, paths: { jsonRpc: pathOf(compat.jsonRpcUrl), rest: pathOf(compat.restUrl) } })

  it.live("is spoken to in 1.0 by default: the card lists 1.0 first, nothing is downgraded", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const card = yield* a2a.discover({ agentUrl: agentUrlOf(compat.baseUrl) })
      expect(card.card.supportedInterfaces.map((i) => `${i.protocolBinding} ${i.protocolVersion}`)).toEqual([
        "JSONRPC 1.0",
        "HTTP+JSON 1.0",
        "JSONRPC 0.3",
        "HTTP+JSON 0.3"
      ])
      const { sent } = yield* recording(compat.requests, a2a.send({ agentUrl: agentUrlOf(compat.baseUrl) }, sendRequest("modern")))
      expect(sent.map((r) => `${describeRequest(r)} ${headerOf(r, "a2a-version")}`)).toEqual([
        `POST ${pathOf(compat.jsonRpcUrl)} SendMessage 1.0`
      ])
    })))

  describe.each(BINDINGS)("pinned to 0.3 over %s", (binding) => {
    const target = (extra: Partial<Target> = {}): Target => ({ agentUrl: agentUrlOf(compat.baseUrl), binding, protocol: "0.3", ...extra })
    v03Operations(binding, paths, target)

    // JSON-RPC 0.3 opens the stream and then sends an `event: error`; REST answers 400 at once.
    it.live("subscribing to a finished task → UnsupportedOperation (-32004)", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const done = taskOf(yield* a2a.send(target(), sendRequest("done")))
        const outcome = yield* Effect.either(collect(a2a.subscribe(target(), { id: done.id })))
        expect(Either.isLeft(outcome) && outcome.left).toMatchObject({ _tag: "ProtocolError", a2aCode: -32004 })
      })))
  })
})

describe("@a2a-js/sdk 0.3.14 (pure v0.3)", () => {
  const paths = () => ({ requests: v03.requests, paths: { jsonRpc: pathOf(v03.jsonRpcUrl), rest: pathOf(v03.restUrl!) } })

  it.live("is detected from its card: url + preferredTransport first, then additionalInterfaces, all at 0.3", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const card = yield* a2a.discover({ agentUrl: agentUrlOf(v03.baseUrl) })
      expect(card).toMatchObject({ generation: "0.3", declaredProtocolVersion: "0.3.0" })
      expect(card.card.supportedInterfaces).toEqual([
        { url: v03.jsonRpcUrl, protocolBinding: "JSONRPC", protocolVersion: "0.3" },
        { url: v03.restUrl, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }
      ])
      expect(yield* a2a.endpoint({ agentUrl: agentUrlOf(v03.baseUrl) })).toMatchObject({
        url: v03.jsonRpcUrl,
        binding: "JSONRPC",
        version: "0.3"
      })
      // A v0.3 card means no 1.0 attempt at all.
      const { sent } = yield* recording(v03.requests, a2a.send({ agentUrl: agentUrlOf(v03.baseUrl) }, sendRequest("direct")))
      expect(sent.map(describeRequest)).toEqual([`POST ${pathOf(v03.jsonRpcUrl)} message/send`])
    })))

  describe.each(BINDINGS)("over %s", (binding) => {
    const target = (extra: Partial<Target> = {}): Target => ({ agentUrl: agentUrlOf(v03.baseUrl), binding, ...extra })
    v03Operations(binding, paths, target)

    // 0.3.14 answers with the final snapshot instead of -32004; the client ends the stream there.
    it.live("subscribing to a finished task yields its snapshot and ends", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const done = taskOf(yield* a2a.send(target(), sendRequest("done")))
        const events = yield* collect(a2a.subscribe(target(), { id: done.id }))
        expect(kindsOf(events)).toEqual(["task"])
        expect(stateOfEvent(events[0])).toBe("TASK_STATE_COMPLETED")
      })))

    it.live("push delivery posts the full v0.3 Task with X-A2A-Notification-Token", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const path = `/v03/${randomUUID()}`
        const token = randomUUID()
        yield* a2a.send(
          target(),
          sendRequest("notify", { configuration: { taskPushNotificationConfig: { url: `${sink.url}${path}`, token } } })
        )
        const delivery = yield* Effect.promise(() =>
          sink.waitFor((d) => d.path === path && (d.body as { status?: { state?: string } }).status?.state === "completed")
        )
        expect(delivery.body).toMatchObject({ kind: "task", status: { state: "completed" } })
        expect(delivery.headers["x-a2a-notification-token"]).toBe(token)
      })))
  })
})

describe("version fallback", () => {
  /** A card that claims 1.0 for the v0.3-only peer's endpoints, and lists the real 0.3 ones after. */
  const misdeclaredCard = () =>
    stub({
      "GET /.well-known/agent-card.json": reply(v1Card([
        { url: v03.jsonRpcUrl, binding: "JSONRPC", version: "1.0" },
        { url: v03.restUrl!, binding: "HTTP+JSON", version: "1.0" },
        { url: v03.jsonRpcUrl, binding: "JSONRPC", version: "0.3" },
        { url: v03.restUrl!, binding: "HTTP+JSON", version: "0.3" }
      ]))
    })

  it.live("JSON-RPC: -32601 on SendMessage → retries as message/send, and remembers", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* misdeclaredCard()
      const target: Target = { agentUrl: agentUrlOf(server.baseUrl) }
      const first = yield* recording(v03.requests, withCapturedLogs(a2a.send(target, sendRequest("fall back"))))
      expect(resultText(taskOf(first.result.result))).toBe(echoText("fall back"))
      expect(first.sent.map(rpcMethodOf)).toEqual(["SendMessage", "message/send"])
      expect(first.result.logs).toContainEqual(expect.stringContaining("retrying with 0.3"))
      const second = yield* recording(v03.requests, a2a.send(target, sendRequest("again")))
      expect(second.sent.map(rpcMethodOf)).toEqual(["message/send"])
    })))

  it.live("HTTP+JSON: 404 on /message:send → /v1/message:send on the same binding", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* misdeclaredCard()
      const { result, sent } = yield* recording(
        v03.requests,
        a2a.send({ agentUrl: agentUrlOf(server.baseUrl), binding: "HTTP+JSON" }, sendRequest("rest"))
      )
      expect(resultText(taskOf(result))).toBe(echoText("rest"))
      const rest = pathOf(v03.restUrl!)
      expect(sent.map((r) => `${describeRequest(r)} ${r.status}`)).toEqual([
        `POST ${rest}/message:send 404`,
        `POST ${rest}/v1/message:send 201`
      ])
    })))

  it.live("a pinned 1.0 is never downgraded: the agent's error surfaces", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* misdeclaredCard()
      const rpc = yield* recording(
        v03.requests,
        Effect.flip(a2a.send({ agentUrl: agentUrlOf(server.baseUrl), protocol: "1.0" }, sendRequest("x")))
      )
      expect(rpc.result).toMatchObject({ _tag: "ProtocolError", a2aCode: -32601 })
      expect(rpc.sent.map(rpcMethodOf)).toEqual(["SendMessage"])
      const rest = yield* recording(
        v03.requests,
        Effect.flip(a2a.send({ agentUrl: agentUrlOf(server.baseUrl), protocol: "1.0", binding: "HTTP+JSON" }, sendRequest("x")))
      )
      expect(rest.result).toMatchObject({ _tag: "HttpError", status: 404 })
      expect(rest.sent).toHaveLength(1)
    })))

  it.live("-32009 VersionNotSupported → retries on the card's 0.3 interface; pinned, it surfaces with a hint", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const refusal = rpcErrorReply(-32009, "version 1.0 is not supported", [errorInfoDetail("VERSION_NOT_SUPPORTED")])
      const server = yield* stub((base) => ({
        "GET /.well-known/agent-card.json": reply(v1Card([
          { url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" },
          { url: v03.jsonRpcUrl, binding: "JSONRPC", version: "0.3" }
        ])),
        "POST /rpc": refusal
      }))
      const { result, sent } = yield* recording(v03.requests, a2a.send({ agentUrl: agentUrlOf(server.baseUrl) }, sendRequest("refused")))
      expect(resultText(taskOf(result))).toBe(echoText("refused"))
      expect(sent.map(rpcMethodOf)).toEqual(["message/send"])

      const pinned = yield* A2aClient.pipe(
        Effect.flatMap((fresh) => Effect.flip(fresh.send({ agentUrl: agentUrlOf(server.baseUrl), protocol: "1.0" }, sendRequest("x")))),
        withClient
      )
      expect(pinned).toMatchObject({ _tag: "ProtocolError", a2aCode: -32009, reason: "VERSION_NOT_SUPPORTED" })
      expect(hintOf(pinned)).toContain("--protocol")
    })))

  it.live("pinning 0.3 against a 1.0-only card finds no interface", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub({
        "GET /.well-known/agent-card.json": reply(v1Card([{ url: v03.jsonRpcUrl, binding: "JSONRPC", version: "1.0" }]))
      })
      const error = yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(server.baseUrl), protocol: "0.3" }, sendRequest("x")))
      expect(error).toMatchObject({ _tag: "NoUsableInterface", pinned: true })
      expect(error.message).toContain("pinned")
    })))
})

describe("a pre-0.3 agent (agent.json only)", () => {
  it.live("is found at the old path and spoken to with message/send", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result, sent } = yield* recording(
        legacy.requests,
        a2a.send({ agentUrl: agentUrlOf(legacy.baseUrl) }, sendRequest("old friend"))
      )
      expect(resultText(taskOf(result))).toBe(echoText("old friend"))
      expect(sent.map(describeRequest)).toEqual([
        "GET /.well-known/agent-card.json",
        "GET /.well-known/agent.json",
        "POST / message/send"
      ])
      expect(headerOf(sent[2]!, "a2a-version")).toBe("0.3")
      expect((sent[2]!.body as { params: { message: unknown } }).params.message).toMatchObject({
        kind: "message",
        role: "user",
        parts: [{ kind: "text", text: "old friend" }]
      })
    })))

  it.live("refuses to stream when the card says it cannot, without sending anything", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      yield* a2a.discover({ agentUrl: agentUrlOf(legacy.baseUrl) })
      const { result, sent } = yield* recording(
        legacy.requests,
        Effect.flip(collect(a2a.stream({ agentUrl: agentUrlOf(legacy.baseUrl) }, sendRequest("stream?"))))
      )
      expect(result).toMatchObject({ _tag: "UnsupportedOperation" })
      expect(result.message).toContain("streaming")
      expect(sent).toEqual([])
    })))
})
