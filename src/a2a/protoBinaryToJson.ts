/**
 * Protobuf bytes straight to ProtoJSON, for what the gRPC door reads (each request): the schema's
 * fields are walked once into a plan per message type, and each message's bytes are read through
 * it into JSON, without the reflective message objects that @bufbuild/protobuf's fromBinary +
 * toJson build on the way (most of the decode's cost, bench/README.md). The mirror of
 * protoJsonToBinary.ts.
 *
 * It takes only plain encodings: each field with the wire type its type writes (repeated scalars
 * packed or not), lengths inside their message, string map keys, open enums, nesting to MAX_DEPTH,
 * and of the well-known types Timestamp, Struct, Value and ListValue. Anything else (groups, a
 * message field given twice, which the library merges, Any, ...) answers undefined, and the caller
 * takes fromBinary + toJson, whose rules and errors stay the reference (the two are held to the
 * same JSON by test/a2a/protoBinaryToJson.test.ts). The numbers are read by the library's own
 * BinaryReader, so varints and floats come out as the library reads them; strings through
 * Buffer (readString).
 */
import { type DescEnum, type DescField, type DescMessage, type JsonValue, ScalarType } from "@bufbuild/protobuf"
import { BinaryReader, WireType } from "@bufbuild/protobuf/wire"
import { isUtf8 } from "node:buffer"

/** Thrown inside for an encoding left to the library; never escapes. */
const NOT_PLAIN: unique symbol = Symbol("not plain protobuf")
const notPlain = (): never => {
  throw NOT_PLAIN
}

/** Nesting followed before leaving the message to the library (and its own recursion limit). */
const MAX_DEPTH = 100

/** google.protobuf.FeatureSet.FieldPresence */
const IMPLICIT = 2
const LEGACY_REQUIRED = 3

/** A message's field values in field-number order, as read so far (undefined: not set, or proto3's default). */
type Slots = Array<JsonValue | undefined>

/** Reads one occurrence of a field (its tag already read) into the message's slots. */
type ReadField = (r: Reader, wire: WireType, slots: Slots, end: number, depth: number) => void

/** Reads a message that ends at `end` to its JSON. */
type ReadMessage = (r: Reader, end: number, depth: number) => JsonValue

const plans = new Map<string, ReadMessage>()

/** The library's reader, over a Buffer: strings and base64 are Buffer's. */
class Reader extends BinaryReader {
  constructor(readonly buffer: Buffer) {
    super(buffer)
  }

  /** Moves past the length-delimited value starting here; answers where its bytes start. */
  skipDelimited(): number {
    const length = this.uint32()
    const start = this.pos
    if (length > this.len - start) notPlain()
    this.pos = start + length
    return start
  }

  /**
   * The next tag's field number, its wire type in `wire` (no array, as the library's `tag` makes).
   * Tags of more than 4 bytes (field numbers from 2^25), and those the library refuses, are its own.
   */
  field(): number {
    const start = this.pos
    const tag = this.uint32()
    this.wire = tag & 7
    return tag < 8 || this.wire > 5 || this.pos - start > 4 ? notPlain() : tag >>> 3
  }

  wire: WireType = WireType.Varint
}

/** The end of the length-delimited value (a message) starting here, which must lie inside its own message. */
const lengthEnd = (r: Reader, end: number): number => {
  const length = r.uint32()
  return length <= end - r.pos ? r.pos + length : notPlain()
}

/**
 * A string with UTF-8 validation, the very text the library's TextDecoder gives, decoded by Buffer
 * (a TextDecoder call costs more than most strings here take to decode). Invalid UTF-8, which the
 * library refuses, and a leading byte order mark, which TextDecoder drops, are the library's.
 */
const readString = (r: Reader): string => {
  const start = r.skipDelimited()
  const end = r.pos
  const buffer = r.buffer
  for (let at = start; at < end; at++) {
    if (buffer[at]! < 0x80) continue
    const bytes = buffer.subarray(start, end)
    return isUtf8(bytes) && !(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf) ? bytes.toString("utf8") : notPlain()
  }
  return buffer.toString("latin1", start, end)
}

/** A float as toJson writes it: the non-finite ones as text. */
const floatJson = (value: number): JsonValue =>
  Number.isFinite(value) ? value : Number.isNaN(value) ? "NaN" : value > 0 ? "Infinity" : "-Infinity"

