/**
 * NotificationLog: every push notification the webhook receiver accepted, as NDJSON in the
 * state directory, so nothing is lost when the terminal scrolls and other processes can read it.
 *
 * Writers (one process, or several `relay server push` sharing the state directory) take no lock
 * per notification: each line is written whole by one write on a descriptor opened with O_APPEND,
 * so lines never interleave. A write the disk cuts short is undone back to the last whole line and
 * fails, so the sender is not told it was recorded. When a line would take the file past the size
 * bound, the file is renamed to `notifications.ndjson.1` (one older generation is kept, the one
 * before is dropped) under the state directory's inter-process lock.
 *
 * Readers take no lock: they hold both generations open, read whole lines only (a trailing
 * partial line is a write in progress), and a follower keeps reading the older generation after a
 * rotation, for the lines of writers that checked the file just before it was renamed.
 *
 * The bytes of pushed files are kept beside the log, in `notifications-files/`, each under its
 * sha256 (content-addressed: no name an agent chose ever reaches a path), written to a temporary
 * name and renamed, so a file is whole or absent. Every saved byte came in a body the log keeps as
 * base64, and each rotation keeps only the newest files up to the log's bound: the folder stays
 * within about twice that bound.
 */
import { Context, Duration, Effect, Layer, Option, Schedule, Schema, Stream } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { StateFileUnavailable } from "../domain/errors.js"
import { matchesFilter, type NotificationFilter, NotificationRecord, selectNotifications } from "../domain/notification.js"
import { StateDir } from "./StateDir.js"

export const NOTIFICATIONS_FILE = "notifications.ndjson"
/** The folder beside the log holding the bytes of pushed files, each named by its sha256. */
export const NOTIFICATION_FILES_DIR = "notifications-files"
/** The current file is rotated before it grows past this. */
export const DEFAULT_MAX_LOG_BYTES = 5 * 1024 * 1024
export const DEFAULT_FOLLOW_INTERVAL = Duration.millis(250)

export class NotificationLog extends Context.Tag("relay/NotificationLog")<NotificationLog, {
  /** Absolute path of the current log file. */
  readonly file: string
  /** Appends one record as one line; safe with concurrent callers. */
  readonly append: (record: NotificationRecord) => Effect.Effect<void, StateFileUnavailable>
  /** Both generations, oldest first, filtered (`limit` keeps the newest N). */
  readonly read: (filter: NotificationFilter) => Effect.Effect<ReadonlyArray<NotificationRecord>, StateFileUnavailable>
  /**
   * The records `read` would give, then every matching record appended later, as it arrives.
   * Never ends on its own; interrupt it to stop.
   */
  readonly follow: (filter: NotificationFilter) => Stream.Stream<NotificationRecord, StateFileUnavailable>
  /**
   * Keeps a pushed file's bytes as `notifications-files/<sha256>` (once: the same content is one
   * file) and returns that path. `sha256` is the hex digest of `bytes`; bytes past the log's bound are refused.
   */
  readonly saveFile: (sha256: string, bytes: Uint8Array) => Effect.Effect<string, StateFileUnavailable>
}>() {}

export interface NotificationLogOptions {
  readonly maxFileBytes?: number
  readonly followInterval?: Duration.DurationInput
  /**
   * How a line reaches the file: one write, returning how many bytes it took (node's writeSync by
   * default). Tests that cannot mount a small file system give a disk that fills up mid-line here.
   */
  readonly write?: (fd: number, bytes: Buffer) => number
}

const NEWLINE = 0x0a
const decodeRecord = Schema.decodeUnknownOption(NotificationRecord)
const utf8 = new TextDecoder()

/** Complete lines only: bytes after the last newline belong to a write still in progress. */
const parseLines = (bytes: Uint8Array): { readonly records: Array<NotificationRecord>; readonly consumed: number } => {
  const lastNewline = bytes.lastIndexOf(NEWLINE)
  if (lastNewline === -1) return { records: [], consumed: 0 }
  const records: Array<NotificationRecord> = []
  for (const line of utf8.decode(bytes.subarray(0, lastNewline)).split("\n")) {
    const record = parseLine(line)
    if (record !== undefined) records.push(record)
  }
  return { records, consumed: lastNewline + 1 }
}

