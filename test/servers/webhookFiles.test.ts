/**
 * File parts of pushed notifications (issue 29 item 10): the receiver records each one (name, media
 * type, size, sha256) and keeps its bytes beside the log under their sha256, in both generations;
 * hostile parts are recorded with a note and nothing lands outside the folder; a text-only body is
 * recorded as before; rotation keeps the folder within the log's bound. Shown by the terminal view
 * and the MCP tool get_push_notifications.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { describe, expect, it, layer } from "@effect/vitest"
import { ConfigProvider, Effect, Layer, ManagedRuntime, Schema } from "effect"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { isBase64 } from "../../src/a2a/parts.js"
import { formatNotification } from "../../src/cli/notificationCommands.js"
import { makeStyle } from "../../src/cli/output.js"
import { filePartView } from "../../src/domain/fileParts.js"
import { answerFiles, MAX_FILES_RECORDED, NotificationRecord } from "../../src/domain/notification.js"
import { webhookBaseUrl, webhookServerLayer } from "../../src/servers/webhook/WebhookServer.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import * as StateDir from "../../src/services/StateDir.js"
import { appLayer, callTool, connectTools, contextFor, textOf, toolOk } from "../helpers/mcpTools.js"
import { stateDirsFor } from "../helpers/stateHome.js"

/** A fresh state directory (removed after the file's tests); returns its path. */
const freshStateDir = stateDirsFor(afterAll)

