/**
 * Reading files the user names (a card to validate, a file to send): only regular files, and only
 * what the door's ReadPermission allows. Judged on what was opened, not on what the path named a
 * moment before: the file is opened without blocking (a FIFO would never open otherwise) and
 * without following a last symlink, and the descriptor must be the file still at the allowed real
 * path (its device and inode) and a regular file, not of the pseudo file systems (their files claim
 * a size they do not have). So a symlink or FIFO swapped in after the check is never read, and a
 * file is read from the descriptor judged, in one piece of the size it had.
 */
import type { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, type Scope } from "effect"
import * as Fs from "node:fs"
import type { FileHandle } from "node:fs/promises"
import { CardFileRefused, InvalidCard } from "../domain/clientErrors.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH, MAX_CARD_FILE_BYTES } from "../domain/limits.js"
import type { FileNotAllowed, FileUnreadable } from "../domain/outgoingPartErrors.js"
import type { StateDir } from "../services/StateDir.js"

/** Pseudo file systems whose files claim a size they do not have (or none at all). */
const PSEUDO_FILE_SYSTEMS = ["/proc/", "/sys/"]

/** A platform error's reason without the path or call it names (those are already in the message). */
export const describeReason = (error: PlatformError) => (error._tag === "SystemError" ? error.reason : "bad argument")

/** Why a file could not be found or read, in words. */
export const unreadableReason = (error: PlatformError) =>
  error._tag === "SystemError" && error.reason === "NotFound" ? "no such file" : `it cannot be read (${describeReason(error)})`

/** The real path to read for a path as given, or why it may not be read (the doors' permissions: readPermission.ts). */
export type ReadPermission<R = FileSystem.FileSystem | StateDir> = (
  path: string
) => Effect.Effect<string, FileUnreadable | FileNotAllowed, R>

/** Why a file was not read: its reason, and what to do instead where the reason calls for something else. */
export interface FileRefusal {
  readonly reason: string
  readonly suggestion?: string | undefined
}

/** An open file judged readable, and its size then; closed with the scope. */
export interface JudgedFile {
  readonly handle: FileHandle
  readonly size: number
  /** Which file it is (device and inode): a second open must find the same. */
  readonly identity: string
}

/** What a file that is not a regular one is, named as @effect/platform names it (the refusals say so). */
const OTHER_TYPES: ReadonlyArray<readonly [string, (stats: Fs.Stats) => boolean]> = [
  ["Directory", (stats) => stats.isDirectory()],
  ["FIFO", (stats) => stats.isFIFO()],
  ["Socket", (stats) => stats.isSocket()],
  ["CharacterDevice", (stats) => stats.isCharacterDevice()],
  ["BlockDevice", (stats) => stats.isBlockDevice()],
  ["SymbolicLink", (stats) => stats.isSymbolicLink()]
]

const typeOf = (stats: Fs.Stats) => OTHER_TYPES.find(([, is]) => is(stats))?.[0] ?? "Unknown"

/** Why what was opened is refused: anything but a regular file, or a file of the pseudo file systems. */
const refusalOf = (realPath: string, stats: Fs.Stats): FileRefusal | undefined => {
  if (!stats.isFile()) {
    const type = typeOf(stats)
    const suggestion = type === "Directory" ? "Send the files in it one by one, or an archive of it." : undefined
    return { reason: `it is not a regular file (${type})`, suggestion }
  }
  const pseudo = PSEUDO_FILE_SYSTEMS.find((root) => realPath.startsWith(root))
  return pseudo === undefined ? undefined : { reason: `it is a special file of ${pseudo.slice(0, -1)}` }
}

const CHANGED: FileRefusal = { reason: "it changed while it was being opened (a link or file put in its place); try again" }

