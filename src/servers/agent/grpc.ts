/**
 * The gRPC door of the agent server (`relay server agent --grpc-port`): `lf.a2a.v1.A2AService`
 * (1.0) and `a2a.v1.A2AService` (0.3) on one HTTP/2 server (grpcServer.ts), over the same operations as
 * the JSON-RPC and REST doors (operations.ts). A message's bytes become the ProtoJSON of the
 * HTTP+JSON binding (a2a/grpcCodec.ts), are read by the same decoders, and the answer's ProtoJSON
 * becomes bytes again.
 *
 * Each call passes, in order: the API key (metadata `authorization: Bearer` or `x-api-key`, else
 * UNAUTHENTICATED) and `a2a-version` (one relay does not speak: FAILED_PRECONDITION with
 * VERSION_NOT_SUPPORTED; none means 0.3, which relay speaks), both before its message is read;
 * the message (over the size limit: RESOURCE_EXHAUSTED; malformed bytes, nesting past
 * MAX_JSON_DEPTH or fields the decoders refuse: INVALID_ARGUMENT); then the operation.
 * The service called decides the generation of the answer, whatever version is named, as the
 * method name does at the JSON-RPC door: a 1.0 client that forgets `a2a-version` is still served.
 * Errors are statuses with a `google.rpc.Status` carrying the ErrorInfo (`grpc-status-details-bin`),
 * mapped as A2A §5.4 says.
 *
 * Loaded only when the door is open: it pulls in the protobuf descriptors.
 */
import { Cause, Effect, Either, type Fiber, FiberId, FiberSet, Option, type ParseResult, type Scope, Stream } from "effect"
import { encodeStatusDetails, GRPC_STATUS, type GrpcMethod, grpcService } from "../../a2a/grpcCodec.js"
import { describeParseError } from "../../a2a/parseProblems.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import type * as V1 from "../../a2a/v1.js"
import { type AgentRequestError, internalError, invalidParamsAt, parseError, versionNotSupported } from "../../domain/agentErrors.js"
import { ListenFailed } from "../../domain/errors.js"
import { CLIENT_TIMEOUTS, type ClientTimeouts } from "../../domain/limits.js"
import { type CallStatus, type GrpcCall, type GrpcCallHandler, makeGrpcServer } from "./grpcServer.js"
import { nestingProblem, unexpectedFailure } from "./io.js"
import { V1_METHODS } from "./jsonRpc.js"
import { type AgentServices, execute, type Operation, type ResultCodec, v03RestCodec, v1Codec, writeOutcome } from "./operations.js"
import { type Build as RestBuild, createPushV03Op, sendV03Op } from "./rest.js"
import { writeOrWait } from "./sse.js"
import { versionRequest } from "./versions.js"

export interface GrpcTls {
  /** PEM certificate chain and private key. */
  readonly cert: Buffer
  readonly key: Buffer
}

export interface GrpcDoorOptions {
  readonly host: string
  /** 0 picks a free port. */
  readonly port: number
  /** Serve TLS with this certificate; plaintext (h2c) without. */
  readonly tls?: GrpcTls | undefined
  /** Largest request message accepted, in bytes (the HTTP doors' body limit). */
  readonly maxMessageBytes: number
  /** The API-key check when auth is on (the HTTP doors' own, over the call's metadata). */
  readonly checkKey: ((headers: Readonly<Record<string, string | undefined>>) => boolean) | undefined
  /** The extended card for the authority (host:port) the client called; undefined when there is none. */
  readonly extendedCard: (authority: string) => Effect.Effect<V1.AgentCard | undefined>
  /**
   * How long a client may take to send a call (`requestMs`, from its start to its message's end)
   * and leave its connection without one (`headersMs`); CLIENT_TIMEOUTS unless told.
   */
  readonly clientTimeouts?: ClientTimeouts | undefined
}

/** The status of an A2A error: §5.4's code, its message, and the Status with its ErrorInfo in the trailer. */
const statusOf = (error: AgentRequestError): CallStatus => {
  const code = GRPC_STATUS[error.spec.grpcStatus]
  return { code, details: error.message, statusDetails: encodeStatusDetails(code, error.message, error.spec.reason, error.metadata) }
}

