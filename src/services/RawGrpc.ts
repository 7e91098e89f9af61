/**
 * RawGrpc: one gRPC call exactly as given, for the conformance checks that must send what a
 * well-behaved client never would (no `a2a-version`, an unknown one, no credentials) and read the
 * answer as it is: every message's bytes, the status code, its details and the
 * `grpc-status-details-bin` trailer. Unary and server-streaming calls are the same on the wire
 * (one request, messages until the status), so one call reads both. Bounded: the timeout is the
 * call's deadline, and the messages read stop at a byte cap (`truncated`).
 * @grpc/grpc-js loads with the first call (rawGrpcCall.ts), so only a check of a gRPC interface loads it.
 */
import { Context, type Duration, Effect, Layer } from "effect"
import type { AgentUnreachable, RequestTimeout } from "../domain/clientErrors.js"

export interface RawGrpcRequest {
  /** `https://host:port` (TLS with the system's roots) or `http://host:port` (plaintext, h2c). */
  readonly url: string
  /** The HTTP/2 path, e.g. `/lf.a2a.v1.A2AService/GetTask`. */
  readonly path: string
  /** The request message's bytes, as is. */
  readonly message: Uint8Array
  /** Sent as is (names lower-cased, as gRPC has them). */
  readonly metadata: Readonly<Record<string, string>>
  readonly timeout: Duration.DurationInput
  /** Bytes of messages read at most; the call is cancelled past it (`truncated`). */
  readonly maxBytes: number
}

export interface RawGrpcResponse {
  /** The gRPC status code (0 OK). */
  readonly code: number
  readonly details: string
  /** The `grpc-status-details-bin` trailer (a binary google.rpc.Status), when sent. */
  readonly statusDetails: Uint8Array | undefined
  readonly messages: ReadonlyArray<Uint8Array>
  readonly truncated: boolean
}

export class RawGrpc extends Context.Tag("relay/RawGrpc")<RawGrpc, {
  readonly call: (request: RawGrpcRequest) => Effect.Effect<RawGrpcResponse, AgentUnreachable | RequestTimeout>
}>() {}

const call = (request: RawGrpcRequest) => Effect.flatMap(Effect.promise(() => import("./rawGrpcCall.js")), (module) => module.call(request))

export const layer = Layer.succeed(RawGrpc, { call })
