/**
 * The result shapes every door shows: plain, snake_case, stable (SPEC §2), built from the
 * v1.0 domain model by pure functions.
 */
import type { Binding } from "../a2a/dialects.js"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import { resultText } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import { type AnswerPart, answerParts } from "./answerParts.js"
import { maskSecret, redactUrl } from "./secrets.js"

/**
 * An answer cut at the client's limit for a whole answer (`--max-answer-bytes`): relay stopped
 * reading and kept what it had. Left out of results that were not cut.
 */
export interface Truncation {
  readonly truncated?: true
  /** Bytes of the answer kept (its JSON), at most `limit_bytes`. */
  readonly kept_bytes?: number
  readonly limit_bytes?: number
}

/**
 * The interface a result came over: its binding (JSONRPC, HTTP+JSON or GRPC) and protocol
 * version, as the client picked it. Left out where no call answered (a stubbed client).
 */
export interface InterfaceUsed {
  readonly binding?: Binding
  readonly protocol_version?: ProtocolVersion
}

/**
 * The message result of SPEC §2, plus the kind of answer and the agent's status time. It has the
 * keys of TaskView, in the same order, so scripts read `message send` and `task get` alike.
 */
export interface MessageResult extends Truncation, InterfaceUsed {
  readonly task_id: string | null
  readonly context_id: string | null
  /** v0.3-style lower-case state: completed, working, input-required, …; `unknown (X)` for a state A2A does not define. */
  readonly state: V1.StateLabel
  readonly text: string
  /** The answer's parts in order (answerParts.ts); `text` is their text. */
  readonly parts: ReadonlyArray<AnswerPart>
  readonly needs_input: boolean
  readonly needs_auth: boolean
  /** "task" when the agent created a task, "message" for a direct reply. */
  readonly kind: "task" | "message"
  /** When the task's status last changed; null for a direct reply. */
  readonly updated_at: string | null
}

/** The task view of SPEC §2, plus what an assistant needs to decide the next step. */
export interface TaskView extends TaskHead, Truncation, InterfaceUsed {
  readonly text: string
  readonly parts: ReadonlyArray<AnswerPart>
}

/** A task's ids and state without its text: what a door hears on each update (the text comes in pieces). */
export interface TaskHead {
  readonly task_id: string
  readonly context_id: string | null
  readonly state: V1.StateLabel
  readonly needs_input: boolean
  readonly needs_auth: boolean
  /** Always "task": the key `message send` results carry too. */
  readonly kind: "task"
  readonly updated_at: string | null
}

const stateFlags = (state: V1.StateLabel) => ({
  needs_input: state === "input-required",
  needs_auth: state === "auth-required"
})

export const taskHead = (task: V1.Task): TaskHead => {
  const state = V1.stateLabel(task.status)
  return {
    task_id: task.id,
    context_id: task.contextId || null,
    state,
    ...stateFlags(state),
    kind: "task",
    updated_at: task.status.timestamp ?? null
  }
}

export const taskView = (task: V1.Task): TaskView => {
  const head = taskHead(task)
  return {
    task_id: head.task_id,
    context_id: head.context_id,
    state: head.state,
    text: resultText(task),
    parts: answerParts(task),
    needs_input: head.needs_input,
    needs_auth: head.needs_auth,
    kind: head.kind,
    updated_at: head.updated_at
  }
}

export const messageResult = (response: V1.SendMessageResponse): MessageResult => {
  if ("message" in response) {
    return {
      task_id: response.message.taskId || null,
      context_id: response.message.contextId || null,
      state: "completed",
      text: resultText(response.message),
      parts: answerParts(response.message),
      needs_input: false,
      needs_auth: false,
      kind: "message",
      updated_at: null
    }
  }
  return taskView(response.task)
}

/** A push config as shown: secrets masked, never echoed. */
export interface PushConfigView {
  readonly task_id: string | null
  readonly config_id: string | null
  readonly url: string
  readonly token: string | null
  readonly auth_scheme: string | null
}

export const pushConfigView = (config: V1.TaskPushNotificationConfig): PushConfigView => ({
  task_id: config.taskId || null,
  config_id: config.id || null,
  url: redactUrl(config.url),
  token: config.token ? maskSecret(config.token) : null,
  auth_scheme: config.authentication?.scheme ?? null
})

/** JSON without null or undefined members (SPEC §2: the card "with empty (null) fields omitted"). */
export const withoutNulls = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(withoutNulls)
  if (typeof value !== "object" || value === null) return value
  return Object.fromEntries(
    Object.entries(value).flatMap(([key, inner]) => (inner === null || inner === undefined ? [] : [[key, withoutNulls(inner)]]))
  )
}
