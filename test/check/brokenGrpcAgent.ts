// A 1.0 gRPC-only agent (its card served over HTTP by a stub) that gets gRPC's own rules wrong:
// an unknown task is NOT_FOUND without an ErrorInfo, a finished task's cancel is INTERNAL with an
// ErrorInfo of another domain, a call without a2a-version is refused as INVALID_ARGUMENT, and a
// streamed answer never ends. Its card also lists a JSON-RPC interface whose GetTask shows the task
// with an artifact gRPC leaves out. Everything else a check asks is answered plainly.
import * as grpc from "@grpc/grpc-js"
import { Either } from "effect"
import { A2A_ERROR_DOMAIN } from "../../src/a2a/errors.js"
import { byteServiceDefinition, encodeStatusDetails, GRPC_STATUS, grpcMethod, grpcService } from "../../src/a2a/grpcCodec.js"
import { startStub } from "../services/a2aClientHarness.js"

const TASK = { id: "t-done", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" } }

const bytesOf = (method: string, json: unknown) => Buffer.from(Either.getOrThrow(grpcMethod("1.0", method)!.response.toBinary(json)))

const requestOf = (method: string, bytes: Buffer) => Either.getOrThrow(grpcMethod("1.0", method)!.request.toJson(bytes)) as { id?: string }

const statusError = (code: number, details: string, trailer?: Uint8Array): grpc.ServiceError => {
  const metadata = new grpc.Metadata()
  if (trailer !== undefined) metadata.set("grpc-status-details-bin", Buffer.from(trailer))
  return Object.assign(new Error(details), { code, details, metadata })
}

type Unary = (call: grpc.ServerUnaryCall<Buffer, Buffer>, callback: grpc.sendUnaryData<Buffer>) => void

/** Refuses a call without a2a-version; else runs the handler. */
const versioned = (handler: Unary): Unary => (call, callback) =>
  call.metadata.get("a2a-version").length === 0
    ? callback(statusError(GRPC_STATUS.INVALID_ARGUMENT, "a2a-version is required"))
    : handler(call, callback)

const unknownTask = (callback: grpc.sendUnaryData<Buffer>) => callback(statusError(GRPC_STATUS.NOT_FOUND, "no such task"))

export const startBrokenGrpcAgent = async () => {
  const server = new grpc.Server()
  server.addService(byteServiceDefinition(grpcService("1.0")), {
    SendMessage: versioned((_call, callback) => callback(null, bytesOf("SendMessage", { task: TASK }))),
    GetTask: versioned((call, callback) =>
      requestOf("GetTask", call.request).id === TASK.id ? callback(null, bytesOf("GetTask", TASK)) : unknownTask(callback)
    ),
    CancelTask: versioned((call, callback) =>
      requestOf("CancelTask", call.request).id === TASK.id
        ? callback(
          statusError(GRPC_STATUS.INTERNAL, "done", encodeStatusDetails(GRPC_STATUS.INTERNAL, "done", "TASK_NOT_CANCELABLE"))
        )
        : unknownTask(callback)
    ),
    // The task, then nothing: the stream never ends.
    SendStreamingMessage: (call: grpc.ServerWritableStream<Buffer, Buffer>) => {
      call.write(bytesOf("SendStreamingMessage", { task: { ...TASK, status: { state: "TASK_STATE_WORKING" } } }))
    },
    SubscribeToTask: (call: grpc.ServerWritableStream<Buffer, Buffer>) =>
      call.emit("error", statusError(GRPC_STATUS.NOT_FOUND, "no such task"))
  } as grpc.UntypedServiceImplementation)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)))
  )
  const card = await startStub((baseUrl) => ({
    "POST /rpc": (request) => {
      const { id, method } = request.body as { id: unknown; method: string }
      const task = { ...TASK, artifacts: [{ artifactId: "a-1", parts: [{ text: "only over JSON-RPC" }] }] }
      return { body: { jsonrpc: "2.0", id, result: method === "SendMessage" ? { task } : task } }
    },
    "GET /.well-known/agent-card.json": () => ({
      body: {
        name: "Broken gRPC agent",
        description: "gRPC's rules, planted wrong",
        version: "1.0.0",
        supportedInterfaces: [
          { url: `127.0.0.1:${port}`, protocolBinding: "GRPC", protocolVersion: "1.0" },
          { url: `${baseUrl}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }
        ],
        capabilities: { streaming: true, pushNotifications: true },
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }]
      }
    })
  }))
  return {
    baseUrl: card.baseUrl,
    /** The ErrorInfo domain a right answer names (for the test's expectations). */
    domain: A2A_ERROR_DOMAIN,
    close: async () => {
      server.forceShutdown()
      await card.close()
    }
  }
}