/** A scalar or enum value: its wire type, its reader, and whether a JSON value is proto3's default. */
interface Value {
  readonly wire: WireType
  readonly read: (r: Reader) => JsonValue
  readonly isDefault: (json: JsonValue) => boolean
}

const isZero = (json: JsonValue) => json === 0
const isZeroText = (json: JsonValue) => json === "0"

const scalarOf = (type: ScalarType, strictUtf8: boolean): Value => {
  switch (type) {
    case ScalarType.STRING:
      return {
        wire: WireType.LengthDelimited,
        read: strictUtf8 ? readString : (r) => r.string(false),
        isDefault: (v) => v === ""
      }
    case ScalarType.BYTES:
      // Standard base64 with padding, as toJson writes it.
      return {
        wire: WireType.LengthDelimited,
        read: (r) => r.buffer.toString("base64", r.skipDelimited(), r.pos),
        isDefault: (v) => v === ""
      }
    case ScalarType.BOOL:
      return { wire: WireType.Varint, read: (r) => r.bool(), isDefault: (v) => v === false }
    // -0 is set (isScalarZeroValue tells it from 0).
    case ScalarType.DOUBLE:
      return { wire: WireType.Bit64, read: (r) => floatJson(r.double()), isDefault: (v) => Object.is(v, 0) }
    case ScalarType.FLOAT:
      return { wire: WireType.Bit32, read: (r) => floatJson(r.float()), isDefault: (v) => Object.is(v, 0) }
    case ScalarType.INT32:
      return { wire: WireType.Varint, read: (r) => r.int32(), isDefault: isZero }
    case ScalarType.SINT32:
      return { wire: WireType.Varint, read: (r) => r.sint32(), isDefault: isZero }
    case ScalarType.UINT32:
      return { wire: WireType.Varint, read: (r) => r.uint32(), isDefault: isZero }
    case ScalarType.FIXED32:
      return { wire: WireType.Bit32, read: (r) => r.fixed32(), isDefault: isZero }
    case ScalarType.SFIXED32:
      return { wire: WireType.Bit32, read: (r) => r.sfixed32(), isDefault: isZero }
    // 64-bit integers as decimal text.
    case ScalarType.INT64:
      return { wire: WireType.Varint, read: (r) => String(r.int64()), isDefault: isZeroText }
    case ScalarType.SINT64:
      return { wire: WireType.Varint, read: (r) => String(r.sint64()), isDefault: isZeroText }
    case ScalarType.UINT64:
      return { wire: WireType.Varint, read: (r) => String(r.uint64()), isDefault: isZeroText }
    case ScalarType.FIXED64:
      return { wire: WireType.Bit64, read: (r) => String(r.fixed64()), isDefault: isZeroText }
    case ScalarType.SFIXED64:
      return { wire: WireType.Bit64, read: (r) => String(r.sfixed64()), isDefault: isZeroText }
  }
}

/** An open enum's value by name, an unknown number as the number; NullValue is null (its 0 only). */
const enumOf = (desc: DescEnum): Value | undefined => {
  if (!desc.open) return undefined
  if (desc.typeName === "google.protobuf.NullValue") {
    return { wire: WireType.Varint, read: (r) => (r.int32() === 0 ? null : notPlain()), isDefault: () => true }
  }
  // As toJson names them (desc.value: the last alias of a number).
  const read = (r: Reader): JsonValue => {
    const number = r.int32()
    return desc.value[number]?.name ?? number
  }
  const zero = desc.value[desc.values[0]!.number]!.name
  return { wire: WireType.Varint, read, isDefault: (v) => v === zero }
}

/** How one field is read; undefined for the kinds left to the library. */
const fieldReader = (field: DescField, index: number, siblings: ReadonlyArray<number>): ReadField | undefined => {
  // Set means written, default or not: a oneof's member, proto3 `optional`, a message.
  const implicit = field.oneof === undefined && field.presence === IMPLICIT
  const store = (slots: Slots, json: JsonValue | undefined) => {
    slots[index] = json
    for (const sibling of siblings) slots[sibling] = undefined
  }
  switch (field.fieldKind) {
    case "scalar":
    case "enum": {
      const value = field.fieldKind === "enum" ? enumOf(field.enum) : scalarOf(field.scalar, field.utf8Validation)
      if (value === undefined) return undefined
      return (r, wire, slots) => {
        if (wire !== value.wire) notPlain()
        const json = value.read(r)
        // The last occurrence wins.
        store(slots, implicit && value.isDefault(json) ? undefined : json)
      }
    }
    case "message": {
      if (field.delimitedEncoding) return undefined
      const message = field.message
      return (r, wire, slots, end, depth) => {
        // A second occurrence is merged into the first by the library.
        if (wire !== WireType.LengthDelimited || slots[index] !== undefined) notPlain()
        store(slots, planOf(message)(r, lengthEnd(r, end), depth + 1))
      }
    }
    case "list":
      return listReader(field, index)
    case "map":
      return mapReader(field, index)
  }
}

