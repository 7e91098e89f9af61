/**
 * Suite A (reference §6c): the A2aClient against a real @a2a-js/sdk 1.3.0 agent, every operation
 * over both bindings — send (Task and Message, blocking and returnImmediately), GetTask history,
 * streaming (order, chunk merging, closing at input/auth required), resubscribe after a
 * disconnect, cancel, ListTasks paging, push config CRUD and delivery, the extended card, and the
 * A2A error codes.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema, Stream } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import type { Binding } from "../../src/a2a/dialects.js"
import { partsText, resultText } from "../../src/a2a/text.js"
import * as V1 from "../../src/a2a/v1.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { AUTH_REQUIRED_TEXT, CANCELED_TEXT, chunkTexts, combinedText, echoText, INPUT_REQUIRED_QUESTION } from "../peers/behaviours.js"
import { JSONRPC_PATH, REST_PATH, type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
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
  sendRequest,
  stateOfEvent,
  taskOf,
  waitForState,
  waitUntil,
  withClient
} from "./a2aClientHarness.js"

let peer: SdkAgentHandle
let sink: WebhookSink

beforeAll(async () => {
  peer = await startSdkAgent({ extendedCard: true })
  sink = await startWebhookSink()
})

afterAll(async () => {
  await Promise.all([peer?.close(), sink?.close()])
})

/** What each binding puts on the wire for an operation. */
const wire = (binding: Binding) =>
  binding === "JSONRPC"
    ? {
      send: `POST ${JSONRPC_PATH} SendMessage`,
      stream: `POST ${JSONRPC_PATH} SendStreamingMessage`,
      getTask: () => `POST ${JSONRPC_PATH} GetTask`,
      contentType: "application/json"
    }
    : {
      send: `POST ${REST_PATH}/message:send`,
      stream: `POST ${REST_PATH}/message:stream`,
      getTask: (id: string) => `GET ${REST_PATH}/tasks/${id}`,
      contentType: "application/a2a+json"
    }

/** The user message inside a recorded send request, for either binding. */
const sentMessage = (binding: Binding, body: unknown): Record<string, unknown> => {
  const record = body as Record<string, Record<string, unknown>>
  return (binding === "JSONRPC" ? record["params"]?.["message"] : record["message"]) as Record<string, unknown>
}

const textsOf = (parts: ReadonlyArray<V1.Part>) => parts.map((part) => ("text" in part ? part.text : "?"))

