/**
 * Files and structured data: a message with a file part, and one with a data part, are accepted by
 * an agent whose card's input modes allow them (an agent refuses only media types it does not
 * support: ContentTypeNotSupportedError, A2A v1.0 §3.3.2, v0.3 §8.2); the file parts of its answers
 * are well formed (exactly one of bytes and a URL, and a media type: v1.0 §4.1.6, v0.3 §6.5.2,
 * §6.6). Messages go raw and answers are read as sent, since our own client would reject or mend
 * the very faults looked for.
 */
import { Effect, Option, Ref } from "effect"
import type * as V1 from "../../a2a/v1.js"
import { isMediaType } from "../../a2a/validation/values.js"
import { failed, passed, skipped, warned } from "../../domain/conformance.js"
import type { FilePartView } from "../../domain/fileParts.js"
import { answerFiles, summarizeNotification } from "../../domain/notification.js"
import { answerExcerpt } from "../../domain/terminalText.js"
import {
  CHECK_MESSAGE_TEXT,
  type InterfaceContext,
  orFailed,
  type PartAnswer,
  recordTask,
  skipWith,
  stateSent,
  userMessage,
  withinBudget
} from "./context.js"
import { dialectOf, rawErrorOf, rawOperation, resultOf, shown, wireOf } from "./rawExchanges.js"

// ---------------------------------------------------------------------------
// What the card allows, and the samples sent

/** A file relay check can send: small, and truly of its media type. */
interface SampleFile {
  readonly mediaType: string
  readonly filename: string
  readonly base64: string
}

const PNG: SampleFile = {
  mediaType: "image/png",
  filename: "relay-check.png",
  // A 1×1 pixel.
  base64: "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
}
const BINARY: SampleFile = { mediaType: "application/octet-stream", filename: "relay-check.bin", base64: "AAECAwQFBgcICQoLDA0ODw==" }
const textFile = (mediaType: string): SampleFile => ({
  mediaType,
  filename: "relay-check.txt",
  base64: Buffer.from(`${CHECK_MESSAGE_TEXT}\n`).toString("base64")
})

/** `Text/Plain; charset=utf-8` → `text/plain`. */
const essence = (mode: string) => (mode.split(";")[0] ?? "").trim().toLowerCase()

/** Every input mode the card declares: its defaults and its skills' own. */
const inputModes = (card: V1.AgentCard): ReadonlyArray<string> => [
  ...card.defaultInputModes,
  ...card.skills.flatMap((skill) => skill.inputModes ?? [])
]

/** The sample that fits a mode, if relay check has one. */
const sampleFor = (mode: string): SampleFile | undefined => {
  const type = essence(mode)
  if (type === "*/*" || type === "image/*" || type === "image/png") return PNG
  if (type === "application/*" || type === "application/octet-stream") return BINARY
  if (type === "text/*") return textFile("text/plain")
  return type.startsWith("text/") && isMediaType(type) ? textFile(type) : undefined
}

/** The file to send: one of the first input mode relay check has a sample for (the card's order is the agent's). */
const fileSample = (card: V1.AgentCard): SampleFile | undefined => {
  for (const mode of inputModes(card)) {
    const sample = sampleFor(mode)
    if (sample !== undefined) return sample
  }
  return undefined
}

const JSON_MODES = ["application/json", "application/*", "*/*"]

const allowsJson = (card: V1.AgentCard) => inputModes(card).some((mode) => JSON_MODES.includes(essence(mode)))

const modesShown = (card: V1.AgentCard) => {
  const modes = inputModes(card)
  return modes.length === 0 ? "none" : [...new Set(modes)].join(", ")
}

const SAMPLE_DATA = { relayCheck: CHECK_MESSAGE_TEXT, answer: 42, items: ["a", "b"] }

type PartKind = "file" | "data" | "text"

/** The part each kind of message carries beside its text, and how a detail names it. */
const sampleOf = (
  ctx: InterfaceContext,
  kind: PartKind
): { readonly parts: ReadonlyArray<V1.Part>; readonly described: string } | undefined => {
  const text: V1.Part = { text: CHECK_MESSAGE_TEXT }
  switch (kind) {
    case "file": {
      const file = fileSample(ctx.card)
      if (file === undefined) return undefined
      const size = Buffer.from(file.base64, "base64").length
      return {
        parts: [text, { raw: file.base64, filename: file.filename, mediaType: file.mediaType }],
        described: `a message with a file part (${file.mediaType}, ${size} bytes)`
      }
    }
    case "data":
      return allowsJson(ctx.card)
        ? { parts: [text, { data: SAMPLE_DATA, mediaType: "application/json" }], described: "a message with a data part" }
        : undefined
    case "text":
      return { parts: [text], described: "a text message" }
  }
}

// ---------------------------------------------------------------------------
// Sending, once per kind and interface

