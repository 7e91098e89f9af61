/**
 * SessionStore: one record per agent (ids, last state, credentials), shared live by every door.
 *
 * The file layer re-reads sessions.json on every operation (no cache, so a running MCP server
 * sees what `relay auth set` wrote a moment ago) and performs every mutation as
 * read–modify–write under an inter-process lock, writing a temp file that is fsynced and
 * renamed over the old one, so a crash at any instant leaves either the old or the new file.
 */
import { Clock, Context, Deferred, Duration, Effect, Either, Fiber, Layer, Option, ParseResult, Schema, SynchronizedRef } from "effect"
import * as Fs from "node:fs"
import type { AgentBook } from "../domain/agents.js"
import type { AgentUrl } from "../domain/agentUrl.js"
import { StateFileCorrupt, StateFileTooNew, StateFileUnavailable, type StoreError } from "../domain/errors.js"
import {
  agentBookOf,
  applyPatch,
  emptyStore,
  formatVersionOf,
  newRecord,
  type SavedCredentials,
  type SessionPatch,
  type SessionRecord,
  STORE_FORMAT_VERSION,
  StoreFile,
  withAgentBook
} from "../domain/session.js"
import { StateDir } from "./StateDir.js"

export const SESSIONS_FILE = "sessions.json"

export class SessionStore extends Context.Tag("relay/SessionStore")<SessionStore, {
  readonly get: (agentUrl: AgentUrl) => Effect.Effect<Option.Option<SessionRecord>, StoreError>
  readonly list: Effect.Effect<ReadonlyArray<SessionRecord>, StoreError>
  /** Saves ids and state after a conversation turn, or the card URL; creates the record if needed. */
  readonly update: (agentUrl: AgentUrl, patch: SessionPatch) => Effect.Effect<SessionRecord, StoreError>
  /** Forgets context, task and state of one agent; credentials and the card URL stay. True if anything was cleared. */
  readonly clear: (agentUrl: AgentUrl) => Effect.Effect<boolean, StoreError>
  /** Forgets context, task and state of every agent; credentials and card URLs stay. Returns how many were cleared. */
  readonly clearAll: Effect.Effect<number, StoreError>
  readonly setCredentials: (agentUrl: AgentUrl, credentials: SavedCredentials) => Effect.Effect<SessionRecord, StoreError>
  readonly getCredentials: (agentUrl: AgentUrl) => Effect.Effect<Option.Option<SavedCredentials>, StoreError>
  /** True if credentials existed. */
  readonly clearCredentials: (agentUrl: AgentUrl) => Effect.Effect<boolean, StoreError>
  /** Removes the agent's credentials and returns them: what was saved when they went (logout revokes those). */
  readonly takeCredentials: (agentUrl: AgentUrl) => Effect.Effect<Option.Option<SavedCredentials>, StoreError>
  /**
   * Replaces the agent's credentials with what `next` makes of the saved ones, holding the store's
   * lock from the read to the write: other processes wait, then see the result (OAuth renewal, so
   * one process renews and the others use its tokens). Returning the very credentials given writes nothing.
   */
  readonly updateCredentials: <E, R>(
    agentUrl: AgentUrl,
    next: (saved: Option.Option<SavedCredentials>) => Effect.Effect<SavedCredentials, E, R>
  ) => Effect.Effect<SavedCredentials, E | StoreError, R>
  /** The agents by name and the default one, read afresh like the sessions. */
  readonly agents: Effect.Effect<AgentBook, StoreError>
  /**
   * Changes the names holding the store's lock from the read to the write: `f` sees them as they
   * are and returns its result with the names to keep (the very book given writes nothing).
   */
  readonly updateAgents: <A, E>(f: (book: AgentBook) => Effect.Effect<readonly [A, AgentBook], E>) => Effect.Effect<A, E | StoreError>
}>() {}

/** How a store keeps its file: read a snapshot, or change it atomically (nobody else changes it meanwhile). */
interface Backend {
  readonly read: Effect.Effect<StoreFile, StoreError>
  readonly modify: <A, E = never, R = never>(
    f: (file: StoreFile) => Effect.Effect<readonly [A, StoreFile], E, R>
  ) => Effect.Effect<A, E | StoreError, R>
}

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

