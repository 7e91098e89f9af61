/**
 * Field helpers shared by the v1.0 and v0.3 wire schemas: how ProtoJSON's optional, defaulted and
 * repeated fields read (leniently: `null` is absent) and write.
 */
import { Option, Schema } from "effect"

/** Optional field: `null` and absence both decode to absent; encode omits it. */
export const optional = <S extends Schema.Schema.All>(schema: S) => Schema.optionalWith(schema, { exact: true, nullable: true })

/** Field that ProtoJSON may omit (or a peer may write as `null`): absent decodes to `fallback()`; always encoded. */
export const withDefault = <S extends Schema.Schema.All>(schema: S, fallback: () => Schema.Schema.Type<S>) =>
  Schema.optionalWith(schema, { default: fallback, nullable: true })

/**
 * Optional string where `""` also means absent: proto3 cannot tell an empty string from an
 * unset one, and SDKs that serialise their in-memory objects emit `""` for unset fields.
 */
export const optionalText = Schema.optionalToOptional(Schema.NullOr(Schema.String), Schema.String, {
  decode: (value) => Option.filter(value, (s): s is string => s !== null && s !== ""),
  encode: (value) => value
})

/**
 * Optional repeated field where `[]` also means absent (proto3 cannot tell them apart, and SDKs
 * that serialise their in-memory objects emit `[]`). Encoding writes the list when present.
 */
export const optionalList = <A, I, R>(item: Schema.Schema<A, I, R>) =>
  Schema.optionalToOptional(Schema.NullOr(Schema.Array(item)), Schema.typeSchema(Schema.Array(item)), {
    decode: (value) => Option.filter(value, (list): list is ReadonlyArray<A> => list !== null && list.length > 0),
    encode: (value) => value
  })

/** Repeated field that ProtoJSON omits when empty: absent decodes to `[]`, always encoded. */
export const repeated = <S extends Schema.Schema.Any>(item: S) => withDefault(Schema.Array(item), () => [])

/** A string that proto3 may omit when empty: absent decodes to `""`. */
export const defaultText = withDefault(Schema.String, () => "")

/** OAuth scopes: scope name → description. */
export const Scopes = Schema.Record({ key: Schema.String, value: Schema.String })

/** Scopes a flow requires; absent decodes to none. */
export const requiredScopes = withDefault(Scopes, () => ({}))
