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
import { Clock, Duration, Effect, Option, Stream } from "effect"
import { isTextPart } from "../a2a/parts.js"
import { artifactsText, partsText } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import type { AnswerFold, ArtifactPiece, FoldStep } from "../domain/answerFold.js"
import { type AnswerPart, partView } from "../domain/answerParts.js"
import { type A2aClientError, InvalidResponse, RequestTimeout } from "../domain/clientErrors.js"
import { type TaskHead, taskHead } from "../domain/results.js"
import { A2aClient, type Target } from "../services/A2aClient.js"

/**
 * What a door hears while a task runs: the task's ids and state, the answer's text added since
 * last time and the agent's status text now, kept apart so a door can show them in different
 * places. The answer comes in pieces (never the whole text again), so a door's cost per update
 * does not grow with the answer.
 */
export interface TaskUpdate {
  readonly view: TaskHead
  /** Answer text (the artifacts) that arrived since the previous update ("" when none did). */
  readonly delta: string
  /**
   * The agent replaced an artifact (an update without `append`, A2A v0.3 §7.2.3, v1.0 §4.2.2) with
   * a text that does not continue what was shown: `delta` is that artifact's whole new text, to
   * show afresh rather than add.
   */
  readonly replaced: boolean
  /** What the agent's current status message says ("" when it says nothing). */
  readonly status: string
  /**
   * The file and data parts the update added to the answer's artifacts, as the result shows them
   * (answerParts.ts), files not saved yet: they are saved once, from the final answer.
   */
  readonly parts: ReadonlyArray<AnswerPart>
}

/** Largest answer a program keeps for one task or message (default MAX_ANSWER_BYTES). */
export interface AnswerLimit {
  readonly maxAnswerBytes?: number | undefined
}

export type OnUpdate = (update: TaskUpdate) => Effect.Effect<void>

export const ignoreUpdates: OnUpdate = () => Effect.void

/** Sees every task the agent shows, its artifacts left out (building them would cost the whole answer each time). */
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
  return {
    ...rest,
    status: { state: "TASK_STATE_WORKING", ...(task.status.timestamp === undefined ? {} : { timestamp: task.status.timestamp }) }
  }
}

// ---------------------------------------------------------------------------
// Following

/**
 * Tells the door what an event changed, when it shows something new: its state, its status text,
 * or answer text not shown yet.
 */
type Reporter = (step: FoldStep) => Effect.Effect<void>

/**
 * A reporter for one conversation. It remembers the text shown of each artifact, so an artifact
 * sent again whole (a snapshot, or an update without `append` that repeats the chunks, as Google
 * ADK sends) shows only what it adds, and a replacement that does not continue what was shown is
 * reported once, as `replaced`. Each report costs the event's own text, not the answer's.
 */
const makeReporter = (onUpdate: OnUpdate): Effect.Effect<Reporter> =>
  Effect.sync(() => {
    const shown = new Map<string, string>()
    let lastArtifact: string | undefined
    let state: V1.TaskState | undefined
    let status: V1.TaskStatus | undefined
    let statusText = ""
    let reportedStatus = ""
    /** What a piece adds to what the door has shown of its artifact. */
    const added = (piece: ArtifactPiece): { readonly text: string; readonly replaced: boolean } => {
      const before = shown.get(piece.artifactId)
      if (!piece.whole || before === undefined) {
        shown.set(piece.artifactId, (before ?? "") + piece.text)
        return { text: piece.text, replaced: false }
      }
      if (piece.text.startsWith(before)) {
        shown.set(piece.artifactId, piece.text)
        return { text: piece.text.slice(before.length), replaced: false }
      }
      // The same text again, only shorter (a trailing newline dropped): nothing new to show.
      if (before.startsWith(piece.text)) return { text: "", replaced: false }
      shown.set(piece.artifactId, piece.text)
      return { text: piece.text, replaced: true }
    }
    const othersTold = new Map<string, number>()
    /**
     * The file and data parts a piece adds to those told of its artifact: an appended chunk's all,
     * an artifact sent whole those past the ones told (its text parts are in the text already).
     */
    const othersAdded = (piece: ArtifactPiece): ReadonlyArray<AnswerPart> => {
      const others = piece.parts.filter((part) => !isTextPart(part))
      if (others.length === 0) return []
      const told = othersTold.get(piece.artifactId) ?? 0
      othersTold.set(piece.artifactId, piece.whole ? Math.max(told, others.length) : told + others.length)
      return (piece.whole ? others.slice(told) : others).map((part) => partView({ part, artifactId: piece.artifactId }))
    }
    /** A step's pieces as the door hears them: the text added, and each replacement apart. */
    const updatesOf = (pieces: ReadonlyArray<ArtifactPiece>) => {
      const updates: Array<{ delta: string; replaced: boolean }> = []
      let delta = ""
      for (const piece of pieces) {
        const { replaced, text } = added(piece)
        if (text === "") continue
        if (replaced) {
          if (delta !== "") updates.push({ delta, replaced: false })
          updates.push({ delta: text, replaced: true })
          delta = ""
        } else {
          // Artifacts stand on lines of their own, as in the whole answer (artifactsText).
          delta += `${lastArtifact !== undefined && lastArtifact !== piece.artifactId ? "\n" : ""}${text}`
        }
        lastArtifact = piece.artifactId
      }
      if (delta !== "") updates.push({ delta, replaced: false })
      return updates
    }
    return (step) =>
      Effect.suspend(() => {
        // The status text is worked out once per status, not once per event.
        if (step.head.status !== status) {
          status = step.head.status
          statusText = partsText(status.message?.parts ?? [])
        }
        const updates = updatesOf(step.pieces)
        const parts = step.pieces.flatMap(othersAdded)
        const news = step.head.status.state !== state || statusText !== reportedStatus || parts.length > 0
        if (updates.length === 0 && !news) return Effect.void
        state = step.head.status.state
        reportedStatus = statusText
        const view = taskHead(step.head)
        // The parts go with the first update of the step.
        return Effect.forEach(
          updates.length === 0 ? [{ delta: "", replaced: false }] : updates,
          (update, index) => onUpdate({ view, ...update, status: statusText, parts: index === 0 ? parts : [] }),
          { discard: true }
        )
      })
  })

