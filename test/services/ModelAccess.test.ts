import { ResponseStreamEvent } from "@effect/ai-openai/OpenAiClient"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { describe, expect, it } from "@effect/vitest"
import { Chunk, ConfigProvider, Effect, Either, Exit, Layer, Schema, Stream } from "effect"
import {
  defaultGatewayModel,
  echoSpec,
  ModelAccess,
  type ModelAccessOptions,
  modelSpec,
  ollamaBaseUrl,
  parseModelSpec,
  selectModel,
  type SelectOptions
} from "../../src/services/ModelAccess.js"
import { splitWords } from "../../src/services/modelProviders/echo.js"
import {
  chatChunk,
  chatOnlyServer,
  closedPort,
  type Handler,
  notFound,
  ollamaChatServer,
  responseEvents,
  responsesServer,
  sendJson,
  sendSse,
  startServer
} from "../helpers/fakeModelServer.js"

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

const withEnv = (env: Record<string, string>) => <A, E, R>(self: Effect.Effect<A, E, R>) =>
  Effect.withConfigProvider(self, ConfigProvider.fromMap(new Map(Object.entries(env))))

/** Runs `body` against the model selectModel(spec) chooses, built with `env` as its whole environment. */
const withModel = <A, E>(
  spec: string | undefined,
  env: Record<string, string>,
  body: (model: typeof ModelAccess.Service) => Effect.Effect<A, E>,
  options: ModelAccessOptions & SelectOptions = {}
) =>
  Effect.flatMap(
    selectModel(spec, options),
    (selection) => Effect.flatMap(ModelAccess, body).pipe(Effect.provide(ModelAccess.layer(selection, options)))
  ).pipe(
    Effect.provide(NodeHttpClient.layerUndici),
    withEnv(env)
  )

const collect = <A, E>(stream: Stream.Stream<A, E>) => Effect.map(Stream.runCollect(stream), Chunk.toArray)

const select = (explicit: string | undefined, env: Record<string, string>, options: SelectOptions = {}) =>
  selectModel(explicit, options).pipe(Effect.provide(NodeHttpClient.layerUndici), withEnv(env))

const conversation: Prompt.RawInput = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello." },
  { role: "user", content: [{ type: "text", text: "Say it again" }] }
]

/** `conversation` as a chat API receives it (Chat Completions and Ollama alike). */
const conversationAsChat = [
  { role: "system", content: "You are terse." },
  { role: "user", content: "Hi" },
  { role: "assistant", content: "Hello." },
  { role: "user", content: "Say it again" }
]

