/**
 * How the A2aClient reaches an agent: card discovery and caching, interface selection and tenants,
 * credentials (same origin only unless allowed), response and stream-idle timeouts, interruption,
 * typed errors with codes and hints, and SSE parsing of awkward but valid streams.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Fiber, Logger, LogLevel, Stream, TestClock } from "effect"
import { afterAll, beforeAll } from "vitest"
import { resultText } from "../../src/a2a/text.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { echoText } from "../peers/behaviours.js"
import { type LegacyAgentHandle, startLegacyAgent } from "../peers/legacyCardStub.js"
import { AGENT_CARD_PATH, JSONRPC_PATH, REST_PATH, type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import {
  closedPortUrl,
  collect,
  describeRequest,
  headerOf,
  hintOf,
  recording,
  reply,
  type RpcScript,
  scriptedRpc,
  sendRequest,
  stubPool,
  type StubRequest,
  taskOf,
  v1Card,
  waitUntil,
  withCapturedLogs,
  withClient
} from "./a2aClientHarness.js"

let peer: SdkAgentHandle
let restFirst: SdkAgentHandle
let secured: SdkAgentHandle
let noPush: SdkAgentHandle
let legacy: LegacyAgentHandle
const stubs = stubPool()

beforeAll(async () => {
  ;[peer, restFirst, secured, noPush, legacy] = await Promise.all([
    startSdkAgent(),
    startSdkAgent({ bindings: ["HTTP+JSON", "JSONRPC"] }),
    startSdkAgent({ requireBearer: "s3cret" }),
    startSdkAgent({ capabilities: { pushNotifications: false } }),
    startLegacyAgent()
  ])
})

afterAll(async () => {
  await Promise.all([peer, restFirst, secured, noPush, legacy].map((server) => server?.close()))
  await stubs.closeAll()
})

const stub = stubs.start

describe("discovery", () => {
  it.live("reads /.well-known/agent-card.json at the host root, asking for A2A-Version 1.0", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result, sent } = yield* recording(peer.requests, a2a.discover({ agentUrl: agentUrlOf(peer.baseUrl) }))
      expect(sent.map(describeRequest)).toEqual([`GET ${AGENT_CARD_PATH}`])
      expect(headerOf(sent[0]!, "a2a-version")).toBe("1.0")
      expect(result).toMatchObject({ generation: "1.0", cardUrl: peer.cardUrl })
      expect(result.card.name).toBe("SDK Test Agent")
    })))

  it.live("falls back to /.well-known/agent.json", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const { result, sent } = yield* recording(legacy.requests, a2a.discover({ agentUrl: agentUrlOf(legacy.baseUrl) }))
      expect(sent.map((r) => `${describeRequest(r)} ${r.status}`)).toEqual([
        "GET /.well-known/agent-card.json 404",
        "GET /.well-known/agent.json 200"
      ])
      expect(result).toMatchObject({ generation: "0.3", declaredProtocolVersion: "0.2.5", cardUrl: legacy.cardUrl })
    })))

  it.live("uses an explicit card URL, given apart or as the agent URL", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub((base) => ({
        "GET /cards/agent.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]))
      }))
      const cardUrl = `${server.baseUrl}/cards/agent.json`
      const apart = yield* recording(server.requests, a2a.discover({ agentUrl: agentUrlOf(server.baseUrl), cardUrl }))
      expect(apart.sent.map(describeRequest)).toEqual(["GET /cards/agent.json"])
      expect(apart.result.cardUrl).toBe(cardUrl)
      const direct = yield* A2aClient.pipe(Effect.flatMap((fresh) => fresh.discover({ agentUrl: agentUrlOf(cardUrl) })), withClient)
      expect(direct.card.name).toBe("Stub Agent")
    })))

  it.live("hands out the card JSON undecoded for validation, even when it is not a usable card", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub({ "GET /.well-known/agent.json": reply({ hello: "world" }) })
      expect(yield* a2a.fetchCardJson({ agentUrl: agentUrlOf(server.baseUrl) })).toEqual({
        json: { hello: "world" },
        cardUrl: `${server.baseUrl}/.well-known/agent.json`,
        // What the card's host reached when it was fetched: 127.0.0.1 is loopback.
        reach: ["loopback"]
      })
    })))

  it.live("finds a card served under the agent's own path", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub((base) => ({
        "GET /agents/a/.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]))
      }))
      const found = yield* a2a.discover({ agentUrl: agentUrlOf(`${server.baseUrl}/agents/a`) })
      expect(found.cardUrl).toBe(`${server.baseUrl}/agents/a/.well-known/agent-card.json`)
    })))

  // TestClock: the SDK's card says max-age=3600, so time is moved instead of waited for.
  it.effect("honours Cache-Control within a process and revalidates with If-None-Match after expiry", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(peer.baseUrl) }
      const fresh = yield* recording(peer.requests, Effect.zipRight(a2a.discover(target), a2a.discover(target)))
      expect(fresh.sent).toHaveLength(1)

      yield* TestClock.adjust("61 minutes")
      const stale = yield* recording(peer.requests, a2a.discover(target))
      expect(stale.sent.map(describeRequest)).toEqual([`GET ${AGENT_CARD_PATH}`])
      expect(headerOf(stale.sent[0]!, "if-none-match")).toMatch(/^W\/".+"$/)
      yield* waitUntil("the 304 to be recorded", () => stale.sent[0]!.status !== undefined)
      expect(stale.sent[0]!.status).toBe(304)
      expect(stale.result.card.name).toBe("SDK Test Agent")

      const again = yield* recording(peer.requests, a2a.discover(target))
      expect(again.sent).toHaveLength(0)
    })))
})

describe("interface selection", () => {
  it.live("takes the card's first interface, and the pinned binding when there is one", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      expect(yield* a2a.endpoint({ agentUrl: agentUrlOf(peer.baseUrl) })).toMatchObject({
        binding: "JSONRPC",
        url: peer.jsonRpcUrl,
        version: "1.0"
      })
      expect(yield* a2a.endpoint({ agentUrl: agentUrlOf(restFirst.baseUrl) })).toMatchObject({
        binding: "HTTP+JSON",
        url: restFirst.restUrl
      })
      const pinned = { agentUrl: agentUrlOf(restFirst.baseUrl), binding: "JSONRPC" } as const
      expect(yield* a2a.endpoint(pinned)).toMatchObject({ binding: "JSONRPC", url: restFirst.jsonRpcUrl })

      const { sent } = yield* recording(restFirst.requests, a2a.send(pinned, sendRequest("pinned")))
      expect(sent.map(describeRequest)).toEqual([`POST ${JSONRPC_PATH} SendMessage`])
    })))

  it.live("sends A2A-Version on every request it makes", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(restFirst.baseUrl) }
      const { sent } = yield* recording(
        restFirst.requests,
        Effect.gen(function*() {
          const task = taskOf(yield* a2a.send(target, sendRequest("versioned")))
          yield* a2a.getTask(target, { id: task.id })
          yield* a2a.listTasks(target, { pageSize: 1 })
          yield* collect(a2a.stream(target, sendRequest("streamed")))
        })
      )
      expect(sent.length).toBeGreaterThanOrEqual(5)
      expect(sent.map((r) => headerOf(r, "a2a-version"))).toEqual(sent.map(() => "1.0"))
    })))

  it.live("copies the interface's tenant into every request", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const card = v1Card([
        { url: peer.jsonRpcUrl, binding: "JSONRPC", version: "1.0", tenant: "acme" },
        { url: peer.restUrl, binding: "HTTP+JSON", version: "1.0", tenant: "acme" }
      ])
      const server = yield* stub({ "GET /.well-known/agent-card.json": reply(card) })
      const viaRpc = yield* recording(
        peer.requests,
        a2a.send({ agentUrl: agentUrlOf(server.baseUrl), binding: "JSONRPC" }, sendRequest("t"))
      )
      expect((viaRpc.sent[0]!.body as { params: { tenant?: string } }).params.tenant).toBe("acme")
      const viaRest = yield* recording(
        peer.requests,
        a2a.send({ agentUrl: agentUrlOf(server.baseUrl), binding: "HTTP+JSON" }, sendRequest("t"))
      )
      expect(viaRest.sent.map(describeRequest)).toEqual([`POST ${REST_PATH}/acme/message:send`])
      expect(resultText(taskOf(viaRest.result))).toBe(echoText("t"))
    })))
})

describe("credentials", () => {
  it.live("without credentials, an agent requiring a bearer token gives AuthRequired with its challenge", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      // The SDK serves its security scheme in the ts-proto {$case, value} form; it still reads as ProtoJSON.
      const card = yield* a2a.discover({ agentUrl: agentUrlOf(secured.baseUrl) })
      expect(card.card.securitySchemes?.["bearer"]).toMatchObject({ httpAuthSecurityScheme: { scheme: "Bearer" } })
      const error = yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(secured.baseUrl) }, sendRequest("hi")))
      expect(error).toMatchObject({ _tag: "AuthRequired", code: "auth_required", status: 401, credentials: "none" })
      expect(error).toMatchObject({ challenge: "Bearer realm=\"a2a-test-peer\"" })
      expect(hintOf(error)).toContain(`relay auth set --url ${secured.baseUrl}`)
    })))

  it.live("a wrong token gives AuthRequired that says the credentials were rejected", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(secured.baseUrl), credentials: { kind: "bearer", token: "wrong" } }
      const error = yield* Effect.flip(a2a.send(target, sendRequest("hi")))
      expect(error).toMatchObject({ _tag: "AuthRequired", credentials: "saved" })
      expect(error.message).toContain("rejected the saved credentials")
    })))

  it.live("the right token works over both bindings and goes on every request to the agent's origin", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const credentials = { kind: "bearer", token: "s3cret" } as const
      const { result, sent } = yield* recording(
        secured.requests,
        Effect.forEach(
          ["JSONRPC", "HTTP+JSON"] as const,
          (binding) => a2a.send({ agentUrl: agentUrlOf(secured.baseUrl), credentials, binding }, sendRequest("let me in"))
        )
      )
      expect(result.map((r) => resultText(taskOf(r)))).toEqual([echoText("let me in"), echoText("let me in")])
      expect(sent.map((r) => headerOf(r, "authorization"))).toEqual(sent.map(() => "Bearer s3cret"))
    })))

  it.live("sends an API key in its header", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(peer.baseUrl), credentials: { kind: "api_key", key: "k-123", header: "X-API-Key" } }
      const { sent } = yield* recording(peer.requests, a2a.send(target, sendRequest("keyed")))
      expect(sent.map((r) => headerOf(r, "x-api-key"))).toEqual(sent.map(() => "k-123"))
      expect(sent.every((r) => headerOf(r, "authorization") === undefined)).toBe(true)
    })))

  describe("a card that routes to another origin", () => {
    // The card is served on the stub's port; its interfaces point at the SDK peer's port.
    const crossOriginCard = () =>
      stub({ "GET /.well-known/agent-card.json": reply(v1Card([{ url: peer.jsonRpcUrl, binding: "JSONRPC", version: "1.0" }])) })

    it.live("gets a warning and no credentials there", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const server = yield* crossOriginCard()
        const target: Target = { agentUrl: agentUrlOf(server.baseUrl), credentials: { kind: "bearer", token: "mine-only" } }
        const { result, sent } = yield* recording(peer.requests, withCapturedLogs(a2a.send(target, sendRequest("elsewhere"))))
        expect(resultText(taskOf(result.result))).toBe(echoText("elsewhere"))
        expect(sent.length).toBeGreaterThan(0)
        expect(sent.every((r) => headerOf(r, "authorization") === undefined)).toBe(true)
        // The addressed origin itself did get them.
        expect(headerOf(server.requests[0]!, "authorization")).toBe("Bearer mine-only")
        expect(result.logs.filter((line) => line.startsWith("WARN"))).toEqual([
          expect.stringContaining(`credentials are not sent there`)
        ])
      })))

    it.live("sends them when allowCrossOriginCredentials is set, without a warning", () =>
      withClient(Effect.gen(function*() {
        const a2a = yield* A2aClient
        const server = yield* crossOriginCard()
        const target: Target = {
          agentUrl: agentUrlOf(server.baseUrl),
          credentials: { kind: "bearer", token: "shared" },
          allowCrossOriginCredentials: true
        }
        const { result, sent } = yield* recording(peer.requests, withCapturedLogs(a2a.send(target, sendRequest("allowed"))))
        expect(sent.map((r) => headerOf(r, "authorization"))).toEqual(sent.map(() => "Bearer shared"))
        expect(result.logs.filter((line) => line.startsWith("WARN"))).toEqual([])
      })))
  })
})

describe("an agent that echoes the credentials it was sent", () => {
  const TOKEN = "echoed-bearer-0123456789abcdef"
  const KEY = "echoed-api-key-0123456789"
  const echoOf = (request: StubRequest) =>
    `you sent authorization=${request.headers["authorization"]} x-api-key=${request.headers["x-api-key"]}`
  // The card answers from the agent's origin; every operation echoes the request's credentials back, in each shape errors come in.
  const echoingAgent = () =>
    stub((baseUrl) => ({
      "GET /.well-known/agent-card.json": reply(v1Card([
        { url: `${baseUrl}/rpc`, binding: "JSONRPC", version: "1.0" },
        { url: `${baseUrl}/rest`, binding: "HTTP+JSON", version: "1.0" }
      ])),
      "POST /rpc": (request, res) => {
        const id = (request.body as { id?: unknown }).id
        const error = { code: -32603, message: echoOf(request) }
        if ((request.body as { method?: string }).method === "SendStreamingMessage") {
          res.writeHead(200, { "content-type": "text/event-stream" }).end(`data: ${JSON.stringify({ jsonrpc: "2.0", id, error })}\n\n`)
          return undefined
        }
        return { body: { jsonrpc: "2.0", id, error } }
      },
      "POST /rest/message:send": (request) => ({ status: 400, body: echoOf(request) }),
      "GET /broken/.well-known/agent-card.json": (request) => ({ status: 500, body: echoOf(request) })
    }))

  it.live("never shows them in an error: they are masked as relay auth show masks them", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* echoingAgent()
      const elsewhere = yield* stub({
        "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${server.baseUrl}/rpc`, binding: "JSONRPC", version: "1.0" }]))
      })
      const base = { agentUrl: agentUrlOf(server.baseUrl) }
      const bearer: Target = { ...base, credentials: { kind: "bearer", token: TOKEN } }
      const keyed: Target = { ...base, credentials: { kind: "api_key", key: KEY, header: "X-API-Key" } }
      const errors = [
        yield* Effect.flip(a2a.send(bearer, sendRequest("hi"))),
        yield* Effect.flip(a2a.send({ ...keyed, binding: "HTTP+JSON" }, sendRequest("hi"))),
        yield* Effect.flip(collect(a2a.stream(bearer, sendRequest("hi")))),
        yield* Effect.flip(a2a.discover({ ...keyed, cardUrl: `${server.baseUrl}/broken/.well-known/agent-card.json` })),
        // A card elsewhere routing to the echoing origin: the credentials saved for that origin go there, and come back masked.
        yield* Effect.flip(a2a.send({
          agentUrl: agentUrlOf(elsewhere.baseUrl),
          credentials: { kind: "bearer", token: "not-for-the-echoing-origin" },
          savedCredentialsOf: (origin) => Effect.succeed(origin === server.baseUrl ? { kind: "bearer", token: TOKEN } : undefined)
        }, sendRequest("hi")))
      ]
      expect(errors.map((error) => error._tag)).toEqual(["ProtocolError", "HttpError", "ProtocolError", "HttpError", "ProtocolError"])
      // The agent did get them, and did echo them: what relay shows of its answers holds them masked.
      expect(headerOf(server.requests[1]!, "authorization")).toBe(`Bearer ${TOKEN}`)
      for (const error of errors) {
        expect(error.message).not.toContain(TOKEN)
        expect(error.message).not.toContain(KEY)
        expect(JSON.stringify(error)).not.toMatch(/echoed-(bearer|api-key)-0123456789/)
      }
      expect(errors[0]!.message).toContain("authorization=Bearer …cdef")
      expect(errors[1]!.message).toContain("x-api-key=…6789")
      expect(errors[4]!.message).toContain("authorization=Bearer …cdef")
    })))

  it.live("never shows them in the debug log (--verbose) either, where an answer relay cannot read is quoted", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub((baseUrl) => ({
        "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${baseUrl}/rpc`, binding: "JSONRPC", version: "1.0" }])),
        "POST /rpc": (request) => ({ body: `not JSON-RPC: ${echoOf(request)}` }),
        "GET /bad/card.json": (request) => ({ body: `not a card: ${echoOf(request)}` })
      }))
      const target: Target = { agentUrl: agentUrlOf(server.baseUrl), credentials: { kind: "bearer", token: TOKEN } }
      const { logs } = yield* withCapturedLogs(
        Effect.all([
          Effect.flip(a2a.send(target, sendRequest("hi"))),
          Effect.flip(a2a.discover({ ...target, cardUrl: `${server.baseUrl}/bad/card.json` }))
        ]).pipe(Logger.withMinimumLogLevel(LogLevel.Debug))
      )
      const quoted = logs.filter((line) => line.includes("The answer from"))
      expect(quoted).toHaveLength(2)
      expect(quoted.every((line) => line.includes("authorization=Bearer …cdef"))).toBe(true)
      expect(logs.join("\n")).not.toContain(TOKEN)
    })))
})

describe("timeouts and interruption", () => {
  const slowSend = (extra: Partial<Target> = {}) =>
    Effect.flatMap(
      A2aClient,
      (a2a) => a2a.send({ agentUrl: agentUrlOf(peer.baseUrl), ...extra }, sendRequest("behaviour:slow-cancellable wait"))
    )

  /** The first POST the agent recorded after `before` requests: the slow send. */
  const postSince = (before: number) => () => peer.requests.slice(before).find((r) => r.method === "POST")

  it.live("the response timeout fails with RequestTimeout and drops the request", () =>
    withClient(Effect.gen(function*() {
      const before = peer.requests.length
      const started = Date.now()
      const error = yield* Effect.flip(slowSend({ timeout: "250 millis" }))
      expect(error).toMatchObject({ _tag: "RequestTimeout", code: "timeout" })
      expect(error.message).toContain("250ms")
      expect(hintOf(error)).toContain("--timeout")
      expect(Date.now() - started).toBeLessThan(1500)
      // The slow task runs for 3 s, so a finished exchange before then means the client hung up.
      yield* waitUntil("the agent to see the connection close", () => postSince(before)()?.status !== undefined, 1500)
    })))

  it.live("interrupting a fiber mid-request ends it promptly and closes the connection", () =>
    withClient(Effect.gen(function*() {
      const before = peer.requests.length
      const fiber = yield* Effect.fork(slowSend())
      yield* waitUntil("the send to reach the agent", () => postSince(before)() !== undefined)
      const started = Date.now()
      yield* Fiber.interrupt(fiber)
      expect(Date.now() - started).toBeLessThan(1000)
      yield* waitUntil("the agent to see the connection close", () => postSince(before)()?.status !== undefined, 1500)
    })))

  it.live("a stream silent for longer than streamIdleTimeout fails with RequestTimeout", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(peer.baseUrl), streamIdleTimeout: "300 millis" }
      const started = Date.now()
      const outcome = yield* collect(a2a.stream(target, sendRequest("behaviour:slow-cancellable quiet")).pipe(Stream.either))
      expect(outcome.slice(0, -1).map((event) => event._tag)).toEqual(["Right", "Right"])
      const last = outcome.at(-1)!
      expect(Either.isLeft(last) && last.left).toMatchObject({ _tag: "RequestTimeout" })
      expect(Either.isLeft(last) && last.left.message).toContain("without an event")
      expect(Date.now() - started).toBeLessThan(2000)
    })))
})

