/**
 * The gRPC binding's codec: binary protobuf ⇄ the ProtoJSON relay's model already reads and writes
 * (protoJson.ts). gRPC carries the very messages whose JSON the HTTP+JSON binding sends, so a
 * gRPC dialect is the REST one's bodies, and this file only turns them into bytes and back, with
 * the descriptors generated from the specification's protos (src/a2a/schemas/*_pb.ts,
 * scripts/gen-grpc-descriptors.mjs): `lf.a2a.v1.A2AService` for 1.0, `a2a.v1.A2AService` for 0.3.
 *
 * Also the `google.rpc.Status` with its `ErrorInfo` that gRPC errors carry in the
 * `grpc-status-details-bin` trailer, and the service definitions @grpc/grpc-js takes, which pass
 * bytes through untouched: each side decodes what it receives itself, where a malformed message
 * can be answered as the binding says (the server's INVALID_ARGUMENT, the client's InvalidResponse).
 *
 * Loaded only by the code that speaks gRPC (it pulls in @bufbuild/protobuf and the descriptors).
 */
import { create, type DescMessage, fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf"
import type { GenService, GenServiceMethods } from "@bufbuild/protobuf/codegenv2"
import { anyPack, anyUnpack } from "@bufbuild/protobuf/wkt"
import { Either } from "effect"
import { A2A_ERROR_DOMAIN } from "./errors.js"
import { protoBinaryToJson } from "./protoBinaryToJson.js"
import type { ProtocolVersion } from "./protocolVersion.js"
import { protoJsonToBinary } from "./protoJsonToBinary.js"
import { A2AService as A2AServiceV03 } from "./schemas/a2aV03_pb.js"
import { A2AService as A2AServiceV1 } from "./schemas/a2aV1_pb.js"
import { ErrorInfoSchema } from "./schemas/rpcErrorDetails_pb.js"
import { StatusSchema } from "./schemas/rpcStatus_pb.js"

/** The metadata key (a trailer) that carries a binary `google.rpc.Status`. */
export const STATUS_DETAILS_KEY = "grpc-status-details-bin"

/** gRPC status codes by name (grpc/doc/statuscodes.md). */
export const GRPC_STATUS = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  ABORTED: 10,
  OUT_OF_RANGE: 11,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  DATA_LOSS: 15,
  UNAUTHENTICATED: 16
} as const

export type GrpcStatusName = keyof typeof GRPC_STATUS

/** `5` → `"NOT_FOUND"`; a code gRPC does not define reads as `"UNKNOWN"`. */
export const grpcStatusName = (code: number): GrpcStatusName =>
  (Object.keys(GRPC_STATUS) as Array<GrpcStatusName>).find((name) => GRPC_STATUS[name] === code) ?? "UNKNOWN"

/**
 * Message nesting the decoder follows, then refuses (so hostile bytes cannot overflow the stack):
 * a Struct value costs about two levels per level of JSON, so this is room for twice the deepest
 * JSON relay reads from an agent (MAX_AGENT_JSON_DEPTH, 128), whose limits apply to the JSON after.
 */
const RECURSION_LIMIT = 512

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** One message type's two encodings. */
export interface MessageCodec {
  /** The proto's full name, e.g. `lf.a2a.v1.SendMessageRequest`. */
  readonly typeName: string
  /** ProtoJSON → the message's bytes (unknown JSON fields are ignored, as ProtoJSON readers may). */
  readonly toBinary: (json: unknown) => Either.Either<Uint8Array, string>
  /** Bytes → ProtoJSON: JSON names, enums by name, default values left out. */
  readonly toJson: (bytes: Uint8Array) => Either.Either<JsonValue, string>
}

const messageCodec = (schema: DescMessage): MessageCodec => ({
  typeName: schema.typeName,
  toBinary: (json) => {
    // The plain shapes relay writes go straight to bytes; the rest (and every error) through the library.
    const direct = protoJsonToBinary(schema, json)
    return direct !== undefined ? Either.right(direct) : Either.try({
      try: () => toBinary(schema, fromJson(schema, json as JsonValue, { ignoreUnknownFields: true })),
      catch: reasonOf
    })
  },
  toJson: (bytes) => {
    // Plainly encoded bytes go straight to JSON; the rest (and every error) through the library.
    const direct = protoBinaryToJson(schema, bytes)
    return direct !== undefined ? Either.right(direct) : Either.try({
      try: () => toJson(schema, fromBinary(schema, bytes, { readUnknownFields: false, recursionLimit: RECURSION_LIMIT })),
      catch: reasonOf
    })
  }
})