/** Whether the agent took the message: an error, or a task it rejected, is a refusal. */
const sendSample = (ctx: InterfaceContext, parts: ReadonlyArray<V1.Part>, described: string) =>
  Effect.gen(function*() {
    yield* withinBudget(ctx)
    const wire = yield* wireOf(dialectOf(ctx).send, { message: userMessage({ parts: [...parts] }) })
    const response = yield* Effect.mapError(rawOperation(ctx, wire), (error) => error.message)
    if (rawErrorOf(response) !== undefined || response.status >= 300) {
      return { _tag: "Refused", shown: shown(response) } satisfies PartAnswer
    }
    const result = resultOf(ctx, response)
    // Read as leniently as a pushed body: a malformed file part must not hide the task it is in.
    const decoded = yield* Effect.option(wire.decode(result))
    const summary = summarizeNotification(result)
    if (Option.isSome(decoded) && "task" in decoded.value) {
      yield* recordTask(ctx, decoded.value.task.id, stateSent(decoded.value.task.status))
    } else if (summary.kind === "task" && summary.task_id !== null) yield* recordTask(ctx, summary.task_id, summary.state ?? "unknown")
    if (summary.kind === "task" && summary.state === "rejected") {
      return { _tag: "Refused", shown: `the task was rejected: ${shown(response)}` } satisfies PartAnswer
    }
    return { _tag: "Answered", result, described } satisfies PartAnswer
  })

/** The answer to this kind of message, sent now unless another check did; fails with the reason when the card allows no such part. */
const partAnswer = (ctx: InterfaceContext, kind: PartKind) =>
  Effect.gen(function*() {
    const known = (yield* Ref.get(ctx.partAnswers)).get(kind)
    if (known !== undefined) return known
    const sample = sampleOf(ctx, kind)
    if (sample === undefined) {
      return yield* skipWith(
        kind === "file"
          ? `the card's input modes (${
            modesShown(ctx.card)
          }) name no media type relay check has a file for (text/*, image/png, application/octet-stream, */*)`
          : `the card's input modes (${modesShown(ctx.card)}) do not allow application/json`
      )
    }
    const answer = yield* sendSample(ctx, sample.parts, sample.described)
    yield* Ref.update(ctx.partAnswers, (all) => new Map([...all, [kind, answer]]))
    return answer
  })

// ---------------------------------------------------------------------------
// The checks

const accepted = (kind: "file" | "data") => (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const answer = yield* partAnswer(ctx, kind)
    const described = sampleOf(ctx, kind)?.described ?? `a message with a ${kind} part`
    if (answer._tag === "Refused") return failed(`${described}, which the card's input modes allow, was refused: ${answer.shown}`)
    const summary = summarizeNotification(answer.result)
    if (summary.kind !== "task" && summary.kind !== "message") {
      return failed(
        `${described} was answered with neither a Task nor a Message: ${answerExcerpt(JSON.stringify(answer.result) ?? "(nothing)")}`
      )
    }
    return passed(`${described}: ${summary.kind === "task" ? `a Task, ${summary.state ?? "no state"}` : "a Message"}`)
  }))

/** How a file part is named in a detail: its name (cut), else its place. */
const named = (view: FilePartView, index: number) =>
  view.name === undefined ? `file part ${index + 1}` : `file part "${view.name.slice(0, 80)}"`

const listed = (items: ReadonlyArray<string>) =>
  items.length <= 3 ? items.join("; ") : `${items.slice(0, 3).join("; ")}; and ${items.length - 3} more`

/**
 * The file parts of the answer to the file message (or, when the card allows no file relay check
 * has, to a text message): each must have exactly one of bytes and a URL; one without a media type
 * is a warning.
 */
const answerFileParts = (ctx: InterfaceContext) =>
  orFailed(Effect.gen(function*() {
    const kind: PartKind = sampleOf(ctx, "file") === undefined ? "text" : "file"
    const answer = yield* partAnswer(ctx, kind)
    if (answer._tag === "Refused") return skipped(`no answer to look at: ${answer.shown}`)
    const found = answerFiles(answer.result)
    const views = found?.views ?? []
    if (views.length === 0) return skipped(`the answer to ${answer.described} has no file part to look at`)
    const malformed = views.flatMap((view, index) => view.problems.map((problem) => `${named(view, index)}: ${problem}`))
    if (malformed.length > 0) return failed(listed(malformed))
    const untyped = views.flatMap((view, index) =>
      view.mediaType === undefined
        ? [`${named(view, index)} has no media type`]
        : isMediaType(view.mediaType)
        ? []
        : [`${named(view, index)} has "${view.mediaType.slice(0, 80)}", which is not a media type`]
    )
    if (untyped.length > 0) return warned(listed(untyped))
    const count = views.length + (found?.omitted ?? 0)
    return passed(`${count} file part${count === 1 ? "" : "s"}, each with ${
      views.some((view) => view.url !== undefined)
        ? "bytes or a URL"
        : "bytes"
    } and a media type`)
  }))

export const partChecks = {
  "messaging.file-part": accepted("file"),
  "messaging.data-part": accepted("data"),
  "messaging.answer-file-parts": answerFileParts
} as const