const withRecord = (file: StoreFile, key: string, record: SessionRecord | undefined): StoreFile => {
  const sessions = { ...file.sessions }
  if (record === undefined) delete sessions[key]
  else sessions[key] = record
  return { ...file, sessions }
}

/** A record with neither ids, credentials nor a card URL carries nothing worth keeping. */
const isEmpty = (record: SessionRecord) =>
  record.context_id === undefined && record.task_id === undefined &&
  record.last_state === undefined && record.credentials === undefined && record.card_url === undefined

const withoutConversation = (record: SessionRecord, now: string): SessionRecord | undefined => {
  const cleared = applyPatch(record, { context_id: null, task_id: null, last_state: null }, now)
  return isEmpty(cleared) ? undefined : cleared
}

const hasConversation = (record: SessionRecord) =>
  record.context_id !== undefined || record.task_id !== undefined || record.last_state !== undefined

/**
 * Listings in code-unit order of the (canonical) agent URL: the same on every machine, and no
 * localeCompare, whose first call loads ICU's collation (a cost to `relay session list`: bench/README.md).
 */
const byAgentUrl = (a: SessionRecord, b: SessionRecord) => a.agent_url < b.agent_url ? -1 : a.agent_url > b.agent_url ? 1 : 0

const makeStore = (backend: Backend): Context.Tag.Service<SessionStore> => {
  // Keys are canonical AgentUrls, as every earlier relay wrote them, so old files read the same.
  // What is read back is not decoded or branded again: the file is ours, only AgentUrls were
  // written as keys, and a record's agent_url is only shown (listings), never used to reach the agent.
  const lookup = (key: AgentUrl) => Effect.map(backend.read, (file) => Option.fromNullable(file.sessions[key]))

  const change = <A>(
    key: AgentUrl,
    f: (key: AgentUrl, record: SessionRecord | undefined, now: string) => readonly [A, SessionRecord | undefined]
  ) =>
    Effect.flatMap(nowIso, (now) =>
      backend.modify((file) => {
        const before = file.sessions[key]
        const [result, record] = f(key, before, now)
        // Nothing to clear: keep the file as it is, so no write happens.
        return Effect.succeed([result, record === before ? file : withRecord(file, key, record)] as const)
      }))

  const takeCredentials = (agentUrl: AgentUrl) =>
    change(agentUrl, (_key, record, now) => {
      if (record?.credentials === undefined) return [Option.none<SavedCredentials>(), record]
      const { credentials, ...rest } = record
      const next: SessionRecord = { ...rest, updated_at: now }
      return [Option.some(credentials), isEmpty(next) ? undefined : next]
    })

  return SessionStore.of({
    get: lookup,
    list: Effect.map(backend.read, (file) => Object.values(file.sessions).sort(byAgentUrl)),
    update: (agentUrl, patch) =>
      change(agentUrl, (key, record, now) => {
        const next = applyPatch(record ?? newRecord(key, now), patch, now)
        return [next, next]
      }),
    clear: (agentUrl) =>
      change(
        agentUrl,
        (_key, record, now) => record === undefined || !hasConversation(record) ? [false, record] : [true, withoutConversation(record, now)]
      ),
    clearAll: Effect.flatMap(nowIso, (now) =>
      backend.modify((file) => {
        let cleared = 0
        const sessions: Record<string, SessionRecord> = {}
        for (const [key, record] of Object.entries(file.sessions)) {
          if (hasConversation(record)) cleared++
          const kept = withoutConversation(record, now)
          if (kept !== undefined) sessions[key] = kept
        }
        return Effect.succeed([cleared, { ...file, sessions }] as const)
      })),
    setCredentials: (agentUrl, credentials) =>
      change(agentUrl, (key, record, now) => {
        const next: SessionRecord = { ...(record ?? newRecord(key, now)), credentials, updated_at: now }
        return [next, next]
      }),
    getCredentials: (agentUrl) => Effect.map(lookup(agentUrl), Option.flatMap((record) => Option.fromNullable(record.credentials))),
    clearCredentials: (agentUrl) => Effect.map(takeCredentials(agentUrl), Option.isSome),
    takeCredentials,
    updateCredentials: (agentUrl, next) =>
      backend.modify((file) => {
        const record = file.sessions[agentUrl]
        return Effect.flatMap(next(Option.fromNullable(record?.credentials)), (credentials) =>
          credentials === record?.credentials
            ? Effect.succeed([credentials, file] as const)
            : Effect.map(
              nowIso,
              (now) =>
                [
                  credentials,
                  withRecord(file, agentUrl, { ...(record ?? newRecord(agentUrl, now)), credentials, updated_at: now })
                ] as const
            ))
      }),
    agents: Effect.map(backend.read, agentBookOf),
    updateAgents: (f) =>
      backend.modify((file) => {
        const book = agentBookOf(file)
        return Effect.map(f(book), ([result, after]) => [result, after === book ? file : withAgentBook(file, after)] as const)
      })
  })
}

