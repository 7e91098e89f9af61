/**
 * gRPC calls over @grpc/grpc-js, loaded by grpcTransport.ts on the first gRPC operation only.
 *
 * One channel per address, TLS choice and message limit, living as long as the A2A client (its
 * scope). Every call sends `a2a-version` and the credentials the target's rule allows; a unary call
 * carries `--timeout` as its deadline, a stream waits that long for its headers. A message over the
 * target's limit is refused by gRPC itself (max_receive_message_length); interrupting the effect
 * cancels the call. Errors are read from the status and its `google.rpc.Status` details (ErrorInfo).
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect, Either, Option, Scope, Stream } from "effect"
import type { LookupAddress } from "node:dns"
import { isIP } from "node:net"
import { createSecureContext } from "node:tls"
import { a2aErrorByReason, JSON_RPC_ERRORS } from "../../a2a/errors.js"
import { decodeStatusDetails, GRPC_STATUS, type GrpcMethod, grpcMethod, grpcStatusName, STATUS_DETAILS_KEY } from "../../a2a/grpcCodec.js"
import { isLoopbackHost } from "../../a2a/hosts.js"
import type * as V1 from "../../a2a/v1.js"
import {
  type A2aClientError,
  AgentUnreachable,
  AuthRequired,
  InterfaceHostRefused,
  InvalidResponse,
  ProtocolError,
  RequestTimeout,
  ResponseTooLarge,
  UnsupportedOperation
} from "../../domain/clientErrors.js"
import { hostClasses } from "../../domain/ipAddresses.js"
import { MAX_RESPONSE_BYTES } from "../../domain/limits.js"
import { decodeWith } from "./answers.js"
import { DEFAULT_TIMEOUT } from "./exchange.js"
import { endsInteraction } from "./sse.js"
import type { ClientState } from "./state.js"
import { credentialHeaders, credentialsFor, credentialsSent, type Endpoint, type Target } from "./target.js"
import type { WireOf } from "./transport.js"

type GrpcWire<A> = WireOf<"Grpc", A>

/** What a failed call tells: its status code, the server's words and the trailers. */
interface CallStatus {
  readonly code: number
  readonly details: string
  readonly metadata?: grpc.Metadata | undefined
}

const RECEIVE_LIMIT_EXCEEDED = "Received message larger than max"

const passBytes = (bytes: Buffer) => bytes

// ---------------------------------------------------------------------------
// Channels

/** `host:port` of an endpoint URL (https/http, as usableInterfaces.grpcUrl keeps them). */
const addressOf = (url: URL) => `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`

/**
 * TLS trusting what relay's HTTPS trusts: Node's roots and NODE_EXTRA_CA_CERTS (grpc-js's own
 * createSsl() builds a context that leaves the extra certificates out).
 */
const systemRoots = () => grpc.credentials.createFromSecureContext(createSecureContext())

/** Channels kept open per A2A client; calls on one closed to make room go on to their end. */
const MAX_CHANNELS = 32

/** The open channels of each A2A client (its scope), least recently used first. */
const channels = new WeakMap<Scope.Scope, Map<string, grpc.Client>>()

/** The client's channels, closed with it. */
const channelsOf = (scope: Scope.Scope): Effect.Effect<Map<string, grpc.Client>> =>
  Effect.suspend(() => {
    const known = channels.get(scope)
    if (known !== undefined) return Effect.succeed(known)
    const open = new Map<string, grpc.Client>()
    channels.set(scope, open)
    return Effect.as(Scope.addFinalizer(scope, Effect.sync(() => open.forEach((client) => client.close()))), open)
  })

/**
 * A grpc-js target that dials exactly these addresses (those of the first one's family: a target
 * names one family), so that no lookup of grpc-js's own can reach another address.
 */
const pinnedTarget = (addresses: ReadonlyArray<LookupAddress>, port: string) => {
  const v6 = addresses[0]?.family === 6
  const dialed = addresses.filter(({ family }) => (family === 6) === v6)
  return v6
    ? `ipv6:${dialed.map(({ address }) => `[${address}]:${port}`).join(",")}`
    : `ipv4:${dialed.map(({ address }) => `${address}:${port}`).join(",")}`
}

