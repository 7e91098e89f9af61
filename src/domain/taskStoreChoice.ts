/**
 * Where `relay server agent` keeps its tasks (`--store`, env RELAY_STORE): `memory` (gone with the
 * process), `file` or `file:DIR` (the embedded durable store, by default in the state directory) or
 * a `postgres://` URL. The URL holds a password: it stays Redacted, and no message here repeats it.
 */
import { Either, Redacted, Schema } from "effect"
import { InvalidInput } from "./errors.js"

export type TaskStoreChoice =
  | { readonly _tag: "memory" }
  /** `dir` undefined: `agent-store` in the state directory. */
  | { readonly _tag: "file"; readonly dir: string | undefined }
  | { readonly _tag: "postgres"; readonly url: Redacted.Redacted<string> }

/** A choice with its file store's directory decided. */
export type TaskStoreTarget =
  | Exclude<TaskStoreChoice, { readonly _tag: "file" }>
  | { readonly _tag: "file"; readonly dir: string }

/** Where a store is, for messages: never a connection string (it may hold a password). */
export const describeTaskStore = (target: TaskStoreTarget): string =>
  target._tag === "memory" ? "memory" : target._tag === "file" ? target.dir : "PostgreSQL"

export const DEFAULT_TASK_STORE: TaskStoreChoice = { _tag: "file", dir: undefined }

/** The directory of the default file store, inside the state directory. */
export const DEFAULT_FILE_STORE_DIR = "agent-store"

const STORE_FORMS = "memory, file, file:DIR or postgres://USER:PASSWORD@HOST/DATABASE"

/** The choice a `--store` value names; a relative DIR is taken as given (the caller resolves it). */
export const parseTaskStoreChoice = (value: Redacted.Redacted<string>): Either.Either<TaskStoreChoice, InvalidInput> => {
  const text = Redacted.value(value).trim()
  if (text === "memory") return Either.right({ _tag: "memory" })
  if (text === "file") return Either.right(DEFAULT_TASK_STORE)
  if (text.startsWith("file:") && text.length > "file:".length) return Either.right({ _tag: "file", dir: text.slice("file:".length) })
  if (/^postgres(ql)?:\/\//i.test(text)) return Either.right({ _tag: "postgres", url: value })
  return Either.left(
    new InvalidInput({
      // Not repeated: a mistyped connection string may hold a password.
      reason: `--store (or RELAY_STORE) must be ${STORE_FORMS}`,
      suggestion: "Leave it out for the file store in the state directory, or pass --store memory for a throwaway run"
    })
  )
}

/** The store chosen cannot be used: held by another process, damaged, unreachable or not built. */
export class TaskStoreUnavailable extends Schema.TaggedError<TaskStoreUnavailable>()("TaskStoreUnavailable", {
  /** Where it is (a directory; never a connection string with its password). */
  store: Schema.String,
  reason: Schema.String,
  suggestion: Schema.String
}) {
  readonly code = "task_store_unavailable"
  override get message() {
    return `The task store ${this.store} cannot be used: ${this.reason}`
  }
  get hint() {
    return this.suggestion
  }
}