const failureOf = <E>(exit: Exit.Exit<unknown, E>): E => {
  if (Exit.isSuccess(exit)) throw new Error("expected a failure, got a success")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  if (failure === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return failure
}

// ---------------------------------------------------------------------------------------------
// Tests
// ---------------------------------------------------------------------------------------------

describe("parseModelSpec", () => {
  it.each([
    ["echo", echoSpec],
    ["  echo ", echoSpec],
    ["ollama:llama3.2:1b", { provider: "ollama", name: "llama3.2:1b", text: "ollama:llama3.2:1b" }],
    ["openai:gpt-4o-mini", { provider: "openai", name: "gpt-4o-mini", text: "openai:gpt-4o-mini" }],
    ["gateway:claude-3-5-haiku", { provider: "gateway", name: "claude-3-5-haiku", text: "gateway:claude-3-5-haiku" }]
  ])("%j", (text, expected) => {
    expect(parseModelSpec(text)).toEqual(Either.right(expected))
  })

  it.each([
    ["", "it is empty"],
    ["llama3.2", "no provider prefix"],
    ["foo:bar", `unknown provider "foo"`],
    ["ollama:", `the model name after "ollama:" is empty`],
    ["openai:  ", `the model name after "openai:" is empty`],
    ["echo:x", "echo takes no model name"]
  ])("rejects %j", (text, reason) => {
    const result = parseModelSpec(text)
    if (Either.isRight(result)) throw new Error("expected a rejection")
    expect(result.left._tag).toBe("InvalidModelSpec")
    expect(result.left.code).toBe("invalid_model_spec")
    expect(result.left.message).toContain(reason)
    expect(result.left.hint).toContain("ollama:<name>")
  })

  it("suggests the ollama prefix for a bare model name", () => {
    const result = parseModelSpec("llama3.2")
    expect(Either.isLeft(result) && result.left.hint).toContain(`"ollama:llama3.2"`)
  })
})

describe("ollamaBaseUrl", () => {
  it.each([
    [undefined, "http://127.0.0.1:11434"],
    ["127.0.0.1:11434", "http://127.0.0.1:11434"],
    ["localhost", "http://localhost:11434"],
    ["0.0.0.0:9999", "http://0.0.0.0:9999"],
    ["http://ollama.internal:8080/", "http://ollama.internal:8080"],
    ["https://ollama.example", "https://ollama.example"]
  ])("%j → %s", (host, expected) => {
    expect(ollamaBaseUrl(host)).toEqual(Either.right(expected))
  })

  it("rejects a value that is not a host", () => {
    const result = ollamaBaseUrl("http://exa mple:x")
    expect(Either.isLeft(result) && result.left.code).toBe("invalid_model_setting")
  })
})

describe("selectModel", () => {
  const tagsServer = (models: ReadonlyArray<string>): Handler => (request, res) =>
    request.path === "/api/tags"
      ? sendJson(res, 200, { models: models.map((name) => ({ name, model: name, size: 1 })) })
      : notFound(res)

  it.scopedLive("prefers llama3.2:1b on a running Ollama (host given without scheme)", () =>
    Effect.gen(function*() {
      const ollama = yield* startServer(tagsServer(["qwen2.5:0.5b", "llama3.2:1b"]))
      const host = ollama.url.replace("http://", "")
      const selection = yield* select(undefined, { OLLAMA_HOST: host, RELAY_GATEWAY_URL: "http://127.0.0.1:1" })
      expect(selection.spec).toEqual(modelSpec("ollama", "llama3.2:1b"))
      expect(selection.reason).toBe(`found a running Ollama at ${ollama.url} with llama3.2:1b`)
      expect(ollama.paths()).toEqual(["GET /api/tags"])
    }))

  it.scopedLive("takes Ollama's first model when llama3.2:1b is not pulled", () =>
    Effect.gen(function*() {
      const ollama = yield* startServer(tagsServer(["qwen2.5:0.5b", "phi3:mini"]))
      const selection = yield* select(undefined, { OLLAMA_HOST: ollama.url })
      expect(selection.spec.text).toBe("ollama:qwen2.5:0.5b")
      expect(selection.reason).toContain("qwen2.5:0.5b")
      expect(selection.reason).toContain(ollama.url)
    }))

  it.scopedLive("skips an Ollama without models, then uses the configured gateway", () =>
    Effect.gen(function*() {
      const ollama = yield* startServer(tagsServer([]))
      const env = { OLLAMA_HOST: ollama.url, RELAY_GATEWAY_URL: "http://127.0.0.1:4000" }
      const byDefault = yield* select(undefined, env)
      expect(byDefault.spec).toEqual(modelSpec("gateway", defaultGatewayModel))
      expect(byDefault.reason).toContain("RELAY_GATEWAY_URL is set (http://127.0.0.1:4000)")
      const named = yield* select(undefined, { ...env, RELAY_GATEWAY_MODEL: "claude-haiku" })
      expect(named.spec.text).toBe("gateway:claude-haiku")
    }))

  it.scopedLive("falls back to echo when nothing is configured or running", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const selection = yield* select(undefined, { OLLAMA_HOST: `127.0.0.1:${port}` })
      expect(selection.spec).toEqual(echoSpec)
      expect(selection.reason).toContain(`no Ollama answering at http://127.0.0.1:${port}`)
    }))

  it.scopedLive("gives up on an Ollama that does not answer in time", () =>
    Effect.gen(function*() {
      const silent = yield* startServer(() => {/* never answers */})
      const started = Date.now()
      const selection = yield* select(undefined, { OLLAMA_HOST: silent.url }, { ollamaProbeTimeout: "200 millis" })
      expect(selection.spec).toEqual(echoSpec)
      expect(Date.now() - started).toBeGreaterThanOrEqual(190)
      expect(Date.now() - started).toBeLessThan(1_000)
      expect(silent.paths()).toEqual(["GET /api/tags"])
    }))

  it.scopedLive("RELAY_MODEL wins over a running Ollama; --model wins over RELAY_MODEL", () =>
    Effect.gen(function*() {
      const ollama = yield* startServer(tagsServer(["llama3.2:1b"]))
      const env = { OLLAMA_HOST: ollama.url, RELAY_MODEL: "openai:gpt-4o-mini", OPENAI_API_KEY: "sk-test" }
      const fromEnv = yield* select(undefined, env)
      expect(fromEnv).toEqual({ spec: modelSpec("openai", "gpt-4o-mini"), reason: "chosen by RELAY_MODEL" })
      const fromFlag = yield* select("echo", env)
      expect(fromFlag).toEqual({ spec: echoSpec, reason: "chosen with --model" })
      expect(ollama.requests).toHaveLength(0)
    }))

  it.effect("rejects a bad --model value and missing settings with typed errors", () =>
    Effect.gen(function*() {
      const unknown = failureOf(yield* Effect.exit(select("foo:bar", {})))
      expect(unknown._tag).toBe("InvalidModelSpec")
      expect(unknown.message).toContain(`unknown provider "foo" (from --model)`)

      const noKey = failureOf(yield* Effect.exit(select("openai:gpt-4o-mini", {})))
      expect(noKey).toMatchObject({ _tag: "ModelSettingMissing", code: "model_setting_missing", setting: "OPENAI_API_KEY" })
      expect(noKey.hint).toContain("Set OPENAI_API_KEY")

      const noGateway = failureOf(yield* Effect.exit(select("gateway:any", { RELAY_GATEWAY_KEY: "k" })))
      expect(noGateway).toMatchObject({ _tag: "ModelSettingMissing", setting: "RELAY_GATEWAY_URL" })

      const badEnv = failureOf(yield* Effect.exit(select(undefined, { RELAY_MODEL: "ollama:" })))
      expect(badEnv.message).toContain("(from RELAY_MODEL)")
    }))
})

