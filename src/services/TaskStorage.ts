/**
 * TaskStorage: where the local agent server's tasks are kept, as data. Each task is stored with its
 * version and the messages waiting for its next turns; a task's push configs beside it; tasks are
 * listed newest status first in pages. This is the seam a database store implements (the suite
 * `storageContract` in test/services/taskStorageContract.ts holds any implementation to it);
 * TaskStore is the live layer above it (events and subscribers, workers).
 *
 * A write names the version it read: when the task changed since (another process sharing the
 * database, or another fiber of this one between its read and its write) it fails with
 * TaskVersionConflict, and the writer reads again. What comes in nests at most
 * MAX_STORED_JSON_DEPTH levels (TaskStore cuts it), so a stored task always serialises.
 *
 * The memory storage below is the default. It is bounded by tasks and by bytes; past either bound it
 * forgets the least recently changed tasks it may (see `evict`), asking its Retention which ones a
 * client still follows. A finished task no longer changes, so once a few newer ones have finished it
 * is kept packed: as its JSON text, a third of the memory of its objects, and read back (parsed)
 * when asked for. Each task is serialised once when first listed after a change (one that will not
 * serialise is left out of lists, with a log line), and a list page stops at MAX_TASK_PAGE_BYTES.
 */
import { Context, type Duration, Effect, Layer, Option, Schema, type Stream } from "effect"
import type { ProtocolVersion } from "../a2a/protocolVersion.js"
import { rememberTaskJson } from "../a2a/taskJson.js"
import * as V1 from "../a2a/v1.js"
import { MAX_TASK_PAGE_BYTES } from "../domain/limits.js"

/** A task as stored. */
export interface StoredTask {
  readonly task: V1.Task
  /** 1 when created, one more at each update: what an update names as the version it read. */
  readonly version: number
  /** The messages waiting for the task's next turns, oldest first. */
  readonly queued: ReadonlyArray<V1.Message>
}

/** What an update stores: the task, and the messages waiting for it when they change. */
export interface TaskWrite {
  readonly task: V1.Task
  /** Absent: the waiting messages stay as they are. */
  readonly queued?: ReadonlyArray<V1.Message> | undefined
  /** The event that announces the change (none for silent bookkeeping): a shared storage logs it for other instances. */
  readonly event?: V1.StreamResponse | undefined
}

/** "Task T reached version V", as a shared storage tells every instance. */
export interface TaskChanged {
  readonly _tag: "TaskChanged"
  readonly taskId: string
  readonly version: number
  readonly state: V1.TaskState
}

/** Notifications were lost (the connection dropped) and come again from now on: what came meanwhile is to be read. */
export interface ChangesResumed {
  readonly _tag: "ChangesResumed"
}

/** One write as a shared storage logged it. */
export interface LoggedChange {
  readonly version: number
  readonly task: V1.Task
  readonly event?: V1.StreamResponse | undefined
}

/**
 * What a storage that several processes share adds (the memory storage has none: its process is the
 * only writer, and TaskStore hands changes out as it writes them). Changes reach the other instances
 * as notifications; the writes themselves are read from the storage's log, after the version a
 * subscriber has seen. A task being worked on is leased to its instance, which renews the lease;
 * a lease that runs out means the instance died.
 */
export interface SharedTasks {
  /**
   * Every change other instances write (this one hands out its own as it writes them). It resumes by
   * itself when its connection drops, and says so (ChangesResumed, also when it first starts): the
   * changes written meanwhile were not told.
   */
  readonly changes: Stream.Stream<TaskChanged | ChangesResumed>
  /** The task's writes after `version`, oldest first. */
  readonly changesAfter: (taskId: string, version: number) => Effect.Effect<ReadonlyArray<LoggedChange>>
  readonly leaseTime: Duration.Duration
  /** Leases the tasks to this instance for another lease time (taking them, or renewing its lease). */
  readonly hold: (taskIds: ReadonlyArray<string>) => Effect.Effect<void>
  /** Gives up this instance's lease of the task. */
  readonly release: (taskId: string) => Effect.Effect<void>
  /**
   * Unfinished tasks whose lease ran out (their instance died), each leased to this instance by the
   * same statement that found it, so that only one instance takes each.
   */
  readonly takeExpired: Effect.Effect<ReadonlyArray<string>>
}