export interface FollowOptions {
  readonly onUpdate?: OnUpdate | undefined
  /** Sees every task the agent shows, its artifacts left out (e.g. to save its state). */
  readonly onSnapshot?: OnSnapshot | undefined
  /** The message this follows; without one, any settled state ends the following. */
  readonly turn?: Turn | undefined
}

/**
 * One conversation's following: the answer folded from every leg (a stream, then a subscription,
 * then polls) and one reporter, so no leg reports the same text twice and the answer's limit
 * counts everything.
 */
export interface Follower {
  readonly answer: AnswerFold
  readonly turn: Turn | undefined
  /** Takes in one event or polled task; true when it settles the following (done, or the answer is cut). */
  readonly see: (event: V1.StreamResponse) => Effect.Effect<boolean>
}

export const makeFollower = (answer: AnswerFold, options: FollowOptions = {}): Effect.Effect<Follower> =>
  Effect.map(makeReporter(options.onUpdate ?? ignoreUpdates), (report) => ({
    answer,
    turn: options.turn,
    see: (event) =>
      Effect.suspend(() => {
        const step = answer.apply(event)
        if (step === undefined) return Effect.succeed(answer.cut())
        return Effect.gen(function*() {
          if (options.onSnapshot !== undefined) yield* options.onSnapshot(step.head)
          yield* report({ head: presentForTurn(options.turn, step.head), pieces: step.pieces })
          return yield* isDone(options.turn, step.head)
        })
      })
  }))

const isDone = (turn: Turn | undefined, task: V1.Task) =>
  turn === undefined ? Effect.succeed(isSettled(task)) : Effect.map(Clock.currentTimeMillis, (now) => answersTurn(turn, task, now))

/** How much of a stream is read at most before Node's event loop gets a turn. */
const EVENT_LOOP_TURN_EVERY = Duration.millis(20)

/**
 * Effect runs fibers on microtasks: while a fast stream's events are buffered, its fiber can read
 * and report them for seconds of a loaded machine's time without letting Node's event loop run, and
 * a Ctrl-C waits for that turn. A timer's turn this often keeps a signal's wait short whatever the
 * stream's pace; under a test clock, time never passes and no turn is taken.
 */
const makeEventLoopTurns = () => {
  let lastTurn = 0
  return Effect.flatMap(Clock.currentTimeMillis, (now) => {
    if (now - lastTurn < Duration.toMillis(EVENT_LOOP_TURN_EVERY)) return Effect.void
    lastTurn = now
    return Effect.sleep(Duration.zero)
  })
}

/**
 * Consumes a stream of events into the answer (the latest Task, or a direct Message), reporting
 * every change. Reading stops once the answer is cut at its limit, and, with a turn, once the turn
 * is answered; otherwise at the stream's end.
 */
export const followStream = (
  url: string,
  events: Stream.Stream<V1.StreamResponse, A2aClientError>,
  follower: Follower
): Effect.Effect<V1.SendMessageResponse, A2aClientError> =>
  Effect.gen(function*() {
    const eventLoopTurn = makeEventLoopTurns()
    yield* events.pipe(
      Stream.mapEffect((event) => Effect.zipRight(eventLoopTurn, follower.see(event))),
      Stream.takeUntil((done) => follower.answer.cut() || (follower.turn !== undefined && done)),
      Stream.runDrain
    )
    const answer = follower.answer.answer()
    if (answer !== undefined) return answer
    return yield* new InvalidResponse({ url, reason: "the stream ended without a task or a message" })
  })

/**
 * How the history is asked for: the caller's `historyLength`, else none (0). Every snapshot would
 * otherwise carry the whole conversation, the message just sent included: a file sent comes back
 * in every poll, and with the answer's copy of it can pass the limit of one response.
 */