const serverLayer = (stateDir: string, logOptions: NotificationLog.NotificationLogOptions = {}) =>
  webhookServerLayer({ host: "127.0.0.1", port: 0 }).pipe(
    Layer.provideMerge(NotificationLog.layer(logOptions)),
    Layer.provideMerge(StateDir.layer),
    Layer.provideMerge(NodeContext.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", stateDir]]))))
  )

const postJson = (path: string, value: unknown) =>
  Effect.flatMap(webhookBaseUrl, (base) =>
    Effect.promise(async () => {
      const response = await fetch(`${base}${path}`, {
        method: "POST",
        headers: { "content-type": "application/a2a+json" },
        body: JSON.stringify(value),
        signal: AbortSignal.timeout(10_000)
      })
      return { status: response.status, body: (await response.json()) as { id?: string } }
    }))

const recordOf = (id: string | undefined) =>
  Effect.flatMap(NotificationLog.NotificationLog, (log) =>
    Effect.map(log.read({}), (records) => {
      const found = records.find((record) => record.id === id)
      if (found === undefined) throw new Error(`no record ${id}`)
      return found
    }))

/** Posts a body and returns its record as the log keeps it. */
const pushed = (value: unknown) =>
  Effect.flatMap(postJson("/hook", value), (reply) => {
    expect(reply.status).toBe(200)
    return recordOf(reply.body.id)
  })

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const base64 = (bytes: Uint8Array) => Buffer.from(bytes).toString("base64")

/** Every path under `dir`, relative, sorted: what the receiver wrote, and nothing else. */
const tree = (dir: string): Array<string> => Fs.readdirSync(dir, { recursive: true, encoding: "utf8" }).sort()

const BINARY = Uint8Array.from({ length: 4096 }, (_, i) => (i * 7919 + 13) % 256)
const PNG = Buffer.from("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==", "base64")

const v1Artifact = (parts: ReadonlyArray<unknown>) => ({
  artifactUpdate: { taskId: "t-files", contextId: "c-files", artifact: { artifactId: "a1", parts }, lastChunk: true }
})

describe("filePartView", () => {
  it("reads file parts of every generation and binding, and nothing else", () => {
    expect(filePartView({ raw: "aGk=", filename: "a.txt", mediaType: "text/plain" })).toEqual({
      shape: "1.0",
      name: "a.txt",
      mediaType: "text/plain",
      bytes: "aGk=",
      url: undefined,
      problems: []
    })
    expect(filePartView({ url: "https://x/y.png", media_type: "image/png" })).toMatchObject({
      shape: "1.0",
      url: "https://x/y.png",
      mediaType: "image/png",
      problems: []
    })
    expect(filePartView({ kind: "file", file: { bytes: "aGk=", name: "b", mimeType: "text/csv" } })).toMatchObject({
      shape: "0.3",
      name: "b",
      mediaType: "text/csv",
      bytes: "aGk=",
      problems: []
    })
    expect(filePartView({ file: { fileWithUri: "https://x/z", mimeType: "application/pdf" } })).toMatchObject({
      shape: "0.3",
      url: "https://x/z",
      problems: []
    })
    for (
      const notFile of [{ text: "hi" }, { data: { a: 1 } }, { kind: "text", text: "hi" }, { kind: "data", data: {} }, "raw", null, [1]]
    ) {
      expect(filePartView(notFile)).toBeUndefined()
    }
  })

  it("names what is wrong with a hostile part", () => {
    expect(filePartView({ raw: "aGk=", url: "https://x" })?.problems).toEqual([
      "both bytes (raw) and a URL (url), where exactly one belongs"
    ])
    expect(filePartView({ kind: "file", file: { bytes: "aGk=", uri: "https://x" } })?.problems).toEqual([
      "both bytes (bytes) and a URL (uri), where exactly one belongs"
    ])
    expect(filePartView({ raw: "not base64!" })?.problems).toEqual(["raw is not base64"])
    expect(filePartView({ raw: 42 })?.problems).toEqual(["raw is not a base64 string"])
    expect(filePartView({ kind: "file", file: { name: "x" } })?.problems).toEqual(["neither bytes nor a URL"])
    expect(filePartView({ kind: "file" })?.problems).toEqual(["file is not an object"])
    expect(filePartView({ raw: "aGk=", text: "hi" })?.problems).toEqual([
      "text beside the file, where a part has exactly one of text, raw, url and data"
    ])
    // No media type is no problem here: relay check warns about it, the receiver records it as null.
    expect(filePartView({ raw: "aGk=" })?.problems).toEqual([])
  })

  it("takes base64 in both alphabets, padded or not, and nothing else", () => {
    for (const ok of ["", "aGk=", "aGk", "aGVsbG8=", "-_-_", "+/+/"]) expect(isBase64(ok), ok).toBe(true)
    for (const bad of ["a", "aGk==", "aG k=", "aGk=\n", "a=Gk", "é", "aGk===="]) expect(isBase64(bad), bad).toBe(false)
  })
})

describe("answerFiles", () => {
  const names = (answer: unknown) => answerFiles(answer)?.views.map((view) => view.name)
  it("finds the answer's file parts in every generation and binding, never the user's", () => {
    // v1.0 SendMessage result and v0.3 REST (proto JSON: a message's parts are its `content`, roles spelled ROLE_*).
    const agentSaid = (parts: string, file: unknown) => ({ messageId: "m", role: "ROLE_AGENT", [parts]: [file] })
    expect(
      names({ task: { id: "t", status: { state: "TASK_STATE_COMPLETED", message: agentSaid("parts", { raw: "aGk=", filename: "a" }) } } })
    ).toEqual(["a"])
    expect(
      names({
        task: {
          id: "t",
          status: { state: "TASK_STATE_COMPLETED" },
          history: [agentSaid("content", { file: { fileWithBytes: "aGk=", name: "b" } })]
        }
      })
    ).toEqual(["b"])
    expect(names({ message: { ...agentSaid("parts", { url: "https://x/c", filename: "c" }) } })).toEqual(["c"])
    // v0.3 JSON-RPC, inside its envelope; the user's upload in the history is not the answer.
    expect(names({
      jsonrpc: "2.0",
      id: 1,
      result: {
        kind: "task",
        id: "t",
        status: { state: "completed" },
        history: [{ kind: "message", messageId: "u", role: "user", parts: [{ kind: "file", file: { bytes: "aGk=", name: "mine" } }] }],
        artifacts: [{ artifactId: "a", parts: [{ kind: "file", file: { uri: "https://x/d", name: "d" } }] }]
      }
    })).toEqual(["d"])
    expect(answerFiles({ task: { id: "t", status: { state: "TASK_STATE_WORKING" } } })).toEqual({ views: [], omitted: 0 })
    expect(answerFiles({ nothing: "here" })).toBeUndefined()
  })
})

/** The keys a recorded file shares with an answer's parts (answerParts.ts), beside what it says of the file. */
const AS_PART = { kind: "file", text: null, data: null, artifact_id: null } as const

const filesState = freshStateDir()
const filesDir = Path.join(filesState, NotificationLog.NOTIFICATION_FILES_DIR)

layer(serverLayer(filesState), { excludeTestServices: true })("receiver with file parts", (it) => {
  it.effect("records a v1.0 file part and saves its bytes under their sha256, once", () =>
    Effect.gen(function*() {
      const body = v1Artifact([{ text: "here" }, { raw: base64(BINARY), filename: "noise.bin", mediaType: "application/octet-stream" }])
      const record = yield* pushed(body)
      const path = Path.join(filesDir, sha256(BINARY))
      expect(record.files).toEqual([{
        ...AS_PART,
        artifact_id: "a1",
        name: "noise.bin",
        media_type: "application/octet-stream",
        size: BINARY.length,
        sha256: sha256(BINARY),
        path,
        url: null,
        note: null
      }])
      expect(record.body).toEqual(body)
      expect(new Uint8Array(Fs.readFileSync(path))).toEqual(BINARY)
      expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
      // The same content again: the same file, not a second one.
      const again = yield* pushed(body)
      expect(again.files?.[0]?.path).toBe(path)
      expect(tree(filesDir)).toEqual([sha256(BINARY)])
    }))

  it.effect("records v0.3 file parts of a task (status message, artifacts, the agent's messages) and a file by URL", () =>
    Effect.gen(function*() {
      const record = yield* pushed({
        kind: "task",
        id: "t-v03",
        contextId: "c-v03",
        status: {
          state: "completed",
          message: {
            kind: "message",
            messageId: "m1",
            role: "agent",
            parts: [{ kind: "file", file: { bytes: base64(PNG), name: "dot.png", mimeType: "image/png" } }]
          }
        },
        artifacts: [{
          artifactId: "a",
          parts: [{ kind: "file", file: { uri: "https://files.example/report.pdf", name: "report.pdf", mimeType: "application/pdf" } }]
        }],
        history: [
          // The user's own upload is not part of the answer.
          { kind: "message", messageId: "u1", role: "user", parts: [{ kind: "file", file: { bytes: base64(BINARY), name: "mine.bin" } }] },
          {
            kind: "message",
            messageId: "m0",
            role: "agent",
            parts: [{ kind: "data", data: { step: 1 } }, { kind: "file", file: { bytes: "aGk=", name: "hi.txt", mimeType: "text/plain" } }]
          }
        ]
      })
      expect(record).toMatchObject({ protocol: "0.3", kind: "task", state: "completed" })
      expect(record.files).toEqual([
        {
          ...AS_PART,
          name: "dot.png",
          media_type: "image/png",
          size: PNG.length,
          sha256: sha256(PNG),
          path: Path.join(filesDir, sha256(PNG)),
          url: null,
          note: null
        },
        {
          ...AS_PART,
          artifact_id: "a",
          name: "report.pdf",
          media_type: "application/pdf",
          size: null,
          sha256: null,
          path: null,
          url: "https://files.example/report.pdf",
          note: null
        },
        {
          ...AS_PART,
          name: "hi.txt",
          media_type: "text/plain",
          size: 2,
          sha256: sha256(Buffer.from("hi")),
          path: Path.join(filesDir, sha256(Buffer.from("hi"))),
          url: null,
          note: null
        }
      ])
      expect(Fs.readFileSync(Path.join(filesDir, sha256(PNG)))).toEqual(PNG)
    }))

  it.effect("records hostile parts safely, with a note; nothing is written outside the folder, names never reach a path", () =>
    Effect.gen(function*() {
      const before = tree(filesState)
      const record = yield* pushed(v1Artifact([
        { raw: "aGVsbG8=", filename: "../../x", mediaType: "text/plain" },
        { raw: "%%% not base64 %%%", filename: ".bashrc", mediaType: "text/plain" },
        { raw: "aGk=", url: "https://evil.example/x", filename: "both" },
        { raw: base64(Buffer.from("red")), filename: `\u001b[31mred\u0000${"n".repeat(300)}` }
      ]))
      const files = record.files ?? []
      expect(files.map((file) => file.note)).toEqual([
        null,
        "not saved: raw is not base64",
        "not saved: both bytes (raw) and a URL (url), where exactly one belongs",
        null
      ])
      expect(files[0]).toMatchObject({ name: "../../x", size: 5, path: Path.join(filesDir, sha256(Buffer.from("hello"))) })
      expect(files[2]).toMatchObject({ size: null, sha256: null, path: null, url: "https://evil.example/x" })
      expect(files[3]?.name?.length).toBe(256)
      // Only content addresses were added, all inside the folder.
      const added = tree(filesState).filter((path) => !before.includes(path))
      expect(added.sort()).toEqual(
        [sha256(Buffer.from("hello")), sha256(Buffer.from("red"))].map((name) => Path.join(NotificationLog.NOTIFICATION_FILES_DIR, name))
          .sort()
      )
      expect(Fs.existsSync(Path.join(filesState, "..", "x"))).toBe(false)
    }))

  it.effect("10 000 tiny file parts: the first 100 recorded, the rest counted; the receiver keeps serving", () =>
    Effect.gen(function*() {
      const parts = Array.from({ length: 10_000 }, (_, i) => ({ raw: base64(Buffer.from(String(i % 7))), filename: `p${i}` }))
      const record = yield* pushed(v1Artifact(parts))
      expect(record.files?.length).toBe(MAX_FILES_RECORDED)
      expect(record.files_omitted).toBe(10_000 - MAX_FILES_RECORDED)
      expect(record.files?.every((file) => file.path !== null && file.note === null)).toBe(true)
      expect((yield* pushed({ statusUpdate: { taskId: "after", contextId: "c", status: { state: "TASK_STATE_WORKING" } } })).task_id).toBe(
        "after"
      )
    }))

  it.effect("URL-safe and unpadded base64 are saved as the bytes they stand for", () =>
    Effect.gen(function*() {
      const bytes = Uint8Array.from([0xfb, 0xff, 0xbf, 0x00])
      const record = yield* pushed(
        v1Artifact([{ raw: base64(bytes).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, ""), filename: "safe" }])
      )
      expect(record.files?.[0]).toMatchObject({ size: 4, sha256: sha256(bytes), note: null })
      expect(new Uint8Array(Fs.readFileSync(record.files?.[0]?.path ?? ""))).toEqual(bytes)
    }))

  it.effect("a text-only body is recorded as before: no files field", () =>
    Effect.gen(function*() {
      const record = yield* pushed(v1Artifact([{ text: "plain" }, { data: { a: 1 } }]))
      expect("files" in record).toBe(false)
      expect("files_omitted" in record).toBe(false)
    }))
})

