/**
 * programs/sendMessage: the session rules of SPEC §4.1 (1–2), the credential order of §5 and the
 * message result of §2. Session logic is proved against a scripted A2aClient (what was sent,
 * what was saved); the rest against the real client and real A2A peers.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Layer, Option, Stream } from "effect"
import { resultText } from "../../src/a2a/text.js"
import * as V1 from "../../src/a2a/v1.js"
import { type A2aClientError, AgentUnreachable, UnsupportedOperation } from "../../src/domain/clientErrors.js"
import type { SessionRecord } from "../../src/domain/session.js"
import { conversationIds, sendMessage } from "../../src/programs/sendMessage.js"
import { answersTurn, presentForTurn, statusMark, type TaskUpdate, type Turn } from "../../src/programs/taskUpdates.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import type { ReceivedFiles } from "../../src/services/ReceivedFiles.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { credentialHeadersOf, ProgramLayer, RealClient, ScratchFiles, sentMessages } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { storeLayer, tempHome } from "../helpers/stateHome.js"
import {
  AUTH_REQUIRED_TEXT,
  chunkTexts,
  combinedText,
  dataPartFor,
  echoText,
  failureReason,
  INPUT_REQUIRED_QUESTION,
  withBehaviour
} from "../peers/behaviours.js"
import type { RecordedRequest } from "../peers/httpUtil.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"

// ---------------------------------------------------------------------------
// A scripted client: records every request, answers from the test's script

const AGENT = "http://agent.test"

const task = (id: string, contextId: string, state: V1.TaskState, extra: Partial<V1.Task> = {}): V1.Task => ({
  id,
  contextId,
  status: { state },
  ...extra
})

const agentText = (text: string): V1.Message => ({ messageId: `m-${text}`, role: "ROLE_AGENT", parts: [{ text }] })

interface Script {
  readonly send?: (request: V1.SendMessageRequest) => Effect.Effect<V1.SendMessageResponse, A2aClientError>
  readonly stream?: (request: V1.SendMessageRequest) => Stream.Stream<V1.StreamResponse, A2aClientError>
  readonly getTask?: (request: V1.GetTaskRequest) => Effect.Effect<V1.Task, A2aClientError>
}

/** By default the agent completes the message in the context it came with (or a new one). */
const completeInPlace = (request: V1.SendMessageRequest) =>
  Effect.succeed({
    task: task(request.message.taskId ?? "task-new", request.message.contextId ?? "ctx-new", "TASK_STATE_COMPLETED", {
      artifacts: [{ artifactId: "a", parts: [{ text: "done" }] }]
    })
  })

/** By default a task waits for input, as the one a follow-up continues does before it is sent. */
const waitingForInput = (request: V1.GetTaskRequest) =>
  Effect.succeed(task(request.id, "ctx-any", "TASK_STATE_INPUT_REQUIRED", {
    status: { state: "TASK_STATE_INPUT_REQUIRED", timestamp: "2026-01-01T00:00:00.000Z", message: agentText("Which one?") }
  }))

/** The in-memory store, recording the state each update saves. */
const countingStore = () => {
  const updates: Array<string | null | undefined> = []
  const layer = Layer.effect(
    SessionStore.SessionStore,
    Effect.map(SessionStore.SessionStore, (store) => ({
      ...store,
      update: (agentUrl: Parameters<typeof store.update>[0], patch: Parameters<typeof store.update>[1]) =>
        Effect.zipRight(Effect.sync(() => updates.push(patch.last_state)), store.update(agentUrl, patch))
    }))
  ).pipe(Layer.provide(SessionStore.layerMemory))
  return { updates, layer }
}

const scripted = (script: Script = {}, store: Layer.Layer<SessionStore.SessionStore> = SessionStore.layerMemory) => {
  const sent: Array<V1.SendMessageRequest> = []
  const client = A2aClient.layerTest({
    // No card: following a task falls back to polling GetTask.
    discover: () => Effect.fail(new UnsupportedOperation({ operation: "Card discovery", reason: "not scripted" })),
    send: (_, request) => {
      sent.push(request)
      return (script.send ?? completeInPlace)(request)
    },
    stream: (_, request) => {
      sent.push(request)
      return script.stream === undefined ? Stream.dieMessage("stream is not scripted") : script.stream(request)
    },
    getTask: (_, request) => (script.getTask ?? waitingForInput)(request)
  })
  return { sent, layer: Layer.mergeAll(client, store, ScratchFiles) }
}

