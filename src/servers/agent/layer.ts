/**
 * The agent server composed in one place: the HTTP server over its task store, push sender,
 * settings and model. `layer` is what `relay server agent` runs, `testLayer` what the suites run
 * (their own model and store), and `runAgentServer` selects the model, serves and reports.
 *
 * Server models are reached over the HttpClient of the context: the `server` command group
 * provides the one undici client (cli/serverCommands.ts). Webhooks are posted by PushSender's own client, whose connections are
 * guarded against private addresses.
 */
import { FileSystem } from "@effect/platform"
import { Context, Deferred, type Duration, Effect, Layer, Option, type Redacted } from "effect"
import { createSecureContext } from "node:tls"
import { InvalidInput } from "../../domain/errors.js"
import type { ClientTimeouts } from "../../domain/limits.js"
import type { TaskStoreChoice, TaskStoreTarget } from "../../domain/taskStoreChoice.js"
import { watchOrphanedTasks } from "../../programs/agent/orphans.js"
import { watchPendingDeliveries } from "../../programs/agent/pushConfigs.js"
import { AgentSettings, type AgentSettingsValue } from "../../programs/agent/settings.js"
import { unreadableReason } from "../../programs/localFiles.js"
import { ModelAccess, type ModelSelection, selectModel } from "../../services/ModelAccess.js"
import * as PushSender from "../../services/PushSender.js"
import * as TaskStore from "../../services/TaskStore.js"
import { hostAndPort, reachableHost } from "../address.js"
import { makeSharedBatched } from "../scheduler.js"
import { agentBaseUrl, agentServerLayer } from "./AgentServer.js"
import { type AgentKey, makeKeyCheck, resolveAgentKey } from "./auth.js"
import { type CardInfo, extendedAgentCard, httpBaseUrlFor } from "./card.js"
import type { GrpcTls } from "./grpc.js"
import { DEFAULT_MAX_BODY_BYTES } from "./io.js"
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
  /** Also serve gRPC on this port of `host` (0 picks one), with TLS when given. */
  readonly grpc?: { readonly port: number; readonly tls?: GrpcTls | undefined } | undefined
}

/** Where the gRPC door listens (`host:port`, as the card lists it), when it is open. */
export class AgentGrpcAddress extends Context.Tag("relay/AgentGrpcAddress")<AgentGrpcAddress, string | undefined>() {}

/**
 * The gRPC door, when asked for, bound before the HTTP server so the card can list its port. Its
 * extended card names the HTTP interfaces too, whose port is known once the HTTP server is bound:
 * `httpBaseUrl` is completed then.
 */
const openGrpcDoor = (options: AgentLayerOptions, card: CardInfo, httpBaseUrl: Deferred.Deferred<string>) =>
  Effect.gen(function*() {
    if (options.grpc === undefined) return undefined
    // @grpc/grpc-js and the protobuf descriptors load only when the door opens.
    const { serveGrpc } = yield* Effect.promise(() => import("./grpc.js"))
    const port: number = yield* serveGrpc({
      host: options.host,
      port: options.grpc.port,
      tls: options.grpc.tls,
      maxMessageBytes: options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
      clientTimeouts: options.clientTimeouts,
      checkKey: options.key === undefined ? undefined : makeKeyCheck(options.key),
      extendedCard: (authority) =>
        options.key === undefined
          ? Effect.succeed(undefined)
          : Effect.map(
            Deferred.await(httpBaseUrl),
            (base) => extendedAgentCard({ ...card, grpcPort: port }, httpBaseUrlFor(authority, base))
          )
    })
    return port
  })

/** The HTTP server (and the gRPC door when asked for), the card describing the model it runs over. */
const serverOverModel = (options: AgentLayerOptions) =>
  Layer.unwrapScoped(Effect.gen(function*() {
    const model = yield* ModelAccess
    const card: CardInfo = {
      model: { text: model.spec.text, reason: model.reason },
      auth: options.key !== undefined,
      modes: model.modes,
      skills: model.skills
    }
    const httpBaseUrl = yield* Deferred.make<string>()
    const grpcPort = yield* openGrpcDoor(options, card, httpBaseUrl)
    const http = agentServerLayer({
      host: options.host,
      port: options.port,
      card: { ...card, grpcPort },
      key: options.key,
      maxBodyBytes: options.maxBodyBytes,
      clientTimeouts: options.clientTimeouts
    }).pipe(Layer.tap((bound) => Effect.flatMap(Effect.provide(agentBaseUrl, bound), (url) => Deferred.succeed(httpBaseUrl, url))))
    const grpcAddress = grpcPort === undefined ? undefined : hostAndPort(reachableHost(options.host), grpcPort)
    return Layer.merge(http, Layer.succeed(AgentGrpcAddress, grpcAddress))
  }))

/**
 * With a shared storage, this instance ends the tasks of instances that died (programs/agent/orphans.ts);
 * with any, it makes the push deliveries a stopped process left pending (programs/agent/pushConfigs.ts).
 */
const orphanWatch = Layer.scopedDiscard(Effect.all([Effect.forkScoped(watchOrphanedTasks), Effect.forkScoped(watchPendingDeliveries)]))

