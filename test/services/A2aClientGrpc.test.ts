/**
 * The A2aClient over gRPC (#33): against the official @a2a-js/sdk 1.3.0 gRPC services
 * (`grpcService` for 1.0, `legacyGrpcService` for 0.3) every operation in both generations, with
 * the SDK's errors read from their status and ErrorInfo; against hand-made gRPC servers, what a
 * hostile or stuck one gets: an oversized message refused, a deadline, a cancelled call.
 * TLS is tested through the CLI (test/cli/grpcClient.test.ts), where the system's roots apply.
 */
import { describe, expect, it } from "@effect/vitest"
import { status as grpcStatus } from "@grpc/grpc-js"
import { Effect, Fiber, Layer, Stream } from "effect"
import type { LookupAddress } from "node:dns"
import { afterAll, beforeAll } from "vitest"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { partsText } from "../../src/a2a/text.js"
import { A2aClient, classesOfHost, HostAddressing, type Target } from "../../src/services/A2aClient.js"
import type { ResolveHost } from "../../src/services/connectGuard.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { CANCELED_TEXT, chunkTexts, echoText, withBehaviour } from "../peers/behaviours.js"
import { answerBytes, grpcCardStub, startGrpcStub, waitFor } from "../peers/grpcStub.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"
import {
  ClientLive,
  collect,
  foldEvents,
  kindsOf,
  messageOf,
  sendRequest,
  type Stub,
  taskOf,
  waitForState,
  withClient
} from "./a2aClientHarness.js"

let peer: SdkAgentHandle
let sink: WebhookSink

beforeAll(async () => {
  peer = await startSdkAgent({ bindings: ["GRPC"], legacyCompat: true, extendedCard: true })
  sink = await startWebhookSink()
})

afterAll(async () => {
  await Promise.all([peer?.close(), sink?.close()])
})

const targetFor = (protocol: ProtocolVersion): Target => ({
  agentUrl: agentUrlOf(peer.baseUrl),
  protocol,
  binding: "GRPC",
  timeout: "10 seconds"
})

describe.each<ProtocolVersion>(["1.0", "0.3"])("relay's client against the SDK's gRPC service, A2A %s", (protocol) => {
  it.live("chooses the card's gRPC interface, sends and gets the task back", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target = targetFor(protocol)
      expect(yield* a2a.endpoint(target)).toMatchObject({ binding: "GRPC", version: protocol, url: `http://${peer.grpcAddress}/` })
      const task = taskOf(yield* a2a.send(target, sendRequest("hello over gRPC")))
      expect(task.status.state).toBe("TASK_STATE_COMPLETED")
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe(echoText("hello over gRPC"))
      const again = yield* a2a.getTask(target, { id: task.id, historyLength: 1 })
      expect(again.id).toBe(task.id)
      expect(again.history?.length).toBe(1)
    })))

  it.live("a direct message answers as a message", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const message = messageOf(yield* a2a.send(targetFor(protocol), sendRequest(withBehaviour("message-only", "hi"))))
      expect(message.role).toBe("ROLE_AGENT")
    })))

  it.live("streams in order and ends at the last event", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const events = yield* collect(a2a.stream(targetFor(protocol), sendRequest(withBehaviour("chunked-artifact", "parts"))))
      expect(kindsOf(events)[0]).toBe("task")
      expect(kindsOf(events).filter((kind) => kind === "artifactUpdate").length).toBe(3)
      const last = events[events.length - 1]!
      expect("statusUpdate" in last && last.statusUpdate.status.state).toBe("TASK_STATE_COMPLETED")
      expect(partsText(foldEvents(events)?.artifacts?.[0]?.parts ?? [])).toBe(chunkTexts("parts").join("\n"))
    })))

  it.live("cancels a running task, and subscribes to one", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target = targetFor(protocol)
      const started = taskOf(
        yield* a2a.send(target, sendRequest(withBehaviour("slow-cancellable", "wait"), { configuration: { returnImmediately: true } }))
      )
      yield* waitForState(target, started.id, "TASK_STATE_WORKING", 5000)
      const subscription = yield* Effect.fork(collect(a2a.subscribe(target, { id: started.id })))
      const canceled = yield* a2a.cancelTask(target, { id: started.id })
      expect(canceled.id).toBe(started.id)
      const final = yield* waitForState(target, started.id, "TASK_STATE_CANCELED", 5000)
      expect(partsText(final.status.message?.parts ?? [])).toBe(CANCELED_TEXT)
      const events = yield* Fiber.join(subscription)
      expect(events.length).toBeGreaterThan(0)
    })))

  it.live("keeps push configs: create, get, list, delete", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const target = targetFor(protocol)
      const task = taskOf(yield* a2a.send(target, sendRequest(withBehaviour("input-required", "later"))))
      const created = yield* a2a.createPushConfig(target, { taskId: task.id, id: "hook-1", url: sink.url, token: "t0k" })
      expect(created).toMatchObject({ taskId: task.id, id: "hook-1", url: sink.url })
      expect(yield* a2a.getPushConfig(target, { taskId: task.id, id: "hook-1" })).toMatchObject({ url: sink.url })
      expect((yield* a2a.listPushConfigs(target, { taskId: task.id })).map((config) => config.id)).toEqual(["hook-1"])
      yield* a2a.deletePushConfig(target, { taskId: task.id, id: "hook-1" })
      expect(yield* a2a.listPushConfigs(target, { taskId: task.id })).toEqual([])
    })))

  it.live("gets the extended card, with the credentials it needs", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const extended = yield* a2a.extendedCard({
        ...targetFor(protocol),
        credentials: { kind: "bearer", token: "any" },
        allowCrossOriginCredentials: true
      })
      expect(extended.card.description).toContain("Extended card.")
    })))

  it.live("an unknown task is TASK_NOT_FOUND, read from the status's ErrorInfo", () =>
    withClient(Effect.gen(function*() {
      const a2a = yield* A2aClient
      const error = yield* Effect.flip(a2a.getTask(targetFor(protocol), { id: "no-such-task" }))
      expect(error).toMatchObject({ _tag: "ProtocolError", a2aCode: -32001 })
      expect(error._tag === "ProtocolError" && error.a2aReason).toBe("TASK_NOT_FOUND")
      expect(error.message).toContain("NOT_FOUND")
    })))
})

