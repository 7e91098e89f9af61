/**
 * The file TaskStorage: the agent server's tasks kept on disk, so that a task a client got an
 * answer for survives `kill -9` and a restart. It is the memory storage (TaskStorage.make) with a
 * journal beside it: every change the memory storage makes is appended to the journal as one line,
 * and nothing is answered before its line is fsynced: a read waits for the task's last line, and a
 * write a client is answered with returns only once synced (see isAnswered; a new task is answered
 * once read). Writes that come together share one fsync (group commit: what comes while a batch is
 * being synced goes in the next, synced beside it), so the rate holds under concurrency; a task's
 * state nobody waits for yet waits a little for its next change, so a turn answered at once is one
 * line (see Journal).
 *
 * Now and then (past `compactAboveBytes`, and at each start) the journal is folded into a snapshot:
 * new lines go to the next generation's journal while the snapshot of the tasks as they are is
 * written aside, synced and renamed into place; the older files then go. On start the newest
 * complete snapshot is read and the journals from its generation on are replayed (the lines are
 * whole states, so replaying from before the snapshot changes nothing). A line cut short by a
 * crash at the end of a journal is dropped; a damaged line anywhere else stops the start.
 *
 * A task line is a small JSON header (id, version, creation order, state, time, conversation,
 * waiting messages), a tab, and the task's JSON: a start parses the headers, and keeps finished
 * tasks as their text (the memory storage packs them so anyway) until they are read.
 *
 * Why a journal and not a WASM SQLite (relay ships as one bundle without native modules): the
 * memory storage already answers every read and list; what is missing is durability, which a
 * journal adds with one append and one shared fdatasync per batch. sql.js keeps its database in
 * memory and writes it out whole; wa-sqlite needs a Node VFS of its own, a ~1 MB WASM module to load
 * at start, and a page-level B-tree write (several fsyncs with its own journal) per change. What
 * the journal costs, against the memory store and the SDK's server, and how fast the store opens
 * with 10 000 tasks: bench/README.md, "The file task store".
 *
 * Retention (README, "Persistence and many instances"): at most `maxTasks` tasks and `maxBytes`
 * bytes, past which the least recently changed finished tasks go first (as in memory), and no
 * finished or waiting task older than `maxAge` (swept at start and hourly). A working task, and
 * one a client follows, always stays. One process at a time: the directory is locked.
 *
 * Push tokens and webhook credentials are sealed in the lines (domain/sealing.ts, as in PostgreSQL)
 * with RELAY_STORE_KEY, or else with a key relay makes once in the directory (`store.key`, 0600): the
 * journals and snapshots can then be copied, backed up or attached to a bug report without the
 * secrets, while the key file stays behind the directory's 0700. Lines a previous build wrote in clear
 * are read as before, and written sealed from the next snapshot on (one is written at each start).
 */
