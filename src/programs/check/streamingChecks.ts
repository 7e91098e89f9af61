/**
 * The streaming group: one streaming message read raw (so framing faults are seen, not smoothed
 * over by a tolerant parser), SubscribeToTask to a live task, and SubscribeToTask's error path.
 * Over gRPC the stream's messages are read as they came (rawExchanges.ts), and its end is its status.
 */
import { Effect, Either, Option, Predicate, Ref, Stream } from "effect"
import * as V1 from "../../a2a/v1.js"
import { type CheckOutcome, failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import type { RawResponse } from "../../services/RawHttp.js"
import {
  expectProtocolError,
  finishedMeanwhile,
  type InterfaceContext,
  orFailed,
  recordTask,
  unknownTaskId,
  userMessage,
  withinBudget,
  workingTask
} from "./context.js"
import { dialectOf, GRPC_CODES, grpcStatusOf, parseJson, rawOperation, shown, wireOf } from "./rawExchanges.js"

/** The run's one raw streaming answer (sent on first use, bounded by the timeout: a stream that never closes fails). */
const streamAnswer = (ctx: InterfaceContext) =>
  Effect.gen(function*() {
    const known = yield* Ref.get(ctx.streamAnswer)
    if (Option.isSome(known)) return known.value
    yield* withinBudget(ctx)
    const wire = yield* wireOf(dialectOf(ctx).stream, { message: userMessage() })
    const response = yield* Effect.mapError(
      rawOperation(ctx, wire, { accept: "text/event-stream" }),
      (error) => error._tag === "RequestTimeout" ? `the stream did not close within ${error.after}` : error.message
    )
    yield* Ref.set(ctx.streamAnswer, Option.some(response))
    const taskId = eventPayloads(ctx, response).map(taskIdOf).find((id) => id !== undefined)
    if (taskId !== undefined) yield* recordTask(ctx, taskId, "streamed")
    return response
  })

const isEventStream = (response: RawResponse) => /^text\/event-stream\b/i.test(response.headers["content-type"] ?? "")

/** A gRPC stream's messages as rawExchanges reads them (a JSON array); undefined for an error status alone. */
const grpcMessages = (response: RawResponse): ReadonlyArray<unknown> | undefined => {
  const json = parseJson(response.text)
  return Array.isArray(json) ? json : undefined
}

/** Whether the answer is a stream: an SSE body over HTTP, messages over gRPC. */
const isStream = (ctx: InterfaceContext, response: RawResponse) =>
  ctx.id.binding === "grpc" ? grpcMessages(response) !== undefined : isEventStream(response)

const NOT_A_STREAM = "the answer is not an event stream (see streaming.content-type)"

/** The SSE events of a body: blocks separated by a blank line; `data:` lines joined by newlines. */
const sseBlocks = (text: string) =>
  text.split(/\r\n\r\n|\n\n|\r\r/).filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split(/\r\n|\n|\r/).filter((line) => !line.startsWith(":"))
    const data = lines.filter((line) => /^data:?/.test(line)).map((line) => line.replace(/^data: ?/, ""))
    return { data: data.length === 0 ? undefined : data.join("\n") }
  })

/** Each event's payload: the JSON-RPC `result`, the REST body, or the gRPC message. */
const eventPayloads = (ctx: InterfaceContext, response: RawResponse): ReadonlyArray<unknown> =>
  ctx.id.binding === "grpc" ? grpcMessages(response) ?? [] : sseBlocks(response.text).map(({ data }) => {
    const json = data === undefined ? undefined : parseJson(data)
    return ctx.id.binding === "jsonrpc" && Predicate.isRecord(json) ? json["result"] : json
  })

/** What an event is: task, message, status or artifact update (member name in 1.0, `kind` in 0.3). */
const kindOf = (payload: unknown): string | undefined => {
  if (!Predicate.isRecord(payload)) return undefined
  if (typeof payload["kind"] === "string") {
    return payload["kind"] === "status-update"
      ? "statusUpdate"
      : payload["kind"] === "artifact-update"
      ? "artifactUpdate"
      : payload["kind"]
  }
  // The 0.3 proto names a message `msg`.
  if ("msg" in payload) return "message"
  return ["task", "message", "statusUpdate", "artifactUpdate"].find((key) => key in payload)
}

const taskIdOf = (payload: unknown): string | undefined => {
  if (!Predicate.isRecord(payload)) return undefined
  const task = Predicate.isRecord(payload["task"]) ? payload["task"] : payload["kind"] === "task" ? payload : undefined
  return task !== undefined && typeof task["id"] === "string" ? task["id"] : undefined
}

