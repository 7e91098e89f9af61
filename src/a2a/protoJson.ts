/**
 * Reading ProtoJSON (https://protobuf.dev/programming-guides/json/) with the A2A schemas.
 *
 * A ProtoJSON parser must accept, for every field, both its JSON name (lowerCamelCase, or the
 * proto's `json_name`) and its original proto field name: `messageId` and `message_id`,
 * `pushNotificationConfig` and `push_notification_config`. The schemas name the JSON names only;
 * `normalizer(schema)` renames proto names to them before decoding, walking the JSON along the
 * schema so that free-form values (Struct metadata, data parts, the keys of maps) are never
 * touched. Enum values by name or by number are the enum schemas' own business (v1.ts).
 *
 * Every place relay reads ProtoJSON decodes with `decoder` / `decoderEither` from here.
 */
import { Either, type ParseResult, Predicate, Schema, SchemaAST as AST } from "effect"

/**
 * Field names a message accepts besides its JSON names and proto names, for proto fields whose
 * `json_name` differs from their name (v0.3 `SendMessageRequest.request` is `message` in JSON):
 * alias → JSON name. Set on a Struct with `.annotations({ [ProtoAliases]: { … } })`.
 */
export const ProtoAliases: unique symbol = Symbol.for("relay/ProtoAliases")

type Normalize = (json: unknown) => unknown

const identity: Normalize = (json) => json

/** `message_id` → `messageId`: the proto compiler's own rule (an underscore capitalises what follows). */
export const jsonName = (protoName: string): string => protoName.replace(/_+(.)/g, (_, next: string) => next.toUpperCase())

type Aliases = Readonly<Record<string, string>>

/** An object shape and the aliases annotated on it or on the schemas around it. */
interface ObjectShape {
  readonly object: AST.TypeLiteral
  readonly aliases: Aliases
}

/** The object and array shapes a value of `ast` may take on the wire. */
interface Shapes {
  readonly objects: Array<ObjectShape>
  readonly elements: Array<AST.AST>
}

const collectShapes = (ast: AST.AST, into: Shapes, seen: Set<AST.AST>, outer: Aliases = {}): void => {
  if (seen.has(ast)) return
  seen.add(ast)
  const own = ast.annotations[ProtoAliases] as Aliases | undefined
  const aliases = own === undefined ? outer : { ...outer, ...own }
  switch (ast._tag) {
    case "TypeLiteral":
      into.objects.push({ object: ast, aliases })
      return
    case "TupleType":
      for (const element of ast.elements) into.elements.push(element.type)
      for (const rest of ast.rest) into.elements.push(rest.type)
      return
    case "Union":
      for (const member of ast.types) collectShapes(member, into, seen)
      return
    case "Refinement":
      return collectShapes(ast.from, into, seen, aliases)
    case "Suspend":
      return collectShapes(ast.f(), into, seen, aliases)
    case "Transformation":
      // A transformation from anything (a hand-written reader) still expects its target's shape.
      return collectShapes(
        ast.from._tag === "UnknownKeyword" || ast.from._tag === "AnyKeyword" ? ast.to : ast.from,
        into,
        seen,
        aliases
      )
    default:
      return
  }
}

const cache = new WeakMap<AST.AST, Normalize>()

/** The normalizer of an AST, compiled on first use (so recursive schemas compile lazily). */
const normalizerOfAst = (ast: AST.AST): Normalize => {
  const cached = cache.get(ast)
  if (cached !== undefined) return cached
  let compiled: Normalize | undefined
  const lazy: Normalize = (json) => (compiled ??= compileAsts([ast]))(json)
  cache.set(ast, lazy)
  return lazy
}

/** One normalizer for a value that may be any of `asts` (the members of a union, the fields of that name). */
const normalizerOfAsts = (asts: ReadonlyArray<AST.AST>): Normalize => asts.length === 1 ? normalizerOfAst(asts[0]!) : compileAsts(asts)

const compileAsts = (asts: ReadonlyArray<AST.AST>): Normalize => {
  const shapes: Shapes = { objects: [], elements: [] }
  const seen = new Set<AST.AST>()
  for (const ast of asts) collectShapes(ast, shapes, seen)
  const objects = shapes.objects.length === 0 ? undefined : objectNormalizer(shapes.objects)
  const elements = shapes.elements.length === 0 ? undefined : normalizerOfAsts(shapes.elements)
  if (objects === undefined && elements === undefined) return identity
  return (json) => {
    if (Array.isArray(json)) return elements === undefined ? json : mapSame(json, elements)
    return objects !== undefined && Predicate.isRecord(json) ? objects(json) : json
  }
}