const listReader = (field: DescField & { readonly fieldKind: "list" }, index: number): ReadField | undefined => {
  const add = (slots: Slots, json: JsonValue) => {
    ;((slots[index] ??= []) as Array<JsonValue>).push(json)
  }
  if (field.listKind === "message") {
    if (field.delimitedEncoding) return undefined
    const message = field.message
    return (r, wire, slots, end, depth) => {
      if (wire !== WireType.LengthDelimited) notPlain()
      add(slots, planOf(message)(r, lengthEnd(r, end), depth + 1))
    }
  }
  const item = field.listKind === "enum" ? enumOf(field.enum) : scalarOf(field.scalar, field.utf8Validation)
  if (item === undefined) return undefined
  // Packed or not, whichever the writer chose (strings and bytes are never packed).
  const packable = item.wire !== WireType.LengthDelimited
  return (r, wire, slots, end) => {
    if (wire === item.wire) {
      add(slots, item.read(r))
    } else if (packable && wire === WireType.LengthDelimited) {
      const packedEnd = lengthEnd(r, end)
      while (r.pos < packedEnd) add(slots, item.read(r))
      if (r.pos !== packedEnd) notPlain()
    } else {
      notPlain()
    }
  }
}

/** Maps with string keys (all A2A has); a missing key or value reads as its default, as in the library. */
const mapReader = (field: DescField & { readonly fieldKind: "map" }, index: number): ReadField | undefined => {
  if (field.mapKey !== ScalarType.STRING) return undefined
  const key = scalarOf(ScalarType.STRING, field.utf8Validation)
  let readValue: (r: Reader, wire: WireType, end: number, depth: number) => JsonValue
  let missing: (depth: number) => JsonValue
  switch (field.mapKind) {
    case "message": {
      const message = field.message
      readValue = (r, wire, end, depth) => wire === WireType.LengthDelimited ? planOf(message)(r, lengthEnd(r, end), depth + 1) : notPlain()
      // An empty message, read from no bytes.
      missing = (depth) => planOf(message)(new Reader(Buffer.alloc(0)), 0, depth + 1)
      break
    }
    case "enum":
    case "scalar": {
      const value = field.mapKind === "enum" ? enumOf(field.enum) : scalarOf(field.scalar, field.utf8Validation)
      if (value === undefined) return undefined
      readValue = (r, wire) => (wire === value.wire ? value.read(r) : notPlain())
      const zero = new Reader(Buffer.alloc(8))
      missing = () => {
        zero.pos = 0
        return value.read(zero)
      }
      break
    }
  }
  return (r, wire, slots, end, depth) => {
    if (wire !== WireType.LengthDelimited) notPlain()
    const entryEnd = lengthEnd(r, end)
    let entryKey: JsonValue = ""
    let entryValue: JsonValue | undefined
    while (r.pos < entryEnd) {
      const number = r.field()
      const entryWire = r.wire
      if (number === 1 && entryWire === key.wire) entryKey = key.read(r)
      else if (number === 2) entryValue = readValue(r, entryWire, entryEnd, depth)
      else notPlain()
    }
    // A key the library's plain object would take for its prototype.
    if (r.pos !== entryEnd || entryKey === "__proto__") notPlain()
    const entries = (slots[index] ??= {}) as Record<string, JsonValue>
    entries[entryKey as string] = entryValue !== undefined ? entryValue : missing(depth) // a Value may be null
  }
}

// ---------------------------------------------------------------------------
// Well-known types with a JSON form of their own: their fields are read as any message's, then
// turned into that form (slots in field-number order), with toJson's refusals left to it.

const EARLIEST = Date.parse("0001-01-01T00:00:00Z")
const LATEST = Date.parse("9999-12-31T23:59:59Z")