const askedHistory = (historyLength: number | undefined) => historyLength ?? 0

/**
 * Whether the answer's text would come from the history (a2a/text.ts resultText): no artifact
 * text and no status text. Only then is the history fetched, once, when it was not asked for.
 */
const answersInHistory = (task: V1.Task) => artifactsText(task) === "" && partsText(task.status.message?.parts ?? []) === ""

/**
 * The finished task with the history its text falls back to, for the rare agent that answers only
 * in history messages: fetched once more, whole, when the caller did not ask for history and the
 * task has no other answer. It goes through the follower, so the answer's limit counts it.
 */
export const withAnswerHistory = (target: Target, follower: Follower, historyLength: number | undefined) => (task: V1.Task) =>
  historyLength !== undefined || follower.answer.cut() || !answersInHistory(task) || task.history !== undefined
    ? Effect.succeed(task)
    : Effect.flatMap(A2aClient, (client) => client.getTask(target, { id: task.id })).pipe(
      Effect.flatMap((whole) => follower.see({ task: whole })),
      Effect.map(() => follower.answer.task() ?? task),
      // The answer stands without its history; a failed fetch takes nothing from it.
      Effect.orElseSucceed(() => task)
    )

export interface FollowTaskOptions {
  /** Messages of the history to ask for; none when not given (see askedHistory). */
  readonly historyLength?: number | undefined
  /**
   * False when the task's history holds a large message (a file just sent): SubscribeToTask has no
   * historyLength, and its opening snapshot would carry the file back, so the task is polled.
   */
  readonly subscribe?: boolean | undefined
}

/**
 * Follows a task until it settles (or, with a turn, until the turn is answered), or its answer is
 * cut. One GetTask first: most answers are there at once. Then the agent's SubscribeToTask stream
 * when its card offers streaming (events, not guesses), else (or when the stream fails or ends
 * early) polling. Runs until then: callers bound it with `withinWait`.
 */
export const followTask = (target: Target, taskId: string, follower: Follower, options: FollowTaskOptions = {}) =>
  Effect.flatMap(followTaskEvents(target, taskId, follower, options), withAnswerHistory(target, follower, options.historyLength))

const followTaskEvents = (target: Target, taskId: string, follower: Follower, options: FollowTaskOptions) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const getTask = Effect.suspend(() => client.getTask(target, { id: taskId, historyLength: askedHistory(options.historyLength) }))
    const poll = Effect.flatMap(getTask, (task) => follower.see({ task }))
    // The first poll succeeded, so the answer holds a task from here on.
    const latest = () => follower.answer.task()!
    if (yield* poll) return latest()
    const card = options.subscribe === false ? Option.none() : yield* Effect.option(client.discover(target))
    if (Option.isNone(card) || card.value.card.capabilities.streaming !== true) return yield* pollUntilDone(poll, latest)
    const viaStream = Effect.option(followStream(target.agentUrl, client.subscribe(target, { id: taskId }), follower)).pipe(
      Effect.zipRight(Effect.suspend(() => (follower.answer.cut() ? Effect.succeed(true) : isDone(follower.turn, latest())))),
      Effect.flatMap((done) => (done ? Effect.succeed(latest()) : pollUntilDone(poll, latest)))
    )
    // A stream can fall silent without ending (a dropped final event; an agent whose statuses
    // carry no marks, so only time tells an answer): polling joins after a grace period.
    return yield* Effect.race(viaStream, Effect.zipRight(Effect.sleep(STREAM_GRACE), pollUntilDone(poll, latest)))
  })

/** How long a subscription alone is trusted before polling joins it. */
const STREAM_GRACE = Duration.seconds(5)

/** Polls are 250 ms apart at first (an answer often comes at once), growing by half each time to at most 5 s apart. */
const FIRST_POLL_PAUSE_MS = 250
const LONGEST_POLL_PAUSE_MS = 5000

const pollUntilDone = <E, R>(poll: Effect.Effect<boolean, E, R>, latest: () => V1.Task) =>
  Effect.gen(function*() {
    for (let pause = FIRST_POLL_PAUSE_MS;; pause = Math.min(pause * 1.5, LONGEST_POLL_PAUSE_MS)) {
      yield* Effect.sleep(Duration.millis(pause))
      if (yield* poll) return latest()
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
 * the answer's task as last seen is returned, or, when none was seen, a RequestTimeout says the
 * agent did not answer in time.
 */
export const withinWait = <A, E, R>(
  url: string,
  maxWait: Duration.DurationInput,
  answer: AnswerFold,
  follow: Effect.Effect<A, E, R>
): Effect.Effect<Waited<A>, E | RequestTimeout, R> =>
  Effect.gen(function*() {
    const done = yield* Effect.timeoutOption(follow, maxWait)
    if (Option.isSome(done)) return { finished: true, value: done.value } as const
    const last = answer.task()
    if (last !== undefined) return { finished: false, task: last } as const
    return yield* new RequestTimeout({ url, after: Duration.format(Duration.decode(maxWait)), limit: "wait" })
  })
