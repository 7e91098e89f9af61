/** The messaging group: SendMessage answered, its task well formed, its errors right. */
import { Effect, Option, Ref } from "effect"
import * as V1 from "../../a2a/v1.js"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import { expectProtocolError, firstAnswer, firstTask, type InterfaceContext, orFailed, sendCounted, unknownTaskId, userMessage } from "./context.js"
import { dialectOf, rawErrorOf, rawOperation, shown, wireOf } from "./rawExchanges.js"

const send = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const answer = yield* sendCounted(ctx, { message: userMessage() })
    yield* Ref.set(ctx.firstAnswer, Option.some(answer))
    return "task" in answer ? passed(`a Task, ${answer.task.status.state}`) : passed("a Message")
  }))

const taskShape = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const answer = yield* Effect.either(firstAnswer(ctx))
    if (answer._tag === "Left") return skipped(`no answer to look at: ${answer.left}`)
    if (!("task" in answer.right)) return skipped("the agent answered with a Message, not a Task")
    const task = answer.right.task
    if (task.id === "") return failed("the task has an empty id")
    if ((task.contextId ?? "") === "") return failed("the task has no contextId")
    if (!V1.TASK_STATES.includes(task.status.state) || task.status.state === "TASK_STATE_UNSPECIFIED") {
      return failed(`the task's state ${task.status.state} is not a known state`)
    }
    return passed(`task ${task.id}, ${task.status.state}`)
  })

const unknownTask = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    return yield* client.send(ctx.target, { message: userMessage({ taskId: unknownTaskId() }) }).pipe(
      Effect.match({
        onSuccess: () => failed("a message naming a task that does not exist was accepted"),
        onFailure: expectProtocolError(-32001, "TaskNotFound")
      })
    )
  })

const invalidParams = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const wire = yield* wireOf(dialectOf(ctx).send, { message: userMessage({ parts: [] }) })
    const response = yield* rawOperation(ctx, wire)
    const error = rawErrorOf(response)
    const refused = ctx.id.binding === "jsonrpc" ? error?.code === -32602 : response.status === 400 && error !== undefined
    return refused
      ? passed(ctx.id.binding === "jsonrpc" ? "-32602 Invalid params" : "HTTP 400")
      : failed(`a message without parts was not refused as invalid: ${shown(response)}`)
  })

const contextKept = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const contextId = task.contextId ?? ""
    if (contextId === "") return skipped("the first task has no contextId")
    const answer = yield* sendCounted(ctx, { message: userMessage({ contextId }) })
    const next = "task" in answer ? answer.task.contextId : answer.message.contextId
    return next === contextId ? passed(`context ${contextId} kept`) : failed(`the follow-up came back in context ${next ?? "(none)"}, not ${contextId}`)
  }))

export const messagingChecks = {
  "messaging.send": send,
  "messaging.task-shape": taskShape,
  "messaging.unknown-task": unknownTask,
  "messaging.invalid-params": invalidParams,
  "messaging.context-kept": contextKept
} as const
