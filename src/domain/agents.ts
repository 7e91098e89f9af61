/**
 * Agents by name: what the store keeps for each name (its URL, the user's description, a bounded
 * summary of its card), how a name is told from a URL, and the errors of the catalog.
 *
 * A name is a bare word (letters, digits, `.`, `_`, `-`), a URL always has a scheme, so the one
 * can never be read as the other. A name's session and credentials are its URL's: the store keys
 * those by URL, and a name only points there.
 */
import { Schema } from "effect"
import { isObject } from "../a2a/validation/context.js"
import { act } from "./hints.js"
import { CARD_SUMMARY_LIMITS } from "./limits.js"

/** A bare word: what a name looks like (a URL has a scheme, so it never does). */
const NAME_SHAPE = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** Whether `text` is written as a name rather than a URL (a bare word; whether the name exists is the store's). */
export const looksLikeName = (text: string): boolean => NAME_SHAPE.test(text)

/** Names are kept lower-case: `Local` and `local` are one agent. */
export const canonicalName = (text: string): string => text.toLowerCase()

/**
 * A name made of free text (a card's name in a catalog): lower case, runs of anything else turned
 * into `-`, accents dropped; `agent` when nothing is left.
 */
export const slugOf = (text: string): string => {
  const slug = text.normalize("NFKD").replace(/[\u0300-\u036f]/g, "").toLowerCase()
    .replace(/[^a-z0-9._-]+/g, "-").replace(/^[^a-z0-9]+/, "").slice(0, 64).replace(/[-.]+$/, "")
  return slug === "" ? "agent" : slug
}

/** The first of `base`, `base-2`, `base-3`, … that `taken` does not hold (never overwriting a name). */
export const freeName = (base: string, taken: (name: string) => boolean): string => {
  if (!taken(base)) return base
  for (let n = 2;; n++) {
    const suffix = `-${n}`
    const candidate = `${base.slice(0, 64 - suffix.length)}${suffix}`
    if (!taken(candidate)) return candidate
  }
}

// ---------------------------------------------------------------------------
// What the store keeps

export const SkillSummary = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  description: Schema.String,
  tags: Schema.Array(Schema.String),
  /** The skill's own modes, else the agent's defaults. */
  input_modes: Schema.Array(Schema.String),
  output_modes: Schema.Array(Schema.String)
})
export type SkillSummary = typeof SkillSummary.Type

/** What a card said, cut to CARD_SUMMARY_LIMITS: a card of 10 000 skills keeps the first ones and counts the rest. */
export const CardSummary = Schema.Struct({
  name: Schema.NullOr(Schema.String),
  description: Schema.NullOr(Schema.String),
  version: Schema.NullOr(Schema.String),
  default_input_modes: Schema.Array(Schema.String),
  default_output_modes: Schema.Array(Schema.String),
  skills: Schema.Array(SkillSummary),
  /** Skills the card listed past the limit. */
  skills_omitted: Schema.Number
})
export type CardSummary = typeof CardSummary.Type

export const AgentRecord = Schema.Struct({
  /** The canonical agent URL the name stands for. */
  url: Schema.String,
  /** The user's own words for it (`--description`). */
  description: Schema.optional(Schema.String),
  card: Schema.optional(CardSummary),
  /** When the card was last read (add, refresh). */
  card_read_at: Schema.optional(Schema.String),
  added_at: Schema.String
})
export type AgentRecord = typeof AgentRecord.Type

/** The names and the default, as the store keeps them beside the sessions. */
export interface AgentBook {
  readonly agents: Readonly<Record<string, AgentRecord>>
  readonly default_agent?: string | undefined
}

// ---------------------------------------------------------------------------
// Reading a card leniently (it may have issues; `add` warns, never refuses)

/** At most `max` characters, a cut marked with an ellipsis. */
const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text)

const textOf = (value: unknown, max: number): string | null => (typeof value === "string" ? cut(value, max) : null)

const textsOf = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value)
    ? value.slice(0, CARD_SUMMARY_LIMITS.listItems).filter((item): item is string => typeof item === "string")
      .map((item) => cut(item, CARD_SUMMARY_LIMITS.shortChars))
    : []

