/**
 * The gRPC checks of the transport group: each A2A error is the status code §5.4 gives it, with a
 * google.rpc.ErrorInfo naming its reason in the domain a2a-protocol.org (1.0; 0.3 defines the codes
 * only), and a call without `a2a-version` is taken as 0.3 (the a2a-java #1004 trap).
 */
import { Effect } from "effect"
import { A2A_ERROR_DOMAIN, A2A_ERRORS, type ErrorSpec } from "../../a2a/errors.js"
import * as V1 from "../../a2a/v1.js"
import { type CheckOutcome, failed, passed } from "../../domain/conformance.js"
import type { RawGrpc } from "../../services/RawGrpc.js"
import type { RawHttp, RawResponse } from "../../services/RawHttp.js"
import { firstTask, type InterfaceContext, unknownTaskId } from "./context.js"
import { dialectOf, GRPC_CODES, grpcStatusOf, rawOperation, type RawOptions, shown, wireOf } from "./rawExchanges.js"

/** Why an answer is not the gRPC form of this A2A error; undefined when it is. */
const misfit = (ctx: InterfaceContext, expected: ErrorSpec, response: RawResponse): string | undefined => {
  const status = grpcStatusOf(response)
  const code = GRPC_CODES[expected.grpcStatus]
  if (status === undefined || status.code !== code) return `not ${expected.grpcStatus} (${code}) but ${shown(response)}`
  // 0.3 defines the status codes only; an ErrorInfo it sends must still name the right reason.
  if (status.reason === undefined) return ctx.id.protocol === "1.0" ? "no google.rpc.ErrorInfo in grpc-status-details-bin" : undefined
  if (status.reason !== expected.reason) return `ErrorInfo reason ${status.reason}, not ${expected.reason}`
  return status.domain === A2A_ERROR_DOMAIN ? undefined : `ErrorInfo domain ${JSON.stringify(status.domain)}, not ${A2A_ERROR_DOMAIN}`
}

/** One error case: what is sent, and the A2A error it must be answered with. */
interface ErrorCase {
  readonly what: string
  readonly expected: ErrorSpec
  readonly send: Effect.Effect<RawResponse, unknown, RawHttp | RawGrpc>
}

/** The raw answer to one operation of the interface's dialect. */
const sent = <A, I>(ctx: InterfaceContext, op: Parameters<typeof wireOf<A, I>>[0], input: I, options: RawOptions = {}) =>
  Effect.flatMap(wireOf(op, input), (wire) => rawOperation(ctx, wire, options))

const unknownTaskCases = (ctx: InterfaceContext): ReadonlyArray<ErrorCase> => {
  const dialect = dialectOf(ctx)
  const id = { id: unknownTaskId() }
  return [
    { what: "GetTask of an unknown task", expected: A2A_ERRORS.TaskNotFound, send: sent(ctx, dialect.getTask, id) },
    { what: "CancelTask of an unknown task", expected: A2A_ERRORS.TaskNotFound, send: sent(ctx, dialect.cancelTask, id) },
    ...(ctx.card.capabilities.streaming === true
      ? [{ what: "SubscribeToTask of an unknown task", expected: A2A_ERRORS.TaskNotFound, send: sent(ctx, dialect.subscribe, id) }]
      : [])
  ]
}

/** A finished task cannot be canceled; a task still going is no case (tasks.cancel-working covers it). */
const notCancelableCase = (ctx: InterfaceContext) =>
  Effect.map(
    Effect.either(firstTask(ctx)),
    (task): ReadonlyArray<ErrorCase> =>
      task._tag === "Right" && V1.isTerminalState(task.right.status.state)
        ? [{
          what: `CancelTask of a task in ${task.right.status.state}`,
          expected: A2A_ERRORS.TaskNotCancelable,
          send: sent(ctx, dialectOf(ctx).cancelTask, { id: task.right.id })
        }]
        : []
  )

/** Without the capability, a push config is refused as not supported. */
const pushCase = (ctx: InterfaceContext): ReadonlyArray<ErrorCase> =>
  ctx.card.capabilities.pushNotifications === true ? [] : [{
    what: "a push config on an agent without push notifications",
    expected: A2A_ERRORS.PushNotificationNotSupported,
    send: sent(ctx, dialectOf(ctx).createPushConfig, { taskId: unknownTaskId(), url: "https://example.invalid/relay-check" })
  }]

const versionCase = (ctx: InterfaceContext): ReadonlyArray<ErrorCase> => [{
  what: "a2a-version 99.0",
  expected: A2A_ERRORS.VersionNotSupported,
  send: sent(ctx, dialectOf(ctx).getTask, { id: unknownTaskId() }, { version: "99.0" })
}]

const errorStatus = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const cases = [...unknownTaskCases(ctx), ...(yield* notCancelableCase(ctx)), ...pushCase(ctx), ...versionCase(ctx)]
    const faults: Array<string> = []
    for (const { expected, send, what } of cases) {
      const fault = misfit(ctx, expected, yield* send)
      if (fault !== undefined) faults.push(`${what}: ${fault}`)
    }
    return faults.length === 0
      ? passed(cases.map((c) => `${c.what}: ${c.expected.grpcStatus} ${c.expected.reason}`).join("; "))
      : failed(faults.join("; "))
  })

/** Whether the card offers A2A 0.3 anywhere (an empty a2a-version asks for it). */
const offers03 = (ctx: InterfaceContext) =>
  ctx.id.protocol === "0.3" || (ctx.card.supportedInterfaces ?? []).some((i) => i.protocolVersion.startsWith("0.3"))

const versionEmpty = (ctx: InterfaceContext) =>
  Effect.map(
    sent(ctx, dialectOf(ctx).getTask, { id: unknownTaskId() }, { version: undefined }),
    (response): CheckOutcome => {
      const served = misfit(ctx, A2A_ERRORS.TaskNotFound, response)
      if (served === undefined) return passed("served: GetTask of an unknown task answered NOT_FOUND TASK_NOT_FOUND")
      if (!offers03(ctx) && misfit(ctx, A2A_ERRORS.VersionNotSupported, response) === undefined) {
        return passed("refused as VersionNotSupported: the card offers no 0.3, which an empty a2a-version means")
      }
      const refused = grpcStatusOf(response)?.reason === A2A_ERRORS.VersionNotSupported.reason
      return failed(
        refused
          ? "a call without a2a-version was refused as VersionNotSupported, but an empty a2a-version means 0.3, which the card offers"
          : `GetTask of an unknown task without a2a-version: ${served}`
      )
    }
  )

export const grpcChecks = {
  "transport.grpc-error-status": errorStatus,
  "transport.grpc-version-empty": versionEmpty
} as const
