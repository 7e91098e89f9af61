// Nothing stored can break a read (issue 18): random hostile tasks go into the TaskStore, and
// random hostile-but-accepted messages go through the agent server's doors; every task then
// lists, page by page, over JSON-RPC and REST (and reads back in 0.3), and every page
// serialises. Hostile means: control characters, lone surrogates, bidi overrides and markup in
// every string, keys such as __proto__ and toJSON, extreme numbers, nesting up to each limit.
import { describe, expect, it } from "@effect/vitest"
import { Effect, FastCheck as fc, Option } from "effect"
import { randomUUID } from "node:crypto"
import { afterAll, beforeAll } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import { exceedsJsonDepth, MAX_JSON_DEPTH, MAX_STORED_JSON_DEPTH } from "../../src/domain/limits.js"
import * as TaskStorage from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { nested } from "../fuzz/corpus.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { type Json, post, request, rpc, V1_HEADERS } from "./wire.js"

// ---------------------------------------------------------------------------
// Hostile JSON, as text (so that "__proto__" stays a plain key, as JSON.parse keeps it)

const NASTY = ["\u0000", "\uD800", "\uDFFF", "\u202E", "\r\n", "\u001b[2J\u001b[31m", "</script><b>", "\"\\", "\u2028", "\uFEFF"]
const hostileString = fc.oneof(
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(...NASTY),
  fc.array(fc.constantFrom(...NASTY, "a", " "), { maxLength: 12 }).map((parts) => parts.join(""))
)
const hostileKey = fc.oneof(hostileString, fc.constantFrom("__proto__", "constructor", "toJSON", "prototype", "", "hasOwnProperty"))
const hostileNumber = fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.constantFrom(1e308, -1e308, 5e-324, -0, 2 ** 53 + 1))

/** JSON text of a value nesting at most `depth` levels. */
const hostileJson = (depth: number): fc.Arbitrary<string> => {
  const scalar = fc.oneof(
    hostileString.map((s) => JSON.stringify(s)),
    hostileNumber.map((n) => JSON.stringify(n)),
    fc.constantFrom("true", "false", "null")
  )
  if (depth <= 0) return scalar
  const inner = hostileJson(depth - 1)
  return fc.oneof(
    { weight: 2, arbitrary: scalar },
    { weight: 1, arbitrary: fc.array(inner, { maxLength: 4 }).map((items) => `[${items.join(",")}]`) },
    { weight: 2, arbitrary: hostileObject(inner) }
  )
}

const hostileObject = (values: fc.Arbitrary<string>) =>
  fc.array(fc.tuple(hostileKey, values), { maxLength: 5 }).map((entries) =>
    `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`
  )

/** Metadata: hostile members, and now and then one nested right up to what the deepest door takes. */
const hostileMetadata = fc.tuple(hostileObject(hostileJson(3)), fc.option(fc.integer({ min: 1, max: MAX_JSON_DEPTH - 6 })))
  .map(([members, depth]) =>
    depth === null ? members : `{"deep":${nested("mixed", depth).json}${members === "{}" ? "" : `,${members.slice(1, -1)}`}}`
  )

// ---------------------------------------------------------------------------
// The TaskStore alone

/** Object nesting as text, past what the store keeps (only a bug could send this). */
const storeDepths = fc.option(fc.constantFrom(MAX_STORED_JSON_DEPTH + 1, 3_000, 20_000), { freq: 3 })

const hostileTask = fc.record({
  text: hostileString,
  contextId: hostileString,
  metadata: hostileMetadata,
  deep: storeDepths,
  state: fc.constantFrom("TASK_STATE_COMPLETED", "TASK_STATE_WORKING", "TASK_STATE_FAILED"),
  second: fc.integer({ min: 0, max: 59 })
}).map(({ text, contextId, metadata, deep, state, second }): V1.Task => {
  const parsed = JSON.parse(metadata) as Record<string, unknown>
  const extra = deep === null ? {} : { tooDeep: JSON.parse(nested("objects", deep).json) }
  return {
    id: randomUUID(),
    contextId,
    status: { state, timestamp: `2026-01-01T00:00:${String(second).padStart(2, "0")}.000Z` },
    history: [{ messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], metadata: { ...parsed, ...extra } }],
    metadata: parsed
  } as V1.Task
})

