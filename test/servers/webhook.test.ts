/**
 * The push-notification receiver and its log: v1.0 and v0.3 bodies, token checks, bad and
 * hostile bodies, 1000 concurrent deliveries, rotation, lock-free readers and followers, and
 * real A2A SDK agents (v1.0 and v0.3) pushing to it.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Either, FastCheck as fc, Fiber, Layer, Queue, Redacted, Schedule, Stream } from "effect"
import { randomUUID, timingSafeEqual } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { afterAll, vi } from "vitest"
import { exceedsJsonDepth, MAX_JSON_DEPTH, MAX_STORED_JSON_DEPTH } from "../../src/domain/limits.js"
import {
  matchesFilter,
  normalizeTaskState,
  type NotificationFilter,
  type NotificationRecord,
  parseSince,
  summarizeNotification
} from "../../src/domain/notification.js"
import { type IncomingNotification, notificationRecord, recordNotification } from "../../src/programs/notifications.js"
import {
  DEFAULT_MAX_BODY_BYTES,
  presentedTokens,
  tokenMatches,
  webhookBaseUrl,
  type WebhookOptions,
  webhookServerLayer
} from "../../src/servers/webhook/WebhookServer.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import * as StateDir from "../../src/services/StateDir.js"
import { deepestAccepted, tooDeep } from "../fuzz/corpus.js"
import { simulatedDisk } from "../helpers/fullDisk.js"
import { stateDirsFor } from "../helpers/stateHome.js"
import { cutOffAfter, ENDLESS_BYTES, endlessUpload, UPLOAD_PIECE } from "../peers/httpUtil.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"

// Wrap timingSafeEqual (behaviour unchanged) to prove the token check goes through it.
vi.mock("node:crypto", async (importOriginal) => {
  const actual = await importOriginal<typeof import("node:crypto")>()
  return { ...actual, timingSafeEqual: vi.fn(actual.timingSafeEqual) }
})

/** A fresh state directory (removed after the file's tests); returns its path. */
const freshStateDir = stateDirsFor(afterAll)

const logLayer = (stateDir: string, options: NotificationLog.NotificationLogOptions = {}) =>
  NotificationLog.layer({ followInterval: "20 millis", ...options }).pipe(
    Layer.provideMerge(StateDir.layer),
    Layer.provideMerge(NodeContext.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", stateDir]]))))
  )

/** The receiver on 127.0.0.1:0 with its own state directory; the log is exposed to the tests. */
const serverLayer = (stateDir: string, options: WebhookOptions = {}, logOptions: NotificationLog.NotificationLogOptions = {}) =>
  webhookServerLayer({ host: "127.0.0.1", port: 0, ...options }).pipe(Layer.provideMerge(logLayer(stateDir, logOptions)))

interface Reply {
  readonly status: number
  readonly body: unknown
}

const post = (path: string, body: string | Uint8Array, headers: Record<string, string> = {}, timeoutMs = 10_000) =>
  Effect.flatMap(webhookBaseUrl, (base) =>
    Effect.promise(async (): Promise<Reply> => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/a2a+json", ...headers },
        body,
        signal: AbortSignal.timeout(timeoutMs)
      })
      const text = await response.text()
      return { status: response.status, body: text === "" ? undefined : JSON.parse(text) }
    }))

const postJson = (path: string, value: unknown, headers: Record<string, string> = {}, timeoutMs?: number) =>
  post(path, JSON.stringify(value), headers, timeoutMs)

const health = Effect.flatMap(
  webhookBaseUrl,
  (base) => Effect.promise(() => fetch(`${base}/health`, { signal: AbortSignal.timeout(5_000) }).then((r) => r.status))
)

const readAll = Effect.flatMap(NotificationLog.NotificationLog, (log) => log.read({}))

/** The same piece framed as one chunk of a chunked body. */
const CHUNK = Buffer.concat([Buffer.from(`${UPLOAD_PIECE.length.toString(16)}\r\n`), UPLOAD_PIECE, Buffer.from("\r\n")])

/** An upload without end to the receiver (see endlessUpload). */
const endlessUploadHere = (head: string, withinMs: number, piece = UPLOAD_PIECE) =>
  Effect.flatMap(webhookBaseUrl, (base) => Effect.promise(() => endlessUpload(Number(new URL(base).port), head, withinMs, piece)))

const recordWithId = (id: unknown) =>
  Effect.map(readAll, (records) => {
    const found = records.find((record) => record.id === id)
    if (found === undefined) throw new Error(`no record ${String(id)}`)
    return found
  })

/** Lines in the current log file, read raw (no dedupe) to count exactly what was written. */
const rawLines = (stateDir: string): Array<string> => {
  const file = Path.join(stateDir, NotificationLog.NOTIFICATIONS_FILE)
  return Fs.existsSync(file) ? Fs.readFileSync(file, "utf8").split("\n").filter((line) => line !== "") : []
}

// ---------------------------------------------------------------------------
// Bodies as real senders post them

const v1Status = (taskId: string, state: string, text?: string) => ({
  statusUpdate: {
    taskId,
    contextId: "ctx-1",
    status: {
      state,
      ...(text === undefined ? {} : { message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text }] } })
    }
  }
})

const V1_BODIES = {
  task: {
    task: {
      id: "task-v1",
      contextId: "ctx-1",
      status: { state: "TASK_STATE_SUBMITTED" },
      history: [{ messageId: "u1", role: "ROLE_USER", parts: [{ text: "hello" }] }]
    }
  },
  statusUpdate: v1Status("task-v1", "TASK_STATE_INPUT_REQUIRED", "Which   city?\n"),
  artifactUpdate: {
    artifactUpdate: {
      taskId: "task-v1",
      contextId: "ctx-1",
      artifact: { artifactId: "a1", parts: [{ text: "Sunny, 21 °C" }, { data: { t: 21 } }] },
      lastChunk: true
    }
  },
  message: { message: { messageId: "m2", role: "ROLE_AGENT", contextId: "ctx-1", parts: [{ text: "just a message" }] } }
} as const

