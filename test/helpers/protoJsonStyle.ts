// ProtoJSON as other SDKs write it: proto field names (`message_id`) instead of JSON names, and
// enums as numbers (`"role": 1`). Turns the JSON relay writes into those styles, so tests can
// check that every reader takes them.
import { Schema } from "effect"
import type { Binding } from "../../src/a2a/dialects.js"
import type { ProtocolVersion } from "../../src/a2a/protocolVersion.js"
import * as T from "../../src/a2a/translate.js"
import * as V1 from "../../src/a2a/v1.js"

/** `messageId` → `message_id`: the proto field name of a JSON name. */
export const snakeCase = (name: string): string => name.replace(/[A-Z]/g, (upper) => `_${upper.toLowerCase()}`)

/** An enum value as its proto number: `ROLE_USER`, `user` → 1; `TASK_STATE_COMPLETED`, `completed` → 3. */
export const enumNumber = (key: string, value: unknown): unknown => {
  if (typeof value !== "string") return value
  if (key === "role") {
    const role = V1.parseRole(value)
    return role === undefined || role === "ROLE_UNSPECIFIED" ? value : V1.ROLES.indexOf(role)
  }
  if (key === "state") {
    const state = V1.parseTaskState(value)
    return state === undefined ? value : V1.TASK_STATES.indexOf(state)
  }
  return value
}

/** Free-form JSON (Struct metadata, data parts): left as it is. */
const FREE_FORM = new Set(["metadata", "data"])

/**
 * `json` with each field name turned into its proto name, and each role and state into its
 * number, wherever `pick()` says so (always, by default). Free-form values are not touched.
 */
export const protoStyled = (json: unknown, pick: () => boolean = () => true): unknown => {
  if (Array.isArray(json)) return json.map((item) => protoStyled(item, pick))
  if (typeof json !== "object" || json === null) return json
  return Object.fromEntries(
    Object.entries(json).map(([key, value]) => {
      const name = pick() ? snakeCase(key) : key
      const styled = FREE_FORM.has(key) ? value : protoStyled(pick() ? enumNumber(key, value) : value, pick)
      return [name, styled]
    })
  )
}

/** A deterministic coin for `protoStyled`, from a seed (fast-check draws the seed). */
export const coin = (seed: number) => {
  let state = seed >>> 0 || 1
  return () => {
    // xorshift32
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    return (state & 1) === 1
  }
}

/** How an agent of each dialect writes its answers (canonical JSON, before any styling). */
export const answerWriters = (binding: Binding, version: ProtocolVersion) =>
  version === "1.0"
    ? {
      task: Schema.encodeSync(V1.Task),
      send: Schema.encodeSync(V1.SendMessageResponse),
      event: Schema.encodeSync(V1.StreamResponse),
      pushConfig: Schema.encodeSync(V1.TaskPushNotificationConfig)
    }
    : binding === "JSONRPC"
    ? {
      task: Schema.encodeSync(T.TaskAsV03),
      send: Schema.encodeSync(T.SendResponseAsV03),
      event: Schema.encodeSync(T.StreamResponseAsV03),
      pushConfig: Schema.encodeSync(T.PushConfigAsV03)
    }
    : {
      task: Schema.encodeSync(T.TaskAsV03Rest),
      send: Schema.encodeSync(T.SendResponseAsV03Rest),
      event: Schema.encodeSync(T.StreamResponseAsV03Rest),
      pushConfig: Schema.encodeSync(T.PushConfigAsV03Rest)
    }