describe("TaskStore with random hostile tasks", () => {
  it.effect("lists every task exactly once, page by page; every page serialises and stays within its byte budget", () =>
    Effect.promise(() =>
      fc.assert(
        fc.asyncProperty(fc.array(hostileTask, { minLength: 1, maxLength: 25 }), fc.integer({ min: 1, max: 30 }), (tasks, pageSize) =>
          Effect.runPromise(Effect.scoped(Effect.gen(function*() {
            const maxPageBytes = 4_000
            const store = yield* TaskStore.make({ maxPageBytes })
            for (const task of tasks) {
              yield* store.create(task)
            }
            const seen: Array<string> = []
            let pageToken: string | undefined = undefined
            for (let pages = 0; pages <= tasks.length; pages++) {
              const page: TaskStorage.TaskPage = yield* store.storage.list({ pageSize, pageToken })
              const json = JSON.stringify(page.tasks)
              if (page.tasks.length > 1) {
                expect(Buffer.byteLength(json)).toBeLessThanOrEqual(maxPageBytes + 2)
              }
              for (const task of page.tasks) {
                expect(exceedsJsonDepth(task, MAX_STORED_JSON_DEPTH)).toBe(false)
              }
              seen.push(...page.tasks.map((task) =>
                task.id
              ))
              if (page.nextPageToken === undefined) break
              pageToken = page.nextPageToken
            }
            expect(seen.sort()).toEqual(tasks.map((task) => task.id).sort())
            // What was cut was only what nested too deep.
            const asStored = new Map<string, string>()
            for (const task of tasks) {
              const stored = Option.getOrThrow(yield* store.storage.get(task.id)).task
              expect(stored.history?.[0]?.parts).toEqual(task.history?.[0]?.parts)
              asStored.set(task.id, JSON.stringify(stored))
            }
            // Once newer tasks finished, the finished ones are kept packed: each reads back as the same JSON.
            for (let i = 0; i < 2 * TaskStorage.RECENTLY_FINISHED; i++) {
              yield* store.create({ id: `filler-${i}`, contextId: "filler", status: { state: "TASK_STATE_COMPLETED" } })
            }
            for (const task of tasks) {
              expect(JSON.stringify(Option.getOrThrow(yield* store.storage.get(task.id)).task)).toBe(asStored.get(task.id))
            }
          })))),
        { numRuns: 40 }
      )
    ))
})

// ---------------------------------------------------------------------------
// Through the doors

type Door = "JSON-RPC 1.0" | "REST 1.0" | "REST 0.3"

const hostileSend = fc.record({
  door: fc.constantFrom<Door>("JSON-RPC 1.0", "REST 1.0", "REST 0.3"),
  text: hostileString,
  contextId: fc.option(hostileString.filter((id) => id.trim() !== "")),
  metadata: hostileMetadata,
  data: fc.option(hostileJson(4)),
  extensions: fc.array(hostileString, { maxLength: 3 })
})

/** A data part for its door: 1.0 takes any JSON value; 0.3's REST door a Struct, wrapped as DataPart's `data`. */
const dataPartOf = (door: Door, data: string) => {
  if (door !== "REST 0.3") return `{"data":${data}}`
  const struct = data.startsWith("{") ? data : `{"value":${data}}`
  return `{"data":{"data":${struct}}}`
}

