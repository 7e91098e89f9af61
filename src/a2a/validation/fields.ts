/** Field readers: each reports what is wrong and returns the value only when it is usable. */
import { at, type Context, describeType, isObject, isPresent, type JsonObject, quote } from "./context.js"

export const reportType = (ctx: Context, path: string, key: string, expected: string, value: unknown): void =>
  ctx.report(
    "field.type",
    path,
    `${quote(key)} must be ${expected}, not ${describeType(value)}`,
    `Write ${quote(key)} as ${expected}.`
  )

/** A JSON type a field must have: how to recognise it and how to name it in an issue. */
interface FieldType<A> {
  readonly expected: string
  readonly is: (value: unknown) => value is A
  /** Strings only: `""` is ProtoJSON's unset, so a required one is missing. */
  readonly emptyIsMissing?: boolean
}

const STRING: FieldType<string> = { expected: "a string", is: (value) => typeof value === "string", emptyIsMissing: true }
const BOOLEAN: FieldType<boolean> = { expected: "a boolean", is: (value) => typeof value === "boolean" }
const OBJECT: FieldType<JsonObject> = { expected: "an object", is: isObject }
const LIST: FieldType<ReadonlyArray<unknown>> = { expected: "an array", is: Array.isArray }

/** Reads a field that may be absent; a present value of another type is reported. */
const optionalField = <A>(type: FieldType<A>) => (ctx: Context, owner: JsonObject, key: string, base: string): A | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (!type.is(value)) {
    reportType(ctx, at(base, key), key, type.expected, value)
    return undefined
  }
  return value
}

/** Reads a REQUIRED field; a missing one or a value of another type is reported. */
const requiredField =
  <A>(type: FieldType<A>) => (ctx: Context, owner: JsonObject, key: string, base: string, hint: string): A | undefined => {
    const value = owner[key]
    const path = at(base, key)
    const empty = type.emptyIsMissing === true && value === ""
    if (!isPresent(value) || empty) {
      ctx.report("field.required", path, `${quote(key)} is required${empty ? " but empty" : ""}`, hint)
      return undefined
    }
    if (!type.is(value)) {
      reportType(ctx, path, key, type.expected, value)
      return undefined
    }
    return value
  }

export const requiredString = requiredField(STRING)
export const optionalString = optionalField(STRING)
export const optionalBoolean = optionalField(BOOLEAN)
export const requiredObject = requiredField(OBJECT)
export const optionalObject = optionalField(OBJECT)
export const optionalList = optionalField(LIST)

/** A REQUIRED repeated field also needs at least one element (spec §5.7). */
export const requiredList = (
  ctx: Context,
  owner: JsonObject,
  key: string,
  base: string,
  hint: string
): ReadonlyArray<unknown> | undefined => {
  const list = requiredField(LIST)(ctx, owner, key, base, hint)
  if (list?.length === 0) ctx.report("field.empty_list", at(base, key), `${quote(key)} must have at least one element`, hint)
  return list
}

/** Reports non-string elements of a list that must hold strings. */
export const checkStringItems = (ctx: Context, list: ReadonlyArray<unknown> | undefined, path: string, key: string): void => {
  list?.forEach((item, index) => {
    if (typeof item !== "string") reportType(ctx, at(path, index), `${key}[${index}]`, "a string", item)
  })
}

/** Objects of a list, with their pointers; reports the elements that are not objects. */
export const objectItems = (
  ctx: Context | undefined,
  list: ReadonlyArray<unknown> | undefined,
  path: string,
  key: string
): ReadonlyArray<readonly [JsonObject, string]> => {
  const items: Array<readonly [JsonObject, string]> = []
  list?.forEach((item, index) => {
    if (isObject(item)) items.push([item, at(path, index)])
    else if (ctx !== undefined) reportType(ctx, at(path, index), `${key}[${index}]`, "an object", item)
  })
  return items
}

/** A list field read without reporting anything (semantic checks run after the structural ones). */
export const listOf = (owner: JsonObject, key: string): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  return Array.isArray(value) ? value : undefined
}