/** One task update on its way to one push config, kept until it is delivered or given up. */
export interface PendingDelivery {
  readonly taskId: string
  readonly configId: string
  /** The task's version the update was written at (with the two ids, what names the delivery). */
  readonly version: number
  /** What is posted: the event and the task after it. No credentials: those stay in the (sealed) push config. */
  readonly event: V1.StreamResponse
  readonly task: V1.Task
  /** Posts tried so far. */
  readonly attempts: number
  /** When the next post is due (milliseconds since the epoch). */
  readonly due: number
}

/**
 * The push deliveries not made yet. The instance that records a delivery makes it; another takes
 * it over only when that instance is gone: the next process over the same file, or (a shared
 * storage) another instance once the recorder's claim ran out (it renews its claims while it lives).
 */
export interface PendingDeliveries {
  /**
   * Records a new delivery, claimed by this instance, durably before it returns; false when the same
   * delivery (task, config, version) was recorded already, by this instance or another: skip it then.
   */
  readonly record: (delivery: PendingDelivery) => Effect.Effect<boolean>
  /** Stores the delivery as it now stands: a failed attempt's count and the next one's time, or its event folded (PushSender). */
  readonly reschedule: (delivery: PendingDelivery) => Effect.Effect<void>
  /** Delivered or given up: it is not tried again, by any instance. */
  readonly settle: (delivery: PendingDelivery) => Effect.Effect<void>
  /**
   * The deliveries no live instance makes (left by a process that stopped), now claimed by this
   * one, in the order they were written per task and config.
   */
  readonly claim: Effect.Effect<ReadonlyArray<PendingDelivery>>
}

export interface StoredPushConfig {
  /** With its server-side `id` and `taskId` set. */
  readonly config: V1.TaskPushNotificationConfig
  /** The protocol version a push config was registered over decides the body it gets. */
  readonly generation: ProtocolVersion
}

export interface TaskQuery {
  readonly contextId?: string | undefined
  readonly status?: V1.TaskState | undefined
  /** Only tasks whose status changed at or after this time (ISO 8601 as toISOString writes it). */
  readonly statusTimestampAfter?: string | undefined
  readonly pageSize: number
  /** Where the page starts: a `nextPageToken` of this storage's, as it gave it. */
  readonly pageToken?: string | undefined
}

export interface TaskPage {
  readonly tasks: ReadonlyArray<V1.Task>
  /** Where the next page starts (opaque); absent on the last page. */
  readonly nextPageToken?: string | undefined
  /** Matching tasks over all pages. */
  readonly totalSize: number
}

/** The task changed since it was read: read it again and decide anew. */
export class TaskVersionConflict extends Schema.TaggedError<TaskVersionConflict>()("TaskVersionConflict", {
  taskId: Schema.String,
  /** The version the writer read; 0 when it created the task. */
  expected: Schema.Number,
  found: Schema.Number
}) {
  readonly code = "task_version_conflict"
  override get message() {
    return this.expected === 0
      ? `Task ${this.taskId} exists already (version ${this.found})`
      : `Task ${this.taskId} is at version ${this.found}, not ${this.expected} as it was read`
  }
  get hint() {
    return "Read the task again and make the change to it as it is now."
  }
}

/** A page token this storage did not give. */
export class InvalidPageToken extends Schema.TaggedError<InvalidPageToken>()("InvalidPageToken", {
  token: Schema.String
}) {
  readonly code = "invalid_page_token"
  override get message() {
    return "invalid pageToken"
  }
  get hint() {
    return "Pass the nextPageToken of the previous page as it came, or none for the first page."
  }
}

