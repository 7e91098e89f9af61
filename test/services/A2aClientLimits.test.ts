/**
 * The A2aClient against hostile answers (the client-response part of the fuzz corpus): cards,
 * JSON-RPC and REST bodies and SSE events over the size limit, with and without Content-Length,
 * are refused with ResponseTooLarge while reading stops near the limit; JSON nested far deeper than
 * any A2A object is a typed error, never a stack overflow.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import type http from "node:http"
import { afterAll } from "vitest"
import type { Binding } from "../../src/a2a/dialects.js"
import { MAX_AGENT_JSON_DEPTH, MAX_RESPONSE_BYTES } from "../../src/domain/limits.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { nestedObject, type Progress, streamHugeJson } from "../peers/hugeAnswers.js"
import { collect, hintOf, reply, sendRequest, stubPool, type StubRoute, v1Card, waitUntil, withClient } from "./a2aClientHarness.js"

const stubs = stubPool()
afterAll(() => stubs.closeAll())

const MiB = 1024 * 1024
/** What may sit in socket buffers between the stub and the client when the client hangs up. */
const IN_FLIGHT = 16 * MiB

const newProgress = (): Progress => ({ written: 0, cutShort: false })

/** A route streaming `size` bytes of filler between `head` and `tail`. */
const huge = (
  progress: Progress,
  options: { head: string; tail: string; size: number; declareLength?: boolean; status?: number; contentType?: string }
): StubRoute =>
(_request, res) => {
  streamHugeJson(res, { declareLength: false, ...options }, progress)
  return undefined
}

const rawJson = (text: string): StubRoute => (_request, res: http.ServerResponse) => {
  res.writeHead(200, { "content-type": "application/json", "content-length": String(Buffer.byteLength(text)) }).end(text)
  return undefined
}

const CARD_PATH = "/.well-known/agent-card.json"

/** An agent with a normal card whose one interface (binding at /api) answers with `route`. */
const agentAnswering = (binding: Binding, path: string, route: StubRoute) =>
  stubs.start((base) => ({
    [`GET ${CARD_PATH}`]: reply(v1Card([{ url: `${base}/api`, binding, version: "1.0" }])),
    [path]: route
  }))

/** Where each binding's send and getTask go on the stub. */
const ROUTES: ReadonlyArray<readonly [Binding, string, (a2a: A2aClient["Type"], target: Target) => Effect.Effect<unknown, unknown>]> = [
  ["JSONRPC", "POST /api", (a2a, target) => a2a.send(target, sendRequest("hi"))],
  ["HTTP+JSON", "GET /api/tasks/t-1", (a2a, target) => a2a.getTask(target, { id: "t-1" })]
]

