/**
 * The TaskStore a `--store` choice names, and the one place each backend plugs in: memory (the
 * live layer over the memory storage), file (over FileTaskStorage, recovering what the last
 * process left unfinished before the server answers) and PostgreSQL (not built yet).
 */
import { Effect, Layer } from "effect"
import type { StateFileUnavailable } from "../../domain/errors.js"
import { DEFAULT_FILE_STORE_DIR, type TaskStoreChoice, type TaskStoreTarget, TaskStoreUnavailable } from "../../domain/taskStoreChoice.js"
import { recoverAfterRestart } from "../../programs/agent/recovery.js"
import * as FileTaskStorage from "../../services/FileTaskStorage.js"
import type { PushSender } from "../../services/PushSender.js"
import { StateDir } from "../../services/StateDir.js"
import * as TaskStore from "../../services/TaskStore.js"

/** The choice's directory: the default file store lives in the state directory. */
export const resolveTaskStoreTarget = (choice: TaskStoreChoice) =>
  Effect.gen(function*(): Effect.fn.Return<TaskStoreTarget, StateFileUnavailable, StateDir> {
    if (choice._tag !== "file") return choice
    if (choice.dir !== undefined) return { _tag: "file", dir: choice.dir }
    const stateDir = yield* StateDir
    yield* stateDir.ensure
    return { _tag: "file", dir: stateDir.file(DEFAULT_FILE_STORE_DIR) }
  })

/** Retention and compaction of a file store (tests); the defaults otherwise. */
export type FileStoreOptions = Omit<FileTaskStorage.FileTaskStorageOptions, "dir">

/** The file store: tasks as the last process left them, the ones it left working ended failed. */
const fileStore = (dir: string, options: FileStoreOptions | undefined) =>
  Layer.effectDiscard(recoverAfterRestart).pipe(
    Layer.provideMerge(
      Layer.scoped(TaskStore.TaskStore, TaskStore.makeWithRetention((retention) => FileTaskStorage.make({ ...options, dir }, retention)))
    )
  )

/** The PostgreSQL store plugs in here. */
const postgresStore = (): Layer.Layer<TaskStore.TaskStore, TaskStoreUnavailable, PushSender> =>
  Layer.fail(
    new TaskStoreUnavailable({
      store: "PostgreSQL",
      reason: "the PostgreSQL store is not built yet",
      suggestion: "Use --store file (the default) or --store memory"
    })
  )

export const taskStoreLayer = (
  target: TaskStoreTarget,
  fileOptions?: FileStoreOptions
): Layer.Layer<TaskStore.TaskStore, TaskStoreUnavailable, PushSender> => {
  switch (target._tag) {
    case "memory":
      return TaskStore.layer()
    case "file":
      return fileStore(target.dir, fileOptions)
    case "postgres":
      return postgresStore()
  }
}
