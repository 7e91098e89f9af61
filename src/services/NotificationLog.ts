/**
 * NotificationLog: every push notification the webhook receiver accepted, as NDJSON in the
 * state directory, so nothing is lost when the terminal scrolls and other processes can read it.
 *
 * Writers: each line is written whole by one synchronous append (O_APPEND) on the file held open
 * between appends, so lines never interleave. When a line would take the file past the size
 * bound, the file is first renamed to `notifications.ndjson.1` (one older generation is kept,
 * the one before is dropped).
 *
 * Readers take no lock: they read the older generation and the current file, skip a trailing
 * partial line (a write in progress in another process), and follow new lines by polling the
 * file's inode and size, which also notices a rotation.
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Context, Duration, Effect, Layer, Option, Ref, Schedule, Schema, Stream } from "effect"
import * as Fs from "node:fs"
import { StateFileUnavailable } from "../domain/errors.js"
import {
  matchesFilter,
  type NotificationFilter,
  NotificationRecord,
  selectNotifications
} from "../domain/notification.js"
import { StateDir } from "./StateDir.js"

export const NOTIFICATIONS_FILE = "notifications.ndjson"
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
}>() {}

export interface NotificationLogOptions {
  readonly maxFileBytes?: number
  readonly followInterval?: Duration.DurationInput
}

/** Where a follower stopped reading: the file (by inode) and the byte after its last whole line. */
interface Cursor {
  readonly ino: number | undefined
  readonly offset: number
}

/** Whole lines read from a file, and the file they came from. */
interface Chunk {
  readonly ino: number | undefined
  readonly records: ReadonlyArray<NotificationRecord>
  /** Offset just after the last complete line read. */
  readonly end: number
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

/** Keeps the first record of each id: a reader racing a rotation can see one generation twice. */
const dedupe = (records: ReadonlyArray<NotificationRecord>): ReadonlyArray<NotificationRecord> => {
  const seen = new Set<string>()
  return records.filter((record) => {
    if (seen.has(record.id)) return false
    seen.add(record.id)
    return true
  })
}

export const make = (options: NotificationLogOptions = {}) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const stateDir = yield* StateDir
    const file = stateDir.file(NOTIFICATIONS_FILE)
    const olderFile = `${file}.1`
    const maxFileBytes = options.maxFileBytes ?? DEFAULT_MAX_LOG_BYTES
    const followInterval = options.followInterval ?? DEFAULT_FOLLOW_INTERVAL

    const unavailable = (target: string, operation: string) => (error: PlatformError) =>
      new StateFileUnavailable({ file: target, operation, reason: error.message })

    const isNotFound = (error: PlatformError) => error._tag === "SystemError" && error.reason === "NotFound"

    /**
     * Each line is written by one synchronous append (O_APPEND) on a descriptor held open between
     * appends, so lines never interleave, in this process or across processes. Appending a line
     * to a local file takes microseconds; done asynchronously it took thread-pool round trips
     * (stat, open, write, close) that cost the receiver more CPU than the write itself, and even
     * grouped into one append per batch, the batching (a lock, a deferred, a turn of the
     * scheduler) cost more than the writes it saved (measured in bench/webhook.mjs).
     */
    let descriptor: { readonly fd: number; readonly ino: number } | undefined

    const closeDescriptor = () => {
      const closing = descriptor
      descriptor = undefined
      if (closing !== undefined) Fs.closeSync(closing.fd)
    }

    /** Size of the current file (0 when absent); drops the descriptor unless the path still names its file. */
    const currentSize = (): number => {
      const info = Fs.statSync(file, { throwIfNoEntry: false })
      // Rotated or removed meanwhile, by this process or another one.
      if (descriptor !== undefined && info?.ino !== descriptor.ino) closeDescriptor()
      return info?.size ?? 0
    }

    /** Appends one line, first rotating the file when the line would take it past the size bound. */
    const writeLine = (line: string) => {
      const bytes = Buffer.from(line)
      const size = currentSize()
      if (size > 0 && size + bytes.length > maxFileBytes) {
        closeDescriptor()
        Fs.renameSync(file, olderFile)
      }
      if (descriptor === undefined) {
        const fd = Fs.openSync(file, "a", 0o600)
        descriptor = { fd, ino: Fs.fstatSync(fd).ino }
      }
      for (let written = 0; written < bytes.length;) written += Fs.writeSync(descriptor.fd, bytes, written)
    }

    const closeQuietly = () => {
      try {
        closeDescriptor()
      } catch {
        // Already unusable; the next append opens the file again.
      }
    }

    const writeOrFail = (line: string) =>
      Effect.try({
        try: () => writeLine(line),
        catch: (error) => {
          closeQuietly()
          return new StateFileUnavailable({ file, operation: "append to", reason: error instanceof Error ? error.message : String(error) })
        }
      })