const V03_BODIES = {
  task: {
    kind: "task",
    id: "task-v03",
    contextId: "ctx-3",
    status: {
      state: "completed",
      message: { kind: "message", messageId: "m", role: "agent", parts: [{ kind: "text", text: "done: echo" }] }
    }
  },
  statusUpdate: {
    kind: "status-update",
    taskId: "task-v03",
    contextId: "ctx-3",
    final: false,
    status: { state: "working" }
  },
  artifactUpdate: {
    kind: "artifact-update",
    taskId: "task-v03",
    contextId: "ctx-3",
    artifact: { artifactId: "a", parts: [{ kind: "text", text: "chunk one" }] }
  },
  message: { kind: "message", messageId: "m3", role: "agent", taskId: "task-v03", parts: [{ kind: "text", text: "hi" }] }
} as const

describe("summarizeNotification", () => {
  it("reads v1.0 StreamResponse bodies", () => {
    expect(summarizeNotification(V1_BODIES.task)).toEqual({
      kind: "task",
      protocol: "1.0",
      task_id: "task-v1",
      context_id: "ctx-1",
      state: "submitted",
      text: null
    })
    expect(summarizeNotification(V1_BODIES.statusUpdate)).toMatchObject({
      kind: "status-update",
      state: "input-required",
      text: "Which city?"
    })
    // Rendered as every view renders it (text.ts), on one line: the data part is its JSON, not dropped.
    expect(summarizeNotification(V1_BODIES.artifactUpdate)).toMatchObject({ kind: "artifact-update", text: "Sunny, 21 °C { \"t\": 21 }" })
    expect(summarizeNotification(V1_BODIES.message)).toMatchObject({ kind: "message", task_id: null, context_id: "ctx-1" })
  })

  it("reads v0.3 Task and event bodies", () => {
    expect(summarizeNotification(V03_BODIES.task)).toEqual({
      kind: "task",
      protocol: "0.3",
      task_id: "task-v03",
      context_id: "ctx-3",
      state: "completed",
      text: "done: echo"
    })
    expect(summarizeNotification(V03_BODIES.statusUpdate)).toMatchObject({ kind: "status-update", protocol: "0.3", state: "working" })
    expect(summarizeNotification(V03_BODIES.artifactUpdate)).toMatchObject({ kind: "artifact-update", text: "chunk one" })
    expect(summarizeNotification(V03_BODIES.message)).toMatchObject({ kind: "message", task_id: "task-v03", text: "hi" })
  })

  it("unwraps a JSON-RPC envelope and recognises bare tasks by their fields", () => {
    expect(summarizeNotification({ jsonrpc: "2.0", id: 1, result: V1_BODIES.statusUpdate })).toMatchObject({
      kind: "status-update",
      protocol: "1.0"
    })
    expect(summarizeNotification({ id: "t", status: { state: "TASK_STATE_FAILED" } })).toMatchObject({
      kind: "task",
      protocol: "1.0",
      state: "failed"
    })
  })

  it("keeps a task id as long as an agent server takes one, so a filter by it finds the notification", () => {
    const long = `t${"x".repeat(900)}`
    const longer = `t${"y".repeat(3000)}`
    expect(summarizeNotification({ taskId: long, contextId: long, status: { state: "working" } })).toMatchObject({
      task_id: long,
      context_id: long
    })
    const recorded = (taskId: string) =>
      ({
        id: "n",
        received_at: new Date(0).toISOString(),
        task_id: summarizeNotification({ taskId, status: { state: "working" } }).task_id
      }) as NotificationRecord
    expect(matchesFilter({ taskId: long })(recorded(long))).toBe(true)
    // Past the bound, the record and the filter are cut alike.
    expect(matchesFilter({ taskId: longer })(recorded(longer))).toBe(true)
    expect(matchesFilter({ taskId: long })(recorded(longer))).toBe(false)
  })

  it("finds the text by its fields when the body does not decode as A2A", () => {
    // Each lacks fields A2A requires (message ids, roles, artifact ids), so only the field scan reads it.
    const loose = { parts: [{ text: "from the status" }] }
    expect(summarizeNotification({ taskId: "t1", status: { state: "working", message: loose } }))
      .toEqual({ kind: "status-update", protocol: "0.3", task_id: "t1", context_id: null, state: "working", text: "from the status" })
    expect(
      summarizeNotification({
        task: { id: "t2", status: { state: "TASK_STATE_COMPLETED" }, artifacts: [{ parts: [{ text: "  the\n answer " }] }] }
      })
    )
      .toEqual({ kind: "task", protocol: "1.0", task_id: "t2", context_id: null, state: "completed", text: "the answer" })
    expect(summarizeNotification({ kind: "artifact-update", taskId: "t3", artifact: { parts: [{ kind: "text", text: "a chunk" }] } }))
      .toEqual({ kind: "artifact-update", protocol: "0.3", task_id: "t3", context_id: null, state: null, text: "a chunk" })
    expect(summarizeNotification({ message: { taskId: "t4", contextId: "c4", parts: [{ text: "a note" }] } }))
      .toEqual({ kind: "message", protocol: "1.0", task_id: "t4", context_id: "c4", state: null, text: "a note" })
  })

  it("calls everything else unknown", () => {
    for (const body of [42, "text", null, [V1_BODIES.task], {}, { task: "not an object" }, { task: {}, message: {} }]) {
      expect(summarizeNotification(body)).toMatchObject({ kind: "unknown", protocol: "unknown", task_id: null })
    }
  })

  it("cuts the text excerpt to 200 characters", () => {
    const summary = summarizeNotification(v1Status("t", "TASK_STATE_WORKING", "word ".repeat(10_000)))
    expect(summary.text?.length).toBe(200)
    expect(summary.text?.endsWith("…")).toBe(true)
  })

  it("normalises every state spelling to the v0.3 name", () => {
    expect(normalizeTaskState("TASK_STATE_AUTH_REQUIRED")).toBe("auth-required")
    expect(normalizeTaskState("TASK_STATE_CANCELED")).toBe("canceled")
    expect(normalizeTaskState("TASK_STATE_CANCELLED")).toBe("canceled")
    expect(normalizeTaskState("TASK_STATE_UNSPECIFIED")).toBe("unknown")
    expect(normalizeTaskState("input-required")).toBe("input-required")
  })

  it("measures nesting without recursion", () => {
    const deep = JSON.parse(`${"[".repeat(100_000)}${"]".repeat(100_000)}`)
    expect(exceedsJsonDepth(deep, 512)).toBe(true)
    expect(exceedsJsonDepth(V1_BODIES.task, 512)).toBe(false)
  })
})

