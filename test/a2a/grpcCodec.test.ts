// The gRPC codec: relay's ProtoJSON as protobuf bytes and back, in both generations, read and
// written the way the official a2a-js 1.3.0 SDK (generated from the same protos) reads and writes
// them; google.rpc.Status with ErrorInfo both ways; hostile bytes refused, never thrown.
import { LegacyA2AService as SdkLegacyService } from "@a2a-js/sdk/compat/v0_3/server/grpc"
import { decodeErrorInfo, decodeStatus, encodeGrpcStatusDetails } from "@a2a-js/sdk/errors/grpc"
import { A2AService as SdkService } from "@a2a-js/sdk/server/grpc"
import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, Schema } from "effect"
import {
  byteServiceDefinition,
  decodeStatusDetails,
  encodeStatusDetails,
  GRPC_STATUS,
  grpcMethod,
  grpcService,
  grpcStatusName
} from "../../src/a2a/grpcCodec.js"
import * as T from "../../src/a2a/translate.js"
import * as V1 from "../../src/a2a/v1.js"

const request: V1.SendMessageRequest = {
  message: {
    messageId: "m-1",
    contextId: "c-1",
    role: "ROLE_USER",
    parts: [{ text: "hello" }, { data: { answer: 42, nested: { list: [1, "two", null] } } }, {
      raw: "aGVsbG8=",
      mediaType: "text/plain",
      filename: "hello.txt"
    }],
    metadata: { origin: "test" }
  },
  configuration: { acceptedOutputModes: ["text/plain"], historyLength: 3 }
}

const task: V1.Task = {
  id: "t-1",
  contextId: "c-1",
  status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-02T03:04:05Z" },
  artifacts: [{ artifactId: "a-1", parts: [{ text: "done" }] }]
}

const bytesOf = (either: Either.Either<Uint8Array, string>) => Either.getOrThrow(either)
const jsonOf = <A>(either: Either.Either<A, string>) => Either.getOrThrow(either)

describe("the services", () => {
  it("name each generation's service and methods as the protos do", () => {
    expect(grpcService("1.0").name).toBe("lf.a2a.v1.A2AService")
    expect(grpcService("0.3").name).toBe("a2a.v1.A2AService")
    expect(Object.keys(grpcService("1.0").methods).sort()).toEqual([
      "CancelTask",
      "CreateTaskPushNotificationConfig",
      "DeleteTaskPushNotificationConfig",
      "GetExtendedAgentCard",
      "GetTask",
      "GetTaskPushNotificationConfig",
      "ListTaskPushNotificationConfigs",
      "ListTasks",
      "SendMessage",
      "SendStreamingMessage",
      "SubscribeToTask"
    ])
    expect(grpcMethod("0.3", "TaskSubscription")).toMatchObject({
      path: "/a2a.v1.A2AService/TaskSubscription",
      serverStreaming: true
    })
    expect(grpcMethod("0.3", "ListTasks")).toBeUndefined()
    expect(grpcMethod("1.0", "toString")).toBeUndefined()
  })

  it("give @grpc/grpc-js definitions on the SDK's paths, bytes passed through", () => {
    const definition = byteServiceDefinition(grpcService("1.0"))
    expect(definition["SendStreamingMessage"]).toMatchObject({
      path: SdkService.sendStreamingMessage.path,
      responseStream: true,
      requestStream: false
    })
    const bytes = Buffer.from([1, 2, 3])
    expect(definition["GetTask"]!.requestDeserialize(bytes)).toBe(bytes)
    const legacy = byteServiceDefinition(grpcService("0.3"))
    expect(legacy["TaskSubscription"]!.path).toBe(SdkLegacyService.taskSubscription.path)
  })
})

describe("1.0 messages", () => {
  const send = grpcMethod("1.0", "SendMessage")!

  it.effect("a request round-trips from the model's ProtoJSON, and the SDK reads it", () =>
    Effect.gen(function*() {
      const json = yield* Schema.encode(V1.SendMessageRequest)(request)
      const bytes = bytesOf(send.request.toBinary(json))
      expect(yield* V1.decodeSendMessageRequest(jsonOf(send.request.toJson(bytes)))).toEqual(request)
      const sdk = SdkService.sendMessage.requestDeserialize(Buffer.from(bytes))
      expect(sdk.message?.messageId).toBe("m-1")
      expect(sdk.message?.parts.map((part) => part.content?.$case)).toEqual(["text", "data", "raw"])
      expect(sdk.configuration?.historyLength).toBe(3)
    }))

  it.effect("an answer the SDK writes reads as the model's task", () =>
    Effect.gen(function*() {
      const sdkBytes = SdkService.getTask.responseSerialize({
        id: "t-1",
        contextId: "c-1",
        status: { state: 3, timestamp: new Date("2026-01-02T03:04:05.000Z") } as never,
        artifacts: [{
          artifactId: "a-1",
          name: "",
          description: "",
          parts: [{ content: { $case: "text", value: "done" }, filename: "", mediaType: "" }],
          extensions: []
        }] as never,
        history: []
      } as never)
      const json = jsonOf(grpcMethod("1.0", "GetTask")!.response.toJson(sdkBytes))
      expect(yield* V1.decodeTask(json)).toEqual(task)
    }))

  it("a stream event keeps its oneof member", () => {
    const stream = grpcMethod("1.0", "SendStreamingMessage")!
    const event = { statusUpdate: { taskId: "t-1", contextId: "c-1", status: { state: "TASK_STATE_WORKING" } } }
    expect(jsonOf(stream.response.toJson(bytesOf(stream.response.toBinary(event))))).toEqual(event)
  })

  it("an empty answer (DeleteTaskPushNotificationConfig) is {}", () => {
    const remove = grpcMethod("1.0", "DeleteTaskPushNotificationConfig")!
    expect(jsonOf(remove.response.toJson(new Uint8Array()))).toEqual({})
  })
})