it.live("pinned to gRPC and a version, reaches an agent at its gRPC address, which serves no card (no HTTP at all)", () =>
  withClient(Effect.gen(function*() {
    const a2a = yield* A2aClient
    for (const protocol of ["1.0", "0.3"] as const) {
      const target: Target = { agentUrl: agentUrlOf(`http://${peer.grpcAddress}`), binding: "GRPC", protocol }
      const task = taskOf(yield* a2a.send(target, sendRequest("no card")))
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe(echoText("no card"))
      expect(kindsOf(yield* collect(a2a.stream(target, sendRequest("no card either")))).at(-1)).toBe("statusUpdate")
    }
    // Unpinned, the card is needed: its absence is said as such.
    expect(yield* Effect.flip(a2a.send({ agentUrl: agentUrlOf(`http://${peer.grpcAddress}`) }, sendRequest("?")))).toMatchObject({
      _tag: "AgentUnreachable"
    })
  })))

it.live("lists tasks over 1.0 (0.3 has no ListTasks)", () =>
  withClient(Effect.gen(function*() {
    const a2a = yield* A2aClient
    const task = taskOf(yield* a2a.send(targetFor("1.0"), sendRequest("to list")))
    const listed = yield* a2a.listTasks(targetFor("1.0"), { contextId: task.contextId! })
    expect(listed.tasks.map((listedTask) => listedTask.id)).toEqual([task.id])
    expect(yield* Effect.flip(a2a.listTasks(targetFor("0.3"), {}))).toMatchObject({ _tag: "UnsupportedOperation" })
  })))

// ---------------------------------------------------------------------------
// Hand-made servers: what they received, and what they answer

const taskBytes = (version: ProtocolVersion, text: string) =>
  answerBytes(version, "GetTask", {
    id: "t-1",
    contextId: "c-1",
    status: { state: "TASK_STATE_COMPLETED" },
    artifacts: [{ artifactId: "a-1", parts: [{ text }] }]
  })

