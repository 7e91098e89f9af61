/**
 * The checks in front of the MCP HTTP routes, in the order they run: Origin (a page on another
 * site must not drive a local MCP server), then the JSON body (the same size limit as stdio, then
 * the message gate), and last the answers for everything that went wrong. Every answer is a
 * JSON-RPC error in JSON: never an HTML page, a stack trace or a file path.
 */
import { Predicate } from "effect"
import express, { type NextFunction, type Request, type RequestHandler, type Response } from "express"
import { MAX_MCP_MESSAGE_BYTES } from "../domain/limits.js"
import { admitJson, errorAnswer, INVALID_REQUEST, oversized, PARSE_ERROR, type Refused } from "./messageGate.js"
import { isAllowedOrigin } from "./origins.js"

const INTERNAL_ERROR = -32603
/** Not a JSON-RPC code: the SDK's and this server's code for "refused by the HTTP layer". */
const SERVER_REFUSED = -32000

export const jsonRpcError = (res: Response, status: number, message: string, code: number = SERVER_REFUSED) =>
  void res.status(status).json(errorAnswer(code, message))

// ---------------------------------------------------------------------------
// Origin

/**
 * What a browser client of MCP over HTTP sends and must read (the session id, the protocol version,
 * resumption; a 2026-07-28 request's Mcp-Method and Mcp-Name, without which it is refused).
 */
const CORS_HEADERS = {
  "access-control-allow-methods": "GET, POST, DELETE, OPTIONS",
  "access-control-allow-headers":
    "Content-Type, Accept, Authorization, Mcp-Session-Id, Mcp-Protocol-Version, Mcp-Method, Mcp-Name, Last-Event-ID",
  "access-control-expose-headers": "Mcp-Session-Id, Mcp-Protocol-Version",
  "access-control-max-age": "600"
}

/**
 * Refuses a foreign Origin (403, before anything else, preflights included). An allowed browser
 * origin gets CORS headers naming it, and its preflight (OPTIONS) is answered here with 204.
 */
export const originCheck =
  (servedHosts: ReadonlyArray<string>, allowedOrigins: ReadonlyArray<string>): RequestHandler => (req, res, next) => {
    const origin = req.headers.origin
    if (!isAllowedOrigin(origin, servedHosts, req.socket.localPort, allowedOrigins)) {
      return jsonRpcError(res, 403, `Origin not allowed: ${origin}; relay mcp --allow-origin allows more origins`)
    }
    if (origin !== undefined) res.set({ ...CORS_HEADERS, "access-control-allow-origin": origin, vary: "Origin" })
    if (req.method === "OPTIONS") return void res.status(204).end()
    next()
  }

// ---------------------------------------------------------------------------
// Body

/**
 * JSON bodies up to the limit (inflated size: a compressed body cannot slip past it). Non-strict,
 * so a scalar reaches the gate and gets "Invalid Request" rather than a parse error.
 */
export const jsonBody = (maxBytes: number = MAX_MCP_MESSAGE_BYTES): RequestHandler => express.json({ limit: maxBytes, strict: false })

/** The first refusal among a body's messages (a batch is refused whole; an empty one is no message), if any. */
const refusalOf = (body: unknown): Refused | undefined => {
  for (const json of Array.isArray(body) && body.length > 0 ? body : [body]) {
    const admission = admitJson(json)
    if (admission._tag === "Refused") return admission
  }
  return undefined
}

/** Every POST carries JSON-RPC: refused before an MCP transport sees it. */
export const messageGate = (log: (line: string) => void): RequestHandler => (req, res, next) => {
  if (req.method !== "POST") return next()
  if (req.body === undefined) return jsonRpcError(res, 415, "Unsupported Media Type: send application/json", INVALID_REQUEST)
  const refusal = refusalOf(req.body)
  if (refusal === undefined) return next()
  log(`Refused an MCP message over HTTP: ${refusal.reason}`)
  res.status(400).json(refusal.answer)
}

// ---------------------------------------------------------------------------
// Failures

/** body-parser's error types (http-errors carry `type` and `status`). */
const bodyErrorOf = (error: unknown) =>
  Predicate.isRecord(error) && typeof error["type"] === "string"
    ? { type: error["type"], status: error["status"], length: typeof error["length"] === "number" ? error["length"] : undefined }
    : undefined

/**
 * The last error handler: what body-parser refused and whatever a route threw, as JSON-RPC. The
 * details go to the log, never into the answer.
 */
export const jsonRpcFailures = (maxBytes: number, log: (line: string, error: unknown) => void) =>
(
  error: unknown,
  _req: Request,
  res: Response,
  _next: NextFunction
) => {
  const body = bodyErrorOf(error)
  if (res.headersSent) {
    log("MCP HTTP request failed after its answer began", error)
    return void res.end()
  }
  switch (body?.type) {
    case "entity.too.large":
      return void res.status(413).json(oversized(maxBytes, body.length, null).answer)
    case "entity.parse.failed":
      return jsonRpcError(res, 400, "Parse error: the body is not JSON", PARSE_ERROR)
    case "encoding.unsupported":
    case "charset.unsupported":
      return jsonRpcError(res, 415, "Unsupported Media Type: send UTF-8 JSON", INVALID_REQUEST)
    case "request.aborted":
      return void res.end()
  }
  const status = typeof body?.status === "number" && body.status >= 400 && body.status < 500 ? body.status : 500
  if (status === 500) log("MCP HTTP request failed", error)
  jsonRpcError(res, status, status === 500 ? "Internal error" : "Bad request", status === 500 ? INTERNAL_ERROR : INVALID_REQUEST)
}

/** Paths the server does not serve: JSON, not Express's HTML page. */
export const notServed = (served: string): RequestHandler => (req, res) =>
  jsonRpcError(res, 404, `Not found: ${req.method} ${req.path}; this server answers on ${served} and /health`)
