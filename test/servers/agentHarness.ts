// Runs the agent server in-process on 127.0.0.1:0 over a scripted language model, for the
// agent server suites: the SDK clients, our A2aClient and raw fetch all talk to it over HTTP.
import * as AiError from "@effect/ai/AiError"
import * as LanguageModel from "@effect/ai/LanguageModel"
import type * as Prompt from "@effect/ai/Prompt"
import { Duration, Effect, Layer, ManagedRuntime, Redacted, Stream } from "effect"
import type { ClientTimeouts } from "../../src/domain/limits.js"
import type { AgentSettingsValue } from "../../src/programs/agent/settings.js"
import { agentBaseUrl } from "../../src/servers/agent/AgentServer.js"
import * as AgentServer from "../../src/servers/agent/layer.js"
import { echoSpec, ModelAccess } from "../../src/services/ModelAccess.js"
import { lastUserText, splitWords } from "../../src/services/modelProviders/echo.js"
import * as PushSender from "../../src/services/PushSender.js"
import * as TaskStore from "../../src/services/TaskStore.js"

/**
 * What the scripted model does with the last user message:
 * - `slow: <words>`: streams the words 80 ms apart (generate waits 80 ms per word);
 * - `fail: <reason>`: fails with that reason;
 * - `hang`: never answers;
 * - anything else: echoes the text (streamed word by word, at once).
 */
export const SLOW_WORD_MS = 80

export interface ScriptedModel {
  readonly layer: Layer.Layer<LanguageModel.LanguageModel>
  /** Every prompt the model was called with, oldest first. */
  readonly prompts: Array<Prompt.Prompt>
}

const textDelta = (delta: string) => ({ type: "text-delta" as const, id: "t", delta })
const failure = (reason: string) => new AiError.UnknownError({ module: "ScriptedModel", method: "call", description: reason })

export const scriptedModel = (): ScriptedModel => {
  const prompts: Array<Prompt.Prompt> = []
  const layer = Layer.effect(
    LanguageModel.LanguageModel,
    LanguageModel.make({
      generateText: ({ prompt }) =>
        Effect.suspend(() => {
          prompts.push(prompt)
          const text = lastUserText(prompt)
          if (text.startsWith("fail: ")) return Effect.fail(failure(text.slice("fail: ".length)))
          if (text === "hang") return Effect.never
          if (text.startsWith("slow: ")) {
            const words = splitWords(text.slice("slow: ".length))
            return Effect.as(Effect.sleep(Duration.millis(SLOW_WORD_MS * words.length)), [{ type: "text" as const, text: words.join("") }])
          }
          return Effect.succeed([{ type: "text" as const, text }])
        }),
      streamText: ({ prompt }) =>
        Stream.suspend(() => {
          prompts.push(prompt)
          const text = lastUserText(prompt)
          if (text.startsWith("fail: ")) return Stream.fail(failure(text.slice("fail: ".length)))
          if (text === "hang") return Stream.never
          if (text.startsWith("slow: ")) {
            return Stream.fromIterable(splitWords(text.slice("slow: ".length))).pipe(
              Stream.mapEffect((word) => Effect.as(Effect.sleep(Duration.millis(SLOW_WORD_MS)), textDelta(word)))
            )
          }
          return Stream.fromIterable(splitWords(text).map(textDelta))
        })
    })
  )
  return { layer, prompts }
}

export interface AgentOptions {
  /** Require this API key. */
  readonly key?: string
  readonly settings?: Partial<AgentSettingsValue>
  readonly maxBodyBytes?: number
  readonly push?: PushSender.PushSenderOptions
  readonly store?: TaskStore.TaskStoreOptions
  /** A store of the test's own instead of TaskStore.layer(store) (storeBackends.ts: each backend's). */
  readonly storeLayer?: Layer.Layer<TaskStore.TaskStore, unknown, PushSender.PushSender>
  /** How long a client may take to send its request (default: the server's). */
  readonly clientTimeouts?: ClientTimeouts
  /** Longest wait for the model. Default 10 s. */
  readonly modelTimeout?: Duration.DurationInput
  /** The scripted model below (default), or a built-in model: `-m echo`, or `-m mock` with its card skill. */
  readonly model?: "scripted" | "echo" | "mock"
  /** A model of the test's own (a real provider against a fake model server), instead of `model`. */
  readonly modelLayer?: Layer.Layer<ModelAccess>
}

export interface AgentHandle {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly baseUrl: string
  readonly model: ScriptedModel
  close(): Promise<void>
}

/** The agent server on a free loopback port; `close()` shuts it down (ports, streams, tasks). */
export const startAgent = async (options: AgentOptions = {}): Promise<AgentHandle> => {
  const model = scriptedModel()
  const modelAccess = options.modelLayer !== undefined
    ? options.modelLayer
    : options.model === "mock" || options.model === "echo"
    ? Layer.orDie(ModelAccess.builtIn(options.model, "a test", { echoDelay: 0 }))
    : ModelAccess.fromLanguageModel(echoSpec, "a test", { requestTimeout: options.modelTimeout ?? "10 seconds" }).pipe(
      Layer.provide(model.layer)
    )
  const server = AgentServer.testLayer({
    host: "127.0.0.1",
    port: 0,
    key: options.key === undefined ? undefined : Redacted.make(options.key),
    clientTimeouts: options.clientTimeouts,
    maxBodyBytes: options.maxBodyBytes,
    settings: options.settings,
    push: { timeout: "2 seconds", backoff: "20 millis", ...options.push },
    store: options.storeLayer ?? TaskStore.layer(options.store),
    model: modelAccess
  })
  const runtime = ManagedRuntime.make(server)
  const baseUrl = await runtime.runPromise(agentBaseUrl)
  return { baseUrl, model, close: () => runtime.dispose() }
}

/** Resolves once `check` holds (polled every 20 ms); rejects after `timeoutMs`. */
export const eventually = async (what: string, check: () => boolean | Promise<boolean>, timeoutMs = 3000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
}
