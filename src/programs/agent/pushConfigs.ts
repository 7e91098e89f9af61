/**
 * The agent's push notification configs: set (with the webhook URL checked), read back with their
 * secrets masked, listed in pages and deleted; each config gets the task's updates posted to it,
 * and the deliveries a stopped process left pending are taken over and made.
 */
import { Duration, Effect, Option, Schedule, Stream } from "effect"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import * as V1 from "../../a2a/v1.js"
import { AgentRequestError, invalidParams, shown, taskNotFound } from "../../domain/agentErrors.js"
import { randomId } from "../../domain/ids.js"
import { MAX_URL_CHARS } from "../../domain/limits.js"
import { PushSender } from "../../services/PushSender.js"
import type { PendingDelivery, StoredPushConfig } from "../../services/TaskStorage.js"
import { TaskStore, type TaskUpdate } from "../../services/TaskStore.js"
import { idProblem, lengthProblem, pageSizeOf, requireTask } from "./shared.js"

/** Shown instead of secrets when a push config is read back. */
export const REDACTED = "********"

/** The config with its secrets masked, for reads. */
export const redactPushConfig = (config: V1.TaskPushNotificationConfig): V1.TaskPushNotificationConfig => {
  const { token, authentication, ...rest } = config
  return {
    ...rest,
    ...(token === undefined ? {} : { token: REDACTED }),
    ...(authentication === undefined
      ? {}
      : {
        authentication: authentication.credentials === undefined
          ? authentication
          : { ...authentication, credentials: REDACTED }
      })
  }
}

/**
 * Starts posting the task's updates to a stored config, until the task is terminal. With
 * `withSnapshot` the current task is posted first (configs sent along with the message).
 */
export const startDelivery = (stored: StoredPushConfig, withSnapshot: boolean) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const sender = yield* PushSender
    const subscription = yield* store.subscribe(stored.config.taskId ?? "", "terminal")
    if (Option.isNone(subscription)) return
    const { task, updates, version } = subscription.value
    if (V1.isTerminalState(task.status.state) && !withSnapshot) return
    const first: TaskUpdate = { event: { task }, task, version }
    yield* sender.start(stored, withSnapshot ? Stream.concat(Stream.make(first), updates) : updates, store.storage.deliveries)
  })

/**
 * The id of a config set without one: a new UUID in 1.0 (as @a2a-js 1.x does); the task's id in
 * 0.3, as both 0.3 SDKs do, so that a 0.3 client's get or delete by task id finds it.
 */
const defaultConfigId = (taskId: string, generation: ProtocolVersion) => (generation === "0.3" ? taskId : randomId())

export const storePushConfig = (taskId: string, config: V1.TaskPushNotificationConfig, generation: ProtocolVersion) =>
  Effect.gen(function*() {
    const sender = yield* PushSender
    const store = yield* TaskStore
    const tooLong = idProblem("push notification config id", config.id) ?? lengthProblem("url", config.url, MAX_URL_CHARS)
    if (tooLong !== undefined) return yield* tooLong
    const problem = sender.checkUrl(config.url)
    if (problem !== undefined) return yield* invalidParams(`Push notification URL refused: ${problem}`)
    const { tenant: _tenant, ...fields } = config
    const stored: StoredPushConfig = {
      config: { ...fields, id: config.id ?? defaultConfigId(taskId, generation), taskId },
      generation
    }
    const saved = yield* store.storage.putPushConfig(taskId, stored)
    if (Option.isNone(saved)) return yield* taskNotFound(taskId)
    return stored
  })

export const createPushConfig = (config: V1.TaskPushNotificationConfig, generation: ProtocolVersion) =>
  Effect.gen(function*() {
    const taskId = config.taskId
    if (taskId === undefined) return yield* invalidParams("taskId is required")
    yield* requireTask(taskId)
    const stored = yield* storePushConfig(taskId, config, generation)
    yield* startDelivery(stored, false)
    return stored.config
  })

const configsOf = (taskId: string) =>
  Effect.flatMap(TaskStore, (store) =>
    Effect.flatMap(
      store.storage.pushConfigs(taskId),
      Option.match({
        onNone: () => Effect.fail(taskNotFound(taskId)),
        onSome: Effect.succeed
      })
    ))

