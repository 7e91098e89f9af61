// Small node:http helpers shared by the test peers: loopback binding, shutdown,
// request recording and a bearer-token gate.
import http from "node:http"
import * as Net from "node:net"
import type { AddressInfo } from "node:net"

/** One incoming HTTP request as a peer saw it. Header names are lower-case (node's convention). */
export interface RecordedRequest {
  readonly method: string
  /** Path without the query string, e.g. `/a2a/jsonrpc`. */
  readonly path: string
  /** Path plus query string as sent by the client. */
  readonly url: string
  readonly headers: Readonly<Record<string, string | string[] | undefined>>
  /** Filled in when the response finishes (undefined while a stream is still open). */
  status?: number
  /** Parsed JSON body when the peer parsed one (filled in when the response finishes). */
  body?: unknown
}

/** Bind a server on 127.0.0.1 with an ephemeral port and return its base URL (no trailing slash). */
export const listenOnLoopback = (server: http.Server): Promise<string> =>
  new Promise((resolve, reject) => {
    server.once("error", reject)
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject)
      const { port } = server.address() as AddressInfo
      resolve(`http://127.0.0.1:${port}`)
    })
  })

/** Close a server, cutting open keep-alive and SSE connections so close() cannot hang. */
export const closeServer = (server: http.Server): Promise<void> =>
  new Promise((resolve, reject) => {
    if (!server.listening) {
      resolve()
      return
    }
    server.close((error) => (error ? reject(error) : resolve()))
    server.closeAllConnections()
  })

const pathOf = (url: string): string => {
  const queryStart = url.indexOf("?")
  return queryStart === -1 ? url : url.slice(0, queryStart)
}

/**
 * Append a record for `req` to `log` now (so arrival order is kept) and complete it with the
 * status code and the parsed body once the response is done. `readBody` lets express peers
 * report `req.body` as parsed by the SDK's own middleware.
 */
export const recordRequest = (
  log: RecordedRequest[],
  req: http.IncomingMessage,
  res: http.ServerResponse,
  readBody: () => unknown
): RecordedRequest => {
  const url = req.url ?? "/"
  const record: RecordedRequest = { method: req.method ?? "GET", path: pathOf(url), url, headers: { ...req.headers } }
  log.push(record)
  const complete = (): void => {
    record.status = res.statusCode
    const body = readBody()
    if (body !== undefined) record.body = body
  }
  res.once("finish", complete)
  res.once("close", () => {
    if (record.status === undefined) complete()
  })
  return record
}

/** The bearer token of an `Authorization: Bearer <token>` header, if any. */
export const bearerTokenOf = (header: string | undefined): string | undefined => {
  const match = header === undefined ? null : /^Bearer\s+(.+)$/i.exec(header.trim())
  return match?.[1]
}

/** The secret a request presented: its bearer token, else its X-API-Key. */
export const presentedSecretOf = (req: { header(name: string): string | undefined }): string | undefined =>
  bearerTokenOf(req.header("authorization")) ?? req.header("x-api-key")

/** A peer's user that also keeps the secret its request presented, for the behaviour that echoes it. */
export class PresentingUser {
  constructor(
    private readonly user: { readonly isAuthenticated: boolean; readonly userName: string },
    readonly presented: string | undefined
  ) {}
  get isAuthenticated(): boolean {
    return this.user.isAuthenticated
  }
  get userName(): string {
    return this.user.userName
  }
}

/** Answer 401 the way an auth-protected A2A agent would. */
export const rejectUnauthorized = (res: http.ServerResponse): void => {
  const body = JSON.stringify({ error: "unauthorized", message: "A valid bearer token is required." })
  res.writeHead(401, {
    "WWW-Authenticate": "Bearer realm=\"a2a-test-peer\"",
    "Content-Type": "application/json",
    "Content-Length": Buffer.byteLength(body)
  })
  res.end(body)
}

/** Read a request body as UTF-8 text. */
export const readBodyText = (req: http.IncomingMessage): Promise<string> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = []
    req.on("data", (chunk: Buffer) => chunks.push(chunk))
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")))
    req.on("error", reject)
  })

/** JSON.parse that yields undefined instead of throwing. */
export const tryParseJson = (text: string): unknown => {
  try {
    return JSON.parse(text) as unknown
  } catch {
    return undefined
  }
}

/** Send a JSON response with an explicit length (no chunked encoding surprises). */
export const sendJson = (res: http.ServerResponse, status: number, payload: unknown): void => {
  const body = JSON.stringify(payload)
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(body) })
  res.end(body)
}

/** A signed-in caller; both SDK versions' `User` interfaces are this shape. */
export class BearerUser {
  get isAuthenticated(): boolean {
    return true
  }
  get userName(): string {
    return "bearer-user"
  }
}

/**
 * The SDK user builder of a peer: signed in with the required token, or (with none required)
 * any bearer token; `anonymous` is the SDK's own unauthenticated user.
 */
export const userBuilderFor =
  <U>(requireBearer: string | undefined, anonymous: () => Promise<U>) =>
  async (req: { header(name: string): string | undefined }): Promise<BearerUser | U> => {
    const token = bearerTokenOf(req.header("authorization"))
    const valid = token !== undefined && (requireBearer === undefined || token === requireBearer)
    return valid ? new BearerUser() : await anonymous()
  }

/** What a client that never stops uploading saw: the answer's status line, and whether the server closed the connection. */
export interface EndlessUpload {
  readonly status: string
  readonly closed: boolean
}

/** A length no upload reaches within a test (1 TiB). */
export const ENDLESS_BYTES = 2 ** 40
/** What an endless upload sends, again and again. */
export const UPLOAD_PIECE = Buffer.alloc(64 * 1024, 0x61)

/**
 * Sends `head` to 127.0.0.1:`port`, then `piece` without end (each time the socket drains), until
 * the server closes the connection or `withinMs` passes.
 */
export const endlessUpload = (port: number, head: string, withinMs: number, piece: Buffer = UPLOAD_PIECE): Promise<EndlessUpload> =>
  new Promise((resolve) => {
    let answer = ""
    const socket = Net.connect(port, "127.0.0.1", () => {
      socket.write(head)
      pump()
    })
    const pump = () => {
      while (!socket.destroyed && socket.write(piece));
      if (!socket.destroyed) socket.once("drain", pump)
    }
    const done = (closed: boolean) => {
      clearTimeout(timer)
      socket.destroy()
      resolve({ status: answer.slice(0, 12), closed })
    }
    const timer = setTimeout(() => done(false), withinMs)
    socket.on("data", (data) => (answer += String(data)))
    socket.on("error", () => done(true))
    socket.on("close", () => done(true))
  })

/**
 * Whether an endless upload was cut off: the connection closed, after the answer `status` when the
 * client read it in time (closing a connection with the upload unread makes the kernel reset it,
 * which can overtake an answer not yet read: what holds is that the server stopped reading).
 */
export const cutOffAfter = (upload: EndlessUpload, status: string): boolean =>
  upload.closed && (upload.status === status || upload.status === "")
