/** The tasks group: GetTask, ListTasks and CancelTask on the tasks the run created. */
import { Effect, Predicate } from "effect"
import * as V1 from "../../a2a/v1.js"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import {
  expectProtocolError,
  finishedMeanwhile,
  firstTask,
  type InterfaceContext,
  orFailed,
  sendCounted,
  skipWith,
  stateSent,
  unknownTaskId,
  userMessage,
  workingTask
} from "./context.js"
import { dialectOf, invalidName, rawOperation, refusedAsInvalid, resultOf, shown, wireOf } from "./rawExchanges.js"

const getTask = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const found = yield* taskNow(ctx, task.id)
    return found.id === task.id
      ? passed(`${found.id}, ${stateSent(found.status)}`)
      : failed(`GetTask(${task.id}) returned task ${found.id}`)
  }))

/** The task as GetTask shows it now. */
const taskNow = (ctx: InterfaceContext, id: string) =>
  Effect.flatMap(A2aClient, (client) => Effect.mapError(client.getTask(ctx.target, { id }), (error) => error.message))

const getUnknown = (ctx: InterfaceContext) =>
  Effect.flatMap(A2aClient, (client) =>
    client.getTask(ctx.target, { id: unknownTaskId() }).pipe(
      Effect.match({
        onSuccess: (task) => failed(`GetTask of an id never given out returned task ${task.id}`),
        onFailure: expectProtocolError(-32001, "TaskNotFound")
      })
    ))

/** GetTask asked raw: the answer as sent, and the task read from it (or why it is not one). */
const rawGetTask = (ctx: InterfaceContext, request: V1.GetTaskRequest) =>
  Effect.gen(function*() {
    const wire = yield* wireOf(dialectOf(ctx).getTask, request)
    const response = yield* Effect.mapError(rawOperation(ctx, wire), (error) => error.message)
    const result = resultOf(ctx, response)
    const task = yield* Effect.either(wire.decode(result))
    return { response, result, task }
  })

// Raw: our client trims history itself for agents that ignore historyLength, which would hide it.
const historyLength = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    if (ctx.id.binding === "grpc" && ctx.id.protocol === "0.3") {
      return yield* skipWith("the 0.3 proto's history_length has no presence: 0 is sent as no value at all")
    }
    const task = yield* firstTask(ctx)
    const { response, result, task: read } = yield* rawGetTask(ctx, { id: task.id, historyLength: 0 })
    if (read._tag === "Left" || read.right.id !== task.id || !Predicate.isRecord(result)) {
      return failed(`GetTask with historyLength 0 did not answer with task ${task.id}: ${shown(response)}`)
    }
    const history = result["history"]
    return Array.isArray(history) && history.length > 0
      ? failed(`historyLength 0 still returned ${history.length} history message(s)`)
      : passed("no history")
  }))

/** A request every interface must refuse as invalid parameters. */
const expectRefused = (ctx: InterfaceContext, what: string, response: Parameters<typeof refusedAsInvalid>[1]) =>
  refusedAsInvalid(ctx, response) ? Effect.void : Effect.fail(`${what} was not refused as invalid parameters: ${shown(response)}`)

// ---------------------------------------------------------------------------
// ListTasks

/** The request's parameters as a reader sees them: `ListTasks(contextId=…, pageSize=1)`. */
const named = (request: V1.ListTasksRequest) =>
  `ListTasks(${
    Object.entries(request).filter(([, value]) => value !== undefined).map(([key, value]) => `${key}=${String(value)}`).join(", ")
  })`

/** One ListTasks request, raw (v0.3 has none: the checks are not run there). */
const rawList = (ctx: InterfaceContext, request: V1.ListTasksRequest) =>
  Effect.gen(function*() {
    const encode = dialectOf(ctx).listTasks
    if (encode === undefined) return yield* skipWith("this protocol version has no ListTasks")
    const wire = yield* wireOf(encode, request)
    const response = yield* Effect.mapError(rawOperation(ctx, wire), (error) => error.message)
    return { wire, response }
  })

/** A page the agent must answer: the page as relay reads it, and each task exactly as sent. */
const listPage = (ctx: InterfaceContext, request: V1.ListTasksRequest) =>
  Effect.gen(function*() {
    const { response, wire } = yield* rawList(ctx, request)
    const result = resultOf(ctx, response)
    const page = yield* Effect.mapError(wire.decode(result), () => `${named(request)} did not answer with a task list: ${shown(response)}`)
    const sent = Predicate.isRecord(result) && Array.isArray(result["tasks"]) ? result["tasks"].filter(Predicate.isRecord) : []
    return { page, sent, result: Predicate.isRecord(result) ? result : {} }
  })