describe("notificationRecord", () => {
  /** The record as it was built with spreads before it was built by assignment: the log's field order. */
  const spreadRecord = (incoming: IncomingNotification, id: string, receivedAt: string) => {
    const tooDeep = exceedsJsonDepth(incoming.body, MAX_STORED_JSON_DEPTH)
    return {
      id,
      received_at: receivedAt,
      path: incoming.path,
      token_present: incoming.tokenPresent,
      ...(incoming.contentType === undefined ? {} : { headers_summary: { content_type: incoming.contentType } }),
      ...summarizeNotification(incoming.body),
      body: tooDeep ? null : incoming.body,
      ...(tooDeep ? { body_text: incoming.rawText } : {})
    }
  }
  const deepText = `${"[".repeat(MAX_STORED_JSON_DEPTH + 1)}${"]".repeat(MAX_STORED_JSON_DEPTH + 1)}`
  const bodies: Array<unknown> = [...Object.values(V1_BODIES), ...Object.values(V03_BODIES), 42, null, [1], { any: "thing" }]

  it("writes the same line, field for field and in the same order, as the spread-built record", () => {
    fc.assert(fc.property(
      fc.oneof(fc.constantFrom(...bodies), fc.jsonValue({ maxDepth: 4 })),
      fc.option(fc.string(), { nil: undefined }),
      fc.boolean(),
      fc.string(),
      (body, contentType, tokenPresent, path) => {
        const incoming: IncomingNotification = { path, tokenPresent, contentType, body, rawText: JSON.stringify(body) }
        expect(JSON.stringify(notificationRecord(incoming, "id-1", "2026-01-01T00:00:00.000Z")))
          .toBe(JSON.stringify(spreadRecord(incoming, "id-1", "2026-01-01T00:00:00.000Z")))
      }
    ))
  })

  it("keeps a body too deep to store as text, unless the caller checked a depth within the stored bound", () => {
    const deep: IncomingNotification = { path: "/", tokenPresent: false, body: JSON.parse(deepText), rawText: deepText }
    for (const checkedDepth of [undefined, MAX_STORED_JSON_DEPTH + 1, 10_000]) {
      const record = notificationRecord({ ...deep, checkedDepth }, "id", "t")
      expect(record).toMatchObject({ body: null, body_text: deepText })
      expect(JSON.stringify(record)).toBe(JSON.stringify(spreadRecord(deep, "id", "t")))
    }
    const shallow: IncomingNotification = {
      path: "/",
      tokenPresent: false,
      body: V1_BODIES.task,
      rawText: "",
      checkedDepth: MAX_JSON_DEPTH
    }
    const record = notificationRecord(shallow, "id", "t")
    expect(record.body).toBe(V1_BODIES.task)
    expect("body_text" in record).toBe(false)
  })
})

describe("parseSince", () => {
  const now = Date.parse("2025-06-01T12:00:00Z")
  it("accepts ISO times and durations back from now", () => {
    expect(parseSince("2025-06-01T10:00:00Z", now)).toEqual(Either.right(new Date("2025-06-01T10:00:00Z")))
    expect(parseSince("10m", now)).toEqual(Either.right(new Date(now - 600_000)))
    expect(parseSince("2h", now)).toEqual(Either.right(new Date(now - 7_200_000)))
    expect(parseSince("1d", now)).toEqual(Either.right(new Date(now - 86_400_000)))
  })
  it("rejects anything else with a hint", () => {
    for (const input of ["yesterday", "10", "10 parsecs", ""]) {
      const parsed = parseSince(input, now)
      expect(Either.isLeft(parsed)).toBe(true)
    }
  })
})

// ---------------------------------------------------------------------------
// The receiver without a token

