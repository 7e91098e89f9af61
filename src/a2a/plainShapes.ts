/**
 * Checks on plain JSON values, for the decoders' fast paths (v1.ts, translate.ts): a request that
 * already has the canonical shape is taken as it is instead of going through its schema.
 */
import { Predicate } from "effect"

export const keysWithin = (record: Record<string, unknown>, allowed: ReadonlyArray<string>) =>
  Object.keys(record).every((key) => allowed.includes(key))

export const isText = (u: unknown): u is string => typeof u === "string"

/** Absent, or a non-empty string (the schemas drop an empty id). */
export const isOptionalId = (u: unknown) => u === undefined || (isText(u) && u !== "")

export const isOptionalBoolean = (u: unknown) => u === undefined || typeof u === "boolean"

export const isOptionalSafeInteger = (u: unknown) => u === undefined || Number.isSafeInteger(u)

export const isOptionalTextList = (u: unknown) => u === undefined || (Array.isArray(u) && u.every(isText))

export const { isRecord } = Predicate