const saveSession = (patch: { context_id?: string; task_id?: string; last_state?: string }) =>
  Effect.flatMap(SessionStore.SessionStore, (store) => store.update(agentUrlOf(AGENT), patch))

const savedSession = (url = AGENT) =>
  Effect.flatMap(SessionStore.SessionStore, (store) => Effect.map(store.get(agentUrlOf(url)), Option.getOrThrow))

const idsSent = (request: V1.SendMessageRequest | undefined) => ({
  contextId: request?.message.contextId,
  taskId: request?.message.taskId
})

// ---------------------------------------------------------------------------

describe("conversationIds (SPEC §4.1 rule 1)", () => {
  const session = (last_state: string): Option.Option<SessionRecord> =>
    Option.some({ agent_url: AGENT, context_id: "c1", task_id: "t1", last_state, updated_at: "2025-01-01T00:00:00Z" })

  it.each([
    ["input-required", { contextId: "c1", taskId: "t1" }],
    ["auth-required", { contextId: "c1", taskId: "t1" }],
    ["completed", { contextId: "c1" }],
    ["working", { contextId: "c1" }],
    ["failed", { contextId: "c1" }],
    ["canceled", { contextId: "c1" }]
  ])("with use_session and a saved task in state %s → %j", (state, expected) => {
    expect(conversationIds({ useSession: true }, session(state))).toEqual(expected)
  })

  it("without use_session the saved session is ignored", () => {
    expect(conversationIds({}, session("input-required"))).toEqual({})
    expect(conversationIds({ useSession: false, contextId: "cx" }, session("input-required"))).toEqual({ contextId: "cx" })
  })

  it("with use_session but nothing saved, nothing is added", () => {
    expect(conversationIds({ useSession: true }, Option.none())).toEqual({})
  })

  it("an explicit context id wins; the saved task follows only within its own context", () => {
    expect(conversationIds({ useSession: true, contextId: "c2" }, session("input-required"))).toEqual({ contextId: "c2" })
    expect(conversationIds({ useSession: true, contextId: "c1" }, session("input-required"))).toEqual({ contextId: "c1", taskId: "t1" })
  })

  it("an explicit task id wins and brings no foreign saved context along", () => {
    expect(conversationIds({ useSession: true, taskId: "t9" }, session("input-required"))).toEqual({ taskId: "t9" })
    expect(conversationIds({ useSession: true, taskId: "t1" }, session("completed"))).toEqual({ contextId: "c1", taskId: "t1" })
    expect(conversationIds({ useSession: true, taskId: "t9", contextId: "c9" }, session("input-required"))).toEqual({
      contextId: "c9",
      taskId: "t9"
    })
  })
})

/** A part view's keys, all null: what a part has is spread over it. */
const NO_FIELDS = {
  text: null,
  name: null,
  media_type: null,
  size: null,
  sha256: null,
  path: null,
  url: null,
  data: null,
  artifact_id: null,
  note: null
}

