/**
 * RawGrpc: one gRPC call exactly as given, for the conformance checks that must send what a
 * well-behaved client never would (no `a2a-version`, an unknown one, no credentials) and read the
 * answer as it is: every message's bytes, the status code, its details and the
 * `grpc-status-details-bin` trailer. Unary and server-streaming calls are the same on the wire
 * (one request, messages until the status), so one call reads both. Bounded: the timeout is the
 * call's deadline, and the messages read stop at a byte cap (`truncated`).
 * @grpc/grpc-js loads with the first call (rawGrpcCall.ts), so only a check of a gRPC interface loads it.
 */
import { Context, Effect, Layer } from "effect"
import type { AgentUnreachable, RequestTimeout } from "../domain/clientErrors.js"
import type { RawGrpcRequest, RawGrpcResponse } from "./rawGrpcCall.js"

export type { RawGrpcRequest, RawGrpcResponse } from "./rawGrpcCall.js"

export class RawGrpc extends Context.Tag("relay/RawGrpc")<RawGrpc, {
  readonly call: (request: RawGrpcRequest) => Effect.Effect<RawGrpcResponse, AgentUnreachable | RequestTimeout>
}>() {}

const call = (request: RawGrpcRequest) => Effect.flatMap(Effect.promise(() => import("./rawGrpcCall.js")), (module) => module.call(request))

export const layer = Layer.succeed(RawGrpc, { call })
