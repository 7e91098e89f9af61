/**
 * The answer of a followed task, folded from what the agent sends (stream events, polled
 * snapshots) as it comes. An event costs in proportion to its own size, never to the answer so
 * far: parts are appended in place, sizes are kept per artifact, and the whole Task is built only
 * when asked for. So a fast stream of many small events costs the same per event at the end as at
 * the start.
 *
 * The answer is bounded (`maxBytes`, README: Limits of the client): an event that would take what
 * is kept (artifacts, status message, history, measured as JSON) past it is not kept, and the fold
 * is cut: it takes nothing more, and keeps what it had. An artifact update without `append`
 * replaces the artifact (A2A v0.3 §7.2.3, v1.0 §4.2.2), so it takes the place of the old one's
 * bytes too.
 */
import { Schema } from "effect"
import { isBase64 } from "../a2a/parts.js"
import { artifactText } from "../a2a/text.js"
import type * as V1 from "../a2a/v1.js"
import { act, type Hint } from "./hints.js"
import { MAX_ANSWER_BYTES } from "./limits.js"
import type { Truncation } from "./results.js"

/** Text one event brought to one artifact. */
export interface ArtifactPiece {
  readonly artifactId: string
  /** Appended text (`whole` false), or the artifact's whole text after the event (`whole` true). */
  readonly text: string
  readonly whole: boolean
  /** The parts behind `text`: those appended, or (a copy of) the artifact's whole parts. */
  readonly parts: ReadonlyArray<V1.Part>
}

/** What one event changed: the task as it is now, its artifacts left out, and the texts it brought. */
export interface FoldStep {
  readonly head: V1.Task
  readonly pieces: ReadonlyArray<ArtifactPiece>
}

export interface AnswerFold {
  /** Folds one event in; what it changed, or undefined when it changed nothing (or was not kept: see `cut`). */
  readonly apply: (event: V1.StreamResponse) => FoldStep | undefined
  /** The answer so far: the task (built once per change) or a direct message. */
  readonly answer: () => V1.SendMessageResponse | undefined
  readonly task: () => V1.Task | undefined
  /** An event was refused because the answer would have grown past `maxBytes`. */
  readonly cut: () => boolean
  /** Size of what is kept, as JSON. */
  readonly keptBytes: () => number
  readonly maxBytes: number
}

const jsonBytes = (value: unknown): number => {
  const json = JSON.stringify(value)
  return json === undefined ? 0 : Buffer.byteLength(json)
}

/**
 * A part's size as JSON. A file's base64 is written as it is (its alphabet needs no escaping), so
 * its size is counted, not written out again: a file is megabytes.
 */
const partBytes = (part: V1.Part): number =>
  "raw" in part && isBase64(part.raw) ? jsonBytes({ ...part, raw: "" }) + part.raw.length : jsonBytes(part)

const partsBytes = (parts: ReadonlyArray<V1.Part>): number => {
  let bytes = 0
  for (const part of parts) bytes += partBytes(part)
  return bytes
}

interface Entry {
  header: Omit<V1.Artifact, "parts">
  headerBytes: number
  /** Grows in place: appending a chunk costs the chunk, not the artifact. */
  readonly parts: Array<V1.Part>
  partsBytes: number
}

const entryOf = (artifact: V1.Artifact): Entry => {
  const { parts, ...header } = artifact
  return { header, headerBytes: jsonBytes(header), parts: [...parts], partsBytes: partsBytes(parts) }
}

const entryBytes = (entry: Entry) => entry.headerBytes + entry.partsBytes

/** Text of `chunk` as it continues `parts` (text parts join as they came; others stand on lines of their own, as artifactText has it). */
const continuation = (parts: ReadonlyArray<V1.Part>, chunk: ReadonlyArray<V1.Part>): string => {
  const text = artifactText(chunk)
  const last = parts[parts.length - 1]
  if (last === undefined || chunk.length === 0) return text
  return "text" in last && "text" in chunk[0]! ? text : `\n${text}`
}

/** A task known only from an update (agents that skip the Task a stream should open with). */
const headFromUpdate = (update: V1.TaskStatusUpdateEvent | V1.TaskArtifactUpdateEvent): V1.Task => ({
  id: update.taskId,
  contextId: update.contextId,
  status: "status" in update ? update.status : { state: "TASK_STATE_WORKING" }
})

/** The task without what it accumulates (messages, artifacts): what is kept of a task that alone is over the limit. */
const bareHead = (task: V1.Task): V1.Task => {
  const { message: _message, ...status } = task.status
  const { artifacts: _artifacts, history: _history, metadata: _metadata, ...ids } = task
  return { ...ids, status }
}

