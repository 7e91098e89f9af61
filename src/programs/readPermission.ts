/**
 * Which files may be read to send with a message, decided by the door: the terminal reads any
 * file its user names; the MCP server only files inside the directories its client declares as
 * roots or its user allowed (`relay mcp --allow-read DIR`), and never the state directory (it
 * holds credentials), so a prompt-injected assistant cannot mail ~/.ssh to an agent. Judged on
 * real paths: a symlink inside an allowed directory that leads out of it is refused.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import * as Path from "node:path"
import { FileNotAllowed, FileUnreadable } from "../domain/outgoingPartErrors.js"
import { StateDir } from "../services/StateDir.js"
import { type ReadPermission, unreadableReason } from "./localFiles.js"

export type { ReadPermission } from "./localFiles.js"

const realPathOf = (path: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.realPath(path)).pipe(
    Effect.mapError((error) => new FileUnreadable({ path, reason: unreadableReason(error) }))
  )

/** The terminal's: whatever file the user names. */
export const anyFile: ReadPermission<FileSystem.FileSystem> = realPathOf

/** Whether `path` is `directory` or lies below it (both absolute). */
const isWithin = (directory: string, path: string) => {
  const relative = Path.relative(directory, path)
  return relative === "" || (relative !== ".." && !relative.startsWith(`..${Path.sep}`) && !Path.isAbsolute(relative))
}

/** The directory as it really is; one that does not exist stays as given (nothing can be read in it anyway). */
const realDirectory = (directory: string) =>
  Effect.flatMap(FileSystem.FileSystem, (fs) => fs.realPath(directory)).pipe(Effect.orElseSucceed(() => Path.resolve(directory)))

/**
 * Files inside these directories only (absolute paths; `directories` is asked on every read, as
 * an MCP client's roots change), never inside the state directory. A relative path is refused:
 * the MCP server's working directory means nothing to its client.
 */
export const insideDirectories = (directories: Effect.Effect<ReadonlyArray<string>>): ReadPermission => (path) =>
  Effect.gen(function*() {
    if (!Path.isAbsolute(path)) {
      return yield* new FileNotAllowed({ path, reason: "a relative path; give it absolute, inside one of the roots" })
    }
    const allowed = yield* Effect.flatMap(directories, (dirs) => Effect.forEach(dirs, realDirectory))
    const stateDir = yield* realDirectory((yield* StateDir).path)
    const notAllowed = (reason: string) => new FileNotAllowed({ path, reason })
    // A file that cannot be found is named so only where it may be read: elsewhere, whether it exists is nobody's business.
    const realPath = yield* realPathOf(path).pipe(
      Effect.mapError((unreadable) => (allowed.some((dir) => isWithin(dir, Path.resolve(path)))
        ? unreadable
        : notAllowed(outsideReason(allowed)))
      )
    )
    if (isWithin(stateDir, realPath)) return yield* notAllowed("it is inside relay's state directory, which holds sessions and credentials")
    if (!allowed.some((dir) => isWithin(dir, realPath))) return yield* notAllowed(outsideReason(allowed))
    return realPath
  })

const outsideReason = (allowed: ReadonlyArray<string>) =>
  allowed.length === 0
    ? "the MCP client declared no roots and the user allowed no directory"
    : `it is outside the MCP client's roots and the directories the user allowed (${allowed.join(", ")})`