layer(serverLayer(freshStateDir()), { excludeTestServices: true })("receiver without a token", (it) => {
  it.effect("records v1.0 bodies with their summary and answers 200", () =>
    Effect.gen(function*() {
      for (const [member, body] of Object.entries(V1_BODIES)) {
        const reply = yield* postJson(`/v1/${member}`, body)
        expect(reply.status).toBe(200)
        const record = yield* recordWithId((reply.body as { id: string }).id)
        expect(record).toMatchObject({ path: `/v1/${member}`, protocol: "1.0", token_present: false, body })
        expect(record.headers_summary).toEqual({ content_type: "application/a2a+json" })
        expect(Date.now() - Date.parse(record.received_at)).toBeLessThan(60_000)
      }
      const records = yield* readAll
      expect(records.filter((r) => r.protocol === "1.0").map((r) => r.kind)).toEqual([
        "task",
        "status-update",
        "artifact-update",
        "message"
      ])
    }))

  it.effect("records v0.3 bodies, keeping lower-case states", () =>
    Effect.gen(function*() {
      for (const body of Object.values(V03_BODIES)) {
        const reply = yield* postJson("/v03", body, { "content-type": "application/json" })
        expect(reply.status).toBe(200)
        const record = yield* recordWithId((reply.body as { id: string }).id)
        expect(record).toMatchObject({ protocol: "0.3", kind: body.kind, body })
      }
    }))

  it.effect("notes that a token was sent without storing it", () =>
    Effect.gen(function*() {
      const reply = yield* postJson("/", V03_BODIES.task, { "x-a2a-notification-token": "tok-secret-value" })
      expect(reply.status).toBe(200)
      const record = yield* recordWithId((reply.body as { id: string }).id)
      expect(record).toMatchObject({ path: "/", token_present: true })
      expect(JSON.stringify(record)).not.toContain("tok-secret-value")
    }))

  it.effect("answers 400 to invalid JSON and binary, 413 to oversized bodies, and keeps serving", () =>
    Effect.gen(function*() {
      const before = (yield* readAll).length
      const invalid = yield* post("/bad", "{not json")
      expect(invalid.status).toBe(400)
      expect(invalid.body).toMatchObject({ error: { code: "invalid_json" } })
      expect((yield* post("/empty", "")).status).toBe(400)
      const binary = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)
      expect((yield* post("/binary", binary, { "content-type": "application/octet-stream" })).status).toBe(400)

      const oversized = yield* post("/big", JSON.stringify({ pad: "x".repeat(1024 * 1024) }))
      expect(oversized.status).toBe(413)
      expect(oversized.body).toMatchObject({ error: { code: "payload_too_large" } })
      // Without Content-Length the limit is enforced while reading.
      const chunks = Stream.make(new TextEncoder().encode("[\""), new Uint8Array(1_200_000).fill(0x61), new TextEncoder().encode("\"]"))
      const streamed = yield* Effect.flatMap(webhookBaseUrl, (base) =>
        Effect.promise(() =>
          fetch(`${base}/chunked`, {
            method: "POST",
            body: Stream.toReadableStream(chunks),
            duplex: "half",
            signal: AbortSignal.timeout(10_000)
          } as RequestInit).then((r) => r.status)
        ))
      expect(streamed).toBe(413)

      expect(yield* health).toBe(200)
      expect((yield* postJson("/after", V03_BODIES.statusUpdate)).status).toBe(200)
      expect((yield* readAll).length).toBe(before + 1)
    }))

  it.effect("cuts off an upload past 16 times the limit: 413, then the connection closed instead of read to its end", () =>
    Effect.gen(function*() {
      const head = "POST /endless HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
      // Kept alive, node would go on reading (and dropping) the upload until the 30 s request timeout.
      const announced = yield* endlessUploadHere(`${head}Content-Length: ${ENDLESS_BYTES}\r\n\r\n`, 8_000)
      expect(cutOffAfter(announced, "HTTP/1.1 413")).toBe(true)
      const chunked = yield* endlessUploadHere(`${head}Transfer-Encoding: chunked\r\n\r\n`, 8_000, CHUNK)
      expect(cutOffAfter(chunked, "HTTP/1.1 413")).toBe(true)
      expect(yield* health).toBe(200)
    }))

  it.effect("refuses what a web page posts (any Origin) with 403, recording nothing: a page cannot forge a notification", () =>
    Effect.gen(function*() {
      const before = (yield* readAll).length
      // A cross-origin text/plain POST needs no preflight: a page the user visits can send it to loopback.
      for (const origin of ["http://evil.example", "null", `${yield* webhookBaseUrl}`]) {
        const reply = yield* post("/hook", JSON.stringify(V1_BODIES.statusUpdate), { "content-type": "text/plain", origin })
        expect(reply, origin).toMatchObject({ status: 403, body: { error: { code: "browser_origin" } } })
      }
      expect((yield* readAll).length).toBe(before)
      // Agents post from servers, without an Origin: still accepted.
      expect((yield* postJson("/hook", V1_BODIES.statusUpdate)).status).toBe(200)
    }))

  it.effect("survives hostile bodies: deep nesting, huge strings, non-object JSON", () =>
    Effect.gen(function*() {
      const before = (yield* readAll).length
      const deepText = `${"[".repeat(200_000)}${"]".repeat(200_000)}`
      // Deeper than MAX_JSON_DEPTH: refused at the door, nothing recorded.
      const deep = yield* post("/deep", deepText)
      expect(deep).toMatchObject({ status: 400, body: { error: { code: "too_deep" } } })
      expect((yield* readAll).length).toBe(before)
      // A caller other than the receiver still cannot store what would not serialise again: it is kept as text.
      const direct = yield* recordNotification({ path: "/direct", tokenPresent: false, body: JSON.parse(deepText), rawText: deepText })
      expect(yield* recordWithId(direct.id)).toMatchObject({ kind: "unknown", body: null, body_text: deepText })

      const huge = yield* postJson("/huge", v1Status("huge", "TASK_STATE_WORKING", "y".repeat(1000 * 1000)))
      expect(huge.status).toBe(200)
      expect((yield* recordWithId((huge.body as { id: string }).id)).text?.length).toBe(200)

      for (const value of [42, "just a string", null, true, [1, 2, 3]]) {
        const reply = yield* postJson("/scalar", value)
        expect(reply.status).toBe(200)
        const record = yield* recordWithId((reply.body as { id: string }).id)
        expect(record).toMatchObject({ kind: "unknown", body: value })
      }
      expect(yield* health).toBe(200)
    }))

  it.effect("refuses the fuzz corpus' too-deep bodies (400, or 413 past the size limit) recording nothing; takes the deepest accepted", () =>
    Effect.gen(function*() {
      const before = (yield* readAll).length
      const refusals = new Set<number>()
      for (const payload of tooDeep(1)) {
        const reply = yield* post("/fuzz", payload.json)
        // A body past the size limit is refused for its size before it is parsed.
        const [status, code] = payload.json.length > DEFAULT_MAX_BODY_BYTES ? [413, "payload_too_large"] : [400, "too_deep"]
        expect(reply, payload.name).toMatchObject({ status, body: { error: { code } } })
        refusals.add(status)
      }
      expect([...refusals].sort()).toEqual([400, 413])
      expect((yield* readAll).length).toBe(before)
      for (const payload of deepestAccepted(1)) expect((yield* post("/fuzz", payload.json)).status).toBe(200)
      expect((yield* readAll).length).toBe(before + 3)
    }))

  it.effect("GET /health answers; other GETs are 404", () =>
    Effect.gen(function*() {
      expect(yield* health).toBe(200)
      const base = yield* webhookBaseUrl
      expect(yield* Effect.promise(() => fetch(`${base}/elsewhere`).then((r) => r.status))).toBe(404)
    }))
})

