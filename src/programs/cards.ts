/**
 * Agent cards: fetch one (public or extended), or validate one from a URL or a file, reporting
 * every issue the validator finds.
 */
import { Effect, Option } from "effect"
import { type CardIssue, validateCard as checkCard } from "../a2a/validation/cardValidation.js"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import { withoutNulls } from "../domain/results.js"
import { A2aClient } from "../services/A2aClient.js"
import { savedAgentUrl } from "./agentNames.js"
import { type AgentAccess, resolveTarget, withAgentTarget } from "./agentTarget.js"
import { readCardFile } from "./localFiles.js"
import type { ReadPermission } from "./readPermission.js"

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

/** Validates a card; a file is read only where `mayRead` allows (the door's: any file at the terminal). */
export const validateCard = Effect.fn("validateCard")(function*<R>(given: ValidateCardInput, mayRead: ReadPermission<R>) {
  // A saved agent's name stands for its URL (at every door); anything else is a URL or a file, as before names.
  const saved = given.fromFile === true ? Option.none<string>() : yield* savedAgentUrl(given.source)
  const input = Option.match(saved, { onNone: () => given, onSome: (source) => ({ ...given, source }) })
  const fromFile = input.fromFile === true || !looksLikeUrl(input.source)
  const json = fromFile
    ? yield* readCardFile(input.source, mayRead)
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
