/**
 * TaskStore: the local agent server's tasks as they live, above their storage (TaskStorage). Every
 * change to a task goes through here: it is decided over the task as this store last wrote it (as
 * the storage has it when it has not), written over that version (read and decided again on a
 * conflict) and handed to the task's subscribers. Reads go straight to the storage (`store.storage`).
 * It also runs the fibers that drive tasks (so a cancel can interrupt them) and tells a bounded
 * storage which tasks a client follows (see Retention).
 *
 * A subscriber sees the snapshot first and then every later change exactly once, in order, whoever
 * else is listening: it registers before it reads the snapshot, each change is handed out with the
 * version it was written at, and each subscriber takes the versions after its snapshot's one by one
 * (a change that comes early, written by a fiber that overtook another, waits for its turn). Every
 * version written through this store is handed out (a write and its hand-out are one uninterruptible
 * step), so none is missing. Nothing waits on a lock.
 *
 * What is written is cut to MAX_STORED_JSON_DEPTH first (only a bug upstream gets that deep: the doors
 * refuse MAX_JSON_DEPTH), so the storage can always serialise it.
 */
import { Cause, Context, Duration, Effect, Either, FiberMap, Layer, Option, Queue, Schedule, Stream } from "effect"
import { mergeArtifactChunk } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import { cutBelowDepth, exceedsJsonDepth, MAX_STORED_JSON_DEPTH } from "../domain/limits.js"
import * as TaskStorage from "./TaskStorage.js"

/** One event of a task and the task as it stands after it. */
export interface TaskUpdate {
  readonly event: V1.StreamResponse
  readonly task: V1.Task
  /** The task's version this update was written at. */
  readonly version: number
}

/** Where a subscription's updates end. */
export type SubscriptionEnd = "settled" | "terminal"

export interface TaskSubscription {
  /** The task when the subscription began. */
  readonly task: V1.Task
  /** Its version then. */
  readonly version: number
  /** Every later update, in order; ends after the first terminal or interrupted state. */
  readonly updates: Stream.Stream<TaskUpdate>
}

/** A new snapshot and the event that announces it (none for silent bookkeeping). */
export interface TaskChange {
  readonly task: V1.Task
  readonly event?: V1.StreamResponse | undefined
  /** The messages waiting for the task's next turns, oldest first, when the change sets them. */
  readonly queued?: ReadonlyArray<V1.Message> | undefined
}

export interface TaskStoreOptions extends TaskStorage.TaskStorageOptions {
  /** Messages kept per task (the oldest go first). Default 100. */
  readonly maxHistory?: number | undefined
  /**
   * Updates a subscriber may leave unread (a client that stopped reading its stream, while the task
   * goes on); past it, what it left unread is dropped and it takes the task as it stands. Default 1 000.
   */
  readonly maxUnread?: number | undefined
}

export const DEFAULT_MAX_HISTORY = 100
export const DEFAULT_MAX_UNREAD = 1000

/** What the live layer is made with. */
type LiveOptions = Pick<TaskStoreOptions, "maxHistory" | "maxUnread">

/** The storage's reads and push configs: changes to tasks go through TaskStore, which hands them out. */
export type TaskReads = Omit<TaskStorage.TaskStorage["Type"], "create" | "createNow" | "update" | "updateNow" | "writtenDurable">