export class TaskStorage extends Context.Tag("relay/TaskStorage")<TaskStorage, {
  /** Stores a new task at version 1; TaskVersionConflict (expected 0) when its id is taken. */
  readonly create: (task: V1.Task) => Effect.Effect<StoredTask, TaskVersionConflict>
  readonly get: (id: string) => Effect.Effect<Option.Option<StoredTask>>
  /**
   * The task as it stands, read at once (a storage that holds its tasks in memory), without waiting
   * for it to be durable as `get` does (a storage that writes behind): for a reader that answers
   * nobody with it until `durable`. Absent: `get`.
   */
  readonly peek?: ((id: string) => Option.Option<StoredTask>) | undefined
  /**
   * Where the storage writes behind: once what `peek` read of the task is durable (the wait of
   * `get`, without its read). Absent: at once.
   */
  readonly durable?: ((id: string) => Effect.Effect<void>) | undefined
  /** Stores the write when the task is still at `expectedVersion`; None when there is no such task. */
  readonly update: (
    id: string,
    write: TaskWrite,
    expectedVersion: number
  ) => Effect.Effect<Option.Option<StoredTask>, TaskVersionConflict>
  /** `create` made at once, where the storage holds its tasks in memory: the task as stored, or the conflict. */
  readonly createNow?: ((task: V1.Task) => StoredTask | TaskVersionConflict) | undefined
  /**
   * `update` made at once, where the storage holds its tasks in memory: the task as written (None
   * when there is none), or the conflict. A write that `writtenDurable` gives a wait for is durable
   * once that wait ends (`update` is the two in one effect).
   */
  readonly updateNow?:
    | ((id: string, write: TaskWrite, expectedVersion: number) => Option.Option<StoredTask> | TaskVersionConflict)
    | undefined
  /** Where the storage writes behind, the wait for a write `updateNow` made; undefined when nobody is answered with it. */
  readonly writtenDurable?: ((id: string, write: TaskWrite) => Effect.Effect<void> | undefined) | undefined
  /** A page of tasks, newest status first (then newest task first). */
  readonly list: (query: TaskQuery) => Effect.Effect<TaskPage, InvalidPageToken>
  /** The tasks of a conversation, oldest first. */
  readonly contextTasks: (contextId: string) => Effect.Effect<ReadonlyArray<V1.Task>>
  /** `contextTasks` read at once, where the storage holds its tasks in memory and the read waits for nothing. */
  readonly contextTasksNow?: ((contextId: string) => ReadonlyArray<V1.Task>) | undefined
  /** Stores a push config under its id (replacing one with the same id); None when the task is missing. */
  readonly putPushConfig: (taskId: string, stored: StoredPushConfig) => Effect.Effect<Option.Option<StoredPushConfig>>
  /** The task's push configs in the order they were created; None when the task is missing. */
  readonly pushConfigs: (taskId: string) => Effect.Effect<Option.Option<ReadonlyArray<StoredPushConfig>>>
  /** Removes a push config; Some(whether it existed), None when the task is missing. */
  readonly removePushConfig: (taskId: string, configId: string) => Effect.Effect<Option.Option<boolean>>
  /** Push deliveries not made yet: kept with the tasks, so that their retries outlive the process. */
  readonly deliveries: PendingDeliveries
  /** Present when other processes share the storage. */
  readonly shared?: SharedTasks | undefined
}>() {}

/**
 * What a bounded storage asks before it forgets a task, and tells after. TaskStore answers: a task
 * a client follows stays; a forgotten task's push deliveries end.
 */
export interface Retention {
  readonly isFollowed: (taskId: string) => boolean
  readonly forgotten: (taskId: string) => void
}

const NOBODY_FOLLOWS: Retention = { isFollowed: () => false, forgotten: () => undefined }

export interface TaskStorageOptions {
  /** Tasks kept; beyond it the least recently changed finished ones are forgotten first. Default 10 000. */
  readonly maxTasks?: number | undefined
  /** Bytes of tasks kept (about their JSON: see sizeOf), forgotten alike beyond it. Default 256 MiB. */
  readonly maxBytes?: number | undefined
  /** Bytes of JSON a list page holds at most (always at least one task). Default MAX_TASK_PAGE_BYTES. */
  readonly maxPageBytes?: number | undefined
}

/** A task's bytes in a list page's JSON array: its own, and the comma before it after the first. */
export const bytesInPage = (size: number, tasksBefore: number): number => (tasksBefore === 0 ? size : size + 1)

export const DEFAULT_MAX_TASKS = 10_000
export const DEFAULT_MAX_TASK_BYTES = 256 * 1024 * 1024

// ---------------------------------------------------------------------------
// Sizes: what a task counts against the byte budget

/** JSON size of data and metadata values, measured once per object (tasks share them across versions). */
const measured = new WeakMap<object, number>()

const jsonSize = (value: unknown): number => {
  if (typeof value !== "object" || value === null) return String(value).length
  let size = measured.get(value)
  if (size === undefined) {
    try {
      size = JSON.stringify(value).length
    } catch {
      size = 0
    }
    measured.set(value, size)
  }
  return size
}

/** Room a part, message or artifact takes besides its contents (keys, ids, JSON punctuation). */
const OVERHEAD = 64

/** A part's fields, any of them (a part has one of text, raw, url and data). */
interface AnyPart {
  readonly text?: string
  readonly raw?: string
  readonly url?: string
  readonly data?: unknown
  readonly metadata?: unknown
}