// ---------------------------------------------------------------------------
// File backend

const decodeStoreFile = Schema.decodeUnknownEither(Schema.parseJson(StoreFile))
const encodeStoreFile = Schema.encodeSync(Schema.parseJson(StoreFile, { space: 2 }))

/** Reads the file's format version without trusting the rest, to tell "newer" from "damaged". */
const declaredVersion = (text: string): number | undefined => {
  try {
    const parsed: unknown = JSON.parse(text)
    if (typeof parsed === "object" && parsed !== null && "version" in parsed && typeof parsed.version === "number") {
      return parsed.version
    }
  } catch {
    // not JSON at all: reported as damaged below
  }
  return undefined
}

/** The first thing wrong with a store's content, in words: "field `sessions` missing", not the schema's type. */
const contentProblem = (error: ParseResult.ParseError) => {
  const [first] = ParseResult.ArrayFormatter.formatErrorSync(error)
  if (first === undefined) return "invalid content"
  const field = first.path.length === 0 ? "the top level" : `field \`${first.path.join(".")}\``
  if (first._tag === "Missing") return `${field} missing`
  const message = first.message.length > 120 ? `${first.message.slice(0, 120)}…` : first.message
  return `${field}: ${message}`
}

/**
 * Why a damaged store cannot be used. Only damaged files get here, so the JSON parser that names the
 * line and column loads then, not with every command.
 */
const damage = (text: string, error: ParseResult.ParseError): Effect.Effect<string> => {
  try {
    JSON.parse(text)
    return Effect.succeed(contentProblem(error))
  } catch {
    return Effect.promise(() => import("../domain/jsonProblems.js")).pipe(Effect.map(({ parseJsonText }) => {
      const parsed = parseJsonText(text, { comments: false, trailingCommas: false })
      return "problem" in parsed ? `not valid JSON: ${parsed.problem}` : "not valid JSON"
    }))
  }
}

/** Why the text is not a store this relay can use, or undefined when it is; reads only (relay doctor). */
export const storeFileProblem = (text: string): Effect.Effect<string | undefined> => {
  const decoded = decodeStoreFile(text)
  if (Either.isRight(decoded)) return Effect.succeed(undefined)
  const version = declaredVersion(text)
  if (version !== undefined && version > STORE_FORMAT_VERSION) {
    return Effect.succeed(`format version ${version} is newer than this relay`)
  }
  return damage(text, decoded.left)
}

/**
 * The file is small and local: opening, reading, writing into the page cache and renaming take
 * microseconds done synchronously, while each asynchronous call is a thread-pool round trip that
 * cost more than the work (an update and a read through @effect/platform's FileSystem against this
 * way: bench/README.md). Only the flushes to disk, whose time depends on the disk, leave the event loop.
 */
const readIfPresent = (file: string): Option.Option<string> => {
  let fd: number
  try {
    fd = Fs.openSync(file, "r")
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return Option.none()
    throw error
  }
  try {
    if ((Fs.fstatSync(fd).mode & 0o077) !== 0) Fs.fchmodSync(fd, 0o600)
    return Option.some(Fs.readFileSync(fd, "utf8"))
  } finally {
    Fs.closeSync(fd)
  }
}

const writeAll = (fd: number, bytes: Buffer) => {
  for (let written = 0; written < bytes.length;) written += Fs.writeSync(fd, bytes, written)
}

/** fsync on the thread pool: the one step whose time depends on the disk. */
const flushToDisk = (fd: number) =>
  Effect.async<void, NodeJS.ErrnoException>((resume) => Fs.fsync(fd, (error) => resume(error === null ? Effect.void : Effect.fail(error))))

