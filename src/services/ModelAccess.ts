/**
 * The language model behind the local agent server (`relay server agent --model …`).
 *
 * `selectModel` chooses a model (flag, RELAY_MODEL, a running Ollama, a configured gateway, else the
 * built-in echo; the built-in mock only when asked for); `ModelAccess.layer(selection)` builds an
 * `@effect/ai` LanguageModel for it and exposes plain text generation and streaming with typed
 * errors and timeouts, and a task's turn (domain/agentTurn): text models answer and complete, the
 * mock model steers the task. OpenAI-compatible servers are spoken to through the Responses API,
 * falling back to Chat Completions for servers that lack `/responses`; Ollama through its own chat
 * API. What a model receives of a message's files and data is modelProviders/modelInput.ts.
 */
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import * as Prompt from "@effect/ai/Prompt"
import type * as Response from "@effect/ai/Response"
import { HttpClient, HttpClientResponse } from "@effect/platform"
import { Config, Context, Duration, Effect, Either, Layer, Option, Redacted, Ref, Schema, Stream } from "effect"
import type * as V1 from "../a2a/v1.js"
import { type ModelModes, textTurn, type TurnIo, type TurnOutcome } from "../domain/agentTurn.js"
import { InvalidModelSetting, InvalidModelSpec, ModelError, ModelSettingMissing, type ModelSpecError } from "../domain/modelErrors.js"
import { redactUrl } from "../domain/secrets.js"
import * as ChatCompletionsModel from "./modelProviders/chatCompletions.js"
import * as EchoModel from "./modelProviders/echo.js"
import * as MockModel from "./modelProviders/mock.js"
import * as ModelInput from "./modelProviders/modelInput.js"
import * as OllamaModel from "./modelProviders/ollama.js"

// ---------------------------------------------------------------------------------------------
// Model specs
// ---------------------------------------------------------------------------------------------

export type ModelProvider = "echo" | "mock" | "ollama" | "openai" | "gateway"
/** Models that run inside relay and take no name. */
export type BuiltInProvider = "echo" | "mock"
type ServerProvider = Exclude<ModelProvider, BuiltInProvider>

/** A parsed `--model` value. */
export interface ModelSpec {
  readonly provider: ModelProvider
  /** The model's name at its provider; "echo" or "mock" for the built-in models. */
  readonly name: string
  /** The canonical spelling, e.g. "echo" or "ollama:llama3.2:1b". */
  readonly text: string
}

export const modelSpec = (provider: ServerProvider, name: string): ModelSpec => ({
  provider,
  name,
  text: `${provider}:${name}`
})

export const echoSpec: ModelSpec = { provider: "echo", name: "echo", text: "echo" }
export const mockSpec: ModelSpec = { provider: "mock", name: "mock", text: "mock" }
const builtInSpecs: Record<BuiltInProvider, ModelSpec> = { echo: echoSpec, mock: mockSpec }
const isBuiltIn = (name: string): name is BuiltInProvider => name in builtInSpecs

/** The chosen model and, in words, why it was chosen; the agent server prints both at start-up. */
export interface ModelSelection {
  readonly spec: ModelSpec
  readonly reason: string
}

const examples: Record<ServerProvider, string> = {
  ollama: "ollama:llama3.2:1b",
  openai: "openai:gpt-4o-mini",
  gateway: "gateway:gpt-4o-mini"
}

const isServerProvider = (prefix: string): prefix is ServerProvider => prefix in examples

/** Parses "echo", "mock", "ollama:<name>", "openai:<name>" or "gateway:<name>" (names may contain colons). */
export const parseModelSpec = (text: string): Either.Either<ModelSpec, InvalidModelSpec> => {
  const spec = text.trim()
  const invalid = (reason: string, suggestion: string) => Either.left(new InvalidModelSpec({ spec: text, reason, suggestion }))
  if (spec === "") return invalid("it is empty", "Give a model, for example --model echo.")
  if (isBuiltIn(spec)) return Either.right(builtInSpecs[spec])
  const colon = spec.indexOf(":")
  if (colon < 0) {
    return invalid("it has no provider prefix", `Did you mean "ollama:${spec}"?`)
  }
  const prefix = spec.slice(0, colon)
  const name = spec.slice(colon + 1).trim()
  if (isBuiltIn(prefix)) return invalid(`${prefix} takes no model name`, `Write just "${prefix}".`)
  if (!isServerProvider(prefix)) {
    return invalid(`unknown provider "${prefix}"`, "Start the value with ollama:, openai: or gateway:, or write echo or mock.")
  }
  if (name === "") {
    return invalid(`the model name after "${prefix}:" is empty`, `Write it like ${examples[prefix]}.`)
  }
  return Either.right(modelSpec(prefix, name))
}

