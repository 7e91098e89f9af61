/** Field readers: each reports what is wrong and returns the value only when it is usable. */
import { at, describeType, isObject, isPresent, quote, type Context, type JsonObject } from "./context.js"

export const reportType = (ctx: Context, path: string, key: string, expected: string, value: unknown): void =>
  ctx.report(
    "field.type",
    path,
    `${quote(key)} must be ${expected}, not ${describeType(value)}`,
    `Write ${quote(key)} as ${expected}.`
  )

export const requiredString = (ctx: Context, owner: JsonObject, key: string, base: string, hint: string): string | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value) || value === "") {
    ctx.report("field.required", path, `${quote(key)} is required${value === "" ? " but empty" : ""}`, hint)
    return undefined
  }
  if (typeof value !== "string") {
    reportType(ctx, path, key, "a string", value)
    return undefined
  }
  return value
}

export const optionalString = (ctx: Context, owner: JsonObject, key: string, base: string): string | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (typeof value !== "string") {
    reportType(ctx, at(base, key), key, "a string", value)
    return undefined
  }
  return value
}

export const optionalBoolean = (ctx: Context, owner: JsonObject, key: string, base: string): void => {
  const value = owner[key]
  if (isPresent(value) && typeof value !== "boolean") reportType(ctx, at(base, key), key, "a boolean", value)
}

export const requiredObject = (ctx: Context, owner: JsonObject, key: string, base: string, hint: string): JsonObject | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value)) {
    ctx.report("field.required", path, `${quote(key)} is required`, hint)
    return undefined
  }
  if (!isObject(value)) {
    reportType(ctx, path, key, "an object", value)
    return undefined
  }
  return value
}

export const optionalObject = (ctx: Context, owner: JsonObject, key: string, base: string): JsonObject | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (!isObject(value)) {
    reportType(ctx, at(base, key), key, "an object", value)
    return undefined
  }
  return value
}

export const requiredList = (
  ctx: Context,
  owner: JsonObject,
  key: string,
  base: string,
  hint: string
): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value)) {
    ctx.report("field.required", path, `${quote(key)} is required`, hint)
    return undefined
  }
  if (!Array.isArray(value)) {
    reportType(ctx, path, key, "an array", value)
    return undefined
  }
  if (value.length === 0) ctx.report("field.empty_list", path, `${quote(key)} must have at least one element`, hint)
  return value
}

export const optionalList = (ctx: Context, owner: JsonObject, key: string, base: string): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (!Array.isArray(value)) {
    reportType(ctx, at(base, key), key, "an array", value)
    return undefined
  }
  return value
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
