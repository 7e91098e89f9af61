/**
 * ReceivedFiles: the files an agent's answer carries, written to disk where the user can open
 * them. By default each answer's files go to `files/<task id>/` in the state directory (folders
 * 0700, like the directory itself); `--save-dir DIR` puts them in DIR instead. Files are 0600:
 * their content came from someone else, and may be private to the conversation.
 *
 * Nothing an agent wrote reaches a path unchecked: names and the task id pass safeFileName
 * (domain/fileNames.ts), every path is checked to be directly inside its folder (resolved through
 * symlinks), and a file is created only where none exists (O_EXCL, which also refuses a symlink
 * planted there): a name taken by other content gets ` (1)`, ` (2)`, … before its extension. A
 * file that cannot be saved is reported as such, never fails the answer it came in.
 */
import { Context, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { mediaTypeEssence } from "../a2a/parts.js"
import { numberedName, safeFileName } from "../domain/fileNames.js"
import { extensionOfMediaType } from "../domain/mediaTypes.js"
import { StateDir } from "./StateDir.js"

/** The folder under the state directory that holds received files, one folder per task. */
export const RECEIVED_FILES_DIR = "files"

/** Where an answer's files go: `dir` (--save-dir) itself, else the state directory's folder for the answer. */
export interface SaveFolder {
  readonly dir?: string | undefined
  /** The task id, or the message id of a direct reply: the folder's name under the state directory. */
  readonly answerId: string
}

export interface FileToSave {
  /** As the agent named it (made safe here); null for a name-less part. */
  readonly name: string | null
  readonly mediaType: string | null
  /** Its content, whole or in pieces (a file received as base64 is decoded as it is written). */
  readonly bytes: Uint8Array | FileInPieces
}

/** Content read a piece at a time, as often as asked: its size, and its pieces in order. */
export interface FileInPieces {
  readonly size: number
  readonly pieces: () => Iterable<Uint8Array>
}

const sizeOf = (bytes: FileToSave["bytes"]) => (bytes instanceof Uint8Array ? bytes.length : bytes.size)
const piecesOf = (bytes: FileToSave["bytes"]): Iterable<Uint8Array> => (bytes instanceof Uint8Array ? [bytes] : bytes.pieces())

/** Where a file was saved, or why it was not (`not saved: …`). */
export type SaveOutcome = { readonly path: string } | { readonly note: string }

/** An answer's folder, its files written one at a time (so they need not all be in memory at once). */
export interface AnswerFolder {
  /** Writes the answer's `position`-th file to save (it names a name-less one), under a name not taken yet. */
  readonly write: (file: FileToSave, position: number) => Effect.Effect<SaveOutcome>
}

export class ReceivedFiles extends Context.Tag("relay/ReceivedFiles")<ReceivedFiles, {
  /** The folder for an answer's files, written one by one in order; created at the first write. */
  readonly open: (folder: SaveFolder) => Effect.Effect<AnswerFolder>
}>() {}

const reasonOf = (error: unknown) => (error instanceof Error ? error.message : String(error))

/** Creates a folder relay owns 0700 (mkdir honours the umask, so the mode is set again). */
const ownFolder = (dir: string) => {
  if (Fs.existsSync(dir)) return
  Fs.mkdirSync(dir, { recursive: true, mode: 0o700 })
  Fs.chmodSync(dir, 0o700)
}

/** The extension a media type is saved with (mime-types, loaded only for a name-less file). */
const extensionFor = (mediaType: string | null): Effect.Effect<string> =>
  Effect.map(extensionOfMediaType(mediaTypeEssence(mediaType ?? undefined)), (extension) => extension ?? "bin")

/** The name a file is saved under before any suffix: the agent's, made safe, else `file-N.ext` from its media type. */
const baseName = (file: FileToSave, index: number): Effect.Effect<string> => {
  const fallback = (extension: string) => `file-${index + 1}.${extension}`
  const safe = safeFileName(file.name, "")
  return safe !== "" ? Effect.succeed(safe) : Effect.map(extensionFor(file.mediaType), fallback)
}

/** Whether `path` is a plain file (not a symlink) holding exactly `bytes`. */
const holds = (path: string, bytes: FileToSave["bytes"]): boolean => {
  const info = Fs.lstatSync(path, { throwIfNoEntry: false })
  if (info === undefined || !info.isFile() || info.size !== sizeOf(bytes)) return false
  const held = Fs.readFileSync(path)
  let offset = 0
  for (const piece of piecesOf(bytes)) {
    if (!held.subarray(offset, offset + piece.length).equals(piece)) return false
    offset += piece.length
  }
  return true
}

/**
 * Writes `bytes` under `name` in `folder` (its real path), or under the first numbered name free;
 * a file already there with these very bytes is the file (asking for a task again does not copy
 * its files again). `next` remembers, per name, where to look next, so many files of one name
 * cost one try each.
 */
const writeFree = (folder: string, name: string, bytes: FileToSave["bytes"], next: Map<string, number>): string => {
  for (let n = next.get(name) ?? 0;; n++) {
    const candidate = Path.join(folder, n === 0 ? name : numberedName(name, n))
    if (Path.dirname(candidate) !== folder) throw new Error(`"${name}" does not stay inside ${folder}`)
    let descriptor: number
    try {
      descriptor = Fs.openSync(candidate, "wx", 0o600)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error
      if (!holds(candidate, bytes)) continue
      next.set(name, n + 1)
      return candidate
    }
    next.set(name, n + 1)
    try {
      for (const piece of piecesOf(bytes)) Fs.writeSync(descriptor, piece)
    } catch (error) {
      Fs.rmSync(candidate, { force: true })
      throw error
    } finally {
      Fs.closeSync(descriptor)
    }
    return candidate
  }
}

/** The service over `filesRoot` (the state directory's `files/`), created by `prepareRoot` on first use. */
export const makeAt = (filesRoot: string, prepareRoot: Effect.Effect<void, unknown> = Effect.void) => {
  /** The folder's real path, created as needed. */
  const folderOf = (folder: SaveFolder) =>
    Effect.gen(function*() {
      if (folder.dir !== undefined) {
        const dir = Path.resolve(folder.dir)
        yield* Effect.try(() => Fs.mkdirSync(dir, { recursive: true, mode: 0o700 }))
        return yield* Effect.try(() => Fs.realpathSync(dir))
      }
      yield* prepareRoot
      const root = yield* Effect.try(() => {
        ownFolder(filesRoot)
        return Fs.realpathSync(filesRoot)
      })
      const dir = Path.join(root, safeFileName(folder.answerId, "answer"))
      yield* Effect.try(() => ownFolder(dir))
      // A folder that resolves elsewhere (a symlink put there) is not the answer's folder.
      const real = yield* Effect.try(() => Fs.realpathSync(dir))
      if (Path.dirname(real) !== root) return yield* Effect.fail(new Error(`${dir} leads outside ${root}`))
      return real
    })

  const open = (folder: SaveFolder): Effect.Effect<AnswerFolder> =>
    Effect.map(Effect.cached(Effect.either(folderOf(folder))), (dir) => {
      const next = new Map<string, number>()
      const write = (file: FileToSave, position: number): Effect.Effect<SaveOutcome> =>
        Effect.flatMap(dir, (found) =>
          found._tag === "Left"
            ? Effect.succeed({ note: `not saved: ${reasonOf(found.left)}` })
            : Effect.map(baseName(file, position), (name): SaveOutcome => {
              try {
                return { path: writeFree(found.right, name, file.bytes, next) }
              } catch (error) {
                return { note: `not saved: ${reasonOf(error)}` }
              }
            }))
      return { write }
    })

  return ReceivedFiles.of({ open })
}

export const make = Effect.map(StateDir, (stateDir) => makeAt(stateDir.file(RECEIVED_FILES_DIR), stateDir.ensure))

export const layer: Layer.Layer<ReceivedFiles, never, StateDir> = Layer.effect(ReceivedFiles, make)

/** Saves under `stateDir` (a temporary folder of a test) as if it were the state directory. */
export const layerTest = (stateDir: string): Layer.Layer<ReceivedFiles> =>
  Layer.succeed(ReceivedFiles, makeAt(Path.join(stateDir, RECEIVED_FILES_DIR), Effect.try(() => ownFolder(stateDir))))
