/**
 * Following a task as it changes: fold stream events into a snapshot and tell the door what is
 * new, or poll GetTask until the task needs the caller or is finished. Shared by send, stream,
 * resubscribe and wait.
 */
import { Duration, Effect, Option, Ref, Schedule, Stream } from "effect"
import { applyStreamEvent, resultText } from "../domain/a2a/text.js"
import * as V1 from "../domain/a2a/v1.js"
import { type A2aClientError, InvalidResponse } from "../domain/clientErrors.js"
import { type TaskView, taskView } from "../domain/results.js"
import { A2aClient, type Target } from "../services/A2aClient.js"

/** What a door hears while a task runs: the current view and the text added since last time. */
export interface TaskUpdate {
  readonly view: TaskView
  /** Text that arrived since the previous update ("" when only the state changed). */
  readonly delta: string
}

export type OnUpdate = (update: TaskUpdate) => Effect.Effect<void>

export const ignoreUpdates: OnUpdate = () => Effect.void

/** Final for a conversation turn: finished, or waiting for the user. */
export const isSettled = (task: V1.Task) => V1.isSettledState(task.status.state)

const deltaOf = (before: string, after: string) => (after.startsWith(before) ? after.slice(before.length) : after)

/**
 * Consumes a stream of events into the last answer (a Task snapshot or a direct Message),
 * calling `onUpdate` for every change. `onSnapshot` sees each snapshot, so a caller can save the
 * task id even if the stream breaks later.
 */
export const followStream = <R = never>(
  url: string,
  events: Stream.Stream<V1.StreamResponse, A2aClientError>,
  onUpdate: OnUpdate,
  onSnapshot?: (task: V1.Task) => Effect.Effect<void, never, R>
): Effect.Effect<V1.SendMessageResponse, A2aClientError, R> =>
  Effect.gen(function*() {
    const snapshot = yield* Ref.make<V1.Task | undefined>(undefined)
    const message = yield* Ref.make<V1.Message | undefined>(undefined)
    const shownText = yield* Ref.make("")
    yield* Stream.runForEach(events, (event) =>
      Effect.gen(function*() {
        if ("message" in event) {
          yield* Ref.set(message, event.message)
          return
        }
        const next = applyStreamEvent(yield* Ref.get(snapshot), event)
        if (next === undefined) return
        yield* Ref.set(snapshot, next)
        if (onSnapshot !== undefined) yield* onSnapshot(next)
        const text = resultText(next)
        const delta = deltaOf(yield* Ref.getAndSet(shownText, text), text)
        yield* onUpdate({ view: taskView(next), delta })
      }))
    const task = yield* Ref.get(snapshot)
    if (task !== undefined) return { task }
    const reply = yield* Ref.get(message)
    if (reply !== undefined) return { message: reply }
    return yield* new InvalidResponse({ url, reason: "the stream ended without a task or a message" })
  })

export interface WaitOptions {
  /** Give up waiting (not the task) after this long; the last view is returned. */
  readonly maxWait: Duration.DurationInput
  readonly onUpdate?: OnUpdate
  readonly historyLength?: number
}

/**
 * Polls GetTask (1 s, growing to 5 s) until the task is settled or `maxWait` passes; returns the
 * last task seen either way. Each change of state or text is reported through `onUpdate`.
 */
export const pollUntilSettled = (target: Target, taskId: string, options: WaitOptions) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const onUpdate = options.onUpdate ?? ignoreUpdates
    const last = yield* Ref.make<Option.Option<V1.Task>>(Option.none())
    const shownText = yield* Ref.make("")
    const poll = Effect.gen(function*() {
      const task = yield* client.getTask(target, {
        id: taskId,
        ...(options.historyLength === undefined ? {} : { historyLength: options.historyLength })
      })
      const previous = yield* Ref.getAndSet(last, Option.some(task))
      const text = resultText(task)
      const changed = Option.match(previous, {
        onNone: () => true,
        onSome: (before) => before.status.state !== task.status.state || resultText(before) !== text
      })
      if (changed) yield* onUpdate({ view: taskView(task), delta: deltaOf(yield* Ref.getAndSet(shownText, text), text) })
      return task
    })
    const first = yield* poll
    if (isSettled(first)) return first
    // Waits 1 s, 1.5 s, 2.25 s … between polls, never more than 5 s.
    const schedule = Schedule.exponential("1 second", 1.5).pipe(Schedule.union(Schedule.spaced("5 seconds")))
    yield* Effect.sleep("1 second").pipe(
      Effect.zipRight(Effect.repeat(poll, { schedule, until: isSettled })),
      Effect.timeoutOption(options.maxWait)
    )
    return Option.getOrElse(yield* Ref.get(last), () => first)
  })
