/**
 * The output schemas of the MCP tools: the result types of the programs (src/domain/results.ts and
 * the programs' own result types) in zod, as the SDK announces and validates them. The result type
 * is the one source: every shape is made by `shapeOf<T>()`, which compiles only when the shape is
 * Alike T, so a field added to, dropped from or retyped in a result cannot leave its schema behind.
 */
import type { Effect } from "effect"
import * as z from "zod"
import { SUPPORTED_VERSIONS } from "../a2a/protocolVersion.js"
import type { AnswerPart } from "../domain/answerParts.js"
import { CHECK_GROUPS, type CheckReport } from "../domain/conformance.js"
import type { MessageResult, PushConfigView, TaskView } from "../domain/results.js"
import type { SessionSummary } from "../domain/session.js"

// ---------------------------------------------------------------------------
// Alike: a zod shape and a result type admit the same values, with the same keys, at every depth

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false
/** The keys of every member of a union. */
type KeysOf<T> = T extends unknown ? keyof T : never
/** The keys every member of a union has, not optional. */
type RequiredKeysOf<T> = { [K in KeysOf<T>]-?: [T] extends [{ readonly [P in K]: unknown }] ? K : never }[KeysOf<T>]
/** What a key holds in any member of a union (undefined left out: optional keys are compared apart). */
type FieldOf<T, K extends PropertyKey> = Exclude<T extends unknown ? (K extends keyof T ? T[K] : never) : never, undefined>
type Every<T extends boolean> = [T] extends [true] ? true : false

/**
 * A plain z.string() may stand for a union of strings (a state name, a generation, a branded URL):
 * the schema says so in words, JSON Schema has no template literal types.
 */
type LeafAlike<Z, D> = Same<Z, D> extends true ? true : Same<Z, string> extends true ? ([D] extends [string] ? true : false) : false

type ObjectAlike<Z, D> = Same<KeysOf<Z>, KeysOf<D>> extends true
  ? Same<RequiredKeysOf<Z>, RequiredKeysOf<D>> extends true ? Every<{ [K in KeysOf<Z>]-?: Alike<FieldOf<Z, K>, FieldOf<D, K>> }[KeysOf<Z>]>
  : false
  : false

/**
 * `true` when the zod output Z and the result type D agree: both nullable or neither; arrays of
 * alike elements; objects with the same keys, the same of them required, alike fields (a union of
 * objects, like `{all: true} | {all: false, agent_url}`, reads as one object with its keys); else
 * the same type, or a plain string for strings. Readonly is ignored: zod outputs are mutable.
 */
export type Alike<Z, D> = Same<null extends Z ? true : false, null extends D ? true : false> extends false ? false
  : [Exclude<Z, null>, Exclude<D, null>] extends [infer Zn, infer Dn]
    ? [Zn] extends [ReadonlyArray<infer Ze>] ? ([Dn] extends [ReadonlyArray<infer De>] ? Alike<Ze, De> : false)
    : unknown extends Zn ? LeafAlike<Zn, Dn>
    : [Zn] extends [object] ? ([Dn] extends [object] ? ObjectAlike<Zn, Dn> : false)
    : LeafAlike<Zn, Dn>
  : false

/** What a program returns. */
export type ResultOf<P extends (...args: never) => Effect.Effect<unknown, unknown, unknown>> = Effect.Effect.Success<ReturnType<P>>

/**
 * The zod shape of a tool's result type T: `shapeOf<T>()({...})` compiles only when the shape is
 * Alike T (else tsc asks for the argument `shape_is_not_alike_the_result_type`).
 */
export const shapeOf = <T>() =>
<S extends z.ZodRawShape>(
  shape: S,
  ..._check: Alike<z.output<z.ZodObject<S>>, T> extends true ? [] : [shape_is_not_alike_the_result_type: never]
): S => shape

/** What send_message, get_task and wait_for_task add to their results. */
export interface NextStep {
  readonly next_step: string
}

// ---------------------------------------------------------------------------
// The shapes several tools share

export const nullableString = z.string().nullable()
const stateName = z.string().describe(
  "Task state: submitted, working, input-required, auth-required, completed, failed, canceled, rejected"
)