export class TaskStore extends Context.Tag("relay/TaskStore")<TaskStore, {
  /** The storage below, for reads and push configs. */
  readonly storage: TaskReads
  /** Adds a new task (its id must be fresh). */
  readonly create: (task: V1.Task) => Effect.Effect<void>
  /**
   * Reads the task (and the messages queued for it) and applies `change` to it; the change's
   * event goes to every subscriber. None when there is no such task; `change` may refuse with an
   * error. `change` may run more than once (when the task changed meanwhile): keep it pure.
   */
  readonly modify: <E>(
    id: string,
    change: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => Either.Either<TaskChange, E>
  ) => Effect.Effect<Option.Option<V1.Task>, E>
  /**
   * Applies one event (see applyTaskEvent); None when the task is missing or already terminal.
   * With `whenQueued`, messages waiting for the task's next turns make it apply that change
   * instead, in the same step.
   */
  readonly publish: (
    id: string,
    event: V1.StreamResponse,
    whenQueued?: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => TaskChange
  ) => Effect.Effect<Option.Option<V1.Task>>
  /**
   * The snapshot and the later updates; None when there is no such task. The updates end after the
   * first terminal or interrupted state, or with `until: "terminal"` only after a terminal one (push
   * deliveries follow a task across its turns).
   */
  readonly subscribe: (id: string, until?: SubscriptionEnd) => Effect.Effect<Option.Option<TaskSubscription>>
  /**
   * The task once it is next terminal or interrupted (at once when it already is). Call it after
   * the change that set the task going, so an earlier interrupted state does not count.
   */
  readonly awaitSettled: (id: string) => Effect.Effect<Option.Option<V1.Task>>
  /** Runs the fiber that drives a task (its result is dropped); it is interrupted by `stopWorker` and when the store closes. */
  readonly runWorker: (id: string, worker: Effect.Effect<unknown>) => Effect.Effect<void>
  /** Interrupts the task's running fiber, if any, and waits until it stopped. */
  readonly stopWorker: (id: string) => Effect.Effect<void>
}>() {}

// ---------------------------------------------------------------------------
// Pure task changes

const keepLast = <A>(items: ReadonlyArray<A>, max: number): ReadonlyArray<A> => items.length > max ? items.slice(items.length - max) : items

/** Adds a message to the history, keeping at most `maxHistory` messages. */
export const appendHistory = (task: V1.Task, message: V1.Message, maxHistory: number): V1.Task => ({
  ...task,
  history: keepLast([...(task.history ?? []), message], maxHistory)
})

/**
 * The task after one event: a status update replaces the status (its message joins the
 * history), an artifact update is merged chunk by chunk, a Task replaces the snapshot and a
 * Message joins the history.
 */
export const applyTaskEvent = (task: V1.Task, event: V1.StreamResponse, maxHistory: number): V1.Task => {
  if ("statusUpdate" in event) {
    const status = event.statusUpdate.status
    const withStatus = { ...task, status }
    return status.message === undefined ? withStatus : appendHistory(withStatus, status.message, maxHistory)
  }
  if ("artifactUpdate" in event) {
    return { ...task, artifacts: mergeArtifactChunk(task.artifacts ?? [], event.artifactUpdate) }
  }
  if ("task" in event) return event.task
  return appendHistory(task, event.message, maxHistory)
}

/** The value, or a copy cut to MAX_STORED_JSON_DEPTH when it nests deeper (serialising it could exhaust the stack). */
const storable = <A>(value: A): A =>
  exceedsJsonDepth(value, MAX_STORED_JSON_DEPTH) ? cutBelowDepth(value, MAX_STORED_JSON_DEPTH) as A : value

const logCut = (taskId: string) =>
  Effect.logWarning(
    `Task ${taskId}: values nested deeper than ${MAX_STORED_JSON_DEPTH} levels were cut before storing (a bug: the doors refuse such requests)`
  )

// ---------------------------------------------------------------------------
// Subscribers and waiters

interface Follower {
  readonly queue: Queue.Queue<TaskUpdate>
  /** How long it follows: a client's turn ("settled") or the whole task ("terminal", push deliveries). */
  readonly until: SubscriptionEnd
  /** The version whose change it takes next; undefined until its snapshot is read. */
  next: number | undefined
  /** Changes that came before their turn (or before the snapshot), by version. */
  early: Map<number, TaskChange> | undefined
  /** It left more than maxUnread updates unread: they were dropped, and it starts again from the task as it stands. */
  behind: boolean
}

/**
 * A request waiting for its task to settle (awaitSettled): the task once it did, and the request to
 * resume with it once it suspended. Not a Deferred: Effect 3 makes each Deferred by copying Effect's
 * prototype into it, ten times the cost of an Effect.async (bench/README.md, "without a Deferred").
 */
