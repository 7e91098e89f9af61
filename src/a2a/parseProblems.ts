/**
 * What is wrong with a JSON value that a schema refused, in one sentence a person can read:
 * `message.messageId is required`, `params must be an object, not "x"`,
 * `configuration.historyLength must be an integer, not 1.5`. Used for the agent server's error
 * answers and for the client's errors about an agent's answers; never a Schema tree.
 */
import { Option, type ParseResult, SchemaAST as AST } from "effect"

export interface ParseProblem {
  /** The field's path, `message.parts[0].text`; `""` for the value itself. */
  readonly field: string
  /** One sentence naming the field (or `root` for the value itself). */
  readonly message: string
}

interface Found {
  readonly path: ReadonlyArray<PropertyKey>
  /** What follows the field's name: `is required`, `must be a string, not 7`. */
  readonly text: string
  /** The text is a schema's own message, which says more than its expected type would. */
  readonly own?: boolean
}

const IDENTIFIER = /^[A-Za-z_$][\w$]*$/

/** `["message", "parts", 0, "text"]` → `message.parts[0].text`. */
export const fieldPath = (path: ReadonlyArray<PropertyKey>): string =>
  path.reduce<string>((text, key) => {
    if (typeof key === "number") return `${text}[${key}]`
    const name = String(key)
    if (!IDENTIFIER.test(name)) return `${text}[${JSON.stringify(name)}]`
    return text === "" ? name : `${text}.${name}`
  }, "")

const MAX_SHOWN = 40

/** The value a client sent, briefly. */
const shown = (actual: unknown): string => {
  if (actual === null) return "null"
  if (Array.isArray(actual)) return "an array"
  if (typeof actual === "object") return "an object"
  if (typeof actual === "string") {
    const quoted = JSON.stringify(actual)
    return quoted.length > MAX_SHOWN ? `${quoted.slice(0, MAX_SHOWN - 2)}…"` : quoted
  }
  return String(actual)
}

const uniqueJoin = (items: ReadonlyArray<string>): string => {
  const unique = [...new Set(items)]
  return unique.length <= 1 ? (unique[0] ?? "") : `${unique.slice(0, -1).join(", ")} or ${unique.at(-1)}`
}

/** What `ast` expects, as a noun phrase: `a string`, `an object`, `one of "a" or "b"`. */
const expected = (ast: AST.AST): string => {
  const description = AST.getDescriptionAnnotation(ast)
  if (Option.isSome(description)) return description.value
  switch (ast._tag) {
    case "TypeLiteral":
      return "an object"
    case "TupleType":
      return "an array"
    case "Literal":
      return JSON.stringify(ast.literal)
    case "Union": {
      // `null` and `undefined` stand for absent in our schemas: not worth offering.
      const members = ast.types.filter((member) =>
        !(member._tag === "UndefinedKeyword" || (member._tag === "Literal" && member.literal === null))
      )
      const literals = members.every((member) => member._tag === "Literal")
      const described = uniqueJoin(members.map(expected))
      return literals && members.length > 1 ? `one of ${described}` : described
    }
    case "Refinement":
    case "Transformation":
      return expected(ast.from)
    case "Suspend":
      return expected(ast.f())
    default:
      return "a valid value"
  }
}

const mismatch = (ast: AST.AST, actual: unknown): string =>
  actual === undefined ? "is required" : `must be ${expected(ast)}, not ${shown(actual)}`

/** The message a refinement carries (its `message` annotation), if it gives a plain string. */
const refinementMessage = (issue: ParseResult.Refinement): string | undefined => {
  const annotation = AST.getMessageAnnotation(issue.ast)
  if (Option.isNone(annotation)) return undefined
  const message = annotation.value(issue)
  if (typeof message === "string") return message
  return typeof message === "object" && "message" in message && typeof message.message === "string" ? message.message : undefined
}

const asArray = <A>(items: A | ReadonlyArray<A>): ReadonlyArray<A> => (Array.isArray(items) ? items : [items as A])

/**
 * Why a value fits no member of a union: when no member got into the value, what the union
 * expects; when every member only missed its own field, that it needs one of them; else the
 * reason of the member that got furthest into the value (among equals, one with a message of its own).
 */
const bestOf = (issue: ParseResult.Composite, path: ReadonlyArray<PropertyKey>, found: ReadonlyArray<Found>): Found => {
  if (found.every((f) => f.path.length === path.length)) {
    // A union described as a whole (`an integer`) says it best; else a member's own message.
    const described = Option.isSome(AST.getDescriptionAnnotation(issue.ast))
    return (described ? undefined : found.find((f) => f.own)) ?? { path, text: mismatch(issue.ast, issue.actual) }
  }
  const missingMember = found.every((f) => f.text === "is required" && f.path.length === path.length + 1)
  if (missingMember) return { path, text: `needs one of ${uniqueJoin(found.map((f) => String(f.path.at(-1))))}` }
  const further = (f: Found, best: Found) =>
    f.path.length > best.path.length || (f.path.length === best.path.length && f.own === true && best.own !== true)
  return found.reduce((best, f) => (further(f, best) ? f : best))
}

const find = (issue: ParseResult.ParseIssue, path: ReadonlyArray<PropertyKey>): Found => {
  switch (issue._tag) {
    case "Pointer":
      return find(issue.issue, [...path, ...asArray(issue.path)])
    case "Missing":
      return { path, text: "is required" }
    case "Unexpected":
      return { path, text: "is not allowed" }
    case "Forbidden":
      return { path, text: "cannot be read" }
    case "Type":
      return issue.message === undefined ? { path, text: mismatch(issue.ast, issue.actual) } : { path, text: issue.message, own: true }
    case "Refinement": {
      if (issue.kind === "From") return find(issue.issue, path)
      const own = refinementMessage(issue)
      return own === undefined ? { path, text: mismatch(issue.ast, issue.actual) } : { path, text: own, own: true }
    }
    case "Transformation":
      return find(issue.issue, path)
    case "Composite": {
      const issues = asArray(issue.issues)
      if (issue.ast._tag !== "Union" || issues.length === 1) return find(issues[0]!, path)
      return bestOf(issue, path, issues.map((inner) => find(inner, path)))
    }
  }
}

/**
 * The first problem of a decoding failure as one sentence. `root` names the value itself
 * (`params`, `the request body`, `the answer`) for problems with the whole value.
 */
export const describeParseError = (error: ParseResult.ParseError, root: string): ParseProblem => {
  const found = find(error.issue, [])
  const field = fieldPath(found.path)
  return { field, message: `${field === "" ? root : field} ${found.text}` }
}
