/**
 * What every check of one interface shares: the pinned target, the interface, raw access for
 * malformed requests, and a budget of tasks it may create (every one is listed in the report).
 */
import { Duration, Effect, Option, Predicate, Ref } from "effect"
import { randomUUID } from "node:crypto"
import { dialectFor, type WireRequest } from "../../a2a/dialects.js"
import { errorInfoReason } from "../../a2a/errors.js"
import type * as V1 from "../../a2a/v1.js"
import type { A2aClientError } from "../../domain/clientErrors.js"
import { type CheckOutcome, type CreatedTask, failed, passed, type InterfaceId, MAX_TASKS_PER_INTERFACE } from "../../domain/conformance.js"
import { A2aClient, credentialHeaders, credentialsFor, type Endpoint, type Target } from "../../services/A2aClient.js"
import { RawHttp, type RawResponse } from "../../services/RawHttp.js"

/** Largest answer body a check reads. */
export const MAX_CHECK_BODY_BYTES = 1024 * 1024

/** Text of the messages the checks send: recognisable in the agent's logs. */
export const CHECK_MESSAGE_TEXT = "relay check: hello"

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
}

export const userMessage = (extra: Partial<V1.Message> = {}, text = CHECK_MESSAGE_TEXT): V1.Message => ({
  messageId: randomUUID(),
  role: "ROLE_USER",
  parts: [{ text }],
  ...extra
})

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
  Ref.update(ctx.created, (all) => all.some((task) => task.task_id === taskId) ? all : [...all, { task_id: taskId, interface: ctx.id, state }])

/**
 * Sends one message if the budget allows; the task it creates is recorded. Fails with the reason
 * when the budget is spent or the agent refuses.
 */
export const sendCounted = (ctx: InterfaceContext, request: V1.SendMessageRequest) =>
  Effect.gen(function*() {
    yield* withinBudget(ctx)
    const client = yield* A2aClient
    const answer = yield* Effect.mapError(client.send(ctx.target, request), describeError)
    if ("task" in answer) yield* recordTask(ctx, answer.task.id, answer.task.status.state)
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

// ---------------------------------------------------------------------------
// Raw exchanges: what a well-behaved client never sends

const versionHeaders = (version: string | undefined): Record<string, string> =>
  version === undefined ? {} : { "A2A-Version": version }

export interface RawOptions {
  /** The A2A-Version header sent (default: the interface's version on 1.0, none on 0.3). */
  readonly version?: string | undefined
  /** Default: JSON. */
  readonly accept?: string | undefined
  /** Send the run's credentials (default true). */
  readonly credentials?: boolean | undefined
}

const defaultVersion = (ctx: InterfaceContext) => (ctx.id.protocol === "1.0" ? "1.0" : undefined)

const rawHeaders = (ctx: InterfaceContext, contentType: string, options: RawOptions) => ({
  "Content-Type": contentType,
  Accept: options.accept ?? "application/json, application/a2a+json",
  ...versionHeaders("version" in options ? options.version : defaultVersion(ctx)),
  ...(options.credentials === false ? {} : credentialHeaders(credentialsFor(ctx.target, ctx.endpoint.url)))
})

/** POSTs this text to the JSON-RPC interface, as is. */
export const rawJsonRpc = (ctx: InterfaceContext, body: string, options: RawOptions = {}) =>
  Effect.flatMap(RawHttp, (http) =>
    http.exchange({
      method: "POST",
      url: ctx.endpoint.url,
      headers: rawHeaders(ctx, "application/json", options),
      body,
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    }))

const restUrl = (ctx: InterfaceContext, path: string, query: Readonly<Record<string, string>> | undefined) => {
  const search = query === undefined ? "" : `?${new URLSearchParams(query).toString()}`
  return `${ctx.endpoint.url.replace(/\/+$/, "")}${path}${search}`
}

/** One operation exactly as the dialect encodes it, through RawHttp, to read the answer as sent. */
export const rawOperation = <A>(ctx: InterfaceContext, wire: WireRequest<A>, options: RawOptions = {}) => {
  if (wire._tag === "JsonRpc") {
    return rawJsonRpc(ctx, JSON.stringify({ jsonrpc: "2.0", id: `relay-check-${randomUUID()}`, method: wire.method, params: wire.params }), options)
  }
  const contentType = ctx.id.protocol === "1.0" ? "application/a2a+json" : "application/json"
  return Effect.flatMap(RawHttp, (http) =>
    http.exchange({
      method: wire.verb === "GET" ? "GET" : "POST",
      url: restUrl(ctx, wire.path, wire.query),
      headers: rawHeaders(ctx, contentType, options),
      ...(wire.body === undefined ? {} : { body: JSON.stringify(wire.body) }),
      timeout: ctx.timeout,
      maxBytes: MAX_CHECK_BODY_BYTES
    }))
}

export const dialectOf = (ctx: InterfaceContext) => dialectFor(ctx.endpoint.binding, ctx.endpoint.version, ctx.endpoint.tenant)

/** A dialect's encoding; our own encoders never fail on the inputs the checks give them. */
export const wireOf = <A, I>(encode: (input: I) => Effect.Effect<WireRequest<A>, unknown>, input: I) => Effect.orDie(encode(input))

export const parseJson = (text: string): unknown => {
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** The `result` of a JSON-RPC answer, or the body of a REST one. */
export const resultOf = (ctx: InterfaceContext, response: RawResponse): unknown => {
  const json = parseJson(response.text)
  return ctx.id.binding === "jsonrpc" && Predicate.isRecord(json) ? json["result"] : json
}

/** The error of an answer: JSON-RPC `error.code` or REST status, and the ErrorInfo reason when given. */
export interface RawError {
  readonly code: number | undefined
  readonly reason: string | undefined
  readonly id: unknown
}

export const rawErrorOf = (response: RawResponse): RawError | undefined => {
  const json = parseJson(response.text)
  if (!Predicate.isRecord(json)) return undefined
  // JSON-RPC and google.rpc.Status wrap it in `error`; v0.3 REST answers the bare {code, message}.
  const error = Predicate.isRecord(json["error"])
    ? json["error"]
    : typeof json["code"] === "number" && typeof json["message"] === "string"
    ? json
    : undefined
  if (error === undefined) return undefined
  const code = typeof error["code"] === "number" ? error["code"] : undefined
  return { code, reason: errorInfoReason(error["data"]) ?? errorInfoReason(error["details"]), id: json["id"] }
}

/** "HTTP 200, application/json: {…}": what the agent answered, for a failure's detail. */
export const shown = (response: RawResponse) => {
  const body = response.text.length > 200 ? `${response.text.slice(0, 200)}…` : response.text
  return `HTTP ${response.status}${response.headers["content-type"] ? `, ${response.headers["content-type"]}` : ""}: ${body.trim() || "(empty body)"}`
}

/** Runs a check step that may fail with a reason: the reason becomes the check's failure. */
export const orFailed = <R>(effect: Effect.Effect<CheckOutcome, string, R>) => Effect.catchAll(effect, (reason) => Effect.succeed(failed(reason)))