const parseLine = (line: string): NotificationRecord | undefined => {
  if (line.trim() === "") return undefined
  try {
    return Option.getOrUndefined(decodeRecord(JSON.parse(line)))
  } catch {
    // A damaged line (a crash mid-write long ago) must not hide the others.
    return undefined
  }
}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

// ---------------------------------------------------------------------------
// Reading: generations held open

/** A generation of the log a reader holds open, and the byte after the last whole line it read. */
interface Tail {
  readonly fd: number
  readonly ino: number
  offset: number
}

/** The file at `path` opened for reading, or undefined when there is none. */
const openTail = (path: string): Tail | undefined => {
  let fd: number
  try {
    fd = Fs.openSync(path, "r")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined
    throw error
  }
  try {
    return { fd, ino: Fs.fstatSync(fd).ino, offset: 0 }
  } catch (error) {
    Fs.closeSync(fd)
    throw error
  }
}

const closeTail = (tail: Tail | undefined) => {
  if (tail !== undefined) Fs.closeSync(tail.fd)
}

/** The whole lines added to the tail's file since it was last read; the tail moves past them. */
const readNew = (tail: Tail | undefined): ReadonlyArray<NotificationRecord> => {
  if (tail === undefined) return []
  const size = Fs.fstatSync(tail.fd).size
  // Shorter than where we stopped: emptied in place (by hand), so it is read again from its start.
  if (size < tail.offset) tail.offset = 0
  const bytes = Buffer.allocUnsafe(size - tail.offset)
  let filled = 0
  while (filled < bytes.length) {
    const read = Fs.readSync(tail.fd, bytes, filled, bytes.length - filled, tail.offset + filled)
    if (read === 0) break
    filled += read
  }
  const { records, consumed } = parseLines(bytes.subarray(0, filled))
  tail.offset += consumed
  return records
}

/** What a reader holds: the older generation and the current file, each open so a rotation cannot take it away. */
interface Generations {
  previous: Tail | undefined
  current: Tail | undefined
}

const closeGenerations = (held: Generations) => {
  closeTail(held.previous)
  closeTail(held.current)
}

// ---------------------------------------------------------------------------
// Writing: the end of the file after a failed write

/** Where the last whole line of the file ends (0 when it has none); the file's size if it cannot tell. */
const lastLineEnd = (fd: number, size: number): number => {
  const chunk = Buffer.allocUnsafe(64 * 1024)
  for (let end = size; end > 0;) {
    const start = Math.max(0, end - chunk.length)
    const read = Fs.readSync(fd, chunk, 0, end - start, start)
    if (read !== end - start) return size
    const newline = chunk.subarray(0, read).lastIndexOf(NEWLINE)
    if (newline !== -1) return start + newline + 1
    end = start
  }
  return 0
}

/**
 * Undoes what a failed write left: the file is cut back to the end of its last whole line, so the
 * part of a line a full disk took cannot glue itself to the next line written once there is room.
 * The kernel orders writes and truncations of one file, and every other writer writes a whole line
 * at once, so the cut can only take a line another process appended in the instant between the
 * failure and the cut, and only if space was freed in that instant.
 */
const cutToLastWholeLine = (fd: number) => {
  const size = Fs.fstatSync(fd).size
  const end = lastLineEnd(fd, size)
  if (end < size) Fs.ftruncateSync(fd, end)
}

/**
 * Ends a line a crash left cut short (the file's last byte no newline), before this process's first
 * line: the fragment alone then fails to parse and is skipped, and the next line stands whole instead
 * of gluing onto it. Not cut off: another receiver may be writing that line this instant (an append
 * waits for its write; at worst an empty line, which readers skip).
 */
