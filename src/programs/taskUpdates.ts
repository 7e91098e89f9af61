/**
 * Following a task as it changes: fold stream events into a snapshot and tell the door what is
 * new, or poll GetTask, until the turn is answered. Shared by send, stream, resubscribe and wait.
 *
 * A turn is answered by events, not by one snapshot: a message sent into a task that waits for
 * input is not answered by that same waiting status. SDK executors re-publish the task as it
 * was when a turn starts, so the first snapshot after a follow-up often still asks the old
 * question; relay keeps following until the task shows a status other than the one the message
 * was sent into.
 */
import { Clock, Duration, Effect, Option, Ref, Stream } from "effect"
import { applyStreamEvent, artifactsText, partsText, resultText } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import { type A2aClientError, InvalidResponse, RequestTimeout } from "../domain/clientErrors.js"
import { type TaskView, taskView } from "../domain/results.js"
import { A2aClient, type Target } from "../services/A2aClient.js"

/**
 * What a door hears while a task runs: the current view, the answer's text added since last time
 * and the agent's status text now, kept apart so a door can show them in different places.
 */
export interface TaskUpdate {
  readonly view: TaskView
  /** Answer text (the artifacts) that arrived since the previous update ("" when none did). */
  readonly delta: string
  /** What the agent's current status message says ("" when it says nothing). */
  readonly status: string
}

export type OnUpdate = (update: TaskUpdate) => Effect.Effect<void>

export const ignoreUpdates: OnUpdate = () => Effect.void

/** Sees every snapshot of the task, e.g. to save it or to keep the latest for a deadline. */
export type OnSnapshot = (task: V1.Task) => Effect.Effect<void>

/**
 * Final for a conversation turn: finished, or waiting for the user. A state A2A does not define
 * counts as final too: nothing tells whether it ever ends, so following it could last forever.
 */
export const isSettled = (task: V1.Task) => V1.isSettledState(task.status.state) || task.status.unknownState !== undefined

// ---------------------------------------------------------------------------
// Turns: which snapshot answers a message

/** What tells one status of a task from another. */
export interface StatusMark {
  readonly state: V1.TaskState
  readonly timestamp: string | undefined
  readonly messageId: string | undefined
}

export const statusMark = (task: V1.Task): StatusMark => ({
  state: task.status.state,
  timestamp: task.status.timestamp,
  messageId: task.status.message?.messageId
})

/** A message sent into a task: the status it found there (none for a new task) and when. */
export interface Turn {
  readonly before: StatusMark | undefined
  readonly sentAt: number
}

/**
 * An agent that stamps its statuses with neither a time nor a message id cannot show that a
 * waiting status is new; after this long the same status is taken as its answer.
 */
export const UNMARKED_SETTLE_WINDOW = Duration.seconds(3)

const differs = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined && a !== b
const bothKnown = (a: string | undefined, b: string | undefined) => a !== undefined && b !== undefined

/** "new" for a status other than the one the message found, "same" when it is that one again. */
export const compareStatus = (task: V1.Task, before: StatusMark | undefined): "new" | "same" | "unknown" => {
  if (before === undefined) return "new"
  const now = statusMark(task)
  if (now.state !== before.state || differs(now.timestamp, before.timestamp) || differs(now.messageId, before.messageId)) {
    return "new"
  }
  return bothKnown(now.timestamp, before.timestamp) || bothKnown(now.messageId, before.messageId) ? "same" : "unknown"
}

/** Whether `task` answers the turn: settled in a status the message did not find there. */
export const answersTurn = (turn: Turn, task: V1.Task, now: number): boolean => {
  if (!isSettled(task)) return false
  const compared = compareStatus(task, turn.before)
  return compared === "new" || (compared === "unknown" && now - turn.sentAt >= Duration.toMillis(UNMARKED_SETTLE_WINDOW))
}

/**
 * The task as the caller should see it during a turn: the status the message found, seen again,
 * is the agent not having answered yet, so it reads as working (without the old question).
 */