/** google.protobuf.Timestamp (seconds 1, nanos 2) as RFC 3339, with 0, 3, 6 or 9 fraction digits as toJson writes it. */
const timestampJson = ([seconds, nanos = 0]: Slots): JsonValue => {
  const ms = Number(seconds ?? 0) * 1000
  if (!(ms >= EARLIEST && ms <= LATEST) || typeof nanos !== "number" || nanos < 0 || nanos > 999_999_999) return notPlain()
  let fraction = ""
  if (nanos > 0) {
    const digits = String(nanos + 1_000_000_000).substring(1)
    fraction = "." + (digits.endsWith("000000") ? digits.substring(0, 3) : digits.endsWith("000") ? digits.substring(0, 6) : digits)
  }
  return new Date(ms).toISOString().replace(".000Z", `${fraction}Z`)
}

/** google.protobuf.Value: the one member of its `kind` that is set (null 1, number 2, string 3, bool 4, struct 5, list 6). */
const valueJson = (slots: Slots): JsonValue => {
  for (let index = 0; index < 6; index++) {
    const json = slots[index]
    if (json === undefined) continue
    // NaN and the infinities are not JSON numbers: toJson refuses them.
    return index === 1 && typeof json !== "number" ? notPlain() : json
  }
  // toJson refuses a Value with no kind.
  return notPlain()
}

const WELL_KNOWN: Readonly<Record<string, (slots: Slots) => JsonValue>> = {
  "google.protobuf.Timestamp": timestampJson,
  "google.protobuf.Value": valueJson,
  "google.protobuf.Struct": ([fields]) => fields ?? {},
  "google.protobuf.ListValue": ([values]) => values ?? []
}

// ---------------------------------------------------------------------------

interface Layout {
  readonly byNumber: ReadonlyMap<number, ReadField>
  readonly size: number
  readonly toJson: (slots: Slots) => JsonValue
}

/** A message type's field readers, in field-number order (the order toJson writes them in). */
const layoutOf = (desc: DescMessage): Layout => {
  const fields = [...desc.fields].sort((a, b) => a.number - b.number)
  const indexOf = new Map(fields.map((field, index) => [field, index]))
  const byNumber = new Map(fields.map((field, index) => {
    const siblings = field.oneof?.fields.filter((member) => member !== field).map((member) => indexOf.get(member)!) ?? []
    return [field.number, fieldReader(field, index, siblings) ?? notPlain] as const
  }))
  const names = fields.map((field) => field.jsonName)
  const toJson = WELL_KNOWN[desc.typeName] ?? ((slots: Slots) => {
    const json: Record<string, JsonValue> = {}
    for (let index = 0; index < names.length; index++) {
      const value = slots[index]
      if (value !== undefined) json[names[index]!] = value
    }
    return json
  })
  return { byNumber, size: fields.length, toJson }
}

/** The reader of one message type, made on first use (its layout on its first read: types nest and recurse). */
const planOf = (desc: DescMessage): ReadMessage => {
  const known = plans.get(desc.typeName)
  if (known !== undefined) return known
  let plan: ReadMessage
  if (
    (desc.typeName.startsWith("google.protobuf.") && desc.fields.length > 0 && !Object.hasOwn(WELL_KNOWN, desc.typeName)) ||
    desc.fields.some((field) => field.presence === LEGACY_REQUIRED)
  ) {
    // Any, Duration, FieldMask, the wrappers: their JSON is the library's to write. Required fields its to check.
    plan = notPlain
  } else {
    let layout: Layout | undefined
    plan = (r, end, depth) => {
      if (depth > MAX_DEPTH) notPlain()
      const { byNumber, size, toJson } = layout ??= layoutOf(desc)
      const slots: Slots = new Array(size)
      while (r.pos < end) {
        const number = r.field()
        const wire = r.wire
        const read = byNumber.get(number)
        if (read !== undefined) read(r, wire, slots, end, depth)
        else if (wire === WireType.StartGroup || wire === WireType.EndGroup) notPlain()
        else r.skip(wire, number) // an unknown field, as readUnknownFields: false
      }
      if (r.pos !== end) notPlain()
      return toJson(slots)
    }
  }
  plans.set(desc.typeName, plan)
  return plan
}

/**
 * `bytes` as the ProtoJSON of a `schema` message, the very value toJson(fromBinary(...)) gives, or
 * undefined when they are not in the plain encodings above (or hold a value toJson refuses, a
 * Timestamp out of range say: the library then says why).
 */
export const protoBinaryToJson = (schema: DescMessage, bytes: Uint8Array): JsonValue | undefined => {
  try {
    const buffer = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
    return planOf(schema)(new Reader(buffer), buffer.byteLength, 0)
  } catch {
    return undefined
  }
}
