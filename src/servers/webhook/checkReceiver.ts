/**
 * The PushReceiver of `relay check`: relay's webhook server on 127.0.0.1 (a free port) for the
 * length of the run, keeping what it receives in memory (nothing goes to the notification log).
 */
import { type Duration, Effect, Layer, Option, Ref, Stream } from "effect"
import { StateFileUnavailable } from "../../domain/errors.js"
import type { NotificationRecord } from "../../domain/notification.js"
import { NotificationLog } from "../../services/NotificationLog.js"
import { PushReceiver } from "../../services/PushReceiver.js"
import * as RawGrpc from "../../services/RawGrpc.js"
import * as RawHttp from "../../services/RawHttp.js"
import { webhookBaseUrl, webhookServerLayer } from "./WebhookServer.js"

const POLL = "25 millis"

/** A notification log that keeps nothing: the hook below is where the run looks. */
const discardingLog = Layer.succeed(NotificationLog, {
  file: "(memory)",
  append: () => Effect.void,
  read: () => Effect.succeed([]),
  follow: () => Stream.empty,
  saveFile: () =>
    Effect.fail(new StateFileUnavailable({ file: "(memory)", operation: "save a pushed file in", reason: "relay check keeps no files" }))
})

export const checkReceiverLayer = Layer.scoped(
  PushReceiver,
  Effect.gen(function*() {
    const received = yield* Ref.make<ReadonlyArray<NotificationRecord>>([])
    const server = webhookServerLayer({
      host: "127.0.0.1",
      port: 0,
      hooks: { onNotification: (record) => Ref.update(received, (all) => [...all, record]) }
    }).pipe(Layer.provide(discardingLog))
    const context = yield* Layer.build(server)
    const baseUrl = yield* Effect.provide(webhookBaseUrl, context)
    const firstAt = (path: string) =>
      Effect.map(Ref.get(received), (all) => Option.fromNullable(all.find((record) => record.path === path)))
    const poll = (path: string): Effect.Effect<NotificationRecord> =>
      Effect.flatMap(firstAt(path), Option.match({ onSome: Effect.succeed, onNone: () => Effect.zipRight(Effect.sleep(POLL), poll(path)) }))
    return {
      urlFor: (path: string) => `${baseUrl}${path}`,
      awaitPost: (path: string, within: Duration.DurationInput) => Effect.timeoutOption(poll(path), within)
    }
  })
)

/** What a `relay check` run needs besides the client: raw exchanges (HTTP and gRPC), and this receiver for push.delivery. */
export const checkRunLayer = Layer.mergeAll(RawHttp.layer, RawGrpc.layer, checkReceiverLayer)