const endTornLine = (fd: number, write: (fd: number, bytes: Buffer) => number) => {
  const size = Fs.fstatSync(fd).size
  if (size === 0) return
  const last = Buffer.alloc(1)
  if (Fs.readSync(fd, last, 0, 1, size - 1) === 1 && last[0] !== NEWLINE) write(fd, Buffer.from("\n"))
}

/** Errors of a disk (or quota, or file size limit) with no room left: a line may have been cut short. */
const NO_ROOM = new Set(["ENOSPC", "EDQUOT", "EFBIG"])

const writeWithNode = (fd: number, bytes: Buffer) => Fs.writeSync(fd, bytes)

// ---------------------------------------------------------------------------
// Files beside the log

const SHA256_HEX = /^[0-9a-f]{64}$/
const TEMPORARY = ".tmp"
/** A temporary file younger than this may still be written by another receiver: pruning leaves it. */
const TEMPORARY_GRACE_MS = 60_000
let temporaries = 0

/** Whether the folder already holds this content whole; it is touched, since pruning keeps the newest. */
const alreadySaved = (path: string, size: number): boolean => {
  const info = Fs.lstatSync(path, { throwIfNoEntry: false })
  if (info === undefined || !info.isFile() || info.size !== size) return false
  const now = new Date()
  Fs.utimesSync(path, now, now)
  return true
}

/** Written under a temporary name, then renamed: the path never names a partial file. */
const writeFileWhole = (path: string, bytes: Uint8Array) => {
  const temporary = `${path}.${process.pid}-${++temporaries}${TEMPORARY}`
  try {
    Fs.writeFileSync(temporary, bytes, { flag: "wx", mode: 0o600 })
    Fs.renameSync(temporary, path)
  } catch (error) {
    Fs.rmSync(temporary, { force: true })
    throw error
  }
}

/** Deletes all but the newest files whose sizes add up to at most `keepBytes` (and temporaries still being written). */
const pruneFiles = (dir: string, keepBytes: number) => {
  const names = Fs.readdirSync(dir)
  const now = Date.now()
  const files = names.flatMap((name) => {
    const info = Fs.lstatSync(Path.join(dir, name), { throwIfNoEntry: false })
    if (info === undefined || !info.isFile()) return []
    if (name.endsWith(TEMPORARY) && now - info.mtimeMs < TEMPORARY_GRACE_MS) return []
    return [{ name, size: info.size, mtimeMs: info.mtimeMs }]
  }).sort((a, b) => b.mtimeMs - a.mtimeMs)
  let kept = 0
  for (const file of files) {
    kept += file.size
    if (kept > keepBytes) Fs.rmSync(Path.join(dir, file.name), { force: true })
  }
}