interface SettleWaiter {
  settled: V1.Task | undefined
  resume: ((task: V1.Task) => void) | undefined
}

interface LiveTask {
  followers: Set<Follower> | undefined
  /** Told at the next terminal or interrupted state. */
  waiters: Array<SettleWaiter> | undefined
}

/**
 * The subscribers and waiters of the tasks that have any, the unfinished tasks as last written
 * here, and the storage's Retention.
 */
class LiveTasks implements TaskStorage.Retention {
  constructor(private readonly maxUnread: number) {}

  private readonly tasks = new Map<string, LiveTask>()
  /**
   * Each unfinished task as this store last wrote it: the next change is decided over it without
   * reading the storage again (a write over it that conflicts reads the storage and decides anew).
   */
  private readonly lastWritten = new Map<string, TaskStorage.StoredTask>()

  known(id: string): TaskStorage.StoredTask | undefined {
    return this.lastWritten.get(id)
  }

  /** The task as the storage has it, remembered while it is unfinished. */
  remember(id: string, stored: TaskStorage.StoredTask): TaskStorage.StoredTask {
    if (!V1.isTerminalState(stored.task.status.state)) this.lastWritten.set(id, stored)
    return stored
  }

  /**
   * Remembers the task as written over `basis`, while it is unfinished. When another change came
   * in between (the entry is no longer `basis`), which of the two is newer is not known here: the
   * task is read from the storage next time.
   */
  wrote(id: string, basis: TaskStorage.StoredTask, written: TaskStorage.StoredTask) {
    if (this.lastWritten.get(id) === basis && !V1.isTerminalState(written.task.status.state)) this.lastWritten.set(id, written)
    else this.lastWritten.delete(id)
  }

  unknown(id: string) {
    this.lastWritten.delete(id)
  }

  private entry(id: string): LiveTask {
    let live = this.tasks.get(id)
    if (live === undefined) {
      live = { followers: undefined, waiters: undefined }
      this.tasks.set(id, live)
    }
    return live
  }

  private dropIfIdle(id: string, live: LiveTask) {
    if ((live.followers === undefined || live.followers.size === 0) && (live.waiters === undefined || live.waiters.length === 0)) {
      this.tasks.delete(id)
    }
  }

  /**
   * A client following a turn keeps its task; a push delivery alone does not, or tasks left
   * waiting for input with a push config would never go.
   */
  readonly isFollowed = (id: string): boolean => {
    for (const follower of this.tasks.get(id)?.followers ?? []) if (follower.until === "settled") return true
    return false
  }

  /**
   * A follower with maxUnread updates unread is let go, and what it left unread dropped (its queue
   * shut down): each update holds the task as it was then, so a reader that stopped would otherwise
   * keep them all for as long as the task goes on. It starts again from the task as it stands.
   */
  private fellBehind(id: string, follower: Follower): boolean {
    if (Option.getOrElse(follower.queue.unsafeSize(), () => 0) < this.maxUnread) return false
    follower.behind = true
    this.leave(id, follower)
    Effect.runFork(Queue.shutdown(follower.queue))
    return true
  }

  /** Ends the push deliveries of a forgotten task (their streams end when the queue shuts down). */
  readonly forgotten = (id: string): void => {
    this.lastWritten.delete(id)
    const live = this.tasks.get(id)
    if (live === undefined) return
    this.tasks.delete(id)
    for (const follower of live.followers ?? []) Effect.runFork(Queue.shutdown(follower.queue))
  }

  join(id: string, follower: Follower) {
    const live = this.entry(id)
    ;(live.followers ??= new Set()).add(follower)
  }

  leave(id: string, follower: Follower) {
    const live = this.tasks.get(id)
    if (live?.followers?.delete(follower) === true) this.dropIfIdle(id, live)
  }

