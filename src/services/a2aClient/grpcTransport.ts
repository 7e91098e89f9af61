/**
 * The gRPC binding: each operation a call of the generation's A2AService, its message the ProtoJSON
 * the dialect made, as bytes. @grpc/grpc-js and the codec load with the first gRPC operation
 * (grpcCalls.ts), so commands that speak JSON-RPC or REST never load them.
 */
import { Effect } from "effect"
import type { Transport } from "./transport.js"

const calls = Effect.promise(() => import("./grpcCalls.js"))

export const grpcTransport: Transport<"Grpc"> = {
  unary: (state, target, endpoint, wire) => Effect.flatMap(calls, (grpc) => grpc.unary(state, target, endpoint, wire)),
  stream: (state, target, endpoint, wire) => Effect.flatMap(calls, (grpc) => grpc.stream(state, target, endpoint, wire))
}