/** One method of a service. */
export interface GrpcMethod {
  /** The proto's name, e.g. `SendMessage`. */
  readonly name: string
  /** The HTTP/2 path, e.g. `/lf.a2a.v1.A2AService/SendMessage`. */
  readonly path: string
  /** The answer is a stream of messages (SendStreamingMessage, SubscribeToTask / TaskSubscription). */
  readonly serverStreaming: boolean
  readonly request: MessageCodec
  readonly response: MessageCodec
}

/** An A2A service: the 1.0 one, or the 0.3 one. */
export interface GrpcService {
  readonly version: ProtocolVersion
  /** The proto's full name, e.g. `lf.a2a.v1.A2AService`. */
  readonly name: string
  /** By the proto's method name. */
  readonly methods: Readonly<Record<string, GrpcMethod>>
}

const serviceOf = (version: ProtocolVersion, service: GenService<GenServiceMethods>): GrpcService => ({
  version,
  name: service.typeName,
  methods: Object.fromEntries(service.methods.map((method) => [method.name, {
    name: method.name,
    path: `/${service.typeName}/${method.name}`,
    serverStreaming: method.methodKind === "server_streaming",
    request: messageCodec(method.input),
    response: messageCodec(method.output)
  }]))
})

let services: Readonly<Record<ProtocolVersion, GrpcService>> | undefined

/** The A2A service of a protocol generation: `lf.a2a.v1.A2AService` (1.0) or `a2a.v1.A2AService` (0.3). */
export const grpcService = (version: ProtocolVersion): GrpcService =>
  (services ??= { "1.0": serviceOf("1.0", A2AServiceV1), "0.3": serviceOf("0.3", A2AServiceV03) })[version]

/** A method of a generation's service by its proto name; undefined where that generation has none. */
export const grpcMethod = (version: ProtocolVersion, name: string): GrpcMethod | undefined =>
  Object.hasOwn(grpcService(version).methods, name) ? grpcService(version).methods[name] : undefined

const passBytes = (bytes: Buffer): Buffer => bytes

/** One method as @grpc/grpc-js's `MethodDefinition` has it, bytes in and out. */
export interface ByteMethodDefinition {
  readonly path: string
  readonly requestStream: false
  readonly responseStream: boolean
  readonly requestSerialize: (value: Buffer) => Buffer
  readonly requestDeserialize: (bytes: Buffer) => Buffer
  readonly responseSerialize: (value: Buffer) => Buffer
  readonly responseDeserialize: (bytes: Buffer) => Buffer
  readonly originalName: string
}

/**
 * A service as @grpc/grpc-js's `ServiceDefinition` (for `Server.addService` and
 * `makeGenericClientConstructor`), keyed by the proto's method names, every message passed as its
 * bytes: encode with `request.toBinary` / `response.toBinary`, decode with `toJson`.
 */
export const byteServiceDefinition = (service: GrpcService): Readonly<Record<string, ByteMethodDefinition>> =>
  Object.fromEntries(
    Object.values(service.methods).map((method) => [method.name, {
      path: method.path,
      requestStream: false,
      responseStream: method.serverStreaming,
      requestSerialize: passBytes,
      requestDeserialize: passBytes,
      responseSerialize: passBytes,
      responseDeserialize: passBytes,
      originalName: method.name
    }])
  )

// ---------------------------------------------------------------------------
// google.rpc.Status and ErrorInfo
// ---------------------------------------------------------------------------

/** What a `google.rpc.Status` says, with its first `ErrorInfo` (the one A2A errors carry). */
export interface StatusDetails {
  readonly code: number
  readonly message: string
  readonly errorInfo?: {
    readonly reason: string
    readonly domain: string
    readonly metadata: Readonly<Record<string, string>>
  }
}

/** A `google.rpc.Status` as bytes: the code, the message and an A2A `ErrorInfo` (domain a2a-protocol.org). */
export const encodeStatusDetails = (
  code: number,
  message: string,
  reason: string,
  metadata: Readonly<Record<string, string>> = {}
): Uint8Array =>
  toBinary(
    StatusSchema,
    create(StatusSchema, {
      code,
      message,
      details: [anyPack(ErrorInfoSchema, create(ErrorInfoSchema, { reason, domain: A2A_ERROR_DOMAIN, metadata: { ...metadata } }))]
    })
  )

/** The `google.rpc.Status` of a `grpc-status-details-bin` trailer; details other than ErrorInfo are skipped. */
export const decodeStatusDetails = (bytes: Uint8Array): Either.Either<StatusDetails, string> =>
  Either.try({
    try: () => {
      const status = fromBinary(StatusSchema, bytes, { readUnknownFields: false })
      for (const detail of status.details) {
        const info = anyUnpack(detail, ErrorInfoSchema)
        if (info !== undefined) {
          return {
            code: status.code,
            message: status.message,
            errorInfo: { reason: info.reason, domain: info.domain, metadata: { ...info.metadata } }
          }
        }
      }
      return { code: status.code, message: status.message }
    },
    catch: reasonOf
  })
