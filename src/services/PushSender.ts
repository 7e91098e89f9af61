/**
 * PushSender: posts a task's events to the webhooks registered for it.
 *
 * Each push config gets a fiber of its own that takes the task's updates in order and posts
 * them one after another, so a slow or dead webhook never delays the task, other webhooks or
 * the caller. Every post has a timeout and is retried with backoff on network errors, timeouts,
 * 408, 429 and 5xx; a post that still fails is logged and skipped.
 *
 * Each update is recorded in the task storage as a pending delivery as soon as the config's fiber
 * gets it (before any post, and ahead of the posts still going on), with its attempts and the time
 * of the next one, and settled when delivered or given up: a restarted process (another instance,
 * with a shared storage) takes over the ones left with `resume`, at the attempt they had reached.
 * Recorded right after the task's write rather than in it: the write is every task's hot path in
 * every storage, and what a crash in between loses is covered for unfinished tasks by the restart
 * (they end failed, and their configs get that update). A webhook that falls more than `maxWaiting`
 * updates behind gets the task as it then stands in place of the updates it has not taken (`follow`).
 *
 * Bodies follow the generation the config was registered over: v1.0 posts the StreamResponse
 * (`application/a2a+json`), v0.3 posts the whole Task as v0.3 JSON. `Authorization: <scheme>
 * <credentials>` is sent when the config has authentication, `X-A2A-Notification-Token` when
 * it has a token.
 */
import { HttpClientRequest } from "@effect/platform"
import { Clock, Context, Duration, Effect, Either, FiberMap, Layer, Option, type ParseResult, Queue, Schema, Stream } from "effect"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import { TaskAsV03 } from "../a2a/translate.js"
import * as V1 from "../a2a/v1.js"
import { type AddressKind, hostKinds } from "../domain/ipAddresses.js"
import { redactUrl, redactUrlIn } from "../domain/secrets.js"
import { guardedHttpClient, refusalIn, type ResolveHost } from "./connectGuard.js"
import type { PendingDeliveries, PendingDelivery } from "./TaskStorage.js"
import type { TaskUpdate } from "./TaskStore.js"

export type { ResolveHost } from "./connectGuard.js"

export const NOTIFICATION_TOKEN_HEADER = "X-A2A-Notification-Token"
const A2A_JSON = "application/a2a+json"

/** Where to post one task's events, and how. */
export interface PushTarget {
  /** With `id`, `taskId` and `url` set. */
  readonly config: V1.TaskPushNotificationConfig
  readonly generation: ProtocolVersion
}

/** Which webhook hosts may be posted to (a guard against server-side request forgery). */
export interface WebhookPolicy {
  /** 127.0.0.0/8, ::1 and localhost, in any spelling: needed for local development and tests. */
  readonly allowLoopback: boolean
  /** Every other address that is not global unicast: private, link-local (cloud metadata), unique local, unspecified, … */
  readonly allowPrivate: boolean
}

export interface PushSenderOptions extends Partial<WebhookPolicy> {
  /** Longest wait for one post. Default 10 s. */
  readonly timeout?: Duration.DurationInput | undefined
  /** Retries after a failed post. Default 3. */
  readonly retries?: number | undefined
  /** First pause between retries, doubled each time. Default 250 ms. */
  readonly backoff?: Duration.DurationInput | undefined
  /** How webhook host names are resolved when connecting (default: the system resolver). */
  readonly resolveHost?: ResolveHost | undefined
  /** Updates waiting for one config's posts, past which they are folded into the task as it stands (see `follow`). Default 100. */
  readonly maxWaiting?: number | undefined
}

export const DEFAULT_PUSH_TIMEOUT = Duration.seconds(10)
export const DEFAULT_PUSH_RETRIES = 3
export const DEFAULT_PUSH_BACKOFF = Duration.millis(250)
export const DEFAULT_MAX_WAITING = 100

/** Said after a config's last update, to the fiber posting them. */
const NO_MORE = Symbol("no more updates")

