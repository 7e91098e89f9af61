/**
 * gRPC's wire on node:http2 (grpc/doc/PROTOCOL-HTTP2.md), the part the agent server's gRPC door
 * serves: unary and server-streaming calls with one request message each. A call is read here
 * (its path, metadata, deadline, one length-prefixed message, identity or gzip/deflate) and
 * answered here (headers, messages, the status in trailers, or trailers-only when nothing was
 * sent); what a call means is grpc.ts's business.
 *
 * Why not @grpc/grpc-js's Server (the client side still uses grpc-js): the door's own cost per call.
 * Measured on 2 cores under h2load, with the same echo agent and codec, a SendMessage through
 * grpc-js's Server took about 1.4× the server CPU of one through the JSON-RPC door, and through
 * this door about 1.2× (bench/README.md, "The gRPC door on node:http2"): grpc-js wraps each call in
 * interceptor chains, metadata objects, listeners and promises that relay's calls do not need.
 *
 * Limits, as the HTTP doors have them: a message over `maxMessageBytes` (after decompression)
 * is RESOURCE_EXHAUSTED; a request that has not all arrived `requestMs` after the call began is
 * DEADLINE_EXCEEDED and its stream is closed; a connection with no call open for `idleMs` is
 * closed (GOAWAY); at most MAX_CALLS_PER_CONNECTION calls are open on one connection.
 */
import * as http2 from "node:http2"
import type { AddressInfo } from "node:net"
import * as zlib from "node:zlib"
import { GRPC_STATUS } from "../../a2a/grpcCodec.js"
import { BodyBytes } from "../bodyBytes.js"

/** How a call ends: its status code, message and (for an error) the `google.rpc.Status` bytes. */
export interface CallStatus {
  readonly code: number
  readonly details: string
  readonly statusDetails?: Uint8Array | undefined
  /** Metadata that goes with the status (grpc-accept-encoding, with a compression not taken). */
  readonly metadata?: http2.OutgoingHttpHeaders | undefined
}

const OK: CallStatus = { code: GRPC_STATUS.OK, details: "" }
const OK_TRAILERS: http2.OutgoingHttpHeaders = { "grpc-status": "0" }

/** Calls open at once on one connection (HTTP/2 SETTINGS_MAX_CONCURRENT_STREAMS). */
const MAX_CALLS_PER_CONNECTION = 256

/** The bytes of a message frame's prefix: a compressed flag, then the length (big-endian). */
const PREFIX_BYTES = 5

/** The answer's headers: gRPC over HTTP/2 with protobuf messages. */
const RESPONSE_HEADERS = { ":status": 200, "content-type": "application/grpc+proto" } as const

/** grpc-message is percent-encoded: bytes outside printable ASCII, and `%` itself. */
const percentEncoded = (text: string): string =>
  /^[\x20-\x24\x26-\x7e]*$/.test(text)
    ? text
    : Array.from(Buffer.from(text, "utf8"), (byte) =>
      byte >= 0x20 && byte <= 0x7e && byte !== 0x25
        ? String.fromCharCode(byte)
        : `%${byte.toString(16).toUpperCase().padStart(2, "0")}`).join("")

const statusHeaders = (status: CallStatus): http2.OutgoingHttpHeaders =>
  status === OK ? OK_TRAILERS : ({
    ...status.metadata,
    "grpc-status": String(status.code),
    ...(status.details === "" ? {} : { "grpc-message": percentEncoded(status.details) }),
    // Binary metadata travels as base64 (unpadded is what gRPC writes; readers take both).
    ...(status.statusDetails === undefined
      ? {}
      : { "grpc-status-details-bin": Buffer.from(status.statusDetails).toString("base64").replace(/=+$/, "") })
  })

/** A message on the wire: not compressed, its length, its bytes. */
const framed = (message: Uint8Array): Buffer => {
  const frame = Buffer.allocUnsafe(PREFIX_BYTES + message.length)
  frame[0] = 0
  frame.writeUInt32BE(message.length, 1)
  frame.set(message, PREFIX_BYTES)
  return frame
}

const DEADLINE_UNITS_MS: Readonly<Record<string, number>> = { H: 3_600_000, M: 60_000, S: 1000, m: 1, u: 1e-3, n: 1e-6 }

/**
 * The longest delay a node timer keeps (2^31 - 1 ms, ~24.8 days): a longer one fires after 1 ms. A
 * deadline further away than this is no deadline for a call (grpc-js sends 30 days as `2592000S`).
 */
const MAX_TIMER_MS = 2 ** 31 - 1

