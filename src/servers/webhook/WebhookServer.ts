/**
 * The push-notification receiver behind `relay server push`: POST on any path records the
 * notification and answers 200; `GET /health` answers while it runs.
 *
 * It must survive whatever a sender posts: every request either ends in a JSON answer (200, or
 * 400/401/413/500 with `{error:{code,message,hint}}`) or, for an upload far beyond the limit,
 * a closed connection — never a stopped server.
 */
import * as HttpLayerRouter from "@effect/platform/HttpLayerRouter"
import type * as HttpServerRequest from "@effect/platform/HttpServerRequest"
import * as HttpServerResponse from "@effect/platform/HttpServerResponse"
import * as NodeHttpServer from "@effect/platform-node/NodeHttpServer"
import { Effect, Layer, Redacted, Stream } from "effect"
import { createServer } from "node:http"
import { ListenFailed } from "../../domain/errors.js"
import { secretMatches } from "../../domain/secretCheck.js"
import { serverBaseUrl } from "../address.js"
import type { NotificationRecord } from "../../domain/notification.js"
import { recordNotification } from "../../programs/notifications.js"

export const DEFAULT_WEBHOOK_HOST = "127.0.0.1"
export const DEFAULT_WEBHOOK_PORT = 9000
/** Largest accepted body. A2A notifications are task snapshots; 1 MiB leaves plenty of room. */
export const DEFAULT_MAX_BODY_BYTES = 1024 * 1024
/** Past this many bytes an oversized upload is cut off instead of drained for a polite 413. */
const DRAIN_FACTOR = 16

/** Headers a sender may carry the notification token in (A2A v0.3, its unprefixed variant, v1.0). */
export const TOKEN_HEADERS = ["x-a2a-notification-token", "a2a-notification-token"] as const

/** A request the receiver turned away, for the door to report on stderr. */
export interface WebhookRejection {
  readonly path: string
  readonly status: number
  readonly code: string
  readonly message: string
}

/** What the door does with each outcome (print it); both default to doing nothing. */
export interface WebhookHooks {
  readonly onNotification: (record: NotificationRecord) => Effect.Effect<void>
  readonly onRejected: (rejection: WebhookRejection) => Effect.Effect<void>
}

export interface WebhookOptions {
  /** When set, every POST must carry this token; when absent everything is accepted (development use). */
  readonly token?: Redacted.Redacted<string> | undefined
  readonly maxBodyBytes?: number | undefined
  readonly hooks?: Partial<WebhookHooks> | undefined
}

export interface WebhookServerOptions extends WebhookOptions {
  readonly host: string
  readonly port: number
}


// ---------------------------------------------------------------------------
// Authentication

/** Constant-time token comparison (see secretCheck). */
export const tokenMatches = secretMatches

const BEARER = /^Bearer\s+(\S.*)$/i

/** Every token the request presents, in any of the accepted headers. */
export const presentedTokens = (headers: Readonly<Record<string, string | undefined>>): ReadonlyArray<string> => {
  const fromTokenHeaders = TOKEN_HEADERS.map((name) => headers[name]?.trim() ?? "").filter((token) => token !== "")
  const bearer = BEARER.exec(headers["authorization"] ?? "")?.[1]?.trim()
  return bearer === undefined || bearer === "" ? fromTokenHeaders : [...fromTokenHeaders, bearer]
}

// ---------------------------------------------------------------------------
// Responses

const errorResponse = (status: number, code: string, message: string, hint: string) =>
  HttpServerResponse.unsafeJson({ error: { code, message, hint } }, { status })

/** Path without the query string (which may hold secrets), bounded in length. */
const pathOf = (url: string) => (url.split("?")[0] ?? "/").slice(0, 2048) || "/"

type BodyRead =
  | { readonly _tag: "Complete"; readonly bytes: Uint8Array }
  | { readonly _tag: "TooLarge"; readonly size: number }

/**
 * The body up to `limit` bytes. An oversized body is drained (not kept) so the sender still
 * gets its 413; one far beyond the limit is cut off, which closes the connection.
 */
