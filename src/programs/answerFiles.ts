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
    const toSave: Array<{ readonly index: number; readonly file: FileToSave }> = []
    for (const [index, part] of parts.entries()) {
      if (part.kind !== "file") continue
      const bytes = part.url === null ? partBytes(located[index]!.part) : undefined
      if (bytes !== undefined) toSave.push({ index, file: { name: part.name, mediaType: part.media_type, bytes } })
    }
    if (handling.download === true) {
      const byUrl = parts.flatMap((part, index) => (part.kind === "file" && part.url !== null ? [index] : []))
      yield* Effect.forEach(byUrl, (index) =>
        Effect.map(fetched(target, parts[index]!), ({ bytes, part }) => {
          kept[index] = part
          if (bytes !== undefined) toSave.push({ index, file: { name: part.name, mediaType: part.media_type, bytes } })
        }), { concurrency: 4, discard: true })
      toSave.sort((a, b) => a.index - b.index)
    }
    const answerId = "status" in answer ? answer.id : answer.taskId ?? answer.messageId
    for (const { index } of toSave.splice(MAX_SAVED_FILES_PER_ANSWER)) {
      kept[index] = withNote(kept[index]!, `not saved: the answer has more than ${MAX_SAVED_FILES_PER_ANSWER} files`)
    }
    const outcomes = yield* Effect.flatMap(ReceivedFiles, (files) =>
      files.save({ dir: handling.saveDir, answerId }, toSave.map(({ file }) => file)))
    outcomes.forEach((outcome: SaveOutcome, position) => {
      const index = toSave[position]!.index
      kept[index] = "path" in outcome ? { ...kept[index]!, path: outcome.path } : withNote(kept[index]!, outcome.note)
    })
    return kept
  })