/** `list` with `f` applied to each element; the same array when nothing changed. */
const mapSame = (list: ReadonlyArray<unknown>, f: Normalize): ReadonlyArray<unknown> => {
  let out: Array<unknown> | undefined
  for (let i = 0; i < list.length; i++) {
    const value = list[i]
    const normalized = f(value)
    if (normalized !== value && out === undefined) out = list.slice(0, i)
    if (out !== undefined) out.push(normalized)
  }
  return out ?? list
}

/**
 * Renames the proto names (and aliases) of `objects`' fields to their JSON names and normalizes
 * each field's value along its schema; keys it does not know are left alone (unknown fields are
 * ignored by the schemas). When both names of a field are present, the JSON name wins.
 */
const objectNormalizer = (objects: ReadonlyArray<ObjectShape>): Normalize => {
  const fieldAsts = new Map<string, Array<AST.AST>>()
  const indexAsts: Array<AST.AST> = []
  const aliases: Record<string, string> = {}
  for (const { object, aliases: own } of objects) {
    for (const signature of object.propertySignatures) {
      if (typeof signature.name !== "string") continue
      const known = fieldAsts.get(signature.name)
      if (known === undefined) fieldAsts.set(signature.name, [signature.type])
      else known.push(signature.type)
    }
    for (const index of object.indexSignatures) indexAsts.push(index.type)
    Object.assign(aliases, own)
  }
  const fields = new Map([...fieldAsts].map(([name, asts]) => [name, normalizerOfAsts(asts)]))
  const values = indexAsts.length === 0 ? undefined : normalizerOfAsts(indexAsts)
  const targetOf = (key: string, json: Record<string, unknown>): string | undefined => {
    if (fields.has(key)) return key
    const renamed = aliases[key] ?? (key.includes("_") ? jsonName(key) : undefined)
    return renamed !== undefined && fields.has(renamed) && !(renamed in json) ? renamed : undefined
  }
  return (json) => {
    const record = json as Record<string, unknown>
    const keys = Object.keys(record)
    let out: Record<string, unknown> | undefined
    for (let i = 0; i < keys.length; i++) {
      const key = keys[i]!
      const value = record[key]
      const target = targetOf(key, record)
      const normalize = target === undefined ? values : fields.get(target)
      const normalized = normalize === undefined ? value : normalize(value)
      const name = target ?? key
      if (out === undefined && (name !== key || normalized !== value)) {
        out = {}
        for (let j = 0; j < i; j++) out[keys[j]!] = record[keys[j]!]
      }
      if (out !== undefined) out[name] = normalized
    }
    return out ?? json
  }
}

/** Renames proto field names to JSON names all through `json`, as `schema` reads it. */
export const normalizer = <A, I, R>(schema: Schema.Schema<A, I, R>): Normalize => normalizerOfAst(schema.ast)

/**
 * Builds `compile()` on the first call, not when the module loads: the model's decoders are made
 * at module level, and compiling them all was a good part of the start-up of every command that
 * loads the model (bench/README.md).
 */
const onFirstUse = <F>(compile: () => F): () => F => {
  let compiled: F | undefined
  return () => (compiled ??= compile())
}

/** `Schema.decodeUnknown` that also reads proto field names. */
export const decoder = <A, I>(schema: Schema.Schema<A, I>) => {
  const compiled = onFirstUse(() => ({ normalize: normalizer(schema), decode: Schema.decodeUnknown(schema) }))
  return (json: unknown) => {
    const { decode, normalize } = compiled()
    return decode(normalize(json))
  }
}

/** `Schema.decodeUnknownEither` that also reads proto field names. */
export const decoderEither = <A, I>(schema: Schema.Schema<A, I>) => {
  const compiled = onFirstUse(() => ({ normalize: normalizer(schema), decode: Schema.decodeUnknownEither(schema) }))
  return (json: unknown): Either.Either<A, ParseResult.ParseError> => {
    const { decode, normalize } = compiled()
    return decode(normalize(json))
  }
}