// ---------------------------------------------------------------------------------------------
// Settings from the environment
// ---------------------------------------------------------------------------------------------

const defaultOllamaHost = "http://127.0.0.1:11434"
const defaultOpenAiUrl = "https://api.openai.com/v1"
/** Used for `gateway:` when RELAY_GATEWAY_MODEL is not set; LiteLLM setups commonly route it. */
export const defaultGatewayModel = "gpt-4o-mini"
/** The small model auto-selection prefers on a running Ollama. */
export const preferredOllamaModel = "llama3.2:1b"
const defaultRequestTimeout = Duration.seconds(120)
/** A local Ollama answers /api/tags in milliseconds; waiting longer only delays start-up. */
const defaultOllamaProbeTimeout = Duration.seconds(1)

/** A setting that is absent or blank is "not set". */
const optionalSetting = (name: string): Effect.Effect<Option.Option<string>> =>
  Config.option(Config.string(name)).pipe(
    Effect.map(Option.filterMap((value) => value.trim() === "" ? Option.none() : Option.some(value.trim()))),
    Effect.orDie // a string setting can only be missing, which Config.option already absorbs
  )

const millisSetting = (name: string): Effect.Effect<Option.Option<Duration.Duration>, InvalidModelSetting> =>
  Effect.flatMap(optionalSetting(name), (value) => {
    if (Option.isNone(value)) return Effect.succeedNone
    const millis = Number(value.value)
    return Number.isInteger(millis) && millis >= 0
      ? Effect.succeedSome(Duration.millis(millis))
      : new InvalidModelSetting({ setting: name, value: value.value, reason: "it must be a whole number of milliseconds" })
  })

const withoutTrailingSlash = (url: string) => url.replace(/\/+$/, "")

/**
 * Normalizes OLLAMA_HOST the way Ollama does: a bare `host` or `host:port` means http, and a
 * bare host without a port means port 11434.
 */
export const ollamaBaseUrl = (host: string | undefined): Either.Either<string, InvalidModelSetting> => {
  const value = host?.trim() ?? ""
  if (value === "") return Either.right(defaultOllamaHost)
  const hasScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(value)
  try {
    const url = new URL(hasScheme ? value : `http://${value}`)
    const authority = value.split("/")[0] ?? ""
    if (!hasScheme && !/:\d+$/.test(authority)) url.port = "11434"
    return Either.right(withoutTrailingSlash(`${url.protocol}//${url.host}${url.pathname}`))
  } catch {
    return Either.left(new InvalidModelSetting({ setting: "OLLAMA_HOST", value, reason: "it is not a host or URL" }))
  }
}

const ollamaHost = Effect.flatMap(optionalSetting("OLLAMA_HOST"), (host) => ollamaBaseUrl(Option.getOrUndefined(host)))

/** Where an OpenAI-compatible model is served, and the key to send (if any). */
interface Endpoint {
  readonly apiUrl: string
  readonly apiKey: Redacted.Redacted | undefined
}

const requiredSetting = (spec: ModelSpec, setting: string, purpose: string) =>
  Effect.flatMap(optionalSetting(setting), (value) =>
    Option.match(value, {
      onNone: () => Effect.fail(new ModelSettingMissing({ spec: spec.text, setting, purpose })),
      onSome: Effect.succeed
    }))

const redactedSetting = (name: string) =>
  Effect.map(optionalSetting(name), (value) => Option.getOrUndefined(Option.map(value, Redacted.make)))

/** Reads the URL and key a server-backed model needs; fails when a required one is missing. */
const resolveEndpoint = (spec: ModelSpec): Effect.Effect<Endpoint, ModelSettingMissing | InvalidModelSetting> => {
  switch (spec.provider) {
    case "echo":
    case "mock":
      return Effect.succeed({ apiUrl: "", apiKey: undefined })
    case "ollama":
      return Effect.map(ollamaHost, (host) => ({ apiUrl: host, apiKey: undefined }))
    case "openai":
      return Effect.gen(function*() {
        const key = yield* requiredSetting(spec, "OPENAI_API_KEY", "the OpenAI API key")
        const url = yield* optionalSetting("OPENAI_BASE_URL")
        return { apiUrl: withoutTrailingSlash(Option.getOrElse(url, () => defaultOpenAiUrl)), apiKey: Redacted.make(key) }
      })
    case "gateway":
      return Effect.gen(function*() {
        const url = yield* requiredSetting(
          spec,
          "RELAY_GATEWAY_URL",
          "the base URL of an OpenAI-compatible gateway such as LiteLLM"
        )
        return { apiUrl: withoutTrailingSlash(url), apiKey: yield* redactedSetting("RELAY_GATEWAY_KEY") }
      })
  }
}