const isRpcError = (data: string | undefined) => {
  const json = data === undefined ? undefined : parseJson(data)
  return Predicate.isRecord(json) && Predicate.isRecord(json["error"])
}

const withStream = (ctx: InterfaceContext, judge: (response: RawResponse) => CheckOutcome) =>
  Effect.catchAll(Effect.map(streamAnswer(ctx), judge), (reason) => Effect.succeed(failed(reason)))

const contentType = (ctx: InterfaceContext) =>
  withStream(
    ctx,
    (response) =>
      isEventStream(response) ? passed(response.headers["content-type"] ?? "") : failed(`not an event stream: ${shown(response)}`)
  )

const framing = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => {
    if (!isEventStream(response)) return skipped("the answer is not an event stream (see streaming.content-type)")
    if (!/(\r\n\r\n|\n\n|\r\r)$/.test(response.text)) return failed("the stream's last event is not ended by a blank line")
    const blocks = sseBlocks(response.text)
    if (blocks.length === 0) return failed("the stream carried no event")
    const bad = blocks.findIndex(({ data }) => data === undefined || parseJson(data) === undefined)
    return bad === -1
      ? passed(`${blocks.length} event(s)`)
      : failed(
        `event ${bad + 1} is not one JSON value in data: lines (events must be separated by a blank line): ${
          JSON.stringify(blocks[bad]?.data ?? "").slice(0, 160)
        }`
      )
  })

const firstEvent = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => {
    if (!isStream(ctx, response)) return ctx.id.binding === "grpc" ? failed(`no stream: ${shown(response)}`) : skipped(NOT_A_STREAM)
    const kinds = eventPayloads(ctx, response).map(kindOf)
    if (kinds[0] === "task") return passed(`${kinds.length} event(s), the task first`)
    if (kinds[0] === "message") {
      return kinds.length === 1
        ? passed("one Message")
        : failed(`a Message was followed by ${kinds.length - 1} more event(s)`)
    }
    return failed(`the first event is ${kinds[0] ?? "not an A2A event"}, not a Task or a Message`)
  })

// The raw exchange returns once the body ends, or once it has read its limit (truncated): only
// the first means the stream closed. An answer that is no event stream is no stream to close.
// A gRPC stream ends with its status: OK, once the task is done.
const closes = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => {
    if (!isStream(ctx, response)) return ctx.id.binding === "grpc" ? failed(`no stream: ${shown(response)}`) : skipped(NOT_A_STREAM)
    if (response.truncated) return failed("the stream was still open after its size limit was read")
    const status = grpcStatusOf(response)
    return status === undefined || status.code === GRPC_CODES.OK
      ? passed("closed")
      : failed(`the stream ended with ${shown(response)}, not OK`)
  })

const subscribeUnknown = (ctx: InterfaceContext) =>
  Effect.flatMap(
    A2aClient,
    (client) =>
      Effect.match(Stream.runDrain(Stream.take(client.subscribe(ctx.target, { id: unknownTaskId() }), 1)), {
        onSuccess: () => failed("subscribing to a task that does not exist opened a stream"),
        onFailure: expectProtocolError(-32001, "TaskNotFound")
      })
  )

/** The text of each artifact, by id, as a client following the events would hold it. */
type ArtifactTexts = ReadonlyMap<string, string>

const textOf = (parts: ReadonlyArray<V1.Part>) => parts.map((part) => ("text" in part ? part.text : "")).join("")

const artifactTexts = (artifacts: ReadonlyArray<V1.Artifact> | undefined): ArtifactTexts =>
  new Map((artifacts ?? []).map((artifact) => [artifact.artifactId, textOf(artifact.parts)]))

/** An artifact update applied as A2A says: appended to the artifact with `append`, else replacing it. */
const applyArtifact = (texts: ArtifactTexts, update: V1.TaskArtifactUpdateEvent): ArtifactTexts => {
  const { artifactId, parts } = update.artifact
  return new Map(texts).set(artifactId, `${update.append === true ? texts.get(artifactId) ?? "" : ""}${textOf(parts)}`)
}

/**
 * What a subscription must be (1.0 §3.1.6): the task first, then only that task's status and
 * artifact updates, none twice, none after the task finished, in time order. Followed from the
 * snapshot, they must add up to the task as GetTask shows it once finished: an update the
 * snapshot already held, sent again, or two swapped, would not.
 */
