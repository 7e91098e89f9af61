/**
 * The agent server composed in one place: the HTTP server over its task store, push sender,
 * settings and model. `layer` is what `relay server agent` runs, `testLayer` what the suites run
 * (their own model and store), and `runAgentServer` selects the model, serves and reports.
 *
 * Server models are reached over the HttpClient of the context: the `server` command group
 * provides the one undici client (cli/serverCommands.ts). Webhooks are posted by PushSender's own client, whose connections are
 * guarded against private addresses.
 */
import { type Duration, Effect, Layer, Option, type Redacted, Scheduler } from "effect"
import type { ClientTimeouts } from "../../domain/limits.js"
import type { TaskStoreChoice, TaskStoreTarget } from "../../domain/taskStoreChoice.js"
import { AgentSettings, type AgentSettingsValue } from "../../programs/agent/settings.js"
import { ModelAccess, type ModelSelection, selectModel } from "../../services/ModelAccess.js"
import * as PushSender from "../../services/PushSender.js"
import * as TaskStore from "../../services/TaskStore.js"
import { agentBaseUrl, agentServerLayer } from "./AgentServer.js"
import { type AgentKey, resolveAgentKey } from "./auth.js"
import { limitHeapGrowth } from "./heap.js"
import { resolveTaskStoreTarget, taskStoreLayer } from "./taskStores.js"

export interface AgentLayerOptions {
  readonly host: string
  readonly port: number
  /** Require this key (X-API-Key or Authorization: Bearer) on everything but the card and /health. */
  readonly key?: Redacted.Redacted<string> | undefined
  /** Largest request body accepted; default 10 MiB. */
  readonly maxBodyBytes?: number | undefined
  /** How long a client may take to send its request (default CLIENT_TIMEOUTS in domain/limits.ts). */
  readonly clientTimeouts?: ClientTimeouts | undefined
  /** Changes to the default AgentSettings. */
  readonly settings?: Partial<AgentSettingsValue> | undefined
  readonly push?: PushSender.PushSenderOptions | undefined
}

/** The server, its card describing the model it runs over. */
const serverOverModel = (options: AgentLayerOptions) =>
  Layer.unwrapEffect(Effect.map(ModelAccess, (model) =>
    agentServerLayer({
      host: options.host,
      port: options.port,
      card: {
        model: { text: model.spec.text, reason: model.reason },
        auth: options.key !== undefined,
        modes: model.modes,
        skills: model.skills
      },
      key: options.key,
      maxBodyBytes: options.maxBodyBytes,
      clientTimeouts: options.clientTimeouts
    })))

const composed = <E, R, StoreError>(
  options: AgentLayerOptions,
  model: Layer.Layer<ModelAccess, E, R>,
  store: Layer.Layer<TaskStore.TaskStore, StoreError, PushSender.PushSender>
) =>
  serverOverModel(options).pipe(
    Layer.provide(store),
    Layer.provide(PushSender.layer(options.push)),
    Layer.provide(model),
    Layer.provide(Layer.succeed(AgentSettings, { ...AgentSettings.defaultValue(), ...options.settings }))
  )

/** The agent server over the selected model and the chosen store, as an HttpServer for its address. */
export const layer = (options: AgentLayerOptions & { readonly model: ModelSelection; readonly store: TaskStoreTarget }) =>
  composed(options, ModelAccess.layer(options.model), taskStoreLayer(options.store))

/** The agent server over a model and store of the caller's (tests: a scripted model, a store with limits). */
export const testLayer = <StoreError = never>(
  options: AgentLayerOptions & {
    readonly model: Layer.Layer<ModelAccess>
    readonly store: Layer.Layer<TaskStore.TaskStore, StoreError, PushSender.PushSender>
  }
) => composed(options, options.model, options.store)

export interface AgentServerConfig {
  readonly host: string
  readonly port: number
  /** Require an API key: the given one, else RELAY_AGENT_KEY, else a generated one. */
  readonly auth: boolean
  readonly key: Option.Option<Redacted.Redacted<string>>
  /** The `--model` value; none: auto-selection (see selectModel). */
  readonly model: Option.Option<string>
  readonly latency: Duration.Duration
  readonly maxBodyBytes: number
  readonly allowPrivateWebhooks: boolean
  /** Where tasks are kept (`--store`). */
  readonly store: TaskStoreChoice
}

/** What a started server reports. */
export interface AgentServerStarted {
  readonly baseUrl: string
  readonly model: ModelSelection
  readonly key: AgentKey | undefined
  readonly latency: Duration.Duration
  readonly store: TaskStoreTarget
}

/**
 * Effect's default scheduler yields with setTimeout (>= 1 ms) after 2048 microtask drains; under
 * load the server then idles waiting for timers. Yielding with setImmediate keeps the loop busy
 * and lets sockets in between, which raised SendMessage's rate more than a microtask-first
 * variant did (bench/README.md).
 */
const serverScheduler = Scheduler.makeBatched((runBatch) => setImmediate(runBatch))

/**
 * `relay server agent`: resolves the key, selects the model, starts the server, hands what it
 * started to `announce` (the CLI prints it) and serves until interrupted.
 */
export const runAgentServer = <E, R>(
  config: AgentServerConfig,
  announce: (started: AgentServerStarted) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    yield* Effect.sync(limitHeapGrowth)
    const agentKey = config.auth ? yield* resolveAgentKey(config.key) : undefined
    const model = yield* selectModel(Option.getOrUndefined(config.model))
    const store = yield* resolveTaskStoreTarget(config.store)
    const server = layer({
      host: config.host,
      port: config.port,
      key: agentKey?.key,
      maxBodyBytes: config.maxBodyBytes,
      settings: { latency: config.latency },
      push: { allowLoopback: true, allowPrivate: config.allowPrivateWebhooks },
      model,
      store
    })
    return yield* agentBaseUrl.pipe(
      Effect.flatMap((baseUrl) => announce({ baseUrl, model, key: agentKey, latency: config.latency, store })),
      Effect.zipRight(Effect.never),
      Effect.provide(server)
    )
  }).pipe(Effect.withScheduler(serverScheduler))