// ---------------------------------------------------------------------------------------------
// Selection
// ---------------------------------------------------------------------------------------------

const OllamaTags = Schema.Struct({ models: Schema.Array(Schema.Struct({ name: Schema.String })) })

/** The names of the models a running Ollama has, or none when nothing answers in time. */
const probeOllama = (
  baseUrl: string,
  timeout: Duration.DurationInput
): Effect.Effect<Option.Option<ReadonlyArray<string>>, never, HttpClient.HttpClient> =>
  Effect.flatMap(HttpClient.HttpClient, (client) =>
    HttpClient.filterStatusOk(client).get(`${baseUrl}/api/tags`).pipe(
      Effect.flatMap(HttpClientResponse.schemaBodyJson(OllamaTags)),
      Effect.map((tags) => tags.models.map((model) => model.name)),
      Effect.timeout(timeout),
      Effect.option
    ))

const validated = (text: string, reason: string, source: string) =>
  Effect.gen(function*() {
    const spec = yield* parseModelSpec(text).pipe(
      Either.mapLeft((error) => new InvalidModelSpec({ ...error, reason: `${error.reason} (from ${source})` }))
    )
    yield* resolveEndpoint(spec)
    return { spec, reason }
  })

const fromOllama = (host: string, models: ReadonlyArray<string>): Option.Option<ModelSelection> => {
  if (models.includes(preferredOllamaModel)) {
    return Option.some({
      spec: modelSpec("ollama", preferredOllamaModel),
      reason: `found a running Ollama at ${host} with ${preferredOllamaModel}`
    })
  }
  return Option.map(Option.fromNullable(models[0]), (first) => ({
    spec: modelSpec("ollama", first),
    reason: `found a running Ollama at ${host} without ${preferredOllamaModel}; using its first model, ${first}`
  }))
}

export interface SelectOptions {
  /** How long to wait for a running Ollama's model list. Default 1 s. */
  readonly ollamaProbeTimeout?: Duration.DurationInput | undefined
}

/**
 * Chooses the model: the `--model` value, else RELAY_MODEL, else a running Ollama (its
 * llama3.2:1b or first model), else the gateway at RELAY_GATEWAY_URL, else the built-in echo.
 * An explicit value is validated, including the settings it needs.
 */
export const selectModel = (
  explicit?: string | undefined,
  options: SelectOptions = {}
): Effect.Effect<ModelSelection, ModelSpecError, HttpClient.HttpClient> =>
  Effect.gen(function*() {
    if (explicit !== undefined) return yield* validated(explicit, "chosen with --model", "--model")
    const fromEnv = yield* optionalSetting("RELAY_MODEL")
    if (Option.isSome(fromEnv)) return yield* validated(fromEnv.value, "chosen by RELAY_MODEL", "RELAY_MODEL")

    const host = yield* ollamaHost
    const probed = yield* probeOllama(host, options.ollamaProbeTimeout ?? defaultOllamaProbeTimeout)
    const ollama = Option.flatMap(probed, (models) => fromOllama(host, models))
    if (Option.isSome(ollama)) return ollama.value

    const gatewayUrl = yield* optionalSetting("RELAY_GATEWAY_URL")
    if (Option.isSome(gatewayUrl)) {
      const model = yield* optionalSetting("RELAY_GATEWAY_MODEL")
      const name = Option.getOrElse(model, () => defaultGatewayModel)
      const modelReason = Option.isSome(model)
        ? "model from RELAY_GATEWAY_MODEL"
        : "RELAY_GATEWAY_MODEL is not set, so the default model"
      return {
        spec: modelSpec("gateway", name),
        reason: `RELAY_GATEWAY_URL is set (${redactUrl(gatewayUrl.value)}); ${modelReason}`
      }
    }

    return {
      spec: echoSpec,
      reason: `no --model, no RELAY_MODEL, no Ollama answering at ${host} and no RELAY_GATEWAY_URL; ` +
        "the built-in echo model repeats each message"
    }
  })

