/**
 * The push group: a push config registered on a task the run created can be read back, listed and
 * deleted. The config's URL is the discard port of loopback: nothing is ever delivered anywhere
 * (the task is already finished, so no event is due either).
 */
import { Effect } from "effect"
import { randomUUID } from "node:crypto"
import { failed, passed } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import { firstTask, type InterfaceContext, orFailed } from "./context.js"

export const UNREACHED_WEBHOOK = "http://127.0.0.1:9/relay-check"

const roundTrip = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const task = yield* firstTask(ctx)
    const client = yield* A2aClient
    const step = <A, E extends { readonly message: string }>(what: string, effect: Effect.Effect<A, E>) =>
      Effect.mapError(effect, (error) => `${what} failed: ${error.message}`)
    const made = yield* step("creating a push config", client.createPushConfig(ctx.target, { taskId: task.id, url: UNREACHED_WEBHOOK, token: `relay-check-${randomUUID()}` }))
    if (made.id === undefined || made.id === "") return failed("the created config has no id")
    const ids = { taskId: task.id, id: made.id }
    const read = yield* step("reading it back", client.getPushConfig(ctx.target, ids))
    if (read.url !== UNREACHED_WEBHOOK) return failed(`reading it back gave URL ${read.url}, not ${UNREACHED_WEBHOOK}`)
    const listed = yield* step("listing the task's configs", client.listPushConfigs(ctx.target, { taskId: task.id }))
    if (!listed.some((config) => config.id === made.id)) return failed(`the list of the task's configs does not hold ${made.id}`)
    yield* step("deleting it", client.deletePushConfig(ctx.target, ids))
    const after = yield* Effect.either(client.getPushConfig(ctx.target, ids))
    return after._tag === "Left" ? passed(`config ${made.id} created, read, listed and deleted`) : failed("the config can still be read after it was deleted")
  }))

export const pushChecks = { "push.config-roundtrip": roundTrip } as const