/** One config, redacted. Without an id, the task's most recently created config. */
export const getPushConfig = (request: { readonly taskId: string; readonly id?: string | undefined }) =>
  Effect.gen(function*() {
    const configs = yield* configsOf(request.taskId)
    const found = request.id === undefined
      ? configs[configs.length - 1]
      : configs.find((stored) => stored.config.id === request.id)
    if (found === undefined) return yield* configNotFound(request.taskId, request.id)
    return redactPushConfig(found.config)
  })

/** The spec names TaskNotFoundError for a config that does not exist (A2A §3.1.8). */
const configNotFound = (taskId: string, id: string | undefined) =>
  new AgentRequestError({
    kind: "TaskNotFound",
    detail: `Push notification config${id === undefined ? "" : ` ${shown(id)}`} not found for task ${taskId}`
  })

const decodeOffsetToken = (token: string | undefined) => {
  if (token === undefined) return Effect.succeed(0)
  const offset = Number(Buffer.from(token, "base64url").toString("utf8"))
  return Number.isInteger(offset) && offset >= 0 ? Effect.succeed(offset) : Effect.fail(invalidParams("invalid pageToken"))
}

/** ListTaskPushNotificationConfigs' plain `int32 page_size`: 0 is how ProtoJSON writes it unset. */
const configPageSizeOf = (pageSize: number | undefined) => pageSizeOf(pageSize === 0 ? undefined : pageSize)

export const listPushConfigs = (request: V1.ListTaskPushNotificationConfigsRequest) =>
  Effect.gen(function*() {
    const configs = yield* configsOf(request.taskId)
    const size = yield* configPageSizeOf(request.pageSize)
    const offset = yield* decodeOffsetToken(request.pageToken)
    const page = configs.slice(offset, offset + size).map((stored) => redactPushConfig(stored.config))
    const more = offset + size < configs.length
    return {
      configs: page,
      nextPageToken: more ? Buffer.from(String(offset + size), "utf8").toString("base64url") : ""
    }
  })

/** A config that is not there is TaskNotFound, as for a get: "Deleted" would claim what did not happen. */
export const deletePushConfig = (request: { readonly taskId: string; readonly id: string }) =>
  Effect.gen(function*() {
    const store = yield* TaskStore
    const sender = yield* PushSender
    const removed = yield* store.storage.removePushConfig(request.taskId, request.id)
    if (Option.isNone(removed)) return yield* taskNotFound(request.taskId)
    if (!removed.value) return yield* configNotFound(request.taskId, request.id)
    yield* sender.stop(request.taskId, request.id)
  })

/** The claimed deliveries of each task and config, in order (they come sorted by task, config and version). */
const byConfig = (deliveries: ReadonlyArray<PendingDelivery>) => {
  const groups = new Map<string, Array<PendingDelivery>>()
  for (const delivery of deliveries) {
    const key = `${delivery.taskId}\u0000${delivery.configId}`
    const group = groups.get(key)
    if (group === undefined) groups.set(key, [delivery])
    else group.push(delivery)
  }
  return groups.values()
}

/**
 * Takes over the push deliveries no live process makes (claimed from the storage) and goes on with
 * them; those whose config or task is gone meanwhile are settled unsent.
 */
export const resumePendingDeliveries = Effect.gen(function*() {
  const store = yield* TaskStore
  const sender = yield* PushSender
  const pending = store.storage.deliveries
  for (const group of byConfig(yield* pending.claim)) {
    const { configId, taskId } = group[0]!
    const configs = Option.getOrElse(yield* store.storage.pushConfigs(taskId), () => [])
    const target = configs.find((stored) => stored.config.id === configId)
    if (target === undefined) yield* Effect.forEach(group, pending.settle, { discard: true })
    else yield* sender.resume(target, group, pending)
  }
})

/**
 * Resumes the deliveries a stopped process left: once at start; with a shared storage, also those of
 * instances that die later (their claims run out), twice per lease time.
 */
export const watchPendingDeliveries = Effect.flatMap(TaskStore, (store) => {
  const resume = Effect.catchAllCause(
    resumePendingDeliveries,
    (cause) => Effect.logWarning("Taking over pending push deliveries failed", cause)
  )
  const shared = store.storage.shared
  if (shared === undefined) return resume
  const every = Duration.divide(shared.leaseTime, 2).pipe(Option.getOrElse(() => shared.leaseTime))
  return Effect.asVoid(Effect.repeat(resume, Schedule.spaced(every)))
})