const rotatingState = freshStateDir()

layer(serverLayer(rotatingState, { maxFileBytes: 8 * 1024 }), { excludeTestServices: true })("files within the log's bound", (it) => {
  it.effect("a file larger than the log keeps is recorded, not saved; rotation keeps the newest files within the bound", () =>
    Effect.gen(function*() {
      const big = new Uint8Array(9 * 1024).fill(7)
      const tooBig = yield* pushed(v1Artifact([{ raw: base64(big), filename: "big.bin" }]))
      expect(tooBig.files?.[0]).toMatchObject({ size: big.length, sha256: sha256(big), path: null })
      expect(tooBig.files?.[0]?.note).toMatch(
        /^not saved: Cannot save a pushed file in .*: its 9216 bytes are more than the 8192 the log keeps$/
      )
      const dir = Path.join(rotatingState, NotificationLog.NOTIFICATION_FILES_DIR)
      // 1 KiB files, each in a ~1.4 KiB line: the log rotates every few of them.
      for (let i = 0; i < 40; i++) {
        yield* pushed(v1Artifact([{ raw: base64(new Uint8Array(1024).fill(i)), filename: `f${i}` }]))
        const total = tree(dir).reduce((sum, name) => sum + Fs.statSync(Path.join(dir, name)).size, 0)
        // Pruned to the bound at each rotation, grown by at most what the current file holds since.
        expect(total).toBeLessThanOrEqual(2 * 8 * 1024)
      }
      // The newest file is always kept.
      expect(Fs.existsSync(Path.join(dir, sha256(new Uint8Array(1024).fill(39))))).toBe(true)
    }))
})

