/**
 * The push-notification receiver behind `relay server push`: POST on any path records the
 * notification and answers 200; `GET /health` answers while it runs.
 *
 * It must survive whatever a sender posts: every request either ends in a JSON answer (200, or
 * 400/401/403/413/500 with `{error:{code,message,hint}}`) or, for an upload far beyond the limit,
 * a closed connection — never a stopped server. A body nested deeper than MAX_JSON_DEPTH is
 * refused (400) before it is recorded, like any other malformed one.
 */
import { Effect, Redacted } from "effect"
import { exceedsJsonDepth, MAX_JSON_DEPTH, MAX_PUSH_BODY_BYTES } from "../../domain/limits.js"
import type { NotificationRecord } from "../../domain/notification.js"
import { secretMatches } from "../../domain/secretCheck.js"
import { type IncomingNotification, recordNotification } from "../../programs/notifications.js"
import { serverBaseUrl } from "../address.js"
import { type Exchange, headerValue, serveExchanges, writeEmpty, writeJson } from "../exchange.js"

export const DEFAULT_WEBHOOK_HOST = "127.0.0.1"
export const DEFAULT_WEBHOOK_PORT = 9000
/** Largest accepted body. A2A notifications are task snapshots; 1 MiB leaves plenty of room. */
export const DEFAULT_MAX_BODY_BYTES = MAX_PUSH_BODY_BYTES
/** Past this many times the limit an oversized upload is cut off instead of drained for a polite 413. */
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
export const presentedTokens = (headers: Exchange["headers"]): ReadonlyArray<string> => {
  const fromTokenHeaders = TOKEN_HEADERS.map((name) => headerValue(headers, name)?.trim() ?? "").filter((token) => token !== "")
  const bearer = BEARER.exec(headers["authorization"] ?? "")?.[1]?.trim()
  return bearer === undefined || bearer === "" ? fromTokenHeaders : [...fromTokenHeaders, bearer]
}

/**
 * The token senders must show, as a header carries it: a header value never starts or ends with
 * whitespace (node strips it), so a token that does could never be matched.
 */
const expectedToken = (token: Redacted.Redacted<string> | undefined): string | undefined =>
  token === undefined ? undefined : Redacted.value(token).trim()

const anyMatches = (expected: string, tokens: ReadonlyArray<string>) => tokens.some((token) => tokenMatches(expected, token))

/**
 * The page a browser request comes from. Agents post from servers, which send no Origin; a web
 * page the user visits could otherwise post a forged notification to a receiver without a token
 * (a cross-origin text/plain POST needs no preflight, and DNS rebinding reaches loopback), and it
 * would be logged, and read by assistants, as an agent's.
 */
const browserOrigin = (headers: Exchange["headers"]): string | undefined => headerValue(headers, "origin")

const isAuthorized = (expected: string, headers: Exchange["headers"]) => anyMatches(expected, presentedTokens(headers))

// ---------------------------------------------------------------------------
// Responses

// A refusal whose body was not read to its end (no token, an upload past the cut-off) closes the
// connection (exchange.ts, writeJson).
const answerError = (exchange: Exchange, status: number, code: string, message: string, hint: string) =>
  writeJson(exchange, status, JSON.stringify({ error: { code, message, hint } }))