describe("ModelAccess over the Responses API", () => {
  it.scopedLive("generates and streams through /v1/responses with the key and the whole conversation", () =>
    Effect.gen(function*() {
      const deltas = ["Hello", " from", " responses"]
      const server = yield* startServer(responsesServer("Hello from responses", deltas))
      const env = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1/` }
      yield* withModel("openai:fake-model", env, (model) =>
        Effect.gen(function*() {
          expect(model.spec.text).toBe("openai:fake-model")
          expect(model.reason).toBe("chosen with --model")
          expect(yield* model.generate(conversation)).toBe("Hello from responses")
          expect(yield* collect(model.stream("Hi"))).toEqual(deltas)
        }))
      expect(server.paths()).toEqual(["POST /v1/responses", "POST /v1/responses"])
      const [first, second] = server.requests
      expect(first?.authorization).toBe("Bearer sk-test")
      expect(first?.body.model).toBe("fake-model")
      expect(first?.body.input.map((item: { role: string }) => item.role)).toEqual(["system", "user", "assistant", "user"])
      expect(JSON.stringify(first?.body.input)).toContain("Say it again")
      expect(second?.body.stream).toBe(true)
    }))

  it("the fake stream events decode with @effect/ai-openai's own event schema", () => {
    const decode = Schema.decodeUnknownSync(ResponseStreamEvent)
    expect(responseEvents(["a", "b"]).map((event) => decode(event).type)).toEqual([
      "response.created",
      "response.output_item.added",
      "response.output_text.delta",
      "response.output_text.delta",
      "response.output_item.done",
      "response.completed"
    ])
  })
})

describe("ModelAccess falling back to Chat Completions", () => {
  it.scopedLive("switches after a 404 on /v1/responses and remembers it", () =>
    Effect.gen(function*() {
      const deltas = ["Chat", " says", " hi"]
      const server = yield* startServer(chatOnlyServer("Chat says hi", deltas))
      const env = { RELAY_MODEL: "gateway:fake-model", RELAY_GATEWAY_URL: `${server.url}/v1`, RELAY_GATEWAY_KEY: "gw-key" }
      yield* withModel(undefined, env, (model) =>
        Effect.gen(function*() {
          expect(yield* model.generate(conversation)).toBe("Chat says hi")
          expect(yield* collect(model.stream("Hi"))).toEqual(deltas)
          expect(yield* model.generate("again")).toBe("Chat says hi")
        }))
      expect(server.paths()).toEqual([
        "POST /v1/responses",
        "POST /v1/chat/completions",
        "POST /v1/chat/completions",
        "POST /v1/chat/completions"
      ])
      const chat = server.requests[1]
      expect(chat?.authorization).toBe("Bearer gw-key")
      expect(chat?.body).toEqual({
        model: "fake-model",
        stream: false,
        messages: conversationAsChat
      })
      expect(server.requests[2]?.body.stream).toBe(true)
    }))

  it.scopedLive("falls back on the first call even when it is a stream", () =>
    Effect.gen(function*() {
      const server = yield* startServer(chatOnlyServer("unused", ["one ", "two"]))
      const env = { RELAY_GATEWAY_URL: `${server.url}/v1` }
      const deltas = yield* withModel("gateway:tiny", env, (model) => collect(model.stream("Hi")))
      expect(deltas).toEqual(["one ", "two"])
      expect(server.paths()).toEqual(["POST /v1/responses", "POST /v1/chat/completions"])
      expect(server.requests[1]?.authorization).toBeUndefined()
    }))
})

describe("ModelAccess over Ollama's own chat API", () => {
  it.scopedLive("auto-selects a running Ollama and answers through /api/chat, whole and streamed", () =>
    Effect.gen(function*() {
      const chat = ollamaChatServer("from ollama", ["from", " ollama"])
      const server = yield* startServer((request, res) =>
        request.path === "/api/tags" ? sendJson(res, 200, { models: [{ name: "llama3.2:1b" }] }) : chat(request, res)
      )
      const answer = yield* withModel(undefined, { OLLAMA_HOST: server.url }, (model) =>
        Effect.gen(function*() {
          const text = yield* model.generate(conversation)
          const deltas = yield* collect(model.stream("Hi"))
          return { text, deltas, spec: model.spec.text, reason: model.reason }
        }))
      expect(answer).toEqual({
        text: "from ollama",
        deltas: ["from", " ollama"],
        spec: "ollama:llama3.2:1b",
        reason: `found a running Ollama at ${server.url} with llama3.2:1b`
      })
      expect(server.paths()).toEqual(["GET /api/tags", "POST /api/chat", "POST /api/chat"])
      expect(server.requests[1]?.body).toEqual({
        model: "llama3.2:1b",
        stream: false,
        messages: conversationAsChat
      })
      expect(server.requests[2]?.body.stream).toBe(true)
    }))

  it.scopedLive("an error line in the stream and an error status are ModelErrors with Ollama's words", () =>
    Effect.gen(function*() {
      const server = yield* startServer((request, res) => {
        if (request.body.stream === false) return sendJson(res, 404, { error: "model \"tiny\" not found, try pulling it first" })
        res.writeHead(200, { "content-type": "application/x-ndjson" })
        res.end(`${JSON.stringify({ message: { content: "half" }, done: false })}\n${JSON.stringify({ error: "out of memory" })}\n`)
      })
      const [generated, streamed] = yield* withModel("ollama:tiny", { OLLAMA_HOST: server.url }, (model) =>
        Effect.all([Effect.flip(model.generate("Hi")), Effect.flip(collect(model.stream("Hi")))]))
      expect(generated.reason).toContain(`POST ${server.url}/api/chat answered HTTP 404: model "tiny" not found`)
      expect(streamed.reason).toBe("out of memory")
    }))
})

describe("ModelAccess failures", () => {
  const openAiAt = (url: string) => ({ OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${url}/v1` })

  it.scopedLive("a 500 is a ModelError carrying the server's message, generated or streamed", () =>
    Effect.gen(function*() {
      const server = yield* startServer((_, res) => sendJson(res, 500, { error: { message: "model exploded" } }))
      const [generated, streamed] = yield* withModel("openai:fake-model", openAiAt(server.url), (model) =>
        Effect.all([Effect.exit(model.generate("Hi")), Effect.exit(collect(model.stream("Hi")))]))
      for (const exit of [generated, streamed]) {
        const error = failureOf(exit)
        expect(error._tag).toBe("ModelError")
        expect(error.code).toBe("model_error")
        expect(error.model).toBe("openai:fake-model")
        expect(error.reason).toContain("answered HTTP 500")
        expect(error.reason).toContain("model exploded")
      }
      // A 500 is not a missing endpoint: no fallback to Chat Completions.
      expect(server.paths()).toEqual(["POST /v1/responses", "POST /v1/responses"])
    }))

  it.scopedLive("an answer that is not JSON (or not an event stream) is a ModelError, on either API", () =>
    Effect.gen(function*() {
      const badJson: Handler = (_, res) => {
        res.writeHead(200, { "content-type": "application/json" })
        res.end("{not json")
      }
      const both = (model: typeof ModelAccess.Service) =>
        Effect.all([Effect.exit(model.generate("Hi")), Effect.exit(collect(model.stream("Hi")))])

      const responses = yield* startServer(badJson)
      const [generated, streamed] = yield* withModel("openai:m", openAiAt(responses.url), both)
      expect(failureOf(generated).reason).toMatch(/^unreadable answer to POST http:.*\/v1\/responses/)
      // @effect/ai-openai skips undecodable events; an answer without any is still an error.
      expect(failureOf(streamed).reason).toContain("the stream ended without an answer")

      const chatOnly = yield* startServer((request, res) => request.path === "/v1/responses" ? notFound(res) : badJson(request, res))
      const [chatGenerated, chatStreamed] = yield* withModel("openai:m", openAiAt(chatOnly.url), both)
      expect(failureOf(chatGenerated).reason).toMatch(/^unreadable answer to POST http:.*\/v1\/chat\/completions/)
      expect(failureOf(chatStreamed).reason).toContain("the stream ended without an answer")
    }))

  it.scopedLive("a malformed or failing chat stream chunk is a ModelError", () =>
    Effect.gen(function*() {
      const chunks = [JSON.stringify(chatChunk("partial", null)), ""]
      const server = yield* startServer((request, res) => {
        if (request.path === "/v1/responses") return notFound(res)
        sendSse(res, [{ data: chunks[0]! }, { data: chunks[1] === "" ? "{broken" : chunks[1]! }])
      })
      const broken = yield* withModel("openai:m", openAiAt(server.url), (model) => Effect.exit(collect(model.stream("Hi"))))
      expect(failureOf(broken).reason).toContain("does not match the API")

      chunks[1] = JSON.stringify({ error: { message: "out of memory" } })
      const reported = yield* withModel("openai:m", openAiAt(server.url), (model) => Effect.exit(collect(model.stream("Hi"))))
      expect(failureOf(reported).reason).toBe("out of memory")
    }))

  it.scopedLive("an unreachable server is a ModelError at once", () =>
    Effect.gen(function*() {
      const port = yield* closedPort
      const started = Date.now()
      const exit = yield* withModel("openai:m", openAiAt(`http://127.0.0.1:${port}`), (model) => Effect.exit(model.generate("Hi")))
      expect(Date.now() - started).toBeLessThan(1_000)
      const error = failureOf(exit)
      expect(error.reason).toContain(`cannot reach http://127.0.0.1:${port}/v1/responses`)
      expect(error.reason).toContain("ECONNREFUSED")
    }))

  it.scopedLive("a server that never answers times out with a ModelError", () =>
    Effect.gen(function*() {
      const silent = yield* startServer(() => {/* never answers */})
      const [generated, streamed] = yield* withModel(
        "openai:m",
        openAiAt(silent.url),
        (model) => Effect.all([Effect.exit(model.generate("Hi")), Effect.exit(collect(model.stream("Hi")))], { concurrency: 2 }),
        { requestTimeout: "150 millis" }
      )
      expect(failureOf(generated).reason).toBe("no answer within 150ms")
      expect(failureOf(streamed).reason).toBe("no answer within 150ms")
    }))

  it.effect("RELAY_MODEL_TIMEOUT_MS must be a number of milliseconds", () =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(withModel("echo", { RELAY_MODEL_TIMEOUT_MS: "soon" }, () => Effect.void))
      expect(failureOf(exit)).toMatchObject({ _tag: "InvalidModelSetting", setting: "RELAY_MODEL_TIMEOUT_MS", value: "soon" })
    }))
})

