/**
 * A LanguageModel over the OpenAI Chat Completions API (`POST {apiUrl}/chat/completions`).
 *
 * `@effect/ai-openai` speaks only the Responses API; older Ollama builds and some gateways serve
 * only Chat Completions, so ModelAccess falls back to this provider. A user's images go as
 * `image_url` content (a data URL for bytes); the agent offers no tools.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import * as Sse from "@effect/experimental/Sse"
import { HttpClient, HttpClientRequest, HttpClientResponse } from "@effect/platform"
import type { HttpClientError } from "@effect/platform"
import { Effect, flow, identity, type ParseResult, type Redacted, Schema, Stream } from "effect"

export interface ChatCompletionsOptions {
  /** Base URL of the OpenAI-compatible API, e.g. http://127.0.0.1:11434/v1. */
  readonly apiUrl: string
  readonly apiKey?: Redacted.Redacted | undefined
  readonly model: string
}

type ChatContent =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "image_url"; readonly image_url: { readonly url: string } }

interface ChatMessage {
  readonly role: "system" | "user" | "assistant"
  readonly content: string | ReadonlyArray<ChatContent>
}

const Usage = Schema.Struct({
  prompt_tokens: Schema.optional(Schema.Number),
  completion_tokens: Schema.optional(Schema.Number),
  total_tokens: Schema.optional(Schema.Number)
})
type Usage = typeof Usage.Type

const FinishReason = Schema.optional(Schema.NullOr(Schema.String))

const ChatCompletion = Schema.Struct({
  choices: Schema.Array(Schema.Struct({
    message: Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) }),
    finish_reason: FinishReason
  })),
  usage: Schema.optional(Schema.NullOr(Usage))
})

const ChatCompletionChunk = Schema.Struct({
  choices: Schema.optional(Schema.Array(Schema.Struct({
    delta: Schema.optional(Schema.Struct({ content: Schema.optional(Schema.NullOr(Schema.String)) })),
    finish_reason: FinishReason
  }))),
  usage: Schema.optional(Schema.NullOr(Usage)),
  // Ollama and LiteLLM report failures that happen mid-stream as a chunk with an error.
  error: Schema.optional(Schema.Struct({ message: Schema.String }))
})
const decodeChunk = Schema.decode(Schema.parseJson(ChatCompletionChunk))

const module = "ChatCompletionsModel"

/** Text of a message's parts; files, reasoning and tool parts have no Chat Completions text. */
const textOf = (content: ReadonlyArray<Prompt.UserMessagePart | Prompt.AssistantMessagePart>): string =>
  content.flatMap((part) => part.type === "text" ? [part.text] : []).join("")

/** An image as `image_url` takes it: its URL, or its bytes as a data URL. */
const imageUrl = (file: Prompt.FilePart): string =>
  file.data instanceof URL
    ? file.data.toString()
    : typeof file.data === "string"
    ? file.data
    : `data:${file.mediaType};base64,${Buffer.from(file.data).toString("base64")}`

/**
 * A user's content: its text alone, a line for each piece (a file's text, data), when it has no
 * image (what every server takes); else text and image pieces.
 */
const userContent = (content: ReadonlyArray<Prompt.UserMessagePart>): ChatMessage["content"] =>
  content.every((part) => part.type === "text")
    ? content.map((part) => part.text).join("\n")
    : content.map((part): ChatContent =>
      part.type === "text" ? { type: "text", text: part.text } : { type: "image_url", image_url: { url: imageUrl(part) } }
    )

const toChatMessages = (prompt: Prompt.Prompt): Array<ChatMessage> =>
  prompt.content.flatMap((message): Array<ChatMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
        return [{ role: "user", content: userContent(message.content) }]
      case "assistant":
        return [{ role: "assistant", content: textOf(message.content) }]
      case "tool":
        return [] // no tools are offered, so there are no tool results to send back
    }
  })

const finishReasons: Record<string, Response.FinishReason> = {
  stop: "stop",
  length: "length",
  content_filter: "content-filter",
  tool_calls: "tool-calls",
  function_call: "tool-calls"
}
export const toFinishReason = (reason: string | null | undefined): Response.FinishReason =>
  reason ? finishReasons[reason] ?? "other" : "unknown"