// ---------------------------------------------------------------------------
// Tokens

const TOKEN = "hook-secret-1234"

layer(serverLayer(freshStateDir(), { token: Redacted.make(TOKEN) }), { excludeTestServices: true })(
  "receiver with --token",
  (it) => {
    it.effect("accepts the token in each supported header", () =>
      Effect.gen(function*() {
        for (
          const headers of [
            { "x-a2a-notification-token": TOKEN },
            { "a2a-notification-token": TOKEN },
            { authorization: `Bearer ${TOKEN}` },
            { authorization: `bearer ${TOKEN}`, "x-a2a-notification-token": "stale" }
          ]
        ) {
          const reply = yield* postJson("/auth", V03_BODIES.task, headers)
          expect(reply.status).toBe(200)
        }
        const records = yield* readAll
        expect(records.length).toBe(4)
        expect(records.every((record) => record.token_present)).toBe(true)
        expect(Fs.readFileSync((yield* NotificationLog.NotificationLog).file, "utf8")).not.toContain(TOKEN)
      }))

    it.effect("rejects a missing or wrong token with 401 and records nothing", () =>
      Effect.gen(function*() {
        const before = (yield* readAll).length
        for (
          const headers of [
            {},
            { "x-a2a-notification-token": "wrong" },
            { "x-a2a-notification-token": `${TOKEN}x` },
            { authorization: `Basic ${TOKEN}` },
            { authorization: `Bearer ${TOKEN.slice(0, -1)}` }
          ]
        ) {
          const reply = yield* postJson("/auth", V03_BODIES.task, headers)
          expect(reply.status).toBe(401)
          expect(reply.body).toMatchObject({ error: { code: "unauthorized" } })
        }
        expect((yield* readAll).length).toBe(before)
      }))

    it.effect("answers 401 before reading the body of a sender without the token", () =>
      Effect.gen(function*() {
        const { port } = new URL(yield* webhookBaseUrl)
        // 900 bytes announced, 5 sent: only a receiver that read the body first would wait.
        const status = yield* Effect.promise(() =>
          new Promise<string>((resolve) => {
            const socket = Net.connect(
              Number(port),
              "127.0.0.1",
              () => socket.write("POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 900\r\n\r\n{\"a\":")
            )
            socket.once("data", (chunk) => {
              socket.destroy()
              resolve(String(chunk).slice(0, 12))
            })
          })
        ).pipe(Effect.timeout("2 seconds"))
        expect(status).toBe("HTTP/1.1 401")
      }))

    it.effect("closes the connection of a sender without the token that keeps uploading, after its 401", () =>
      Effect.gen(function*() {
        const head = "POST /auth HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        const announced = yield* endlessUploadHere(`${head}Content-Length: ${ENDLESS_BYTES}\r\n\r\n`, 8_000)
        expect(cutOffAfter(announced, "HTTP/1.1 401")).toBe(true)
        const chunked = yield* endlessUploadHere(`${head}Transfer-Encoding: chunked\r\n\r\n`, 8_000, CHUNK)
        expect(cutOffAfter(chunked, "HTTP/1.1 401")).toBe(true)
        // A refusal of a body already read whole keeps the connection: it answers as before.
        expect((yield* postJson("/auth", V03_BODIES.task, { "x-a2a-notification-token": "wrong" })).status).toBe(401)
      }))

    it.effect("compares in constant time over equal-length digests", () =>
      Effect.sync(() => {
        const spy = vi.mocked(timingSafeEqual)
        spy.mockClear()
        expect(tokenMatches(TOKEN, TOKEN)).toBe(true)
        // Different lengths would make timingSafeEqual throw on raw strings; digests never differ in length.
        expect(tokenMatches(TOKEN, "x")).toBe(false)
        expect(tokenMatches(TOKEN, `${TOKEN}${"x".repeat(1000)}`)).toBe(false)
        expect(spy).toHaveBeenCalledTimes(3)
        for (const [a, b] of spy.mock.calls) {
          expect((a as Buffer).length).toBe(32)
          expect((b as Buffer).length).toBe(32)
        }
      }))

    it.effect("the server's check goes through timingSafeEqual", () =>
      Effect.gen(function*() {
        const spy = vi.mocked(timingSafeEqual)
        spy.mockClear()
        expect((yield* postJson("/auth", V03_BODIES.task, { authorization: "Bearer nope" })).status).toBe(401)
        expect(spy).toHaveBeenCalled()
      }))

    it("collects tokens from all three headers", () => {
      expect(presentedTokens({ "x-a2a-notification-token": "a", "a2a-notification-token": "b", authorization: "Bearer c" }))
        .toEqual(["a", "b", "c"])
      expect(presentedTokens({ authorization: "Basic abc" })).toEqual([])
    })
  }
)

