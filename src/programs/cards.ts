/**
 * Agent cards: fetch one (public or extended), or validate one from a URL or a file, reporting
 * every issue the validator finds.
 */
import { FileSystem } from "@effect/platform"
import type { PlatformError } from "@effect/platform/Error"
import { Effect, Option, Stream } from "effect"
import { type CardIssue, validateCard as checkCard } from "../a2a/validation/cardValidation.js"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import { CardFileRefused, InvalidCard } from "../domain/clientErrors.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH, MAX_CARD_FILE_BYTES } from "../domain/limits.js"
import { withoutNulls } from "../domain/results.js"
import { A2aClient } from "../services/A2aClient.js"
import { savedAgentUrl } from "./agentNames.js"
import { type AgentAccess, resolveTarget, withAgentTarget } from "./agentTarget.js"
import { refusalOf, unreadableReason } from "./localFiles.js"

export interface CardResult {
  readonly agent_url: string
  readonly card_url: string
  /** "1.0", "0.3" or "hybrid": the card's generation. */
  readonly generation: string
  /** The card's JSON object. */
  readonly card: Readonly<Record<string, unknown>>
}

/** The card as the agent serves it (null fields omitted); the extended card with `authenticated`. */
export const getCard = Effect.fn("getCard")(function*(input: AgentAccess & { readonly authenticated?: boolean | undefined }) {
  const client = yield* A2aClient
  const { target, result: found } = yield* withAgentTarget(
    input,
    (target) => input.authenticated === true ? client.extendedCard(target) : client.discover(target)
  )
  return {
    agent_url: target.agentUrl,
    card_url: found.cardUrl,
    generation: found.generation,
    // It decoded as a card, so it is an object.
    card: withoutNulls(found.raw) as Readonly<Record<string, unknown>>
  } satisfies CardResult
})

/** The validation result of SPEC §2, plus every issue and the card's generation. */
export interface ValidationResult {
  readonly valid: boolean
  readonly source: string
  readonly agent_name: string | null
  readonly protocol_version: string | null
  readonly generation: string
  readonly capabilities: { readonly streaming: boolean; readonly push_notifications: boolean }
  readonly issues: ReadonlyArray<CardIssue>
  readonly error_count: number
  readonly warning_count: number
}

export interface ValidateCardInput {
  readonly source: string
  /** Treat `source` as a file path (else: a URL if it looks like one, a file otherwise). */
  readonly fromFile?: boolean | undefined
  /** For an agent that guards its card; saved credentials are used when neither is given. */
  readonly bearerToken?: string | undefined
  readonly apiKey?: string | undefined
  /** Largest card read from an agent (default MAX_RESPONSE_BYTES). */
  readonly maxResponseBytes?: number | undefined
}

const looksLikeUrl = (source: string) => /^https?:\/\//i.test(source.trim())

/** Why a card file is refused before it is opened: not a regular file (localFiles.ts), or over the size limit. */
const cardFileRefusal = (realPath: string, info: FileSystem.File.Info, maxBytes: number): string | undefined =>
  refusalOf(realPath, info) ?? (Number(info.size) > maxBytes ? `it is ${info.size} bytes, over the ${maxBytes}-byte limit` : undefined)

/** The JSON of a card file; an error never shows the file's content (it may be any file at all). */
const readCardFile = (path: string, maxBytes: number = MAX_CARD_FILE_BYTES) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const refused = (reason: string) => new CardFileRefused({ path, reason })
    const unreadable = (error: PlatformError) => refused(unreadableReason(error))
    const info = yield* Effect.mapError(fs.stat(path), unreadable)
    const realPath = yield* Effect.mapError(fs.realPath(path), unreadable)
    const refusal = cardFileRefusal(realPath, info, maxBytes)
    if (refusal !== undefined) return yield* refused(refusal)
    // At most one byte past the limit: a file that grew since stat is refused all the same.
    const bytes = yield* fs.stream(path, { bytesToRead: maxBytes + 1 }).pipe(
      Stream.runCollect,
      Effect.map((chunks) => Buffer.concat([...chunks])),
      Effect.mapError(unreadable)
    )
    if (bytes.length > maxBytes) return yield* refused(`it is over the ${maxBytes}-byte limit`)
    let json: unknown
    try {
      json = JSON.parse(new TextDecoder().decode(bytes))
    } catch {
      return yield* new InvalidCard({ url: path, reason: "the file is not JSON (its content is not shown)" })
    }
    if (exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)) {
      return yield* new InvalidCard({ url: path, reason: `the JSON nests deeper than ${MAX_AGENT_JSON_DEPTH} levels` })
    }
    return json
  })

/**
 * The card at a URL source. A decode point below the doors on purpose: `validate` takes a file
 * path or a URL, and only here is it known to be a URL, so here it is decoded (once).
 */
const fetchCardJsonAt = (input: ValidateCardInput) =>
  Effect.gen(function*() {
    const agentUrl = yield* canonicalAgentUrl(input.source)
    const target = yield* resolveTarget({
      agentUrl,
      bearerToken: input.bearerToken,
      apiKey: input.apiKey,
      maxResponseBytes: input.maxResponseBytes
    })
    const client = yield* A2aClient
    return (yield* client.fetchCardJson(target)).json
  })

export const validateCard = Effect.fn("validateCard")(function*(given: ValidateCardInput) {
  // A saved agent's name stands for its URL (at every door); anything else is a URL or a file, as before names.
  const saved = given.fromFile === true ? Option.none<string>() : yield* savedAgentUrl(given.source)
  const input = Option.match(saved, { onNone: () => given, onSome: (source) => ({ ...given, source }) })
  const fromFile = input.fromFile === true || !looksLikeUrl(input.source)
  const json = fromFile
    ? yield* readCardFile(input.source)
    : yield* fetchCardJsonAt(input)
  const result = checkCard(json)
  return {
    valid: result.valid,
    source: input.source,
    agent_name: result.agentName ?? null,
    protocol_version: result.protocolVersion ?? null,
    generation: result.generation,
    capabilities: { streaming: result.capabilities.streaming, push_notifications: result.capabilities.pushNotifications },
    issues: result.issues,
    error_count: result.issues.filter((issue) => issue.severity === "error").length,
    warning_count: result.issues.filter((issue) => issue.severity === "warning").length
  } satisfies ValidationResult
})
