/**
 * A LanguageModel over Ollama's own chat API (`POST {host}/api/chat`), which every Ollama version
 * serves: a user's images go in the message's `images` field (base64), as Ollama's vision models
 * take them; the answer comes whole, or streamed as one JSON object per line. The agent offers
 * no tools.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import { Effect, flow, Schema, Stream } from "effect"
import { toAiError, toFinishReason } from "./chatCompletions.js"

export interface OllamaOptions {
  /** Where Ollama listens, e.g. http://127.0.0.1:11434. */
  readonly baseUrl: string
  readonly model: string
}

interface OllamaMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string
  readonly images?: ReadonlyArray<string>
}

/** An answer, or one line of a streamed answer (the last says `done`, with the counts). */
const ChatChunk = Schema.Struct({
  message: Schema.optional(Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) })),
  done: Schema.optional(Schema.Boolean),
  done_reason: Schema.optional(Schema.NullOr(Schema.String)),
  prompt_eval_count: Schema.optional(Schema.Number),
  eval_count: Schema.optional(Schema.Number),
  // A failure after the answer began comes as a line with an error.
  error: Schema.optional(Schema.String)
})
type ChatChunk = typeof ChatChunk.Type
const decodeLine = Schema.decode(Schema.parseJson(ChatChunk))

const module = "OllamaModel"

const textOf = (content: ReadonlyArray<Prompt.AssistantMessagePart>): string =>
  content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")

/** An image Ollama cannot take: it fetches no URLs, so the model hears it named. */
const namedImage = (file: Prompt.FilePart, url: URL) =>
  `[image: ${file.fileName ?? "unnamed"} (${file.mediaType}), ${url.toString()}] (an image by URL, which Ollama does not fetch)`

/** A user's pieces: their text a line each, the images' bytes in `images`. */
const userMessage = (content: ReadonlyArray<Prompt.UserMessagePart>): OllamaMessage => {
  const lines: Array<string> = []
  const images: Array<string> = []
  for (const part of content) {
    if (part.type === "text") lines.push(part.text)
    else if (part.data instanceof URL) lines.push(namedImage(part, part.data))
    else images.push(typeof part.data === "string" ? part.data : Buffer.from(part.data).toString("base64"))
  }
  const text = lines.join("\n")
  return images.length === 0 ? { role: "user", content: text } : { role: "user", content: text, images }
}

const toOllamaMessages = (prompt: Prompt.Prompt): Array<OllamaMessage> =>
  prompt.content.flatMap((message): Array<OllamaMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
        return [userMessage(message.content)]
      case "assistant":
        return [{ role: "assistant", content: textOf(message.content) }]
      case "tool":
        return [] // no tools are offered, so there are no tool results to send back
    }
  })

const finishPart = (chunk: ChatChunk): Response.FinishPartEncoded => ({
  type: "finish",
  reason: toFinishReason(chunk.done_reason),
  usage: {
    inputTokens: chunk.prompt_eval_count,
    outputTokens: chunk.eval_count,
    totalTokens: chunk.prompt_eval_count === undefined || chunk.eval_count === undefined
      ? undefined
      : chunk.prompt_eval_count + chunk.eval_count
  }
})

const failed = (method: string, description: string) => new AiError.UnknownError({ module, method, description })

const textId = "ollama"

/** The Ollama chat model as an `@effect/ai` LanguageModel service. */
export const make = Effect.fnUntraced(function*(options: OllamaOptions) {
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest(flow(HttpClientRequest.prependUrl(options.baseUrl), HttpClientRequest.acceptJson)),
    HttpClient.filterStatusOk
  )

  const send = (providerOptions: LanguageModel.ProviderOptions, stream: boolean) =>
    client.execute(
      HttpClientRequest.post("/api/chat").pipe(
        HttpClientRequest.bodyUnsafeJson({ model: options.model, messages: toOllamaMessages(providerOptions.prompt), stream })
      )
    )

  const generateText = (providerOptions: LanguageModel.ProviderOptions) =>
    send(providerOptions, false).pipe(
      Effect.flatMap(HttpClientResponse.schemaBodyJson(ChatChunk)),
      Effect.catchAll(toAiError(module, "generateText")),
      Effect.flatMap((chunk): Effect.Effect<Array<Response.PartEncoded>, AiError.AiError> =>
        chunk.error === undefined
          ? Effect.succeed([{ type: "text", text: chunk.message?.content ?? "" }, finishPart(chunk)])
          : Effect.fail(failed("generateText", chunk.error))
      )
    )

  const streamText = (providerOptions: LanguageModel.ProviderOptions) =>
    send(providerOptions, true).pipe(
      Effect.map((response) => response.stream),
      Stream.unwrapScoped,
      Stream.decodeText(),
      Stream.splitLines,
      Stream.filter((line) => line.trim() !== ""),
      Stream.mapEffect((line) => decodeLine(line)),
      Stream.catchAll((error) => Stream.fromEffect(toAiError(module, "streamText")(error))),
      Stream.mapConcatEffect((chunk): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
        if (chunk.error !== undefined) return Effect.fail(failed("streamText", chunk.error))
        const content = chunk.message?.content
        const delta: Array<Response.StreamPartEncoded> = content ? [{ type: "text-delta", id: textId, delta: content }] : []
        // A cut stream has no `done` line, and so no finish.
        return Effect.succeed(chunk.done === true ? [...delta, { type: "text-end", id: textId }, finishPart(chunk)] : delta)
      }),
      (deltas) => Stream.concat(Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-start", id: textId }), deltas)
    )

  return yield* LanguageModel.make({ generateText, streamText })
})