describe("0.3 messages", () => {
  it.effect("a request in the v0.3 proto's JSON (`message`, `content`) reaches the SDK's v0.3 service", () =>
    Effect.gen(function*() {
      const json = yield* Schema.encode(T.SendRequestAsV03Rest)(request)
      const send = grpcMethod("0.3", "SendMessage")!
      const bytes = bytesOf(send.request.toBinary(json))
      const sdk = SdkLegacyService.sendMessage.requestDeserialize(Buffer.from(bytes))
      expect(sdk.request?.messageId).toBe("m-1")
      expect(sdk.request?.content.length).toBe(3)
      const back = yield* Schema.decodeUnknown(T.SendRequestAsV03Rest)(jsonOf(send.request.toJson(bytes)))
      expect(back.message.messageId).toBe("m-1")
      expect(back.message.parts[0]).toEqual({ text: "hello" })
    }))

  it.effect("a task the SDK's v0.3 service writes reads as the model's task", () =>
    Effect.gen(function*() {
      const sdkBytes = SdkLegacyService.getTask.responseSerialize({
        id: "t-1",
        contextId: "c-1",
        status: { state: 3, timestamp: new Date("2026-01-02T03:04:05.000Z") },
        artifacts: [{ artifactId: "a-1", name: "", description: "", parts: [{ part: { $case: "text", value: "done" } }], extensions: [] }],
        history: []
      } as never)
      const json = jsonOf(grpcMethod("0.3", "GetTask")!.response.toJson(sdkBytes))
      expect(yield* Schema.decodeUnknown(T.TaskAsV03Rest)(json)).toEqual(task)
    }))
})

describe("google.rpc.Status", () => {
  it("relay's status with ErrorInfo reads in the SDK", () => {
    const bytes = encodeStatusDetails(GRPC_STATUS.NOT_FOUND, "no such task", "TASK_NOT_FOUND", { taskId: "t-9" })
    const status = decodeStatus(Buffer.from(bytes))
    expect(status).toMatchObject({ code: 5, message: "no such task" })
    expect(decodeErrorInfo(Buffer.from(status.details[0]!.value))).toEqual({
      reason: "TASK_NOT_FOUND",
      domain: "a2a-protocol.org",
      metadata: { taskId: "t-9" }
    })
  })

  it("the SDK's status reads in relay", () => {
    const bytes = encodeGrpcStatusDetails(GRPC_STATUS.FAILED_PRECONDITION, "version 9.9", "VERSION_NOT_SUPPORTED")
    expect(jsonOf(decodeStatusDetails(bytes))).toEqual({
      code: 9,
      message: "version 9.9",
      errorInfo: { reason: "VERSION_NOT_SUPPORTED", domain: "a2a-protocol.org", metadata: {} }
    })
    expect(grpcStatusName(9)).toBe("FAILED_PRECONDITION")
    expect(grpcStatusName(99)).toBe("UNKNOWN")
  })
})

describe("hostile bytes", () => {
  const getTask = grpcMethod("1.0", "GetTask")!

  it("garbage is refused with a reason", () => {
    const refused = getTask.response.toJson(Uint8Array.from([0x0a, 0xff, 0xff, 0xff, 0xff, 0x0f]))
    expect(Either.isLeft(refused)).toBe(true)
    expect(Either.isLeft(decodeStatusDetails(Uint8Array.from([0x1a, 0x05, 0x01])))).toBe(true)
  })

  it("nesting past the limit is refused, not a stack overflow", () => {
    // Task.metadata (field 6) = Struct{fields: {"a": Value{struct_value: Struct{…}}}}, 600 levels, past the limit of 512.
    let value: Uint8Array = new Uint8Array()
    for (let level = 0; level < 600; level++) {
      const entry = concat([0x0a, 0x01, 0x61], lengthPrefixed(0x12, lengthPrefixed(0x2a, value))) // key "a", value: struct_value
      value = lengthPrefixed(0x0a, entry) // Struct.fields entry
    }
    const refused = getTask.response.toJson(lengthPrefixed(0x32, value))
    expect(Either.isLeft(refused) && refused.left).toMatch(/recursion/)
  })
})

const concat = (head: ReadonlyArray<number>, tail: Uint8Array) => Uint8Array.from([...head, ...tail])

const varint = (n: number): Array<number> => {
  const out: Array<number> = []
  for (; n > 0x7f; n >>>= 7) out.push((n & 0x7f) | 0x80)
  out.push(n)
  return out
}

const lengthPrefixed = (tag: number, body: Uint8Array): Uint8Array => {
  const head = [tag, ...varint(body.length)]
  const out = new Uint8Array(head.length + body.length)
  out.set(head)
  out.set(body, head.length)
  return out
}
