/**
 * The streaming group: one streaming message read raw (so framing faults are seen, not smoothed
 * over by a tolerant parser), and SubscribeToTask's error path.
 */
import { Effect, Option, Predicate, Ref, Stream } from "effect"
import { type CheckOutcome, failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import type { RawResponse } from "../../services/RawHttp.js"
import { expectProtocolError, type InterfaceContext, recordTask, unknownTaskId, userMessage, withinBudget } from "./context.js"
import { dialectOf, parseJson, rawOperation, shown, wireOf } from "./rawExchanges.js"

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

/** The SSE events of a body: blocks separated by a blank line; `data:` lines joined by newlines. */
const sseBlocks = (text: string) =>
  text.split(/\r\n\r\n|\n\n|\r\r/).filter((block) => block.trim() !== "").map((block) => {
    const lines = block.split(/\r\n|\n|\r/).filter((line) => !line.startsWith(":"))
    const data = lines.filter((line) => /^data:?/.test(line)).map((line) => line.replace(/^data: ?/, ""))
    return { data: data.length === 0 ? undefined : data.join("\n") }
  })

/** Each event's payload: the JSON-RPC `result`, or the REST body. */
const eventPayloads = (ctx: InterfaceContext, response: RawResponse): ReadonlyArray<unknown> =>
  sseBlocks(response.text).map(({ data }) => {
    const json = data === undefined ? undefined : parseJson(data)
    return ctx.id.binding === "jsonrpc" && Predicate.isRecord(json) ? json["result"] : json
  })

/** What an event is: task, message, status or artifact update (member name in 1.0, `kind` in 0.3). */
const kindOf = (payload: unknown): string | undefined => {
  if (!Predicate.isRecord(payload)) return undefined
  if (typeof payload["kind"] === "string") return payload["kind"] === "status-update" ? "statusUpdate" : payload["kind"] === "artifact-update" ? "artifactUpdate" : payload["kind"]
  return ["task", "message", "statusUpdate", "artifactUpdate"].find((key) => key in payload)
}

const taskIdOf = (payload: unknown): string | undefined => {
  if (!Predicate.isRecord(payload)) return undefined
  const task = Predicate.isRecord(payload["task"]) ? payload["task"] : payload["kind"] === "task" ? payload : undefined
  return task !== undefined && typeof task["id"] === "string" ? task["id"] : undefined
}

const withStream = (ctx: InterfaceContext, judge: (response: RawResponse) => CheckOutcome) =>
  Effect.catchAll(Effect.map(streamAnswer(ctx), judge), (reason) => Effect.succeed(failed(reason)))

const contentType = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => isEventStream(response) ? passed(response.headers["content-type"] ?? "") : failed(`not an event stream: ${shown(response)}`))

const framing = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => {
    if (!isEventStream(response)) return skipped("the answer is not an event stream (see streaming.content-type)")
    if (!/(\r\n\r\n|\n\n|\r\r)$/.test(response.text)) return failed("the stream's last event is not ended by a blank line")
    const blocks = sseBlocks(response.text)
    if (blocks.length === 0) return failed("the stream carried no event")
    const bad = blocks.findIndex(({ data }) => data === undefined || parseJson(data) === undefined)
    return bad === -1
      ? passed(`${blocks.length} event(s)`)
      : failed(`event ${bad + 1} is not one JSON value in data: lines (events must be separated by a blank line): ${JSON.stringify(blocks[bad]?.data ?? "").slice(0, 160)}`)
  })

const firstEvent = (ctx: InterfaceContext) =>
  withStream(ctx, (response) => {
    if (!isEventStream(response)) return skipped("the answer is not an event stream (see streaming.content-type)")
    const kinds = eventPayloads(ctx, response).map(kindOf)
    if (kinds[0] === "task") return passed(`${kinds.length} event(s), the task first`)
    if (kinds[0] === "message") return kinds.length === 1 ? passed("one Message") : failed(`a Message was followed by ${kinds.length - 1} more event(s)`)
    return failed(`the first event is ${kinds[0] ?? "not an A2A event"}, not a Task or a Message`)
  })

// The raw exchange returns once the body ends, or once it has read its limit (truncated): only
// the first means the stream closed.
const closes = (ctx: InterfaceContext) =>
  withStream(ctx, (response) =>
    response.truncated ? failed("the stream was still open after its size limit was read") : passed("closed"))

const subscribeUnknown = (ctx: InterfaceContext) =>
  Effect.flatMap(A2aClient, (client) =>
    Effect.match(Stream.runDrain(Stream.take(client.subscribe(ctx.target, { id: unknownTaskId() }), 1)), {
      onSuccess: () => failed("subscribing to a task that does not exist opened a stream"),
      onFailure: expectProtocolError(-32001, "TaskNotFound")
    }))

export const streamingChecks = {
  "streaming.content-type": contentType,
  "streaming.framing": framing,
  "streaming.first-event": firstEvent,
  "streaming.closes": closes,
  "streaming.subscribe-unknown": subscribeUnknown
} as const