/** `grpc-timeout` (up to 8 digits and a unit) in milliseconds; undefined when malformed. */
const deadlineMs = (header: string): number | undefined => {
  const match = /^(\d{1,8})([HMSmun])$/.exec(header)
  return match === null ? undefined : Number(match[1]) * DEADLINE_UNITS_MS[match[2]!]!
}

const firstOf = (value: string | ReadonlyArray<string> | undefined): string | undefined => typeof value === "string" ? value : value?.[0]

/** One call: its metadata, then the means to answer it. */
export class GrpcCall {
  /** The answer's headers are sent (so the status goes in trailers). */
  private answering = false
  private status: CallStatus | undefined
  private cancelled: (() => void) | undefined
  /** Timers that cut the call (its deadline, the bound on its request), cleared as it closes. */
  private timers: Array<NodeJS.Timeout> = []

  constructor(
    readonly stream: http2.ServerHttp2Stream,
    readonly path: string,
    private readonly headers: http2.IncomingHttpHeaders
  ) {}

  /** The `host:port` the client called. */
  get authority(): string {
    return firstOf(this.headers[":authority"]) ?? firstOf(this.headers.host) ?? ""
  }

  /** A metadata entry's first value (keys are lower case). */
  metadata(key: string): string | undefined {
    return firstOf(this.headers[key])
  }

  /** The call has ended: answered, cancelled by the client, or its connection gone. */
  get ended(): boolean {
    return this.status !== undefined || this.stream.closed || this.stream.destroyed
  }

  /** Runs `handler` once if the call ends before it is answered (the client cancelled, a deadline, a lost connection). */
  onCancel(handler: () => void): void {
    this.cancelled = handler
  }

  /** Cuts the call with `status` after `ms` unless it has closed by then; clear the timer to call it off. */
  cutAfter(ms: number, status: CallStatus): NodeJS.Timeout {
    const timer = setTimeout(() => this.cut(status), ms)
    this.timers.push(timer)
    return timer
  }

  /** Sends one message; false when the stream's buffer is full (wait for "drain" or "close"). */
  write(message: Uint8Array): boolean {
    if (this.ended) return true
    this.respond()
    return this.stream.write(framed(message))
  }

  /** Answers with one message and OK (a unary call's answer). */
  reply(message: Uint8Array): void {
    if (this.ended) return
    this.respond()
    this.status = OK
    this.stream.end(framed(message))
  }

  /** Ends the call with `status` (OK by default): in the trailers, or trailers-only when nothing was sent. */
  end(status: CallStatus = OK): void {
    if (this.ended) return
    this.status = status
    if (this.answering) return void this.stream.end()
    this.stream.respond({ ...RESPONSE_HEADERS, ...statusHeaders(status) }, { endStream: true })
  }

  /**
   * Ends the call with `status` whatever it was doing (a deadline, a request too slow): the work
   * on it is cancelled, and a client still sending its request is stopped (RST_STREAM NO_ERROR
   * after a full answer, RFC 9113 §8.1).
   */
  cut(status: CallStatus): void {
    // A call being answered has its whole request (a handler runs once it has arrived); resetting its
    // stream as its trailers go out brought node:http2 down (std::bad_alloc, Node 20.20), so only a
    // call still sending is reset.
    const sending = !this.answering
    this.end(status)
    if (sending && !this.stream.closed) this.stream.close(http2.constants.NGHTTP2_NO_ERROR)
    this.cancel()
  }

  private respond(): void {
    if (this.answering) return
    this.answering = true
    this.stream.respond(RESPONSE_HEADERS, { waitForTrailers: true })
    this.stream.once("wantTrailers", () => this.stream.sendTrailers(statusHeaders(this.status ?? OK)))
  }

  /** @internal The stream closed: a call not answered by then was cancelled. */
  closed(): void {
    for (const timer of this.timers) clearTimeout(timer)
    if (this.status !== undefined) return
    this.status = { code: GRPC_STATUS.CANCELLED, details: "Cancelled" }
    this.cancel()
  }

  private cancel(): void {
    const handler = this.cancelled
    this.cancelled = undefined
    handler?.()
  }
}

/** What the door does with calls. */
export interface GrpcCallHandler {
  /** Whether `path` names a method; false answers UNIMPLEMENTED. */
  readonly serves: (path: string) => boolean
  /** A status refuses the call by its metadata alone, before its message is read. */
  readonly refuse: (call: GrpcCall) => CallStatus | undefined
  /** The call's one request message has arrived (and the client's side of the call has ended). */
  readonly handle: (call: GrpcCall, message: Buffer) => void
}