/** Present only on an answer cut at relay's limit for a whole answer (then the result is also an error, response_too_large). */
const truncationShape = {
  truncated: z.literal(true).optional().describe("The answer grew past relay's limit: relay stopped reading and kept what it had"),
  kept_bytes: z.number().optional().describe("Bytes of the answer kept"),
  limit_bytes: z.number().optional().describe("relay's limit for a whole answer")
}

/** One part of an answer (domain/answerParts.ts AnswerPart). */
export const answerPart = z.object(
  shapeOf<AnswerPart>()({
    kind: z.enum(["text", "file", "data"]),
    text: nullableString.describe("A text part's text"),
    name: nullableString.describe("A file's name, as the agent gave it"),
    media_type: nullableString,
    size: z.number().nullable().describe("A file's size in bytes"),
    sha256: nullableString,
    path: nullableString.describe("Where relay saved the file's bytes (also in the content: image, audio, resource or resource_link)"),
    url: nullableString.describe("A file given by reference"),
    note: nullableString.describe("What is odd about the file, or why it was not saved"),
    data: z.unknown().describe("A data part's JSON value"),
    artifact_id: nullableString
  })
)

const answerParts = z.array(answerPart).describe("The answer's parts in order: text, files (saved to path, or by url) and data")

/** The interface a result came over (domain/results.ts InterfaceUsed). */
export const interfaceUsedShape = {
  binding: z.enum(["JSONRPC", "HTTP+JSON", "GRPC"]).optional().describe("The binding the call went over: JSONRPC, HTTP+JSON or GRPC"),
  protocol_version: z.enum(SUPPORTED_VERSIONS).optional().describe("The A2A protocol version spoken over it")
}

export const taskViewShape = shapeOf<TaskView>()({
  task_id: z.string(),
  context_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.literal("task"),
  updated_at: nullableString,
  ...truncationShape,
  ...interfaceUsedShape
})
export const nextStep = { next_step: z.string().describe("What to do next") }
export const historyShape = {
  history: z.array(z.object({ role: z.enum(["user", "agent"]), text: z.string() })).optional()
    .describe("The task's messages, when history_length was given")
}

export const messageResultShape = shapeOf<MessageResult & NextStep>()({
  context_id: nullableString,
  task_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.enum(["task", "message"]),
  updated_at: nullableString,
  ...truncationShape,
  ...interfaceUsedShape,
  ...nextStep
})

export const pushConfigShape = shapeOf<PushConfigView>()({
  task_id: nullableString,
  config_id: nullableString,
  url: z.string(),
  token: nullableString.describe("Masked"),
  auth_scheme: nullableString
})

export const sessionShape = shapeOf<SessionSummary>()({
  agent_url: z.string(),
  card_url: nullableString,
  context_id: nullableString,
  task_id: nullableString,
  last_state: nullableString,
  has_credentials: z.boolean(),
  updated_at: nullableString
})

export const issueShape = z.object({
  code: z.string(),
  severity: z.enum(["error", "warning", "info"]),
  path: z.string(),
  message: z.string(),
  hint: z.string()
})

const interfaceShape = { protocol: z.enum(["1.0", "0.3"]), binding: z.enum(["jsonrpc", "rest", "grpc"]) }

/** The report of relay check --json (domain/conformance CHECK_REPORT_SCHEMA). */
export const checkReportShape = shapeOf<CheckReport>()({
  schema: z.string(),
  agent_url: z.string(),
  card_url: nullableString,
  dry_run: z.boolean(),
  interfaces: z.array(z.object({ ...interfaceShape, url: z.string() })),
  results: z.array(z.object({
    id: z.string(),
    group: z.enum(CHECK_GROUPS),
    severity: z.enum(["must", "should"]),
    title: z.string(),
    spec: nullableString,
    interface: z.object(interfaceShape).nullable(),
    status: z.enum(["passed", "failed", "warning", "skipped"]),
    detail: z.string(),
    duration_ms: z.number()
  })),
  tasks_created: z.array(z.object({ task_id: z.string(), interface: z.object(interfaceShape), state: z.string() })),
  summary: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), warnings: z.number() }),
  duration_ms: z.number()
})
