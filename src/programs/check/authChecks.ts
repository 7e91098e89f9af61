/** The auth group: an agent whose card asks for credentials refuses a request without them. */
import { Effect } from "effect"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { type InterfaceContext, unknownTaskId } from "./context.js"
import { dialectOf, GRPC_CODES, grpcStatusOf, rawOperation, shown, wireOf } from "./rawExchanges.js"

// GetTask of an id nobody has: refused for want of credentials before anything is looked up, and harmless.
const withoutCredentials = (ctx: InterfaceContext) =>
  Effect.flatMap(wireOf(dialectOf(ctx).getTask, { id: unknownTaskId() }), (wire) => rawOperation(ctx, wire, { credentials: false }))

/** 401 or 403 over HTTP; over gRPC, their codes UNAUTHENTICATED or PERMISSION_DENIED. */
const refused = (ctx: InterfaceContext) =>
  Effect.map(withoutCredentials(ctx), (response) => {
    const grpc = grpcStatusOf(response)
    if (ctx.id.binding === "grpc" && (grpc?.code === GRPC_CODES.UNAUTHENTICATED || grpc?.code === GRPC_CODES.PERMISSION_DENIED)) {
      return passed(`gRPC status ${grpc.code}`)
    }
    return ctx.id.binding !== "grpc" && (response.status === 401 || response.status === 403)
      ? passed(`HTTP ${response.status}`)
      : failed(`a request without credentials was answered ${shown(response)}`)
  })

const challenge = (ctx: InterfaceContext) =>
  Effect.map(withoutCredentials(ctx), (response) => {
    if (response.status !== 401) return skipped(`the refusal is HTTP ${response.status}, not 401`)
    const header = response.headers["www-authenticate"]
    return header === undefined ? failed("the 401 has no WWW-Authenticate header") : passed(header)
  })

export const authChecks = {
  "auth.refused-without-credentials": refused,
  "auth.challenge": challenge
} as const