layer(serverLayer(freshStateDir(), { token: Redacted.make(` ${TOKEN}\n`) }), { excludeTestServices: true })(
  "receiver with a token given with whitespace around it",
  (it) => {
    it.effect("takes the token as a header can carry it: without the whitespace, which no header value keeps", () =>
      Effect.gen(function*() {
        expect((yield* postJson("/auth", V03_BODIES.task, { "x-a2a-notification-token": TOKEN })).status).toBe(200)
        expect((yield* postJson("/auth", V03_BODIES.task, { authorization: `Bearer  ${TOKEN} ` })).status).toBe(200)
        expect((yield* postJson("/auth", V03_BODIES.task, { "x-a2a-notification-token": "wrong" })).status).toBe(401)
      }))
  }
)

// ---------------------------------------------------------------------------
// Concurrency

const bulkState = freshStateDir()

layer(serverLayer(bulkState), { excludeTestServices: true })("1000 concurrent notifications", (it) => {
  it.effect("are all recorded, none lost or duplicated", () =>
    Effect.gen(function*() {
      const count = 1000
      const replies = yield* Effect.forEach(
        Array.from({ length: count }, (_, i) => i),
        // All at once: the last in the queue may wait long on a busy CI machine, hence 60 s each.
        (i) => postJson(`/bulk/${i}`, v1Status(`bulk-${i}`, "TASK_STATE_WORKING", `marker-${i}`), {}, 60_000),
        { concurrency: "unbounded" }
      )
      expect(replies.every((reply) => reply.status === 200)).toBe(true)

      const lines = rawLines(bulkState)
      expect(lines.length).toBe(count)
      const records = lines.map((line) => JSON.parse(line) as NotificationRecord)
      expect(new Set(records.map((r) => r.id)).size).toBe(count)
      expect(new Set(records.map((r) => r.text)).size).toBe(count)
      expect(new Set(records.map((r) => r.task_id))).toEqual(new Set(replies.map((_, i) => `bulk-${i}`)))
      expect(new Set(replies.map((r) => (r.body as { id: string }).id))).toEqual(new Set(records.map((r) => r.id)))
      expect(Fs.statSync(Path.join(bulkState, NotificationLog.NOTIFICATIONS_FILE)).mode & 0o777).toBe(0o600)
    }), { timeout: 120_000 })
})

// ---------------------------------------------------------------------------
// The log file: rotation, partial lines, followers

const sampleRecord = (n: number, taskId = `task-${n}`): NotificationRecord => ({
  id: randomUUID(),
  received_at: new Date(Date.UTC(2025, 0, 1, 0, 0, n)).toISOString(),
  path: "/log",
  token_present: false,
  kind: "status-update",
  protocol: "1.0",
  task_id: taskId,
  context_id: null,
  state: "working",
  text: `n=${n}`,
  body: { n, pad: "p".repeat(200) }
})

const rotatingState = freshStateDir()

layer(logLayer(rotatingState, { maxFileBytes: 2048 }), { excludeTestServices: true })("notification log rotation", (it) => {
  it.effect("keeps one older generation, reads both oldest first, filters and limits", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      const written = Array.from({ length: 40 }, (_, n) => sampleRecord(n, n % 2 === 0 ? "even" : "odd"))
      for (const record of written) yield* log.append(record)

      const current = Path.join(rotatingState, NotificationLog.NOTIFICATIONS_FILE)
      expect(Fs.statSync(current).size).toBeLessThanOrEqual(2048)
      expect(Fs.statSync(`${current}.1`).size).toBeLessThanOrEqual(2048)
      expect(Fs.statSync(current).mode & 0o777).toBe(0o600)
      expect(Fs.statSync(`${current}.1`).mode & 0o777).toBe(0o600)
      expect(Fs.existsSync(`${current}.2`)).toBe(false)

      const kept = yield* log.read({})
      const keptCount = rawLines(rotatingState).length + Fs.readFileSync(`${current}.1`, "utf8").trim().split("\n").length
      expect(kept.length).toBe(keptCount)
      // The newest records survive, in order.
      expect(kept.map((r) => r.id)).toEqual(written.slice(-kept.length).map((r) => r.id))

      expect((yield* log.read({ limit: 3 })).map((r) => r.text)).toEqual(["n=37", "n=38", "n=39"])
      expect((yield* log.read({ taskId: "odd", limit: 2 })).map((r) => r.text)).toEqual(["n=37", "n=39"])
      const since = new Date(Date.UTC(2025, 0, 1, 0, 0, 38))
      expect((yield* log.read({ since })).map((r) => r.text)).toEqual(["n=38", "n=39"])
    }))

  it.effect("concurrent appends each land whole and in order, in the generation the size bound gives it", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      const current = Path.join(rotatingState, NotificationLog.NOTIFICATIONS_FILE)
      // Start from an empty current file, so the batch below must rotate exactly once on the way.
      yield* log.append(sampleRecord(100))
      Fs.rmSync(current)
      const lineSize = Buffer.byteLength(`${JSON.stringify(sampleRecord(200))}\n`)
      const perFile = Math.floor(2048 / lineSize)
      const together = Array.from({ length: perFile + 2 }, (_, n) => sampleRecord(200 + n))
      yield* Effect.forEach(together, (record) => log.append(record), { concurrency: "unbounded" })

      const older = Fs.readFileSync(`${current}.1`, "utf8").trim().split("\n").map((line) => JSON.parse(line).id)
      const newer = rawLines(rotatingState).map((line) => JSON.parse(line).id)
      // Every line, once, in order; the older file filled up to the bound before the rotation.
      expect([...older, ...newer]).toEqual(together.map((record) => record.id))
      expect(older.length).toBe(perFile)
      expect(Fs.statSync(current).size).toBeLessThanOrEqual(2048)
    }))

  it.effect("a reader skips a trailing partial line until it is complete", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      const before = (yield* log.read({})).length
      const record = sampleRecord(90)
      const line = `${JSON.stringify(record)}\n`
      Fs.appendFileSync(log.file, line.slice(0, 40))
      const partial = yield* log.read({})
      expect(partial.length).toBe(before)
      expect(partial.some((r) => r.id === record.id)).toBe(false)
      Fs.appendFileSync(log.file, line.slice(40))
      expect((yield* log.read({})).at(-1)?.id).toBe(record.id)
    }))

  it.effect("a follower gets the backlog, then each new record across rotations and partial writes", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      const backlog = yield* log.read({ limit: 2 })
      const received = yield* Queue.unbounded<NotificationRecord>()
      const follower = yield* log.follow({ limit: 2 }).pipe(
        Stream.runForEach((record) => Queue.offer(received, record)),
        Effect.fork
      )
      const next = Queue.take(received).pipe(
        Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new Error("follower got nothing") })
      )
      expect([(yield* next).id, (yield* next).id]).toEqual(backlog.map((r) => r.id))

      // Enough appends to rotate the 2 KiB file several times while following.
      for (let n = 100; n < 120; n++) {
        const record = sampleRecord(n)
        if (n === 110) {
          // A writer in another process mid-line: nothing is emitted until the line is whole.
          const line = `${JSON.stringify(record)}\n`
          Fs.appendFileSync(log.file, line.slice(0, 25))
          yield* Effect.sleep("60 millis")
          expect(yield* Queue.size(received)).toBe(0)
          Fs.appendFileSync(log.file, line.slice(25))
        } else {
          yield* log.append(record)
        }
        expect((yield* next).id).toBe(record.id)
      }
      yield* Fiber.interrupt(follower)
    }))
})

