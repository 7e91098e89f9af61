/**
 * PushReceiver: a webhook the conformance run owns, on loopback, for the push delivery check. The
 * program only asks for a URL and waits for a post to it; the door that runs the check provides the
 * receiver (relay's webhook server on a free port), and a door without one leaves the check skipped.
 */
import { Context, type Duration, type Effect, type Option } from "effect"
import type { NotificationRecord } from "../domain/notification.js"

export class PushReceiver extends Context.Tag("relay/PushReceiver")<PushReceiver, {
  /** The URL of a fresh path on the receiver. */
  readonly urlFor: (path: string) => string
  /** The first post to `path`, once it arrives; none after `within`. */
  readonly awaitPost: (path: string, within: Duration.DurationInput) => Effect.Effect<Option.Option<NotificationRecord>>
}>() {}