// ---------------------------------------------------------------------------------------------
// Text generation over a LanguageModel
// ---------------------------------------------------------------------------------------------

/** Text in, text out: the part of a LanguageModel the agent server needs. */
interface TextModel {
  readonly generate: (prompt: Prompt.Prompt) => Effect.Effect<string, AiError.AiError>
  readonly stream: (prompt: Prompt.Prompt) => Stream.Stream<string, AiError.AiError>
}

/** A provider reported a failure inside the stream (an "error" part) rather than failing it. */
const streamPartError = (error: unknown): AiError.AiError =>
  new AiError.UnknownError({
    module: "ModelAccess",
    method: "stream",
    description: rootMessage(error) ?? JSON.stringify(error) ?? "the model reported an error"
  })

/**
 * Text generation over a LanguageModel. With `requireAnswer`, a stream that ends with neither a
 * delta nor a finish part fails: a server that answered with something other than the expected
 * event stream would otherwise look like an empty answer.
 */
const textModel = (model: LanguageModel.Service, options: { readonly requireAnswer: boolean }): TextModel => ({
  generate: (prompt) => Effect.map(model.generateText({ prompt }), (response) => response.text),
  stream: (prompt) =>
    Stream.suspend(() => {
      let answered = false
      const noAnswer = Stream.suspend(() =>
        answered || !options.requireAnswer
          ? Stream.empty
          : Stream.fail(
            new AiError.UnknownError({
              module: "ModelAccess",
              method: "stream",
              description: "the stream ended without an answer; is this an OpenAI-compatible server?"
            })
          )
      )
      return model.streamText({ prompt }).pipe(
        // @effect/ai's parts of a model called without tools: its toolkit type is `{}`.
        // eslint-disable-next-line @typescript-eslint/no-empty-object-type
        Stream.mapConcatEffect((part: Response.StreamPart<{}>) => {
          if (part.type === "text-delta" || part.type === "finish") answered = true
          if (part.type === "text-delta") return Effect.succeed(part.delta === "" ? [] : [part.delta])
          if (part.type === "error") return Effect.fail(streamPartError(part.error))
          return Effect.succeed([])
        }),
        Stream.concat(noAnswer)
      )
    })
})

/** The server has no Responses API: 404 or 405 on `/responses`. */
const lacksResponsesApi = (error: AiError.AiError) =>
  error._tag === "HttpResponseError" && error.reason === "StatusCode" &&
  (error.response.status === 404 || error.response.status === 405)

/**
 * Uses the Responses API until the server answers 404/405 on it; from then on, for the life of
 * this service, Chat Completions.
 */
const withChatFallback = (responses: TextModel, chat: TextModel): Effect.Effect<TextModel> =>
  Effect.map(Ref.make(false), (useChat) => {
    const switchToChat = Ref.set(useChat, true)
    return {
      generate: (prompt) =>
        Effect.flatMap(Ref.get(useChat), (chatOnly) =>
          chatOnly ? chat.generate(prompt) : responses.generate(prompt).pipe(
            Effect.catchIf(lacksResponsesApi, () => Effect.zipRight(switchToChat, chat.generate(prompt)))
          )),
      stream: (prompt) =>
        Stream.unwrap(Effect.map(Ref.get(useChat), (chatOnly) =>
          chatOnly ? chat.stream(prompt) : responses.stream(prompt).pipe(
            // A missing endpoint fails before the first delta, so nothing is emitted twice.
            Stream.catchAll((error) =>
              lacksResponsesApi(error) ? Stream.unwrap(Effect.as(switchToChat, chat.stream(prompt))) : Stream.fail(error)
            )
          )))
    }
  })

/** Responses (through @effect/ai-openai, loaded only when needed: it is large) with the Chat fallback. */
const openAiCompatible = (spec: ModelSpec, endpoint: Endpoint) =>
  Effect.gen(function*() {
    const [OpenAiClient, OpenAiLanguageModel] = yield* Effect.promise(() =>
      Promise.all([import("@effect/ai-openai/OpenAiClient"), import("@effect/ai-openai/OpenAiLanguageModel")])
    )
    const clientLayer = OpenAiClient.layer({ apiUrl: endpoint.apiUrl, apiKey: endpoint.apiKey })
    const responsesContext = yield* Layer.build(
      OpenAiLanguageModel.layer({ model: spec.name }).pipe(Layer.provide(clientLayer))
    )
    const chat = yield* ChatCompletionsModel.make({ ...endpoint, model: spec.name })
    return yield* withChatFallback(
      textModel(Context.get(responsesContext, LanguageModel.LanguageModel), { requireAnswer: true }),
      textModel(chat, { requireAnswer: true })
    )
  })