describe("file parts shown", () => {
  const record = {
    id: "n1",
    received_at: "2026-01-01T00:00:00.000Z",
    path: "/hook",
    token_present: false,
    kind: "artifact-update",
    protocol: "1.0",
    task_id: "t",
    context_id: null,
    state: null,
    text: null,
    files: [
      {
        ...AS_PART,
        name: "hello.txt",
        media_type: "text/plain",
        size: 31,
        sha256: "ab".repeat(32),
        path: "/s/notifications-files/abab",
        url: null,
        note: null
      },
      {
        ...AS_PART,
        name: "evil\u001b[2J\nname",
        media_type: null,
        size: null,
        sha256: null,
        path: null,
        url: null,
        note: "not saved: raw is not base64"
      },
      { ...AS_PART, name: null, media_type: "image/png", size: null, sha256: null, path: null, url: "https://x.example/a.png", note: null }
    ],
    files_omitted: 3,
    body: {}
  } satisfies NotificationRecord

  it("a record written before files had the keys of an answer's parts reads with them filled in", () => {
    const { kind: _kind, text: _text, data: _data, artifact_id: _artifact, ...older } = record.files![0]!
    const read = Schema.decodeUnknownSync(NotificationRecord)({ ...record, files: [older] })
    expect(read.files).toEqual([record.files![0]])
  })

  it("one line per file in the terminal, escaped", () => {
    const lines = formatNotification(record, makeStyle({ isTTY: false } as NodeJS.WriteStream)).split("\n")
    expect(lines.slice(2)).toEqual([
      "  file hello.txt (text/plain, 31 bytes) → /s/notifications-files/abab",
      "  file evil\\u001b[2J\\nname: not saved: raw is not base64",
      "  file (no name) (image/png) at https://x.example/a.png",
      "  … and 3 more file parts, not recorded"
    ])
  })
})

