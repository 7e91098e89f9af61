/** The messaging group: SendMessage answered, its task well formed, its errors right, its follow-ups taken. */
import { Effect, Option, Predicate } from "effect"
import * as V1 from "../../a2a/v1.js"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import {
  expectProtocolError,
  finishedMeanwhile,
  firstAnswer,
  firstTask,
  INPUT_REQUIRED_TEXT,
  type InterfaceContext,
  orFailed,
  recordTask,
  sendCounted,
  skipWith,
  stateSent,
  unknownTaskId,
  userMessage,
  withinBudget,
  workingTask
} from "./context.js"
import { dialectOf, invalidName, rawOperation, refusedAsInvalid, resultOf, shown, wireOf } from "./rawExchanges.js"

// The first answer, unless a check before (transport.grpc-error-status) has sent it already.
const send = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const answer = yield* firstAnswer(ctx)
    return "task" in answer ? passed(`a Task, ${stateSent(answer.task.status)}`) : passed("a Message")
  }))

const taskShape = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const answer = yield* Effect.either(firstAnswer(ctx))
    if (answer._tag === "Left") return skipped(`no answer to look at: ${answer.left}`)
    if (!("task" in answer.right)) return skipped("the agent answered with a Message, not a Task")
    const task = answer.right.task
    if (task.id === "") return failed("the task has an empty id")
    if ((task.contextId ?? "") === "") return failed("the task has no contextId")
    if (task.status.unknownState !== undefined || task.status.state === "TASK_STATE_UNSPECIFIED") {
      return failed(`the task's state ${stateSent(task.status)} is not a known state`)
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
    return refusedAsInvalid(ctx, response)
      ? passed(invalidName(ctx))
      : failed(`a message without parts was not refused as invalid: ${shown(response)}`)
  })

/** The v0.3 JSON-RPC params of a message whose parts have lost their `kind`. */
const withoutKinds = (params: unknown): unknown => {
  if (!Predicate.isRecord(params) || !Predicate.isRecord(params["message"])) return params
  const message = params["message"]
  const parts = Array.isArray(message["parts"]) ? message["parts"] : []
  return {
    ...params,
    message: {
      ...message,
      parts: parts.map((part) =>
        Predicate.isRecord(part)
          ? Object.fromEntries(Object.entries(part).filter(([key]) => key !== "kind"))
          : part
      )
    }
  }
}

/** A v0.3 Part is one of TextPart, FilePart, DataPart, told apart by `kind` (§6.5): without it, the params are invalid. */
const partWithoutKind = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    // An agent that wrongly accepts it creates a task: that one counts against the budget too.
    yield* withinBudget(ctx)
    const wire = yield* wireOf(dialectOf(ctx).send, { message: userMessage() })
    const response = yield* Effect.mapError(
      rawOperation(ctx, wire._tag === "JsonRpc" ? { ...wire, params: withoutKinds(wire.params) } : wire),
      (error) => error.message
    )
    if (refusedAsInvalid(ctx, response)) return passed(invalidName(ctx))
    const taken = yield* Effect.option(wire.decode(resultOf(ctx, response)))
    if (Option.isSome(taken) && "task" in taken.value) yield* recordTask(ctx, taken.value.task.id, stateSent(taken.value.task.status))
    return failed(`a message whose part has no kind was not refused with -32602: ${shown(response)}`)
  }))

const contextKept = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const contextId = task.contextId ?? ""
    if (contextId === "") return skipped("the first task has no contextId")
    const answer = yield* sendCounted(ctx, { message: userMessage({ contextId }) })
    const next = "task" in answer ? answer.task.contextId : answer.message.contextId
    return next === contextId
      ? passed(`context ${contextId} kept`)
      : failed(`the follow-up came back in context ${next ?? "(none)"}, not ${contextId}`)
  }))

/** Sends a follow-up with the task's id; the answer must be that task (or a Message in it). */
const followUp = (ctx: InterfaceContext, task: V1.Task, configuration?: V1.SendMessageConfiguration) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const message = userMessage({ taskId: task.id, ...(task.contextId === undefined ? {} : { contextId: task.contextId }) })
    const answer = yield* Effect.either(client.send(ctx.target, configuration === undefined ? { message } : { message, configuration }))
    if (answer._tag === "Left") return answer
    const reply = answer.right
    const taskId = "task" in reply ? reply.task.id : reply.message.taskId
    if ("task" in reply && taskId !== task.id) yield* recordTask(ctx, reply.task.id, stateSent(reply.task.status))
    return taskId === task.id
      ? answer
      : yield* Effect.fail(
        `the follow-up to task ${task.id} came back ${"task" in reply ? `as another task, ${taskId}` : "as a Message outside the task"}`
      )
  })

const followUpInputRequired = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const answer = yield* sendCounted(ctx, { message: userMessage({}, INPUT_REQUIRED_TEXT) })
    if (!("task" in answer)) return yield* skipWith("the agent answered with a Message, so no task waits for input")
    const task = answer.task
    if (task.status.state !== "TASK_STATE_INPUT_REQUIRED") {
      return yield* skipWith(
        `the agent did not ask for input (asked "${INPUT_REQUIRED_TEXT}", the task is ${
          stateSent(task.status)
        }); this needs an agent that does (e.g. relay server agent -m mock)`
      )
    }
    const next = yield* followUp(ctx, task)
    if (next._tag === "Left") {
      return failed(`a message continuing task ${task.id}, which waits for input, was refused: ${next.left.message}`)
    }
    return passed(`task ${task.id} continued${"task" in next.right ? `, now ${stateSent(next.right.task.status)}` : ""}`)
  }))

// A2A lets an agent accept more messages for a task that is not finished (1.0 §3.3.3): asked not to
// block, it takes the message for after the current turn.
const followUpWorking = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* workingTask(ctx)
    const next = yield* followUp(ctx, task, { returnImmediately: true })
    if (next._tag === "Right") return passed(`accepted for task ${task.id}`)
    const meanwhile = yield* finishedMeanwhile(ctx, task.id, "the follow-up")
    return meanwhile ?? failed(`a message to task ${task.id}, still ${stateSent(task.status)}, was refused: ${next.left.message}`)
  }))

export const messagingChecks = {
  "messaging.send": send,
  "messaging.task-shape": taskShape,
  "messaging.unknown-task": unknownTask,
  "messaging.invalid-params": invalidParams,
  "messaging.part-without-kind": partWithoutKind,
  "messaging.context-kept": contextKept,
  "messaging.follow-up-input-required": followUpInputRequired,
  "messaging.follow-up-working": followUpWorking
} as const
