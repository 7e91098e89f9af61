/**
 * One request and its answer, on node's own objects: the agent server's doors read, decode, run,
 * encode and write, and nothing more happens per request (see AgentServer.ts for why the
 * platform's per-request pipeline is not used). JSON answers are written whole, in one call.
 */
import { Effect, Either } from "effect"
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
}

export const makeExchange = (request: IncomingMessage, response: ServerResponse): Exchange => {
  const url = request.url ?? "/"
  const query = url.indexOf("?")
  return {
    request,
    response,
    method: request.method ?? "GET",
    url,
    path: query < 0 ? url : url.slice(0, query),
    headers: request.headers
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
 * The body as UTF-8 text, up to `limit` bytes. A body over the limit is drained (not kept) so
 * the client still reads its 413; one far beyond it is cut off, which closes the connection.
 */
export const readBody = ({ request: source }: Exchange, limit: number): Effect.Effect<BodyRead> =>
  Effect.async<BodyRead>((resume) => {
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