/** The first task, as it stands now, with the context the list checks look in. */
const listedTask = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const task = yield* taskNow(ctx, (yield* firstTask(ctx)).id)
    if (task.contextId === undefined || task.contextId === "") return yield* skipWith("the first task has no contextId to list by")
    return { task, contextId: task.contextId }
  })

const MAX_PAGE = 100
const FAR_FUTURE = "2999-01-01T00:00:00Z"

/** Every listed task must match the filter; the first task must be there when the page is complete. */
const keptOnly = (
  request: V1.ListTasksRequest,
  page: V1.ListTasksResponse,
  expected: V1.Task,
  matches: (task: V1.Task) => boolean,
  what: (task: V1.Task) => string
) => {
  const stray = page.tasks.find((task) => !matches(task))
  if (stray !== undefined) return Effect.fail(`${named(request)} returned task ${stray.id}, ${what(stray)}`)
  const complete = page.nextPageToken === ""
  return complete && !page.tasks.some((task) => task.id === expected.id)
    ? Effect.fail(`${named(request)} left out task ${expected.id}, which matches`)
    : Effect.void
}

const atOrAfter = (timestamp: string | undefined, since: string) => timestamp !== undefined && Date.parse(timestamp) >= Date.parse(since)

const listFilters = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const { contextId, task } = yield* listedTask(ctx)
    const byContext = { contextId, pageSize: MAX_PAGE }
    yield* keptOnly(byContext, (yield* listPage(ctx, byContext)).page, task, (t) =>
      t.contextId === contextId, (t) =>
      `of context ${t.contextId ?? "(none)"}`)
    const state = task.status.state
    if (task.status.unknownState === undefined && state !== "TASK_STATE_UNSPECIFIED") {
      const byStatus = { status: state, pageSize: MAX_PAGE }
      yield* keptOnly(byStatus, (yield* listPage(ctx, byStatus)).page, task, (t) =>
        t.status.state === state, (t) =>
        `in state ${stateSent(t.status)}`)
    }
    const timestamp = task.status.timestamp
    if (timestamp !== undefined) {
      const since = { statusTimestampAfter: timestamp, pageSize: MAX_PAGE }
      yield* keptOnly(since, (yield* listPage(ctx, since)).page, task, (t) =>
        atOrAfter(t.status.timestamp, timestamp), (t) =>
        `updated ${t.status.timestamp ?? "at no stated time"}`)
    }
    const future = { statusTimestampAfter: FAR_FUTURE, pageSize: MAX_PAGE }
    const none = (yield* listPage(ctx, future)).page
    if (none.tasks.length > 0) {
      return failed(
        `${named(future)} returned ${none.tasks.length} task(s), updated ${none.tasks[0]?.status.timestamp ?? "at no stated time"}`
      )
    }
    return passed(`contextId, ${timestamp === undefined ? "status" : "status, statusTimestampAfter"} kept only matching tasks`)
  }))

/** Pages walked at most by list-pages, one task each. */
const MAX_PAGES_WALKED = 8

const listPages = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const { contextId } = yield* listedTask(ctx)
    const pageOf = (pageToken?: string) => listPage(ctx, { contextId, pageSize: 1, ...(pageToken === undefined ? {} : { pageToken }) })
    let first = yield* pageOf()
    // Two tasks in the context at least, so that there is a second page.
    if (first.page.totalSize < 2) {
      yield* sendCounted(ctx, { message: userMessage({ contextId }) })
      first = yield* pageOf()
    }
    const total = first.result["totalSize"]
    if (typeof total !== "number") return failed(`ListTasks(contextId=${contextId}, pageSize=1) has no totalSize (it is required)`)
    const seen: Array<string> = []
    let current = first
    for (let number = 1;; number++) {
      const { page, result } = current
      if (result["pageSize"] !== 1) {
        return failed(`page ${number} answers pageSize ${JSON.stringify(result["pageSize"])}, not the 1 asked for`)
      }
      if (page.tasks.length > 1) return failed(`page ${number} holds ${page.tasks.length} tasks, more than pageSize 1`)
      const again = page.tasks.find((task) => seen.includes(task.id))
      if (again !== undefined) return failed(`task ${again.id} came again on page ${number}`)
      seen.push(...page.tasks.map((task) => task.id))
      const token = page.nextPageToken
      if (token === "") {
        return seen.length < total
          ? failed(`the pages ended after ${seen.length} of the ${total} tasks totalSize counts`)
          : passed(`${number} pages of 1 task, totalSize ${total}`)
      }
      if (seen.length >= total) return failed(`after all ${total} tasks, nextPageToken is still ${JSON.stringify(token)}, not ""`)
      if (number >= MAX_PAGES_WALKED) return passed(`${number} pages of 1 task followed by their tokens, totalSize ${total}`)
      current = yield* pageOf(token)
    }
  }))