export const presentForTurn = (turn: Turn | undefined, task: V1.Task): V1.Task => {
  if (turn === undefined || !isSettled(task) || compareStatus(task, turn.before) === "new") return task
  // The history holds the old question too, and the text would fall back to it.
  const { history: _oldQuestion, ...rest } = task
  return { ...rest, status: { state: "TASK_STATE_WORKING", ...(task.status.timestamp === undefined ? {} : { timestamp: task.status.timestamp }) } }
}

// ---------------------------------------------------------------------------
// Following

const deltaOf = (before: string, after: string) => (after.startsWith(before) ? after.slice(before.length) : after)

/** Reports a snapshot to the door when its state or text changed since the last report. */
export const makeReporter = (onUpdate: OnUpdate): Effect.Effect<Reporter> =>
  Effect.map(Ref.make<{ state?: V1.TaskState; text: string; answer: string; status: string }>({ text: "", answer: "", status: "" }), (shown) => (task: V1.Task) =>
    Effect.flatMap(Ref.get(shown), (last) => {
      const text = resultText(task)
      const answer = artifactsText(task)
      const status = partsText(task.status.message?.parts ?? [])
      if (last.state === task.status.state && last.text === text && last.status === status) return Effect.void
      return Effect.zipRight(
        Ref.set(shown, { state: task.status.state, text, answer, status }),
        onUpdate({ view: taskView(task), delta: deltaOf(last.answer, answer), status })
      )
    }))

/** Tells the door about a snapshot when it shows something new. */
export type Reporter = (task: V1.Task) => Effect.Effect<void>

export interface FollowOptions {
  readonly onUpdate?: OnUpdate | undefined
  /**
   * One reporter for a whole conversation, so the legs of one follow (a stream, then a
   * subscription, then polls) never report the same text twice.
   */
  readonly report?: Reporter | undefined
  readonly onSnapshot?: OnSnapshot | undefined
  /** The message this follows; without one, any settled state ends the following. */
  readonly turn?: Turn | undefined
}

const isDone = (turn: Turn | undefined, task: V1.Task) =>
  turn === undefined ? Effect.succeed(isSettled(task)) : Effect.map(Clock.currentTimeMillis, (now) => answersTurn(turn, task, now))

/**
 * Consumes a stream of events into the last answer (a Task snapshot or a direct Message),
 * reporting every change. With a turn, the stream is left once the turn is answered.
 */
export const followStream = (
  url: string,
  events: Stream.Stream<V1.StreamResponse, A2aClientError>,
  options: FollowOptions = {}
): Effect.Effect<V1.SendMessageResponse, A2aClientError> =>
  Effect.gen(function*() {
    const report = options.report ?? (yield* makeReporter(options.onUpdate ?? ignoreUpdates))
    const snapshot = yield* Ref.make<V1.Task | undefined>(undefined)
    const message = yield* Ref.make<V1.Message | undefined>(undefined)
    const answered = yield* Ref.make(false)
    const consume = (event: V1.StreamResponse) =>
      Effect.gen(function*() {
        if ("message" in event) return yield* Ref.set(message, event.message)
        const next = applyStreamEvent(yield* Ref.get(snapshot), event)
        if (next === undefined) return
        yield* Ref.set(snapshot, next)
        if (options.onSnapshot !== undefined) yield* options.onSnapshot(next)
        yield* report(presentForTurn(options.turn, next))
        if (options.turn !== undefined) yield* Ref.set(answered, yield* isDone(options.turn, next))
      })
    yield* events.pipe(
      Stream.mapEffect(consume),
      Stream.takeUntilEffect(() => Ref.get(answered)),
      Stream.runDrain
    )
    const task = yield* Ref.get(snapshot)
    if (task !== undefined) return { task }
    const reply = yield* Ref.get(message)
    if (reply !== undefined) return { message: reply }
    return yield* new InvalidResponse({ url, reason: "the stream ended without a task or a message" })
  })


type FollowTaskOptions = FollowOptions & { readonly historyLength?: number | undefined }

/**
 * Follows a task until it settles (or, with a turn, until the turn is answered). One GetTask
 * first: most answers are there at once. Then the agent's SubscribeToTask stream when its card
 * offers streaming (events, not guesses), else (or when the stream fails or ends early) polling.
 * Runs until then: callers bound it with `withinWait`.
 */