    /** Encodes, then ensures the directory and writes: plain code around two effects, as it runs per notification. */
    const append = (record: NotificationRecord) =>
      Effect.suspend(() => {
        let line: string
        try {
          line = `${JSON.stringify(record)}\n`
        } catch (error) {
          return Effect.fail(new StateFileUnavailable({ file, operation: "encode a record for", reason: String(error) }))
        }
        return Effect.zipRight(stateDir.ensure, writeOrFail(line))
      })

    /** Reads whole lines of `path` from `offset`; the inode comes from the open handle, so it names what was read. */
    const readFrom = (path: string, offset: number): Effect.Effect<Option.Option<Chunk>, StateFileUnavailable> =>
      Effect.scoped(Effect.gen(function*() {
        const handle = yield* fs.open(path, { flag: "r" })
        const info = yield* handle.stat
        const ino = Option.getOrUndefined(info.ino)
        const size = Number(info.size)
        // A file shorter than where we stopped was replaced in place: start it over.
        const start = size < offset ? 0 : offset
        const bytes = yield* readRange(handle, start, size - start)
        const { records, consumed } = parseLines(bytes)
        return Option.some<Chunk>({ ino, records, end: start + consumed })
      })).pipe(
        Effect.catchIf(isNotFound, () => Effect.succeed(Option.none<Chunk>())),
        Effect.mapError(unavailable(path, "read"))
      )

    const readRange = (handle: FileSystem.File, start: number, length: number) =>
      Effect.gen(function*() {
        const buffer = new Uint8Array(length)
        let filled = 0
        while (filled < length) {
          yield* handle.seek(start + filled, "start")
          const read = Number(yield* handle.read(buffer.subarray(filled)))
          if (read === 0) break
          filled += read
        }
        return buffer.subarray(0, filled)
      })

    /** Both generations and a cursor at the end of the current file. */
    const snapshot = Effect.gen(function*() {
      // The current file first: if it is rotated meanwhile, the older file is the same one and dedupe drops it.
      const current = yield* readFrom(file, 0)
      const older = yield* readFrom(olderFile, 0)
      const records = dedupe([
        ...Option.match(older, { onNone: () => [], onSome: (chunk) => chunk.records }),
        ...Option.match(current, { onNone: () => [], onSome: (chunk) => chunk.records })
      ])
      const cursor: Cursor = Option.match(current, {
        onNone: () => ({ ino: undefined, offset: 0 }),
        onSome: (chunk) => ({ ino: chunk.ino, offset: chunk.end })
      })
      return { records, cursor }
    })

    /** New records since the cursor, across at most one rotation, and the cursor after them. */
    const poll = (cursor: Cursor): Effect.Effect<readonly [ReadonlyArray<NotificationRecord>, Cursor], StateFileUnavailable> =>
      Effect.gen(function*() {
        const current = yield* readFrom(file, cursor.offset)
        if (Option.isNone(current)) return [[], cursor] as const
        if (cursor.ino === undefined || current.value.ino === cursor.ino) {
          return [current.value.records, { ino: current.value.ino, offset: current.value.end }] as const
        }
        // Rotated: finish the file we were reading (now the older generation), then read the new one whole.
        const rest = yield* readFrom(olderFile, cursor.offset)
        const drained = Option.isSome(rest) && rest.value.ino === cursor.ino ? rest.value.records : []
        const fresh = yield* readFrom(file, 0)
        return Option.match(fresh, {
          onNone: () => [drained, { ino: undefined, offset: 0 }] as const,
          onSome: (chunk) => [[...drained, ...chunk.records], { ino: chunk.ino, offset: chunk.end }] as const
        })
      })

    const read = (filter: NotificationFilter) => Effect.map(snapshot, ({ records }) => selectNotifications(records, filter))

    const follow = (filter: NotificationFilter) =>
      Stream.unwrap(Effect.gen(function*() {
        const { records, cursor } = yield* snapshot
        const position = yield* Ref.make(cursor)
        const newRecords = Stream.repeatEffectWithSchedule(
          Effect.flatMap(Ref.get(position), poll).pipe(
            Effect.flatMap(([found, next]) => Effect.as(Ref.set(position, next), found))
          ),
          Schedule.spaced(followInterval)
        ).pipe(Stream.flattenIterables, Stream.filter(matchesFilter(filter)))
        return Stream.concat(Stream.fromIterable(selectNotifications(records, filter)), newRecords)
      }))

    yield* Effect.addFinalizer(() => Effect.sync(closeQuietly))
    return NotificationLog.of({ file, append, read, follow })
  })

export const layer = (options: NotificationLogOptions = {}) =>
  Layer.scoped(NotificationLog, make(options))

/** The log in the state directory, rotated at 5 MiB. */
