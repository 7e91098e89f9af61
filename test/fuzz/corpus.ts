// Hostile inputs for the doors (issue 18): JSON nested deeper than any door takes, and values
// bigger than their limits. Payloads are JSON text, built without recursion and spliced into a
// door's body as text, so the test never has to serialise (or even build) the deep value.
import { MAX_ID_CHARS, MAX_JSON_DEPTH, MAX_URL_CHARS } from "../../src/domain/limits.js"

/** A JSON value as text, and how deep it nests (its outermost object or array is level 1). */
export interface Payload {
  readonly name: string
  readonly depth: number
  readonly json: string
}

type Shape = "objects" | "arrays" | "mixed"

// The outermost container is always an object: metadata must be one, and a data part takes any value.
const isObjectAt = (shape: Shape, level: number) => level === 0 || shape === "objects" || (shape === "mixed" && level % 2 === 0)
const opening = (shape: Shape, level: number) => (isObjectAt(shape, level) ? "{\"k\":" : "[")
const closing = (shape: Shape, level: number) => (isObjectAt(shape, level) ? "}" : "]")

/** Containers nested `depth` levels (objects, arrays in an object, or both by turns), the innermost one empty. */
export const nested = (shape: Shape, depth: number): Payload => {
  const parts: Array<string> = []
  for (let level = 0; level < depth - 1; level++) parts.push(opening(shape, level))
  parts.push(opening(shape, depth - 1) === "[" ? "[]" : "{}")
  for (let level = depth - 2; level >= 0; level--) parts.push(closing(shape, level))
  return { name: `${shape} ${depth} deep`, depth, json: parts.join("") }
}

const SHAPES: ReadonlyArray<Shape> = ["objects", "arrays", "mixed"]

/**
 * Nesting no door takes once the payload is placed at level `offset` of a body (the body's root
 * is level 1, a field of the root is at level 2): one level past the limit, then the 5 000
 * levels that once made every ListTasks fail, then 200 000.
 */
export const tooDeep = (offset: number): ReadonlyArray<Payload> =>
  SHAPES.flatMap((shape) => [MAX_JSON_DEPTH - offset + 2, 5_000, 200_000].map((depth) => nested(shape, depth)))

/** The deepest payload a door takes at `offset` (the whole body exactly MAX_JSON_DEPTH deep). */
export const deepestAccepted = (offset: number): ReadonlyArray<Payload> => SHAPES.map((shape) => nested(shape, MAX_JSON_DEPTH - offset + 1))

/** A string one character longer than `limit`. */
export const longer = (limit: number) => "x".repeat(limit + 1)

/** Strings past the agent server's limits: an id, a push URL. */
export const OVERSIZED = {
  id: longer(MAX_ID_CHARS),
  url: `http://127.0.0.1:9/${longer(MAX_URL_CHARS)}`
} as const
