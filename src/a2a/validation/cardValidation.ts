/**
 * Agent card validation for both A2A card generations.
 *
 * Unlike validators that stop at the first problem, `validateCard` collects every issue, each with a
 * stable code (see CARD_ISSUE_CODES), a severity, a JSON pointer and a fix hint.
 * - v1.0 cards are checked with hand-written rules taken from the REQUIRED markers of the normative
 *   `a2a.proto` (spec §5.7: a required repeated field needs at least one element).
 * - v0.3 cards are checked with ajv against the official v0.3.0 JSON Schema (AgentCard definition).
 * - Hybrid cards (both shapes, as @a2a-js/sdk serves them in legacy-compat mode) get the v1.0 rules
 *   plus the schema checks of their v0.3-only fields.
 */
import { Either } from "effect"
import { type CardGeneration, cardGeneration } from "../cardGeneration.js"
import { readAsClient } from "../usableInterfaces.js"
import {
  checkAllMediaTypes,
  checkHybridConsistency,
  checkKindFields,
  checkLegacyInterfaces,
  checkSchemeReferences,
  checkSignaturesPresent,
  checkUniqueSkillIds,
  checkUnknownFields
} from "./commonRules.js"
import { type Context, describeType, isObject, type JsonObject, makeCollector } from "./context.js"
import { listOf, objectItems } from "./fields.js"
import { CARD_ISSUE_SEVERITIES, type CardCapabilitySummary, type CardIssue, type CardValidation } from "./issues.js"
import { checkV03Schema } from "./v03Schema.js"
import { checkRemovedFields, checkV1Leftovers, checkV1Structure } from "./v1Rules.js"
import { type ParsedVersion, parseProtocolVersion } from "./values.js"

export type { CardGeneration } from "../cardGeneration.js"
export {
  CARD_ISSUE_CODES,
  CARD_ISSUE_SEVERITIES,
  type CardCapabilitySummary,
  type CardIssue,
  type CardIssueCode,
  type CardIssueSeverity,
  type CardValidation
} from "./issues.js"

const summarizeCapabilities = (card: JsonObject): CardCapabilitySummary => {
  const capabilities: JsonObject = isObject(card["capabilities"]) ? card["capabilities"] : {}
  return {
    streaming: capabilities["streaming"] === true,
    pushNotifications: capabilities["pushNotifications"] === true,
    extendedAgentCard: capabilities["extendedAgentCard"] === true || card["supportsAuthenticatedExtendedCard"] === true
  }
}

const highestInterfaceVersion = (card: JsonObject): string | undefined => {
  let best: { readonly text: string; readonly version: ParsedVersion } | undefined
  for (const [entry] of objectItems(undefined, listOf(card, "supportedInterfaces"), "", "")) {
    const text = entry["protocolVersion"]
    if (typeof text !== "string") continue
    const version = parseProtocolVersion(text)
    if (version === undefined) continue
    const newer = best === undefined ||
      version.major > best.version.major ||
      (version.major === best.version.major && version.minor > best.version.minor)
    if (newer) best = { text, version }
  }
  return best?.text
}

const declaredProtocolVersion = (card: JsonObject, generation: CardGeneration): string | undefined => {
  const legacy = typeof card["protocolVersion"] === "string" && card["protocolVersion"] !== "" ? card["protocolVersion"] : undefined
  switch (generation) {
    case "0.3":
      return legacy
    case "1.0":
      return highestInterfaceVersion(card)
    case "hybrid":
      // Hybrid cards count as v1.0: their interfaces say more than the v0.3 half's single version.
      return highestInterfaceVersion(card) ?? legacy
    case "unknown":
      return undefined
  }
}

const comparePaths = (left: string, right: string): number => {
  const a = left.split("/")
  const b = right.split("/")
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const x = a[index] ?? ""
    const y = b[index] ?? ""
    if (x === y) continue
    const bothNumeric = /^\d+$/.test(x) && /^\d+$/.test(y)
    if (bothNumeric) return Number(x) - Number(y)
    return x < y ? -1 : 1
  }
  return a.length - b.length
}

const compareText = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0)

const sortIssues = (issues: ReadonlyArray<CardIssue>): ReadonlyArray<CardIssue> => {
  const unique = new Map(issues.map((issue) => [JSON.stringify([issue.path, issue.code, issue.message]), issue]))
  return [...unique.values()].sort(
    (a, b) => comparePaths(a.path, b.path) || compareText(a.code, b.code) || compareText(a.message, b.message)
  )
}

const NO_CAPABILITIES: CardCapabilitySummary = { streaming: false, pushNotifications: false, extendedAgentCard: false }

