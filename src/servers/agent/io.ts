/**
 * One request and its answer, on node's own objects: the agent server's doors read, decode, run,
 * encode and write, and nothing more happens per request (see AgentServer.ts for why the
 * platform's per-request pipeline is not used). JSON answers are written whole, in one call.
 */
import { Either } from "effect"
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from "node:http"
import { type AgentRequestError, parseError } from "../../domain/agentErrors.js"

/** A request being answered. */
export interface Exchange {
  readonly request: IncomingMessage
  readonly response: ServerResponse
  readonly method: string
  /** Path and query, as sent. */
  readonly url: string
  /** The path alone. */
  readonly path: string
  /** Lower-case names, as node parsed them. */
  readonly headers: IncomingHttpHeaders
  /** Read before the request is handled (see readBody). */
  readonly body: BodyRead
}

export const makeExchange = (request: IncomingMessage, response: ServerResponse, body: BodyRead): Exchange => {
  const url = request.url ?? "/"
  const query = url.indexOf("?")
  return {
    request,
    response,
    method: request.method ?? "GET",
    url,
    path: query < 0 ? url : url.slice(0, query),
    headers: request.headers,
    body
  }
}

/** Largest request body accepted; bigger ones get 413. */
export const DEFAULT_MAX_BODY_BYTES = 10 * 1024 * 1024
/** Past this many times the limit an oversized upload is cut off instead of drained for a polite 413. */
const DRAIN_FACTOR = 4

export type BodyRead =
  | { readonly _tag: "Complete"; readonly text: string }
  | { readonly _tag: "TooLarge"; readonly bytes: number }
  | { readonly _tag: "Broken" }

export const headerValue = (headers: IncomingHttpHeaders, name: string): string | undefined => {
  const value = headers[name]
  return Array.isArray(value) ? value[0] : value
}

/**
 * Reads the body as UTF-8 text, up to `limit` bytes, and hands it to `done` (once). A body over
 * the limit is drained (not kept) so the client still reads its 413; one far beyond it is cut
 * off, which closes the connection.
 */
export const readBody = (request: IncomingMessage, limit: number, done: (read: BodyRead) => void): void => {
  const declared = Number(request.headers["content-length"] ?? "0")
  if (declared > limit * DRAIN_FACTOR) return done({ _tag: "TooLarge", bytes: declared })
  const chunks: Array<Buffer> = []
  let size = 0
  const finish = (read: BodyRead) => {
    request.off("data", onData)
    request.off("end", onEnd)
    request.off("error", onBroken)
    request.off("close", onBroken)
    done(read)
  }
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
  // The client went away before the end of its body.
  const onBroken = () => finish({ _tag: "Broken" })
  request.on("data", onData)
  request.on("end", onEnd)
  request.on("error", onBroken)
  request.on("close", onBroken)
}

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

/** Writes a complete JSON answer (already serialised). */
export const writeJson = (
  { response }: Exchange,
  status: number,
  json: string,
  contentType: string,
  headers?: Readonly<Record<string, string>>
): void => {
  response.writeHead(status, {
    ...headers,
    "content-type": contentType,
    "content-length": Buffer.byteLength(json)
  })
  response.end(json)
}

/** Writes an answer without a body (204, 304, 400). */
export const writeEmpty = ({ response }: Exchange, status: number, headers?: Readonly<Record<string, string>>): void => {
  response.writeHead(status, headers)
  response.end()
}