const partSize = (part: AnyPart): number => {
  const content = part.text ?? part.raw ?? part.url
  return OVERHEAD + (content === undefined ? jsonSize(part.data) : content.length) +
    (part.metadata === undefined ? 0 : jsonSize(part.metadata))
}

const partsSize = (item: { readonly parts: ReadonlyArray<V1.Part>; readonly metadata?: unknown }): number => {
  let size = OVERHEAD + (item.metadata === undefined ? 0 : jsonSize(item.metadata))
  const parts = item.parts
  for (let index = 0; index < parts.length; index++) size += partSize(parts[index]!)
  return size
}

const allPartsSize = (items: ReadonlyArray<{ readonly parts: ReadonlyArray<V1.Part> }> | undefined): number => {
  let size = 0
  if (items !== undefined) { for (let index = 0; index < items.length; index++) size += partsSize(items[index]!) }
  return size
}

/**
 * About the size of a task's JSON and its waiting messages, without writing them: the lengths of
 * their texts, files (base64) and URLs, data and metadata as JSON, and a little for each part. A
 * walk over the task's messages and artifacts, not over their contents.
 */
export const sizeOf = (task: V1.Task, queued?: ReadonlyArray<V1.Message>): number =>
  OVERHEAD * 4 + (task.metadata === undefined ? 0 : jsonSize(task.metadata)) +
  (task.status.message === undefined ? 0 : partsSize(task.status.message)) +
  allPartsSize(task.history) + allPartsSize(task.artifacts) + allPartsSize(queued)

// ---------------------------------------------------------------------------
// The memory storage

interface TaskRecord {
  /** The task, while it is not packed. */
  live: V1.Task | undefined
  /** The JSON text of a finished task in place of `live` (see packFinished). */
  packed: string | undefined
  /** A finished task's JSON text, made as it finishes: packing it and an observer's line share it (undefined once packed). */
  finishedJson: string | undefined
  /** Of the task as it stands, so that lists filter and sort without unpacking it. */
  state: V1.TaskState
  time: string
  /** As created: the conversation index holds the task under it. */
  readonly contextId: string | undefined
  /** Creation order, also the tie-breaker of the list order. */
  readonly seq: number
  version: number
  /** What the task counts against the byte budget: sizeOf, or its text's length once packed. */
  size: number
  /** Size of the task's JSON, measured when first listed after a change; NaN when it does not serialise. */
  bytes: number | undefined
  // The ones below are made when first needed: most tasks never have any.
  pushConfigs?: Map<string, StoredPushConfig>
  /** Messages waiting for the task's next turns, oldest first. */
  queued?: ReadonlyArray<V1.Message>
}

const NOTHING_QUEUED: ReadonlyArray<V1.Message> = []

const statusTime = (task: V1.Task) => task.status.timestamp ?? ""

/** The task, unpacked when it was packed (a fresh copy each time: callers may keep it). */
const taskOf = (record: TaskRecord): V1.Task => {
  if (record.live !== undefined) return record.live
  const task = JSON.parse(record.packed!) as V1.Task
  rememberTaskJson(task, record.packed!)
  return task
}

const storedOf = (record: TaskRecord): StoredTask => ({
  task: taskOf(record),
  version: record.version,
  queued: record.queued ?? NOTHING_QUEUED
})

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

/** Position after the last task of a page, in the list order. */
export interface PageCursor {
  readonly timestamp: string
  readonly seq: number
}

export const encodeCursor = (cursor: PageCursor) =>
  Buffer.from(JSON.stringify([cursor.timestamp, cursor.seq]), "utf8").toString("base64url")

export const decodeCursor = (token: string): PageCursor | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(token, "base64url").toString("utf8"))
    // Only what encodeCursor writes: a timestamp (text a database holds: no NUL) and a task's creation number.
    if (
      Array.isArray(parsed) && typeof parsed[0] === "string" && !parsed[0].includes("\u0000") && Number.isSafeInteger(parsed[1]) &&
      parsed[1] >= 0
    ) {
      return { timestamp: parsed[0], seq: Number(parsed[1]) }
    }
  } catch {
    // not one of ours
  }
  return undefined
}

/** Newest status first, then newest task first. */
const listOrder = (a: TaskRecord, b: TaskRecord): number => a.time === b.time ? b.seq - a.seq : a.time < b.time ? 1 : -1