const UNAUTHENTICATED: CallStatus = { code: GRPC_STATUS.UNAUTHENTICATED, details: "Missing or invalid API key" }

/** The headers the key check reads, from the call's metadata (keys are lower case in gRPC). */
const keyHeaders = (call: GrpcCall) => ({
  authorization: call.metadata("authorization"),
  "x-api-key": call.metadata("x-api-key")
})

// ---------------------------------------------------------------------------
// Requests: ProtoJSON → Operation

type Build = (json: Record<string, unknown>) => Either.Either<Operation, AgentRequestError>

/** A ProtoJSON decoder of the JSON-RPC door's 1.0 table (the same messages), its error naming the field. */
const fromV1Table = (name: string): Build => (json) =>
  Either.mapLeft(V1_METHODS[name]!(json), (error: ParseResult.ParseError) => invalidParamsAt(describeParseError(error, "the request")))

const badName = (field: string, shape: string) => Either.left(invalidParamsAt({ field, message: `${field} must be ${shape}` }))

const TASK_NAME = /^tasks\/([^/]+)$/
const CONFIG_NAME = /^tasks\/([^/]+)\/pushNotificationConfigs\/([^/]+)$/

/** The fields of `json` named in `names` that it has (proto3 leaves out what is not set). */
const present = (json: Record<string, unknown>, ...names: ReadonlyArray<string>) =>
  Object.fromEntries(names.filter((name) => json[name] !== undefined).map((name) => [name, json[name]]))

/**
 * v0.3 names a task `tasks/{id}` (in `field`); the request is then the 1.0 one of the same
 * operation, with the id as `idField` and the `extra` fields of the v0.3 request.
 */
const byTaskName = (
  v1Method: string,
  field: "name" | "parent",
  idField: "id" | "taskId",
  extra: (json: Record<string, unknown>) => object = () => ({})
): Build => {
  const build = fromV1Table(v1Method)
  return (json) => {
    const id = TASK_NAME.exec(String(json[field] ?? ""))?.[1]
    return id === undefined ? badName(field, "tasks/{task id}") : build({ [idField]: id, ...extra(json) })
  }
}

const byConfigName = (v1Method: string): Build => {
  const build = fromV1Table(v1Method)
  return (json) => {
    const match = CONFIG_NAME.exec(String(json["name"] ?? ""))
    if (match === null) return badName("name", "tasks/{task id}/pushNotificationConfigs/{config id}")
    return build({ taskId: match[1], id: match[2] })
  }
}

/** The REST door's v0.3 builders take the same proto JSON as a body. */
const fromRestBody = (build: RestBuild): Build => (json) => build({ body: json, query: {} })

const V1_BUILDS: Readonly<Record<string, Build>> = Object.fromEntries(Object.keys(V1_METHODS).map((name) => [name, fromV1Table(name)]))

const V03_BUILDS: Readonly<Record<string, Build>> = {
  SendMessage: fromRestBody(sendV03Op("SendMessage")),
  SendStreamingMessage: fromRestBody(sendV03Op("SendStreamingMessage")),
  GetTask: byTaskName("GetTask", "name", "id", (json) => present(json, "historyLength")),
  CancelTask: byTaskName("CancelTask", "name", "id"),
  TaskSubscription: byTaskName("SubscribeToTask", "name", "id"),
  CreateTaskPushNotificationConfig: (json) => {
    const id = TASK_NAME.exec(String(json["parent"] ?? ""))?.[1]
    return id === undefined ? badName("parent", "tasks/{task id}") : createPushV03Op(id)({ body: json, query: {} })
  },
  GetTaskPushNotificationConfig: byConfigName("GetTaskPushNotificationConfig"),
  ListTaskPushNotificationConfig: byTaskName(
    "ListTaskPushNotificationConfigs",
    "parent",
    "taskId",
    (json) => present(json, "pageSize", "pageToken")
  ),
  DeleteTaskPushNotificationConfig: byConfigName("DeleteTaskPushNotificationConfig"),
  GetAgentCard: () => Either.right({ _tag: "GetExtendedAgentCard" })
}

