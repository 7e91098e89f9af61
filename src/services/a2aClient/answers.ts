/**
 * Reading what an agent answered, whatever the binding: success or not, the A2A error a body
 * carries in any of its shapes, and decoding into the domain model with the agent's URL named.
 */
import type { HttpClientResponse } from "@effect/platform"
import { Effect, Option, type ParseResult, Predicate } from "effect"
import { a2aErrorByReason, errorInfoReason } from "../../a2a/errors.js"
import { describeParseError } from "../../a2a/parseProblems.js"
import * as V1 from "../../a2a/v1.js"
import {
  type A2aClientError,
  AgentUnreachable,
  AuthRequired,
  HttpError,
  InvalidCard,
  InvalidResponse,
  ProtocolError,
  StreamBroken
} from "../../domain/clientErrors.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH } from "../../domain/limits.js"
import { answerExcerpt } from "../../domain/terminalText.js"
import type { ClientState } from "./state.js"
import { credentialsSent, originOf, type Target, withoutSecrets } from "./target.js"

const INTERNAL_ERROR_CODE = -32603
const MAX_WARNED_VALUES = 100
export const TOO_DEEP = `the JSON nests deeper than ${MAX_AGENT_JSON_DEPTH} levels`

export const isHttpSuccess = (status: number) => status >= 200 && status < 300

export const isAuthStatus = (status: number) => status === 401 || status === 403

/** A plain 404/405: nothing is routed there (as opposed to an A2A error that happens to use 404). */
export const isUnrouted = (error: A2aClientError) => error._tag === "HttpError" && (error.status === 404 || error.status === 405)

export const parseJson = (text: string): Option.Option<unknown> => {
  try {
    return Option.some(JSON.parse(text))
  } catch {
    return Option.none()
  }
}

/**
 * An error object → ProtocolError. JSON-RPC codes are negative; a google.rpc.Status carries the
 * HTTP code instead, so there the ErrorInfo reason names the A2A error.
 */
export const protocolErrorOf = (httpStatus: number, error: Record<string, unknown>): ProtocolError => {
  const reason = errorInfoReason(error["data"]) ?? errorInfoReason(error["details"])
  const code = error["code"]
  const byReason = reason === undefined ? undefined : a2aErrorByReason(reason)?.jsonRpcCode
  const a2aCode = typeof code === "number" && code < 0
    ? code
    : byReason ?? (isHttpSuccess(httpStatus) ? INTERNAL_ERROR_CODE : httpStatus)
  return new ProtocolError({
    a2aCode,
    ...(reason === undefined ? {} : { reason }),
    detail: typeof error["message"] === "string" ? error["message"] : `HTTP ${httpStatus}`
  })
}

/**
 * The A2A error a body carries, in the shapes agents use: `{error:{…}}` (a JSON-RPC envelope or a
 * google.rpc.Status) or v0.3 REST's bare `{code, message}`.
 */
export const errorInBody = (httpStatus: number, body: unknown): ProtocolError | undefined => {
  if (!Predicate.isRecord(body)) return undefined
  if (Predicate.isRecord(body["error"])) return protocolErrorOf(httpStatus, body["error"])
  if (typeof body["code"] === "number" && typeof body["message"] === "string") return protocolErrorOf(httpStatus, body)
  return undefined
}

/** The A2A error in a body's text, if it is JSON and carries one. */
export const errorInText = (httpStatus: number, text: string) =>
  Option.getOrUndefined(parseJson(text).pipe(Option.flatMapNullable((json) => errorInBody(httpStatus, json))))

export const authRequired = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse) =>
  new AuthRequired({
    url,
    agentUrl: target.agentUrl,
    status: response.status,
    credentials: credentialsSent(target, url),
    ...(response.headers["www-authenticate"] ? { challenge: response.headers["www-authenticate"] } : {})
  })

/** Non-success answers: auth, an A2A error in any body shape, or a plain HTTP error. */
export const failureOf = (target: Target, url: string, response: HttpClientResponse.HttpClientResponse, text: string) => {
  if (isAuthStatus(response.status)) return authRequired(target, url, response)
  return errorInText(response.status, text) ?? new HttpError({ url, status: response.status, body: answerExcerpt(text) })
}

/**
 * An answer relay cannot use. The error says why in one sentence; the raw answer goes to the
 * debug log only (shown with --verbose), since agents may put anything in it.
 */
export const unreadable = (target: Target, url: string, reason: string, raw: string) =>
  Effect.zipRight(
    Effect.logDebug(`The answer from ${url}: ${answerExcerpt(withoutSecrets(target, raw))}`),
    Effect.fail(new InvalidResponse({ url, reason }))
  )

/** Warns (once each) about the enum values an answer carries that A2A does not define; they read as unknown. */
const warnUnknownEnums = (state: ClientState, url: string, value: unknown) =>
  Effect.forEach(V1.unknownEnumsIn(value), (what) => {
    const key = `${originOf(url) ?? url} ${what}`
    // Bounded: an agent inventing a new value per answer must not grow a long-running server.
    if (state.warnedEnums.has(key) || state.warnedEnums.size >= MAX_WARNED_VALUES) return Effect.void
    state.warnedEnums.add(key)
    return Effect.logWarning(`The agent at ${url} sent ${what}, which A2A does not define; relay shows it as unknown`)
  }, { discard: true })

/**
 * Decodes an answer; what does not fit is named by its field, with the agent's URL. One nesting
 * deeper than any A2A object needs is refused first (a later JSON.stringify would overflow).
 */
export const decodeWith = <A>(
  state: ClientState,
  target: Target,
  url: string,
  decode: (json: unknown) => Effect.Effect<A, ParseResult.ParseError>,
  json: unknown
) =>
  exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)
    ? Effect.fail(new InvalidResponse({ url, reason: TOO_DEEP }))
    : decode(json).pipe(
      Effect.catchAll((error) => unreadable(target, url, describeParseError(error, "the answer").message, JSON.stringify(json) ?? "")),
      Effect.tap((value) => warnUnknownEnums(state, url, value))
    )

/**
 * The error with the target's secrets masked in the text an agent supplied (a body, a message, a
 * challenge, a reason quoting the answer): an agent that echoes the request's headers must not make
 * relay print the token it was sent.
 */
export const withoutSecretsIn = (target: Target) => (error: A2aClientError): A2aClientError => {
  const mask = (text: string) => withoutSecrets(target, text)
  switch (error._tag) {
    case "HttpError":
      return new HttpError({ ...error, body: mask(error.body) })
    case "ProtocolError":
      return new ProtocolError({ ...error, detail: mask(error.detail) })
    case "AuthRequired":
      return error.challenge === undefined ? error : new AuthRequired({ ...error, challenge: mask(error.challenge) })
    case "InvalidResponse":
      return new InvalidResponse({ ...error, reason: mask(error.reason) })
    case "InvalidCard":
      return new InvalidCard({ ...error, reason: mask(error.reason) })
    case "AgentUnreachable":
      return new AgentUnreachable({ ...error, reason: mask(error.reason) })
    case "StreamBroken":
      return new StreamBroken({ ...error, reason: mask(error.reason) })
    default:
      return error
  }
}