describe("hand-made gRPC servers", () => {
  let servers: Array<{ close(): unknown }> = []
  const track = <S extends { close(): unknown }>(server: S) => {
    servers.push(server)
    return server
  }
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()))
    servers = []
  })

  const targetAt = (stub: Stub, extra: Partial<Target> = {}): Target => ({ agentUrl: agentUrlOf(stub.baseUrl), ...extra })

  it.live("send the A2A version and credentials in metadata; the card's binding is chosen without pinning", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() => startGrpcStub("1.0", { GetTask: (_call, callback) => callback(null, taskBytes("1.0", "fine")) }))
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0")))
      const a2a = yield* A2aClient
      const task = yield* a2a.getTask(
        targetAt(stub, { credentials: { kind: "bearer", token: "sekret" }, allowCrossOriginCredentials: true }),
        {
          id: "t-1"
        }
      )
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe("fine")
      expect(server.metadata[0]).toMatchObject({ "a2a-version": "1.0", authorization: "Bearer sekret" })
    })))

  it.live("withhold credentials from a gRPC interface on another origin, as from any interface", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() => startGrpcStub("0.3", { GetTask: (_call, callback) => callback(null, taskBytes("0.3", "fine")) }))
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "0.3")))
      const a2a = yield* A2aClient
      yield* a2a.getTask(targetAt(stub, { credentials: { kind: "bearer", token: "sekret" } }), { id: "t-1" })
      expect(server.metadata[0]).toMatchObject({ "a2a-version": "0.3" })
      expect(server.metadata[0]).not.toHaveProperty("authorization")
    })))

  it.live("a 1.0 interface whose server has only the 0.3 service (UNIMPLEMENTED): the card's 0.3 one instead, unless pinned", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() => startGrpcStub("0.3", { GetTask: (_call, callback) => callback(null, taskBytes("0.3", "legacy")) }))
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0", "0.3")))
      const a2a = yield* A2aClient
      const task = yield* a2a.getTask(targetAt(stub), { id: "t-1" })
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe("legacy")
      const pinned = yield* Effect.flip(a2a.getTask(targetAt(stub, { protocol: "1.0" }), { id: "t-1" }))
      expect(pinned).toMatchObject({ _tag: "ProtocolError", a2aCode: -32601 })
      expect(pinned.message).toContain("UNIMPLEMENTED")
    })))

  it.live("UNAUTHENTICATED is auth_required (401), saying which credentials went; a stream silent too long ends", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() =>
          startGrpcStub("1.0", {
            GetTask: (_call, callback) => callback({ code: grpcStatus.UNAUTHENTICATED, details: "who are you" }),
            SendStreamingMessage: (stream) =>
              void stream.write(answerBytes("1.0", "SendStreamingMessage", {
                task: { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } }
              }))
          })
        )
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0")))
      const a2a = yield* A2aClient
      const refused = yield* Effect.flip(a2a.getTask(targetAt(stub, { credentials: { kind: "bearer", token: "t" } }), { id: "t-1" }))
      expect(refused).toMatchObject({ _tag: "AuthRequired", status: 401, credentials: "withheld" })
      const silent = yield* Effect.flip(collect(a2a.stream(targetAt(stub, { streamIdleTimeout: "500 millis" }), sendRequest("hi"))))
      expect(silent).toMatchObject({ _tag: "RequestTimeout", limit: "stream-idle" })
    })))

  it.live("speak plaintext only to a loopback host, unless --insecure names the host", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() => startGrpcStub("1.0", { GetTask: (_call, callback) => callback(null, taskBytes("1.0", "plain")) }))
      )
      // 127.0.0.1 written as an IPv4-mapped IPv6 address: this machine, but not a name relay knows for it.
      const mapped = `grpc://[::ffff:127.0.0.1]:${server.address.split(":")[1]}`
      const stub = track(yield* Effect.promise(() => grpcCardStub(mapped, "1.0")))
      const a2a = yield* A2aClient
      const refused = yield* Effect.flip(a2a.getTask(targetAt(stub), { id: "t-1" }))
      expect(refused).toMatchObject({ _tag: "InterfaceHostRefused" })
      expect(refused.message).toContain("--insecure")
      expect(server.metadata).toEqual([])
      const task = yield* a2a.getTask(targetAt(stub, { insecureHosts: ["::ffff:7f00:1"] }), { id: "t-1" })
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe("plain")
    })))

  /** A client whose interface rule asks `resolve` what `localhost` is (the system's own lookup says 127.0.0.1). */
  const withLocalhostAt = <A, E>(addresses: ReadonlyArray<LookupAddress>, body: Effect.Effect<A, E, A2aClient>) => {
    const resolve: ResolveHost = async (hostname) => (hostname === "localhost" ? addresses : [])
    return Effect.provide(
      body,
      ClientLive.pipe(Layer.provide(Layer.succeed(HostAddressing, { resolve, cardHostClasses: classesOfHost(resolve) })))
    )
  }

  it.live("a gRPC interface on another origin is dialed at the addresses the rule judged, never looked up again", () =>
    Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() => startGrpcStub("1.0", { GetTask: (_call, callback) => callback(null, taskBytes("1.0", "pinned")) }))
      )
      const port = server.address.split(":")[1]
      // The card is on 127.0.0.1 (loopback): its interface on localhost is another origin, held to loopback.
      const stub = track(yield* Effect.promise(() => grpcCardStub(`grpc://localhost:${port}`, "1.0")))
      // The lookup the rule makes answers the metadata address (a name re-pointed between lookups):
      // refused, and no second lookup (grpc-js's, which would find 127.0.0.1) sends the call anyway.
      const refused = yield* withLocalhostAt(
        [{ address: "169.254.169.254", family: 4 }],
        Effect.flip(Effect.flatMap(A2aClient, (a2a) => a2a.getTask(targetAt(stub), { id: "t-1" })))
      )
      expect(refused).toMatchObject({ _tag: "InterfaceHostRefused" })
      expect(refused.message).toContain("localhost is a metadata address")
      expect(server.metadata).toEqual([])
      // Judged loopback: the call goes to the address judged.
      const task = yield* withLocalhostAt(
        [{ address: "127.0.0.1", family: 4 }],
        Effect.flatMap(A2aClient, (a2a) => a2a.getTask(targetAt(stub), { id: "t-1" }))
      )
      expect(partsText(task.artifacts?.[0]?.parts ?? [])).toBe("pinned")
      expect(server.metadata).toHaveLength(1)
    }))

  it.live("refuse a message over the response limit", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() =>
          startGrpcStub("1.0", { GetTask: (_call, callback) => callback(null, taskBytes("1.0", "x".repeat(200_000))) })
        )
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0")))
      const a2a = yield* A2aClient
      const error = yield* Effect.flip(a2a.getTask(targetAt(stub, { maxResponseBytes: 100_000 }), { id: "t-1" }))
      expect(error).toMatchObject({ _tag: "ResponseTooLarge", limit: 100_000 })
    })))

  it.live("give up on a server that never answers at the deadline, which the server sees", () =>
    withClient(Effect.gen(function*() {
      const server = track(yield* Effect.promise(() => startGrpcStub("1.0", { GetTask: () => {}, SendStreamingMessage: () => {} })))
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0")))
      const a2a = yield* A2aClient
      const target = targetAt(stub, { timeout: "1 second" })
      expect(yield* Effect.flip(a2a.getTask(target, { id: "t-1" }))).toMatchObject({ _tag: "RequestTimeout", after: "1s" })
      // A stream whose headers never come: the same wait, then the call is cancelled.
      expect(yield* Effect.flip(collect(a2a.stream(target, sendRequest("hi"))))).toMatchObject({ _tag: "RequestTimeout" })
      yield* Effect.promise(() => waitFor(() => server.cancelled === 2))
    })))

  it.live("cancel the call when interrupted, and an endless stream when its reader stops", () =>
    withClient(Effect.gen(function*() {
      const server = track(
        yield* Effect.promise(() =>
          startGrpcStub("1.0", {
            GetTask: () => {},
            SendStreamingMessage: (stream) => {
              const event = answerBytes("1.0", "SendStreamingMessage", {
                statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } }
              })
              const timer = setInterval(() => stream.write(event), 5)
              stream.on("cancelled", () => clearInterval(timer))
            }
          })
        )
      )
      const stub = track(yield* Effect.promise(() => grpcCardStub(server.address, "1.0")))
      const a2a = yield* A2aClient
      const target = targetAt(stub, { timeout: "30 seconds" })
      const waiting = yield* Effect.fork(a2a.getTask(target, { id: "t-1" }))
      yield* Effect.promise(() => waitFor(() => server.metadata.length === 1))
      yield* Fiber.interrupt(waiting)
      yield* Effect.promise(() => waitFor(() => server.cancelled === 1))
      const events = yield* collect(Stream.take(a2a.stream(target, sendRequest("forever")), 50))
      expect(events.length).toBe(50)
      yield* Effect.promise(() => waitFor(() => server.cancelled === 2))
    })))
})