/** The channel's options: dialing pinned addresses, it still names the host (`:authority`, TLS name and certificate). */
const channelOptions = (url: URL, receiveLimit: number, pinned: boolean): grpc.ChannelOptions => ({
  "grpc.max_receive_message_length": receiveLimit,
  // One attempt per call: relay's own fallback (1.0 → 0.3) and the user decide what is tried again.
  "grpc.enable_retries": 0,
  ...(pinned ? { "grpc.default_authority": addressOf(url) } : {}),
  ...(pinned && isIP(url.hostname.replace(/^\[|\]$/g, "")) === 0 ? { "grpc.ssl_target_name_override": url.hostname } : {})
})

/** A channel to the endpoint: to the addresses the interface rule judged when it held the endpoint, else by its host. */
const channelFor = (
  state: ClientState,
  url: URL,
  receiveLimit: number,
  judged: ReadonlyArray<LookupAddress> | undefined
): Effect.Effect<grpc.Client> =>
  Effect.map(channelsOf(state.scope), (open) => {
    const tls = url.protocol === "https:"
    const port = url.port || (tls ? "443" : "80")
    const dial = judged === undefined ? addressOf(url) : pinnedTarget(judged, port)
    const key = `${tls ? "tls" : "h2c"} ${dial} ${addressOf(url)} ${receiveLimit}`
    const client = open.get(key) ??
      new grpc.Client(
        dial,
        tls ? systemRoots() : grpc.credentials.createInsecure(),
        channelOptions(url, receiveLimit, judged !== undefined)
      )
    open.delete(key)
    // A long-running relay mcp may meet many agents: the channel used least recently makes room.
    for (const [oldKey, oldest] of open) {
      if (open.size < MAX_CHANNELS) break
      open.delete(oldKey)
      oldest.close()
    }
    open.set(key, client)
    return client
  })

/** The host's addresses: a literal itself, a name as resolved (none when it does not resolve). */
const addressesOf = (state: ClientState, host: string): Effect.Effect<ReadonlyArray<LookupAddress>> => {
  const family = isIP(host)
  return family !== 0
    ? Effect.succeed([{ address: host, family }])
    : Effect.promise(() => state.addressing.resolve(host, {}).catch(() => []))
}

/**
 * Plaintext (h2c) only to this machine, or to a host the user named with --insecure;
 * an interface the rule holds to its card's class of address only where its host resolves within
 * it. Returns the addresses judged, which the channel then dials (undefined when the rule does not
 * hold the endpoint): a second lookup, grpc-js's, could answer otherwise (DNS rebinding).
 */
const refusal = (
  state: ClientState,
  target: Target,
  endpoint: Endpoint,
  url: URL
): Effect.Effect<ReadonlyArray<LookupAddress> | undefined, InterfaceHostRefused> =>
  Effect.gen(function*() {
    const host = url.hostname.replace(/^\[|\]$/g, "")
    if (url.protocol === "http:" && !isLoopbackHost(host) && !(target.insecureHosts ?? []).includes(host)) {
      return yield* new InterfaceHostRefused({
        url: endpoint.url,
        reason: "the card offers gRPC in plaintext (h2c) on a host other than this machine; name it with --insecure to allow that"
      })
    }
    const reach = endpoint.reach
    if (reach === undefined) return undefined
    const addresses = yield* addressesOf(state, host)
    const classes = addresses.flatMap(({ address }) => hostClasses(address) ?? [])
    const outside = classes.length === 0 ? "unresolved" : classes.find((kind) => !reach.includes(kind))
    if (outside !== undefined) {
      yield* new InterfaceHostRefused({
        url: endpoint.url,
        reason: `${host} is a ${outside} address, and the card's own host is ${
          reach.join(" or ") || "of no known class"
        }: relay keeps a card's interfaces on its card's class of address`
      })
    }
    return addresses
  })

// ---------------------------------------------------------------------------
// Errors

