/**
 * The files of an answer kept where the user can open them, once per turn, from the final answer
 * (never per stream event): every file part with bytes is saved (ReceivedFiles), and with
 * `download` every file given by URL is fetched first, under the rules of any request to the
 * agent (A2aClient.download), then saved alike. Each part says where it went (`path`) or why not
 * (`note`); nothing here fails the answer.
 */
import { Effect } from "effect"
import type * as V1 from "../a2a/v1.js"
import { type AnswerPart, locatedParts, mediaTypeLie, partBytes, sha256Hex } from "../domain/answerParts.js"
import { MAX_SAVED_FILES_PER_ANSWER } from "../domain/limits.js"
import { A2aClient, type Target } from "../services/A2aClient.js"
import { type FileToSave, ReceivedFiles, type SaveOutcome } from "../services/ReceivedFiles.js"

/** What a door asks of an answer's files (README: Files and data). */
export interface FileHandling {
  /** Save the files (default true); `--no-save` is false. */
  readonly save?: boolean | undefined
  /** Save them here (`--save-dir`) instead of the state directory's `files/<task id>/`. */
  readonly saveDir?: string | undefined
  /** Fetch the files given by URL and save them too (`--download`). */
  readonly download?: boolean | undefined
}

const withNote = (part: AnswerPart, note: string): AnswerPart => ({ ...part, note: part.note === null ? note : `${part.note}; ${note}` })

/** A file given by URL, fetched: its size, sha256 and what its bytes say of its media type; or why it was not. */
const fetched = (target: Target, part: AnswerPart) =>
  Effect.flatMap(A2aClient, (client) => client.download(target, part.url!)).pipe(
    Effect.map((bytes) => ({
      bytes,
      part: { ...part, size: bytes.length, sha256: sha256Hex(bytes), note: mediaTypeLie(part.media_type ?? undefined, bytes) ?? part.note }
    })),
    Effect.catchAll((error) => Effect.succeed({ bytes: undefined, part: withNote(part, `not downloaded: ${error.message}`) }))
  )

/**
 * Files given by URL fetched at once; they are saved before the next are fetched, so an answer of
 * many large links holds only these in memory, never all of them.
 */
const DOWNLOADS_AT_ONCE = 4

/** A file to keep: its place among the answer's parts, and its bytes (none yet for a file to download). */
interface ToKeep {
  readonly index: number
  readonly bytes?: FileToSave["bytes"] | undefined
}

/** The files in order, cut after each DOWNLOADS_AT_ONCE-th file to download. */
const batches = (files: ReadonlyArray<ToKeep>): Array<Array<ToKeep>> => {
  const all: Array<Array<ToKeep>> = [[]]
  let downloads = 0
  for (const file of files) {
    if (file.bytes === undefined && downloads++ === DOWNLOADS_AT_ONCE) {
      all.push([])
      downloads = 1
    }
    all.at(-1)!.push(file)
  }
  return all
}

/** The parts with what became of their files: `parts` are the views of `answer`'s parts (answerParts), in order. */
export const keepAnswerFiles = (
  target: Target,
  answer: V1.Task | V1.Message,
  parts: ReadonlyArray<AnswerPart>,
  handling: FileHandling = {}
): Effect.Effect<ReadonlyArray<AnswerPart>, never, ReceivedFiles | A2aClient> =>
  Effect.gen(function*() {
    if (handling.save === false || !parts.some((part) => part.kind === "file")) return parts
    const located = locatedParts(answer)
    const kept = [...parts]
    const toKeep: Array<ToKeep> = []
    for (const [index, part] of parts.entries()) {
      if (part.kind !== "file") continue
      if (part.url !== null) {
        if (handling.download === true) toKeep.push({ index })
        continue
      }
      const bytes = partBytes(located[index]!.part)
      if (bytes !== undefined) toKeep.push({ index, bytes })
    }
    for (const { index } of toKeep.splice(MAX_SAVED_FILES_PER_ANSWER)) {
      kept[index] = withNote(kept[index]!, `not saved: the answer has more than ${MAX_SAVED_FILES_PER_ANSWER} files`)
    }
    if (toKeep.length === 0) return kept
    const answerId = "status" in answer ? answer.id : answer.taskId ?? answer.messageId
    const folder = yield* Effect.flatMap(ReceivedFiles, (files) => files.open({ dir: handling.saveDir, answerId }))
    let position = 0
    for (const batch of batches(toKeep)) {
      const ready = yield* Effect.forEach(batch, ({ bytes, index }): Effect.Effect<ToKeep, never, A2aClient> =>
        bytes !== undefined ? Effect.succeed({ index, bytes }) : Effect.map(fetched(target, parts[index]!), (download) => {
          kept[index] = download.part
          return { index, bytes: download.bytes }
        }), { concurrency: DOWNLOADS_AT_ONCE })
      // A file that could not be downloaded says why already (fetched).
      for (const { bytes, index } of ready) {
        if (bytes === undefined) {
          continue
        }
        const part = kept[index]!
        const outcome: SaveOutcome = yield* folder.write({ name: part.name, mediaType: part.media_type, bytes }, position++)
        kept[index] = "path" in outcome ? { ...part, path: outcome.path } : withNote(part, outcome.note)
      }
    }
    return kept
  })
