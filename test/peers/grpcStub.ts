// A hand-made A2A gRPC server for tests: relay's own codec's service definition (bytes in and out)
// on 127.0.0.1:0, each method answered by the test's handler, with what each call carried and
// how many the client cancelled; and the HTTP stub that serves a card listing it.
import * as grpc from "@grpc/grpc-js"
import { Either } from "effect"
import { byteServiceDefinition, grpcMethod, grpcService } from "../../src/a2a/grpcCodec.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import { startStub, type Stub } from "../services/a2aClientHarness.js"

export type GrpcHandler = (
  call: grpc.ServerUnaryCall<Buffer, Buffer> & grpc.ServerWritableStream<Buffer, Buffer>,
  callback: grpc.sendUnaryData<Buffer>
) => void

export interface GrpcStub {
  address: string
  /** Each call's metadata, in arrival order. */
  readonly metadata: Array<Record<string, unknown>>
  /** Calls the client cancelled (or whose deadline passed). */
  cancelled: number
  close(): void
}

export const startGrpcStub = async (version: ProtocolVersion, handlers: Readonly<Record<string, GrpcHandler>>): Promise<GrpcStub> => {
  const server = new grpc.Server()
  const stub: GrpcStub = { address: "", metadata: [], cancelled: 0, close: () => server.forceShutdown() }
  const implementation = Object.fromEntries(
    Object.entries(handlers).map(([name, handler]) => [name, (call: Parameters<GrpcHandler>[0], callback: grpc.sendUnaryData<Buffer>) => {
      stub.metadata.push(call.metadata.getMap())
      call.on("cancelled", () => stub.cancelled++)
      handler(call, callback)
    }])
  )
  server.addService(byteServiceDefinition(grpcService(version)), implementation as grpc.UntypedServiceImplementation)
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound)))
  )
  stub.address = `127.0.0.1:${port}`
  return stub
}

/** The bytes of a method's answer given as ProtoJSON. */
export const answerBytes = (version: ProtocolVersion, method: string, json: unknown): Buffer =>
  Buffer.from(Either.getOrThrow(grpcMethod(version, method)!.response.toBinary(json)))

/** A card (served over HTTP by a stub) listing a gRPC interface at `address` for each version, in order. */
export const grpcCardStub = (address: string, ...versions: ReadonlyArray<ProtocolVersion>): Promise<Stub> =>
  startStub((baseUrl) => ({
    "GET /.well-known/agent-card.json": () => ({
      body: {
        name: "hand-made",
        description: "gRPC only",
        version: "1",
        supportedInterfaces: versions.map((version) => ({ url: address, protocolBinding: "GRPC", protocolVersion: version })),
        capabilities: { streaming: true },
        defaultInputModes: ["text/plain"],
        defaultOutputModes: ["text/plain"],
        skills: [],
        provider: { organization: "tests", url: baseUrl }
      }
    })
  }))

/** Resolves once `check` holds; rejects after 5 s. */
export const waitFor = (check: () => boolean, what = "a condition") =>
  new Promise<void>((resolve, reject) => {
    const started = Date.now()
    const timer = setInterval(() => {
      if (check()) {
        clearInterval(timer)
        resolve()
      } else if (Date.now() - started > 5000) {
        clearInterval(timer)
        reject(new Error(`timed out waiting for ${what}`))
      }
    }, 10)
  })
