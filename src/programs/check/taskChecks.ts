/** The tasks group: GetTask, ListTasks and CancelTask on the tasks the run created. */
import { Effect, Predicate } from "effect"
import * as V1 from "../../a2a/v1.js"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import { expectProtocolError, firstTask, type InterfaceContext, orFailed, sendCounted, unknownTaskId, userMessage } from "./context.js"
import { dialectOf, rawOperation, resultOf, shown, wireOf } from "./rawExchanges.js"

const getTask = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const client = yield* A2aClient
    const found = yield* Effect.mapError(client.getTask(ctx.target, { id: task.id }), (error) => error.message)
    return found.id === task.id ? passed(`${found.id}, ${found.status.state}`) : failed(`GetTask(${task.id}) returned task ${found.id}`)
  }))

const getUnknown = (ctx: InterfaceContext) =>
  Effect.flatMap(A2aClient, (client) =>
    client.getTask(ctx.target, { id: unknownTaskId() }).pipe(
      Effect.match({
        onSuccess: (task) => failed(`GetTask of an id never given out returned task ${task.id}`),
        onFailure: expectProtocolError(-32001, "TaskNotFound")
      })
    ))

// Raw: our client trims history itself for agents that ignore historyLength, which would hide it.
const historyLength = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const wire = yield* wireOf(dialectOf(ctx).getTask, { id: task.id, historyLength: 0 })
    const response = yield* Effect.mapError(rawOperation(ctx, wire), (error) => error.message)
    const result = resultOf(ctx, response)
    if (!Predicate.isRecord(result)) return failed(`GetTask did not answer with a task: ${shown(response)}`)
    const history = result["history"]
    return Array.isArray(history) && history.length > 0
      ? failed(`historyLength 0 still returned ${history.length} history message(s)`)
      : passed("no history")
  }))

const listTasks = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const encode = dialectOf(ctx).listTasks
    if (encode === undefined) return skipped("this protocol version has no ListTasks")
    yield* firstTask(ctx).pipe(Effect.ignore)
    const wire = yield* wireOf(encode, { pageSize: 10 })
    const response = yield* Effect.mapError(rawOperation(ctx, wire), (error) => error.message)
    const result = resultOf(ctx, response)
    if (!Predicate.isRecord(result) || !Array.isArray(result["tasks"])) return failed(`ListTasks did not answer with a task list: ${shown(response)}`)
    if (typeof result["nextPageToken"] !== "string") return failed("the answer has no nextPageToken (it must be present, \"\" on the last page)")
    return passed(`${result["tasks"].length} task(s)`)
  }))

const cancelTerminal = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const client = yield* A2aClient
    // The first send blocks until the task settles; a task still going is looked at once more.
    const now = yield* Effect.mapError(client.getTask(ctx.target, { id: task.id }), (error) => error.message)
    if (!V1.isTerminalState(now.status.state)) return skipped(`the task is ${now.status.state}, not finished, so there is no finished task to cancel`)
    return yield* client.cancelTask(ctx.target, { id: task.id }).pipe(
      Effect.match({
        onSuccess: (after) => failed(`cancelling a ${now.status.state} task succeeded (now ${after.status.state})`),
        onFailure: expectProtocolError(-32002, "TaskNotCancelable")
      })
    )
  }))

const cancelWorking = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const answer = yield* sendCounted(ctx, { message: userMessage(), configuration: { returnImmediately: true } })
    if (!("task" in answer)) return skipped("the agent answered with a Message, so no task stays working")
    const state = answer.task.status.state
    if (V1.isSettledState(state)) {
      return skipped(`the agent finished the task at once (${state}); this needs a task that stays working (e.g. relay server agent -m mock --latency 2s)`)
    }
    const client = yield* A2aClient
    const cancel = yield* Effect.either(client.cancelTask(ctx.target, { id: answer.task.id }))
    if (cancel._tag === "Right") {
      const after = cancel.right.status.state
      return after === "TASK_STATE_CANCELED" ? passed("canceled") : failed(`the task came back ${after}, not TASK_STATE_CANCELED`)
    }
    // The task may have finished between the answer and the cancel: that is no fault of the agent's.
    const now = yield* Effect.either(client.getTask(ctx.target, { id: answer.task.id }))
    if (cancel.left._tag === "ProtocolError" && cancel.left.a2aCode === -32002 && now._tag === "Right" && V1.isTerminalState(now.right.status.state)) {
      return skipped(`the task finished (${now.right.status.state}) before the cancel arrived; this needs a task that stays working (e.g. relay server agent -m mock --latency 2s)`)
    }
    return failed(`cancelling a ${state} task failed: ${cancel.left.message}`)
  }))

export const taskChecks = {
  "tasks.get": getTask,
  "tasks.get-unknown": getUnknown,
  "tasks.history-length": historyLength,
  "tasks.list": listTasks,
  "tasks.cancel-terminal": cancelTerminal,
  "tasks.cancel-working": cancelWorking
} as const
