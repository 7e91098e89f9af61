/**
 * The push group: a push config registered on a task the run created can be read back, listed and
 * deleted (its URL is loopback's discard port, and the task is finished: nothing is delivered), also
 * when sent in the v0.3 proto's own field names; and a task registered with the run's own loopback
 * receiver really posts to it.
 */
import { Duration, Effect, Option } from "effect"
import { randomUUID } from "node:crypto"
import { isLoopbackHost } from "../../a2a/hosts.js"
import { failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import { PushReceiver } from "../../services/PushReceiver.js"
import { firstTask, type InterfaceContext, orFailed, sendCounted, userMessage } from "./context.js"
import { dialectOf, rawOperation, resultOf, shown, wireOf } from "./rawExchanges.js"

export const UNREACHED_WEBHOOK = "http://127.0.0.1:9/relay-check"

const roundTrip = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const client = yield* A2aClient
    const step = <A, E extends { readonly message: string }>(what: string, effect: Effect.Effect<A, E>) =>
      Effect.mapError(effect, (error) => `${what} failed: ${error.message}`)
    const made = yield* step(
      "creating a push config",
      client.createPushConfig(ctx.target, { taskId: task.id, url: UNREACHED_WEBHOOK, token: `relay-check-${randomUUID()}` })
    )
    if (made.id === undefined || made.id === "") return failed("the created config has no id")
    const ids = { taskId: task.id, id: made.id }
    const read = yield* step("reading it back", client.getPushConfig(ctx.target, ids))
    if (read.url !== UNREACHED_WEBHOOK) return failed(`reading it back gave URL ${read.url}, not ${UNREACHED_WEBHOOK}`)
    const listed = yield* step("listing the task's configs", client.listPushConfigs(ctx.target, { taskId: task.id }))
    if (!listed.some((config) => config.id === made.id)) return failed(`the list of the task's configs does not hold ${made.id}`)
    yield* step("deleting it", client.deletePushConfig(ctx.target, ids))
    const after = yield* Effect.either(client.getPushConfig(ctx.target, ids))
    return after._tag === "Left"
      ? passed(`config ${made.id} created, read, listed and deleted`)
      : failed("the config can still be read after it was deleted")
  }))

/**
 * v0.3 REST bodies are the proto's JSON, and a ProtoJSON reader accepts the proto's field names as
 * well as their lowerCamel JSON names: the create request exactly as the proto spells it
 * (CreateTaskPushNotificationConfigRequest, as the official TCK sends it) must be taken.
 */
const restProtoFields = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const configId = `relay-check-${randomUUID()}`
    const name = `tasks/${task.id}/pushNotificationConfigs/${configId}`
    const body = {
      parent: `tasks/${task.id}`,
      config_id: configId,
      config: { name, push_notification_config: { id: configId, url: UNREACHED_WEBHOOK, token: `relay-check-${randomUUID()}` } }
    }
    const wire = yield* wireOf(dialectOf(ctx).createPushConfig, { taskId: task.id, id: configId, url: UNREACHED_WEBHOOK })
    const response = yield* Effect.mapError(rawOperation(ctx, wire._tag === "Rest" ? { ...wire, body } : wire), (error) => error.message)
    const made = yield* Effect.either(wire.decode(resultOf(ctx, response)))
    if (response.status >= 300 || made._tag === "Left") {
      return failed(`a create request in the proto's field names was not taken: ${shown(response)}`)
    }
    if (made.right.url !== UNREACHED_WEBHOOK) return failed(`the config was created with URL ${made.right.url}, not ${UNREACHED_WEBHOOK}`)
    const client = yield* A2aClient
    const ids = { taskId: task.id, id: made.right.id ?? configId }
    const read = yield* Effect.either(client.getPushConfig(ctx.target, ids))
    yield* Effect.ignore(client.deletePushConfig(ctx.target, ids))
    if (read._tag === "Left") {
      return failed(`the config ${ids.id} created from the proto's field names cannot be read back: ${read.left.message}`)
    }
    return read.right.url === UNREACHED_WEBHOOK
      ? passed(`config ${ids.id} created and read back`)
      : failed(`reading it back gave URL ${read.right.url}, not ${UNREACHED_WEBHOOK}`)
  }))

/** A task registered with a push config: its updates must reach the run's own receiver. */
const delivery = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const receiver = yield* Effect.serviceOption(PushReceiver)
    if (Option.isNone(receiver)) return skipped("no webhook receiver runs with this door")
    const host = new URL(ctx.target.agentUrl).hostname
    if (!isLoopbackHost(host)) return skipped(`relay's receiver listens on loopback, and the agent at ${host} is not on this machine`)
    const path = `/relay-check/${randomUUID()}`
    const url = receiver.value.urlFor(path)
    const answer = yield* sendCounted(ctx, {
      message: userMessage(),
      configuration: { taskPushNotificationConfig: { url, token: `relay-check-${randomUUID()}` } }
    })
    if (!("task" in answer)) return skipped("the agent answered with a Message: there is no task to notify about")
    const post = yield* receiver.value.awaitPost(path, ctx.timeout)
    return Option.isSome(post)
      ? passed(
        `a ${post.value.protocol} ${post.value.kind} for task ${post.value.task_id ?? "?"}${
          post.value.token_present ? ", with the token" : ""
        }`
      )
      : failed(
        `no notification reached ${url} within ${Duration.format(ctx.timeout)} (an agent that refuses loopback webhooks cannot pass this)`
      )
  }))

export const pushChecks = {
  "push.config-roundtrip": roundTrip,
  "push.rest-proto-fields": restProtoFields,
  "push.delivery": delivery
} as const