export interface GrpcServerOptions {
  /** PEM certificate chain and key: TLS; plaintext (h2c) without. */
  readonly tls?: { readonly cert: Buffer; readonly key: Buffer } | undefined
  /** Largest request message, in bytes, after decompression. */
  readonly maxMessageBytes: number
  /** How long a call's request may take to arrive, from the call's start to its end. */
  readonly requestMs: number
  /** How long a connection may stay with no call open. */
  readonly idleMs: number
}

const status = (code: number, details: string): CallStatus => ({ code, details })

/** What a call open when the server closes is told (grpc's statuscodes.md: "Server shutting down"). */
const SHUTTING_DOWN = status(GRPC_STATUS.UNAVAILABLE, "The server is shutting down")

/** How long a closing server's connections have to send their calls' last statuses. */
const SHUTDOWN_GRACE_MS = 1000

/** The compressions a request message may come in (besides none), as grpc-accept-encoding names them. */
const ACCEPTED_ENCODINGS = "identity,deflate,gzip"

/**
 * The request message of a call, inflated when the client compressed it; a status when it cannot be
 * one. As grpc's compression.md says: a compressed flag with no (or the identity) encoding, or a
 * flag other than 0 and 1, is INTERNAL; an encoding not taken is UNIMPLEMENTED, with the ones taken.
 */
const requestMessage = (frames: Buffer, encoding: string | undefined, maxBytes: number): Buffer | CallStatus => {
  if (frames.length === 0) return status(GRPC_STATUS.UNIMPLEMENTED, "The call carried no request message")
  if (frames.length < PREFIX_BYTES) return status(GRPC_STATUS.INTERNAL, "The request message ended early")
  const length = frames.readUInt32BE(1)
  if (frames.length < PREFIX_BYTES + length) return status(GRPC_STATUS.INTERNAL, "The request message ended early")
  if (frames.length > PREFIX_BYTES + length) {
    return status(GRPC_STATUS.UNIMPLEMENTED, "The call carried more than one request message")
  }
  const message = frames.subarray(PREFIX_BYTES)
  if (frames[0] === 0) return message
  if (frames[0] !== 1) return status(GRPC_STATUS.INTERNAL, `The request message's compressed flag is ${frames[0]}, not 0 or 1`)
  if (encoding === undefined || encoding === "identity") {
    return status(GRPC_STATUS.INTERNAL, "The request message is marked compressed, but grpc-encoding names no compression")
  }
  if (encoding === "gzip" || encoding === "deflate") {
    try {
      const inflate = encoding === "gzip" ? zlib.gunzipSync : zlib.inflateSync
      return inflate(message, { maxOutputLength: maxBytes })
    } catch (error) {
      return (error as { code?: string }).code === "ERR_BUFFER_TOO_LARGE"
        ? status(GRPC_STATUS.RESOURCE_EXHAUSTED, `The request message is larger than ${maxBytes} bytes once decompressed`)
        : status(GRPC_STATUS.INTERNAL, "The request message could not be decompressed")
    }
  }
  return {
    code: GRPC_STATUS.UNIMPLEMENTED,
    details: `The request message is compressed with ${encoding}; this server takes ${ACCEPTED_ENCODINGS}`,
    metadata: { "grpc-accept-encoding": ACCEPTED_ENCODINGS }
  }
}

const isStatus = (value: Buffer | CallStatus): value is CallStatus => !Buffer.isBuffer(value)

/**
 * Reads the call's request: its frames (refusing a message whose announced length is over the
 * limit as soon as its prefix arrives), then hands the message to the handler at the call's
 * half-close. A request still incomplete after `requestMs` is cut with DEADLINE_EXCEEDED.
 */
const readRequest = (call: GrpcCall, handler: GrpcCallHandler, options: GrpcServerOptions) => {
  const { stream } = call
  const received = new BodyBytes()
  const slow = call.cutAfter(
    options.requestMs,
    status(GRPC_STATUS.DEADLINE_EXCEEDED, `The request did not arrive within ${options.requestMs / 1000} s`)
  )
  const stop = (refusal: CallStatus) => {
    clearTimeout(slow)
    stream.removeAllListeners("data")
    call.cut(refusal)
  }
  stream.on("data", (chunk: Buffer) => {
    const before = received.length
    received.add(chunk)
    // The announced length is known once the prefix is here (in however many frames it came): refuse
    // before buffering the rest.
    if (before < PREFIX_BYTES && received.length >= PREFIX_BYTES) {
      const announced = received.bytes.readUInt32BE(1)
      if (announced > options.maxMessageBytes) {
        stop(status(GRPC_STATUS.RESOURCE_EXHAUSTED, `The request message is larger than ${options.maxMessageBytes} bytes`))
      } else received.expect(PREFIX_BYTES + announced)
    }
    if (received.length > options.maxMessageBytes + 2 * PREFIX_BYTES) {
      stop(status(GRPC_STATUS.RESOURCE_EXHAUSTED, `The request is larger than ${options.maxMessageBytes} bytes`))
    }
  })
  stream.on("end", () => {
    clearTimeout(slow)
    if (call.ended) return
    const message = requestMessage(received.bytes, call.metadata("grpc-encoding"), options.maxMessageBytes)
    if (isStatus(message)) return call.end(message)
    handler.handle(call, message)
  })
}