const isAfterCursor = (record: TaskRecord, cursor: PageCursor): boolean =>
  record.time < cursor.timestamp || (record.time === cursor.timestamp && record.seq < cursor.seq)

const matches = (record: TaskRecord, query: TaskQuery): boolean => {
  if (query.contextId !== undefined && record.contextId !== query.contextId) return false
  if (query.status !== undefined && record.state !== query.status) return false
  if (query.statusTimestampAfter !== undefined && record.time < query.statusTimestampAfter) return false
  return true
}

/** JSON text of a task; undefined when it does not serialise. */
const serialised = (task: V1.Task): string | undefined => {
  try {
    return JSON.stringify(task)
  } catch {
    return undefined
  }
}

/** JSON text of a task and its size in bytes; NaN bytes when it does not serialise. */
const jsonOf = (task: V1.Task): { readonly json: string | undefined; readonly bytes: number } => {
  const json = serialised(task)
  return { json, bytes: json === undefined ? Number.NaN : Buffer.byteLength(json) }
}

/** The JSON text of a task when it is finished (see TaskRecord.finishedJson). */
const finishedJsonOf = (task: V1.Task) => {
  if (!V1.isTerminalState(task.status.state)) return undefined
  const json = serialised(task)
  // The answer carrying this task embeds the text rather than serialise it again.
  if (json !== undefined) rememberTaskJson(task, json)
  return json
}

const jsonBytes = (record: TaskRecord): number =>
  record.packed === undefined ? jsonOf(record.live!).bytes : Buffer.byteLength(record.packed)

/**
 * Finished tasks stay unpacked while up to this many newer ones finished: a client usually reads a task
 * right when it finishes (a blocking send, a poll), and that read then parses nothing.
 */
export const RECENTLY_FINISHED = 256

/** What a storage kept elsewhere (FileTaskStorage) hears of each change, as it is made and in that order. */
export interface ChangeObserver {
  /** The task was created or updated; `seq` is its creation order; `finishedJson` its JSON text when it finished. */
  readonly taskWritten: (stored: StoredTask, seq: number, finishedJson: string | undefined) => void
  /** The task's push configs are now these. */
  readonly pushConfigsWritten: (taskId: string, configs: ReadonlyArray<StoredPushConfig>) => void
}

/** A task as a storage kept elsewhere reads it out and puts it back. */
export interface StoredEntry {
  readonly id: string
  readonly seq: number
  readonly version: number
  readonly state: V1.TaskState
  /** The status timestamp (ISO 8601), "" when the status has none. */
  readonly time: string
  readonly contextId: string | undefined
  /** The task's JSON text. */
  readonly taskJson: string
  readonly queued: ReadonlyArray<V1.Message>
  readonly pushConfigs: ReadonlyArray<StoredPushConfig>
}

/** The memory storage, with what a storage kept elsewhere builds on it. */
export interface MemoryStorage extends TaskStorageApi {
  /** Puts a task back as it was stored (a finished one stays as its text until read). */
  readonly restore: (entry: StoredEntry) => void
  /** Every task, least recently changed first. */
  readonly entries: () => Iterable<StoredEntry>
  /** Forgets a task; whether it was there. */
  readonly forget: (id: string) => boolean
  readonly createNow: NonNullable<TaskStorageApi["createNow"]>
  readonly updateNow: NonNullable<TaskStorageApi["updateNow"]>
}

type TaskStorageApi = TaskStorage["Type"]