const finishPart = (reason: string | null | undefined, usage: Usage | null | undefined): Response.FinishPartEncoded => ({
  type: "finish",
  reason: toFinishReason(reason),
  usage: {
    inputTokens: usage?.prompt_tokens,
    outputTokens: usage?.completion_tokens,
    totalTokens: usage?.total_tokens
  }
})

/** Maps transport, status and decoding failures to the AiError family, as @effect/ai-openai does. */
export const toAiError =
  (module: string, method: string) =>
  (error: HttpClientError.HttpClientError | ParseResult.ParseError): Effect.Effect<never, AiError.AiError> => {
    switch (error._tag) {
      case "RequestError":
        return Effect.fail(AiError.HttpRequestError.fromRequestError({ module, method, error }))
      case "ResponseError":
        return AiError.HttpResponseError.fromResponseError({ module, method, error })
      case "ParseError":
        return Effect.fail(AiError.MalformedOutput.fromParseError({ module, method, error }))
    }
  }

const textId = "chat"

/** The Chat Completions model as an `@effect/ai` LanguageModel service. */
export const make = Effect.fnUntraced(function*(options: ChatCompletionsOptions) {
  const client = (yield* HttpClient.HttpClient).pipe(
    HttpClient.mapRequest(flow(
      HttpClientRequest.prependUrl(options.apiUrl),
      options.apiKey ? HttpClientRequest.bearerToken(options.apiKey) : identity,
      HttpClientRequest.acceptJson
    )),
    HttpClient.filterStatusOk
  )

  const send = (providerOptions: LanguageModel.ProviderOptions, stream: boolean) =>
    client.execute(
      HttpClientRequest.post("/chat/completions").pipe(
        HttpClientRequest.bodyUnsafeJson({
          model: options.model,
          messages: toChatMessages(providerOptions.prompt),
          stream
        })
      )
    )

  const generateText = (providerOptions: LanguageModel.ProviderOptions) =>
    send(providerOptions, false).pipe(
      Effect.flatMap(HttpClientResponse.schemaBodyJson(ChatCompletion)),
      Effect.map((completion): Array<Response.PartEncoded> => {
        const choice = completion.choices[0]
        return [
          { type: "text", text: choice?.message.content ?? "" },
          finishPart(choice?.finish_reason, completion.usage)
        ]
      }),
      Effect.catchAll(toAiError(module, "generateText"))
    )

  const streamText = (providerOptions: LanguageModel.ProviderOptions) =>
    Stream.suspend(() => {
      // The finish reason and usage arrive in the last chunks; remember them for the finish part,
      // which is only sent when the server said it was done (a cut stream has no finish).
      let finishReason: string | null | undefined
      let usage: Usage | null | undefined
      let done = false
      const deltas = send(providerOptions, true).pipe(
        Effect.map((response) => response.stream),
        Stream.unwrapScoped,
        Stream.decodeText(),
        Stream.pipeThroughChannel(Sse.makeChannel()),
        Stream.takeWhile((event) => {
          done = event.data.trim() === "[DONE]"
          return !done
        }),
        Stream.mapEffect((event) => decodeChunk(event.data)),
        Stream.catchAll((error) => Stream.fromEffect(toAiError(module, "streamText")(error))),
        Stream.mapConcatEffect((chunk): Effect.Effect<Array<Response.StreamPartEncoded>, AiError.AiError> => {
          if (chunk.error) {
            return new AiError.UnknownError({ module, method: "streamText", description: chunk.error.message })
          }
          const choice = chunk.choices?.[0]
          finishReason = choice?.finish_reason ?? finishReason
          usage = chunk.usage ?? usage
          const content = choice?.delta?.content
          return Effect.succeed(content ? [{ type: "text-delta", id: textId, delta: content }] : [])
        })
      )
      return Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-start", id: textId }).pipe(
        Stream.concat(deltas),
        Stream.concat(Stream.suspend(() =>
          done || finishReason
            ? Stream.make<Array<Response.StreamPartEncoded>>({ type: "text-end", id: textId }, finishPart(finishReason, usage))
            : Stream.empty
        ))
      )
    })

  return yield* LanguageModel.make({ generateText, streamText })
})