const ignore = () => {}

/** Starts a call on a new stream: its path and metadata are checked, then its request is read. */
const startCall = (
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
  handler: GrpcCallHandler,
  options: GrpcServerOptions,
  open: Set<GrpcCall>
) => {
  stream.on("error", ignore) // a reset stream ends its call (its "close"); nothing more to do
  const contentType = firstOf(headers["content-type"]) ?? ""
  if (headers[":method"] !== "POST" || !contentType.startsWith("application/grpc")) {
    stream.respond({ ":status": 415 }, { endStream: true })
    return
  }
  const call = new GrpcCall(stream, firstOf(headers[":path"]) ?? "", headers)
  open.add(call)
  stream.on("close", () => {
    open.delete(call)
    call.closed()
  })
  const timeout = call.metadata("grpc-timeout")
  if (timeout !== undefined) {
    const ms = deadlineMs(timeout)
    if (ms === undefined) return call.cut(status(GRPC_STATUS.INTERNAL, `Invalid grpc-timeout "${timeout}"`))
    if (ms <= MAX_TIMER_MS) call.cutAfter(ms, status(GRPC_STATUS.DEADLINE_EXCEEDED, "Deadline exceeded"))
  }
  if (!handler.serves(call.path)) return call.cut(status(GRPC_STATUS.UNIMPLEMENTED, `No method ${call.path}`))
  const refusal = handler.refuse(call)
  if (refusal !== undefined) return call.cut(refusal)
  readRequest(call, handler, options)
}

/**
 * Closes a connection (GOAWAY) once it has had no call open for `idleMs`: from its start, and again
 * each time its last open call ends (a new timer each time: node does not restart a cleared one).
 */
const closeWhenIdle = (session: http2.ServerHttp2Session, idleMs: number) => {
  let open = 0
  const closeLater = () => setTimeout(() => session.close(), idleMs)
  let idle = closeLater()
  session.on("stream", (stream) => {
    open++
    clearTimeout(idle)
    stream.once("close", () => {
      if (--open === 0 && !session.closed) idle = closeLater()
    })
  })
  session.once("close", () => clearTimeout(idle))
}

/** A gRPC server (not yet listening) that hands its calls to `handler`; `close` ends it and every call. */
export const makeGrpcServer = (handler: GrpcCallHandler, options: GrpcServerOptions) => {
  const settings = { maxConcurrentStreams: MAX_CALLS_PER_CONNECTION }
  const server = options.tls === undefined
    ? http2.createServer({ settings })
    : http2.createSecureServer({ settings, cert: options.tls.cert, key: options.tls.key, allowHTTP1: false })
  const sessions = new Set<http2.ServerHttp2Session>()
  server.on("session", (session) => {
    sessions.add(session)
    session.on("error", ignore)
    session.once("close", () => sessions.delete(session))
    closeWhenIdle(session, options.idleMs)
  })
  const calls = new Set<GrpcCall>()
  server.on("stream", (stream, headers) => startCall(stream, headers, handler, options, calls))
  return {
    /** Listens on `host:port` (0 picks one); resolves with the bound port. */
    listen: (host: string, port: number) =>
      new Promise<number>((resolve, reject) => {
        server.once("error", reject)
        server.listen(port, host, () => {
          server.off("error", reject)
          resolve((server.address() as AddressInfo).port)
        })
      }),
    /** Stops listening, ends every open call UNAVAILABLE, and closes the connections once those statuses are out. */
    close: () => {
      server.close()
      // A call cut without a status is read INTERNAL (RST_STREAM NO_ERROR): each is told why. GOAWAY
      // lets the statuses out; a client that reads nothing does not hold the shutdown past the grace.
      for (const call of calls) call.cut(SHUTTING_DOWN)
      for (const session of sessions) {
        session.close()
        setTimeout(() => session.destroy(), SHUTDOWN_GRACE_MS).unref()
      }
    }
  }
}