const readBody = (request: HttpServerRequest.HttpServerRequest, limit: number) => {
  const cutOff = limit * DRAIN_FACTOR
  return request.stream.pipe(
    Stream.runFoldWhile(
      { kept: [] as Array<Uint8Array>, size: 0 },
      (state) => state.size <= cutOff,
      (state, chunk) => {
        const size = state.size + chunk.length
        // Kept chunks are appended in place: one array per request, never shared.
        if (size <= limit) state.kept.push(chunk)
        return { kept: state.kept, size }
      }
    ),
    Effect.map(({ kept, size }): BodyRead =>
      size > limit ? { _tag: "TooLarge", size } : { _tag: "Complete", bytes: Buffer.concat(kept) })
  )
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

const parseJson = (bytes: Uint8Array): { readonly text: string; readonly value: unknown } | undefined => {
  try {
    const text = strictUtf8.decode(bytes)
    return { text, value: JSON.parse(text) }
  } catch {
    return undefined
  }
}

// ---------------------------------------------------------------------------
// Routes

const silent: WebhookHooks = { onNotification: () => Effect.void, onRejected: () => Effect.void }

const makeReceiver = (options: WebhookOptions) => {
  const hooks: WebhookHooks = { ...silent, ...options.hooks }
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const expected = options.token === undefined ? undefined : Redacted.value(options.token)

  const reject = (path: string, status: number, code: string, message: string, hint: string) =>
    Effect.as(hooks.onRejected({ path, status, code, message }), errorResponse(status, code, message, hint))

  return (request: HttpServerRequest.HttpServerRequest) =>
    Effect.gen(function*() {
      const path = pathOf(request.url)
      const tokens = presentedTokens(request.headers)
      if (expected !== undefined && !tokens.some((token) => tokenMatches(expected, token))) {
        return yield* reject(path, 401, "unauthorized", tokens.length === 0 ? "No notification token" : "Wrong notification token",
          "Send the token given to relay server push --token as X-A2A-Notification-Token or Authorization: Bearer")
      }
      const declaredLength = Number(request.headers["content-length"] ?? "0")
      const body = declaredLength > limit
        ? ({ _tag: "TooLarge", size: declaredLength } as const)
        : yield* readBody(request, limit)
      if (body._tag === "TooLarge") {
        return yield* reject(path, 413, "payload_too_large", `Body of ${body.size} bytes exceeds the ${limit}-byte limit`,
          "Push notifications are task snapshots or events; raise the limit with --max-body-bytes if this one is genuine")
      }
      const parsed = parseJson(body.bytes)
      if (parsed === undefined) {
        return yield* reject(path, 400, "invalid_json", "The body is not valid UTF-8 JSON",
          "Post an A2A StreamResponse or Task as JSON (Content-Type: application/a2a+json or application/json)")
      }
      const record = yield* recordNotification({
        path,
        tokenPresent: tokens.length > 0,
        contentType: request.headers["content-type"],
        body: parsed.value,
        rawText: parsed.text
      })
      yield* hooks.onNotification(record)
      return HttpServerResponse.unsafeJson({ status: "ok", id: record.id })
    }).pipe(
      Effect.catchTag("StateFileUnavailable", (error) =>
        reject(pathOf(request.url), 500, error.code, error.message, error.hint)),
      // The connection broke mid-body; nobody is left to answer.
      Effect.catchTag("RequestError", () => Effect.succeed(HttpServerResponse.empty({ status: 400 }))),
      Effect.catchAllDefect((defect) =>
        reject(pathOf(request.url), 500, "internal_error", `Notification not recorded: ${String(defect)}`,
          "This is a bug in relay; the sender may retry"))
    )
}

const health = HttpServerResponse.unsafeJson({ status: "ok" })

/** The receiver's routes: POST on any path, GET /health. Needs NotificationLog. */
export const webhookRoutes = (options: WebhookOptions = {}) =>
  HttpLayerRouter.addAll([
    HttpLayerRouter.route("GET", "/health", health),
    HttpLayerRouter.route("POST", "*", makeReceiver(options))
  ])

/** The routes served on whatever HttpServer is provided (tests give one on a free port). */
export const serveWebhook = (options: WebhookOptions = {}) =>
  HttpLayerRouter.serve(webhookRoutes(options), { disableLogger: true, disableListenLog: true })

/** The receiver bound to `host:port` (0 picks a free port); the HttpServer is exposed for its address. */
export const webhookServerLayer = (options: WebhookServerOptions) =>
  serveWebhook(options).pipe(
    Layer.provideMerge(NodeHttpServer.layer(createServer, { host: options.host, port: options.port })),
    Layer.catchAll((error) => Layer.fail(ListenFailed.fromCause(options.host, options.port, error)))
  )

/** The base URL senders should post to (at 127.0.0.1 when bound to every interface). */
export const webhookBaseUrl = serverBaseUrl

/** Whether a host is a loopback address, i.e. only this machine can post to it. */
export const isLoopbackHost = (host: string): boolean =>
  host === "localhost" || host === "::1" || host === "[::1]" || /^127\.\d+\.\d+\.\d+$/.test(host)
