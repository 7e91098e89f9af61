/**
 * Reading files the user names (a card to validate, a file to send): only regular files, judged
 * before they are opened, since a device or a FIFO would never end and the pseudo file systems'
 * files claim a size they do not have; then read in one piece of the size stat gave.
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Stream } from "effect"
import { CardFileRefused, InvalidCard } from "../domain/clientErrors.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH, MAX_CARD_FILE_BYTES } from "../domain/limits.js"

/** Pseudo file systems whose files claim a size they do not have (or none at all). */
const PSEUDO_FILE_SYSTEMS = ["/proc/", "/sys/"]

/** Why a file is refused before it is opened: anything but a regular file, or a file of the pseudo file systems. */
export const refusalOf = (realPath: string, info: FileSystem.File.Info): string | undefined => {
  if (info.type !== "File") return `it is not a regular file (${info.type})`
  const pseudo = PSEUDO_FILE_SYSTEMS.find((root) => realPath.startsWith(root))
  return pseudo === undefined ? undefined : `it is a special file of ${pseudo.slice(0, -1)}`
}

/** A platform error's reason without the path or call it names (those are already in the message). */
export const describeReason = (error: PlatformError) => (error._tag === "SystemError" ? error.reason : "bad argument")

/** Why a file could not be found or read, in words. */
export const unreadableReason = (error: PlatformError) =>
  error._tag === "SystemError" && error.reason === "NotFound" ? "no such file" : `it cannot be read (${describeReason(error)})`

/**
 * The first `size` bytes of a regular file (fewer if it shrank), in one buffer allocated once: a
 * file that grew since it was measured is not read past that size.
 */
export const readFileOfSize = (path: string, size: number) =>
  Effect.scoped(Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const file = yield* fs.open(path, { flag: "r" })
    const buffer = Buffer.allocUnsafe(size)
    let filled = 0
    while (filled < size) {
      const read = Number(yield* file.read(buffer.subarray(filled)))
      if (read === 0) break
      filled += read
    }
    return filled === size ? buffer : buffer.subarray(0, filled)
  }))

/** Why a card file is refused before it is opened: not a regular file (localFiles.ts), or over the size limit. */
const cardFileRefusal = (realPath: string, info: FileSystem.File.Info, maxBytes: number): string | undefined =>
  refusalOf(realPath, info) ?? (Number(info.size) > maxBytes ? `it is ${info.size} bytes, over the ${maxBytes}-byte limit` : undefined)

/** The JSON of a card file; an error never shows the file's content (it may be any file at all). */
export const readCardFile = (path: string, maxBytes: number = MAX_CARD_FILE_BYTES) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const refused = (reason: string) => new CardFileRefused({ path, reason })
    const unreadable = (error: PlatformError) => refused(unreadableReason(error))
    const info = yield* Effect.mapError(fs.stat(path), unreadable)
    const realPath = yield* Effect.mapError(fs.realPath(path), unreadable)
    const refusal = cardFileRefusal(realPath, info, maxBytes)
    if (refusal !== undefined) return yield* refused(refusal)
    // At most one byte past the limit: a file that grew since stat is refused all the same.
    const bytes = yield* fs.stream(path, { bytesToRead: maxBytes + 1 }).pipe(
      Stream.runCollect,
      Effect.map((chunks) => Buffer.concat([...chunks])),
      Effect.mapError(unreadable)
    )
    if (bytes.length > maxBytes) return yield* refused(`it is over the ${maxBytes}-byte limit`)
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
