/**
 * The per-user state directory shared by every door: sessions, credentials, notifications.
 *
 * RELAY_HOME if set, else $XDG_STATE_HOME/a2a-relay, else ~/.local/state/a2a-relay.
 * Created 0700 because it holds secrets.
 */
import { Path } from "@effect/platform"
import { Config, type ConfigError, Context, Effect, Layer, Option, Ref } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import type { LockOptions } from "proper-lockfile"
import { InvalidEnvironment, StateFileUnavailable } from "../domain/errors.js"

export class StateDir extends Context.Tag("relay/StateDir")<StateDir, {
  /** Absolute path of the directory. */
  readonly path: string
  /** Absolute path of a file inside it. */
  readonly file: (name: string) => string
  /** Creates the directory (0700) on first use; later calls are free. */
  readonly ensure: Effect.Effect<void, StateFileUnavailable>
  /**
   * Runs `effect` holding the inter-process lock on `file` (`<file>.lock`, proper-lockfile),
   * waiting up to ~10 s for another process to release it. It orders processes only: callers
   * order their own fibers.
   */
  readonly withLock: <A, E, R>(file: string, effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E | StateFileUnavailable, R>
}>() {}

/** A variable that could not be read, in the words doors show (Effect's ConfigError says which and why). */
function environmentError(error: ConfigError.ConfigError | InvalidEnvironment): InvalidEnvironment {
  return error instanceof InvalidEnvironment ? error : new InvalidEnvironment({ reason: String(error) })
}

/** The directory relay uses when RELAY_HOME is not set (an MCP client's entry without `env`, say). */
export const defaultStateDir = Effect.gen(function*() {
  const path = yield* Path.Path
  const xdg = yield* Config.option(Config.nonEmptyString("XDG_STATE_HOME"))
  if (Option.isSome(xdg)) return path.join(path.resolve(xdg.value), "a2a-relay")
  const home = yield* Config.string("HOME").pipe(Config.withDefault(Os.homedir()))
  return path.join(home, ".local", "state", "a2a-relay")
}).pipe(Effect.mapError(environmentError))

export const resolveStateDir = Effect.gen(function*() {
  const path = yield* Path.Path
  const relayHome = yield* Config.option(Config.nonEmptyString("RELAY_HOME"))
  return Option.isSome(relayHome) ? path.resolve(relayHome.value) : yield* defaultStateDir
}).pipe(Effect.mapError(environmentError))

/** Makes the directory 0700: mkdir honours the umask, so the mode is set again after. */
const createDirectory = (dir: string) => {
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  Fs.chmodSync(dir, 0o700)
}

/** The directory as it is, created when absent (undefined then). */
const statOrCreate = (dir: string) =>
  Effect.try({
    try: () => {
      const info = Fs.statSync(dir, { throwIfNoEntry: false })
      if (info === undefined) createDirectory(dir)
      return info
    },
    catch: (error) =>
      new StateFileUnavailable({ file: dir, operation: "create", reason: error instanceof Error ? error.message : String(error) })
  })

/**
 * Synchronous, as SessionStore's reads are: the first asynchronous file operation of a process
 * starts libuv's thread pool, which `relay session list` would start for this check alone.
 */
export const ensureDirectory = (dir: string) =>
  Effect.flatMap(statOrCreate(dir), (info) => {
    if (info === undefined) return Effect.void
    if (!info.isDirectory()) return new StateFileUnavailable({ file: dir, operation: "use", reason: "it is not a directory" })
    if ((info.mode & 0o077) === 0) return Effect.void
    return Effect.logWarning(
      `State directory ${dir} is readable by other users (mode ${(info.mode & 0o777).toString(8)}); run "chmod 700 ${dir}"`
    )
  })

// Contention budget: 8 processes hammering one file must all get through, a lock left by a
// killed process goes stale after 2 s (proper-lockfile's minimum), and an OAuth renewal holds the
// store's lock for its token request (openid-client gives up on it after 30 s), so retry for up to ~36 s.
const LOCK_OPTIONS = {
  realpath: false,
  stale: 2_000,
  retries: { retries: 600, factor: 1.3, minTimeout: 5, maxTimeout: 60, randomize: true }
} as const

/**
 * The file system proper-lockfile works the lock with: its callback API over the synchronous
 * calls (as its own lockSync does): taking and dropping the lock were three thread-pool round
 * trips (mkdir, stat, rmdir) in every session update. Waiting for a lock held elsewhere
 * still happens on its timers. One object for the process: proper-lockfile keeps its probe of the
 * file system's mtime precision on it.
 */
const LOCK_FS_METHODS = ["mkdir", "realpath", "stat", "rmdir", "utimes"] as const

/** Each lock seen with a time more than `stale` ahead of this clock: that time, and when (monotonic) it was first seen. */
const seenAhead = new Map<string, { readonly mtimeMs: number; readonly since: number }>()

/**
 * A lock's time as proper-lockfile judges it: one more than `stale` ahead of this clock, and left
 * as it was for `stale` (on a monotonic clock), reads as the epoch, stale. proper-lockfile counts a
 * lock stale only once its time is `stale` behind, so a lock left with a time in the future (the
 * clock set back after a crash) held every relay off until the clock caught up. A lock ahead but
 * refreshed is live: its holder's clock was set back under it, and it refreshes every `stale`/2.
 */
const statForLock = (path: Fs.PathLike): Fs.Stats => {
  const stats = Fs.statSync(path)
  const key = String(path)
  if (stats.mtimeMs <= Date.now() + LOCK_OPTIONS.stale) {
    seenAhead.delete(key)
    return stats
  }
  const seen = seenAhead.get(key)
  if (seen === undefined || seen.mtimeMs !== stats.mtimeMs) seenAhead.set(key, { mtimeMs: stats.mtimeMs, since: performance.now() })
  else if (performance.now() - seen.since >= LOCK_OPTIONS.stale) stats.mtime = new Date(0)
  return stats
}

const lockFs: typeof Fs = (() => {
  const withCallbacks: Record<string, unknown> = { ...Fs }
  for (const method of LOCK_FS_METHODS) {
    const sync = (method === "stat" ? statForLock : Fs[`${method}Sync`]) as (...args: ReadonlyArray<unknown>) => unknown
    withCallbacks[method] = (...args: Array<unknown>) => {
      const callback = args.pop() as (error: unknown, result?: unknown) => void
      let result: unknown
      try {
        result = sync(...args)
      } catch (error) {
        return callback(error)
      }
      callback(null, result)
    }
  }
  return withCallbacks as unknown as typeof Fs
})()

/** Takes the lock on `file`, retrying as `retries` says; gives its release. */
const acquireFileLock = (file: string, retries: LockOptions["retries"]) =>
  Effect.tryPromise({
    try: () =>
      // Loaded on the first lock: reading commands (`session list`) never parse it.
      import("proper-lockfile").then(({ default: lockfile }) =>
        lockfile.lock(file, {
          ...LOCK_OPTIONS,
          retries,
          fs: lockFs,
          lockfilePath: `${file}.lock`,
          onCompromised: (error) => {
            // proper-lockfile's default throws from a timer and would crash the process; this runs
            // outside any fiber, so it writes to stderr itself (stdout may be the MCP channel).
            process.stderr.write(`warning: lock on ${file} compromised: ${error.message}\n`)
          }
        })
      ),
    catch: (error) => new StateFileUnavailable({ file, operation: "lock", reason: error instanceof Error ? error.message : String(error) })
  })

const releaseFileLock = (release: () => Promise<void>) => Effect.promise(() => release().catch(() => undefined))

export const withFileLock = <A, E, R>(file: string, effect: Effect.Effect<A, E, R>) =>
  Effect.acquireUseRelease(acquireFileLock(file, LOCK_OPTIONS.retries), () => effect, releaseFileLock)

/**
 * Holds the lock on `file` for the scope (a process's own store: the agent server's task store).
 * It waits only as long as a killed holder's lock takes to go stale, then fails: a live holder keeps it.
 */
export const scopedFileLock = (file: string) =>
  Effect.acquireRelease(acquireFileLock(file, { retries: 30, factor: 1, minTimeout: 100, maxTimeout: 100 }), releaseFileLock)

/**
 * The real directory, resolved from the environment. Nothing touches the disk until a
 * service calls `ensure`, so `relay --help` works even where the directory cannot be made.
 */
export const make = Effect.gen(function*() {
  const path = yield* Path.Path
  const dir = yield* resolveStateDir
  const ready = yield* Ref.make(false)
  // Only success is remembered: a directory that failed once may be fixed while the MCP server runs.
  const ensure = ensureDirectory(dir).pipe(
    Effect.zipRight(Ref.set(ready, true)),
    Effect.unlessEffect(Ref.get(ready)),
    Effect.asVoid
  )
  return StateDir.of({
    path: dir,
    file: (name) => path.join(dir, name),
    ensure,
    withLock: (file, effect) => Effect.zipRight(ensure, withFileLock(file, effect))
  })
})

export const layer = Layer.effect(StateDir, make)