export class PushSender extends Context.Tag("relay/PushSender")<PushSender, {
  /** Why this webhook URL may not be used, or undefined when it may. */
  readonly checkUrl: (url: string) => string | undefined
  /** Posts every update to the target from a fiber of its own, each recorded in `pending` until done; returns at once. */
  readonly start: (target: PushTarget, updates: Stream.Stream<TaskUpdate>, pending: PendingDeliveries) => Effect.Effect<void>
  /** Goes on with deliveries to the target a stopped process left (claimed from `pending`), in order; returns at once. */
  readonly resume: (target: PushTarget, deliveries: ReadonlyArray<PendingDelivery>, pending: PendingDeliveries) => Effect.Effect<void>
  /** Stops posting to one config (deleted by the client). */
  readonly stop: (taskId: string, configId: string) => Effect.Effect<void>
  /**
   * Stops every delivery, and starts none after (the process is stopping): what was not delivered stays
   * pending in the storage, for the next start or another instance. Called before the storage closes.
   */
  readonly stopAll: Effect.Effect<void>
}>() {}

// ---------------------------------------------------------------------------
// The SSRF guard
//
// Two checks, one rule. An IP literal is judged by the address it reaches (see ipAddresses) when a
// config is accepted and again before each post; a host name when it is connected to, through the
// guarded client of connectGuard (which says why at connect time). Redirects are never followed,
// so a public webhook cannot bounce a post inward.

const refusalOf = (kind: AddressKind, policy: WebhookPolicy, host: string): string | undefined => {
  if (kind === "loopback" && !policy.allowLoopback) return `loopback webhook ${host} is not allowed`
  if (kind === "private" && !policy.allowPrivate) {
    return `webhook host ${host} reaches a private, link-local or otherwise non-public address, which is not allowed`
  }
  return undefined
}

/** Why posting to `host` (a literal or localhost; other names pass) is refused, named as `shown`. */
const hostProblem = (host: string, policy: WebhookPolicy, shown: string) =>
  (hostKinds(host) ?? []).map((kind) => refusalOf(kind, policy, shown)).find((problem) => problem !== undefined)

/**
 * Why a webhook URL is refused under the policy, or undefined when it is fine. Only http(s) is
 * allowed; IP literals are judged by the address they reach, host names when they are resolved.
 */
export const webhookUrlProblem = (url: string, policy: WebhookPolicy): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return `"${url}" is not an absolute URL`
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return `webhooks must use http or https, not ${parsed.protocol.replace(/:$/, "")}`
  }
  return hostProblem(parsed.hostname, policy, parsed.hostname)
}

// ---------------------------------------------------------------------------
// Delivery

const encodeStreamResponse = Schema.encode(V1.StreamResponse)
const encodeTaskV03 = Schema.encode(TaskAsV03)

/** The body and content type of one notification. */
const bodyOf = (
  target: PushTarget,
  update: Pick<TaskUpdate, "event" | "task">
): Effect.Effect<{ readonly json: unknown; readonly contentType: string }, ParseResult.ParseError> =>
  target.generation === "1.0"
    ? Effect.map(encodeStreamResponse(update.event), (json) => ({ json, contentType: A2A_JSON }))
    : Effect.map(encodeTaskV03(update.task), (json) => ({ json, contentType: "application/json" }))

const authHeaders = (config: V1.TaskPushNotificationConfig): Record<string, string> => {
  const headers: Record<string, string> = {}
  const auth = config.authentication
  if (auth?.credentials !== undefined) headers["authorization"] = `${auth.scheme} ${auth.credentials}`
  if (config.token !== undefined) headers[NOTIFICATION_TOKEN_HEADER.toLowerCase()] = config.token
  return headers
}

class PostFailed {
  constructor(readonly reason: string, readonly retryable: boolean) {}
}

const isRetryableStatus = (status: number) => status === 408 || status === 429 || status >= 500

