/**
 * Agent cards: fetch one (public or extended), or validate one from a URL or a file, reporting
 * every issue the validator finds.
 */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import { InvalidCard } from "../domain/clientErrors.js"
import { type CardIssue, validateCard as checkCard } from "../domain/cardValidation.js"
import { InvalidInput } from "../domain/errors.js"
import { withoutNulls } from "../domain/results.js"
import { A2aClient } from "../services/A2aClient.js"
import { type AgentAccess, resolveTarget } from "./agentTarget.js"

export interface CardResult {
  readonly agent_url: string
  readonly card_url: string
  /** "1.0", "0.3" or "hybrid": the card's generation. */
  readonly generation: string
  readonly card: unknown
}

/** The card as the agent serves it (null fields omitted); the extended card with `authenticated`. */
export const getCard = Effect.fn("getCard")(function*(input: AgentAccess & { readonly authenticated?: boolean | undefined }) {
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  const found = input.authenticated === true ? yield* client.extendedCard(target) : yield* client.discover(target)
  return {
    agent_url: target.agentUrl,
    card_url: found.cardUrl,
    generation: found.generation,
    card: withoutNulls(found.raw)
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
}

const looksLikeUrl = (source: string) => /^https?:\/\//i.test(source.trim())

const readCardFile = (path: string) =>
  Effect.gen(function*() {
    const fs = yield* FileSystem.FileSystem
    const text = yield* fs.readFileString(path).pipe(
      Effect.mapError((error) =>
        new InvalidInput({ reason: `Cannot read ${path}: ${error.message}`, suggestion: "Check the path of the card file" }))
    )
    try {
      return JSON.parse(text) as unknown
    } catch (error) {
      return yield* new InvalidCard({ url: path, reason: `not JSON (${error instanceof Error ? error.message : String(error)})` })
    }
  })

export const validateCard = Effect.fn("validateCard")(function*(input: ValidateCardInput) {
  const fromFile = input.fromFile === true || !looksLikeUrl(input.source)
  const json = fromFile
    ? yield* readCardFile(input.source)
    : yield* Effect.flatMap(resolveTarget({ agentUrl: input.source, bearerToken: input.bearerToken, apiKey: input.apiKey }), (target) =>
      Effect.flatMap(A2aClient, (client) => Effect.map(client.fetchCardJson(target), (found) => found.json)))
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