  /** The follower has read its snapshot at `version`: it takes the changes after it, those that came meanwhile first. */
  start(id: string, follower: Follower, version: number) {
    follower.next = version + 1
    const early = follower.early
    if (early === undefined) return
    for (const seen of early.keys()) if (seen <= version) early.delete(seen)
    this.takeEarly(id, follower)
  }

  /**
   * The version after which the task's subscribers and waiters need the changes another instance
   * wrote, now that it `reached` a version: the oldest a started subscriber has seen; for waiters
   * alone, the one before it (only a settled state matters to them). Undefined: nobody here needs them.
   */
  cursor(id: string, reached: number): number | undefined {
    const live = this.tasks.get(id)
    if (live === undefined) return undefined
    let cursor: number | undefined
    for (const follower of live.followers ?? []) {
      if (follower.next !== undefined) cursor = Math.min(cursor ?? Number.POSITIVE_INFINITY, follower.next - 1)
    }
    if (live.waiters !== undefined && live.waiters.length > 0) cursor = Math.min(cursor ?? Number.POSITIVE_INFINITY, reached - 1)
    return cursor !== undefined && cursor < reached ? cursor : undefined
  }

  /** The tasks some subscriber or waiter here follows. */
  followed(): ReadonlyArray<string> {
    return [...this.tasks.keys()]
  }

  wait(id: string, waiter: SettleWaiter) {
    const live = this.entry(id)
    ;(live.waiters ??= []).push(waiter)
  }

  unwait(id: string, waiter: SettleWaiter) {
    const live = this.tasks.get(id)
    const waiters = live?.waiters
    if (live === undefined || waiters === undefined) return
    const index = waiters.indexOf(waiter)
    if (index >= 0) waiters.splice(index, 1)
    this.dropIfIdle(id, live)
  }

  /** Hands out the change written at `version`. */
  handOut(id: string, version: number, change: TaskChange) {
    const live = this.tasks.get(id)
    if (live === undefined) return
    for (const follower of live.followers ?? []) this.hand(id, follower, version, change)
    const waiters = live.waiters
    if (waiters !== undefined && V1.isSettledState(change.task.status.state)) {
      live.waiters = undefined
      for (const waiter of waiters) {
        waiter.settled = change.task
        waiter.resume?.(change.task)
      }
    }
    this.dropIfIdle(id, live)
  }

  private hand(id: string, follower: Follower, version: number, change: TaskChange) {
    const next = follower.next
    if (next !== undefined && version < next) return
    if (next === undefined || version > next) {
      ;(follower.early ??= new Map()).set(version, change)
      return
    }
    this.deliver(id, follower, change)
    this.takeEarly(id, follower)
  }

  private takeEarly(id: string, follower: Follower) {
    const early = follower.early
    for (let change = early?.get(follower.next!); change !== undefined; change = early?.get(follower.next!)) {
      early!.delete(follower.next!)
      this.deliver(id, follower, change)
    }
  }

  private deliver(id: string, follower: Follower, change: TaskChange) {
    const version = follower.next!
    follower.next = version + 1
    if (change.event !== undefined && this.fellBehind(id, follower)) return
    if (change.event !== undefined) follower.queue.unsafeOffer({ event: change.event, task: change.task, version })
    // Nothing follows a terminal state: the follower keeps what is queued and is let go.
    if (V1.isTerminalState(change.task.status.state)) this.leave(id, follower)
  }
}

// ---------------------------------------------------------------------------
// The live layer

const NOTHING_WAITS: ReadonlyArray<V1.Message> = []