/** The memory storage; `retention` says which tasks must stay past the bounds (none besides working ones by default). */
export const make = (options: TaskStorageOptions = {}, retention: Retention = NOBODY_FOLLOWS, observer?: ChangeObserver) =>
  Effect.sync((): MemoryStorage => {
    const maxTasks = options.maxTasks ?? DEFAULT_MAX_TASKS
    const maxBytes = options.maxBytes ?? DEFAULT_MAX_TASK_BYTES
    const maxPageBytes = options.maxPageBytes ?? MAX_TASK_PAGE_BYTES
    const records = new Map<string, TaskRecord>()
    /** The ids of each conversation's tasks: the id alone while it has one (most have: a Set per task cost ~100 bytes each). */
    const byContext = new Map<string, string | Set<string>>()
    /** The record set last in `records` (the map's newest entry), which a change need not move again. */
    let newest: TaskRecord | undefined
    let nextSeq = 0
    /** The sum of the records' sizes. */
    let storedBytes = 0

    const forget = (id: string, record: TaskRecord) => {
      records.delete(id)
      storedBytes -= record.size
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

    const resize = (record: TaskRecord, size: number) => {
      storedBytes += size - record.size
      record.size = size
    }

    let evictAboveTasks = maxTasks
    let evictAboveBytes = maxBytes
    /**
     * Past either bound, forgets the least recently changed tasks no client follows, down to 90 % of
     * both: finished ones first, then ones still waiting for input or authorisation (abandoned
     * conversations must not fill the store; a late follow-up to one gets TaskNotFound). Working tasks
     * stay, and so does `writing`, the task being stored. When they keep the store above that, the
     * next scan waits for another tenth of the bound, so storing tasks never costs a scan each.
     */
    const evict = (writing: TaskRecord) => {
      if (records.size <= evictAboveTasks && storedBytes <= evictAboveBytes) return
      const targetTasks = Math.floor(maxTasks * 0.9)
      const targetBytes = Math.floor(maxBytes * 0.9)
      for (const forgettable of [V1.isTerminalState, V1.isInterruptedState]) {
        for (const [id, record] of records) {
          if (records.size <= targetTasks && storedBytes <= targetBytes) break
          if (record !== writing && forgettable(record.state) && !retention.isFollowed(id)) {
            forget(id, record)
            retention.forgotten(id)
          }
        }
      }
      evictAboveTasks = Math.max(maxTasks, records.size + Math.ceil(maxTasks / 10))
      evictAboveBytes = Math.max(maxBytes, storedBytes + Math.ceil(maxBytes / 10))
    }

    /** Finished tasks not packed yet, newest last: the older batch is packed when the newer one is full. */
    let finishedBefore: Array<TaskRecord> = []
    let finishedLately: Array<TaskRecord> = []

    /** Packs a finished task that is still stored and unchanged since; one that does not serialise stays as it is. */
    const pack = (record: TaskRecord) => {
      const task = record.live
      const json = record.finishedJson
      if (task === undefined || json === undefined || records.get(task.id) !== record) return
      record.packed = flattened(json)
      record.bytes = Buffer.byteLength(json)
      record.live = undefined
      record.finishedJson = undefined
      resize(record, json.length)
    }

    const packFinished = (record: TaskRecord) => {
      finishedLately.push(record)
      if (finishedLately.length < RECENTLY_FINISHED) return
      for (const older of finishedBefore) pack(older)
      finishedBefore = finishedLately
      finishedLately = []
    }

    /** The task created at once, a conflict returned rather than failed (see updateNow). */
    const createNow = (task: V1.Task): StoredTask | TaskVersionConflict => {
      const taken = records.get(task.id)
      if (taken !== undefined) return new TaskVersionConflict({ taskId: task.id, expected: 0, found: taken.version })
      const contextId = flattened(task.contextId)
      const record: TaskRecord = {
        live: task,
        packed: undefined,
        finishedJson: finishedJsonOf(task),
        state: task.status.state,
        time: statusTime(task),
        contextId,
        seq: nextSeq++,
        version: 1,
        size: 0,
        bytes: undefined
      }
      resize(record, sizeOf(task))
      setNewest(task.id, record)
      if (contextId !== undefined) joinContext(contextId, task.id)
      const stored: StoredTask = { task, version: 1, queued: NOTHING_QUEUED }
      observer?.taskWritten(stored, record.seq, record.finishedJson)
      if (V1.isTerminalState(record.state)) packFinished(record)
      evict(record)
      return stored
    }

    const create = (task: V1.Task) =>
      Effect.suspend((): Effect.Effect<StoredTask, TaskVersionConflict> => {
        const created = createNow(task)
        return created instanceof TaskVersionConflict ? Effect.fail(created) : Effect.succeed(created)
      })

    /** The update made at once, a conflict returned rather than failed: TaskStore and the file storage make it without an effect of its own. */
    const updateNow = (id: string, write: TaskWrite, expectedVersion: number): Option.Option<StoredTask> | TaskVersionConflict => {
      const record = records.get(id)
      if (record === undefined) return Option.none()
      if (record.version !== expectedVersion) {
        return new TaskVersionConflict({ taskId: id, expected: expectedVersion, found: record.version })
      }
      const task = write.task
      record.live = task
      record.packed = undefined
      record.finishedJson = finishedJsonOf(task)
      record.state = task.status.state
      record.time = statusTime(task)
      record.bytes = undefined
      record.version++
      const waiting = write.queued
      if (waiting !== undefined && waiting.length > 0) record.queued = waiting
      else if (waiting !== undefined) delete record.queued
      const queued = record.queued ?? NOTHING_QUEUED
      resize(record, sizeOf(task, record.queued))
      setNewest(id, record)
      const stored: StoredTask = { task, version: record.version, queued }
      observer?.taskWritten(stored, record.seq, record.finishedJson)
      if (V1.isTerminalState(record.state)) packFinished(record)
      evict(record)
      return Option.some(stored)
    }

    const update = (id: string, write: TaskWrite, expectedVersion: number) =>
      Effect.suspend((): Effect.Effect<Option.Option<StoredTask>, TaskVersionConflict> => {
        const written = updateNow(id, write, expectedVersion)
        return written instanceof TaskVersionConflict ? Effect.fail(written) : Effect.succeed(written)
      })

    const list = (query: TaskQuery) =>
      Effect.suspend((): Effect.Effect<TaskPage, InvalidPageToken> => {
        const token = query.pageToken
        const after = token === undefined ? undefined : decodeCursor(token)
        if (token !== undefined && after === undefined) return Effect.fail(new InvalidPageToken({ token }))
        const matching = [...records.values()].filter((record) => matches(record, query)).sort(listOrder)
        const start = after === undefined ? 0 : matching.findIndex((record) => isAfterCursor(record, after))
        const page: Array<TaskRecord> = []
        const unserialisable: Array<string> = []
        let bytes = 0
        let index = start < 0 ? matching.length : start
        for (; index < matching.length && page.length < query.pageSize; index++) {
          const record = matching[index]!
          const size = record.bytes ??= jsonBytes(record)
          if (Number.isNaN(size)) unserialisable.push(record.live?.id ?? "")
          else if (page.length > 0 && bytes + bytesInPage(size, page.length) > maxPageBytes) break
          else {
            bytes += bytesInPage(size, page.length)
            page.push(record)
          }
        }
        const last = page[page.length - 1]
        const result: TaskPage = {
          tasks: page.map(taskOf),
          totalSize: matching.length,
          ...(index < matching.length && last !== undefined ? { nextPageToken: encodeCursor({ timestamp: last.time, seq: last.seq }) } : {})
        }
        if (unserialisable.length === 0) return Effect.succeed(result)
        return Effect.as(Effect.logError(`Tasks left out of a list because they do not serialise: ${unserialisable.join(", ")}`), result)
      })

    const peek = (id: string): Option.Option<StoredTask> => {
      const record = records.get(id)
      return record === undefined ? Option.none() : Option.some(storedOf(record))
    }

    const contextTasksNow = (contextId: string): ReadonlyArray<V1.Task> => {
      const found: Array<TaskRecord> = []
      for (const id of contextIds(contextId)) {
        const record = records.get(id)
        if (record !== undefined) found.push(record)
      }
      // Restored tasks joined their conversation in the order they last changed, not as created.
      return found.sort((a, b) => a.seq - b.seq).map(taskOf)
    }

    const withRecord = <A>(id: string, f: (record: TaskRecord) => A) =>
      Effect.sync((): Option.Option<A> => {
        const record = records.get(id)
        return record === undefined ? Option.none() : Option.some(f(record))
      })

    const pushConfigsChanged = (taskId: string, record: TaskRecord) =>
      observer?.pushConfigsWritten(taskId, [...(record.pushConfigs?.values() ?? [])])

    const restore = (entry: StoredEntry) => {
      const previous = records.get(entry.id)
      if (previous !== undefined) forget(entry.id, previous)
      const finished = V1.isTerminalState(entry.state)
      const record: TaskRecord = {
        live: finished ? undefined : JSON.parse(entry.taskJson) as V1.Task,
        packed: finished ? flattened(entry.taskJson) : undefined,
        finishedJson: undefined,
        state: entry.state,
        time: entry.time,
        contextId: flattened(entry.contextId),
        seq: entry.seq,
        version: entry.version,
        size: 0,
        bytes: undefined
      }
      if (entry.queued.length > 0) record.queued = entry.queued
      if (entry.pushConfigs.length > 0) record.pushConfigs = new Map(entry.pushConfigs.map((stored) => [stored.config.id ?? "", stored]))
      resize(record, finished ? entry.taskJson.length : sizeOf(record.live!, record.queued))
      setNewest(entry.id, record)
      if (record.contextId !== undefined) joinContext(record.contextId, entry.id)
      nextSeq = Math.max(nextSeq, entry.seq + 1)
    }

    function* entries(): Iterable<StoredEntry> {
      for (const [id, record] of records) {
        yield {
          id,
          seq: record.seq,
          version: record.version,
          state: record.state,
          time: record.time,
          contextId: record.contextId,
          // Written only when asked for: a sweep by age reads the states and times alone.
          get taskJson() {
            return record.packed ?? JSON.stringify(record.live)
          },
          queued: record.queued ?? NOTHING_QUEUED,
          pushConfigs: [...(record.pushConfigs?.values() ?? [])]
        }
      }
    }

    return {
      restore,
      entries,
      forget: (id) => {
        const record = records.get(id)
        if (record !== undefined) forget(id, record)
        return record !== undefined
      },
      create,
      createNow,
      get: (id) => Effect.sync(() => peek(id)),
      peek,
      update,
      updateNow,
      list,
      contextTasks: (contextId) => Effect.sync(() => contextTasksNow(contextId)),
      contextTasksNow,
      deliveries: pendingDeliveries(),
      putPushConfig: (taskId, stored) =>
        withRecord(taskId, (record) => {
          const configs = record.pushConfigs ??= new Map()
          configs.set(stored.config.id ?? "", stored)
          pushConfigsChanged(taskId, record)
          return stored
        }),
      pushConfigs: (taskId) => withRecord(taskId, (record) => [...(record.pushConfigs?.values() ?? [])]),
      removePushConfig: (taskId, configId) =>
        withRecord(taskId, (record) => {
          const removed = record.pushConfigs?.delete(configId) ?? false
          if (removed) pushConfigsChanged(taskId, record)
          return removed
        })
    }
  })

// ---------------------------------------------------------------------------
// Pending push deliveries, kept by one process

/** What names a delivery. */
export const deliveryKey = (delivery: Pick<PendingDelivery, "taskId" | "configId" | "version">) =>
  `${delivery.taskId}\u0000${delivery.configId}\u0000${delivery.version}`

/** Where a storage kept elsewhere (FileTaskStorage) writes each change of the pending deliveries. */
export interface DeliveryObserver {
  readonly written: (delivery: PendingDelivery) => Effect.Effect<void>
  readonly settled: (delivery: PendingDelivery) => Effect.Effect<void>
}

export interface ProcessDeliveries extends PendingDeliveries {
  /** Every pending delivery (a snapshot of the store). */
  readonly entries: () => Iterable<PendingDelivery>
}

/** By task, config and version: each config's deliveries in the order their updates were written. */
export const byWriteOrder = (a: PendingDelivery, b: PendingDelivery) =>
  a.taskId !== b.taskId
    ? (a.taskId < b.taskId ? -1 : 1)
    : a.configId !== b.configId
    ? (a.configId < b.configId ? -1 : 1)
    : a.version - b.version

/**
 * The pending deliveries of a storage that one process uses at a time: `restored` are the ones the
 * last process left, which `claim` hands out once; those recorded here are this process's own.
 */
export const pendingDeliveries = (
  restored: Iterable<PendingDelivery> = [],
  observer?: DeliveryObserver
): ProcessDeliveries => {
  const pending = new Map<string, PendingDelivery>()
  let unclaimed: Array<PendingDelivery> = []
  for (const delivery of restored) {
    pending.set(deliveryKey(delivery), delivery)
    unclaimed.push(delivery)
  }
  const write = (delivery: PendingDelivery) =>
    Effect.suspend(() => {
      pending.set(deliveryKey(delivery), delivery)
      return observer?.written(delivery) ?? Effect.void
    })
  return {
    record: (delivery) =>
      Effect.suspend(() => pending.has(deliveryKey(delivery)) ? Effect.succeed(false) : Effect.as(write(delivery), true)),
    reschedule: write,
    settle: (delivery) =>
      Effect.suspend(() => pending.delete(deliveryKey(delivery)) ? observer?.settled(delivery) ?? Effect.void : Effect.void),
    claim: Effect.sync(() => {
      const claimed = unclaimed.filter((delivery) => pending.has(deliveryKey(delivery))).sort(byWriteOrder)
      unclaimed = []
      return claimed
    }),
    entries: () => pending.values()
  }
}

/** An empty memory storage that forgets by state alone (TaskStore.layer gives it the followers too). */
export const layer = (options: TaskStorageOptions = {}): Layer.Layer<TaskStorage> => Layer.effect(TaskStorage, make(options))
