/**
 * A PostgreSQL channel's notifications (LISTEN), over a connection of their own, for the PostgreSQL
 * task store's instances to hear each other's changes.
 *
 * Why not @effect/sql-pg's `listen`: the death of its connection goes unnoticed (the connection's
 * errors are swallowed and the stream never ends), so an instance whose connection dropped (a
 * restarted or failed-over server, an idle connection cut by a firewall, pg_terminate_backend) went
 * on deaf: its subscribers got other instances' changes only at the next periodic catch-up, and a
 * cancel written elsewhere no longer stopped its work. Here the stream fails when the connection
 * errs or ends, or when it stops answering a probe (a peer gone without a word leaves TCP silent),
 * and tells `Listening` each time LISTEN took, so that the caller, listening again, reads what it
 * may have missed meanwhile.
 */
import { Data, Duration, Effect, Schedule, Stream } from "effect"
import Pg from "pg"

/** The connection the notifications came over was lost (or never made). */
export class NotificationsLost extends Data.TaggedError("NotificationsLost")<{ readonly reason: string }> {}

/** LISTEN took: notifications from now on arrive; any before were missed. */
export interface Listening {
  readonly _tag: "Listening"
}

export interface Notification {
  readonly _tag: "Notification"
  readonly payload: string
}

export type Notice = Listening | Notification

export interface ListenOptions {
  readonly url: string
  readonly channel: string
  /** What pg_stat_activity shows for the connection. */
  readonly applicationName: string
  /** How often the connection is asked to answer; one not answered within as long is lost. */
  readonly probeEvery: Duration.Duration
  /** An error's text fit to show (the connection string's password never in it). */
  readonly describe: (error: unknown) => string
}

const LISTENING: Listening = { _tag: "Listening" }
const CONNECT_TIMEOUT_MS = 5_000
const END_TIMEOUT = Duration.seconds(1)

/** A connected client, closed with the scope; its errors go to `lost` (an unheard 'error' would end the process). */
const connected = (options: ListenOptions, lost: (reason: string) => void) =>
  Effect.acquireRelease(
    Effect.tryPromise({
      try: async () => {
        const client = new Pg.Client({
          connectionString: options.url,
          application_name: options.applicationName,
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
          keepAlive: true
        })
        client.on("error", (error) => lost(options.describe(error)))
        client.on("end", () => lost("the connection ended"))
        await client.connect()
        return client
      },
      catch: (error) => new NotificationsLost({ reason: options.describe(error) })
    }),
    (client) => Effect.ignore(Effect.tryPromise(() => client.end()).pipe(Effect.timeout(END_TIMEOUT)))
  )

/** Fails when the connection does not answer a trivial query within `probeEvery`, asked every `probeEvery`. */
const probe = (client: Pg.Client, options: ListenOptions) =>
  Effect.repeat(
    Effect.tryPromise({
      try: () => client.query("SELECT 1"),
      catch: (error) => new NotificationsLost({ reason: options.describe(error) })
    }).pipe(
      Effect.timeoutFail({
        duration: options.probeEvery,
        onTimeout: () => new NotificationsLost({ reason: `no answer within ${Duration.format(options.probeEvery)}` })
      })
    ),
    Schedule.spaced(options.probeEvery)
  )

/** The channel's notifications, `Listening` first; fails once the connection is lost (retry it to listen again). */
export const notifications = (options: ListenOptions): Stream.Stream<Notice, NotificationsLost> =>
  Stream.asyncScoped<Notice, NotificationsLost>((emit) =>
    Effect.gen(function*() {
      const lost = (reason: string) => void emit.fail(new NotificationsLost({ reason }))
      const client = yield* connected(options, lost)
      yield* Effect.tryPromise({
        try: () => client.query(`LISTEN ${client.escapeIdentifier(options.channel)}`),
        catch: (error) => new NotificationsLost({ reason: options.describe(error) })
      })
      // Listening first, then what comes: a notification that came with LISTEN's answer is not heard,
      // and what it told is read by whoever heard `Listening` (they read what they missed).
      void emit.single(LISTENING)
      client.on("notification", (message) => {
        if (message.channel === options.channel && message.payload !== undefined) {
          void emit.single({ _tag: "Notification", payload: message.payload })
        }
      })
      yield* Effect.forkScoped(Effect.catchAll(probe(client, options), (error) => Effect.sync(() => lost(error.reason))))
    })
  )