describe("typed errors", () => {
  it.live("a closed port → AgentUnreachable", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const agentUrl = yield* Effect.promise(closedPortUrl)
      const error = yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(agentUrl) }, sendRequest("anyone?")))
      expect(error).toMatchObject({ _tag: "AgentUnreachable", code: "agent_unreachable" })
      expect(error.message).toContain("ECONNREFUSED")
      expect(hintOf(error)).toContain("agent is running")
    })))

  it.live("no card at either well-known path → CardNotFound naming both", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub({})
      const error = yield* Effect.flip(a2a.discover({ agentUrl: agentUrlOf(server.baseUrl) }))
      expect(error).toMatchObject({
        _tag: "CardNotFound",
        code: "card_not_found",
        tried: [`${server.baseUrl}/.well-known/agent-card.json`, `${server.baseUrl}/.well-known/agent.json`]
      })
      expect(hintOf(error)).toContain("full URL of its card")
    })))

  it.live.each([
    ["not JSON", "<html>Welcome</html>", "not JSON"],
    ["JSON of the wrong shape", { hello: "world" }, "name"]
  ])("a card that is %s → InvalidCard", ([_, body, reason]) =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub({ "GET /.well-known/agent-card.json": reply(body) })
      const error = yield* Effect.flip(a2a.discover({ agentUrl: agentUrlOf(server.baseUrl) }))
      expect(error).toMatchObject({ _tag: "InvalidCard", code: "invalid_card" })
      expect(error.message).toContain(reason)
      expect(hintOf(error)).toContain("relay card validate")
    })))

  it.live("a server error on the card → HttpError", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* stub({ "GET /.well-known/agent-card.json": reply("overloaded", 503) })
      const error = yield* Effect.flip(a2a.discover({ agentUrl: agentUrlOf(server.baseUrl) }))
      expect(error).toMatchObject({ _tag: "HttpError", code: "http_error", status: 503, body: "overloaded" })
      expect(hintOf(error)).not.toBe("")
    })))

  it.live("push config calls on an agent without push → UnsupportedOperation, nothing sent", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target: Target = { agentUrl: agentUrlOf(noPush.baseUrl) }
      yield* a2a.discover(target)
      const { result, sent } = yield* recording(
        noPush.requests,
        Effect.all([
          Effect.flip(a2a.createPushConfig(target, { taskId: "t", url: "http://127.0.0.1:9/hook" })),
          Effect.flip(a2a.listPushConfigs(target, { taskId: "t" })),
          Effect.flip(a2a.getPushConfig(target, { taskId: "t", id: "c" })),
          Effect.flip(a2a.deletePushConfig(target, { taskId: "t", id: "c" }))
        ])
      )
      expect(result.map((error) => error._tag)).toEqual(Array(4).fill("UnsupportedOperation"))
      expect(result[0]!.message).toContain("push notifications")
      expect(hintOf(result[0])).toContain("relay card get")
      expect(sent).toEqual([])
    })))
})

