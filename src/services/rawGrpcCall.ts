/**
 * The one call of RawGrpc over @grpc/grpc-js, in a module of its own: RawGrpc.ts loads it (and
 * grpc-js) with the first call only, as src/services/a2aClient/grpcTransport.ts loads grpcCalls.ts.
 * What a call is and answers is written here, below RawGrpc, which re-exports it.
 */
import * as grpc from "@grpc/grpc-js"
import { Duration, Effect } from "effect"
import { AgentUnreachable, RequestTimeout } from "../domain/clientErrors.js"

export interface RawGrpcRequest {
  /** `https://host:port` (TLS with the system's roots) or `http://host:port` (plaintext, h2c). */
  readonly url: string
  /** The HTTP/2 path, e.g. `/lf.a2a.v1.A2AService/GetTask`. */
  readonly path: string
  /** The request message's bytes, as is. */
  readonly message: Uint8Array
  /** Sent as is (names lower-cased, as gRPC has them). */
  readonly metadata: Readonly<Record<string, string>>
  readonly timeout: Duration.DurationInput
  /** Bytes of messages read at most; the call is cancelled past it (`truncated`). */
  readonly maxBytes: number
}

export interface RawGrpcResponse {
  /** The gRPC status code (0 OK). */
  readonly code: number
  readonly details: string
  /** The `grpc-status-details-bin` trailer (a binary google.rpc.Status), when sent. */
  readonly statusDetails: Uint8Array | undefined
  readonly messages: ReadonlyArray<Uint8Array>
  readonly truncated: boolean
}

const DEADLINE_EXCEEDED = 4
const UNAVAILABLE = 14
const STATUS_DETAILS_KEY = "grpc-status-details-bin"

const passBytes = (bytes: Buffer) => bytes

export const call = (request: RawGrpcRequest) =>
  Effect.async<RawGrpcResponse, AgentUnreachable | RequestTimeout>((resume) => {
    const url = new URL(request.url)
    const address = `${url.hostname}:${url.port || (url.protocol === "https:" ? "443" : "80")}`
    const credentials = url.protocol === "https:" ? grpc.credentials.createSsl() : grpc.credentials.createInsecure()
    // One byte over the cap: a message that size is refused by gRPC (RESOURCE_EXHAUSTED), read as truncated.
    const client = new grpc.Client(address, credentials, {
      "grpc.max_receive_message_length": request.maxBytes + 1,
      "grpc.enable_retries": 0
    })
    const metadata = new grpc.Metadata()
    for (const [key, value] of Object.entries(request.metadata)) metadata.set(key, value)
    const timeoutMs = Duration.toMillis(Duration.decode(request.timeout))
    const stream = client.makeServerStreamRequest(request.path, passBytes, passBytes, Buffer.from(request.message), metadata, {
      deadline: Date.now() + timeoutMs
    })
    const messages: Array<Uint8Array> = []
    let size = 0
    let truncated = false
    stream.on("data", (bytes: Buffer) => {
      if (truncated) return
      size += bytes.length
      if (size > request.maxBytes) {
        truncated = true
        stream.cancel()
      } else messages.push(bytes)
    })
    // Non-OK statuses also come as "error"; the status event below says all.
    stream.on("error", () => undefined)
    stream.on("status", (status: { code: number; details: string; metadata: { get: (key: string) => Array<unknown> } }) => {
      client.close()
      const [details] = status.metadata.get(STATUS_DETAILS_KEY)
      truncated = truncated || status.details.startsWith("Received message larger than max")
      if (!truncated && status.code === DEADLINE_EXCEEDED) {
        return resume(Effect.fail(new RequestTimeout({ url: request.url, after: Duration.format(Duration.decode(request.timeout)) })))
      }
      if (status.code === UNAVAILABLE && messages.length === 0) {
        return resume(Effect.fail(new AgentUnreachable({ url: request.url, reason: status.details })))
      }
      resume(Effect.succeed({
        code: status.code,
        details: status.details,
        statusDetails: details instanceof Buffer ? new Uint8Array(details) : undefined,
        messages,
        truncated
      }))
    })
    return Effect.sync(() => {
      stream.cancel()
      client.close()
    })
  })
