/** The transport group: the envelope of each binding, tried with requests a good client never sends. */
import { Effect } from "effect"
import { type CheckOutcome, failed, passed } from "../../domain/conformance.js"
import type { RawResponse } from "../../services/RawHttp.js"
import { type InterfaceContext, unknownTaskId } from "./context.js"
import { dialectOf, GRPC_CODES, grpcStatusOf, rawErrorOf, rawJsonRpc, rawOperation, shown, wireOf } from "./rawExchanges.js"

const expectRpcError = (response: RawResponse, code: number, name: string, expectedId?: unknown): CheckOutcome => {
  const error = rawErrorOf(response)
  if (error?.code !== code) return failed(`expected a JSON-RPC error ${code} (${name}), got ${shown(response)}`)
  if (expectedId !== undefined && error.id !== expectedId) {
    return failed(`the error carries id ${JSON.stringify(error.id)}, not the request's ${JSON.stringify(expectedId)}`)
  }
  return passed(`${code} ${name}`)
}

const parseError = (ctx: InterfaceContext) =>
  Effect.map(
    rawJsonRpc(ctx, `{"jsonrpc": "2.0", "id": "relay-check-parse", "method": `),
    (response) => expectRpcError(response, -32700, "Parse error")
  )

const invalidRequest = (ctx: InterfaceContext) =>
  Effect.map(
    rawJsonRpc(ctx, JSON.stringify({ jsonrpc: "2.0", id: "relay-check-invalid", params: {} })),
    (response) => expectRpcError(response, -32600, "Invalid Request")
  )

const methodNotFound = (ctx: InterfaceContext) => {
  const id = "relay-check-unknown-method"
  return Effect.map(
    rawJsonRpc(ctx, JSON.stringify({ jsonrpc: "2.0", id, method: "relay/NoSuchMethod", params: {} })),
    (response) => expectRpcError(response, -32601, "Method not found", id)
  )
}

const getUnknownTask = (ctx: InterfaceContext, version?: string) =>
  Effect.flatMap(
    wireOf(dialectOf(ctx).getTask, { id: unknownTaskId() }),
    (wire) => rawOperation(ctx, wire, version === undefined ? {} : { version })
  )

const jsonContentType = (ctx: InterfaceContext) =>
  Effect.map(getUnknownTask(ctx), (response) => {
    const type = response.headers["content-type"] ?? ""
    return /^application\/([a-z0-9.+-]*\+)?json\b/i.test(type)
      ? passed(type)
      : failed(`a GetTask answer came with Content-Type ${JSON.stringify(type)}, not JSON: ${shown(response)}`)
  })

const versionRefused = (ctx: InterfaceContext) =>
  Effect.map(getUnknownTask(ctx, "99.0"), (response) => {
    const error = rawErrorOf(response)
    const refused = error?.code === -32009 || error?.reason === "VERSION_NOT_SUPPORTED"
    if (!refused) return failed(`A2A-Version: 99.0 was not refused with VersionNotSupported: ${shown(response)}`)
    if (ctx.id.binding === "rest" && response.status !== 400) {
      return failed(`VersionNotSupported came with HTTP ${response.status}, not 400`)
    }
    const grpc = grpcStatusOf(response)
    if (grpc !== undefined && grpc.code !== GRPC_CODES.FAILED_PRECONDITION) {
      return failed(`VersionNotSupported came with gRPC status ${grpc.code}, not FAILED_PRECONDITION (9)`)
    }
    return passed("VersionNotSupported")
  })

const restErrorStatus = (ctx: InterfaceContext) =>
  Effect.map(getUnknownTask(ctx), (response) => {
    if (response.status !== 404) return failed(`GetTask of an unknown task answered HTTP ${response.status}, not 404: ${shown(response)}`)
    return rawErrorOf(response) === undefined
      ? failed(`the 404 has no error object in its body: ${shown(response)}`)
      : passed("404 with an error body")
  })

export const transportChecks = {
  "transport.parse-error": parseError,
  "transport.invalid-request": invalidRequest,
  "transport.method-not-found": methodNotFound,
  "transport.json-content-type": jsonContentType,
  "transport.version-refused": versionRefused,
  "transport.rest-error-status": restErrorStatus
} as const
