/**
 * TaskStore: the local agent server's tasks, in memory.
 *
 * Each task is a snapshot plus its subscribers. A change replaces the snapshot and hands the
 * event to every subscriber in one synchronous step, and subscribing reads the snapshot and
 * registers in one synchronous step, so a subscriber sees the snapshot first and then every
 * later event exactly once, in order, whoever else is listening. (A PubSub would need a lock
 * around "subscribe, then read the snapshot" for the same guarantee; a queue per subscriber
 * offered to synchronously needs none.)
 *
 * It also owns the fibers that drive tasks (so a cancel can interrupt them), the push configs of
 * each task, the messages waiting for a working task's next turns (changed only with the task, so
 * taking one and ending a turn are one step; dropped when the task ends), and the bounds: history
 * per task, tasks in memory (the oldest finished ones go).
 *
 * A finished task no longer changes, so once a few newer ones have finished it is kept packed: as
 * its JSON text, a third of the memory of its objects, and read back (parsed) when asked for.
 *
 * Nothing it keeps can break a read: what is stored is cut to MAX_STORED_JSON_DEPTH (only a bug
 * upstream gets that deep: the doors refuse MAX_JSON_DEPTH), each task is serialised once when
 * first listed after a change (one that will not serialise is left out of lists, with a log
 * line), and a list page stops at MAX_TASK_PAGE_BYTES of tasks.
 */
import { Context, Deferred, Effect, type Either, FiberMap, Layer, Option, Queue, Stream } from "effect"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import { mergeArtifactChunk } from "../a2a/text.js"
import * as V1 from "../a2a/v1.js"
import { cutBelowDepth, exceedsJsonDepth, MAX_STORED_JSON_DEPTH, MAX_TASK_PAGE_BYTES } from "../domain/limits.js"

/** One event of a task and the task as it stands after it. */
export interface TaskUpdate {
  readonly event: V1.StreamResponse
  readonly task: V1.Task
}

/** Where a subscription's updates end. */
export type SubscriptionEnd = "settled" | "terminal"

