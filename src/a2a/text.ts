/**
 * Plain-text views of A2A results and the folding of stream events into a task snapshot.
 */
import type * as V1 from "./v1.js"

/** A data part's whole JSON, indented: it is part of the answer, not a summary of it. */
const indentedJson = (value: unknown): string => {
  const json = JSON.stringify(value, null, 2)
  return json === undefined ? String(value) : json
}

/** Decoded size of base64 content, without decoding it. */
const base64Bytes = (base64: string): number => {
  const clean = base64.replace(/\s/g, "")
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding)
}

const fileLabel = (part: V1.Part): string => {
  const label = [part.filename, part.mediaType === undefined ? undefined : `(${part.mediaType})`]
    .filter((piece) => piece !== undefined)
    .join(" ")
  return label === "" ? "unnamed" : label
}

/**
 * One part as text: text as is, data as its whole JSON (indented), files as `[file: name (type),
 * url]` or `[file: name (type), N bytes]`. Nothing is silently dropped.
 */
export const partText = (part: V1.Part): string => {
  if ("text" in part) return part.text
  if ("url" in part) return `[file: ${fileLabel(part)}, ${part.url}]`
  if ("raw" in part) return `[file: ${fileLabel(part)}, ${base64Bytes(part.raw)} bytes]`
  return indentedJson(part.data)
}

/** The parts of one message, one per line (a message's parts are separate pieces). */
export const partsText = (parts: ReadonlyArray<V1.Part>): string => parts.map(partText).join("\n")

/**
 * The parts of one artifact. Text parts that follow each other are one text: a streamed artifact
 * arrives as one text part per chunk, and agents store those chunks as separate parts, so the
 * chunks join as they came. Any other part stands on a line of its own.
 */
export const artifactText = (parts: ReadonlyArray<V1.Part>): string =>
  parts.reduce((text, part, index) => {
    const joinsPrevious = "text" in part && index > 0 && "text" in parts[index - 1]!
    return index === 0 ? partText(part) : `${text}${joinsPrevious ? "" : "\n"}${partText(part)}`
  }, "")

const joinNonEmpty = (texts: ReadonlyArray<string>): string => texts.filter((t) => t !== "").join("\n")

const isTask = (result: V1.Task | V1.Message): result is V1.Task => "status" in result

/** The text of a task's artifacts, each after the other. */
export const artifactsText = (task: V1.Task): string => joinNonEmpty((task.artifacts ?? []).map((artifact) => artifactText(artifact.parts)))

/**
 * The answer in a result as text. For a Message, its parts. For a Task: the artifacts, else the
 * status message, else the agent messages of the history (results belong in artifacts, but many
 * agents answer through the status message or the history).
 */
export const resultText = (result: V1.Task | V1.Message): string => {
  if (!isTask(result)) return partsText(result.parts)
  const fromArtifacts = artifactsText(result)
  if (fromArtifacts !== "") return fromArtifacts
  const fromStatus = result.status.message === undefined ? "" : partsText(result.status.message.parts)
  if (fromStatus !== "") return fromStatus
  const agentMessages = (result.history ?? []).filter((message) => message.role === "ROLE_AGENT")
  return joinNonEmpty(agentMessages.map((message) => partsText(message.parts)))
}

/**
 * Applies one artifact update to a task's artifacts. With `append`, the parts go to the end of
 * the artifact with the same `artifactId`, as the agent stores them (its name, description and
 * metadata are updated when the chunk carries them); otherwise the chunk replaces that artifact. An unknown id is added at
 * the end. `lastChunk` only marks the end of the artifact and changes nothing here.
 */
export const mergeArtifactChunk = (
  artifacts: ReadonlyArray<V1.Artifact>,
  event: V1.TaskArtifactUpdateEvent
): ReadonlyArray<V1.Artifact> => {
  const chunk = event.artifact
  const index = artifacts.findIndex((artifact) => artifact.artifactId === chunk.artifactId)
  const existing = artifacts[index]
  if (existing === undefined) return [...artifacts, chunk]
  const merged = event.append === true ? { ...existing, ...chunk, parts: [...existing.parts, ...chunk.parts] } : chunk
  return artifacts.map((artifact, i) => (i === index ? merged : artifact))
}

/** A task known only from an update (agents that skip the Task a stream should open with). */
const taskFromUpdate = (update: V1.TaskStatusUpdateEvent | V1.TaskArtifactUpdateEvent): V1.Task => ({
  id: update.taskId,
  contextId: update.contextId,
  status: "status" in update ? update.status : { state: "TASK_STATE_WORKING" }
})

/**
 * Folds one stream event into the latest task snapshot: a Task replaces the snapshot, a status
 * update sets the status, an artifact update is merged with `mergeArtifactChunk`. Events for
 * another task, and Messages, leave the snapshot unchanged. A stream that opens with an update
 * instead of the Task starts its snapshot from that update.
 */
export const applyStreamEvent = (current: V1.Task | undefined, event: V1.StreamResponse): V1.Task | undefined => {
  if ("task" in event) return event.task
  if ("message" in event) return current
  const snapshot = current ?? taskFromUpdate("statusUpdate" in event ? event.statusUpdate : event.artifactUpdate)
  if ("statusUpdate" in event) {
    return event.statusUpdate.taskId === snapshot.id ? { ...snapshot, status: event.statusUpdate.status } : snapshot
  }
  const update = event.artifactUpdate
  if (update.taskId !== snapshot.id) return snapshot
  return { ...snapshot, artifacts: mergeArtifactChunk(snapshot.artifacts ?? [], update) }
}

/** The text one stream event or push notification carries, rendered as its task would be. */
export const eventText = (event: V1.StreamResponse): string => {
  if ("task" in event) return resultText(event.task)
  if ("message" in event) return resultText(event.message)
  if ("statusUpdate" in event) return partsText(event.statusUpdate.status.message?.parts ?? [])
  return artifactText(event.artifactUpdate.artifact.parts)
}
