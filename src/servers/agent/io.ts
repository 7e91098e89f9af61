/**
 * Reading request bodies and writing JSON answers for the agent server, on the node request
 * underneath the platform's: the hot path (SendMessage and friends) does no more than read,
 * decode, run, encode and write.
 *
 * JSON answers are written straight to the node response; the handler then returns an empty
 * placeholder, which the platform skips because the response has already ended. That halves
 * the per-request cost of the platform's own response path (measured with autocannon), and
 * SSE answers still go through `HttpServerResponse.stream`.
 */
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServerRequest from "@effect/platform-node/NodeHttpServerRequest"
import { Effect, Either } from "effect"
import { type AgentRequestError, parseError } from "../../domain/agentErrors.js"
import type { IncomingHttpHeaders } from "node:http"

/** Largest request body accepted; bigger ones get 413. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
/** Past this many times the limit an oversized upload is cut off instead of drained for a polite 413. */
const DRAIN_FACTOR = 4

export type BodyRead =
  | { readonly _tag: "Complete"; readonly text: string }
  | { readonly _tag: "TooLarge"; readonly bytes: number }
  | { readonly _tag: "Broken" }

/** The raw node headers (lower-case names), without the platform's per-access copy. */
export const headersOf = (request: HttpServerRequest.HttpServerRequest): IncomingHttpHeaders =>
  NodeHttpServerRequest.toIncomingMessage(request).headers

export const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * The body as UTF-8 text, up to `limit` bytes. A body over the limit is drained (not kept) so
 * the client still reads its 413; one far beyond it is cut off, which closes the connection.
 */
export const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number): Effect.Effect<BodyRead> =>
  Effect.async<BodyRead>((resume) => {
    const source = NodeHttpServerRequest.toIncomingMessage(request)
    const declared = Number(source.headers["content-length"] ?? "0")
    if (declared > limit * DRAIN_FACTOR) {
      resume(Effect.succeed({ _tag: "TooLarge", bytes: declared }))
      return
    }
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size <= limit) chunks.push(chunk)
      else if (size > limit * DRAIN_FACTOR) finish({ _tag: "TooLarge", bytes: size })
    }
    const onEnd = () =>
      finish(size > limit ? { _tag: "TooLarge", bytes: size } : {
        _tag: "Complete",
        text: chunks.length === 1 ? chunks[0]!.toString("utf8") : Buffer.concat(chunks).toString("utf8")
      })
    const onError = () => finish({ _tag: "Broken" })
    const detach = () => {
      source.off("data", onData)
      source.off("end", onEnd)
      source.off("error", onError)
    }
    const finish = (read: BodyRead) => {
      detach()
      resume(Effect.succeed(read))
    }
    source.on("data", onData)
    source.on("end", onEnd)
    source.on("error", onError)
    // An interrupted read (the client went away) leaves no listeners behind.
    return Effect.sync(detach)
  })

/** The body as JSON, or the -32700 parse error; REST bodies may be empty (`{}`), JSON-RPC ones may not. */
export const parseJsonBody = (text: string, allowEmpty: boolean): Either.Either<unknown, AgentRequestError> => {
  if (allowEmpty && text.trim() === "") return Either.right({})
  try {
    return Either.right(JSON.parse(text))
  } catch (error) {
    return Either.left(parseError(`Parse error: ${error instanceof Error ? error.message : "invalid JSON"}`))
  }
}

/** Media types a JSON body may be declared as (a missing Content-Type is let through). */
export const isJsonContentType = (contentType: string | undefined): boolean => {
  if (contentType === undefined || contentType.trim() === "") return true
  const mediaType = contentType.split(";")[0]!.trim().toLowerCase()
  return mediaType === "application/json" || mediaType.endsWith("+json")
}

/** Sent after a response that was written directly; the platform sees it has ended and leaves it be. */
const written = HttpServerResponse.empty()

/** Writes a complete JSON answer (already serialised) and returns the placeholder response. */
export const writeJson = (
  request: HttpServerRequest.HttpServerRequest,
  status: number,
  json: string,
  contentType: string,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse => {
  const response = NodeHttpServerRequest.toServerResponse(request)
  response.writeHead(status, {
    ...headers,
    "content-type": contentType,
    "content-length": Buffer.byteLength(json)
  })
  response.end(json)
  return written
}

/** Writes an answer without a body (204, 304). */
export const writeEmpty = (
  request: HttpServerRequest.HttpServerRequest,
  status: number,
  headers?: Readonly<Record<string, string>>
): HttpServerResponse.HttpServerResponse => {
  const response = NodeHttpServerRequest.toServerResponse(request)
  response.writeHead(status, headers)
  response.end()
  return written
}
