/**
 * What every check of one interface shares: the pinned target, the interface, and a budget of
 * tasks it may create (every one is listed in the report). Raw access is in rawExchanges.ts.
 */
import { Duration, Effect, Option, Ref } from "effect"
import { randomUUID } from "node:crypto"
import * as V1 from "../../a2a/v1.js"
import type { A2aClientError } from "../../domain/clientErrors.js"
import {
  type CheckOutcome,
  type CreatedTask,
  failed,
  type InterfaceId,
  MAX_TASKS_PER_INTERFACE,
  passed,
  skipped
} from "../../domain/conformance.js"
import { A2aClient, type Endpoint, type Target } from "../../services/A2aClient.js"
import type { RawResponse } from "../../services/RawHttp.js"

/** Largest answer body a check reads. */
export const MAX_CHECK_BODY_BYTES = 1024 * 1024

/** Text of the messages the checks send: recognisable in the agent's logs. */
export const CHECK_MESSAGE_TEXT = "relay check: hello"

/** What the follow-up check asks with, hoping the agent asks for input (relay's mock agent does). */
export const INPUT_REQUIRED_TEXT = "input-required"

export interface InterfaceContext {
  readonly target: Target
  readonly endpoint: Endpoint
  readonly id: InterfaceId
  readonly card: V1.AgentCard
  readonly timeout: Duration.Duration
  readonly created: Ref.Ref<ReadonlyArray<CreatedTask>>
  /** The first answer of messaging.send (or the first task created for another check). */
  readonly firstAnswer: Ref.Ref<Option.Option<V1.SendMessageResponse>>
  /** The raw answer to one streaming message, shared by the streaming checks. */
  readonly streamAnswer: Ref.Ref<Option.Option<RawResponse>>
  /** The answers to the messages with a file or a data part, shared by the part checks (partChecks.ts). */
  readonly partAnswers: Ref.Ref<ReadonlyMap<string, PartAnswer>>
}

/** What the agent did with a message carrying a sample part: refused it (the answer shown), or answered (as sent). */
export type PartAnswer =
  | { readonly _tag: "Refused"; readonly shown: string }
  | { readonly _tag: "Answered"; readonly result: unknown; readonly described: string }

export const userMessage = (extra: Partial<V1.Message> = {}, text = CHECK_MESSAGE_TEXT): V1.Message => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra
})

/** A task's state as the agent sent it: `TASK_STATE_WEIRD` stays TASK_STATE_WEIRD, never UNSPECIFIED. */
export const stateSent = (status: V1.TaskStatus): string => status.unknownState ?? status.state

/** A client error as a check's finding. */
export const describeError = (error: A2aClientError): string => error.message

/** A client error that must be this A2A error (REST errors are mapped to their code by their reason). */
export const expectProtocolError = (code: number, name: string) => (error: A2aClientError): CheckOutcome =>
  error._tag === "ProtocolError" && error.a2aCode === code ? passed(name) : failed(`expected ${name} (${code}), got: ${error.message}`)

/** A name no agent gives to a task. */
export const unknownTaskId = () => `relay-check-no-such-task-${randomUUID()}`

/** Fails with the reason when this interface has created its budget of tasks. */
export const withinBudget = (ctx: InterfaceContext) =>
  Effect.flatMap(Ref.get(ctx.created), (made) => {
    const mine = made.filter((task) => task.interface.protocol === ctx.id.protocol && task.interface.binding === ctx.id.binding)
    return mine.length >= MAX_TASKS_PER_INTERFACE
      ? Effect.fail(`the budget of ${MAX_TASKS_PER_INTERFACE} tasks per interface is spent`)
      : Effect.void
  })

/** Lists a task the run created in the report (once). */
export const recordTask = (ctx: InterfaceContext, taskId: string, state: string) =>
  Ref.update(
    ctx.created,
    (all) => all.some((task) => task.task_id === taskId) ? all : [...all, { task_id: taskId, interface: ctx.id, state }]
  )

/**
 * Sends one message if the budget allows; the task it creates is recorded. Fails with the reason
 * when the budget is spent or the agent refuses.
 */
export const sendCounted = (ctx: InterfaceContext, request: V1.SendMessageRequest) =>
  Effect.gen(function*() {
    yield* withinBudget(ctx)
    const client = yield* A2aClient
    const answer = yield* Effect.mapError(client.send(ctx.target, request), describeError)
    if ("task" in answer) yield* recordTask(ctx, answer.task.id, stateSent(answer.task.status))
    return answer
  })

/** The answer of messaging.send, sending it now if that check did not run. */
export const firstAnswer = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const known = yield* Ref.get(ctx.firstAnswer)
    if (Option.isSome(known)) return known.value
    const answer = yield* sendCounted(ctx, { message: userMessage() })
    yield* Ref.set(ctx.firstAnswer, Option.some(answer))
    return answer
  })

/** The task of the first answer; fails with a reason when the agent answered with a Message. */
export const firstTask = (ctx: InterfaceContext) =>
  Effect.flatMap(firstAnswer(ctx), (answer) =>
    "task" in answer
      ? Effect.succeed(answer.task)
      : Effect.fail("the agent answers with a Message, not a Task, so there is no task to work on"))

/** Ends a check step as not applicable here: the check is skipped with the reason (see orFailed). */
export const skipWith = (reason: string) => Effect.fail(skipped(reason))

/** Runs a check step that may fail with a reason (the check's failure) or end it with an outcome (skipWith). */
export const orFailed = <R>(effect: Effect.Effect<CheckOutcome, string | CheckOutcome, R>) =>
  Effect.catchAll(effect, (error) => Effect.succeed(typeof error === "string" ? failed(error) : error))

const NEEDS_WORKING = "this needs a task that stays working (e.g. relay server agent -m mock --latency 2s)"

/** A new task the agent is still working on (sent with returnImmediately); skips the check when the agent finishes at once. */
export const workingTask = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const answer = yield* sendCounted(ctx, { message: userMessage(), configuration: { returnImmediately: true } })
    if (!("task" in answer)) return yield* skipWith("the agent answered with a Message, so no task stays working")
    const { status } = answer.task
    if (V1.isSettledState(status.state)) {
      return yield* skipWith(`the agent finished the task at once (${stateSent(status)}); ${NEEDS_WORKING}`)
    }
    return answer.task
  })

/** Whether a task has finished since (so a refusal was no fault of the agent's); the skip names its state. */
export const finishedMeanwhile = (ctx: InterfaceContext, taskId: string, what: string) =>
  Effect.flatMap(A2aClient, (client) =>
    Effect.match(client.getTask(ctx.target, { id: taskId }), {
      onFailure: () => undefined,
      onSuccess: (now) =>
        V1.isTerminalState(now.status.state)
          ? skipped(`the task finished (${stateSent(now.status)}) before ${what} arrived; ${NEEDS_WORKING}`)
          : undefined
    }))