export const followTask = (target: Target, taskId: string, options: FollowTaskOptions = {}) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const follow = { ...options, report: options.report ?? (yield* makeReporter(options.onUpdate ?? ignoreUpdates)) }
    const poll = yield* makePoller(target, taskId, follow)
    const first = yield* poll
    if (first.done) return first.task
    const card = yield* Effect.option(client.discover(target))
    if (Option.isNone(card) || card.value.card.capabilities.streaming !== true) return yield* pollUntilDone(poll)
    const viaStream = Effect.option(followStream(target.agentUrl, client.subscribe(target, { id: taskId }), follow)).pipe(
      Effect.flatMap((streamed) => {
        const task = Option.isSome(streamed) && "task" in streamed.value ? streamed.value.task : undefined
        return task === undefined
          ? pollUntilDone(poll)
          : Effect.flatMap(isDone(follow.turn, task), (done) => (done ? Effect.succeed(task) : pollUntilDone(poll)))
      })
    )
    // A stream can fall silent without ending (a dropped final event; an agent whose statuses
    // carry no marks, so only time tells an answer): polling joins after a grace period.
    return yield* Effect.race(viaStream, Effect.zipRight(Effect.sleep(STREAM_GRACE), pollUntilDone(poll)))
  })

/** How long a subscription alone is trusted before polling joins it. */
const STREAM_GRACE = Duration.seconds(5)

/** One GetTask: the task, reported and tracked, and whether it ends the following. */
const makePoller = (target: Target, taskId: string, options: FollowTaskOptions) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const report = options.report ?? (yield* makeReporter(options.onUpdate ?? ignoreUpdates))
    return Effect.gen(function*() {
      const task = yield* client.getTask(target, {
        id: taskId,
        ...(options.historyLength === undefined ? {} : { historyLength: options.historyLength })
      })
      if (options.onSnapshot !== undefined) yield* options.onSnapshot(task)
      yield* report(presentForTurn(options.turn, task))
      return { task, done: yield* isDone(options.turn, task) }
    })
  })

/** Polls are 250 ms apart at first (an answer often comes at once), growing by half each time to at most 5 s apart. */
const FIRST_POLL_PAUSE_MS = 250
const LONGEST_POLL_PAUSE_MS = 5000

const pollUntilDone = <E, R>(poll: Effect.Effect<{ readonly task: V1.Task; readonly done: boolean }, E, R>) =>
  Effect.gen(function*() {
    for (let pause = FIRST_POLL_PAUSE_MS;; pause = Math.min(pause * 1.5, LONGEST_POLL_PAUSE_MS)) {
      yield* Effect.sleep(Duration.millis(pause))
      const polled = yield* poll
      if (polled.done) return polled.task
    }
  })

// ---------------------------------------------------------------------------
// Deadlines

/** How a bounded wait ended: with the follower's answer, or out of time with the last snapshot. */
export type Waited<A> =
  | { readonly finished: true; readonly value: A }
  | { readonly finished: false; readonly task: V1.Task }

/**
 * Runs `follow` for at most `maxWait`, connection and discovery included. When the time is up
 * the last snapshot `follow` saw is returned, or, when it saw none, a RequestTimeout says the
 * agent did not answer in time.
 */
export const withinWait = <A, E, R>(
  url: string,
  maxWait: Duration.DurationInput,
  follow: (onSnapshot: OnSnapshot) => Effect.Effect<A, E, R>
): Effect.Effect<Waited<A>, E | RequestTimeout, R> =>
  Effect.gen(function*() {
    const latest = yield* Ref.make(Option.none<V1.Task>())
    const done = yield* follow((task) => Ref.set(latest, Option.some(task))).pipe(Effect.timeoutOption(maxWait))
    if (Option.isSome(done)) return { finished: true, value: done.value } as const
    const last = yield* Ref.get(latest)
    if (Option.isSome(last)) return { finished: false, task: last.value } as const
    return yield* new RequestTimeout({ url, after: Duration.format(Duration.decode(maxWait)), limit: "wait" })
  })
