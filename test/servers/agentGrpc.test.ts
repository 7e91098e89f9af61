// The agent server's gRPC door (`relay server agent --grpc-port`) as the official a2a-js 1.3.0
// gRPC client (`@a2a-js/sdk/client/grpc`) drives it, over both services (lf.a2a.v1 for 1.0 and,
// with legacyCompat, a2a.v1 for 0.3), in plaintext and with TLS (a self-signed certificate made
// here) and the API key; then a raw gRPC client for what no SDK sends: no or an unknown
// a2a-version, an oversized message, malformed bytes, a missing key.
import { TaskState } from "@a2a-js/sdk"
import type { Client } from "@a2a-js/sdk/client"
import { ClientFactory, ClientFactoryOptions, DefaultAgentCardResolver } from "@a2a-js/sdk/client"
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc"
import * as grpc from "@grpc/grpc-js"
import { Either } from "effect"
import * as http2 from "node:http2"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { byteServiceDefinition, decodeStatusDetails, grpcService, STATUS_DETAILS_KEY } from "../../src/a2a/grpcCodec.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { makeSelfSignedCert } from "../helpers/selfSignedCert.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { answerOf, asTask, collect, rejection, send, stateOf, userMessage } from "./sdkClients.js"

const KEY = "grpc-test-key-0123"
const cert = makeSelfSignedCert()
const tlsCredentials = () => grpc.credentials.createSsl(Buffer.from(cert.cert))

/** Without auth, plaintext; and with the key and TLS. */
let plain: AgentHandle
let secured: AgentHandle

beforeAll(async () => {
  ;[plain, secured] = await Promise.all([
    startAgent({ grpc: {}, maxBodyBytes: 64 * 1024 }),
    startAgent({ grpc: { tls: { cert: Buffer.from(cert.cert), key: Buffer.from(cert.key) } }, key: KEY })
  ])
})

afterAll(async () => {
  await Promise.all([plain?.close(), secured?.close()])
})

/** The a2a-js client over the card's gRPC interface of one generation (the card lists both). */
const grpcClient = (
  agent: AgentHandle,
  version: ProtocolVersion,
  credentials = grpc.credentials.createInsecure()
): Promise<Client> => {
  const cards = new DefaultAgentCardResolver()
  return new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new GrpcTransportFactory({ legacyCompat: { enabled: true }, grpcChannelCredentials: credentials })],
    preferredTransports: ["GRPC"],
    cardResolver: {
      resolve: async (url, path) => {
        const card = await cards.resolve(url, path)
        const only = card.supportedInterfaces.filter((i) => i.protocolBinding === "GRPC" && i.protocolVersion === version)
        return { ...card, supportedInterfaces: only }
      }
    }
  })).createFromUrl(agent.baseUrl)
}

/** The gRPC status code of an a2a-js gRPC error. */
const statusOf = (error: Error) => (error as Error & { status?: number }).status

const GENERATIONS: ReadonlyArray<ProtocolVersion> = ["1.0", "0.3"]