/** Opens a descriptor, uses it, and closes it whatever happened. */
const withDescriptor = <A, E>(open: () => number, use: (fd: number) => Effect.Effect<A, E>) =>
  Effect.acquireUseRelease(Effect.try(open), use, (fd) => Effect.sync(() => Fs.closeSync(fd)).pipe(Effect.ignore))

const makeFileBackend = Effect.gen(function*() {
  const stateDir = yield* StateDir
  const file = stateDir.file(SESSIONS_FILE)
  const tempFile = `${file}.tmp`
  // One writer at a time inside this process; the lock file orders processes.
  const mutex = yield* Effect.makeSemaphore(1)

  const failed = (operation: string) => (error: unknown) =>
    new StateFileUnavailable({ file, operation, reason: error instanceof Error ? error.message : String(error) })

  const readText = Effect.zipRight(stateDir.ensure, Effect.try({ try: () => readIfPresent(file), catch: failed("read") }))

  const quarantine = (reason: string) =>
    Effect.gen(function*() {
      const stamp = new Date(yield* Clock.currentTimeMillis).toISOString().replace(/[:.]/g, "-")
      const movedTo = `${file}.corrupt-${stamp}`
      yield* Effect.try({ try: () => Fs.renameSync(file, movedTo), catch: failed("move aside") })
      yield* Effect.logWarning(`Moved damaged session store to ${movedTo}`)
      return yield* new StateFileCorrupt({ file, movedTo, reason })
    })

  // The file is still read every time; only decoding the very text decoded last time is skipped
  // (a send_message reads it three times, mostly unchanged). The decoded store is never mutated.
  let lastDecoded: { readonly text: string; readonly file: StoreFile } | undefined

  /** Decodes the file; a damaged one is moved aside (only while holding the lock). */
  const parse = (text: string, holdingLock: boolean): Effect.Effect<StoreFile, StoreError> => {
    if (lastDecoded?.text === text) return Effect.succeed(lastDecoded.file)
    const decoded = decodeStoreFile(text)
    if (Either.isRight(decoded)) {
      lastDecoded = { text, file: decoded.right }
      return Effect.succeed(decoded.right)
    }
    const version = declaredVersion(text)
    if (version !== undefined && version > STORE_FORMAT_VERSION) return new StateFileTooNew({ file, version })
    return holdingLock ? Effect.flatMap(damage(text, decoded.left), quarantine) : withLock(readLocked)
  }

  const readLocked: Effect.Effect<StoreFile, StoreError> = Effect.flatMap(
    readText,
    Option.match({
      onNone: () => Effect.succeed(emptyStore()),
      onSome: (text) => parse(text, true)
    })
  )

  const writeAtomically = (content: StoreFile) => {
    const bytes = Buffer.from(encodeStoreFile({ ...content, version: formatVersionOf(content) }) + "\n")
    return withDescriptor(
      () => {
        // A temp file left behind keeps its mode (open's mode applies only to a new file) and may be
        // a link elsewhere: the secrets go into a file made afresh (O_EXCL follows no link).
        Fs.rmSync(tempFile, { force: true })
        return Fs.openSync(tempFile, "wx", 0o600)
      },
      (fd) => Effect.zipRight(Effect.try(() => writeAll(fd, bytes)), flushToDisk(fd))
    ).pipe(
      Effect.zipRight(Effect.try(() => Fs.renameSync(tempFile, file))),
      Effect.zipRight(syncDirectory),
      Effect.mapError(failed("write"))
    )
  }

  // The rename is durable only once the directory entry is flushed too.
  const syncDirectory = Effect.ignore(withDescriptor(() => Fs.openSync(stateDir.path, "r"), flushToDisk))

  function withLock<A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E | StoreError, R> {
    return mutex.withPermits(1)(stateDir.withLock(file, effect))
  }

  return {
    read: Effect.flatMap(
      readText,
      Option.match({
        onNone: () => Effect.succeed(emptyStore()),
        onSome: (text) => parse(text, false)
      })
    ),
    modify: <A, E, R>(f: (content: StoreFile) => Effect.Effect<readonly [A, StoreFile], E, R>) =>
      withLock(Effect.gen(function*() {
        const before = yield* readLocked
        const [result, after] = yield* f(before)
        if (after !== before) yield* writeAtomically(after)
        return result
      }))
  } satisfies Backend
})