describe("echo model", () => {
  it("splits text into words that keep their whitespace", () => {
    expect(splitWords("  hello big\tworld \n")).toEqual(["  hello ", "big\t", "world \n"])
    expect(splitWords("one")).toEqual(["one"])
    expect(splitWords("   ")).toEqual(["   "])
    expect(splitWords("")).toEqual([])
  })

  it.live("streams the last user message word by word, and generates it whole", () =>
    withModel(undefined, { OLLAMA_HOST: "127.0.0.1:1" }, (model) =>
      Effect.gen(function*() {
        expect(model.spec).toEqual(echoSpec)
        expect(yield* collect(model.stream(conversation))).toEqual(["Say ", "it ", "again"])
        expect(yield* model.generate(conversation)).toBe("Say it again")
        expect(yield* collect(model.stream([{ role: "system", content: "no user turn" }]))).toEqual([])
      }), { echoDelay: 0 }))

  it.live("pauses between words as configured by RELAY_ECHO_DELAY_MS", () =>
    withModel("echo", { RELAY_ECHO_DELAY_MS: "30" }, (model) =>
      Effect.gen(function*() {
        const started = Date.now()
        expect(yield* collect(model.stream("a b c d"))).toEqual(["a ", "b ", "c ", "d"])
        expect(Date.now() - started).toBeGreaterThanOrEqual(110)
      })))
})

