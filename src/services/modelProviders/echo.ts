/**
 * The built-in `echo` model: answers with the text of the last user message, streamed word by
 * word. It needs no model server, so `relay server agent` works on a fresh machine.
 */
import * as Prompt from "@effect/ai/Prompt"
import { Array as Arr, Duration, Effect, Option, Stream } from "effect"

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

/**
 * The echo answers without @effect/ai: through LanguageModel each call cost ~230 µs (its
 * response schema is built per call), direct it is ~2 µs, which `relay server agent`'s request
 * rate shows (bench/agent-server.mjs).
 */
export const answers = (options: EchoOptions = {}) => {
  const delay = Duration.decode(options.delay ?? defaultEchoDelay)
  const pause = Duration.toMillis(delay) > 0 ? Effect.sleep(delay) : Effect.void
  return {
    generate: (input: Prompt.RawInput) => Effect.sync(() => lastUserTextOf(input)),
    stream: (input: Prompt.RawInput) =>
      Stream.suspend(() => Stream.fromIterable(splitWords(lastUserTextOf(input)))).pipe(
        Stream.mapEffect((word) => Effect.as(pause, word))
      )
  }
}