/** Ollama's own chat API, which takes images in its `images` field. */
const ollamaChat = (spec: ModelSpec, endpoint: Endpoint) =>
  Effect.map(OllamaModel.make({ baseUrl: endpoint.apiUrl, model: spec.name }), (model) => textModel(model, { requireAnswer: true }))

/** The language model of a server-backed spec. */
const serverModel = (spec: ModelSpec, endpoint: Endpoint) =>
  spec.provider === "ollama" ? ollamaChat(spec, endpoint) : openAiCompatible(spec, endpoint)

// ---------------------------------------------------------------------------------------------
// Errors in words
// ---------------------------------------------------------------------------------------------

/** One line of at most `max` characters: reasons end up in task status messages. */
const oneLine = (text: string, max = 300) => {
  const line = text.replace(/\s+/g, " ").trim()
  return line.length > max ? `${line.slice(0, max)}…` : line
}

/** The innermost message of an error chain, e.g. "connect ECONNREFUSED 127.0.0.1:9". */
const rootMessage = (error: unknown): string | undefined => {
  let current: unknown = error
  let message: string | undefined
  for (let depth = 0; depth < 10 && typeof current === "object" && current !== null; depth++) {
    if ("message" in current && typeof current.message === "string" && current.message !== "") message = current.message
    current = "cause" in current ? current.cause : undefined
  }
  return message
}

/** The useful part of an error body: `error.message` of a JSON error, else the text itself. */
const bodySummary = (body: string | undefined): string => {
  if (body === undefined) return ""
  try {
    const parsed: unknown = JSON.parse(body)
    if (typeof parsed === "string") return parsed
    const error = typeof parsed === "object" && parsed !== null && "error" in parsed ? parsed.error : undefined
    if (typeof error === "string") return error
    if (typeof error === "object" && error !== null && "message" in error && typeof error.message === "string") {
      return error.message
    }
    return JSON.stringify(parsed)
  } catch {
    return body
  }
}

const describeAiError = (error: AiError.AiError): string => {
  switch (error._tag) {
    case "HttpRequestError":
      return `cannot reach ${error.request.url}: ${rootMessage(error.cause) ?? error.description ?? error.reason}`
    case "HttpResponseError": {
      const where = `${error.request.method} ${error.request.url}`
      if (error.reason !== "StatusCode") {
        return `unreadable answer to ${where}: ${error.description ?? error.reason}`
      }
      const summary = bodySummary(error.body)
      return `${where} answered HTTP ${error.response.status}${summary === "" ? "" : `: ${oneLine(summary)}`}`
    }
    case "MalformedOutput":
      return `the model server's answer does not match the API: ${oneLine(error.description ?? rootMessage(error.cause) ?? "")}`
    case "MalformedInput":
      return `the prompt cannot be sent: ${error.description ?? "unsupported content"}`
    case "UnknownError":
      return error.description ?? error.message
  }
}

// ---------------------------------------------------------------------------------------------
// The service
// ---------------------------------------------------------------------------------------------

export interface ModelAccessService {
  readonly spec: ModelSpec
  /** Why this model was chosen, in words. */
  readonly reason: string
  /** The whole answer to a prompt (a string, or messages with roles for earlier turns). */
  readonly generate: (prompt: Prompt.RawInput) => Effect.Effect<string, ModelError>
  /** The answer as text deltas, in order. */
  readonly stream: (prompt: Prompt.RawInput) => Stream.Stream<string, ModelError>
  /** One turn of a task: emits the answer (and any other artifacts) and says how the turn ends. */
  readonly turn: (prompt: Prompt.RawInput, io: TurnIo) => Effect.Effect<TurnOutcome, ModelError>
  /** What the model takes and gives, for the card (see ModelModes). */
  readonly modes: ModelModes
  /** The skills the agent card lists for this model; none: the card's general chat skill. */
  readonly skills?: ReadonlyArray<V1.AgentSkill> | undefined
}

export interface ModelAccessOptions {
  /**
   * Longest wait for a whole answer (generate) or for the next delta (stream).
   * Default: RELAY_MODEL_TIMEOUT_MS, else 120 s.
   */
  readonly requestTimeout?: Duration.DurationInput | undefined
  /** Pause before each echo word. Default: RELAY_ECHO_DELAY_MS, else 5 ms. */
  readonly echoDelay?: Duration.DurationInput | undefined
}