export interface TaskSubscription {
  /** The task when the subscription began. */
  readonly task: V1.Task
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

export interface StoredPushConfig {
  /** With its server-side `id` and `taskId` set. */
  readonly config: V1.TaskPushNotificationConfig
  /** The protocol version a push config was registered over decides the body it gets. */
  readonly generation: ProtocolVersion
}

/** Position after the last task of a page, in the list order (newest status first). */
export interface PageCursor {
  readonly timestamp: string
  readonly seq: number
}

export interface TaskQuery {
  readonly contextId?: string | undefined
  readonly status?: V1.TaskState | undefined
  /** Only tasks whose status changed at or after this time (ISO 8601 as toISOString writes it). */
  readonly statusTimestampAfter?: string | undefined
  readonly pageSize: number
  readonly after?: PageCursor | undefined
}

export interface TaskPage {
  readonly tasks: ReadonlyArray<V1.Task>
  /** Where the next page starts; absent on the last page. */
  readonly next?: PageCursor | undefined
  /** Matching tasks over all pages. */
  readonly totalSize: number
}

export interface TaskStoreOptions {
  /** Messages kept per task (the oldest go first). Default 100. */
  readonly maxHistory?: number | undefined
  /** Tasks kept in memory; beyond it the oldest finished ones are forgotten. Default 10 000. */
  readonly maxTasks?: number | undefined
  /** Bytes of JSON a list page holds at most (always at least one task). Default MAX_TASK_PAGE_BYTES. */
  readonly maxPageBytes?: number | undefined
}

export const DEFAULT_MAX_HISTORY = 100
export const DEFAULT_MAX_TASKS = 10_000

export class TaskStore extends Context.Tag("relay/TaskStore")<TaskStore, {
  /** Adds a new task (its id must be fresh). */
  readonly create: (task: V1.Task) => Effect.Effect<void>
  readonly get: (id: string) => Effect.Effect<Option.Option<V1.Task>>
  /**
   * Reads the task (and the messages queued for it) and applies `change` to it atomically; the
   * change's event goes to every subscriber. None when there is no such task; `change` may
   * refuse with an error.
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
   * The snapshot and the later updates, atomically; None when there is no such task. The updates
   * end after the first terminal or interrupted state, or with `until: "terminal"` only after
   * a terminal one (push deliveries follow a task across its turns).
   */
  readonly subscribe: (id: string, until?: SubscriptionEnd) => Effect.Effect<Option.Option<TaskSubscription>>
  /**
   * The task once it is next terminal or interrupted (at once when it already is). Call it after
   * the change that set the task going, so an earlier interrupted state does not count.
   */
  readonly awaitSettled: (id: string) => Effect.Effect<Option.Option<V1.Task>>
  /** A page of tasks, newest status first. */
  readonly list: (query: TaskQuery) => Effect.Effect<TaskPage>
  /** The tasks of a conversation, oldest first. */
  readonly contextTasks: (contextId: string) => Effect.Effect<ReadonlyArray<V1.Task>>
  /** Runs the fiber that drives a task (its result is dropped); it is interrupted by `stopWorker` and when the store closes. */
  readonly runWorker: (id: string, worker: Effect.Effect<unknown>) => Effect.Effect<void>
  /** Interrupts the task's running fiber, if any, and waits until it stopped. */
  readonly stopWorker: (id: string) => Effect.Effect<void>
  /** Stores a push config under its id (replacing one with the same id); None when the task is missing. */
  readonly putPushConfig: (taskId: string, stored: StoredPushConfig) => Effect.Effect<Option.Option<StoredPushConfig>>
  /** The task's push configs in the order they were created; None when the task is missing. */
  readonly pushConfigs: (taskId: string) => Effect.Effect<Option.Option<ReadonlyArray<StoredPushConfig>>>
  /** Removes a push config; Some(whether it existed), None when the task is missing. */
  readonly removePushConfig: (taskId: string, configId: string) => Effect.Effect<Option.Option<boolean>>
}>() {}

// ---------------------------------------------------------------------------
// Pure task changes

const keepLast = <A>(items: ReadonlyArray<A>, max: number): ReadonlyArray<A> =>
  items.length > max ? items.slice(items.length - max) : items

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

// ---------------------------------------------------------------------------
// The in-memory store

interface TaskRecord {
  /** The task, while it is not packed. */
  live: V1.Task | undefined
  /** The JSON text of a finished task in place of `live` (see packFinished). */
  packed: string | undefined
  /** Of the task as it stands, so that lists filter and sort without unpacking it. */
  state: V1.TaskState
  time: string
  /** As created: the conversation index holds the task under it. */
  readonly contextId: string | undefined
  /** Creation order, also the tie-breaker of the list order. */
  readonly seq: number
  /** Size of the task's JSON, measured when first listed after a change; NaN when it does not serialise. */
  bytes: number | undefined
  // The ones below are made when first needed: most tasks never have any.
  /** Each subscriber's queue and how long it follows: a client's turn ("settled") or the whole task ("terminal", push deliveries). */
  subscribers?: Map<Queue.Queue<TaskUpdate>, SubscriptionEnd>
  /** Resolved at the next terminal or interrupted state. */
  waiters?: Array<Deferred.Deferred<V1.Task>>
  pushConfigs?: Map<string, StoredPushConfig>
  /** Messages waiting for the task's next turns, oldest first (see TaskChange.queued). */
  queued?: ReadonlyArray<V1.Message>
}

const NOTHING_QUEUED: ReadonlyArray<V1.Message> = []

const statusTime = (task: V1.Task) => task.status.timestamp ?? ""

/** The task, unpacked when it was packed (a fresh copy each time: callers may keep it). */
const taskOf = (record: TaskRecord): V1.Task => record.live ?? JSON.parse(record.packed!) as V1.Task

/**
 * The string, flattened in place. V8 builds a concatenated string (node's randomUUID, JSON.stringify's
 * output) as a tree of pieces, ~500 bytes for a UUID instead of ~56, and using it as a Map key does not
 * flatten it; converting it to a number does (the GC then drops the pieces). Ids and packed tasks stay for
 * long, so they are flattened once.
 */
const flattened = <S extends string | undefined>(text: S): S => {
  if (text !== undefined) Number(text)
  return text
}

/** Newest status first, then newest task first. */
const listOrder = (a: TaskRecord, b: TaskRecord): number =>
  a.time === b.time ? b.seq - a.seq : a.time < b.time ? 1 : -1

const isAfterCursor = (record: TaskRecord, cursor: PageCursor): boolean =>
  record.time < cursor.timestamp || (record.time === cursor.timestamp && record.seq < cursor.seq)

const matches = (record: TaskRecord, query: TaskQuery): boolean => {
  if (query.contextId !== undefined && record.contextId !== query.contextId) return false
  if (query.status !== undefined && record.state !== query.status) return false
  if (query.statusTimestampAfter !== undefined && record.time < query.statusTimestampAfter) return false
  return true
}

/** JSON text of a task and its size in bytes; NaN bytes when it does not serialise. */
const jsonOf = (task: V1.Task): { readonly json: string | undefined; readonly bytes: number } => {
  try {
    const json = JSON.stringify(task)
    return { json, bytes: Buffer.byteLength(json) }
  } catch {
    return { json: undefined, bytes: Number.NaN }
  }
}

/** The value, or a copy cut to MAX_STORED_JSON_DEPTH when it nests deeper (serialising it could exhaust the stack). */
const storable = <A>(value: A): A => exceedsJsonDepth(value, MAX_STORED_JSON_DEPTH) ? cutBelowDepth(value, MAX_STORED_JSON_DEPTH) as A : value

/** `result`, once the cut (if there was one) is logged. */
const withCutLogged = <A>(cut: boolean, taskId: string, result: A): Effect.Effect<A> =>
  cut
    ? Effect.as(
      Effect.logWarning(`Task ${taskId}: values nested deeper than ${MAX_STORED_JSON_DEPTH} levels were cut before storing (a bug: the doors refuse such requests)`),
      result
    )
    : Effect.succeed(result)

const jsonBytes = (record: TaskRecord): number =>
  record.packed === undefined ? jsonOf(record.live!).bytes : Buffer.byteLength(record.packed)

/**
 * Finished tasks stay unpacked while up to this many newer ones finished: a client usually reads a task
 * right when it finishes (a blocking send, a poll), and that read then parses nothing.
 */
export const RECENTLY_FINISHED = 256

export const make = (options: TaskStoreOptions = {}) =>
  Effect.gen(function*() {
    const maxHistory = options.maxHistory ?? DEFAULT_MAX_HISTORY
    const maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS
    const maxPageBytes = options.maxPageBytes ?? MAX_TASK_PAGE_BYTES
    const records = new Map<string, TaskRecord>()
    /** The ids of each conversation's tasks: the id alone while it has one (most have: a Set per task cost ~100 bytes each). */
    const byContext = new Map<string, string | Set<string>>()
    /** The record set last in `records` (the map's newest entry), which a change need not move again. */
    let newest: TaskRecord | undefined
    const workers = yield* FiberMap.make<string>()
    const forkWorker = yield* FiberMap.runtime(workers)<never>()
    let nextSeq = 0

    const forget = (id: string, record: TaskRecord) => {
      records.delete(id)
      if (newest === record) newest = undefined
      const contextId = record.contextId
      if (contextId === undefined) return
      const ids = byContext.get(contextId)
      if (ids === id) byContext.delete(contextId)
      else if (typeof ids === "object") {
        ids.delete(id)
        if (ids.size === 0) byContext.delete(contextId)
      }
    }

    const joinContext = (contextId: string, id: string) => {
      const ids = byContext.get(contextId)
      if (ids === undefined) byContext.set(contextId, id)
      else if (typeof ids === "string") byContext.set(contextId, new Set([ids, id]))
      else ids.add(id)
    }

    /** The ids of a conversation's tasks, oldest first. */
    const contextIds = (contextId: string): Iterable<string> => {
      const ids = byContext.get(contextId)
      return ids === undefined ? [] : typeof ids === "string" ? [ids] : ids
    }

    /** Puts the record last in `records` (eviction walks the map from the front: least recently changed first). */
    const setNewest = (id: string, record: TaskRecord) => {
      // Already last: a turn changes its task several times in a row, and each move cost the map a hole to rehash later.
      if (newest === record) return
      records.delete(id)
      records.set(flattened(id), record)
      newest = record
    }

    let evictAbove = maxTasks
    /**
     * Past the bound, forgets the least recently changed tasks nobody listens to, down to 90 % of it: finished
     * ones first, then ones still waiting for input or authorisation (abandoned conversations must
     * not fill the store; a late follow-up to one gets TaskNotFound). Working tasks stay. When they
     * keep the store above that, the next scan waits for another tenth of the bound, so creating
     * tasks never costs a scan each.
     */
    const evict = () => {
      if (records.size <= evictAbove) return
      const target = Math.floor(maxTasks * 0.9)
      for (const forgettable of [V1.isTerminalState, V1.isInterruptedState]) {
        for (const [id, record] of records) {
          if (records.size <= target) break
          if (forgettable(record.state) && !hasClientFollowers(record)) forgetAndRelease(id, record)
        }
      }
      evictAbove = Math.max(maxTasks, records.size + Math.ceil(maxTasks / 10))
    }

    /**
     * A client following a turn keeps its task; a push delivery alone does not, or tasks left
     * waiting for input with a push config would never go.
     */
    const hasClientFollowers = (record: TaskRecord) =>
      [...(record.subscribers?.values() ?? [])].some((until) => until === "settled")

    /** Forgets the task and ends its push deliveries' subscriptions (their streams end when the queue shuts down). */
    const forgetAndRelease = (id: string, record: TaskRecord) => {
      forget(id, record)
      for (const queue of record.subscribers?.keys() ?? []) Effect.runFork(Queue.shutdown(queue))
    }

    /** Finished tasks not packed yet, newest last: the older batch is packed when the newer one is full. */
    let finishedBefore: Array<TaskRecord> = []
    let finishedLately: Array<TaskRecord> = []

    /** Packs a finished task that is still stored and unchanged since; one that does not serialise stays as it is. */
    const pack = (record: TaskRecord) => {
      const task = record.live
      if (task === undefined || !V1.isTerminalState(record.state) || records.get(task.id) !== record) return
      const { json, bytes } = jsonOf(task)
      if (json === undefined) return
      record.packed = flattened(json)
      record.bytes = bytes
      record.live = undefined
    }

    const packFinished = (record: TaskRecord) => {
      finishedLately.push(record)
      if (finishedLately.length < RECENTLY_FINISHED) return
      for (const older of finishedBefore) pack(older)
      finishedBefore = finishedLately
      finishedLately = []
    }

    /** Stores the change and hands it out; everything here is synchronous, hence atomic. */
    const commit = (record: TaskRecord, change: TaskChange) => {
      const task = change.task
      record.live = task
      record.packed = undefined
      record.state = task.status.state
      record.time = statusTime(task)
      record.bytes = undefined
      setNewest(task.id, record)
      if (change.queued !== undefined) record.queued = change.queued
      const event = change.event
      if (event !== undefined && record.subscribers !== undefined) {
        const update: TaskUpdate = { event, task: change.task }
        for (const queue of record.subscribers.keys()) queue.unsafeOffer(update)
      }
      const state = change.task.status.state
      const waiters = record.waiters
      if (waiters !== undefined && V1.isSettledState(state)) {
        delete record.waiters
        for (const waiter of waiters) Deferred.unsafeDone(waiter, Effect.succeed(change.task))
      }
      // Nothing follows a terminal state: subscribers keep what is queued and are let go, waiting messages are dropped.
      if (V1.isTerminalState(state)) {
        delete record.subscribers
        delete record.queued
        packFinished(record)
      }
    }

    const modify = <E>(id: string, change: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => Either.Either<TaskChange, E>) =>
      Effect.suspend((): Effect.Effect<Option.Option<V1.Task>, E> => {
        const record = records.get(id)
        if (record === undefined) return Effect.succeedNone
        const decided = change(taskOf(record), record.queued ?? NOTHING_QUEUED)
        if (decided._tag === "Left") return Effect.fail(decided.left)
        return commitStorable(id, record, decided.right)
      })

    const commitStorable = (id: string, record: TaskRecord, change: TaskChange) => {
      const safe = storable(change)
      commit(record, safe)
      return withCutLogged(safe !== change, id, Option.some(safe.task))
    }

    const publish = (
      id: string,
      event: V1.StreamResponse,
      whenQueued?: (task: V1.Task, queued: ReadonlyArray<V1.Message>) => TaskChange
    ) =>
      Effect.suspend((): Effect.Effect<Option.Option<V1.Task>> => {
        const record = records.get(id)
        if (record === undefined || V1.isTerminalState(record.state)) return Effect.succeedNone
        const queued = record.queued
        if (whenQueued !== undefined && queued !== undefined && queued.length > 0) {
          return commitStorable(id, record, whenQueued(taskOf(record), queued))
        }
        // The task before it is storable already: only what the event brings is checked.
        const safe = storable(event)
        const task = applyTaskEvent(taskOf(record), safe, maxHistory)
        commit(record, { task, event: safe })
        return withCutLogged(safe !== event, id, Option.some(task))
      })

    const subscribe = (id: string, until: SubscriptionEnd = "settled") =>
      Effect.flatMap(Queue.unbounded<TaskUpdate>(), (queue) =>
        Effect.sync((): Option.Option<TaskSubscription> => {
          const record = records.get(id)
          if (record === undefined) return Option.none()
          const snapshot = taskOf(record)
          // A terminal task gets no more events: the subscription is the snapshot alone.
          if (V1.isTerminalState(record.state)) return Option.some({ task: snapshot, updates: Stream.empty })
          const subscribers = record.subscribers ??= new Map()
          subscribers.set(queue, until)
          const updates = Stream.fromQueue(queue).pipe(
            Stream.takeUntil((update) =>
              until === "settled" ? V1.isSettledState(update.task.status.state) : V1.isTerminalState(update.task.status.state)
            ),
            Stream.ensuring(Effect.zipRight(Effect.sync(() => subscribers.delete(queue)), Queue.shutdown(queue)))
          )
          return Option.some({ task: snapshot, updates })
        }))

    const awaitSettled = (id: string) =>
      Effect.suspend((): Effect.Effect<Option.Option<V1.Task>> => {
        const settled = settledNow(id)
        if (settled !== undefined) return Effect.succeed(settled)
        // The task may have moved on while the waiter was made; the re-check and the registration are one step.
        return Effect.flatMap(Deferred.make<V1.Task>(), (waiter) =>
          Effect.suspend(() => {
            const again = settledNow(id)
            if (again !== undefined) return Effect.succeed(again)
            const record = records.get(id)
            if (record !== undefined) (record.waiters ??= []).push(waiter)
            return Effect.asSome(Deferred.await(waiter))
          }))
      })

    /** The answer of awaitSettled when it needs no waiting: None for a missing task, the task when settled. */
    const settledNow = (id: string): Option.Option<V1.Task> | undefined => {
      const record = records.get(id)
      if (record === undefined) return Option.none()
      return V1.isSettledState(record.state) ? Option.some(taskOf(record)) : undefined
    }

    const list = (query: TaskQuery) =>
      Effect.suspend((): Effect.Effect<TaskPage> => {
        const matching = [...records.values()].filter((record) => matches(record, query)).sort(listOrder)
        const after = query.after
        const start = after === undefined ? 0 : matching.findIndex((record) => isAfterCursor(record, after))
        const page: Array<TaskRecord> = []
        const unserialisable: Array<string> = []
        let bytes = 0
        let index = start < 0 ? matching.length : start
        for (; index < matching.length && page.length < query.pageSize; index++) {
          const record = matching[index]!
          const size = record.bytes ??= jsonBytes(record)
          if (Number.isNaN(size)) unserialisable.push(record.live?.id ?? "")
          else if (page.length > 0 && bytes + size > maxPageBytes) break
          else {
            page.push(record)
            bytes += size
          }
        }
        const last = page[page.length - 1]
        const result: TaskPage = {
          tasks: page.map(taskOf),
          totalSize: matching.length,
          ...(index < matching.length && last !== undefined ? { next: { timestamp: last.time, seq: last.seq } } : {})
        }
        if (unserialisable.length === 0) return Effect.succeed(result)
        return Effect.as(Effect.logError(`Tasks left out of a list because they do not serialise: ${unserialisable.join(", ")}`), result)
      })

    const withRecord = <A>(id: string, f: (record: TaskRecord) => A) =>
      Effect.sync((): Option.Option<A> => {
        const record = records.get(id)
        return record === undefined ? Option.none() : Option.some(f(record))
      })

    return TaskStore.of({
      create: (created) =>
        Effect.suspend(() => {
          const task = storable(created)
          const contextId = flattened(task.contextId)
          const record: TaskRecord = {
            live: task,
            packed: undefined,
            state: task.status.state,
            time: statusTime(task),
            contextId,
            seq: nextSeq++,
            bytes: undefined
          }
          setNewest(task.id, record)
          if (contextId !== undefined) joinContext(contextId, task.id)
          if (V1.isTerminalState(record.state)) packFinished(record)
          evict()
          return withCutLogged(task !== created, task.id, undefined)
        }),
      get: (id) => Effect.sync(() => Option.map(Option.fromNullable(records.get(id)), taskOf)),
      modify,
      publish,
      subscribe,
      awaitSettled,
      list,
      contextTasks: (contextId) =>
        Effect.sync(() => {
          const tasks: Array<V1.Task> = []
          for (const id of contextIds(contextId)) {
            const record = records.get(id)
            if (record !== undefined) tasks.push(taskOf(record))
          }
          return tasks
        }),
      runWorker: (id, worker) => Effect.sync(() => void forkWorker(id, worker)),
      stopWorker: (id) => FiberMap.remove(workers, id),
      putPushConfig: (taskId, stored) =>
        withRecord(taskId, (record) => {
          const configs = record.pushConfigs ??= new Map()
          configs.set(stored.config.id ?? "", stored)
          return stored
        }),
      pushConfigs: (taskId) => withRecord(taskId, (record) => [...(record.pushConfigs?.values() ?? [])]),
      removePushConfig: (taskId, configId) => withRecord(taskId, (record) => record.pushConfigs?.delete(configId) ?? false)
    })
  })

/** An empty store; its task fibers are interrupted when the layer's scope closes. */
export const layer = (options: TaskStoreOptions = {}): Layer.Layer<TaskStore> => Layer.scoped(TaskStore, make(options))