interface Generation {
  readonly version: ProtocolVersion
  readonly builds: Readonly<Record<string, Build>>
  readonly codec: ResultCodec
}

const GENERATIONS: ReadonlyArray<Generation> = [
  { version: "1.0", builds: V1_BUILDS, codec: v1Codec },
  { version: "0.3", builds: V03_BUILDS, codec: v03RestCodec }
]

/**
 * Why a call is refused by its metadata alone (the key, then `a2a-version`), checked as the
 * metadata arrives: a refused call's message is never read (at most what HTTP/2 flow control let
 * in), as the HTTP doors read no body they will refuse.
 */
const metadataRefusal = (options: GrpcDoorOptions, call: GrpcCall): CallStatus | undefined => {
  if (options.checkKey !== undefined && !options.checkKey(keyHeaders(call))) return UNAUTHENTICATED
  const version = versionRequest({ "a2a-version": call.metadata("a2a-version") }, "")
  return version._tag === "Unsupported"
    ? statusOf(versionNotSupported(`a2a-version ${version.version} is not supported; this agent speaks 1.0 and 0.3`))
    : undefined
}

/** The message as the operation to run, or the INVALID_ARGUMENT that says why it is not one. */
const readMessage = (method: GrpcMethod, build: Build, bytes: Buffer): Either.Either<Operation, CallStatus> => {
  const json = method.request.toJson(bytes)
  if (Either.isLeft(json)) return Either.left(statusOf(parseError(`The request is not a valid ${method.request.typeName}: ${json.left}`)))
  const tooDeep = nestingProblem(json.right)
  if (tooDeep !== undefined) return Either.left(statusOf(tooDeep))
  const body = typeof json.right === "object" && json.right !== null && !Array.isArray(json.right) ? json.right : {}
  return Either.mapLeft(build(body), statusOf)
}

// ---------------------------------------------------------------------------
// Answers: Outcome → bytes

/** An answer's ProtoJSON as the method's response bytes; only a bug makes it fail. */
const encodeAnswer = (method: GrpcMethod, json: unknown): Either.Either<Uint8Array, AgentRequestError> =>
  Either.mapLeft(
    method.response.toBinary(json ?? {}),
    (reason) => internalError(`Cannot encode the ${method.response.typeName}: ${reason}`)
  )

/** Writes one message of a stream; when the stream's buffer is full, waits until it drains (or the call ends). */
const writeMessage = (call: GrpcCall, bytes: Uint8Array): Effect.Effect<void> =>
  writeOrWait(call.stream, () => call.write(bytes) || call.ended, "close")

/** Sends the events of a stream as they come, then ends the call; a failure mid-stream ends it with its status. */
const streamEvents = (
  call: GrpcCall,
  method: GrpcMethod,
  codec: ResultCodec,
  events: Stream.Stream<V1.StreamResponse>
): Effect.Effect<void> =>
  Stream.runForEach(events, (event) => {
    const bytes = encodeAnswer(method, codec.event(event))
    return Either.isLeft(bytes) ? Effect.fail(bytes.left) : writeMessage(call, bytes.right)
  }).pipe(
    Effect.matchCauseEffect({
      onSuccess: () => Effect.sync(() => call.end()),
      onFailure: (cause) => {
        if (Cause.isInterruptedOnly(cause)) return Effect.void
        const failure = Cause.failureOption(cause)
        const error = Option.isSome(failure)
          ? failure.value
          : internalError(`The event stream failed: ${Cause.pretty(cause).split("\n")[0]}`)
        return Effect.sync(() => call.end(statusOf(error)))
      }
    })
  )

