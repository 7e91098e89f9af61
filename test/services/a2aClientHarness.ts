// Shared plumbing for the A2aClient suites: the client over undici, small request builders,
// a scriptable node:http stub for answers no SDK peer gives, and waits with deadlines.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Chunk, Duration, Effect, Layer, Logger, Schedule, Stream } from "effect"
import { randomUUID } from "node:crypto"
import http from "node:http"
import type { Binding } from "../../src/a2a/dialects.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { applyStreamEvent } from "../../src/a2a/text.js"
import type * as V1 from "../../src/a2a/v1.js"
import { terminalHint } from "../../src/cli/hints.js"
import type { Hint } from "../../src/domain/hints.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import { closeServer, listenOnLoopback, readBodyText, recordRequest, tryParseJson } from "../peers/httpUtil.js"
import type { RecordedRequest } from "../peers/httpUtil.js"

/** A fresh client (empty card cache) over the real HTTP stack; provide it per test. */
export const ClientLive = A2aClient.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))

export const BINDINGS: ReadonlyArray<Binding> = ["JSONRPC", "HTTP+JSON"]

/** The four dialects the client speaks: each binding at each protocol version. */
export const DIALECTS: ReadonlyArray<readonly [Binding, ProtocolVersion]> = [
  ["JSONRPC", "1.0"],
  ["HTTP+JSON", "1.0"],
  ["JSONRPC", "0.3"],
  ["HTTP+JSON", "0.3"]
]

/** Runs a test body with its own fresh client. */
export const withClient = <A, E>(body: Effect.Effect<A, E, A2aClient.A2aClient>) => Effect.provide(body, ClientLive)

/** A user message, optionally continuing a task or context. */
export const userMessage = (text: string, ids: { readonly taskId?: string; readonly contextId?: string } = {}): V1.Message => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...ids
})

export const sendRequest = (
  text: string,
  options: {
    readonly taskId?: string
    readonly contextId?: string
    readonly configuration?: V1.SendMessageConfiguration
  } = {}
): V1.SendMessageRequest => {
  const { configuration, ...ids } = options
  return { message: userMessage(text, ids), ...(configuration === undefined ? {} : { configuration }) }
}

/** The Task of a send result, failing loudly on a Message. */
export const taskOf = (response: V1.SendMessageResponse): V1.Task => {
  if (!("task" in response)) throw new Error(`expected a task, got ${JSON.stringify(response)}`)
  return response.task
}

export const messageOf = (response: V1.SendMessageResponse): V1.Message => {
  if (!("message" in response)) throw new Error(`expected a message, got ${JSON.stringify(response)}`)
  return response.message
}

export const collect = <A, E, R>(stream: Stream.Stream<A, E, R>) => Effect.map(Stream.runCollect(stream), Chunk.toReadonlyArray)

/** The member name of each event: task, message, statusUpdate, artifactUpdate. */
export const kindsOf = (events: ReadonlyArray<V1.StreamResponse>) => events.map((event) => Object.keys(event)[0])

/** Folds stream events into the final task, as a caller would. */
export const foldEvents = (events: ReadonlyArray<V1.StreamResponse>) => events.reduce(applyStreamEvent, undefined)

/** The task state an event carries (a Task or a status update), if any. */
export const stateOfEvent = (event: V1.StreamResponse | undefined): V1.TaskState | undefined => {
  if (event === undefined) return undefined
  if ("task" in event) return event.task.status.state
  return "statusUpdate" in event ? event.statusUpdate.status.state : undefined
}

/** Polls `check` every 20 ms until it holds; dies after `timeoutMs`. */
export const waitUntil = (what: string, check: () => boolean, timeoutMs = 3000) =>
  Effect.suspend(() => (check() ? Effect.void : Effect.fail("not yet"))).pipe(
    Effect.retry(Schedule.spaced("20 millis")),
    Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new Error(`timed out waiting for ${what}`) }),
    Effect.orDie
  )