describe("wire robustness (scripted agent)", () => {
  const task = { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } }

  /** SSE text in awkward but valid framing: CRLF, comments, retry, id and event lines, data split over lines. */
  const awkwardStream: RpcScript = (id, res) => {
    res.writeHead(200, { "content-type": "text/event-stream" })
    const envelope = JSON.stringify({ jsonrpc: "2.0", id, result: { task } })
    // Split between two JSON tokens: the data lines are joined with a newline.
    const cut = envelope.indexOf("\"id\"")
    const [head, tail] = [envelope.slice(0, cut), envelope.slice(cut)]
    res.write("retry: 10000\r\n: a comment\r\n\r\n")
    res.write(`id: 1\r\nevent: message\r\ndata: ${head}\r\ndata: ${tail}\r\n\r`)
    res.write("\n")
    res.end(`event: error\r\ndata: ${JSON.stringify({ jsonrpc: "2.0", id, error: { code: -32603, message: "boom" } })}\r\n\r\n`)
  }

  const scripted = (scripts: Readonly<Record<string, RpcScript>>) =>
    stub((base) => ({
      "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
      "POST /rpc": scriptedRpc(scripts)
    }))

  it.live("parses awkward SSE framing, ignores retry, and surfaces an error event as ProtocolError", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* scripted({ awkward: awkwardStream })
      const started = Date.now()
      const outcome = yield* collect(a2a.stream({ agentUrl: agentUrlOf(server.baseUrl) }, sendRequest("awkward")).pipe(Stream.either))
      expect(outcome[0]).toEqual(Either.right({ task: { ...task, status: { state: "TASK_STATE_WORKING" } } }))
      expect(outcome[1]).toMatchObject({ _tag: "Left", left: { _tag: "ProtocolError", a2aCode: -32603, detail: "boom" } })
      expect(Date.now() - started).toBeLessThan(2000)
    })))

  // The spec names both verbs for :subscribe; an agent that routes only GET answers POST with 405.
  it.live("resubscribes over HTTP+JSON with GET when POST :subscribe is not routed", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const snapshot = { ...task, status: { state: "TASK_STATE_COMPLETED" } }
      const server = yield* stub((base) => ({
        "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rest`, binding: "HTTP+JSON", version: "1.0" }])),
        "POST /rest/tasks/t-1:subscribe": reply({ error: "method not allowed" }, 405),
        "GET /rest/tasks/t-1:subscribe": (_, res) => {
          res.writeHead(200, { "content-type": "text/event-stream" }).end(`data: ${JSON.stringify({ task: snapshot })}\n\n`)
          return undefined
        }
      }))
      const { result, sent } = yield* recording(
        server.requests,
        collect(a2a.subscribe({ agentUrl: agentUrlOf(server.baseUrl) }, { id: "t-1" }))
      )
      expect(result).toEqual([{ task: snapshot }])
      expect(sent.slice(1).map((r) => `${describeRequest(r)} ${r.status}`)).toEqual([
        "POST /rest/tasks/t-1:subscribe 405",
        "GET /rest/tasks/t-1:subscribe 200"
      ])
    })))

  it.live("a stream answered with something other than text/event-stream → InvalidResponse", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* scripted({
        html: (_, res) => res.writeHead(200, { "content-type": "text/html" }).end("<html>not a stream</html>")
      })
      const error = yield* Effect.flip(collect(a2a.stream({ agentUrl: agentUrlOf(server.baseUrl) }, sendRequest("html"))))
      expect(error).toMatchObject({ _tag: "InvalidResponse", code: "invalid_response" })
      expect(error.message).toContain("expected an event stream, got text/html")
    })))

  it.live("a JSON-RPC answer with another id → InvalidResponse", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const server = yield* scripted({
        "wrong-id": (_, res) => {
          const body = JSON.stringify({ jsonrpc: "2.0", id: "someone-else", result: { task } })
          res.writeHead(200, { "content-type": "application/json" }).end(body)
        }
      })
      const error = yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(server.baseUrl) }, sendRequest("wrong-id")))
      expect(error).toMatchObject({ _tag: "InvalidResponse" })
      expect(error.message).toContain("someone-else")
    })))
})