describe("sendMessage: session rules (scripted agent)", () => {
  it.effect("continues the saved context and the task waiting for input, then saves the answer", () => {
    const { sent, layer } = scripted()
    return Effect.gen(function*() {
      yield* saveSession({ context_id: "c1", task_id: "t1", last_state: "input-required" })
      const result = yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "the answer", useSession: true })
      expect(idsSent(sent[0])).toEqual({ contextId: "c1", taskId: "t1" })
      expect(result).toMatchObject({ context_id: "c1", task_id: "t1", state: "completed", text: "done" })
      expect(yield* savedSession()).toMatchObject({ context_id: "c1", task_id: "t1", last_state: "completed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("starts a new task in the saved context when the saved task is finished, and saves the new task", () => {
    const { sent, layer } = scripted()
    return Effect.gen(function*() {
      yield* saveSession({ context_id: "c1", task_id: "t1", last_state: "completed" })
      const result = yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "next", useSession: true })
      expect(idsSent(sent[0])).toEqual({ contextId: "c1", taskId: undefined })
      expect(result.task_id).toBe("task-new")
      expect(yield* savedSession()).toMatchObject({ context_id: "c1", task_id: "task-new", last_state: "completed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("explicit ids are sent as given and win over the session", () => {
    const { sent, layer } = scripted()
    return Effect.gen(function*() {
      yield* saveSession({ context_id: "c1", task_id: "t1", last_state: "input-required" })
      yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "a", useSession: true, contextId: "c2" })
      yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "b", contextId: "c3", taskId: "t3" })
      expect(sent.map(idsSent)).toEqual([{ contextId: "c2", taskId: undefined }, { contextId: "c3", taskId: "t3" }])
      expect(yield* savedSession()).toMatchObject({ context_id: "c3", task_id: "t3" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("without use_session nothing saved is sent, yet the turn is saved", () => {
    const { sent, layer } = scripted()
    return Effect.gen(function*() {
      yield* saveSession({ context_id: "c1", task_id: "t1", last_state: "input-required" })
      yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "fresh" })
      expect(idsSent(sent[0])).toEqual({ contextId: undefined, taskId: undefined })
      expect(yield* savedSession()).toMatchObject({ context_id: "ctx-new", task_id: "task-new", last_state: "completed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a direct message reply clears the saved task, and keeps the context it was sent to when it names none", () => {
    const { layer } = scripted({
      send: () => Effect.succeed({ message: agentText("hello back") })
    })
    return Effect.gen(function*() {
      yield* saveSession({ context_id: "c1", task_id: "t1", last_state: "completed" })
      const result = yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "hi", useSession: true })
      expect(result).toEqual({
        context_id: null,
        task_id: null,
        state: "completed",
        text: "hello back",
        // Text alone: the text is in `text`, once; the part keeps its place.
        parts: [{ ...NO_FIELDS, kind: "text", text: null }],
        needs_input: false,
        needs_auth: false,
        kind: "message",
        updated_at: null
      })
      const saved = yield* savedSession()
      expect(saved.context_id).toBe("c1")
      expect(saved.task_id).toBeUndefined()
      expect(saved.last_state).toBe("completed")
    }).pipe(Effect.provide(layer))
  })

  it.effect("a task still running is polled until it settles; the task id is saved even when polling fails", () => {
    const { layer } = scripted({
      send: () => Effect.succeed({ task: task("t7", "c7", "TASK_STATE_WORKING") }),
      getTask: () => Effect.fail(new AgentUnreachable({ url: AGENT, reason: "connection reset" }))
    })
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(sendMessage({ agentUrl: agentUrlOf(AGENT), text: "long job" }))
      expect(Exit.isFailure(exit) && exit.cause._tag === "Fail" && exit.cause.error._tag).toBe("AgentUnreachable")
      expect(yield* savedSession()).toMatchObject({ context_id: "c7", task_id: "t7", last_state: "working" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("an answer that comes at once is written to the session once, not once per snapshot", () => {
    const counting = countingStore()
    const { layer } = scripted({
      send: () => Effect.succeed({ task: task("t9", "c9", "TASK_STATE_SUBMITTED") }),
      getTask: () => Effect.succeed(task("t9", "c9", "TASK_STATE_COMPLETED"))
    }, counting.layer)
    return Effect.gen(function*() {
      const result = yield* sendMessage({ agentUrl: agentUrlOf(AGENT), text: "quick" })
      expect(result).toMatchObject({ task_id: "t9", state: "completed" })
      expect(counting.updates).toEqual(["completed"])
      expect(yield* savedSession()).toMatchObject({ task_id: "t9", last_state: "completed" })
    }).pipe(Effect.provide(layer))
  })

  // Live clock: the early write waits SessionStore.EARLY_WRITE_DELAY, then the task id is saved while the task runs.
  it.live("a task still running past the early write delay is saved while it is followed, then its answer", () => {
    let savedWhileRunning: unknown
    let polls = 0
    const counting = countingStore()
    const { layer } = scripted({
      send: () => Effect.succeed({ task: task("t10", "c10", "TASK_STATE_SUBMITTED") }),
      getTask: () => Effect.succeed(task("t10", "c10", ++polls === 1 ? "TASK_STATE_WORKING" : "TASK_STATE_COMPLETED"))
    }, counting.layer)
    return Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      // The agent's task keeps working a while longer than the early write delay.
      const checkStore = store.get(agentUrlOf(AGENT)).pipe(
        Effect.flatMap((saved) => Effect.sync(() => void (savedWhileRunning = Option.getOrUndefined(saved)))),
        Effect.delay(Duration.sum(SessionStore.EARLY_WRITE_DELAY, Duration.millis(100))),
        Effect.orDie
      )
      const result = yield* sendMessage({
        agentUrl: agentUrlOf(AGENT),
        text: "slow",
        onUpdate: (update) => (update.view.state === "working" ? checkStore : Effect.void)
      })
      expect(result).toMatchObject({ task_id: "t10", state: "completed" })
      expect(savedWhileRunning).toMatchObject({ task_id: "t10", context_id: "c10", last_state: "working" })
      expect(counting.updates).toEqual(["working", "completed"])
    }).pipe(Effect.provide(layer))
  })

  // Live clock: the program really waits between polls (about a second here).
  it.live("polling reports progress and ends in the settled state, which is saved", () => {
    let polls = 0
    const { layer } = scripted({
      send: () => Effect.succeed({ task: task("t8", "c8", "TASK_STATE_WORKING") }),
      getTask: () => {
        polls++
        return Effect.succeed(
          polls < 2
            ? task("t8", "c8", "TASK_STATE_WORKING")
            : task("t8", "c8", "TASK_STATE_INPUT_REQUIRED", {
              status: { state: "TASK_STATE_INPUT_REQUIRED", message: agentText("Which one?") }
            })
        )
      }
    })
    const updates: Array<string> = []
    return Effect.gen(function*() {
      const result = yield* sendMessage({
        agentUrl: agentUrlOf(AGENT),
        text: "pick",
        onUpdate: (update) => Effect.sync(() => updates.push(update.view.state))
      })
      expect(result).toMatchObject({ state: "input-required", needs_input: true, needs_auth: false, text: "Which one?" })
      expect(updates).toEqual(["working", "input-required"])
      expect(yield* savedSession()).toMatchObject({ task_id: "t8", last_state: "input-required" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a stream is followed to its end and its final state saved", () => {
    const { layer } = scripted({
      stream: (request) =>
        Stream.make<Array<V1.StreamResponse>>(
          { task: task("t5", request.message.contextId ?? "c5", "TASK_STATE_SUBMITTED") },
          { statusUpdate: { taskId: "t5", contextId: "c5", status: { state: "TASK_STATE_WORKING" } } },
          { artifactUpdate: { taskId: "t5", contextId: "c5", artifact: { artifactId: "a", parts: [{ text: "Hel" }] } } },
          { artifactUpdate: { taskId: "t5", contextId: "c5", artifact: { artifactId: "a", parts: [{ text: "lo" }] }, append: true } },
          { statusUpdate: { taskId: "t5", contextId: "c5", status: { state: "TASK_STATE_COMPLETED" } } }
        )
    })
    const deltas: Array<string> = []
    return Effect.gen(function*() {
      const result = yield* sendMessage({
        agentUrl: agentUrlOf(AGENT),
        text: "stream it",
        stream: true,
        onUpdate: (update: TaskUpdate) => Effect.sync(() => deltas.push(update.delta))
      })
      expect(result).toMatchObject({ task_id: "t5", context_id: "c5", state: "completed", text: "Hello" })
      expect(deltas.join("")).toBe("Hello")
      expect(yield* savedSession()).toMatchObject({ task_id: "t5", context_id: "c5", last_state: "completed" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("a stream that breaks after the task exists fails, and leaves the task id and its last state saved", () => {
    const { layer } = scripted({
      stream: () =>
        Stream.concat(
          Stream.make<Array<V1.StreamResponse>>(
            { task: task("t6", "c6", "TASK_STATE_SUBMITTED") },
            { statusUpdate: { taskId: "t6", contextId: "c6", status: { state: "TASK_STATE_WORKING" } } }
          ),
          Stream.fail(new AgentUnreachable({ url: AGENT, reason: "the event stream broke" }))
        )
    })
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(sendMessage({ agentUrl: agentUrlOf(AGENT), text: "x", stream: true }))
      expect(Exit.isFailure(exit)).toBe(true)
      expect(yield* savedSession()).toMatchObject({ task_id: "t6", context_id: "c6", last_state: "working" })
    }).pipe(Effect.provide(layer))
  })

  it.effect("refuses an empty message or a bad webhook URL before contacting the agent", () => {
    const { sent, layer } = scripted()
    return Effect.gen(function*() {
      const empty = yield* Effect.flip(sendMessage({ agentUrl: agentUrlOf(AGENT), text: "  " }))
      const badPush = yield* Effect.flip(sendMessage({ agentUrl: agentUrlOf(AGENT), text: "x", pushUrl: "ftp://hook" }))
      expect([empty._tag, badPush._tag]).toEqual(["InvalidInput", "InvalidInput"])
      expect(sent).toHaveLength(0)
    }).pipe(Effect.provide(layer))
  })
})

describe("sendMessage: result text (SPEC §2)", () => {
  const withTask = (extra: Partial<V1.Task>) =>
    scripted({ send: () => Effect.succeed({ task: task("t", "c", "TASK_STATE_COMPLETED", extra) }) })
  const status = (text: string): V1.TaskStatus => ({ state: "TASK_STATE_COMPLETED", message: agentText(text) })
  const history: ReadonlyArray<V1.Message> = [
    { messageId: "u", role: "ROLE_USER", parts: [{ text: "question" }] },
    agentText("from history")
  ]

  it.effect.each(
    [
      ["the artifacts first", {
        artifacts: [{ artifactId: "a", parts: [{ text: "from artifact" }] }],
        status: status("from status"),
        history
      }, "from artifact"],
      ["else the status message", { status: status("from status"), history }, "from status"],
      ["else the agent messages of the history", { history }, "from history"],
      ["data and file parts summarised", {
        artifacts: [{
          artifactId: "a",
          parts: [{ text: "t" }, { data: { k: 1 } }, { raw: "AAEC", filename: "f.bin", mediaType: "application/octet-stream" }, {
            url: "https://x.test/f.png",
            filename: "f.png"
          }]
        }]
      }, "t\n{\n  \"k\": 1\n}\n[file: f.bin (application/octet-stream), 3 bytes]\n[file: f.png, https://x.test/f.png]"]
    ] as const
  )("text takes %s", ([, extra, expected]) =>
    sendMessage({ agentUrl: agentUrlOf(AGENT), text: "q" }).pipe(
      Effect.map((result) => expect(result.text).toBe(expected)),
      Effect.provide(withTask(extra as Partial<V1.Task>).layer)
    ))
})

describe("sendMessage: history only when asked (issue 29)", () => {
  const history: ReadonlyArray<V1.Message> = [
    { messageId: "u", role: "ROLE_USER", parts: [{ text: "question" }] },
    agentText("from history")
  ]
  // An agent that honours historyLength, and answers only in its history.
  const honouring = () => {
    const asked: Array<number | undefined> = []
    const trimmed = (historyLength: number | undefined) => task("t", "c", "TASK_STATE_COMPLETED", historyLength === 0 ? {} : { history })
    const { sent, layer } = scripted({
      send: (request) => Effect.succeed({ task: trimmed(request.configuration?.historyLength) }),
      getTask: (request) => {
        asked.push(request.historyLength)
        return Effect.succeed(trimmed(request.historyLength))
      }
    })
    return { sent, asked, layer }
  }

  it.effect("asks for no history, and fetches it once when the answer is only there", () => {
    const { asked, layer, sent } = honouring()
    return sendMessage({ agentUrl: agentUrlOf(AGENT), text: "q" }).pipe(
      Effect.map((result) => {
        expect(sent[0]?.configuration?.historyLength).toBe(0)
        expect(asked).toEqual([undefined])
        expect(result.text).toBe("from history")
      }),
      Effect.provide(layer)
    )
  })

  it.effect("asks for the history the caller wants, and no more", () => {
    const { asked, layer, sent } = honouring()
    return sendMessage({ agentUrl: agentUrlOf(AGENT), text: "q", historyLength: 5 }).pipe(
      Effect.map((result) => {
        expect(sent[0]?.configuration?.historyLength).toBe(5)
        expect(asked).toEqual([])
        expect(result.text).toBe("from history")
      }),
      Effect.provide(layer)
    )
  })
})

// ---------------------------------------------------------------------------
// Real peers

let sdk: SdkAgentHandle
let v03: V03AgentHandle
let noPush: SdkAgentHandle
let sink: WebhookSink

beforeAll(async () => {
  ;[sdk, v03, noPush, sink] = await Promise.all([
    startSdkAgent(),
    startV03Agent(),
    startSdkAgent({ capabilities: { pushNotifications: false } }),
    startWebhookSink()
  ])
})

afterAll(async () => {
  await Promise.all([sdk?.close(), v03?.close(), noPush?.close(), sink?.close()])
})

/** Runs a send against a peer and returns the result with the requests it caused there. */
const sendRecorded = <A, E>(
  peer: { readonly requests: ReadonlyArray<RecordedRequest> },
  run: Effect.Effect<A, E, A2aClient.A2aClient | SessionStore.SessionStore | ReceivedFiles>
) =>
  Effect.suspend(() => {
    const before = peer.requests.length
    return Effect.map(run, (result) => ({ result, sent: peer.requests.slice(before) }))
  })

const AUTH_HEADERS = ["authorization", "x-api-key", "x-agent-key"] as const

describe("sendMessage: credentials (SPEC §5) as the agent receives them", () => {
  const TOKEN = "explicit-bearer-0123456789"
  const KEY = "explicit-key-0123456789"
  const SAVED_TOKEN = "saved-bearer-0123456789"
  const SAVED_KEY = "saved-key-0123456789"

  const sendWith = (access: { bearerToken?: string; apiKey?: string }, saved?: "bearer" | "api_key") =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      if (saved === "bearer") yield* store.setCredentials(agentUrlOf(sdk.baseUrl), { kind: "bearer", token: SAVED_TOKEN })
      if (saved === "api_key") {
        yield* store.setCredentials(agentUrlOf(sdk.baseUrl), { kind: "api_key", key: SAVED_KEY, header: "X-Agent-Key" })
      }
      const { sent } = yield* sendRecorded(sdk, sendMessage({ agentUrl: agentUrlOf(sdk.baseUrl), text: "hi", ...access }))
      expect(sent.length).toBeGreaterThanOrEqual(2) // the card, then the message
      return credentialHeadersOf(sent, AUTH_HEADERS)
    }).pipe(Effect.provide(ProgramLayer))

  const everyRequest = (headers: Record<string, string>) => (all: ReadonlyArray<Record<string, string>>) =>
    expect(new Set(all.map((h) => JSON.stringify(h)))).toEqual(new Set([JSON.stringify(headers)]))

  it.live("1a. an explicit bearer token wins over an explicit API key and saved credentials", () =>
    Effect.map(sendWith({ bearerToken: TOKEN, apiKey: KEY }, "api_key"), everyRequest({ authorization: `Bearer ${TOKEN}` })))

  it.live("1b. an explicit API key (X-API-Key) wins over saved credentials", () =>
    Effect.map(sendWith({ apiKey: KEY }, "bearer"), everyRequest({ "x-api-key": KEY })))

  it.live("2. saved credentials are used when none are given: a bearer token", () =>
    Effect.map(sendWith({}, "bearer"), everyRequest({ authorization: `Bearer ${SAVED_TOKEN}` })))

  it.live("2. saved credentials are used when none are given: an API key under its saved header", () =>
    Effect.map(sendWith({}, "api_key"), everyRequest({ "x-agent-key": SAVED_KEY })))

  it.live("3. with no credentials no credential header goes out", () => Effect.map(sendWith({}), everyRequest({})))
})

describe("sendMessage against real agents (SPEC §2 message result)", () => {
  it.each(["v1.0", "v0.3"])("%s agent: every behaviour maps to the SPEC result shape with v0.3 state names", async (which) => {
    // Peers start in beforeAll, so they are picked when the test runs.
    const peer = which === "v1.0" ? sdk : v03
    const send = (text: string) =>
      Effect.runPromise(sendMessage({ agentUrl: agentUrlOf(peer.baseUrl), text }).pipe(Effect.provide(ProgramLayer)))
    const results = {
      echo: await send("plain words"),
      input: await send(withBehaviour("input-required", "start")),
      auth: await send(withBehaviour("auth-required", "start")),
      message: await send(withBehaviour("message-only", "direct")),
      fail: await send(withBehaviour("fail", "boom")),
      mixed: await send(withBehaviour("data-and-file", "abc"))
    }
    for (const result of Object.values(results)) {
      expect(Object.keys(result).sort()).toEqual([
        "binding",
        "context_id",
        "kind",
        "needs_auth",
        "needs_input",
        "parts",
        "protocol_version",
        "state",
        "task_id",
        "text",
        "updated_at"
      ])
      expect(result.context_id).toEqual(expect.any(String))
      // The interface the answer came over: the card's first, in the agent's generation.
      expect(result).toMatchObject({ binding: "JSONRPC", protocol_version: which === "v1.0" ? "1.0" : "0.3" })
    }
    expect(results.echo).toMatchObject({
      state: "completed",
      text: echoText("plain words"),
      needs_input: false,
      needs_auth: false,
      kind: "task"
    })
    expect(results.echo.task_id).toEqual(expect.any(String))
    expect(results.input).toMatchObject({ state: "input-required", text: INPUT_REQUIRED_QUESTION, needs_input: true, needs_auth: false })
    expect(results.auth).toMatchObject({ state: "auth-required", text: AUTH_REQUIRED_TEXT, needs_input: false, needs_auth: true })
    expect(results.message).toMatchObject({ state: "completed", text: echoText("direct"), task_id: null, kind: "message" })
    expect(results.fail).toMatchObject({ state: "failed", text: failureReason("boom") })
    // Data parts are shown whole and file parts summarised after the text, never dropped; the
    // parts say the same, and the file's bytes are saved under the task's folder.
    expect(results.mixed.text).toBe(
      [echoText("abc"), JSON.stringify(dataPartFor("abc"), null, 2), "[file: echo.txt (text/plain), 3 bytes]"].join("\n")
    )
    expect(results.mixed.parts).toEqual([
      expect.objectContaining({ kind: "text", text: echoText("abc") }),
      expect.objectContaining({ kind: "data", data: dataPartFor("abc") }),
      expect.objectContaining({
        kind: "file",
        name: "echo.txt",
        media_type: "text/plain",
        size: 3,
        path: expect.stringMatching(/[/\\]files[/\\].+[/\\]echo\.txt$/)
      })
    ])
  })

  it("continues a task waiting for input through the saved session, across processes (file store)", async () => {
    const home = tempHome()
    // Each run gets its own layers, as two separate relay invocations would.
    const run = <A, E>(effect: Effect.Effect<A, E, A2aClient.A2aClient | SessionStore.SessionStore | ReceivedFiles>) =>
      Effect.runPromise(effect.pipe(Effect.provide(Layer.mergeAll(RealClient, storeLayer(home.stateDir), ScratchFiles))))
    try {
      const before = sdk.requests.length
      const first = await run(sendMessage({ agentUrl: agentUrlOf(sdk.baseUrl), text: withBehaviour("input-required", "first") }))
      const second = await run(sendMessage({ agentUrl: agentUrlOf(sdk.baseUrl), text: "second", useSession: true }))
      const third = await run(sendMessage({ agentUrl: agentUrlOf(sdk.baseUrl), text: "third", useSession: true }))
      expect(first.state).toBe("input-required")
      expect(second).toMatchObject({
        task_id: first.task_id,
        context_id: first.context_id,
        state: "completed",
        text: combinedText(["first", "second"])
      })
      // The task is finished now: the next message starts a new task in the same context.
      expect(third.context_id).toBe(first.context_id)
      expect(third.task_id).not.toBe(first.task_id)
      expect(sentMessages(sdk.requests.slice(before)).map((m) => [m.contextId, m.taskId])).toEqual([
        [undefined, undefined],
        [first.context_id, first.task_id],
        [first.context_id, undefined]
      ])
      const saved = await run(savedSession(sdk.baseUrl))
      expect(saved).toMatchObject({ context_id: first.context_id, task_id: third.task_id, last_state: "completed" })
    } finally {
      home.cleanup()
    }
  })

  it.live("streams a chunked answer, reporting text as it arrives, and continues an auth-required task by stream", () =>
    Effect.gen(function*() {
      const deltas: Array<string> = []
      const states: Array<string> = []
      const onUpdate = (update: TaskUpdate) =>
        Effect.sync(() => {
          deltas.push(update.delta)
          states.push(update.view.state)
        })
      const chunked = yield* sendMessage({
        agentUrl: agentUrlOf(sdk.baseUrl),
        text: withBehaviour("chunked-artifact", "go"),
        stream: true,
        onUpdate
      })
      expect(chunked).toMatchObject({ state: "completed", text: chunkTexts("go").join("") })
      expect(deltas.filter((d) => d !== "")).toEqual(chunkTexts("go"))
      expect(states.at(-1)).toBe("completed")

      const parked = yield* sendMessage({ agentUrl: agentUrlOf(v03.baseUrl), text: withBehaviour("auth-required", "sign"), stream: true })
      expect(parked).toMatchObject({ state: "auth-required", needs_auth: true })
      expect(yield* savedSession(v03.baseUrl)).toMatchObject({ task_id: parked.task_id, last_state: "auth-required" })
      const resumed = yield* sendMessage({ agentUrl: agentUrlOf(v03.baseUrl), text: "signed in", stream: true, useSession: true })
      expect(resumed).toMatchObject({ task_id: parked.task_id, state: "completed", text: echoText("signed in") })
      expect(yield* savedSession(v03.baseUrl)).toMatchObject({ task_id: parked.task_id, last_state: "completed" })
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("--push-url registers the webhook with the message; the webhook then receives the task's notifications", () =>
    Effect.gen(function*() {
      const PUSH_TOKEN = "push-token-for-the-sink-42"
      const result = yield* sendMessage({
        agentUrl: agentUrlOf(sdk.baseUrl),
        text: "notify me",
        pushUrl: `${sink.url}/program-hook`,
        pushToken: PUSH_TOKEN
      })
      const deliveries = yield* Effect.promise(() =>
        sink.waitFor((d) => d.path === "/program-hook" && JSON.stringify(d.body).includes("TASK_STATE_COMPLETED"), 5000)
      )
      expect(JSON.stringify(deliveries.body)).toContain(result.task_id!)
      expect(deliveries.headers["x-a2a-notification-token"]).toBe(PUSH_TOKEN)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("--push-url to an agent without push notifications is refused before the message is sent", () =>
    Effect.gen(function*() {
      const before = noPush.requests.length
      const error = yield* Effect.flip(sendMessage({ agentUrl: agentUrlOf(noPush.baseUrl), text: "x", pushUrl: `${sink.url}/never` }))
      expect(error).toMatchObject({ _tag: "UnsupportedOperation", code: "unsupported_operation" })
      expect(sentMessages(noPush.requests.slice(before))).toHaveLength(0)
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("a turn's answer (taskUpdates)", () => {
  const asked: V1.Task = {
    id: "t",
    contextId: "c",
    status: { state: "TASK_STATE_INPUT_REQUIRED", timestamp: "2026-01-01T00:00:00.000Z", message: agentText("Which city?") },
    history: [agentText("Which city?"), { messageId: "u", role: "ROLE_USER", parts: [{ text: "Lisbon" }] }]
  }
  const turn: Turn = { before: statusMark(asked), sentAt: 0 }

  it("the status the message found, published again, is no answer and shows nothing of the old question", () => {
    expect(answersTurn(turn, asked, 60_000)).toBe(false)
    const shown = presentForTurn(turn, asked)
    expect(shown.status.state).toBe("TASK_STATE_WORKING")
    expect(resultText(shown)).toBe("")
  })

  it("a new question, a new time or another state is the answer", () => {
    const later = { ...asked, status: { ...asked.status, timestamp: "2026-01-01T00:00:01.000Z" } }
    const second = { ...asked, status: { ...asked.status, message: agentText("Which date?") } }
    const done = { ...asked, status: { state: "TASK_STATE_COMPLETED" as const } }
    expect([later, second, done].map((task) => answersTurn(turn, task, 0))).toEqual([true, true, true])
  })

  it("without marks, the same status is taken as the answer only after the settle window", () => {
    const unmarked: V1.Task = { id: "t", status: { state: "TASK_STATE_INPUT_REQUIRED" } }
    const blind: Turn = { before: statusMark(unmarked), sentAt: 0 }
    expect(answersTurn(blind, unmarked, 1000)).toBe(false)
    expect(answersTurn(blind, unmarked, 3000)).toBe(true)
  })
})
