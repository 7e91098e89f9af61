/**
 * The built-in `echo` model: answers with the text of the last user message, streamed word by
 * word, and each file or data part with the same part (a file comes back byte for byte, so a round
 * trip is testable at every door). It needs no model server, so `relay server agent` works on a
 * fresh machine.
 */
import * as Prompt from "@effect/ai/Prompt"
import { Array as Arr, Duration, Effect, Option, Stream } from "effect"
import { allText, isTextPart } from "../../a2a/parts.js"
import type * as V1 from "../../a2a/v1.js"
import { answerParts, answerText, completed, type ModelModes, textTurn, type TurnIo, type TurnOutcome } from "../../domain/agentTurn.js"

export interface EchoOptions {
  /** Pause before each word of a stream; 0 streams at once (tests). */
  readonly delay?: Duration.DurationInput | undefined
}

/** Default pause between streamed words: visible as streaming, negligible in time. */
export const defaultEchoDelay = Duration.millis(5)

/** The text parts of the last user message, joined; "" when there is none. */
export const lastUserText = (prompt: Prompt.Prompt): string => {
  const lastUser = Arr.findLast(prompt.content, (message) => message.role === "user")
  return Option.match(lastUser, {
    onNone: () => "",
    onSome: (message) => message.content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")
  })
}

/**
 * Splits text into words, each keeping the whitespace that follows it (the first also keeps
 * any leading whitespace), so the pieces join back to exactly the input.
 */
export const splitWords = (text: string): ReadonlyArray<string> => {
  const words = text.match(/\s*\S+\s*/g)
  if (words === null) return text === "" ? [] : [text]
  return words
}

const textOfContent = (content: string | ReadonlyArray<Prompt.PartEncoded>): string =>
  typeof content === "string" ? content : content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")

/** The last user message of a raw prompt (a string is one user message, as for @effect/ai). */
export const lastUserTextOf = (input: Prompt.RawInput): string => {
  if (typeof input === "string") return input
  if (Prompt.isPrompt(input)) return lastUserText(input)
  let text = ""
  for (const message of input) {
    if (message.role === "user") text = textOfContent(message.content)
  }
  return text
}

const pauseOf = (options: EchoOptions) => {
  const delay = Duration.decode(options.delay ?? defaultEchoDelay)
  return Duration.toMillis(delay) > 0 ? Effect.sleep(delay) : Effect.void
}

/** A part of the answer with the kind and content of a part sent: its text, its file (bytes or URL, name, media type) or its data. */
export const echoPart = (part: V1.Part): V1.Part => {
  const { metadata: _metadata, ...echoed } = part
  return echoed
}

/**
 * The echo of a message with files or data: each part answered by its echo, in order. Streamed,
 * the text parts come word by word and every other part as a chunk of its own.
 */
const echoParts = (io: TurnIo, pause: Effect.Effect<void>): Effect.Effect<TurnOutcome> => {
  if (!io.streaming) return Effect.as(io.emit(answerParts(io.parts.map(echoPart), true)), completed)
  const echoOne = (part: V1.Part) =>
    isTextPart(part)
      ? Effect.forEach(splitWords(part.text), (word) => Effect.zipRight(pause, io.emit(answerText(word, false))), { discard: true })
      : io.emit(answerParts([echoPart(part)], false))
  return Effect.forEach(io.parts, echoOne, { discard: true }).pipe(
    Effect.zipRight(io.emit(answerText("", true))),
    Effect.as(completed)
  )
}

/** Echo takes any part and gives the same back: text, data (JSON) and files of any type. */
export const echoModes: ModelModes = { input: ["text/plain", "application/json", "*/*"], output: ["text/plain", "application/json", "*/*"] }

/** The echo model: text answered as text (see answers), a message with files or data part by part. */
export const make = (options: EchoOptions = {}) => {
  const textAnswers = answers(options)
  const textOnly = textTurn(textAnswers)
  const pause = pauseOf(options)
  const turn = (prompt: Prompt.RawInput, io: TurnIo): Effect.Effect<TurnOutcome> =>
    allText(io.parts) ? textOnly(prompt, io) : echoParts(io, pause)
  return { ...textAnswers, turn, modes: echoModes }
}

/**
 * The echo answers without @effect/ai: through LanguageModel each call builds its response
 * schema, which `relay server agent`'s request rate shows (bench/README.md).
 */
export const answers = (options: EchoOptions = {}) => {
  const pause = pauseOf(options)
  return {
    generate: (input: Prompt.RawInput) => Effect.sync(() => lastUserTextOf(input)),
    stream: (input: Prompt.RawInput) =>
      Stream.suspend(() => Stream.fromIterable(splitWords(lastUserTextOf(input)))).pipe(
        Stream.mapEffect((word) => Effect.as(pause, word))
      )
  }
}