/** Polls the task until it is in `state` (via the client under test). */
export const waitForState = (target: A2aClient.Target, id: string, state: V1.TaskState, timeoutMs = 3000) =>
  Effect.gen(function*() {
    const a2a = yield* A2aClient.A2aClient
    return yield* a2a.getTask(target, { id }).pipe(
      Effect.filterOrFail((task) => task.status.state === state, () => "not yet" as const),
      Effect.retry({ schedule: Schedule.spaced("30 millis"), while: (error) => error === "not yet" }),
      Effect.timeoutFail({ duration: Duration.millis(timeoutMs), onTimeout: () => new Error(`task ${id} never reached ${state}`) })
    )
  })

export const headerOf = (request: RecordedRequest, name: string): string | undefined => {
  const value = request.headers[name]
  return Array.isArray(value) ? value.join(", ") : value
}

/** The JSON-RPC method of a recorded request, if it was one. */
export const rpcMethodOf = (request: RecordedRequest): string | undefined => {
  const body = request.body
  return typeof body === "object" && body !== null && "method" in body && typeof body.method === "string" ? body.method : undefined
}

/** `POST /a2a/jsonrpc SendMessage` or `GET /a2a/rest/tasks/…`: what a request was, in one line. */
export const describeRequest = (request: RecordedRequest): string =>
  [request.method, request.path, rpcMethodOf(request)].filter((part) => part !== undefined).join(" ")

/** The requests `effect` causes at a peer, with its result. */
export const recording = <A, E, R>(requests: ReadonlyArray<RecordedRequest>, effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const before = requests.length
    return Effect.map(effect, (result) => ({ result, sent: requests.slice(before) }))
  })

/** Runs `effect` with a logger that keeps every line (`WARN: …`); returns the result and the lines. */
export const withCapturedLogs = <A, E, R>(effect: Effect.Effect<A, E, R>) =>
  Effect.suspend(() => {
    const logs: Array<string> = []
    const logger = Logger.make(({ logLevel, message }) => {
      logs.push(`${logLevel.label}: ${(Array.isArray(message) ? message : [message]).map(String).join(" ")}`)
    })
    return effect.pipe(
      Effect.provide(Logger.replace(Logger.defaultLogger, logger)),
      Effect.map((result) => ({ result, logs }))
    )
  })

// ---------------------------------------------------------------------------
// A scriptable stub server

export interface StubRequest {
  readonly method: string
  readonly path: string
  readonly headers: http.IncomingHttpHeaders
  readonly body: unknown
}

export interface StubReply {
  readonly status?: number
  readonly headers?: Readonly<Record<string, string>>
  /** A string is sent as is; anything else as JSON. */
  readonly body?: unknown
}

/** Returns the reply, or writes to `res` itself and returns undefined. */
export type StubRoute = (request: StubRequest, res: http.ServerResponse) => StubReply | undefined

export interface Stub {
  readonly baseUrl: string
  readonly requests: RecordedRequest[]
  close(): Promise<void>
}

const writeReply = (res: http.ServerResponse, reply: StubReply) => {
  const text = typeof reply.body === "string" ? reply.body : reply.body === undefined ? "" : JSON.stringify(reply.body)
  const contentType = typeof reply.body === "string" ? "text/plain" : "application/json"
  res.writeHead(reply.status ?? 200, {
    ...(reply.body === undefined ? {} : { "content-type": contentType }),
    ...reply.headers,
    "content-length": Buffer.byteLength(text)
  })
  res.end(text)
}

/**
 * A node:http server on 127.0.0.1:0 answering `METHOD /path` from `routes` (404 otherwise).
 * `routes` may be a function of the base URL, for cards that point at the stub itself.
 */