const judgeSubscription = (
  taskId: string,
  events: ReadonlyArray<Either.Either<V1.StreamResponse, string>>,
  final: V1.Task
): CheckOutcome => {
  const [first, ...rest] = events
  if (first === undefined) return failed("the subscription carried no event")
  if (Either.isLeft(first) || !("task" in first.right) || first.right.task.id !== taskId) {
    return failed(`the first event is ${Either.isLeft(first) ? first.left : Object.keys(first.right).join(", ")}, not task ${taskId}`)
  }
  let texts = artifactTexts(first.right.task.artifacts)
  let lastStatus = first.right.task.status
  const seen = new Set<string>()
  for (const [index, event] of rest.entries()) {
    const where = `event ${index + 2}`
    if (Either.isLeft(event)) return failed(`${where} is not an A2A event: ${event.left}`)
    const update = event.right
    const key = JSON.stringify(update)
    if (seen.has(key)) return failed(`${where} repeats an earlier event`)
    seen.add(key)
    if (V1.isTerminalState(lastStatus.state)) return failed(`${where} came after the task finished (${lastStatus.state})`)
    if ("statusUpdate" in update && update.statusUpdate.taskId === taskId) {
      const { status } = update.statusUpdate
      if (
        status.timestamp !== undefined && lastStatus.timestamp !== undefined &&
        Date.parse(status.timestamp) < Date.parse(lastStatus.timestamp)
      ) {
        return failed(`${where} (${status.state} at ${status.timestamp}) is older than the status before it (${lastStatus.timestamp})`)
      }
      lastStatus = status
    } else if ("artifactUpdate" in update && update.artifactUpdate.taskId === taskId) {
      texts = applyArtifact(texts, update.artifactUpdate)
    } else {
      return failed(`${where} is ${Object.keys(update).join(", ")} and not a status or artifact update of task ${taskId}`)
    }
  }
  const expected = artifactTexts(final.artifacts)
  const differs = [...new Set([...texts.keys(), ...expected.keys()])].find((id) => texts.get(id) !== expected.get(id))
  if (differs !== undefined) {
    return failed(
      `the snapshot and the updates after it add up to ${
        JSON.stringify(texts.get(differs) ?? null)
      } in artifact ${differs}, but the task holds ${JSON.stringify(expected.get(differs) ?? null)}`
    )
  }
  return lastStatus.state === final.status.state
    ? passed(`the task, then ${rest.length} update(s), ending ${lastStatus.state}`)
    : failed(`the updates end in ${lastStatus.state}, but the task is ${final.status.state}`)
}

const subscribeLive = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* workingTask(ctx)
    const wire = yield* wireOf(dialectOf(ctx).subscribe, { id: task.id })
    const client = yield* A2aClient
    const answer = yield* Effect.either(rawOperation(ctx, wire, { accept: "text/event-stream" }))
    if (answer._tag === "Left") {
      if (answer.left._tag !== "RequestTimeout") return failed(answer.left.message)
      // Only a finished task must end the stream: one that stopped to ask may keep it open.
      const now = yield* Effect.option(client.getTask(ctx.target, { id: task.id }))
      return Option.isSome(now) && V1.isInterruptedState(now.value.status.state)
        ? skipped(
          `the task stopped in ${now.value.status.state}, where a subscription may stay open; this needs a task that runs to its end`
        )
        : failed(`the subscription did not close within ${answer.left.after}`)
    }
    const response = answer.right
    // A refusal (plain, or as the stream's one event) is right for a task that finished first.
    const refused = ctx.id.binding === "grpc"
      ? (grpcMessages(response) ?? []).length === 0
      : !isEventStream(response) || isRpcError(sseBlocks(response.text)[0]?.data)
    if (refused) {
      return (yield* finishedMeanwhile(ctx, task.id, "the subscription")) ??
        failed(`the subscription was not a stream of the task's events: ${shown(response)}`)
    }
    const events = yield* Effect.forEach(
      eventPayloads(ctx, response),
      (payload) => Effect.either(Effect.mapError(wire.decode(payload), () => JSON.stringify(payload ?? null).slice(0, 160)))
    )
    const final = yield* Effect.mapError(
      client.getTask(ctx.target, { id: task.id }),
      (error) => `GetTask after the subscription failed: ${error.message}`
    )
    return judgeSubscription(task.id, events, final)
  }))

export const streamingChecks = {
  "streaming.content-type": contentType,
  "streaming.framing": framing,
  "streaming.first-event": firstEvent,
  "streaming.closes": closes,
  "streaming.subscribe-unknown": subscribeUnknown,
  "streaming.subscribe-live": subscribeLive
} as const