describe("answers over the size limit", () => {
  it.live("a 1 GB card without Content-Length: ResponseTooLarge naming the card and the limit; reading stops near the limit", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const progress = newProgress()
      const server = yield* stubs.start({ [`GET ${CARD_PATH}`]: huge(progress, { head: "{\"name\":\"", tail: "\"}", size: 1024 * MiB }) })
      const error = yield* Effect.flip(a2a.discover({ agentUrl: agentUrlOf(server.baseUrl) }))
      expect(error).toMatchObject({
        _tag: "ResponseTooLarge",
        code: "response_too_large",
        url: `${server.baseUrl}${CARD_PATH}`,
        limit: MAX_RESPONSE_BYTES
      })
      expect(error.message).toContain(`${server.baseUrl}${CARD_PATH}`)
      expect(error.message).toContain(`${MAX_RESPONSE_BYTES}-byte limit`)
      expect(hintOf(error)).toContain("--max-response-bytes")
      yield* waitUntil("the client to hang up", () => progress.cutShort, 5000)
      expect(progress.written).toBeLessThan(MAX_RESPONSE_BYTES + IN_FLIGHT)
    })))

  it.live("a card announcing 1 GB in Content-Length is refused on its headers", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const progress = newProgress()
      const size = 1024 * MiB
      const [head, tail] = ["{\"name\":\"", "\"}"]
      const server = yield* stubs.start({
        [`GET ${CARD_PATH}`]: huge(progress, { head, tail, size, declareLength: true })
      })
      const error = yield* Effect.flip(a2a.fetchCardJson({ agentUrl: agentUrlOf(server.baseUrl) }))
      const declared = head.length + size + tail.length
      expect(error).toMatchObject({ _tag: "ResponseTooLarge", declared })
      expect(error.message).toContain(`(${declared} bytes)`)
      yield* waitUntil("the client to hang up", () => progress.cutShort, 5000)
      expect(progress.written).toBeLessThan(IN_FLIGHT)
    })))

  it.live.each(ROUTES)(
    "a %s answer over --max-response-bytes is ResponseTooLarge, not a decode error",
    ([binding, path, call]) =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const progress = newProgress()
        const server = yield* agentAnswering(binding, path, huge(progress, { head: "{\"id\":\"", tail: "\"}", size: 20 * MiB }))
        const error = yield* Effect.flip(call(a2a, { agentUrl: agentUrlOf(server.baseUrl), maxResponseBytes: MiB }))
        expect(error).toMatchObject({ _tag: "ResponseTooLarge", limit: MiB })
        yield* waitUntil("the client to hang up", () => progress.cutShort, 5000)
        expect(progress.written).toBeLessThan(MiB + IN_FLIGHT)
      }))
  )

  it.live("an error answer over the limit (HTTP 500) is ResponseTooLarge as well", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const progress = newProgress()
      const route = huge(progress, { head: "{\"error\":{\"message\":\"", tail: "\"}}", size: 5 * MiB, status: 500 })
      const server = yield* agentAnswering("JSONRPC", "POST /api", route)
      const error = yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(server.baseUrl), maxResponseBytes: MiB }, sendRequest("hi")))
      expect(error).toMatchObject({ _tag: "ResponseTooLarge" })
    })))

  it.live("the limit is inclusive: a card of exactly the limit is read, one byte less of limit refuses it", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const text = JSON.stringify(v1Card([{ url: "http://127.0.0.1:9/api", binding: "JSONRPC", version: "1.0" }]))
      const server = yield* stubs.start({ [`GET ${CARD_PATH}`]: rawJson(text) })
      const size = Buffer.byteLength(text)
      const found = yield* a2a.fetchCardJson({ agentUrl: agentUrlOf(server.baseUrl), maxResponseBytes: size })
      expect(found.json).toEqual(JSON.parse(text))
      const error = yield* Effect.flip(a2a.fetchCardJson({ agentUrl: agentUrlOf(server.baseUrl), maxResponseBytes: size - 1 }))
      expect(error).toMatchObject({ _tag: "ResponseTooLarge", limit: size - 1, declared: size })
    })))

  it.live("an SSE event that never ends fails the stream with ResponseTooLarge", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const progress = newProgress()
      const route = huge(progress, { head: "data: {\"x\":\"", tail: "\"}\n\n", size: 20 * MiB, contentType: "text/event-stream" })
      const server = yield* agentAnswering("JSONRPC", "POST /api", route)
      const error = yield* Effect.flip(
        collect(a2a.stream({ agentUrl: agentUrlOf(server.baseUrl), maxResponseBytes: MiB }, sendRequest("hi")))
      )
      expect(error).toMatchObject({ _tag: "ResponseTooLarge", limit: MiB })
      yield* waitUntil("the client to hang up", () => progress.cutShort, 5000)
    })))
})

describe("answers nested too deep", () => {
  it.live("a card nested 100 000 levels is InvalidCard, not a stack overflow", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const card = JSON.stringify(v1Card([{ url: "http://127.0.0.1:9/api", binding: "JSONRPC", version: "1.0" }]))
      const deep = card.replace(/^\{/, `{"extra":${nestedObject(100_000)},`)
      const server = yield* stubs.start({ [`GET ${CARD_PATH}`]: rawJson(deep) })
      const error = yield* Effect.flip(a2a.discover({ agentUrl: agentUrlOf(server.baseUrl) }))
      expect(error).toMatchObject({ _tag: "InvalidCard" })
      expect(error.message).toContain(`deeper than ${MAX_AGENT_JSON_DEPTH} levels`)
    })))

  it.live.each(ROUTES)(
    "a %s answer nested 100 000 levels is InvalidResponse",
    ([binding, path, call]) =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const task = (metadata: string) => `{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},"metadata":${metadata}}`
        const body = (metadata: string) =>
          binding === "JSONRPC" ? `{"jsonrpc":"2.0","id":"ignored","result":{"task":${task(metadata)}}}` : task(metadata)
        const server = yield* agentAnswering(binding, path, (request, res) => {
          // JSON-RPC answers must echo the request id.
          const id = (request.body as { id?: string } | undefined)?.id ?? ""
          return rawJson(body(nestedObject(100_000)).replace("\"ignored\"", JSON.stringify(id)))(request, res)
        })
        const error = yield* Effect.flip(call(a2a, { agentUrl: agentUrlOf(server.baseUrl) }))
        expect(error).toMatchObject({ _tag: "InvalidResponse" })
        expect((error as Error).message).toContain(`deeper than ${MAX_AGENT_JSON_DEPTH} levels`)
      }))
  )

  it.live("an answer whose metadata nests 100 levels is read", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* agentAnswering(
        "HTTP+JSON",
        "GET /api/tasks/t-1",
        rawJson(
          `{"id":"t-1","contextId":"c-1","status":{"state":"TASK_STATE_COMPLETED"},"metadata":${nestedObject(100)}}`
        )
      )
      const task = yield* a2a.getTask({ agentUrl: agentUrlOf(server.baseUrl) }, { id: "t-1" })
      expect(task.id).toBe("t-1")
      expect(JSON.stringify(task.metadata).length).toBeGreaterThan(500)
    })))
})