/** Starts following `filter`; `next` takes the next record it emits, failing after 3 s. */
const startFollowing = (filter: NotificationFilter = {}) =>
  Effect.gen(function*() {
    const log = yield* NotificationLog.NotificationLog
    const received = yield* Queue.unbounded<NotificationRecord>()
    const fiber = yield* log.follow(filter).pipe(Stream.runForEach((record) => Queue.offer(received, record)), Effect.fork)
    const next = Queue.take(received).pipe(
      Effect.timeoutFail({ duration: "3 seconds", onTimeout: () => new Error("the follower got nothing within 3 s") })
    )
    return { fiber, next, pending: Queue.size(received) }
  })

layer(logLayer(rotatingState, { maxFileBytes: 2048 }), { excludeTestServices: true })(
  "notification log, rotated by another process",
  (it) => {
    it.effect("a follower reads the line a writer appends to the older generation just after a rotation", () =>
      Effect.gen(function*() {
        const log = yield* NotificationLog.NotificationLog
        yield* log.append(sampleRecord(400))
        // Another receiver checked the file and was about to write when this one rotated it.
        const otherWriter = Fs.openSync(log.file, "a")
        const taskId = randomUUID()
        const follower = yield* startFollowing({ taskId })
        for (let n = 401; Fs.statSync(log.file).ino === Fs.fstatSync(otherWriter).ino; n++) yield* log.append(sampleRecord(n))
        // The follower has seen the rotation by now (it polls every 20 ms).
        yield* Effect.sleep("100 millis")
        const late = sampleRecord(450, taskId)
        Fs.writeSync(otherWriter, `${JSON.stringify(late)}\n`)
        Fs.closeSync(otherWriter)
        expect((yield* follower.next).id).toBe(late.id)
        yield* Fiber.interrupt(follower.fiber)
      }))
  }
)

const tornState = freshStateDir()

layer(logLayer(tornState), { excludeTestServices: true })("notification log left by a crash mid-line", (it) => {
  it.effect("ends the torn line before its first line: the next notification is read whole", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      const before = sampleRecord(600)
      // A receiver killed while writing a long line left the first part of it.
      Fs.mkdirSync(Path.dirname(log.file), { recursive: true })
      Fs.writeFileSync(log.file, `${JSON.stringify(before)}\n${JSON.stringify(sampleRecord(601)).slice(0, 40)}`)
      const after = sampleRecord(602)
      yield* log.append(after)
      expect((yield* log.read({})).map((record) => record.id)).toEqual([before.id, after.id])
    }))
})

const slowFollowerState = freshStateDir()

layer(logLayer(slowFollowerState, { maxFileBytes: 2048, followInterval: "400 millis" }), { excludeTestServices: true })(
  "notification log, rotated twice between two polls",
  (it) => {
    it.effect("the follower reads the file it held, the generation in between and the new file, in order", () =>
      Effect.gen(function*() {
        const log = yield* NotificationLog.NotificationLog
        const written = Array.from({ length: 12 }, (_, n) => sampleRecord(500 + n))
        yield* log.append(written[0]!)
        const follower = yield* startFollowing()
        expect((yield* follower.next).id).toBe(written[0]!.id)
        // ~5 lines a file: the rest fills the held file, a whole generation, and part of a third.
        for (const record of written.slice(1)) yield* log.append(record)
        expect(Fs.readFileSync(`${log.file}.1`, "utf8").trim().split("\n").map((line) => JSON.parse(line).id))
          .not.toContain(written[1]!.id)
        const followed: Array<string> = []
        for (const _ of written.slice(1)) followed.push((yield* follower.next).id)
        expect(followed).toEqual(written.slice(1).map((record) => record.id))
        yield* Fiber.interrupt(follower.fiber)
      }))
  }
)

// ---------------------------------------------------------------------------
// A full disk. The stress suite fills a real 64 KiB tmpfs (test/stress/push.test.ts); here the
// write is given a disk that fills up mid-line, as the kernel does it (a short write, then ENOSPC).

const fullDiskState = freshStateDir()
const fullDisk = simulatedDisk()