import { Clock, Duration, Effect, FiberSet, Layer, Option, Schedule } from "effect"
import { randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import * as V1 from "../a2a/v1.js"
import { MIN_STORE_KEY_CHARS, pushConfigRow, type Sealer, sealerOf, STORE_KEY_VARIABLE } from "../domain/sealing.js"
import { TaskStoreUnavailable } from "../domain/taskStoreChoice.js"
import { scopedFileLock } from "./StateDir.js"
import * as TaskStorage from "./TaskStorage.js"

export interface FileTaskStorageOptions extends TaskStorage.TaskStorageOptions {
  /** The directory of the store (created 0700). */
  readonly dir: string
  /** How long a finished or waiting task is kept after its last change. Default 30 days. */
  readonly maxAge?: Duration.DurationInput | undefined
  /** Journal bytes past which it is folded into a snapshot. Default 64 MiB (or twice the last snapshot). */
  readonly compactAboveBytes?: number | undefined
  /** How long a task's state nobody waits for yet may wait for its batch (see Journal). Default 20 ms. */
  readonly unwaitedLineMs?: number | undefined
}

export const DEFAULT_MAX_TASK_AGE = Duration.days(30)
const DEFAULT_COMPACT_ABOVE_BYTES = 64 * 1024 * 1024
const RETENTION_SWEEP_EVERY = Duration.hours(1)
const DEFAULT_UNWAITED_LINE_MS = 20

// ---------------------------------------------------------------------------
// Lines

/** The header of a task line. */
interface TaskHeader {
  readonly t: string
  readonly v: number
  readonly s: number
  readonly st: V1.TaskState
  readonly tm: string
  readonly c?: string | undefined
  readonly q?: ReadonlyArray<V1.Message> | undefined
}

const taskLine = (entry: Omit<TaskStorage.StoredEntry, "pushConfigs">): string => {
  // JSON leaves out the keys whose value is undefined.
  const header: TaskHeader = {
    t: entry.id,
    v: entry.version,
    s: entry.seq,
    st: entry.state,
    tm: entry.time,
    c: entry.contextId,
    q: entry.queued.length === 0 ? undefined : entry.queued
  }
  // JSON text holds no raw tab: the first one ends the header.
  return `${JSON.stringify(header)}\t${entry.taskJson}\n`
}

/** The line of a task as written; a finished one's JSON is made once, for this and for the memory storage's packing. */
const writtenLine = (stored: TaskStorage.StoredTask, seq: number, finishedJson: string | undefined): string =>
  taskLine({
    id: stored.task.id,
    seq,
    version: stored.version,
    state: stored.task.status.state,
    time: stored.task.status.timestamp ?? "",
    contextId: stored.task.contextId,
    taskJson: finishedJson ?? JSON.stringify(stored.task),
    queued: stored.queued
  })

/** A push config as the lines hold it: its token and credentials sealed in `s` (absent in clear lines of old builds). */
interface WrittenPushConfig extends TaskStorage.StoredPushConfig {
  readonly s?: string
}

/** The secrets of a push config, sealed together. */
interface PushSecrets {
  readonly token?: string | undefined
  readonly credentials?: string | undefined
}

const sealPushConfig = (sealer: Sealer, taskId: string, stored: TaskStorage.StoredPushConfig): WrittenPushConfig => {
  const { authentication, token, ...rest } = stored.config
  const secrets: PushSecrets = { token, credentials: authentication?.credentials }
  if (secrets.token === undefined && secrets.credentials === undefined) return stored
  return {
    config: { ...rest, ...(authentication === undefined ? {} : { authentication: { scheme: authentication.scheme } }) },
    generation: stored.generation,
    s: sealer.seal(JSON.stringify(secrets), pushConfigRow(taskId, stored.config.id ?? ""))
  }
}

/** The config with its secrets back; undefined when they do not open with this key. */
const openPushConfig = (sealer: Sealer, taskId: string, written: WrittenPushConfig): TaskStorage.StoredPushConfig | undefined => {
  if (written.s === undefined) return written
  const opened = sealer.open(written.s, pushConfigRow(taskId, written.config.id ?? ""))
  if (opened === undefined) return undefined
  const { credentials, token } = JSON.parse(opened) as PushSecrets
  const { authentication, ...rest } = written.config
  return {
    config: {
      ...rest,
      ...(token === undefined ? {} : { token }),
      ...(authentication === undefined
        ? {}
        : { authentication: { ...authentication, ...(credentials === undefined ? {} : { credentials }) } })
    },
    generation: written.generation
  }
}

const pushConfigsLine = (sealer: Sealer, taskId: string, configs: ReadonlyArray<TaskStorage.StoredPushConfig>) =>
  `${JSON.stringify({ p: taskId, c: configs.map((stored) => sealPushConfig(sealer, taskId, stored)) })}\n`

const dropLine = (taskId: string) => `${JSON.stringify({ d: taskId })}\n`

/** A pending push delivery as it now stands, and one settled (see TaskStorage.PendingDeliveries). */
const deliveryLine = (delivery: TaskStorage.PendingDelivery) => `${JSON.stringify({ pd: delivery })}\n`
const settledLine = (delivery: TaskStorage.PendingDelivery) => `${JSON.stringify({ ps: TaskStorage.deliveryKey(delivery) })}\n`

/** The tasks a replay ends with, least recently changed last written last. */
interface Replayed {
  readonly tasks: Map<string, Omit<TaskStorage.StoredEntry, "pushConfigs">>
  readonly pushConfigs: Map<string, ReadonlyArray<WrittenPushConfig>>
  readonly deliveries: Map<string, TaskStorage.PendingDelivery>
}

const emptyReplay = (): Replayed => ({ tasks: new Map(), pushConfigs: new Map(), deliveries: new Map() })

/** The shape of a push config line's entry: a config with its URL, the generation it was made over, sealed secrets. */
const isWrittenPushConfig = (value: unknown): value is WrittenPushConfig => {
  const written = value as Partial<WrittenPushConfig> | null
  return typeof written === "object" && written !== null && typeof written.config === "object" && written.config !== null &&
    typeof written.config.url === "string" && typeof written.generation === "string" &&
    (written.s === undefined || typeof written.s === "string")
}

const isTaskHeader = (value: unknown): value is TaskHeader => {
  const header = value as Partial<TaskHeader> | null
  return typeof header === "object" && header !== null && typeof header.t === "string" && Number.isInteger(header.v) &&
    Number.isInteger(header.s) && typeof header.st === "string" && typeof header.tm === "string"
}

/** Applies one line; false when it is not one of ours. */
const applyLine = (state: Replayed, line: string): boolean => {
  const tab = line.indexOf("\t")
  try {
    if (tab >= 0) {
      const header: unknown = JSON.parse(line.slice(0, tab))
      const taskJson = line.slice(tab + 1)
      if (!isTaskHeader(header) || !taskJson.startsWith("{") || !taskJson.endsWith("}")) return false
      state.tasks.delete(header.t)
      state.tasks.set(header.t, {
        id: header.t,
        seq: header.s,
        version: header.v,
        state: header.st,
        time: header.tm,
        contextId: header.c,
        taskJson,
        queued: header.q ?? []
      })
      return true
    }
    const record = JSON.parse(line) as { p?: unknown; c?: unknown; d?: unknown; pd?: unknown; ps?: unknown }
    if (applyDeliveryLine(state, record)) return true
    if (typeof record.p === "string" && Array.isArray(record.c) && record.c.every(isWrittenPushConfig)) {
      state.pushConfigs.set(record.p, record.c)
      return true
    }
    if (typeof record.d === "string") {
      state.tasks.delete(record.d)
      state.pushConfigs.delete(record.d)
      return true
    }
  } catch {
    // not JSON: not one of ours
  }
  return false
}

/** Applies a pending delivery's line; false when it is not one. */
const applyDeliveryLine = (state: Replayed, record: { pd?: unknown; ps?: unknown }): boolean => {
  const delivery = record.pd as Partial<TaskStorage.PendingDelivery> | undefined
  if (typeof delivery === "object" && delivery !== null && typeof delivery.taskId === "string" && Number.isInteger(delivery.version)) {
    state.deliveries.set(TaskStorage.deliveryKey(delivery as TaskStorage.PendingDelivery), delivery as TaskStorage.PendingDelivery)
    return true
  }
  if (typeof record.ps !== "string") return false
  state.deliveries.delete(record.ps)
  return true
}

/**
 * Replays a file's lines. What follows the last newline was cut short by a crash, and so is a bad
 * line with nothing good after it; a bad line before a good one means the file is damaged.
 */
const replayFile = (state: Replayed, file: string): { readonly dropped: number; readonly damagedAt?: number } => {
  const lines = Fs.readFileSync(file, "utf8").split("\n")
  const tail = lines.pop()!
  let firstBad: number | undefined
  for (let index = 0; index < lines.length; index++) {
    const line = lines[index]!
    if (firstBad === undefined) {
      if (!applyLine(state, line)) firstBad = index
    } else if (line.length > 0 && applyLine(emptyReplay(), line)) {
      return { dropped: 0, damagedAt: firstBad + 1 }
    }
  }
  return { dropped: (firstBad === undefined ? 0 : lines.length - firstBad) + (tail.length > 0 ? 1 : 0) }
}

// ---------------------------------------------------------------------------
// Files

const SNAPSHOT = /^snapshot-(\d+)\.jsonl$/
const JOURNAL = /^journal-(\d+)\.jsonl$/

const fileName = (kind: "snapshot" | "journal", generation: number) => `${kind}-${String(generation).padStart(8, "0")}.jsonl`

const generationsOf = (names: ReadonlyArray<string>, pattern: RegExp) =>
  names.flatMap((name) => {
    const match = pattern.exec(name)
    return match === null ? [] : [Number(match[1])]
  }).sort((a, b) => a - b)

/** Makes the directory's entries (a new or renamed file) durable. */
const syncDirectory = (dir: string) => {
  const fd = Fs.openSync(dir, "r")
  try {
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
}

const unavailable = (dir: string, reason: string, suggestion: string) => new TaskStoreUnavailable({ store: dir, reason, suggestion })

const reasonOf = (error: unknown) => error instanceof Error ? error.message : String(error)

const KEY_FILE = "store.key"

/** Writes a new key file whole (0600, synced, renamed into place): a crash leaves it absent, never short. */
const writeKeyFile = (dir: string, keyText: string) => {
  const file = Path.join(dir, KEY_FILE)
  const fd = Fs.openSync(`${file}.tmp`, "w", 0o600)
  try {
    Fs.writeSync(fd, keyText)
    Fs.fsyncSync(fd)
  } finally {
    Fs.closeSync(fd)
  }
  Fs.renameSync(`${file}.tmp`, file)
  syncDirectory(dir)
}

/** The key text: RELAY_STORE_KEY, else the directory's key file, made on first use. */
const storeKeyText = (dir: string): string | TaskStoreUnavailable => {
  const given = process.env[STORE_KEY_VARIABLE]
  if (given !== undefined && given !== "") {
    return given.length >= MIN_STORE_KEY_CHARS ? given : unavailable(
      dir,
      `${STORE_KEY_VARIABLE} is shorter than ${MIN_STORE_KEY_CHARS} characters`,
      `Set ${STORE_KEY_VARIABLE} to a longer secret (for example: export ${STORE_KEY_VARIABLE}=$(openssl rand -base64 32)), or unset it to use ${
        Path.join(dir, KEY_FILE)
      }`
    )
  }
  const file = Path.join(dir, KEY_FILE)
  if (!Fs.existsSync(file)) writeKeyFile(dir, randomBytes(32).toString("base64"))
  const kept = Fs.readFileSync(file, "utf8").trim()
  return kept.length >= MIN_STORE_KEY_CHARS ? kept : unavailable(
    dir,
    `${file} holds no key`,
    `Set ${STORE_KEY_VARIABLE} to the key the store was written with, or remove ${file} if the store holds no push configs`
  )
}

const storeSealer = (dir: string) =>
  Effect.try({
    try: () => storeKeyText(dir),
    catch: (error) => unavailable(dir, reasonOf(error), "Check the directory's permissions and its disk")
  }).pipe(Effect.flatMap((key) => key instanceof TaskStoreUnavailable ? Effect.fail(key) : Effect.succeed(sealerOf(key))))

/** Each task's push configs with their secrets opened; a wrong key stops the start rather than lose them. */
const openPushConfigs = (dir: string, sealer: Sealer, written: Map<string, ReadonlyArray<WrittenPushConfig>>) => {
  const opened = new Map<string, ReadonlyArray<TaskStorage.StoredPushConfig>>()
  for (const [taskId, configs] of written) {
    const open = configs.map((config) => openPushConfig(sealer, taskId, config))
    const closed = open.findIndex((config) => config === undefined)
    if (closed >= 0) {
      const fromEnvironment = (process.env[STORE_KEY_VARIABLE] ?? "") !== ""
      const keyFile = Path.join(dir, KEY_FILE)
      return Effect.fail(unavailable(
        dir,
        `push config ${configs[closed]!.config.id} of task ${taskId} does not open with ${
          fromEnvironment ? STORE_KEY_VARIABLE : keyFile
        }: it was sealed under another key`,
        `Set ${STORE_KEY_VARIABLE} to the key the store was written with${
          fromEnvironment ? ` (or unset it if that was ${keyFile})` : ""
        }, or start with --store file:ANOTHER_DIR`
      ))
    }
    opened.set(taskId, open as ReadonlyArray<TaskStorage.StoredPushConfig>)
  }
  return Effect.succeed(opened)
}

interface Loaded extends Replayed {
  /** The generation the next journal takes. */
  readonly nextGeneration: number
  /** Lines cut short by a crash and dropped. */
  readonly dropped: number
}

/**
 * A task whose last line has a good header but a body that does not parse (damaged on disk: a line a
 * crash cut short is already refused by applyLine, its body unclosed): served as it is, it would fail
 * every read and list of it, and be copied into every later snapshot. Only each task's last line is
 * parsed (the lines it replaced do not count).
 */
const unreadableTask = (state: Replayed): { readonly id: string; readonly reason: string } | undefined => {
  for (const [id, entry] of state.tasks) {
    try {
      JSON.parse(entry.taskJson)
    } catch (error) {
      return { id, reason: reasonOf(error) }
    }
  }
  return undefined
}

/** Reads the newest complete snapshot and replays the journals from its generation on. */
const load = (dir: string) =>
  Effect.try({
    try: (): Loaded | TaskStoreUnavailable => {
      const names = Fs.readdirSync(dir)
      // A snapshot a crash left half written.
      for (const name of names) if (name.endsWith(".tmp")) Fs.rmSync(Path.join(dir, name), { force: true })
      const snapshots = generationsOf(names, SNAPSHOT)
      const journals = generationsOf(names, JOURNAL)
      const base = snapshots.at(-1) ?? 0
      const state = emptyReplay()
      let dropped = 0
      const files = [
        ...(snapshots.length > 0 ? [fileName("snapshot", base)] : []),
        ...journals.filter((generation) => generation >= base).map((generation) => fileName("journal", generation))
      ]
      for (const name of files) {
        const replayed = replayFile(state, Path.join(dir, name))
        if (replayed.damagedAt !== undefined) {
          return unavailable(
            dir,
            `${name} is damaged at line ${replayed.damagedAt}`,
            `Move ${Path.join(dir, name)} aside to start without the tasks it holds, or start with --store file:ANOTHER_DIR`
          )
        }
        dropped += replayed.dropped
      }
      const unreadable = unreadableTask(state)
      if (unreadable !== undefined) {
        return unavailable(
          dir,
          `the line of task ${unreadable.id} is damaged (${unreadable.reason})`,
          `Move the files of ${dir} aside to start without its tasks, or start with --store file:ANOTHER_DIR`
        )
      }
      return { ...state, nextGeneration: Math.max(base, journals.at(-1) ?? 0) + 1, dropped }
    },
    catch: (error) => unavailable(dir, reasonOf(error), "Check the directory's permissions and its disk")
  }).pipe(Effect.flatMap((loaded) => loaded instanceof TaskStoreUnavailable ? Effect.fail(loaded) : Effect.succeed(loaded)))

// ---------------------------------------------------------------------------
// The journal: appended lines, synced in batches

/** A line not written yet: the newest of its key (a task's newer state replaces its line not written yet, in place). */
interface PendingLine {
  /** Its text, serialised only when its batch is. */
  text: () => string
  /** Its number (lines are numbered as appended), and the number of the first line of its key it replaced. */
  number: number
  readonly first: number
  /** The task it is about, if any. */
  readonly taskId: string | undefined
  /** A task's state, which may wait for its task's next change (see Journal's "When a batch is written"). */
  readonly mayWait: boolean
  /** When its key's first line not written yet was appended (performance.now()). */
  readonly since: number
}

/** Lines taken together: one write, then one fdatasync. */
interface Batch {
  readonly lines: ReadonlyArray<PendingLine>
  /** The file they go to. */
  readonly fd: number
  /** Every line up to this number is durable once this batch is (the lines left pending when it was taken come after). */
  readonly syncedThen: number
  /** Its sync (or a later one of the same file) returned. */
  synced: boolean
}

interface Waiter {
  /** The task whose lines it waits for; undefined: every line. */
  readonly taskId: string | undefined
  readonly upTo: number
  readonly resume: (effect: Effect.Effect<void>) => void
}

/** Writes the text whole to the end of the file (the rest of a short write as bytes); its length in bytes. */
const writeWhole = (fd: number, text: string): number => {
  let written = Fs.writeSync(fd, text)
  const bytes = Buffer.byteLength(text)
  if (written < bytes) {
    const buffer = Buffer.from(text, "utf8")
    while (written < bytes) written += Fs.writeSync(fd, buffer, written)
  }
  return bytes
}

/** Batches written and not yet synced at once: one syncing while the next is written and synced (see Journal). */
const BATCHES_AT_ONCE = 2

/**
 * When a batch is written: a task's state nobody waits for yet (a new task, a turn's progress) may
 * wait up to `unwaitedLineMs` for a batch, since its task's next change often comes first and
 * replaces it: an echo turn (created, working, completed) is one line, not two or three. Anything
 * else, and whatever a reader or an answered write waits for, goes in the next batch: at the next
 * turn of the event loop (group commit: what comes meanwhile shares it).
 *
 * Batches overlap: the next one is written and fdatasync'd while the previous one's sync still runs
 * (BATCHES_AT_ONCE), so that an answer waits for its own batch's sync rather than also for the one
 * before. A batch is written at once (writeSync: a copy into the page cache, where an async write
 * cost a thread pool round trip per batch), so writes go in order to the append-only file, and a
 * sync makes durable every write to its file before it: a batch counts as durable once every batch
 * before it does.
 */
class Journal {
  /** Lines appended so far. */
  appended = 0
  /** Every line up to this number is synced, or replaced by a synced one. */
  synced = 0
  /** Bytes in the current journal file. */
  bytes = 0
  /** Task states not written yet, by task; every other line not written yet, by key. */
  private readonly pendingStates = new Map<string, PendingLine>()
  private readonly pending = new Map<string, PendingLine>()
  /** Batches written and not yet durable, oldest first. */
  private readonly inFlight: Array<Batch> = []
  /** Files of earlier generations, closed once their last batch is durable. */
  private readonly retired: Array<number> = []
  private timer: ReturnType<typeof setTimeout> | undefined
  private immediate = false
  private waiters: Array<Waiter> = []
  private failure: Error | undefined
  /** Each task's last line while it is not synced, and the last of its lines synced so far. */
  private readonly lastLineOf = new Map<string, number>()
  private readonly syncedLineOf = new Map<string, number>()

  constructor(private fd: number, private readonly unwaitedLineMs: number, private readonly afterFlush: () => void) {}

  /** Appends a task's state: it may wait for the task's next change (a later one replaces it). */
  appendState(taskId: string, text: () => string) {
    this.put(this.pendingStates, taskId, text, taskId, true)
    this.flushLater(this.unwaitedLineMs)
  }

  /** Appends the line about the thing `key` names (a later one for the same key replaces it); `taskId`: the task it is about. */
  append(key: string, text: () => string, taskId?: string) {
    this.put(this.pending, key, text, taskId, false)
    this.flushSoon()
  }

  /**
   * Appends a forgotten task's drop line: its lines not written yet (its state, its push configs keyed `p:ID`) need not be; the
   * drop goes after any written ones. A task is never made again once forgotten (ids are fresh).
   */
  appendDrop(taskId: string, text: () => string) {
    let first = this.appended + 1
    for (const [lines, stale] of [[this.pendingStates, taskId], [this.pending, `p:${taskId}`]] as const) {
      first = Math.min(first, lines.get(stale)?.first ?? first)
      lines.delete(stale)
    }
    this.put(this.pending, `d:${taskId}`, text, taskId, false, first)
    this.flushSoon()
  }

  private put(
    lines: Map<string, PendingLine>,
    key: string,
    text: () => string,
    taskId: string | undefined,
    mayWait: boolean,
    first?: number
  ) {
    const number = ++this.appended
    if (taskId !== undefined) this.lastLineOf.set(taskId, number)
    const replaced = lines.get(key)
    if (replaced !== undefined && first === undefined) {
      replaced.text = text
      replaced.number = number
      return
    }
    lines.set(key, {
      text,
      number,
      first: Math.min(first ?? number, replaced?.first ?? number),
      taskId,
      mayWait,
      since: replaced?.since ?? performance.now()
    })
  }

  /** Once every line appended so far is synced (a defect when the disk failed). */
  get allSynced(): Effect.Effect<void> {
    return this.syncedUpTo(undefined, this.appended)
  }

  /** Once the task's last line is synced. */
  taskSynced(taskId: string): Effect.Effect<void> {
    const last = this.lastLineOf.get(taskId)
    return last === undefined ? Effect.void : this.syncedUpTo(taskId, last)
  }

  private syncedUpTo(taskId: string | undefined, upTo: number): Effect.Effect<void> {
    if (this.failure !== undefined) return Effect.die(this.failure)
    if (this.isSynced(taskId, upTo)) return Effect.void
    return Effect.async<void>((resume) => {
      this.waiters.push({ taskId, upTo, resume })
      this.flushSoon()
    })
  }

  /** Whether every line up to `upTo` is synced, or, for a task, its lines up to `upTo` (all of them once it has no last line left). */
  private isSynced(taskId: string | undefined, upTo: number) {
    if (upTo <= this.synced) return true
    return taskId !== undefined && (!this.lastLineOf.has(taskId) || (this.syncedLineOf.get(taskId) ?? 0) >= upTo)
  }

  /** Later batches go to `fd`; the current file is closed once its batches are durable. */
  switchTo(fd: number) {
    this.retired.push(this.fd)
    this.fd = fd
    this.bytes = 0
    this.closeRetired()
  }

  /** Nothing is written after this: a later write fails (its descriptor may already be another file's). */
  close() {
    this.fail(new Error("the store is closed"))
    if (this.timer !== undefined) clearTimeout(this.timer)
    for (const fd of [...this.retired, this.fd]) Fs.closeSync(fd)
    this.retired.length = 0
  }

  private closeRetired() {
    for (let index = this.retired.length - 1; index >= 0; index--) {
      const fd = this.retired[index]!
      if (!this.inFlight.some((batch) => batch.fd === fd)) {
        this.retired.splice(index, 1)
        Fs.closeSync(fd)
      }
    }
  }

  /** Whether the next batch must wait for a sync to return. */
  private get busy() {
    return this.inFlight.length >= BATCHES_AT_ONCE
  }

  /** A batch in `ms` at the latest, unless one is due sooner. */
  private flushLater(ms: number) {
    if (this.busy || this.immediate || this.timer !== undefined) return
    this.timer = setTimeout(() => this.flushNow(), ms)
    this.timer.unref()
  }

  /** A batch at the next turn of the event loop (or once the batches in flight leave room for it). */
  private flushSoon() {
    if (this.busy || this.immediate) return
    if (this.timer !== undefined) clearTimeout(this.timer)
    this.timer = undefined
    this.immediate = true
    setImmediate(() => this.flushNow())
  }

  /** What comes after a batch was synced: the next one at once when someone waits, else when a held line must go. */
  private next() {
    if (this.waiters.length > 0) this.flushSoon()
    else this.scheduleHeldBack()
  }

  private flushNow() {
    this.timer = undefined
    this.immediate = false
    if (this.busy || this.failure !== undefined) return
    const lines = this.nextBatch()
    if (lines.length === 0) return this.scheduleHeldBack()
    const batch: Batch = { lines, fd: this.fd, syncedThen: this.syncedThen(), synced: false }
    const texts: Array<string> = []
    for (const line of lines) texts.push(line.text())
    this.inFlight.push(batch)
    try {
      this.bytes += writeWhole(batch.fd, texts.join(""))
    } catch (error) {
      return this.fail(error as Error)
    }
    Fs.fdatasync(batch.fd, (error) => error === null ? this.durable(batch) : this.fail(error))
  }

  /** Every line up to which is durable once the lines taken now are: those left pending come after. */
  private syncedThen() {
    let synced = this.appended
    for (const line of this.pendingStates.values()) synced = Math.min(synced, line.first - 1)
    for (const line of this.pending.values()) synced = Math.min(synced, line.first - 1)
    return synced
  }

  /**
   * The lines of the next batch, taken out of pending: all but the task states that may wait (and
   * every line of a task goes together, so that a task's synced line says all its lines are).
   */
  private nextBatch(): Array<PendingLine> {
    const waitedFor = new Set<string | undefined>()
    for (const waiter of this.waiters) waitedFor.add(waiter.taskId)
    for (const line of this.pending.values()) waitedFor.add(line.taskId)
    const all = waitedFor.has(undefined)
    const oldEnough = performance.now() - this.unwaitedLineMs
    const batch: Array<PendingLine> = []
    for (const [key, line] of this.pendingStates) {
      if (all || line.since <= oldEnough || waitedFor.has(line.taskId)) {
        batch.push(line)
        this.pendingStates.delete(key)
      }
    }
    for (const line of this.pending.values()) batch.push(line)
    this.pending.clear()
    return batch
  }

  /** A batch for the lines held back, once the oldest of them may wait no more. */
  private scheduleHeldBack() {
    let oldest = Number.POSITIVE_INFINITY
    for (const lines of [this.pendingStates, this.pending]) for (const line of lines.values()) oldest = Math.min(oldest, line.since)
    if (oldest !== Number.POSITIVE_INFINITY) this.flushLater(Math.max(0, oldest + this.unwaitedLineMs - performance.now()))
  }

  /** A batch's sync returned: it and the batches before it in its file are durable; those at the front are done. */
  private durable(batch: Batch) {
    if (this.failure !== undefined) return
    const at = this.inFlight.indexOf(batch)
    for (let index = 0; index <= at; index++) if (this.inFlight[index]!.fd === batch.fd) this.inFlight[index]!.synced = true
    while (this.inFlight.length > 0 && this.inFlight[0]!.synced) {
      const done = this.inFlight.shift()!
      this.synced = Math.max(this.synced, done.syncedThen)
      this.written(done.lines)
    }
    this.closeRetired()
    this.wake()
    this.afterFlush()
    this.next()
  }

  /** Each task's lines a durable batch holds. */
  private written(lines: ReadonlyArray<PendingLine>) {
    for (const line of lines) {
      const taskId = line.taskId
      if (taskId === undefined) continue
      if (this.lastLineOf.get(taskId) === line.number) {
        this.lastLineOf.delete(taskId)
        this.syncedLineOf.delete(taskId)
      } else if ((this.syncedLineOf.get(taskId) ?? 0) < line.number) {
        this.syncedLineOf.set(taskId, line.number)
      }
    }
  }

  private wake() {
    const waiting = this.waiters
    this.waiters = []
    for (const waiter of waiting) {
      if (this.isSynced(waiter.taskId, waiter.upTo)) waiter.resume(Effect.void)
      else this.waiters.push(waiter)
    }
  }

  /** The disk refused a write: nothing more is acknowledged (every waiting write fails, and every later one). */
  private fail(error: Error) {
    if (this.failure !== undefined) return
    this.failure = new Error(`The task store's journal cannot be written: ${error.message}`)
    const waiting = this.waiters
    this.waiters = []
    for (const waiter of waiting) waiter.resume(Effect.die(this.failure))
  }
}

// ---------------------------------------------------------------------------
// The storage

const ensureDirectory = (dir: string) =>
  Effect.try({
    try: () => {
      Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
    },
    catch: (error) => unavailable(dir, reasonOf(error), "Check the directory's permissions, or choose another with --store file:DIR")
  })

const lockDirectory = (dir: string) =>
  Effect.mapError(scopedFileLock(Path.join(dir, "store")), (error) =>
    error.reason.includes("already being held")
      ? unavailable(
        dir,
        "another relay server agent is using it",
        "Stop the other server, or give this one a store of its own: --store file:ANOTHER_DIR (or --store memory)"
      )
      : unavailable(dir, error.reason, "Check the directory's permissions and its disk"))

/**
 * The file storage in `options.dir`, as the last process left it; scoped: the directory stays
 * locked, and the journal open, until the scope closes (after the last write is synced).
 */
export const make = (options: FileTaskStorageOptions, retention: TaskStorage.Retention = NOBODY_FOLLOWS) =>
  Effect.gen(function*() {
    const dir = Path.resolve(options.dir)
    yield* ensureDirectory(dir)
    yield* lockDirectory(dir)
    const loaded = yield* load(dir)
    const sealer = yield* storeSealer(dir)
    const loadedPushConfigs = yield* openPushConfigs(dir, sealer, loaded.pushConfigs)
    if (loaded.dropped > 0) yield* Effect.logWarning(`Task store ${dir}: ${loaded.dropped} line(s) cut short by a crash were dropped`)
    const maxAge = Duration.decode(options.maxAge ?? DEFAULT_MAX_TASK_AGE)
    let generation = loaded.nextGeneration
    let snapshotBytes = 0
    let compacting = false

    const openJournal = (at: number) => {
      const fd = Fs.openSync(Path.join(dir, fileName("journal", at)), "a", 0o600)
      try {
        syncDirectory(dir)
      } catch (error) {
        Fs.closeSync(fd)
        throw error
      }
      return fd
    }

    const journal: Journal = yield* Effect.try({
      try: () => new Journal(openJournal(generation), options.unwaitedLineMs ?? DEFAULT_UNWAITED_LINE_MS, () => compactWhenLarge()),
      catch: (error) => unavailable(dir, reasonOf(error), "Check the directory's permissions and its disk")
    })
    yield* Effect.addFinalizer(() => Effect.zipRight(Effect.ignore(Effect.sandbox(journal.allSynced)), Effect.sync(() => journal.close())))

    /** A forgotten task's lines not written yet need not be; its drop line goes after any written ones. */
    const dropped = (id: string) => journal.appendDrop(id, () => dropLine(id))

    const memory = yield* TaskStorage.make(
      options,
      {
        isFollowed: retention.isFollowed,
        forgotten: (id) => {
          dropped(id)
          retention.forgotten(id)
        }
      },
      {
        taskWritten: (stored, seq, finishedJson) => journal.appendState(stored.task.id, () => writtenLine(stored, seq, finishedJson)),
        pushConfigsWritten: (taskId, configs) => journal.append(`p:${taskId}`, () => pushConfigsLine(sealer, taskId, configs), taskId)
      }
    )
    for (const entry of loaded.tasks.values()) memory.restore({ ...entry, pushConfigs: loadedPushConfigs.get(entry.id) ?? [] })
    const deliveries = journaledDeliveries(journal, loaded.deliveries.values())

    /** The tasks as they stand, as lines. */
    const snapshotText = () => {
      const lines: Array<string> = []
      for (const entry of memory.entries()) {
        lines.push(taskLine(entry))
        if (entry.pushConfigs.length > 0) lines.push(pushConfigsLine(sealer, entry.id, entry.pushConfigs))
      }
      for (const delivery of deliveries.entries()) lines.push(deliveryLine(delivery))
      return lines.join("")
    }

    /** Writes the snapshot of `at` aside, syncs it, renames it into place, and removes what it replaces. */
    const writeSnapshot = (at: number, text: string) =>
      Effect.tryPromise(async () => {
        const file = Path.join(dir, fileName("snapshot", at))
        const handle = await Fs.promises.open(`${file}.tmp`, "w", 0o600)
        try {
          await handle.writeFile(text, "utf8")
          await handle.datasync()
        } finally {
          await handle.close()
        }
        await Fs.promises.rename(`${file}.tmp`, file)
        syncDirectory(dir)
        snapshotBytes = Buffer.byteLength(text)
        for (const name of await Fs.promises.readdir(dir)) {
          const older = SNAPSHOT.exec(name) ?? JOURNAL.exec(name)
          if (older !== null && Number(older[1]) < at) {
            await Fs.promises.rm(Path.join(dir, name), { force: true })
          }
        }
      })

    const runFork = yield* FiberSet.makeRuntime<never>()

    /** Writes the tasks as they are now as the snapshot of the current generation, in the background. */
    const snapshotNow = () => {
      compacting = true
      // Not interrupted when the store closes: the next process must not find it half done.
      runFork(
        Effect.uninterruptible(writeSnapshot(generation, snapshotText())).pipe(
          Effect.catchAllCause((cause) =>
            Effect.logWarning(`Task store ${dir}: a snapshot could not be written; the journal stays`, cause)
          ),
          Effect.ensuring(Effect.sync(() => {
            compacting = false
          }))
        )
      )
    }

    /** The journal's size at which the next compaction is tried after one could not start. */
    let retryAbove = 0

    /**
     * Starts the next generation: later lines go to its journal, the tasks as they are now to its
     * snapshot. When its journal cannot be opened (no descriptors left, a full or failing disk), the
     * current one goes on, and compaction is tried again once it has grown as much again.
     */
    const compact = () => {
      let next: number
      try {
        next = openJournal(generation + 1)
      } catch (error) {
        retryAbove = journal.bytes + compactAbove()
        runFork(Effect.logWarning(`Task store ${dir}: the next journal could not be opened (${reasonOf(error)}); the current one goes on`))
        return
      }
      generation++
      retryAbove = 0
      journal.switchTo(next)
      snapshotNow()
    }

    const compactAbove = () => Math.max(options.compactAboveBytes ?? DEFAULT_COMPACT_ABOVE_BYTES, snapshotBytes * 2)
    function compactWhenLarge() {
      if (!compacting && journal.bytes > Math.max(compactAbove(), retryAbove)) compact()
    }

    /** Forgets the finished and waiting tasks nobody follows whose last change is older than maxAge. */
    const sweepOld = Effect.flatMap(Clock.currentTimeMillis, (now) =>
      Effect.sync(() => {
        const before = new Date(now - Duration.toMillis(maxAge)).toISOString()
        const old: Array<string> = []
        for (const entry of memory.entries()) {
          if (V1.isSettledState(entry.state) && entry.time < before && !retention.isFollowed(entry.id)) old.push(entry.id)
        }
        for (const id of old) {
          memory.forget(id)
          dropped(id)
          retention.forgotten(id)
        }
      }))

    yield* sweepOld
    // The files replayed fold into this generation's snapshot; the next start reads that alone.
    yield* Effect.sync(snapshotNow)
    yield* Effect.forkScoped(Effect.repeat(Effect.delay(sweepOld, RETENTION_SWEEP_EVERY), Schedule.forever))

    return TaskStorage.TaskStorage.of({
      // A new task is answered once read (a read waits for its line), or with a later, answered write.
      create: (task) => memory.create(task),
      createNow: memory.createNow,
      get: (id) => Effect.zipRight(journal.taskSynced(id), memory.get(id)),
      peek: memory.peek,
      durable: (id) => journal.taskSynced(id),
      // The memory's update made here, at once: an answered write then waits for its line as one effect, not a tap over another.
      update: (id, write, expectedVersion) =>
        Effect.suspend(() => {
          const written = memory.updateNow(id, write, expectedVersion)
          if (written instanceof TaskStorage.TaskVersionConflict) return Effect.fail(written)
          return isAnswered(write) && Option.isSome(written) ? Effect.as(journal.taskSynced(id), written) : Effect.succeed(written)
        }),
      updateNow: memory.updateNow,
      writtenDurable: (id, write) => isAnswered(write) ? journal.taskSynced(id) : undefined,
      list: (query) => Effect.zipRight(journal.allSynced, memory.list(query)),
      // Not waited for: a conversation's tasks are what a turn reads (its model's prompt), not what a client is
      // answered with; an answer that comes of them is durable with its own task.
      contextTasks: memory.contextTasks,
      contextTasksNow: memory.contextTasksNow,
      putPushConfig: (taskId, stored) =>
        Effect.tap(memory.putPushConfig(taskId, stored), (put) => Option.isSome(put) ? journal.allSynced : Effect.void),
      pushConfigs: (taskId) => Effect.zipRight(journal.taskSynced(taskId), memory.pushConfigs(taskId)),
      deliveries,
      removePushConfig: (taskId, configId) =>
        Effect.tap(
          memory.removePushConfig(taskId, configId),
          (removed) => Option.getOrElse(removed, () => false) ? journal.allSynced : Effect.void
        )
    })
  })

/** The pending push deliveries the last process left, and each change to them journaled and synced before it returns. */
const journaledDeliveries = (journal: Journal, restored: Iterable<TaskStorage.PendingDelivery>) =>
  TaskStorage.pendingDeliveries(restored, {
    written: (delivery) => {
      journal.append(`q:${TaskStorage.deliveryKey(delivery)}`, () => deliveryLine(delivery))
      return journal.allSynced
    },
    settled: (delivery) => {
      journal.append(`q:${TaskStorage.deliveryKey(delivery)}`, () => settledLine(delivery))
      return journal.allSynced
    }
  })

/**
 * Whether a client is answered with this write: everything but a turn's progress (working, its
 * artifact's chunks), which streams out to subscribers before its line is synced. A crash loses at
 * most that progress, and the restart ends such a task failed anyway (programs/agent/recovery.ts).
 */
const isAnswered = (write: TaskStorage.TaskWrite) => write.task.status.state !== "TASK_STATE_WORKING" || write.queued !== undefined

const NOBODY_FOLLOWS: TaskStorage.Retention = { isFollowed: () => false, forgotten: () => undefined }

/** The file storage as the TaskStorage of a layer (its tests; the agent server makes it with TaskStore's Retention). */
export const layer = (options: FileTaskStorageOptions) => Layer.scoped(TaskStorage.TaskStorage, make(options))