/** The A2A error of a status: by its ErrorInfo reason when it has one, else by the status code. */
const protocolErrorOf = (status: CallStatus): ProtocolError => {
  const [bytes] = status.metadata?.get(STATUS_DETAILS_KEY) ?? []
  const details = bytes instanceof Buffer ? decodeStatusDetails(bytes) : undefined
  const info = details !== undefined && Either.isRight(details) ? details.right.errorInfo : undefined
  const byReason = info === undefined ? undefined : a2aErrorByReason(info.reason)
  const byStatus = status.code === GRPC_STATUS.UNIMPLEMENTED
    ? JSON_RPC_ERRORS.MethodNotFound
    : status.code === GRPC_STATUS.INVALID_ARGUMENT
    ? JSON_RPC_ERRORS.InvalidParams
    : JSON_RPC_ERRORS.InternalError
  return new ProtocolError({
    a2aCode: (byReason ?? byStatus).jsonRpcCode,
    ...(info === undefined ? {} : { reason: info.reason }),
    detail: `${status.details || "no details"} (gRPC ${grpcStatusName(status.code)})`
  })
}

const failureOf = (target: Target, endpoint: Endpoint, status: CallStatus): A2aClientError => {
  switch (status.code) {
    case GRPC_STATUS.UNAUTHENTICATED:
    case GRPC_STATUS.PERMISSION_DENIED:
      return new AuthRequired({
        url: endpoint.url,
        agentUrl: target.agentUrl,
        status: status.code === GRPC_STATUS.UNAUTHENTICATED ? 401 : 403,
        credentials: credentialsSent(target, endpoint.url)
      })
    case GRPC_STATUS.UNAVAILABLE:
      return new AgentUnreachable({ url: endpoint.url, reason: status.details })
    case GRPC_STATUS.DEADLINE_EXCEEDED:
      return new RequestTimeout({ url: endpoint.url, after: Duration.format(Duration.decode(target.timeout ?? DEFAULT_TIMEOUT)) })
    case GRPC_STATUS.RESOURCE_EXHAUSTED:
      if (status.details.startsWith(RECEIVE_LIMIT_EXCEEDED)) {
        return new ResponseTooLarge({ url: endpoint.url, limit: target.maxResponseBytes ?? MAX_RESPONSE_BYTES })
      }
      return protocolErrorOf(status)
    default:
      return protocolErrorOf(status)
  }
}

// ---------------------------------------------------------------------------
// Calls

const metadataFor = (target: Target, endpoint: Endpoint) => {
  const metadata = new grpc.Metadata()
  metadata.set("a2a-version", endpoint.version)
  for (const [key, value] of Object.entries(credentialHeaders(credentialsFor(target, endpoint.url)))) metadata.set(key, value)
  return metadata
}

/** The method, its request as bytes, a channel to the endpoint and the call's metadata. */
const prepare = <A>(state: ClientState, target: Target, endpoint: Endpoint, wire: GrpcWire<A>) =>
  Effect.gen(function*() {
    const method = grpcMethod(endpoint.version, wire.method)
    if (method === undefined) {
      return yield* new UnsupportedOperation({ operation: wire.method, reason: `A2A ${endpoint.version} has no ${wire.method} over gRPC` })
    }
    const url = new URL(endpoint.url)
    const judged = yield* refusal(state, target, endpoint, url)
    // Our own encoders made the message: one the codec refuses is a bug.
    const request = yield* Effect.orDieWith(method.request.toBinary(wire.message), (reason) => new Error(`gRPC ${wire.method}: ${reason}`))
    const client = yield* channelFor(state, url, target.maxResponseBytes ?? MAX_RESPONSE_BYTES, judged)
    return { method, request: Buffer.from(request), client, metadata: metadataFor(target, endpoint) }
  })

/** A message of the answer as the model's value (its bytes as ProtoJSON, then the dialect's decoder). */
const decodeMessage = <A>(
  state: ClientState,
  target: Target,
  endpoint: Endpoint,
  method: GrpcMethod,
  wire: GrpcWire<A>,
  bytes: Buffer
) =>
  Either.match(method.response.toJson(bytes), {
    onLeft: (reason) =>
      Effect.fail(new InvalidResponse({ url: endpoint.url, reason: `a ${method.response.typeName} that does not decode: ${reason}` })),
    onRight: (json) => Effect.map(decodeWith(state, target, endpoint.url, wire.decode, json), (value) => ({ json, value }))
  })

const timeoutOf = (target: Target) => Duration.toMillis(Duration.decode(target.timeout ?? DEFAULT_TIMEOUT))