/** Path without the query string (which may hold secrets), bounded in length. */
const pathOf = (exchange: Exchange) => exchange.path.slice(0, 2048) || "/"

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
  const expected = expectedToken(options.token)

  const reject = (exchange: Exchange, status: number, code: string, message: string, hint: string) =>
    Effect.zipRight(
      hooks.onRejected({ path: pathOf(exchange), status, code, message }),
      Effect.sync(() => answerError(exchange, status, code, message, hint))
    )

  /** Records, prints and answers an accepted notification: the request's one effect. */
  const accept = (exchange: Exchange, incoming: IncomingNotification) =>
    Effect.flatMap(
      recordNotification(incoming),
      (record) => Effect.map(hooks.onNotification(record), () => writeJson(exchange, 200, JSON.stringify({ status: "ok", id: record.id })))
    )

  /**
   * Checks and decodes the request in plain code and returns the one effect that answers it:
   * a generator per request cost more CPU than the checks themselves.
   */
  const answer = (exchange: Exchange) => {
    const path = pathOf(exchange)
    const origin = browserOrigin(exchange.headers)
    if (origin !== undefined) {
      return reject(
        exchange,
        403,
        "browser_origin",
        `A request from a web page (Origin ${origin.slice(0, 200)}) is not a notification`,
        "A2A agents post notifications from servers, without an Origin header"
      )
    }
    const tokens = presentedTokens(exchange.headers)
    if (expected !== undefined && !anyMatches(expected, tokens)) {
      return reject(
        exchange,
        401,
        "unauthorized",
        tokens.length === 0 ? "No notification token" : "Wrong notification token",
        "Send the token given to relay server push --token as X-A2A-Notification-Token or Authorization: Bearer"
      )
    }
    const body = exchange.body
    // The connection broke mid-body; nobody is left to answer.
    if (body._tag === "Broken" || body._tag === "Skipped") return Effect.sync(() => writeEmpty(exchange, 400))
    if (body._tag === "TooLarge") {
      return reject(
        exchange,
        413,
        "payload_too_large",
        `Body of ${body.bytes} bytes exceeds the ${body.limit}-byte limit`,
        "Push notifications are task snapshots or events; raise the limit with --max-body-bytes if this one is genuine"
      )
    }
    const parsed = parseJson(body.bytes)
    if (parsed === undefined) {
      return reject(
        exchange,
        400,
        "invalid_json",
        "The body is not valid UTF-8 JSON",
        "Post an A2A StreamResponse or Task as JSON (Content-Type: application/a2a+json or application/json)"
      )
    }
    if (exceedsJsonDepth(parsed.value)) {
      return reject(
        exchange,
        400,
        "too_deep",
        `The body nests objects and arrays deeper than ${MAX_JSON_DEPTH} levels`,
        "A2A notifications nest a few levels; flatten the metadata or data of this one"
      )
    }
    return accept(exchange, {
      path,
      tokenPresent: tokens.length > 0,
      contentType: headerValue(exchange.headers, "content-type"),
      body: parsed.value,
      rawText: parsed.text,
      checkedDepth: MAX_JSON_DEPTH
    })
  }

  return (exchange: Exchange) =>
    Effect.suspend(() => answer(exchange)).pipe(
      Effect.catchTag("StateFileUnavailable", (error) => reject(exchange, 500, error.code, error.message, error.hint)),
      Effect.catchAllDefect((defect) =>
        reject(
          exchange,
          500,
          "internal_error",
          `Notification not recorded: ${String(defect)}`,
          "This is a bug in relay; the sender may retry"
        )
      )
    )
}

const notFound = (exchange: Exchange) =>
  Effect.sync(() =>
    answerError(
      exchange,
      404,
      "not_found",
      `Nothing at ${exchange.method} ${pathOf(exchange)}`,
      "Post notifications to any path; GET /health tells whether the receiver runs"
    )
  )

/** The receiver: POST on any path, GET /health; everything else is 404. Needs NotificationLog. */
export const makeWebhookHandler = (options: WebhookOptions = {}) => {
  const receive = makeReceiver(options)
  return (exchange: Exchange) => {
    if (exchange.method === "POST") return receive(exchange)
    if ((exchange.method === "GET" || exchange.method === "HEAD") && exchange.path === "/health") {
      return Effect.sync(() => writeJson(exchange, 200, `{"status":"ok"}`))
    }
    return notFound(exchange)
  }
}

/** The receiver bound to `host:port` (0 picks a free port); the HttpServer is exposed for its address. */
export const webhookServerLayer = (options: WebhookServerOptions) => {
  const maxBytes = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const limits = { maxBytes, cutOffBytes: maxBytes * DRAIN_FACTOR }
  const expected = expectedToken(options.token)
  return serveExchanges({
    host: options.host,
    port: options.port,
    // A notification is only read once its sender has shown the token, and never from a browser.
    bodyLimits: (head) =>
      head.method === "POST" && browserOrigin(head.headers) === undefined &&
        (expected === undefined || isAuthorized(expected, head.headers))
        ? limits
        : undefined,
    handle: makeWebhookHandler(options),
    answerInternalError: (exchange) =>
      answerError(exchange, 500, "internal_error", "Internal error", "This is a bug in relay; the sender may retry")
  })
}

/** The base URL senders should post to (at 127.0.0.1 when bound to every interface). */
export const webhookBaseUrl = serverBaseUrl