const listHistoryLength = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const { contextId } = yield* listedTask(ctx)
    for (const length of [0, 1]) {
      const request = { contextId, historyLength: length }
      const kept = (yield* listPage(ctx, request)).sent.find((task) => Array.isArray(task["history"]) && task["history"].length > length)
      if (kept !== undefined) {
        return failed(
          `${named(request)} returned task ${String(kept["id"])} with ${(kept["history"] as Array<unknown>).length} history message(s)`
        )
      }
    }
    return passed("no history for 0, at most one message for 1")
  }))

const listArtifacts = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const { contextId, task } = yield* listedTask(ctx)
    const plain = { contextId }
    const carrying = (yield* listPage(ctx, plain)).sent.find((listed) => "artifacts" in listed)
    if (carrying !== undefined) {
      return failed(
        `${named(plain)} returned task ${String(carrying["id"])} with an artifacts field (without includeArtifacts it must be left out)`
      )
    }
    if ((task.artifacts ?? []).length === 0) return passed("artifacts left out; the first task has none to include")
    const full = { contextId, includeArtifacts: true }
    const listed = (yield* listPage(ctx, full)).page.tasks.find((t) => t.id === task.id)
    return listed !== undefined && (listed.artifacts ?? []).length === 0
      ? failed(`${named(full)} left out the ${task.artifacts?.length} artifact(s) of task ${task.id}`)
      : passed("artifacts only with includeArtifacts")
  }))

const negativeHistoryLength = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    yield* expectRefused(ctx, "GetTask with historyLength -1", (yield* rawGetTask(ctx, { id: task.id, historyLength: -1 })).response)
    yield* expectRefused(ctx, "ListTasks with historyLength -1", (yield* rawList(ctx, { historyLength: -1 })).response)
    return passed(`${invalidName(ctx)} for GetTask and ListTasks`)
  }))

const listInvalidTimestamp = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const request = { statusTimestampAfter: "yesterday" }
    yield* expectRefused(ctx, named(request), (yield* rawList(ctx, request)).response)
    return passed(invalidName(ctx))
  }))

const listTasks = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    yield* firstTask(ctx).pipe(Effect.ignore)
    const { response } = yield* rawList(ctx, { pageSize: 10 })
    const result = resultOf(ctx, response)
    if (!Predicate.isRecord(result) || !Array.isArray(result["tasks"])) {
      return failed(`ListTasks did not answer with a task list: ${shown(response)}`)
    }
    if (typeof result["nextPageToken"] !== "string") {
      return failed("the answer has no nextPageToken (it must be present, \"\" on the last page)")
    }
    return passed(`${result["tasks"].length} task(s)`)
  }))

const cancelTerminal = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const client = yield* A2aClient
    // The first send blocks until the task settles; a task still going is looked at once more.
    const now = yield* taskNow(ctx, task.id)
    if (!V1.isTerminalState(now.status.state)) {
      return skipped(`the task is ${stateSent(now.status)}, not finished, so there is no finished task to cancel`)
    }
    return yield* client.cancelTask(ctx.target, { id: task.id }).pipe(
      Effect.match({
        onSuccess: (after) => failed(`cancelling a ${stateSent(now.status)} task succeeded (now ${stateSent(after.status)})`),
        onFailure: expectProtocolError(-32002, "TaskNotCancelable")
      })
    )
  }))

const cancelWorking = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* workingTask(ctx)
    const client = yield* A2aClient
    const cancel = yield* Effect.either(client.cancelTask(ctx.target, { id: task.id }))
    if (cancel._tag === "Right") {
      const after = cancel.right.status
      return after.state === "TASK_STATE_CANCELED"
        ? passed("canceled")
        : failed(`the task came back ${stateSent(after)}, not TASK_STATE_CANCELED`)
    }
    // The task may have finished between the answer and the cancel: that is no fault of the agent's.
    const meanwhile = cancel.left._tag === "ProtocolError" && cancel.left.a2aCode === -32002
      ? yield* finishedMeanwhile(ctx, task.id, "the cancel")
      : undefined
    return meanwhile ?? failed(`cancelling a ${stateSent(task.status)} task failed: ${cancel.left.message}`)
  }))

export const taskChecks = {
  "tasks.get": getTask,
  "tasks.get-unknown": getUnknown,
  "tasks.history-length": historyLength,
  "tasks.negative-history-length": negativeHistoryLength,
  "tasks.list": listTasks,
  "tasks.list-filters": listFilters,
  "tasks.list-pages": listPages,
  "tasks.list-history-length": listHistoryLength,
  "tasks.list-artifacts": listArtifacts,
  "tasks.list-invalid-timestamp": listInvalidTimestamp,
  "tasks.cancel-terminal": cancelTerminal,
  "tasks.cancel-working": cancelWorking
} as const