/** Runs a call's operation and answers it: one message (unary) or the events (streaming), or the error. */
const answer = (
  options: GrpcDoorOptions,
  generation: Generation,
  method: GrpcMethod,
  call: GrpcCall,
  operation: Operation
): Effect.Effect<void, never, AgentServices> =>
  Effect.matchEffect(execute(operation, generation.version), {
    onFailure: (error) => Effect.sync(() => call.end(statusOf(error))),
    onSuccess: (result) => {
      if (result._tag === "Events") {
        return method.serverStreaming
          ? streamEvents(call, method, generation.codec, result.value)
          : Effect.sync(() => call.end(statusOf(internalError(`${method.name} answered with events`))))
      }
      const card = result._tag === "ExtendedCard" ? options.extendedCard(call.authority) : Effect.succeed(undefined)
      return Effect.flatMap(card, (extended) =>
        writeOutcome(
          generation.codec,
          result,
          () => extended,
          (json) => {
            const bytes = encodeAnswer(method, json)
            if (Either.isLeft(bytes)) return call.end(statusOf(bytes.left))
            // A unary call answers one message; a streaming one may answer a single message too (a Task).
            if (!method.serverStreaming) return call.reply(bytes.right)
            call.write(bytes.right)
            call.end()
          },
          (error) => call.end(statusOf(error))
        ))
    }
  })

// ---------------------------------------------------------------------------
// The server

type RunFork = (
  effect: Effect.Effect<void, never, AgentServices>,
  options: { readonly immediate: false }
) => Fiber.RuntimeFiber<void, never>

/** Each call's fiber starts with the scheduler's next batch, as the HTTP doors' requests do (../exchange.ts says why). */
const BATCHED = { immediate: false } as const

/** A method of either generation's service, with how its request becomes an operation. */
interface Served {
  readonly generation: Generation
  readonly method: GrpcMethod
  readonly build: Build
}

/** Every method of both services, by its HTTP/2 path. */
const servedMethods = (): ReadonlyMap<string, Served> =>
  new Map(
    GENERATIONS.flatMap((generation) =>
      Object.values(grpcService(generation.version).methods).map((method): [string, Served] => [method.path, {
        generation,
        method,
        build: generation.builds[method.name] ?? (() => Either.left(internalError(`${method.name} is not served`)))
      }])
    )
  )

/** What the door does with a call: the metadata checks, then the operation its message names. */
const callHandler = (options: GrpcDoorOptions, runFork: RunFork): GrpcCallHandler => {
  const methods = servedMethods()
  return {
    serves: (path) => methods.has(path),
    refuse: (call) => metadataRefusal(options, call),
    handle: (call, message) => {
      const { build, generation, method } = methods.get(call.path)!
      const operation = readMessage(method, build, message)
      if (Either.isLeft(operation)) return call.end(operation.left)
      const fiber = runFork(
        Effect.catchAllCause(
          answer(options, generation, method, call, operation.right),
          (cause) =>
            Cause.isInterruptedOnly(cause) ? Effect.void : Effect.zipRight(
              Effect.logError(`gRPC ${method.path} failed unexpectedly`, cause),
              Effect.sync(() => call.end(statusOf(unexpectedFailure())))
            )
        ),
        BATCHED
      )
      call.onCancel(() => fiber.unsafeInterruptAsFork(FiberId.none))
    }
  }
}

/**
 * The gRPC door bound to `host:port` (0 picks a free port), serving until the scope closes, which
 * ends open calls (streams included) UNAVAILABLE and interrupts the operations in flight; yields the bound port.
 */
export const serveGrpc = (options: GrpcDoorOptions): Effect.Effect<number, ListenFailed, AgentServices | Scope.Scope> =>
  Effect.gen(function*() {
    const runFork = yield* FiberSet.makeRuntime<AgentServices>()
    const timeouts = options.clientTimeouts ?? CLIENT_TIMEOUTS
    const server = yield* Effect.try({
      try: () =>
        makeGrpcServer(callHandler(options, runFork), {
          tls: options.tls,
          maxMessageBytes: options.maxMessageBytes,
          requestMs: timeouts.requestMs,
          idleMs: timeouts.headersMs
        }),
      catch: (error) => new ListenFailed({ host: options.host, port: options.port, reason: `TLS: ${String(error)}` })
    })
    yield* Effect.addFinalizer(() => Effect.sync(() => server.close()))
    return yield* Effect.tryPromise({
      try: () => server.listen(options.host, options.port),
      catch: (error) => ListenFailed.fromCause(options.host, options.port, error)
    })
  })