const makeService = (selection: ModelSelection, model: TextModel, requestTimeout: Duration.Duration): ModelAccessService => {
  const failure = (reason: string) => new ModelError({ model: selection.spec.text, reason })
  const timedOut = () => failure(`no answer within ${Duration.format(requestTimeout)}`)
  const toModelError = (error: AiError.AiError) => failure(describeAiError(error))
  const toPrompt = (input: Prompt.RawInput) =>
    Effect.try({
      try: () => Prompt.make(input),
      catch: (error) => failure(`invalid prompt: ${oneLine(rootMessage(error) ?? "not a prompt")}`)
    })

  const answers = {
    generate: (input: Prompt.RawInput) =>
      toPrompt(input).pipe(
        Effect.flatMap((prompt) => Effect.mapError(model.generate(prompt), toModelError)),
        Effect.timeoutFail({ duration: requestTimeout, onTimeout: timedOut })
      ),
    stream: (input: Prompt.RawInput) =>
      Stream.unwrap(Effect.map(toPrompt(input), (prompt) => Stream.mapError(model.stream(prompt), toModelError))).pipe(
        Stream.timeoutFail(timedOut, requestTimeout)
      )
  }
  return ModelAccess.of({
    spec: selection.spec,
    reason: selection.reason,
    ...answers,
    turn: textTurn(answers),
    modes: ModelInput.languageModelModes
  })
}

const requestTimeoutFrom = (options: ModelAccessOptions) =>
  options.requestTimeout === undefined
    ? Effect.map(millisSetting("RELAY_MODEL_TIMEOUT_MS"), Option.getOrElse(() => defaultRequestTimeout))
    : Effect.succeed(Duration.decode(options.requestTimeout))

/** A built-in model's service: echo, or the scriptable mock. */
const builtInService = (selection: ModelSelection, provider: BuiltInProvider, options: ModelAccessOptions) =>
  Effect.gen(function*() {
    // The built-in models cannot hang or fail, so they need no timeout race (see EchoModel.answers).
    const delay = options.echoDelay ?? Option.getOrUndefined(yield* millisSetting("RELAY_ECHO_DELAY_MS"))
    const model = provider === "mock" ? MockModel.make({ delay }) : EchoModel.make({ delay })
    return ModelAccess.of({ spec: selection.spec, reason: selection.reason, ...model })
  })

/** Gives the agent server its model: `generate`, `stream` and `turn` over a selected LanguageModel or a built-in model. */
export class ModelAccess extends Context.Tag("relay/ModelAccess")<ModelAccess, ModelAccessService>() {
  /**
   * Builds the selected model (see selectModel). Server models are reached over the HttpClient
   * of the context. Fails at build time with a ModelSpecError when its settings are unusable.
   */
  static readonly layer = (
    selection: ModelSelection,
    options: ModelAccessOptions = {}
  ): Layer.Layer<ModelAccess, ModelSpecError, HttpClient.HttpClient> =>
    Layer.scoped(
      ModelAccess,
      Effect.gen(function*() {
        // Read even for echo, so a bad setting is reported before a server model is configured.
        const timeout = yield* requestTimeoutFrom(options)
        const { provider } = selection.spec
        if (isBuiltIn(provider)) return yield* builtInService(selection, provider, options)
        return makeService(selection, yield* serverModel(selection.spec, yield* resolveEndpoint(selection.spec)), timeout)
      })
    )

  /** A built-in model (echo or mock), which needs no HTTP client. */
  static readonly builtIn = (
    provider: BuiltInProvider,
    reason: string,
    options: Pick<ModelAccessOptions, "echoDelay"> = {}
  ): Layer.Layer<ModelAccess, InvalidModelSetting> =>
    Layer.effect(ModelAccess, builtInService({ spec: builtInSpecs[provider], reason }, provider, options))

  /** ModelAccess over a given LanguageModel (tests provide a mocked one). */
  static readonly fromLanguageModel = (
    spec: ModelSpec,
    reason: string,
    options: Pick<ModelAccessOptions, "requestTimeout"> = {}
  ): Layer.Layer<ModelAccess, never, LanguageModel.LanguageModel> =>
    Layer.effect(
      ModelAccess,
      Effect.map(LanguageModel.LanguageModel, (model) => {
        const timeout = Duration.decode(options.requestTimeout ?? defaultRequestTimeout)
        return makeService({ spec, reason }, textModel(model, { requireAnswer: false }), timeout)
      })
    )
}
