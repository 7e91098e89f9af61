/**
 * Where and why a JSON text does not parse, as an editor would point at it: "comma expected at
 * line 3, column 7". V8's own messages name no position on Node 22+ for many errors, so the text
 * is read again with jsonc-parser, which reports the offset of the first problem.
 */
import * as Jsonc from "jsonc-parser"

/** "line 3, column 7" of a character offset, both counted from 1. */
export const lineAndColumn = (text: string, offset: number) => {
  const before = text.slice(0, offset).split("\n")
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`
}

/** jsonc-parser's "CommaExpected" as "comma expected". */
const inWords = (error: Jsonc.ParseError) => Jsonc.printParseErrorCode(error.error).replace(/(?<=[a-z])(?=[A-Z])/g, " ").toLowerCase()

export interface JsonDialect {
  readonly comments: boolean
  readonly trailingCommas: boolean
}

/** The first problem jsonc-parser finds in the text, in words, with its line and column. */
const firstProblem = (text: string, dialect: JsonDialect): string | undefined => {
  const errors: Array<Jsonc.ParseError> = []
  Jsonc.parse(text, errors, { disallowComments: !dialect.comments, allowTrailingComma: dialect.trailingCommas, allowEmptyContent: false })
  const first = errors[0]
  return first === undefined ? undefined : `${inWords(first)} at ${lineAndColumn(text, first.offset)}`
}

/** The value of the text, or the first problem with it in words, with its line and column. */
export const parseJsonText = (text: string, dialect: JsonDialect): { readonly value: unknown } | { readonly problem: string } => {
  // Plain JSON is read by JSON.parse; jsonc-parser only says where it fails. (Its `parse` builds
  // objects by assignment, so a `__proto__` key would set the prototype: JSONC goes through its tree.)
  if (!dialect.comments && !dialect.trailingCommas) {
    try {
      return { value: JSON.parse(text) as unknown }
    } catch (error) {
      const problem = firstProblem(text, dialect)
      return { problem: problem ?? (error instanceof Error ? error.message : String(error)) }
    }
  }
  const errors: Array<Jsonc.ParseError> = []
  const tree = Jsonc.parseTree(text, errors, {
    disallowComments: !dialect.comments,
    allowTrailingComma: dialect.trailingCommas,
    allowEmptyContent: false
  })
  const first = errors[0]
  if (first !== undefined) return { problem: `${inWords(first)} at ${lineAndColumn(text, first.offset)}` }
  return { value: tree === undefined ? undefined : nodeValue(tree) }
}

/** A parsed node's value, each key defined as data (a `__proto__` key too, as JSON.parse keeps it). */
const nodeValue = (node: Jsonc.Node): unknown => {
  if (node.type === "array") return (node.children ?? []).map(nodeValue)
  if (node.type !== "object") return node.value
  const object: Record<string, unknown> = {}
  for (const property of node.children ?? []) {
    const [key, value] = property.children ?? []
    if (key === undefined || value === undefined) continue
    Object.defineProperty(object, String(key.value), { value: nodeValue(value), enumerable: true, writable: true, configurable: true })
  }
  return object
}