/** The send as JSON text for its door, with the v0.3 REST names where they differ. */
const bodyOf = (send: typeof hostileSend extends fc.Arbitrary<infer A> ? A : never) => {
  const parts = [`{"text":${JSON.stringify(send.text)}}`, ...(send.data === null ? [] : [dataPartOf(send.door, send.data)])]
  const message = [
    `"messageId":${JSON.stringify(randomUUID())}`,
    `"role":"ROLE_USER"`,
    `"${send.door === "REST 0.3" ? "content" : "parts"}":[${parts.join(",")}]`,
    `"metadata":${send.metadata}`,
    `"extensions":${JSON.stringify(send.extensions)}`,
    ...(send.contextId === null ? [] : [`"contextId":${JSON.stringify(send.contextId)}`])
  ].join(",")
  const params = `{"message":{${message}},"configuration":{"blocking":true}}`
  return send.door === "JSON-RPC 1.0" ? `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":${params}}` : params
}

let agent: AgentHandle

beforeAll(async () => {
  agent = await startAgent()
})

afterAll(async () => {
  await agent?.close()
})

const PATHS: Readonly<Record<Door, readonly [string, Record<string, string>]>> = {
  "JSON-RPC 1.0": ["/", V1_HEADERS],
  "REST 1.0": ["/message:send", V1_HEADERS],
  "REST 0.3": ["/v1/message:send", {}]
}

/** Sends one; the task's id when accepted. A refusal must be a clean invalid-params answer, never a 500. */
const sendThrough = async (send: Parameters<typeof bodyOf>[0]): Promise<string | undefined> => {
  const [path, headers] = PATHS[send.door]
  const answer = await post(`${agent.baseUrl}${path}`, bodyOf(send), headers)
  const task = (answer.json["result"] ?? answer.json)["task"] as Json | undefined
  if (task !== undefined) return task["id"] as string
  expect(answer.status).toBeLessThan(500)
  expect(answer.json["error"]?.["code"] ?? answer.json["code"]).toBeDefined()
  return undefined
}

/** Every task id over a listing route, page by page. */
const listAll = async (page: (token: string) => Promise<Json>) => {
  const ids: Array<string> = []
  let token = ""
  for (let pages = 0; pages < 1000; pages++) {
    const listed = await page(token)
    ids.push(...(listed["tasks"] as Json[]).map((task) => task["id"] as string))
    token = listed["nextPageToken"] as string
    if (token === "") return ids
  }
  throw new Error("the pages never ended")
}

describe("the agent server with random hostile-but-accepted messages", () => {
  it("lists and reads back every accepted task over JSON-RPC and REST", async () => {
    const accepted: Array<string> = []
    let sent = 0
    await fc.assert(
      fc.asyncProperty(
        fc.array(hostileSend, { minLength: 1, maxLength: 4 }),
        fc.integer({ min: 20, max: 100 }),
        async (sends, pageSize) => {
          for (const send of sends) {
            sent++
            const id = await sendThrough(send)
            if (id !== undefined) accepted.push(id)
          }
          const viaRpc = await listAll(async (pageToken) => {
            const answer = await rpc(agent.baseUrl, "ListTasks", {
              pageSize,
              includeArtifacts: true,
              ...(pageToken === "" ? {} : { pageToken })
            })
            expect(answer.status).toBe(200)
            return answer.json["result"] as Json
          })
          const viaRest = await listAll(async (pageToken) => {
            const answer = await request(`${agent.baseUrl}/tasks?pageSize=${pageSize}&includeArtifacts=true&pageToken=${pageToken}`, {
              headers: V1_HEADERS
            })
            expect(answer.status).toBe(200)
            return answer.json
          })
          expect(new Set(viaRpc)).toEqual(new Set(accepted))
          expect(new Set(viaRest)).toEqual(new Set(accepted))
          const last = accepted[accepted.length - 1]
          if (last !== undefined) {
            expect((await rpc(agent.baseUrl, "tasks/get", { id: last }, {})).json["result"]["id"]).toBe(last)
            expect((await request(`${agent.baseUrl}/v1/tasks/${last}`)).status).toBe(200)
          }
        }
      ),
      { numRuns: 30 }
    )
    // Most of what was sent was taken (only a NUL in a context id or a blank text is refused):
    // the generator is hostile, not malformed.
    expect(accepted.length).toBeGreaterThan(sent * 0.6)
  })
})