/** The live layer over `storage`; `live` is the Retention the storage was made with, when it forgets tasks. */
const makeOver = (storage: TaskStorage.TaskStorage["Type"], live: LiveTasks, options: LiveOptions) =>
  Effect.gen(function*() {
    const maxHistory = options.maxHistory ?? DEFAULT_MAX_HISTORY
    const workers = yield* FiberMap.make<string>()
    const forkWorker = yield* FiberMap.runtime(workers)<never>()
    const shared = storage.shared
    /** The tasks whose worker runs here (shared storage), each with the last version this instance wrote. */
    const working = new Map<string, { readonly fiber: symbol; wrote: number }>()
    const wroteHere = (id: string, version: number) => {
      const work = working.get(id)
      if (work !== undefined) work.wrote = version
    }

    /** The written change handed out (None: the task is gone). */
    const handedOut = (id: string, read: TaskStorage.StoredTask, change: TaskChange, written: Option.Option<TaskStorage.StoredTask>) => {
      if (Option.isNone(written)) {
        live.unknown(id)
        return Option.none()
      }
      live.wrote(id, read, written.value)
      wroteHere(id, written.value.version)
      live.handOut(id, written.value.version, change)
      return Option.some(change.task)
    }

    const createNow = storage.createNow
    const updateNow = storage.updateNow
    const writtenDurable = storage.writtenDurable

    /**
     * Writes the change over the version read and hands it out, as one step nothing interrupts (a
     * version written and not handed out would hold its subscribers back for good); when the task
     * changed since it was read, `again` reads it and decides anew. Call it when the change is due
     * (a storage that updates at once is written here and then, without effects of its own: a
     * write and its hand-out in one piece of plain code need no uninterruptible region, and most
     * writes need no wait).
     */
    const commit = <E>(
      id: string,
      read: TaskStorage.StoredTask,
      change: TaskChange,
      again: () => Effect.Effect<Option.Option<V1.Task>, E>
    ): Effect.Effect<Option.Option<V1.Task>, E> => {
      const task = change.task
      // Nothing follows a terminal state: the messages waiting for the task are dropped.
      const queued = V1.isTerminalState(task.status.state) ? NOTHING_WAITS : change.queued
      const update: TaskStorage.TaskWrite = { task, queued, event: change.event }
      if (updateNow !== undefined) {
        const written = updateNow(id, update, read.version)
        if (written instanceof TaskStorage.TaskVersionConflict) return again()
        const wait = Option.isSome(written) && writtenDurable !== undefined ? writtenDurable(id, update) : undefined
        if (wait === undefined) return Effect.succeed(handedOut(id, read, change, written))
        return Effect.uninterruptible(Effect.map(wait, () => handedOut(id, read, change, written)))
      }
      return Effect.uninterruptible(Effect.matchCauseEffect(storage.update(id, update, read.version), {
        // A failure is a conflict (the storage's only error); a defect goes on.
        onFailure: (cause) => Cause.isFailType(cause) ? again() : Effect.failCause(cause as Cause.Cause<never>),
        onSuccess: (written) => Effect.succeed(handedOut(id, read, change, written))
      }))
    }

    /** Set while a change is decided when it cut what nested too deep (decisions are synchronous: see decideAndCommit). */
    let decisionCut = false

    /** The change, cut when it nests too deep. */
    const storableChange = (change: TaskChange): TaskChange => {
      const safe = storable(change)
      if (safe !== change) decisionCut = true
      return safe
    }

    type Decide<E> = (read: TaskStorage.StoredTask) => Either.Either<TaskChange, E> | undefined

    /**
     * Decides the task's change (undefined: no change) and commits it; when the task changed since it
     * was `read`, reads it from the storage and decides again.
     */
    const decideAndCommit = <E>(id: string, read: TaskStorage.StoredTask, decide: Decide<E>): Effect.Effect<Option.Option<V1.Task>, E> => {
      decisionCut = false
      const decided = decide(read)
      if (decided === undefined) return Effect.succeedNone
      if (Either.isLeft(decided)) return Effect.fail(decided.left)
      const committed = commit(id, read, decided.right, () => {
        live.unknown(id)
        return write(id, decide)
      })
      return decisionCut ? Effect.zipLeft(committed, logCut(id)) : committed
    }

    /** Changes the task as last written here, or else as the storage has it. */
    const write = <E>(id: string, decide: Decide<E>): Effect.Effect<Option.Option<V1.Task>, E> =>
      Effect.suspend(() => {
        const known = live.known(id)
        if (known !== undefined) return decideAndCommit(id, known, decide)
        return Effect.flatMap(
          storage.get(id),
          (found) => Option.isNone(found) ? Effect.succeedNone : decideAndCommit(id, live.remember(id, found.value), decide)
        )
      })

    const modify = <E>(id: string, change: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => Either.Either<TaskChange, E>) =>
      write(id, (read) => Either.map(change(read.task, read.queued), storableChange))

    const publish = (
      id: string,
      event: V1.StreamResponse,
      whenQueued?: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => TaskChange
    ) =>
      write(id, (read): Either.Either<TaskChange> | undefined => {
        if (V1.isTerminalState(read.task.status.state)) return undefined
        if (whenQueued !== undefined && read.queued.length > 0) return Either.right(storableChange(whenQueued(read.task, read.queued)))
        // The task as read is storable already: only what the event brings is checked.
        const safe = storable(event)
        if (safe !== event) decisionCut = true
        return Either.right({ task: applyTaskEvent(read.task, safe, maxHistory), event: safe })
      })

    /** A follower that fell behind (see LiveTasks.fellBehind) goes on from the task as it stands now. */
    const caughtUp = (id: string, until: SubscriptionEnd): Stream.Stream<TaskUpdate> =>
      Stream.unwrap(Effect.map(
        subscribe(id, until),
        Option.match({
          onNone: () => Stream.empty,
          onSome: ({ task, updates, version }) => Stream.concat(Stream.make({ event: { task }, task, version }), updates)
        })
      ))

    const subscribe = (id: string, until: SubscriptionEnd = "settled"): Effect.Effect<Option.Option<TaskSubscription>> =>
      Effect.flatMap(Queue.unbounded<TaskUpdate>(), (queue) => {
        const follower: Follower = { queue, until, next: undefined, early: undefined, behind: false }
        const leave = Effect.sync(() => live.leave(id, follower))
        const begin = (found: Option.Option<TaskStorage.StoredTask>): Option.Option<TaskSubscription> => {
          if (Option.isNone(found)) {
            live.leave(id, follower)
            return Option.none()
          }
          const { task, version } = found.value
          // A terminal task gets no more events: the subscription is the snapshot alone.
          if (V1.isTerminalState(task.status.state)) {
            live.leave(id, follower)
            return Option.some({ task, version, updates: Stream.empty })
          }
          live.start(id, follower, version)
          const updates = Stream.fromQueue(queue).pipe(
            Stream.ensuring(Effect.zipRight(leave, Queue.shutdown(queue))),
            Stream.concat(Stream.suspend(() => follower.behind ? caughtUp(id, until) : Stream.empty)),
            Stream.takeUntil((update) =>
              until === "settled" ? V1.isSettledState(update.task.status.state) : V1.isTerminalState(update.task.status.state)
            )
          )
          return Option.some({ task, version, updates })
        }
        // Registered before the snapshot is read, so no change written after that read is missed.
        return Effect.suspend(() => {
          live.join(id, follower)
          return Effect.flatMap(storage.get(id), (found) => {
            const subscription = begin(found)
            // Another instance may have written since the snapshot, its notification come before the follower started.
            return shared === undefined || Option.isNone(subscription) || follower.next === undefined
              ? Effect.succeed(subscription)
              : Effect.as(catchUp(shared, id, follower.next - 1), subscription)
          })
        }).pipe(Effect.onInterrupt(() => leave))
      })

    // -------------------------------------------------------------------------
    // Other instances sharing the storage

    /** Hands out the task's changes written after `version` (by any instance: versions handed out already are skipped). */
    const catchUp = (from: TaskStorage.SharedTasks, id: string, version: number) =>
      Effect.map(from.changesAfter(id, version), (changes) => {
        for (const logged of changes) live.handOut(id, logged.version, { task: logged.task, event: logged.event })
      })

    /**
     * A change another instance wrote: it reaches this instance's subscribers and waiters, and a
     * terminal state (a cancel on another instance) stops the worker running the task here.
     */
    const changed = (from: TaskStorage.SharedTasks, { state, taskId, version }: Omit<TaskStorage.TaskChanged, "_tag">) => {
      const work = working.get(taskId)
      const stop = work !== undefined && work.wrote !== version && V1.isTerminalState(state)
        ? Effect.forkDaemon(FiberMap.remove(workers, taskId))
        : Effect.void
      if (work === undefined || work.wrote !== version) live.unknown(taskId)
      const cursor = live.cursor(taskId, version)
      return Effect.zipRight(stop, cursor === undefined ? Effect.void : catchUp(from, taskId, cursor))
    }

    /**
     * After notifications were lost: each task worked on or followed here is taken as changed to the
     * version the storage has (a cancel written meanwhile stops its worker; followers catch up).
     */
    const resync = (from: TaskStorage.SharedTasks) =>
      Effect.forEach(new Set([...working.keys(), ...live.followed()]), (id) =>
        Effect.flatMap(storage.get(id), (found) =>
          Option.isNone(found)
            ? Effect.void
            : changed(from, { taskId: id, version: found.value.version, state: found.value.task.status.state })), { discard: true })

    /**
     * Leases renewed for the workers running here, and a catch-up of every followed task in case a
     * notification was lost (the connection dropped), three times per lease time.
     */
    const renewAndCatchUp = (from: TaskStorage.SharedTasks) =>
      Effect.zipRight(
        from.hold([...working.keys()]),
        Effect.forEach(live.followed(), (id) => {
          const cursor = live.cursor(id, Number.MAX_SAFE_INTEGER)
          return cursor === undefined || cursor === Number.MAX_SAFE_INTEGER - 1 ? Effect.void : catchUp(from, id, cursor)
        }, { discard: true })
      )

    const followOtherInstances = (from: TaskStorage.SharedTasks) =>
      Effect.all([
        Effect.forkScoped(Stream.runForEach(from.changes, (notice) =>
          // A read that failed (the database restarting) is made good by the next catch-up; the listening goes on.
          Effect.catchAllCause(
            notice._tag === "ChangesResumed" ? resync(from) : changed(from, notice),
            (cause) => Effect.logWarning("Reading a change another instance wrote failed", cause)
          ))),
        Effect.forkScoped(Effect.repeat(
          Effect.catchAllCause(renewAndCatchUp(from), (cause) => Effect.logWarning("Renewing task leases failed", cause)),
          Schedule.spaced(Duration.divide(from.leaseTime, 3).pipe(Option.getOrElse(() => from.leaseTime)))
        ))
      ], { discard: true })

    /** The worker, with its task leased to this instance while it runs (another instance ends the task when the lease runs out). */
    const runLeasedWorker = (from: TaskStorage.SharedTasks, id: string, worker: Effect.Effect<unknown>) =>
      Effect.zipRight(
        from.hold([id]),
        Effect.sync(() => {
          const fiber = Symbol(id)
          working.set(id, { fiber, wrote: 0 })
          const done = Effect.suspend(() => {
            if (working.get(id)?.fiber !== fiber) return Effect.void
            working.delete(id)
            return from.release(id)
          })
          forkWorker(id, Effect.ensuring(worker, done))
        })
      )

    /** The answer of awaitSettled when it needs no waiting: None for a missing task, the task when settled. */
    const settledNow = (found: Option.Option<TaskStorage.StoredTask>): Option.Option<V1.Task> | undefined => {
      if (Option.isNone(found)) return Option.none()
      const task = found.value.task
      return V1.isSettledState(task.status.state) ? Option.some(task) : undefined
    }

    /**
     * The waiter is registered before the one read, so a change written after that read resolves it.
     * Where the storage can peek (the memory and file stores: a read at once, that waits for no disk),
     * the read is a peek, without an effect of its own (a send makes it), and a settled task is
     * answered once the storage says it is durable; elsewhere it is one `get` (a round trip to a
     * database).
     */
    const peek = storage.peek
    const durable = storage.durable

    /** The task once the waiter is told it settled; a request that goes away stops waiting. */
    const settledLater = (id: string, waiter: SettleWaiter) =>
      Effect.async<V1.Task>((resume) => {
        if (waiter.settled !== undefined) return resume(Effect.succeed(waiter.settled))
        waiter.resume = (task) => resume(Effect.succeed(task))
        return Effect.sync(() => live.unwait(id, waiter))
      })

    /** The answer once the task was read (`peeked`: by a peek): at once when it settled (and is durable), else when it does. */
    const settledAfter = (id: string, waiter: SettleWaiter, found: Option.Option<TaskStorage.StoredTask>, peeked: boolean) => {
      const now = settledNow(found)
      if (now === undefined) return Effect.asSome(settledLater(id, waiter))
      live.unwait(id, waiter)
      return peeked && durable !== undefined ? Effect.as(durable(id), now) : Effect.succeed(now)
    }

    const awaitSettled = (id: string) =>
      Effect.suspend((): Effect.Effect<Option.Option<V1.Task>> => {
        const waiter: SettleWaiter = { settled: undefined, resume: undefined }
        live.wait(id, waiter)
        if (peek !== undefined) return settledAfter(id, waiter, peek(id), true)
        return Effect.flatMap(storage.get(id), (found) => settledAfter(id, waiter, found, false))
      })

    if (shared !== undefined) yield* followOtherInstances(shared)

    return TaskStore.of({
      storage,
      create: (created) =>
        Effect.suspend(() => {
          const task = storable(created)
          const logged = task === created ? Effect.void : logCut(task.id)
          // A storage that creates at once needs no effect of its own (see commit).
          if (createNow !== undefined) {
            const written = createNow(task)
            if (written instanceof TaskStorage.TaskVersionConflict) return Effect.die(written)
            live.remember(task.id, written)
            return logged
          }
          const stored = Effect.matchEffect(storage.create(task), {
            onFailure: Effect.die,
            onSuccess: (written) => {
              live.remember(task.id, written)
              return Effect.void
            }
          })
          return task === created ? stored : Effect.zipRight(stored, logged)
        }),
      modify,
      publish,
      subscribe,
      awaitSettled,
      runWorker: (id, worker) =>
        shared === undefined ? Effect.sync(() => void forkWorker(id, worker)) : runLeasedWorker(shared, id, worker),
      stopWorker: (id) => FiberMap.remove(workers, id)
    })
  })