const notAnObject = (json: unknown): CardValidation => ({
  valid: false,
  generation: "unknown",
  capabilities: NO_CAPABILITIES,
  issues: [
    {
      code: "card.not_object",
      severity: CARD_ISSUE_SEVERITIES["card.not_object"],
      path: "",
      message: `the card must be a JSON object, not ${describeType(json)}`,
      hint: "Serve the agent card as a JSON object at /.well-known/agent-card.json."
    }
  ]
})

const runRules = (ctx: Context, card: JsonObject): void => {
  switch (ctx.generation) {
    case "1.0":
      checkV1Structure(ctx, card)
      checkV1Leftovers(ctx, card)
      checkRemovedFields(ctx, card)
      break
    case "0.3":
      ctx.report(
        "card.legacy_generation",
        "",
        "this is a v0.3 agent card",
        "1.0 moved `url` into `supportedInterfaces[].url` (with `protocolBinding` and `protocolVersion`); publish `supportedInterfaces` too to reach v1.0 clients."
      )
      checkV03Schema(ctx, card)
      checkLegacyInterfaces(ctx, card)
      break
    case "hybrid":
      checkV1Structure(ctx, card)
      checkRemovedFields(ctx, card)
      checkV03Schema(ctx, card)
      checkLegacyInterfaces(ctx, card)
      checkHybridConsistency(ctx, card)
      break
    case "unknown":
      ctx.report(
        "card.generation_unknown",
        "",
        "the card has neither `supportedInterfaces` (v1.0) nor `url`/`protocolVersion` (v0.3)",
        "Add `supportedInterfaces`, e.g. [{\"url\": \"https://agent.example.com/a2a\", \"protocolBinding\": \"JSONRPC\", \"protocolVersion\": \"1.0\"}]."
      )
      checkV1Structure(ctx, card)
      checkV1Leftovers(ctx, card)
      break
  }
  checkAllMediaTypes(ctx, card)
  checkUniqueSkillIds(ctx, card)
  checkSchemeReferences(ctx, card)
  checkSignaturesPresent(ctx, card)
  checkKindFields(ctx, card)
  checkUnknownFields(ctx, card)
}

const SKIPPED_SHOWN = 5

/**
 * Reads the card as the client does (same decoding, same interface predicate, see
 * usableInterfaces) and reports what would stop the client, so "valid" always means "usable".
 * A card the client cannot decode is reported only when no other rule explained it already.
 */
const checkClientCanUse = (ctx: Context, card: JsonObject, othersFoundErrors: boolean): void => {
  const reading = readAsClient(card)
  if (Either.isLeft(reading)) {
    if (!othersFoundErrors) {
      ctx.report(
        "card.unreadable",
        "",
        `relay cannot read the card: ${reading.left}`,
        "Fix that field; relay's client rejects the card as it is."
      )
    }
    return
  }
  const { usable, skipped } = reading.right
  // No interface at all is reported by the structural rules (required, empty list, v0.3 url).
  if (usable.length > 0 || (skipped.length === 0 && othersFoundErrors)) return
  const reasons = skipped.slice(0, SKIPPED_SHOWN).map(({ entry, reason }) =>
    `${entry.protocolBinding} ${entry.protocolVersion} at ${entry.url}: ${reason}`
  )
  const more = skipped.length > SKIPPED_SHOWN ? `; and ${skipped.length - SKIPPED_SHOWN} more` : ""
  ctx.report(
    "card.no_usable_interface",
    ctx.generation === "0.3" ? "" : "/supportedInterfaces",
    skipped.length === 0
      ? "the card declares no interface relay can use"
      : `relay can use none of the interfaces (${reasons.join("; ")}${more})`,
    "Declare an interface relay speaks, e.g. {\"url\": \"https://agent.example.com/a2a\", \"protocolBinding\": \"JSONRPC\", \"protocolVersion\": \"1.0\"}."
  )
}

/** Validates an agent card of either generation and reports every issue found. Never throws. */
export const validateCard = (json: unknown): CardValidation => {
  if (!isObject(json)) return notAnObject(json)
  const generation = cardGeneration(json)
  const { context, issues } = makeCollector(generation)
  runRules(context, json)
  checkClientCanUse(context, json, issues.some((issue) => issue.severity === "error"))
  const sorted = sortIssues(issues)
  const agentName = typeof json["name"] === "string" && json["name"] !== "" ? json["name"] : undefined
  const protocolVersion = declaredProtocolVersion(json, generation)
  return {
    valid: sorted.every((issue) => issue.severity !== "error"),
    generation,
    ...(agentName === undefined ? {} : { agentName }),
    ...(protocolVersion === undefined ? {} : { protocolVersion }),
    capabilities: summarizeCapabilities(json),
    issues: sorted
  }
}