/** The shared, file-backed store in the state directory. */
/** The store over sessions.json in the state directory. */
export const make = Effect.map(makeFileBackend, makeStore)

export const layer = Layer.effect(SessionStore, make)

/** An in-memory store for tests and throw-away runs. */
export const layerMemory = Layer.effect(
  SessionStore,
  Effect.gen(function*() {
    const ref = yield* SynchronizedRef.make(emptyStore())
    return makeStore({ read: SynchronizedRef.get(ref), modify: (f) => SynchronizedRef.modifyEffect(ref, f) })
  })
)

// ---------------------------------------------------------------------------
// Writing behind a conversation

/**
 * How long the first write of a turn waits for a newer patch. Each write is a locked, synced file
 * update (bench/README.md), and most answers of quick agents come within this: their turn is then
 * written once, when it is answered, instead of twice. Durability is not traded: the turn's outcome
 * is written, and waited for, before the conversation returns (nothing is acknowledged earlier), and
 * one ending any other way (failed, cut short by its wait, interrupted) writes what it saw at once.
 * The early write only lets other doors see a running task sooner and keeps its id should this
 * process die during a long wait; for that, 100 ms later costs nothing.
 */
export const EARLY_WRITE_DELAY = Duration.millis(100)

/** Writes one agent's session while a conversation runs, without making it wait for the disk. */
export interface SessionWriter {
  /**
   * Saves `patch` on the writer's own fiber, unless it is the patch seen last. Writes run one after
   * another and are never cut short; only the latest patch not yet written is kept for the next one
   * (an older one is superseded), and the first waits EARLY_WRITE_DELAY for a newer one. A failed
   * background write is not reported: the last patch is.
   */
  readonly inBackground: (patch: SessionPatch) => Effect.Effect<void>
  /** Saves `patch` last: what is pending is dropped, the write under way awaited, and this write's failure reported. */
  readonly last: (patch: SessionPatch) => Effect.Effect<void, StoreError>
  /** Writes at once what is pending and waits for every write: a conversation ends with it, however it ends. */
  readonly written: Effect.Effect<void>
}

/** A SessionWriter for the agent at `agentUrl`, writing through the SessionStore in context. */
export const writeBehind = (agentUrl: AgentUrl): Effect.Effect<SessionWriter, never, SessionStore> =>
  Effect.flatMap(SessionStore, (store) =>
    Effect.map(Deferred.make<void>(), (ending) => {
      const keyOf = (patch: SessionPatch) => JSON.stringify([patch.card_url, patch.context_id, patch.task_id, patch.last_state])
      let lastSeen: string | undefined
      let lastWritten: string | undefined
      let pending: SessionPatch | undefined
      let draining = false
      let writer: Fiber.Fiber<void> | undefined
      const write = (patch: SessionPatch) => Effect.map(store.update(agentUrl, patch), () => void (lastWritten = keyOf(patch)))
      // Synchronous check and take: a patch arriving meanwhile finds either a writer that will
      // take it or none, and then starts one.
      const drain: Effect.Effect<void> = Effect.suspend(() => {
        const next = pending
        pending = undefined
        if (next === undefined) {
          draining = false
          return Effect.void
        }
        return Effect.zipRight(Effect.ignore(write(next)), drain)
      })
      const awaitWriter = Effect.suspend(() => (writer === undefined ? Effect.void : Effect.asVoid(Fiber.await(writer))))
      const written = Effect.zipRight(Deferred.succeed(ending, undefined), awaitWriter)
      return {
        inBackground: (patch) =>
          Effect.suspend(() => {
            if (keyOf(patch) === lastSeen) return Effect.void
            const first = lastSeen === undefined
            lastSeen = keyOf(patch)
            pending = patch
            if (draining) return Effect.void
            draining = true
            const pause = first ? Effect.race(Effect.sleep(EARLY_WRITE_DELAY), Deferred.await(ending)) : Effect.void
            return Effect.map(Effect.forkDaemon(Effect.zipRight(pause, drain)), (fiber) => void (writer = fiber))
          }),
        last: (patch) =>
          Effect.suspend(() => {
            pending = undefined
            return Effect.zipRight(written, Effect.suspend(() => (keyOf(patch) === lastWritten ? Effect.void : write(patch))))
          }),
        written
      } satisfies SessionWriter
    }))