export const make = (options: PushSenderOptions = {}) =>
  Effect.gen(function*() {
    const policy: WebhookPolicy = {
      allowLoopback: options.allowLoopback ?? true,
      allowPrivate: options.allowPrivate ?? false
    }
    const client = yield* guardedHttpClient((address, hostname) => hostProblem(address, policy, hostname), options.resolveHost)
    const fibers = yield* FiberMap.make<string>()
    const timeout = Duration.decode(options.timeout ?? DEFAULT_PUSH_TIMEOUT)
    const retries = options.retries ?? DEFAULT_PUSH_RETRIES
    const backoff = Duration.toMillis(options.backoff ?? DEFAULT_PUSH_BACKOFF)

    /** One post to `url`; a transport error's message names the URL, which may hold a token: it is shown redacted. */
    const postOnce = (request: HttpClientRequest.HttpClientRequest, url: string) =>
      client.execute(request).pipe(
        Effect.mapError((error) => {
          const refusal = refusalIn(error)
          return refusal === undefined ? new PostFailed(redactUrlIn(error.message, url), true) : new PostFailed(refusal, false)
        }),
        Effect.flatMap((response) =>
          response.status >= 200 && response.status < 300
            ? Effect.void
            : Effect.fail(new PostFailed(`HTTP ${response.status}`, isRetryableStatus(response.status)))
        ),
        Effect.scoped,
        Effect.timeoutFail({ duration: timeout, onTimeout: () => new PostFailed(`no answer within ${Duration.format(timeout)}`, true) })
      )

    /** One post of the delivery's update; fails with why. */
    const post = (target: PushTarget, delivery: PendingDelivery) =>
      Effect.gen(function*() {
        // The literal was checked when the config was accepted; checked again here, where it is used.
        const problem = webhookUrlProblem(target.config.url, policy)
        if (problem !== undefined) return yield* Effect.fail(new PostFailed(problem, false))
        const { json, contentType } = yield* Effect.mapError(bodyOf(target, delivery), (error) => new PostFailed(error.message, false))
        const request = HttpClientRequest.post(target.config.url).pipe(
          HttpClientRequest.setHeaders(authHeaders(target.config)),
          HttpClientRequest.bodyText(JSON.stringify(json), contentType)
        )
        yield* postOnce(request, target.config.url)
      })

    /**
     * Posts the delivery from the attempt it reached, waiting for each attempt's time: retried with
     * backoff doubling after each failure (the same whoever resumes it), each failure stored; then settled.
     */
    const deliver = (target: PushTarget, pending: PendingDeliveries, first: PendingDelivery) =>
      Effect.gen(function*() {
        let delivery = first
        for (;;) {
          const wait = delivery.due - (yield* Clock.currentTimeMillis)
          if (wait > 0) yield* Effect.sleep(Duration.millis(wait))
          const posted = yield* Effect.either(post(target, delivery))
          if (Either.isRight(posted)) return
          const failure = posted.left
          if (!failure.retryable || delivery.attempts >= retries) {
            yield* Effect.logWarning(
              `Push notification for task ${delivery.taskId} to ${redactUrl(target.config.url)} failed: ${failure.reason}`
            )
            return
          }
          const due = (yield* Clock.currentTimeMillis) + backoff * 2 ** delivery.attempts
          delivery = { ...delivery, attempts: delivery.attempts + 1, due }
          yield* pending.reschedule(delivery)
        }
      }).pipe(Effect.zipRight(Effect.suspend(() => pending.settle(first))))

    /** The update recorded as a pending delivery; None when it was recorded already (another instance makes it). */
    const recorded = (target: PushTarget, pending: PendingDeliveries, update: TaskUpdate) =>
      Effect.flatMap(Clock.currentTimeMillis, (now) => {
        const delivery: PendingDelivery = {
          taskId: target.config.taskId ?? "",
          configId: target.config.id ?? "",
          version: update.version,
          event: update.event,
          task: update.task,
          attempts: 0,
          due: now
        }
        return Effect.map(pending.record(delivery), (fresh) => fresh ? Option.some(delivery) : Option.none())
      })

    const maxWaiting = options.maxWaiting ?? DEFAULT_MAX_WAITING

    /**
     * The waiting deliveries folded into the newest, its event the task as it now stands (a StreamResponse
     * as any other): stored so first, then the others settled, so that a crash in between loses none.
     */
    const fold = (pending: PendingDeliveries, behind: ReadonlyArray<PendingDelivery>) =>
      Effect.gen(function*() {
        const newest = behind[behind.length - 1]!
        const folded: PendingDelivery = { ...newest, event: { task: newest.task } }
        yield* pending.reschedule(folded)
        yield* Effect.forEach(behind.slice(0, -1), pending.settle, { discard: true })
        return folded
      })

    /**
     * Posts the task's updates to the target in order, each recorded as it comes (ahead of the posts, so
     * an update waiting behind a failing webhook is in the store too). A webhook more than `maxWaiting`
     * updates behind gets the task as it then stands in place of those it has not taken: each holds the
     * task as it was, and a task that goes on would otherwise pile them up without end.
     */
    const follow = (target: PushTarget, updates: Stream.Stream<TaskUpdate>, pending: PendingDeliveries) =>
      Effect.gen(function*() {
        const waiting = yield* Queue.unbounded<PendingDelivery | typeof NO_MORE>()
        const wait = (delivery: PendingDelivery) =>
          Effect.gen(function*() {
            if (Option.getOrElse(waiting.unsafeSize(), () => 0) < maxWaiting) return yield* Queue.offer(waiting, delivery)
            // NO_MORE comes after the last update: what is taken here is deliveries alone.
            const behind = [...(yield* Queue.takeAll(waiting))] as Array<PendingDelivery>
            return yield* Queue.offer(waiting, yield* fold(pending, [...behind, delivery]))
          })
        yield* Effect.forkScoped(updates.pipe(
          Stream.mapEffect((update) => recorded(target, pending, update)),
          Stream.runForEach(Option.match({ onNone: () => Effect.void, onSome: wait })),
          Effect.zipRight(Queue.offer(waiting, NO_MORE))
        ))
        for (;;) {
          const next = yield* Queue.take(waiting)
          if (next === NO_MORE) return
          yield* deliver(target, pending, next)
        }
      }).pipe(Effect.scoped)

    const keyOf = (taskId: string, configId: string) => `${taskId}\u0000${configId}`
    /** The fiber resuming a config's deliveries is kept apart from the one following its task now. */
    const resumeKeyOf = (taskId: string, configId: string) => `${keyOf(taskId, configId)}\u0000resumed`

    let stopped = false
    const unlessStopped = (deliveries: Effect.Effect<void>) => Effect.suspend(() => stopped ? Effect.void : deliveries)

    return PushSender.of({
      checkUrl: (url) => webhookUrlProblem(url, policy),
      start: (target, updates, pending) =>
        unlessStopped(
          FiberMap.run(
            fibers,
            keyOf(target.config.taskId ?? "", target.config.id ?? ""),
            follow(target, updates, pending)
          ).pipe(Effect.asVoid)
        ),
      resume: (target, deliveries, pending) =>
        unlessStopped(
          FiberMap.run(
            fibers,
            resumeKeyOf(target.config.taskId ?? "", target.config.id ?? ""),
            Effect.forEach(deliveries, (delivery) => deliver(target, pending, delivery), { discard: true })
          ).pipe(Effect.asVoid)
        ),
      stop: (taskId, configId) =>
        Effect.zipRight(FiberMap.remove(fibers, keyOf(taskId, configId)), FiberMap.remove(fibers, resumeKeyOf(taskId, configId))),
      stopAll: Effect.suspend(() => {
        stopped = true
        return FiberMap.clear(fibers)
      })
    })
  })

/** The sender with its guarded HTTP client; its delivery fibers stop when the layer's scope closes. */
export const layer = (options: PushSenderOptions = {}): Layer.Layer<PushSender> => Layer.scoped(PushSender, make(options))