describe("get_push_notifications", () => {
  it("returns the files array, valid against its outputSchema, and one line per file", async () => {
    const stateDir = freshStateDir()
    const runtime = ManagedRuntime.make(appLayer(stateDir))
    try {
      const base = await runtime.runPromise(webhookBaseUrl)
      const response = await fetch(`${base}/hook`, {
        method: "POST",
        headers: { "content-type": "application/a2a+json" },
        body: JSON.stringify(v1Artifact([{ raw: base64(PNG), filename: "dot.png", mediaType: "image/png" }]))
      })
      expect(response.status).toBe(200)
      const client = await connectTools(contextFor(runtime))
      try {
        const result = await callTool(client, "get_push_notifications", { task_id: "t-files" })
        expect(result.isError ?? false).toBe(false)
        const content = result.structuredContent as { notifications: Array<{ files?: unknown }> }
        const path = Path.join(stateDir, NotificationLog.NOTIFICATION_FILES_DIR, sha256(PNG))
        expect(content.notifications[0]?.files).toEqual([
          {
            ...AS_PART,
            artifact_id: "a1",
            name: "dot.png",
            media_type: "image/png",
            size: PNG.length,
            sha256: sha256(PNG),
            path,
            url: null,
            note: null
          }
        ])
        expect(textOf(result)).toContain(`\n  file dot.png (image/png, ${PNG.length} bytes) → ${path}`)
        const plain = await toolOk(client, "get_push_notifications", { limit: 1 })
        expect(plain["count"]).toBe(1)
      } finally {
        await client.close()
      }
    } finally {
      await runtime.dispose()
    }
  })
})