describe.each(GENERATIONS)("the a2a-js gRPC client at %s", (version) => {
  it("finds the gRPC interface on the card, at host:port", async () => {
    const response = await fetch(`${plain.baseUrl}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })
    const card = (await response.json()) as { supportedInterfaces: ReadonlyArray<unknown> }
    expect(card.supportedInterfaces).toContainEqual({ url: plain.grpcAddress, protocolBinding: "GRPC", protocolVersion: version })
    const client = await grpcClient(plain, version)
    expect(client.protocolVersion).toBe(version)
  })

  it("sends, gets, cancels, and fails as §5.4 says", async () => {
    const client = await grpcClient(plain, version)
    const task = asTask(await client.sendMessage(send(userMessage("hello grpc"))))
    expect(task.status?.state).toBe(TaskState.TASK_STATE_COMPLETED)
    expect(answerOf(task)).toBe("hello grpc")
    const got = await client.getTask({ tenant: "", id: task.id, historyLength: 1 })
    expect(got.id).toBe(task.id)
    expect(got.history).toHaveLength(1)

    const missing = await rejection(client.getTask({ tenant: "", id: "no-such-task" }))
    expect([missing.name, statusOf(missing)]).toEqual(["TaskNotFoundError", grpc.status.NOT_FOUND])
    const finished = await rejection(client.cancelTask({ tenant: "", id: task.id, metadata: undefined }))
    expect([finished.name, statusOf(finished)]).toEqual(["TaskNotCancelableError", grpc.status.FAILED_PRECONDITION])

    const running = asTask(await client.sendMessage(send(userMessage("slow: a b c d e f g h"), { returnImmediately: true })))
    const canceled = await client.cancelTask({ tenant: "", id: running.id, metadata: undefined })
    expect(canceled.status?.state).toBe(TaskState.TASK_STATE_CANCELED)
  })

  it("streams a send and a subscription to their end", async () => {
    const client = await grpcClient(plain, version)
    const events = await collect(client.sendMessageStream(send(userMessage("streamed words here"))))
    expect(events[0]?.payload?.$case).toBe("task")
    expect(events.map((event) => event.payload?.$case)).toContain("artifactUpdate")
    expect(stateOf(events.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED)

    const slow = asTask(await client.sendMessage(send(userMessage("slow: x y"), { returnImmediately: true })))
    const followed = await collect(client.resubscribeTask({ tenant: "", id: slow.id }))
    expect(followed[0]?.payload?.$case).toBe("task")
    expect(stateOf(followed.at(-1)!)).toBe(TaskState.TASK_STATE_COMPLETED)
  })

  it("creates, gets, lists and deletes a push config", async () => {
    const client = await grpcClient(plain, version)
    const task = asTask(await client.sendMessage(send(userMessage("configs"))))
    const created = await client.createTaskPushNotificationConfig({
      tenant: "",
      id: "hook-1",
      taskId: task.id,
      url: "http://127.0.0.1:9/hook",
      token: "secret-token",
      authentication: undefined
    })
    expect([created.id, created.taskId, created.url]).toEqual(["hook-1", task.id, "http://127.0.0.1:9/hook"])
    const read = await client.getTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" })
    expect(read.url).toBe("http://127.0.0.1:9/hook")
    const listed = await client.listTaskPushNotificationConfig({ tenant: "", taskId: task.id, pageSize: 0, pageToken: "" })
    expect(listed.configs.map((config) => config.id)).toEqual(["hook-1"])
    await client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" })
    const again = await rejection(client.deleteTaskPushNotificationConfig({ tenant: "", taskId: task.id, id: "hook-1" }))
    expect([again.name, statusOf(again)]).toEqual(["TaskNotFoundError", grpc.status.NOT_FOUND])
  })

  it("has no extended card without --auth", async () => {
    const client = await grpcClient(plain, version)
    const error = await rejection(client.transport.getExtendedAgentCard({ tenant: "" }))
    expect(statusOf(error)).toBe(grpc.status.FAILED_PRECONDITION)
    expect(error.name).toBe(version === "1.0" ? "UnsupportedOperationError" : "ExtendedAgentCardNotConfiguredError")
  })

  it("serves TLS, with the key in the metadata, and the extended card", async () => {
    const client = await grpcClient(secured, version, tlsCredentials())
    const authorized = { serviceParameters: { authorization: `Bearer ${KEY}` } }
    const task = asTask(await client.sendMessage(send(userMessage("over tls")), authorized))
    expect(answerOf(task)).toBe("over tls")
    const card = await client.transport.getExtendedAgentCard({ tenant: "" }, authorized)
    expect(card.description).toContain("Model chosen because")
    // The HTTP interfaces at the HTTP port, the gRPC ones at the gRPC port, of the host the client called.
    expect(card.supportedInterfaces.map((i) => [i.protocolBinding, i.url])).toEqual(expect.arrayContaining([
      ["JSONRPC", `${secured.baseUrl}/`],
      ["GRPC", secured.grpcAddress]
    ]))

    const byApiKey = await client.getTask({ tenant: "", id: task.id }, { serviceParameters: { "x-api-key": KEY } })
    expect(byApiKey.id).toBe(task.id)

    const refused = await rejection(client.sendMessage(send(userMessage("no key"))))
    expect(statusOf(refused)).toBe(grpc.status.UNAUTHENTICATED)
  })
})

describe("the 1.0 client only", () => {
  it("lists tasks", async () => {
    const client = await grpcClient(plain, "1.0")
    const task = asTask(await client.sendMessage(send(userMessage("listed"))))
    const listed = await client.listTasks({
      tenant: "",
      contextId: task.contextId,
      status: 0,
      pageSize: 10,
      pageToken: "",
      historyLength: undefined,
      statusTimestampAfter: undefined,
      includeArtifacts: false
    })
    expect(listed.tasks.map((t) => t.id)).toEqual([task.id])
  })
})

// ---------------------------------------------------------------------------
// A raw client: bytes in, status out

const RawV1 = grpc.makeGenericClientConstructor(byteServiceDefinition(grpcService("1.0")) as grpc.ServiceDefinition, "A2AService")
const RawV03 = grpc.makeGenericClientConstructor(byteServiceDefinition(grpcService("0.3")) as grpc.ServiceDefinition, "A2AService")

interface RawAnswer {
  readonly code: grpc.status
  readonly json: unknown
  readonly reason: string | undefined
  readonly domain: string | undefined
}

type UnaryMethod = (
  request: Buffer,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, answer?: Buffer) => void
) => void

/** One unary call of `version`'s service with `json` as its request and `metadata`; its status and answer. */
const rawCall = (version: ProtocolVersion, method: string, request: unknown, metadata: Record<string, string> = {}) =>
  new Promise<RawAnswer>((resolve) => {
    const Client = version === "1.0" ? RawV1 : RawV03
    const client = new Client(plain.grpcAddress!, grpc.credentials.createInsecure())
    const codec = grpcService(version).methods[method]!
    const bytes = Buffer.isBuffer(request) ? request : Buffer.from(Either.getOrThrow(codec.request.toBinary(request)))
    const md = new grpc.Metadata()
    for (const [key, value] of Object.entries(metadata)) md.set(key, value)
    const call = (client as unknown as Record<string, UnaryMethod>)[method]!
    call.call(client, bytes, md, { deadline: Date.now() + 5000 }, (error, answer) => {
      client.close()
      if (error === null) {
        return resolve({
          code: grpc.status.OK,
          json: Either.getOrThrow(codec.response.toJson(answer!)),
          reason: undefined,
          domain: undefined
        })
      }
      const details = error.metadata.get(STATUS_DETAILS_KEY)[0]
      const status = details === undefined ? undefined : Either.getOrUndefined(decodeStatusDetails(details as Buffer))
      resolve({ code: error.code, json: undefined, reason: status?.errorInfo?.reason, domain: status?.errorInfo?.domain })
    })
  })

const v1Send = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts: [{ text }] } })
const v03Send = (text: string) => ({
  message: { messageId: crypto.randomUUID(), role: "ROLE_USER", content: [{ text }] },
  configuration: { blocking: true }
})

describe("a2a-version and hostile calls", () => {
  it("serves a call without a2a-version (0.3, which relay speaks) on either service", async () => {
    const v1 = await rawCall("1.0", "SendMessage", v1Send("no version"))
    expect(v1.code).toBe(grpc.status.OK)
    expect(v1.json).toMatchObject({ task: { status: { state: "TASK_STATE_COMPLETED" } } })
    const v03 = await rawCall("0.3", "SendMessage", v03Send("no version"))
    expect(v03.code).toBe(grpc.status.OK)
    expect(v03.json).toMatchObject({ task: { status: { state: "TASK_STATE_COMPLETED" } } })
  })

  it("refuses a2a-version 9.9 with FAILED_PRECONDITION and VERSION_NOT_SUPPORTED", async () => {
    for (const version of GENERATIONS) {
      const method = "SendMessage"
      const answer = await rawCall(version, method, version === "1.0" ? v1Send("x") : v03Send("x"), { "a2a-version": "9.9" })
      expect(answer).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, reason: "VERSION_NOT_SUPPORTED", domain: "a2a-protocol.org" })
    }
  })

  it("answers an unknown task with NOT_FOUND and TASK_NOT_FOUND", async () => {
    const v1 = await rawCall("1.0", "GetTask", { id: "nope" }, { "a2a-version": "1.0" })
    expect(v1).toMatchObject({ code: grpc.status.NOT_FOUND, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" })
    const v03 = await rawCall("0.3", "GetTask", { name: "tasks/nope" }, { "a2a-version": "0.3" })
    expect(v03).toMatchObject({ code: grpc.status.NOT_FOUND, reason: "TASK_NOT_FOUND", domain: "a2a-protocol.org" })
  })

  it("refuses a message over the size limit with RESOURCE_EXHAUSTED", async () => {
    const answer = await rawCall("1.0", "SendMessage", v1Send("x".repeat(100 * 1024)), { "a2a-version": "1.0" })
    expect(answer.code).toBe(grpc.status.RESOURCE_EXHAUSTED)
  })

  it("refuses by the metadata before reading the message: an oversized one with a bad version is told the version", async () => {
    const answer = await rawCall("1.0", "SendMessage", v1Send("x".repeat(100 * 1024)), { "a2a-version": "9.9" })
    expect(answer).toMatchObject({ code: grpc.status.FAILED_PRECONDITION, reason: "VERSION_NOT_SUPPORTED" })
  })

  it("refuses malformed bytes, bad names and deep nesting with INVALID_ARGUMENT", async () => {
    const garbage = await rawCall("1.0", "SendMessage", Buffer.from([0x0a, 0xff, 0xff, 0xff, 0x0f]), { "a2a-version": "1.0" })
    expect(garbage).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: "PARSE_ERROR" })
    const badName = await rawCall("0.3", "GetTask", { name: "task-without-prefix" })
    expect(badName).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: "INVALID_PARAMS" })
    let deep: unknown = "bottom"
    for (let level = 0; level < 80; level++) deep = { down: deep }
    const nested = await rawCall("1.0", "SendMessage", { ...v1Send("deep"), metadata: { deep } }, { "a2a-version": "1.0" })
    expect(nested).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: "INVALID_PARAMS" })
    const noMessage = await rawCall("1.0", "SendMessage", {}, { "a2a-version": "1.0" })
    expect(noMessage).toMatchObject({ code: grpc.status.INVALID_ARGUMENT, reason: "INVALID_PARAMS" })
  })
})

// ---------------------------------------------------------------------------
// Slow senders, as raw HTTP/2: what the HTTP doors' header and request timeouts bound

describe("a slow sender", () => {
  const LIMIT_MS = 400
  let hurried: AgentHandle
  beforeAll(async () => {
    hurried = await startAgent({ grpc: {}, clientTimeouts: { headersMs: LIMIT_MS, requestMs: LIMIT_MS } })
  })
  afterAll(async () => {
    await hurried?.close()
  })

  /** Resolves with what `emitter` emits as `event` first, rejects after `ms`. */
  const first = <T>(emitter: NodeJS.EventEmitter, event: string, ms: number) =>
    new Promise<T>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no ${event} within ${ms} ms`)), ms)
      emitter.once(event, (value: T) => {
        clearTimeout(timer)
        resolve(value)
      })
    })

  it("is answered DEADLINE_EXCEEDED when its message stops halfway, and its stream ends", async () => {
    const session = http2.connect(`http://${hurried.grpcAddress}`)
    try {
      const stream = session.request({
        ":method": "POST",
        ":path": "/lf.a2a.v1.A2AService/SendMessage",
        "content-type": "application/grpc",
        te: "trailers",
        "a2a-version": "1.0"
      })
      const message = Buffer.from(Either.getOrThrow(grpcService("1.0").methods["SendMessage"]!.request.toBinary(v1Send("slow"))))
      const frame = Buffer.alloc(5 + message.length)
      frame.writeUInt32BE(message.length, 1)
      message.copy(frame, 5)
      const began = performance.now()
      stream.write(frame.subarray(0, frame.length >> 1))
      const answer = first<http2.IncomingHttpHeaders>(stream, "response", LIMIT_MS * 10)
      const ended = first<void>(stream, "close", LIMIT_MS * 10)
      stream.resume()
      expect((await answer)["grpc-status"]).toBe(String(grpc.status.DEADLINE_EXCEEDED))
      await ended
      expect(performance.now() - began).toBeGreaterThanOrEqual(LIMIT_MS * 0.9)
    } finally {
      session.destroy()
    }
  })

  it("has its connection closed when it opens no call", async () => {
    const session = http2.connect(`http://${hurried.grpcAddress}`)
    try {
      await first<void>(session, "goaway", LIMIT_MS * 10)
    } finally {
      session.destroy()
    }
  })
})