export const make = (options: NotificationLogOptions = {}) =>
  Effect.gen(function*() {
    const stateDir = yield* StateDir
    const file = stateDir.file(NOTIFICATIONS_FILE)
    const olderFile = `${file}.1`
    const filesDir = stateDir.file(NOTIFICATION_FILES_DIR)
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_LOG_BYTES
    const followInterval = options.followInterval ?? DEFAULT_FOLLOW_INTERVAL
    const write = options.write ?? writeWithNode

    const failure = (operation: string) => (error: unknown) => new StateFileUnavailable({ file, operation, reason: reasonOf(error) })

    /**
     * Each line is written by one synchronous write (O_APPEND) on a descriptor held open between
     * appends. Appending a line to a local file takes microseconds; done asynchronously it took
     * thread-pool round trips (stat, open, write, close) that cost the receiver more CPU than the
     * write itself, and even grouped into one append per batch, the batching (a lock, a deferred, a
     * turn of the scheduler) cost more than the writes it saved (measured in bench/webhook.mjs).
     */
    let descriptor: { readonly fd: number; readonly ino: number } | undefined

    const closeDescriptor = () => {
      const closing = descriptor
      descriptor = undefined
      if (closing !== undefined) Fs.closeSync(closing.fd)
    }

    const closeQuietly = () => {
      try {
        closeDescriptor()
      } catch {
        // Already unusable; the next append opens the file again.
      }
    }

    /** Size of the current file (0 when absent); drops the descriptor unless the path still names its file. */
    const currentSize = (): number => {
      const info = Fs.statSync(file, { throwIfNoEntry: false })
      // Rotated or removed meanwhile, by this process or another one.
      if (descriptor !== undefined && info?.ino !== descriptor.ino) closeDescriptor()
      return info?.size ?? 0
    }

    const overBound = (size: number, length: number) => size > 0 && size + length > maxFileBytes

    /** The whole line in one write, or none of it: a write cut short is undone, and fails. */
    const writeWhole = (bytes: Buffer) => {
      if (descriptor === undefined) {
        // Read as well as appended to: a failed write is undone by finding the last whole line.
        const fd = Fs.openSync(file, "a+", 0o600)
        try {
          endTornLine(fd, write)
        } catch (error) {
          Fs.closeSync(fd)
          throw error
        }
        descriptor = { fd, ino: Fs.fstatSync(fd).ino }
      }
      const fd = descriptor.fd
      let written: number
      try {
        written = write(fd, bytes)
      } catch (error) {
        // Another writer's line may have been cut short just before (and that writer gone).
        if (NO_ROOM.has((error as NodeJS.ErrnoException).code ?? "")) cutQuietly(fd)
        throw error
      }
      if (written < bytes.length) {
        cutQuietly(fd)
        throw new Error(`the disk took only ${written} of the line's ${bytes.length} bytes (is it full?)`)
      }
    }

    const cutQuietly = (fd: number) => {
      try {
        cutToLastWholeLine(fd)
      } catch {
        // The write's own error is the one to report.
      }
    }

    const writeOrFail = (bytes: Buffer) =>
      Effect.try({
        try: () => writeWhole(bytes),
        catch: (error) => {
          closeQuietly()
          return failure("append to")(error)
        }
      })

    /**
     * Two receivers may share the log (two `relay server push` on one state directory, say a new
     * one started before the old one stops). They are not refused: both keep working, and only the
     * rotation is ordered between them, by the inter-process lock, which each takes once per
     * 5 MiB rather than once per notification. Under the lock the size is checked again, since
     * another fiber or process may have rotated meanwhile: renaming its fresh file over `.1`
     * would drop a whole generation before a follower read it.
     */
    const rotation = yield* Effect.makeSemaphore(1)
    const rotate = (length: number) =>
      rotation.withPermits(1)(stateDir.withLock(
        file,
        Effect.try({
          try: () => {
            if (!overBound(currentSize(), length)) return
            closeDescriptor()
            Fs.renameSync(file, olderFile)
            pruneQuietly()
          },
          catch: failure("rotate")
        })
      )).pipe(
        // Never a reason to refuse a notification: the file grows past its bound until the next rotation.
        Effect.catchAll((error) => Effect.logWarning(`${error.message}; appending without rotating`))
      )

    /** Writes the line at once unless it would take the file past its bound: then rotates first. */
    const appendLine = (bytes: Buffer, mayRotate: boolean): Effect.Effect<void, StateFileUnavailable> => {
      let size: number
      try {
        size = currentSize()
      } catch (error) {
        return Effect.fail(failure("append to")(error))
      }
      if (mayRotate && overBound(size, bytes.length)) {
        return Effect.zipRight(rotate(bytes.length), Effect.suspend(() => appendLine(bytes, false)))
      }
      return writeOrFail(bytes)
    }

    /** Encodes, then ensures the directory and writes: plain code around two effects, as it runs per notification. */
    const append = (record: NotificationRecord) =>
      Effect.suspend(() => {
        let bytes: Buffer
        try {
          bytes = Buffer.from(`${JSON.stringify(record)}\n`)
        } catch (error) {
          return Effect.fail(new StateFileUnavailable({ file, operation: "encode a record for", reason: String(error) }))
        }
        return Effect.zipRight(stateDir.ensure, Effect.suspend(() => appendLine(bytes, true)))
      })

    /**
     * At each rotation only the newest files within the log's bound stay: the generation kept names
     * at most that many bytes of files (as base64, in its bodies), and its files are the newest.
     */
    const pruneQuietly = () => {
      try {
        if (Fs.existsSync(filesDir)) pruneFiles(filesDir, maxFileBytes)
      } catch {
        // Files left over are pruned at the next rotation; never a reason to refuse a notification.
      }
    }

    const saveFile = (sha256: string, bytes: Uint8Array) =>
      Effect.zipRight(
        stateDir.ensure,
        Effect.try({
          try: () => {
            if (!SHA256_HEX.test(sha256)) throw new Error(`"${sha256.slice(0, 80)}" is not a sha256 in hex`)
            if (bytes.length > maxFileBytes) throw new Error(`its ${bytes.length} bytes are more than the ${maxFileBytes} the log keeps`)
            const path = Path.join(filesDir, sha256)
            Fs.mkdirSync(filesDir, { recursive: true, mode: 0o700 })
            if (!alreadySaved(path, bytes.length)) writeFileWhole(path, bytes)
            return path
          },
          catch: (error) => new StateFileUnavailable({ file: filesDir, operation: "save a pushed file in", reason: reasonOf(error) })
        })
      )

    const reading = <A>(step: () => A) => Effect.try({ try: step, catch: failure("read") })

    /**
     * Both generations, the current file opened first: if it is rotated in between, `.1` is that
     * same file and is left out (the follower's first poll then sees the rotation).
     */
    const openGenerations = (): Generations => {
      const current = openTail(file)
      const older = openTail(olderFile)
      if (older !== undefined && older.ino === current?.ino) {
        closeTail(older)
        return { previous: undefined, current }
      }
      return { previous: older, current }
    }

    const readBoth = (held: Generations) => [...readNew(held.previous), ...readNew(held.current)]

    /**
     * New whole lines since the last poll, oldest first. The held files are read first: the current
     * one to its end, the older one for the lines of writers that checked the path just before a
     * rotation. Then, if the path names another file, the log rotated: the new file is read whole,
     * after the generation in between when it rotated twice (a third rotation between two polls,
     * 10 MiB later, would drop a generation unread).
     */
    const poll = (held: Generations): ReadonlyArray<NotificationRecord> => {
      const pathIno = Fs.statSync(file, { throwIfNoEntry: false })?.ino
      const records = readBoth(held)
      if (pathIno === held.current?.ino) return records
      const next = openTail(file)
      const older = openTail(olderFile)
      const known = [held.previous?.ino, held.current?.ino, next?.ino]
      const between = older !== undefined && !known.includes(older.ino) ? older : undefined
      if (between === undefined) closeTail(older)
      const rotated = [...records, ...readNew(between), ...readNew(next)]
      if (between !== undefined) {
        closeGenerations(held)
        held.previous = between
      } else if (held.current !== undefined) {
        closeTail(held.previous)
        held.previous = held.current
      }
      held.current = next
      return rotated
    }

    const read = (filter: NotificationFilter) =>
      Effect.acquireUseRelease(
        reading(openGenerations),
        (held) => reading(() => selectNotifications(readBoth(held), filter)),
        (held) => Effect.sync(() => closeGenerations(held))
      )

    const follow = (filter: NotificationFilter) =>
      Stream.unwrapScoped(Effect.gen(function*() {
        const held = yield* Effect.acquireRelease(reading(openGenerations), (held) => Effect.sync(() => closeGenerations(held)))
        const backlog = yield* reading(() => readBoth(held))
        const newRecords = Stream.repeatEffectWithSchedule(reading(() => poll(held)), Schedule.spaced(followInterval)).pipe(
          Stream.flattenIterables,
          Stream.filter(matchesFilter(filter))
        )
        return Stream.concat(Stream.fromIterable(selectNotifications(backlog, filter)), newRecords)
      }))

    yield* Effect.addFinalizer(() => Effect.sync(closeQuietly))
    return NotificationLog.of({ file, append, read, follow, saveFile })
  })

/** The log in the state directory, rotated at 5 MiB. */
export const layer = (options: NotificationLogOptions = {}) => Layer.scoped(NotificationLog, make(options))