const errnoReason = (error: unknown): FileRefusal => {
  const code = (error as NodeJS.ErrnoException).code
  if (code === "ENOENT") return { reason: "no such file" }
  // O_NOFOLLOW on a real path: what is there now is a symlink, put in its place since it was resolved.
  if (code === "ELOOP") return CHANGED
  return { reason: `it cannot be read (${code ?? String(error)})` }
}

const identityOf = (stats: Fs.Stats) => `${stats.dev}:${stats.ino}`

/**
 * Opens the file at `realPath` (a real path a ReadPermission resolved and allowed) and judges what was
 * opened: the same file as the real path still names, and a regular file outside the pseudo file systems.
 */
export const openJudged = (realPath: string): Effect.Effect<JudgedFile, FileRefusal, Scope.Scope> =>
  Effect.gen(function*() {
    const flags = Fs.constants.O_RDONLY | Fs.constants.O_NONBLOCK | Fs.constants.O_NOCTTY | Fs.constants.O_NOFOLLOW
    const handle = yield* Effect.acquireRelease(
      Effect.tryPromise({ try: () => Fs.promises.open(realPath, flags), catch: errnoReason }),
      (handle) => Effect.promise(() => handle.close().catch(() => undefined))
    )
    const opened = yield* Effect.tryPromise({ try: () => handle.stat(), catch: errnoReason })
    // What the real path names now: a directory on its way swapped for a link would have led elsewhere.
    const [named, resolved] = yield* Effect.tryPromise({
      try: () => Promise.all([Fs.promises.stat(realPath), Fs.promises.realpath(realPath)]),
      catch: () => CHANGED
    })
    if (resolved !== realPath || identityOf(named) !== identityOf(opened)) return yield* Effect.fail(CHANGED)
    const refusal = refusalOf(realPath, opened)
    if (refusal !== undefined) return yield* Effect.fail(refusal)
    return { handle, size: opened.size, identity: identityOf(opened) }
  })

/** The first `size` bytes of an open file (fewer if it shrank), in one buffer allocated once. */
export const readOpened = (handle: FileHandle, size: number) =>
  Effect.tryPromise({
    try: async () => {
      const buffer = Buffer.allocUnsafe(size)
      let filled = 0
      while (filled < size) {
        const { bytesRead } = await handle.read(buffer, filled, size - filled, filled)
        if (bytesRead === 0) break
        filled += bytesRead
      }
      return filled === size ? buffer : buffer.subarray(0, filled)
    },
    catch: errnoReason
  })

/**
 * The JSON of a card file the door allows (`mayRead`: any file at the terminal; at the MCP server only
 * inside the client's roots and the directories the user allowed); an error never shows the file's
 * content (it may be any file at all).
 */
export const readCardFile = <R>(path: string, mayRead: ReadPermission<R>, maxBytes: number = MAX_CARD_FILE_BYTES) =>
  Effect.gen(function*() {
    const refused = (reason: string) => new CardFileRefused({ path, reason })
    const realPath = yield* Effect.mapError(
      mayRead(path),
      (error: FileUnreadable | FileNotAllowed) =>
        new CardFileRefused({ path, reason: error.reason, ...(error._tag === "FileNotAllowed" ? { notAllowed: true } : {}) })
    )
    const bytes = yield* Effect.scoped(Effect.gen(function*() {
      const file = yield* Effect.mapError(openJudged(realPath), (refusal) => refused(refusal.reason))
      if (file.size > maxBytes) return yield* refused(`it is ${file.size} bytes, over the ${maxBytes}-byte limit`)
      return yield* Effect.mapError(readOpened(file.handle, file.size), (refusal) => refused(refusal.reason))
    }))
    let json: unknown
    try {
      json = JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      return yield* new InvalidCard({ url: path, reason: "the file is not JSON (its content is not shown)" })
    }
    if (exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)) {
      return yield* new InvalidCard({ url: path, reason: `the JSON nests deeper than ${MAX_AGENT_JSON_DEPTH} levels` })
    }
    return json
  })