describe.each(BINDINGS)("A2aClient against @a2a-js/sdk 1.3.0 over %s", (binding) => {
  const target = (extra: Partial<Target> = {}): Target => ({ agentUrl: agentUrlOf(peer.baseUrl), binding, ...extra })

  describe("send", () => {
    it.live("returns a completed Task with its artifact, sending a fresh user message and A2A-Version 1.0", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const { result, sent } = yield* recording(peer.requests, a2a.send(target(), sendRequest("hello")))
        const task = taskOf(result)
        expect(task.status.state).toBe("TASK_STATE_COMPLETED")
        expect(resultText(task)).toBe(echoText("hello"))

        const call = sent.find((request) => request.method === "POST")!
        expect(describeRequest(call)).toBe(wire(binding).send)
        expect(headerOf(call, "a2a-version")).toBe("1.0")
        expect(headerOf(call, "content-type")).toBe(wire(binding).contentType)
        const message = sentMessage(binding, call.body)
        expect(message["role"]).toBe("ROLE_USER")
        expect(message["messageId"]).toMatch(/^[0-9a-f-]{36}$/)
        // A new conversation: no invented task id.
        expect(message["taskId"]).toBeUndefined()
      })))

    it.live("returns a direct Message", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const message = messageOf(yield* a2a.send(target(), sendRequest("behaviour:message-only hi")))
        expect(message.role).toBe("ROLE_AGENT")
        expect(partsText(message.parts)).toBe(echoText("hi"))
      })))

    it.live("returns at once with returnImmediately, then GetTask polling sees the task complete", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const request = sendRequest("behaviour:chunked-artifact soon", { configuration: { returnImmediately: true } })
        const first = taskOf(yield* a2a.send(target(), request))
        expect(V1.isTerminalState(first.status.state)).toBe(false)
        const done = yield* waitForState(target(), first.id, "TASK_STATE_COMPLETED")
        expect(textsOf(done.artifacts?.[0]?.parts ?? [])).toEqual(chunkTexts("soon"))
      })))

    it.live("continues an input-required task on its taskId and contextId", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const first = taskOf(yield* a2a.send(target(), sendRequest("behaviour:input-required one")))
        expect(first.status.state).toBe("TASK_STATE_INPUT_REQUIRED")
        expect(partsText(first.status.message?.parts ?? [])).toBe(INPUT_REQUIRED_QUESTION)
        const ids = { taskId: first.id, contextId: first.contextId! }
        const second = taskOf(yield* a2a.send(target(), sendRequest("two", ids)))
        expect(second.id).toBe(first.id)
        expect(second.status.state).toBe("TASK_STATE_COMPLETED")
        expect(resultText(second)).toBe(combinedText(["one", "two"]))
      })))
  })

  describe("get task", () => {
    it.live("honours historyLength 0, N and unset", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const first = taskOf(yield* a2a.send(target(), sendRequest("behaviour:input-required one")))
        yield* a2a.send(target(), sendRequest("two", { taskId: first.id, contextId: first.contextId! }))

        const { result: all, sent } = yield* recording(peer.requests, a2a.getTask(target(), { id: first.id }))
        expect(describeRequest(sent[0]!)).toBe(wire(binding).getTask(first.id))
        expect(all.history?.map((m) => m.role)).toEqual(["ROLE_USER", "ROLE_AGENT", "ROLE_USER"])
        const none = yield* a2a.getTask(target(), { id: first.id, historyLength: 0 })
        expect(none.history ?? []).toEqual([])
        const lastTwo = yield* a2a.getTask(target(), { id: first.id, historyLength: 2 })
        expect(lastTwo.history?.map((m) => partsText(m.parts))).toEqual([INPUT_REQUIRED_QUESTION, "two"])
      })))
  })

  describe("stream", () => {
    it.live("delivers task, working, artifact chunks in order and completion, then closes", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const { result: events, sent } = yield* recording(
          peer.requests,
          collect(a2a.stream(target(), sendRequest("behaviour:chunked-artifact hi")))
        )
        expect(describeRequest(sent.find((r) => r.method === "POST")!)).toBe(wire(binding).stream)
        expect(headerOf(sent.find((r) => r.method === "POST")!, "accept")).toBe("text/event-stream")
        expect(kindsOf(events)).toEqual(["task", "statusUpdate", "artifactUpdate", "artifactUpdate", "artifactUpdate", "statusUpdate"])
        const chunks = events.flatMap((event) => ("artifactUpdate" in event ? [event.artifactUpdate] : []))
        expect(chunks.map((c) => [c.append ?? false, c.lastChunk ?? false])).toEqual([[false, false], [true, false], [true, true]])
        // Chunks in arrival order, whether the fold keeps them as parts or joins streamed text.
        const final = foldEvents(events)!
        expect(final.status.state).toBe("TASK_STATE_COMPLETED")
        expect(textsOf(final.artifacts?.[0]?.parts ?? []).join("")).toBe(chunkTexts("hi").join(""))
      })))

    it.live("yields one Message for a direct reply", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const events = yield* collect(a2a.stream(target(), sendRequest("behaviour:message-only hi")))
        expect(kindsOf(events)).toEqual(["message"])
      })))

    it.live("ends at input-required, and a follow-up stream on the same task completes it", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const events = yield* collect(a2a.stream(target(), sendRequest("behaviour:input-required one")))
        expect(stateOfEvent(events.at(-1))).toBe("TASK_STATE_INPUT_REQUIRED")
        const task = foldEvents(events)!
        const more = yield* collect(a2a.stream(target(), sendRequest("two", { taskId: task.id, contextId: task.contextId! })))
        const done = foldEvents(more)!
        expect(done.status.state).toBe("TASK_STATE_COMPLETED")
        expect(resultText(done)).toBe(combinedText(["one", "two"]))
      })))

    // The SDK keeps this stream open at AUTH_REQUIRED; the client must stop reading by itself.
    it.live("ends at auth-required although the agent keeps the stream open", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const events = yield* collect(a2a.stream(target(), sendRequest("behaviour:auth-required x"))).pipe(
          Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new Error("the stream did not end at auth-required") })
        )
        const last = events.at(-1)
        expect(stateOfEvent(last)).toBe("TASK_STATE_AUTH_REQUIRED")
        expect(last && "statusUpdate" in last ? partsText(last.statusUpdate.status.message?.parts ?? []) : "").toBe(AUTH_REQUIRED_TEXT)
      })))

    it.live("resubscribes after a mid-stream disconnect: the task snapshot first, then the rest", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        // Read task + working, then drop the connection while the task works on.
        const { result: opened, sent } = yield* recording(
          peer.requests,
          collect(a2a.stream(target(), sendRequest("behaviour:slow-cancellable long")).pipe(Stream.take(2)))
        )
        const streamRequest = sent.find((r) => r.method === "POST")!
        yield* waitUntil("the agent to see the stream close", () => streamRequest.status !== undefined)
        const id = foldEvents(opened)!.id

        // Cancel once the snapshot is in, so the subscription sees the task end.
        const events = yield* collect(
          a2a.subscribe(target(), { id }).pipe(
            Stream.tap((event) => ("task" in event ? a2a.cancelTask(target(), { id }) : Effect.void))
          )
        )
        expect(kindsOf(events)[0]).toBe("task")
        expect(stateOfEvent(events[0])).toBe("TASK_STATE_WORKING")
        expect(stateOfEvent(events.at(-1))).toBe("TASK_STATE_CANCELED")
      })))
  })

  describe("cancel and list", () => {
    it.live("cancels a working task", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const started = taskOf(
          yield* a2a.send(target(), sendRequest("behaviour:slow-cancellable x", { configuration: { returnImmediately: true } }))
        )
        const canceled = yield* a2a.cancelTask(target(), { id: started.id })
        expect(canceled.status.state).toBe("TASK_STATE_CANCELED")
        expect(partsText(canceled.status.message?.parts ?? [])).toBe(CANCELED_TEXT)
      })))

    it.live("lists tasks page by page until nextPageToken is empty", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const contextId = randomUUID()
        const created = yield* Effect.forEach(["a", "b", "c"], (text) => a2a.send(target(), sendRequest(text, { contextId })))
        const pages: Array<V1.ListTasksResponse> = []
        let pageToken = ""
        do {
          const page = yield* a2a.listTasks(target(), { contextId, pageSize: 2, ...(pageToken === "" ? {} : { pageToken }) })
          pages.push(page)
          pageToken = page.nextPageToken
        } while (pageToken !== "" && pages.length < 5)
        expect(pages.map((page) => page.tasks.length)).toEqual([2, 1])
        const listed = pages.flatMap((page) => page.tasks)
        expect(new Set(listed.map((task) => task.id))).toEqual(new Set(created.map((r) => taskOf(r).id)))
        // Artifacts are left out unless asked for.
        expect(listed.every((task) => task.artifacts === undefined)).toBe(true)
        const withArtifacts = yield* a2a.listTasks(target(), { contextId, includeArtifacts: true })
        expect(withArtifacts.tasks.map(resultText).sort()).toEqual(["a", "b", "c"].map(echoText))
      })))
  })

  describe("push notifications", () => {
    it.live("creates, gets, lists and deletes a push config", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const task = taskOf(yield* a2a.send(target(), sendRequest("push me")))
        const url = `${sink.url}/crud/${randomUUID()}`
        const created = yield* a2a.createPushConfig(target(), {
          taskId: task.id,
          url,
          authentication: { scheme: "Bearer", credentials: "hook-secret" }
        })
        expect(created).toMatchObject({ taskId: task.id, url })
        const id = created.id!
        expect(yield* a2a.getPushConfig(target(), { taskId: task.id, id })).toMatchObject({ id, url })
        expect((yield* a2a.listPushConfigs(target(), { taskId: task.id })).map((c) => c.id)).toEqual([id])
        yield* a2a.deletePushConfig(target(), { taskId: task.id, id })
        expect(yield* a2a.listPushConfigs(target(), { taskId: task.id })).toEqual([])
      })))

    it.live("registered inline, delivers StreamResponse bodies with Authorization or the token header", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const bearerPath = `/bearer/${randomUUID()}`
        const tokenPath = `/token/${randomUUID()}`
        const token = randomUUID()
        yield* a2a.send(
          target(),
          sendRequest("notify", {
            configuration: {
              taskPushNotificationConfig: { url: `${sink.url}${bearerPath}`, authentication: { scheme: "Bearer", credentials: "s3cret" } }
            }
          })
        )
        yield* a2a.send(
          target(),
          sendRequest("notify", {
            configuration: { taskPushNotificationConfig: { url: `${sink.url}${tokenPath}`, token } }
          })
        )
        const bearer = yield* Effect.promise(() => sink.waitForCount((d) => d.path === bearerPath, 4))
        const tokened = yield* Effect.promise(() => sink.waitForCount((d) => d.path === tokenPath, 4))

        const bodies = yield* Effect.forEach(bearer, (d) => Schema.decodeUnknown(V1.StreamResponse)(d.body))
        expect(kindsOf(bodies)).toEqual(["task", "statusUpdate", "artifactUpdate", "statusUpdate"])
        expect(stateOfEvent(bodies.at(-1))).toBe("TASK_STATE_COMPLETED")
        expect(bearer.every((d) => d.headers["authorization"] === "Bearer s3cret")).toBe(true)
        expect(tokened.every((d) => d.headers["x-a2a-notification-token"] === token)).toBe(true)
      })))
  })

  describe("extended card", () => {
    it.live("fetches the authenticated extended card and uses it from then on", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const authed = target({ credentials: { kind: "bearer", token: "any-token" } })
        const publicCard = yield* a2a.discover(authed)
        expect(publicCard.card.skills.map((s) => s.id)).toEqual(["scripted"])
        const { result: extended, sent } = yield* recording(peer.requests, a2a.extendedCard(authed))
        expect(extended.card.skills.map((s) => s.id)).toEqual(["scripted", "extended-only"])
        expect(headerOf(sent[0]!, "authorization")).toBe("Bearer any-token")
        expect((yield* a2a.discover(authed)).card.skills.map((s) => s.id)).toContain("extended-only")
        // A call without those credentials never sees the extended card.
        expect((yield* a2a.discover(target())).card.skills.map((s) => s.id)).toEqual(["scripted"])
      })))
  })

  describe("errors", () => {
    it.live("unknown task → TaskNotFound (-32001) with its ErrorInfo reason", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const error = yield* Effect.flip(a2a.getTask(target(), { id: randomUUID() }))
        expect(error).toMatchObject({ _tag: "ProtocolError", code: "protocol_error", a2aCode: -32001, reason: "TASK_NOT_FOUND" })
        expect(error.message).toContain("TaskNotFound")
        expect(hintOf(error)).toContain("task id")
      })))

    it.live("cancelling a completed task → TaskNotCancelable (-32002)", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const task = taskOf(yield* a2a.send(target(), sendRequest("done")))
        const error = yield* Effect.flip(a2a.cancelTask(target(), { id: task.id }))
        expect(error).toMatchObject({ _tag: "ProtocolError", a2aCode: -32002, reason: "TASK_NOT_CANCELABLE" })
      })))

    it.live("subscribing to a terminal task → UnsupportedOperation (-32004), sent as JSON before any stream", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const task = taskOf(yield* a2a.send(target(), sendRequest("done")))
        const outcome = yield* Effect.either(collect(a2a.subscribe(target(), { id: task.id })))
        expect(Either.isLeft(outcome) && outcome.left).toMatchObject({ _tag: "ProtocolError", a2aCode: -32004 })
      })))
  })
})