layer(serverLayer(fullDiskState, {}, { write: fullDisk.write }), { excludeTestServices: true })("a full disk", (it) => {
  it.effect("a write cut short is undone and answered 500; the next notification once there is room is whole", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      expect((yield* post("/disk", JSON.stringify(v1Status("before", "working")))).status).toBe(200)
      const whole = Fs.readFileSync(log.file, "utf8")

      fullDisk.room = 40
      const cut = yield* post("/disk", JSON.stringify(v1Status("cut-short", "working")))
      expect(cut.status).toBe(500)
      expect(cut.body).toMatchObject({ error: { code: "state_file_unavailable" } })
      expect((cut.body as { error: { message: string } }).error.message).toContain("only 40 of")
      expect(Fs.readFileSync(log.file, "utf8")).toBe(whole)

      fullDisk.room = 0
      const refused = yield* post("/disk", JSON.stringify(v1Status("no-room", "working")))
      expect(refused.status).toBe(500)
      expect((refused.body as { error: { message: string } }).error.message).toContain("ENOSPC")
      expect(Fs.readFileSync(log.file, "utf8")).toBe(whole)

      // Room again (the user freed some): the next notification lands whole, on a line of its own.
      fullDisk.room = undefined
      expect((yield* post("/disk", JSON.stringify(v1Status("after", "working")))).status).toBe(200)
      const lines = rawLines(fullDiskState)
      expect(lines.map((line) => JSON.parse(line).task_id)).toEqual(["before", "after"])
      expect((yield* log.read({})).map((record) => record.task_id)).toEqual(["before", "after"])
    }))

  it.effect("another writer's partial line is cut too, before this one writes after it", () =>
    Effect.gen(function*() {
      const log = yield* NotificationLog.NotificationLog
      // A receiver that died right after its write was cut short left half a line.
      Fs.appendFileSync(log.file, `{"id":"half a line`)
      fullDisk.room = 0
      expect((yield* post("/disk", JSON.stringify(v1Status("no-room-2", "working")))).status).toBe(500)
      fullDisk.room = undefined
      expect((yield* post("/disk", JSON.stringify(v1Status("after-2", "working")))).status).toBe(200)
      const lines = rawLines(fullDiskState)
      expect(lines.every((line) => JSON.parse(line) !== undefined)).toBe(true)
      expect(lines.map((line) => JSON.parse(line).task_id).slice(-1)).toEqual(["after-2"])
    }))
})

// ---------------------------------------------------------------------------
// Real senders: the official SDK agents push to the receiver

const interopState = freshStateDir()

/** Polls the log until a record matches (the SDKs push asynchronously); fails after the timeout. */
const waitForRecord = (predicate: (record: NotificationRecord) => boolean) =>
  readAll.pipe(
    Effect.map((records) => records.find(predicate)),
    Effect.flatMap((found) => (found === undefined ? Effect.fail("not yet" as const) : Effect.succeed(found))),
    Effect.retry({ while: (e) => e === "not yet", schedule: Schedule.spaced("50 millis") }),
    Effect.timeoutFail({ duration: "5 seconds", onTimeout: () => new Error("no matching notification within 5 s") })
  )

layer(serverLayer(interopState, { token: Redacted.make(TOKEN) }), { excludeTestServices: true })(
  "A2A SDK senders",
  (it) => {
    const rpc = (url: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
      Effect.promise(() =>
        fetch(url, {
          method: "POST",
          headers: { "content-type": "application/json", ...headers },
          body: JSON.stringify({ jsonrpc: "2.0", id: randomUUID(), method, params }),
          signal: AbortSignal.timeout(10_000)
        }).then((r) => r.json() as Promise<{ result?: Record<string, unknown> }>)
      )

    it.effect("a v1.0 agent (@a2a-js/sdk 1.3.0) pushes StreamResponses with X-A2A-Notification-Token or Authorization", () =>
      Effect.acquireUseRelease(
        Effect.promise(() => startSdkAgent()),
        (agent) =>
          Effect.gen(function*() {
            const base = yield* webhookBaseUrl
            for (
              const [path, config] of [
                ["/v1-token", { token: TOKEN }],
                ["/v1-auth", { authentication: { scheme: "Bearer", credentials: TOKEN } }]
              ] as const
            ) {
              const sent = yield* rpc(agent.jsonRpcUrl, "SendMessage", {
                message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: `push ${path}` }] },
                configuration: { taskPushNotificationConfig: { url: `${base}${path}`, ...config } }
              }, { "a2a-version": "1.0" })
              const taskId = (sent.result?.["task"] as { id: string }).id
              const done = yield* waitForRecord((r) => r.task_id === taskId && r.state === "completed")
              expect(done).toMatchObject({ path, protocol: "1.0", kind: "status-update", token_present: true })
              expect((yield* readAll).filter((r) => r.task_id === taskId).map((r) => r.kind)).toContain("task")
            }
          }),
        (agent) => Effect.promise(() => agent.close())
      ))

    it.effect("a v0.3 agent (@a2a-js/sdk 0.3.14) pushes full Tasks with X-A2A-Notification-Token", () =>
      Effect.acquireUseRelease(
        Effect.promise(() => startV03Agent()),
        (agent) =>
          Effect.gen(function*() {
            const base = yield* webhookBaseUrl
            const sent = yield* rpc(agent.jsonRpcUrl, "message/send", {
              message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "push v03" }] },
              configuration: { pushNotificationConfig: { url: `${base}/v03`, token: TOKEN } }
            })
            const taskId = sent.result?.["id"]
            const done = yield* waitForRecord((r) => r.task_id === taskId && r.state === "completed")
            expect(done).toMatchObject({ path: "/v03", protocol: "0.3", kind: "task", token_present: true })
            expect(done.text).toContain("push v03")
          }),
        (agent) => Effect.promise(() => agent.close())
      ))
  }
)