export const startStub = async (
  routes: Readonly<Record<string, StubRoute>> | ((baseUrl: string) => Readonly<Record<string, StubRoute>>)
): Promise<Stub> => {
  const requests: RecordedRequest[] = []
  let table: Readonly<Record<string, StubRoute>> = {}
  const server = http.createServer((req, res) => {
    let parsed: unknown
    recordRequest(requests, req, res, () => parsed)
    readBodyText(req).then((text) => {
      parsed = tryParseJson(text)
      const path = (req.url ?? "/").split("?")[0] ?? "/"
      const route = table[`${req.method} ${path}`]
      if (route === undefined) return writeReply(res, { status: 404, body: { error: "not found" } })
      const reply = route({ method: req.method ?? "GET", path, headers: req.headers, body: parsed }, res)
      if (reply !== undefined) writeReply(res, reply)
    }).catch(() => writeReply(res, { status: 500 }))
  })
  const baseUrl = await listenOnLoopback(server)
  table = typeof routes === "function" ? routes(baseUrl) : routes
  return { baseUrl, requests, close: () => closeServer(server) }
}

export const reply = (body: unknown, status = 200, headers: Readonly<Record<string, string>> = {}): StubRoute => () => ({
  status,
  headers,
  body
})

const rpcIdOf = (body: unknown): unknown => typeof body === "object" && body !== null && "id" in body ? body.id : null

/** Writes the whole answer to one JSON-RPC request with this id. */
export type RpcScript = (id: unknown, res: http.ServerResponse) => void

/** A JSON-RPC endpoint that runs the script named by the first text of the request's message. */
export const scriptedRpc = (scripts: Readonly<Record<string, RpcScript>>): StubRoute => (request, res) => {
  const params = (request.body as { params?: { message?: { parts?: ReadonlyArray<{ text?: string }> } } }).params
  const script = scripts[params?.message?.parts?.[0]?.text ?? ""]
  if (script === undefined) return rpcErrorReply(-32601, "no such script")(request, res)
  script(rpcIdOf(request.body), res)
  return undefined
}

/** A JSON-RPC error answer echoing the request id. */
export const rpcErrorReply = (code: number, message: string, data?: unknown): StubRoute => (request) => ({
  body: {
    jsonrpc: "2.0",
    id: rpcIdOf(request.body),
    error: { code, message, ...(data === undefined ? {} : { data }) }
  }
})

export interface StubInterface {
  readonly url: string
  readonly binding: Binding
  readonly version: string
  readonly tenant?: string
}

/** A minimal v1.0 card whose interfaces are given. */
export const v1Card = (
  interfaces: ReadonlyArray<StubInterface>,
  capabilities: Readonly<Record<string, boolean>> = { streaming: true, pushNotifications: false }
) => ({
  name: "Stub Agent",
  description: "A scripted stub.",
  version: "1.0.0",
  supportedInterfaces: interfaces.map((i) => ({
    url: i.url,
    protocolBinding: i.binding,
    protocolVersion: i.version,
    ...(i.tenant === undefined ? {} : { tenant: i.tenant })
  })),
  capabilities,
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "stub", name: "Stub", description: "Scripted.", tags: ["test"] }]
})

/** Starts stubs from inside tests and closes them all at once (in afterAll). */
export const stubPool = () => {
  const started: Array<Stub> = []
  return {
    start: (routes: Parameters<typeof startStub>[0]) =>
      Effect.promise(async () => {
        const stub = await startStub(routes)
        started.push(stub)
        return stub
      }),
    closeAll: () => Promise.all(started.map((stub) => stub.close()))
  }
}

/** The `hint` every typed client error carries, as the terminal words it ("" when there is none). */
export const hintOf = (error: unknown): string =>
  typeof error === "object" && error !== null && "hint" in error ? terminalHint(error.hint as Hint) : ""

/** A base URL where nothing listens: a port that was just bound and released. */
export const closedPortUrl = async (): Promise<string> => {
  const server = http.createServer()
  const baseUrl = await listenOnLoopback(server)
  await closeServer(server)
  return baseUrl
}