/**
 * The sender's deliveries stop before the store closes (built after it, this closes before it), though
 * the store is built over the sender (a restart resumes deliveries): none then writes to a closed store,
 * or renews a claim the store handed over to the next instance as it closed.
 */
const deliveriesStopFirst = Layer.scopedDiscard(
  Effect.flatMap(PushSender.PushSender, (sender) => Effect.addFinalizer(() => sender.stopAll))
)

const composed = <E, R, StoreError>(
  options: AgentLayerOptions,
  model: Layer.Layer<ModelAccess, E, R>,
  store: Layer.Layer<TaskStore.TaskStore, StoreError, PushSender.PushSender>
) =>
  Layer.merge(serverOverModel(options), orphanWatch).pipe(
    Layer.provide(deliveriesStopFirst.pipe(Layer.provideMerge(store))),
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
  /** `--grpc-port`: also serve gRPC there. */
  readonly grpcPort: Option.Option<number>
  /** `--grpc-tls-cert` and `--grpc-tls-key`: PEM files that make the gRPC door speak TLS (both or neither). */
  readonly grpcTlsCert: Option.Option<string>
  readonly grpcTlsKey: Option.Option<string>
  /** Where tasks are kept (`--store`). */
  readonly store: TaskStoreChoice
}

/** What a started server reports. */
export interface AgentServerStarted {
  readonly baseUrl: string
  /** `host:port` of the gRPC door, when it is open, and whether it speaks TLS. */
  readonly grpc: { readonly address: string; readonly tls: boolean } | undefined
  readonly model: ModelSelection
  readonly key: AgentKey | undefined
  readonly latency: Duration.Duration
  readonly store: TaskStoreTarget
}

/** Largest PEM file read for the gRPC door's TLS. */
const MAX_PEM_FILE_BYTES = 1024 * 1024

const readPemFile = (option: string, path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const refused = (reason: string) =>
      new InvalidInput({ reason: `Cannot read ${option} ${path}: ${reason}`, suggestion: `Give ${option} a readable PEM file` })
    const info = yield* Effect.mapError(fs.stat(path), (error) => refused(unreadableReason(error)))
    if (info.type !== "File") return yield* refused(`it is not a regular file (${info.type})`)
    if (Number(info.size) > MAX_PEM_FILE_BYTES) return yield* refused(`it is over ${MAX_PEM_FILE_BYTES} bytes`)
    return Buffer.from(yield* Effect.mapError(fs.readFile(path), (error) => refused(unreadableReason(error))))
  })

/** The gRPC door's options from the CLI's: its port, and TLS from the two PEM files. */
const grpcOptionsOf = (config: AgentServerConfig) =>
  Effect.gen(function*() {
    if (Option.isNone(config.grpcPort)) return undefined
    if (Option.isNone(config.grpcTlsCert) || Option.isNone(config.grpcTlsKey)) return { port: config.grpcPort.value }
    const cert = yield* readPemFile("--grpc-tls-cert", config.grpcTlsCert.value)
    const key = yield* readPemFile("--grpc-tls-key", config.grpcTlsKey.value)
    // Node's TLS reads them as the gRPC server will: a bad file is told here, not as a failed listen.
    yield* Effect.try({
      try: () => createSecureContext({ cert, key }),
      catch: (error) =>
        new InvalidInput({
          reason: `--grpc-tls-cert and --grpc-tls-key are not a certificate and its key: ${
            error instanceof Error ? error.message : String(error)
          }`,
          suggestion: "Give a PEM certificate chain and the PEM private key that goes with it"
        })
    })
    return { port: config.grpcPort.value, tls: { cert, key } }
  })

/** One queue for all of the server's fibers, drained with setImmediate (see servers/scheduler.ts). */
const serverScheduler = makeSharedBatched()

/**
 * `relay server agent`: resolves the key, selects the model, starts the server, hands what it
 * started to `announce` (the CLI prints it) and serves until interrupted.
 */
export const runAgentServer = <E, R>(
  config: AgentServerConfig,
  announce: (started: AgentServerStarted) => Effect.Effect<void, E, R>
) =>
  Effect.gen(function*() {
    const agentKey = config.auth ? yield* resolveAgentKey(config.key) : undefined
    const grpc = yield* grpcOptionsOf(config)
    const model = yield* selectModel(Option.getOrUndefined(config.model))
    const store = yield* resolveTaskStoreTarget(config.store)
    const server = layer({
      host: config.host,
      port: config.port,
      key: agentKey?.key,
      maxBodyBytes: config.maxBodyBytes,
      settings: { latency: config.latency },
      push: { allowLoopback: true, allowPrivate: config.allowPrivateWebhooks },
      grpc,
      model,
      store
    })
    return yield* Effect.all([agentBaseUrl, AgentGrpcAddress]).pipe(
      Effect.flatMap(([baseUrl, grpcAddress]) =>
        announce({
          baseUrl,
          grpc: grpcAddress === undefined ? undefined : { address: grpcAddress, tls: grpc?.tls !== undefined },
          model,
          key: agentKey,
          latency: config.latency,
          store
        })
      ),
      Effect.zipRight(Effect.never),
      Effect.provide(server)
    )
  }).pipe(Effect.withScheduler(serverScheduler))
