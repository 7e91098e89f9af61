/** Small helpers shared by every rule: JSON values, JSON pointers and the issue collector. */
import type { CardGeneration } from "../cardGeneration.js"
import { CARD_ISSUE_SEVERITIES, type CardIssue, type CardIssueCode } from "./issues.js"

export type JsonObject = Readonly<Record<string, unknown>>

export const isObject = (value: unknown): value is JsonObject => typeof value === "object" && value !== null && !Array.isArray(value)

/** ProtoJSON treats `null` like an absent field. */
export const isPresent = (value: unknown): boolean => value !== undefined && value !== null

export const describeType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`

const escapeSegment = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1")

export const at = (base: string, ...segments: ReadonlyArray<string | number>): string =>
  base + segments.map((segment) => `/${escapeSegment(String(segment))}`).join("")

export const quote = (key: string): string => `\`${key}\``

export interface Context {
  readonly generation: CardGeneration
  readonly report: (code: CardIssueCode, path: string, message: string, hint: string) => void
}

export const makeCollector = (generation: CardGeneration) => {
  const issues: Array<CardIssue> = []
  const context: Context = {
    generation,
    report: (code, path, message, hint) => {
      issues.push({ code, severity: CARD_ISSUE_SEVERITIES[code], path, message, hint })
    }
  }
  return { context, issues }
}