/**
 * The store over a storage made with the store's Retention: a storage that forgets tasks on its own
 * (the memory storage's bounds, the file storage's retention) asks it which ones a client follows.
 */
export const makeWithRetention = <E, R>(
  makeStorage: (retention: TaskStorage.Retention) => Effect.Effect<TaskStorage.TaskStorage["Type"], E, R>,
  options: LiveOptions = {}
) =>
  Effect.gen(function*() {
    const live = new LiveTasks(options.maxUnread ?? DEFAULT_MAX_UNREAD)
    return yield* makeOver(yield* makeStorage(live), live, options)
  })

/** An empty store over the memory storage; its task fibers are interrupted when the scope closes. */
export const make = (options: TaskStoreOptions = {}) => makeWithRetention((retention) => TaskStorage.make(options, retention), options)

export const layer = (options: TaskStoreOptions = {}): Layer.Layer<TaskStore> => Layer.scoped(TaskStore, make(options))

/**
 * The store over the TaskStorage of the context: where a database's storage plugs in. Such a storage
 * asks no Retention: its retention runs in the database for every instance, which cannot know what
 * another instance's clients follow.
 */
export const layerOver = (options: LiveOptions = {}): Layer.Layer<TaskStore, never, TaskStorage.TaskStorage> =>
  Layer.scoped(
    TaskStore,
    Effect.flatMap(TaskStorage.TaskStorage, (storage) => makeOver(storage, new LiveTasks(options.maxUnread ?? DEFAULT_MAX_UNREAD), options))
  )