describe("ModelAccess.fromLanguageModel", () => {
  const mockModel = (parts: { readonly text: string; readonly deltas: ReadonlyArray<string>; readonly failAfter?: boolean }) =>
    Layer.effect(
      LanguageModel.LanguageModel,
      LanguageModel.make({
        generateText: ({ prompt }) => Effect.succeed([{ type: "text", text: `${parts.text} (${prompt.content.length} messages)` }]),
        streamText: () =>
          Stream.fromIterable(parts.deltas.map((delta) => ({ type: "text-delta" as const, id: "t", delta }))).pipe(
            Stream.concat(parts.failAfter ? Stream.make({ type: "error" as const, error: { message: "mock broke" } }) : Stream.empty)
          )
      })
    )

  it.effect("serves a mocked LanguageModel under the given spec and reason", () =>
    Effect.gen(function*() {
      const model = yield* ModelAccess
      expect(model.spec.text).toBe("ollama:mock")
      expect(model.reason).toBe("a test")
      expect(yield* model.generate(conversation)).toBe("mocked (4 messages)")
      expect(yield* collect(model.stream("Hi"))).toEqual(["a", "b"])
    }).pipe(Effect.provide(
      ModelAccess.fromLanguageModel(modelSpec("ollama", "mock"), "a test").pipe(
        Layer.provide(mockModel({ text: "mocked", deltas: ["a", "", "b"] }))
      )
    )))

  it.effect("turns an error part in the stream into a ModelError after the deltas before it", () =>
    Effect.gen(function*() {
      const model = yield* ModelAccess
      const seen: Array<string> = []
      const exit = yield* Effect.exit(Stream.runForEach(model.stream("Hi"), (delta) => Effect.sync(() => seen.push(delta))))
      expect(seen).toEqual(["x"])
      expect(failureOf(exit)).toMatchObject({ _tag: "ModelError", model: "echo", reason: "mock broke" })
    }).pipe(Effect.provide(
      ModelAccess.fromLanguageModel(echoSpec, "a test").pipe(
        Layer.provide(mockModel({ text: "unused", deltas: ["x"], failAfter: true }))
      )
    )))
})