export const makeAnswerFold = (maxBytes: number = MAX_ANSWER_BYTES): AnswerFold => {
  let head: V1.Task | undefined
  let statusBytes = 0
  let restBytes = 0
  let entries: Array<Entry> = []
  let positions = new Map<string, number>()
  let artifactBytes = 0
  let message: V1.Message | undefined
  let messageBytes = 0
  let cut = false
  let built: V1.Task | undefined

  const total = () => restBytes + statusBytes + artifactBytes
  const refuse = () => {
    cut = true
    return undefined
  }
  const changed = (pieces: ReadonlyArray<ArtifactPiece>): FoldStep => {
    built = undefined
    return { head: head!, pieces }
  }

  /** Starts the answer from `task`'s head, with no artifacts. */
  const begin = (task: V1.Task): V1.Task => {
    head = task
    statusBytes = jsonBytes(task.status)
    restBytes = jsonBytes(task) - statusBytes
    return task
  }

  const takeTask = (task: V1.Task): FoldStep | undefined => {
    const { artifacts = [], ...rest } = task
    const nextEntries = artifacts.map(entryOf)
    const nextArtifactBytes = nextEntries.reduce((sum, entry) => sum + entryBytes(entry), 0)
    if (jsonBytes(rest) + nextArtifactBytes > maxBytes) {
      if (head === undefined) begin(bareHead(task))
      return refuse()
    }
    begin(rest)
    entries = nextEntries
    positions = new Map(nextEntries.map((entry, index) => [entry.header.artifactId, index]))
    artifactBytes = nextArtifactBytes
    return changed(
      nextEntries.map((entry) => ({
        artifactId: entry.header.artifactId,
        text: artifactText(entry.parts),
        whole: true,
        parts: entry.parts.slice()
      }))
    )
  }

  const takeStatus = (update: V1.TaskStatusUpdateEvent): FoldStep | undefined => {
    const current = head ?? begin(bareHead(headFromUpdate(update)))
    if (update.taskId !== current.id) return undefined
    const nextStatusBytes = jsonBytes(update.status)
    if (total() - statusBytes + nextStatusBytes > maxBytes) return refuse()
    head = { ...current, status: update.status }
    statusBytes = nextStatusBytes
    return changed([])
  }

  const takeArtifact = (update: V1.TaskArtifactUpdateEvent): FoldStep | undefined => {
    if (update.taskId !== (head ?? begin(headFromUpdate(update))).id) return undefined
    const { parts, ...header } = update.artifact
    const id = header.artifactId
    const position = positions.get(id)
    const existing = position === undefined ? undefined : entries[position]
    if (update.append === true && existing !== undefined) {
      const merged = { ...existing.header, ...header }
      const mergedBytes = jsonBytes(merged)
      const chunkBytes = partsBytes(parts)
      if (total() - existing.headerBytes + mergedBytes + chunkBytes > maxBytes) return refuse()
      const text = continuation(existing.parts, parts)
      // A loop, not push(...parts): a chunk may hold more parts than a call takes arguments.
      for (const part of parts) existing.parts.push(part)
      artifactBytes += mergedBytes - existing.headerBytes + chunkBytes
      existing.header = merged
      existing.headerBytes = mergedBytes
      existing.partsBytes += chunkBytes
      return changed([{ artifactId: id, text, whole: false, parts }])
    }
    const entry = entryOf(update.artifact)
    const replacedBytes = existing === undefined ? 0 : entryBytes(existing)
    if (total() - replacedBytes + entryBytes(entry) > maxBytes) return refuse()
    if (position === undefined) {
      positions.set(id, entries.length)
      entries.push(entry)
    } else entries[position] = entry
    artifactBytes += entryBytes(entry) - replacedBytes
    return changed([{ artifactId: id, text: artifactText(entry.parts), whole: true, parts: entry.parts.slice() }])
  }

  const takeMessage = (reply: V1.Message): undefined => {
    // Its JSON's size, the commas between its parts included, without writing its files out.
    const bytes = jsonBytes({ ...reply, parts: [] }) + partsBytes(reply.parts) + Math.max(0, reply.parts.length - 1)
    if (bytes > maxBytes) {
      message ??= { ...reply, parts: [] }
      return refuse()
    }
    message = reply
    messageBytes = bytes
    return undefined
  }

  const task = () => {
    if (head === undefined) return undefined
    built ??= entries.length === 0
      ? head
      : { ...head, artifacts: entries.map((entry) => ({ ...entry.header, parts: entry.parts.slice() })) }
    return built
  }

  return {
    apply: (event) => {
      if (cut) return undefined
      if ("task" in event) return takeTask(event.task)
      if ("message" in event) return takeMessage(event.message)
      if ("statusUpdate" in event) return takeStatus(event.statusUpdate)
      return takeArtifact(event.artifactUpdate)
    },
    answer: () => {
      const kept = task()
      if (kept !== undefined) return { task: kept }
      return message === undefined ? undefined : { message }
    },
    task,
    cut: () => cut,
    keptBytes: () => (head === undefined ? messageBytes : total()),
    maxBytes
  }
}

/** The fields of a result whose answer was cut, or none. */
export const truncation = (fold: AnswerFold): Truncation =>
  fold.cut() ? { truncated: true, kept_bytes: fold.keptBytes(), limit_bytes: fold.maxBytes } : {}

/**
 * The whole answer (artifacts, status message, history) grew past the client's limit for one
 * answer, however small each event was; relay stopped reading and kept what it had, which the
 * door shows as a cut result (`truncated: true`) before this error.
 */
export class AnswerTooLarge extends Schema.TaggedError<AnswerTooLarge>()("AnswerTooLarge", {
  limit: Schema.Number,
  kept: Schema.Number
}) {
  readonly code = "response_too_large"
  override get message() {
    return `The agent's answer grew past the ${this.limit}-byte limit for a whole answer; relay stopped reading it and kept what came before (${this.kept} bytes)`
  }
  get hint(): Hint {
    return ["If you trust this agent, allow larger answers with ", act("RaiseAnswerLimit"), "."]
  }
}

/** The error a cut result stands for, if it was cut. */
export const answerTooLarge = (result: Truncation): AnswerTooLarge | undefined =>
  result.truncated === true ? new AnswerTooLarge({ limit: result.limit_bytes ?? 0, kept: result.kept_bytes ?? 0 }) : undefined