export const unary = <A>(state: ClientState, target: Target, endpoint: Endpoint, wire: GrpcWire<A>): Effect.Effect<A, A2aClientError> =>
  Effect.gen(function*() {
    const { client, metadata, method, request } = yield* prepare(state, target, endpoint, wire)
    const bytes = yield* Effect.async<Buffer, A2aClientError>((resume) => {
      const call = client.makeUnaryRequest(
        method.path,
        passBytes,
        passBytes,
        request,
        metadata,
        { deadline: Date.now() + timeoutOf(target) },
        (error, response) =>
          resume(
            error !== null ?
              Effect.fail(failureOf(target, endpoint, error)) :
              response === undefined ?
              Effect.fail(new InvalidResponse({ url: endpoint.url, reason: "no answer message" })) :
              Effect.succeed(response)
          )
      )
      return Effect.sync(() => call.cancel())
    })
    return (yield* decodeMessage(state, target, endpoint, method, wire, bytes)).value
  }).pipe(Effect.withSpan(`A2aClient.grpc.${wire.method}`))

/**
 * A server stream: opened (the call's headers, or its failure) within the target's timeout, then
 * read message by message as the consumer pulls (gRPC's flow control holds the rest back), until
 * the interaction's last event; the call is cancelled when the stream ends or is interrupted.
 */
export const stream = (
  state: ClientState,
  target: Target,
  endpoint: Endpoint,
  wire: GrpcWire<V1.StreamResponse>
): Effect.Effect<Stream.Stream<V1.StreamResponse, A2aClientError>, A2aClientError> =>
  Effect.gen(function*() {
    const { client, metadata, method, request } = yield* prepare(state, target, endpoint, wire)
    const call = client.makeServerStreamRequest(method.path, passBytes, passBytes, request, metadata, {})
    // grpc-js ends the stream, then emits the failure: kept here, read when the messages run out.
    let failure: CallStatus | undefined
    call.on("error", (error: grpc.ServiceError) => (failure = error))
    yield* Effect.async<void, A2aClientError>((resume) => {
      const stopListening = () => {
        call.off("metadata", onHeaders)
        call.off("status", settle)
      }
      const settle = (status?: grpc.StatusObject) => {
        stopListening()
        resume(status === undefined || status.code === GRPC_STATUS.OK ? Effect.void : Effect.fail(failureOf(target, endpoint, status)))
      }
      const onHeaders = () => settle()
      call.once("metadata", onHeaders)
      call.once("status", settle)
      return Effect.sync(() => {
        stopListening()
        call.cancel()
      })
    }).pipe(
      Effect.timeoutFail({
        duration: timeoutOf(target),
        onTimeout: () =>
          new RequestTimeout({ url: endpoint.url, after: Duration.format(Duration.decode(target.timeout ?? DEFAULT_TIMEOUT)) })
      })
    )
    // Read with next() alone, never the iterator's return(): that waits for the call to close, which
    // a stream cut short (a limit, a silence, an interruption) gets only from the cancel below.
    const reader = (call as AsyncIterable<Buffer>)[Symbol.asyncIterator]()
    const next = Effect.tryPromise({
      try: () => reader.next(),
      catch: (error) => Option.some(failureOf(target, endpoint, error as CallStatus))
    }).pipe(Effect.flatMap((read) => read.done === true ? Effect.fail(Option.none()) : Effect.succeed(read.value)))
    const messages = Stream.repeatEffectOption(next)
      .pipe(
        Stream.concat(Stream.suspend(() => failure === undefined ? Stream.empty : Stream.fail(failureOf(target, endpoint, failure)))),
        Stream.mapEffect((bytes) => decodeMessage(state, target, endpoint, method, wire, bytes)),
        Stream.takeUntil(({ json, value }) => endsInteraction(json, value)),
        Stream.map(({ value }) => value),
        Stream.ensuring(Effect.sync(() => call.cancel()))
      )
    const idle = target.streamIdleTimeout
    return idle === undefined ? messages : Stream.timeoutFail(
      messages,
      () =>
        new RequestTimeout({
          url: endpoint.url,
          after: `${Duration.format(Duration.decode(idle))} without an event`,
          limit: "stream-idle"
        }),
      idle
    )
  })