const skillOf = (skill: Readonly<Record<string, unknown>>, inputs: ReadonlyArray<string>, outputs: ReadonlyArray<string>): SkillSummary => {
  const own = (key: string, defaults: ReadonlyArray<string>) => (Array.isArray(skill[key]) ? textsOf(skill[key]) : defaults)
  return {
    id: textOf(skill["id"], CARD_SUMMARY_LIMITS.shortChars) ?? "",
    name: textOf(skill["name"], CARD_SUMMARY_LIMITS.shortChars) ?? "",
    description: textOf(skill["description"], CARD_SUMMARY_LIMITS.skillDescriptionChars) ?? "",
    tags: textsOf(skill["tags"]),
    input_modes: own("inputModes", inputs),
    output_modes: own("outputModes", outputs)
  }
}

/** The summary of a card's JSON (either generation: both name these fields alike), bounded. */
export const summarizeCard = (json: unknown): CardSummary => {
  const card = isObject(json) ? json : {}
  const inputs = textsOf(card["defaultInputModes"])
  const outputs = textsOf(card["defaultOutputModes"])
  const skills = Array.isArray(card["skills"]) ? card["skills"] : []
  const kept = skills.slice(0, CARD_SUMMARY_LIMITS.skills)
  return {
    name: textOf(card["name"], CARD_SUMMARY_LIMITS.shortChars),
    description: textOf(card["description"], CARD_SUMMARY_LIMITS.descriptionChars),
    version: textOf(card["version"], CARD_SUMMARY_LIMITS.shortChars),
    default_input_modes: inputs,
    default_output_modes: outputs,
    skills: kept.filter(isObject).map((skill) => skillOf(skill, inputs, outputs)),
    skills_omitted: skills.length - kept.length
  }
}

/**
 * The URL a card gives for its agent: v0.3's `url`, else the first of v1.0's `supportedInterfaces`.
 * Where a card found at a URL of its own (a catalog's entry, a `.json` URL) says its agent is.
 */
export const cardAgentUrl = (json: unknown): string | undefined => {
  if (!isObject(json)) return undefined
  if (typeof json["url"] === "string") return json["url"]
  const interfaces = json["supportedInterfaces"]
  const first: unknown = Array.isArray(interfaces) ? interfaces[0] : undefined
  return isObject(first) && typeof first["url"] === "string" ? first["url"] : undefined
}

// ---------------------------------------------------------------------------
// Errors

const NAME_RULE = "a name is 1 to 64 letters, digits, '.', '_' or '-', starting with a letter or digit"

/** The name given is not one a name can be (it would read as a URL, or holds other characters). */
export class InvalidAgentName extends Schema.TaggedError<InvalidAgentName>()("InvalidAgentName", {
  name: Schema.String
}) {
  readonly code = "invalid_agent_name"
  override get message() {
    return `"${this.name.slice(0, 100)}" cannot be an agent's name: ${NAME_RULE}`
  }
  get hint() {
    return "Pick a short bare word such as local or research-bot"
  }
}

/** No agent goes by this name. */
export class UnknownAgent extends Schema.TaggedError<UnknownAgent>()("UnknownAgent", {
  name: Schema.String
}) {
  readonly code = "unknown_agent"
  override get message() {
    return `No agent is named "${this.name}"`
  }
  get hint() {
    return [
      "See the saved names with ",
      act("ListAgents"),
      ", or save this one with ",
      act("AddAgent", { name: this.name }),
      ". A URL needs its scheme, as in http://",
      this.name,
      "."
    ]
  }
}

/** The name is already taken (by this URL or another): names are never overwritten. */
export class AgentNameTaken extends Schema.TaggedError<AgentNameTaken>()("AgentNameTaken", {
  name: Schema.String,
  url: Schema.String
}) {
  readonly code = "agent_exists"
  override get message() {
    return `The name "${this.name}" is taken: it stands for ${this.url}`
  }
  get hint() {
    return ["Pick another name, or remove this one first: ", act("RemoveAgent", { name: this.name })]
  }
}

/** What a domain serves at its AI catalog's address is not a catalog relay can read. */
export class InvalidCatalog extends Schema.TaggedError<InvalidCatalog>()("InvalidCatalog", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "invalid_catalog"
  override get message() {
    return `No usable AI catalog at ${this.url}: ${this.reason}`
  }
  get hint() {
    return [
      "An AI catalog is JSON with specVersion and entries (a proposal, not yet final); add an agent by its URL instead: ",
      act("AddAgent", {})
    ]
  }
}
