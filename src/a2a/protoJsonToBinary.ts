/**
 * ProtoJSON straight to protobuf bytes, for what relay writes itself (the gRPC door's answers):
 * the schema's fields are walked once into a plan per message type, and each answer's JSON is
 * written through it, without the message objects that @bufbuild/protobuf's fromJson + toBinary
 * build on the way (the larger part of a gRPC SendMessage's own cost, bench/README.md).
 *
 * It takes only the plain shapes: every key a field's JSON name, no null, enums by name or
 * number, 64-bit integers as decimal strings or safe integers, bytes as base64, and of the
 * well-known types Timestamp, Struct, Value and ListValue. Anything else answers undefined, and
 * the caller takes fromJson + toBinary, whose rules and errors stay the reference (the two are held
 * to the same bytes by test/a2a/protoJsonToBinary.test.ts).
 */
import { type DescEnum, type DescField, type DescMessage, ScalarType } from "@bufbuild/protobuf"
import { WireType } from "@bufbuild/protobuf/wire"

/**
 * The bytes being written: one growing buffer, strings encoded into it in place, and a nested
 * message's length written in front of it once known (moved up when it takes more than a byte).
 * The encoding is protobuf's canonical one, the library's Bytes's byte for byte; this one
 * only allocates less (its chunks and each string's own TextEncoder array were most of its cost).
 */
class Bytes {
  private buffer = Buffer.allocUnsafe(512)
  private at = 0

  private room(bytes: number): void {
    if (this.at + bytes <= this.buffer.length) return
    const larger = Buffer.allocUnsafe(Math.max(this.buffer.length * 2, this.at + bytes))
    this.buffer.copy(larger, 0, 0, this.at)
    this.buffer = larger
  }

  /** An unsigned value below 2^32 as a varint. */
  private varint32(value: number): void {
    this.room(5)
    while (value > 0x7f) {
      this.buffer[this.at++] = (value & 0x7f) | 0x80
      value >>>= 7
    }
    this.buffer[this.at++] = value
  }

  /** A 64-bit two's complement value as a varint (negative int32 and all int64 take this way). */
  private varint64(value: bigint): void {
    let rest = BigInt.asUintN(64, value)
    this.room(10)
    while (rest > 0x7fn) {
      this.buffer[this.at++] = Number(rest & 0x7fn) | 0x80
      rest >>= 7n
    }
    this.buffer[this.at++] = Number(rest)
  }

  tag(field: number, wire: WireType): this {
    this.varint32((field * 8 + wire) >>> 0)
    return this
  }

  string(text: string): void {
    const length = Buffer.byteLength(text)
    this.varint32(length)
    this.room(length)
    this.at += this.buffer.write(text, this.at)
  }

  bytes(bytes: Uint8Array): void {
    this.varint32(bytes.length)
    this.room(bytes.length)
    this.buffer.set(bytes, this.at)
    this.at += bytes.length
  }

  bool(value: boolean): void {
    this.varint32(value ? 1 : 0)
  }

  int32(value: number): void {
    if (value >= 0) this.varint32(value)
    else this.varint64(BigInt(value))
  }

  uint32(value: number): void {
    this.varint32(value)
  }

  sint32(value: number): void {
    this.varint32(((value << 1) ^ (value >> 31)) >>> 0)
  }

  fixed32(value: number): void {
    this.room(4)
    this.at = this.buffer.writeUInt32LE(value, this.at)
  }

  sfixed32(value: number): void {
    this.room(4)
    this.at = this.buffer.writeInt32LE(value, this.at)
  }

  float(value: number): void {
    // Past float32's range the library refuses: so does this (and the caller falls back to it).
    if (Math.abs(value) > 3.4028234663852886e38) throw new RangeError("float out of range")
    this.room(4)
    this.at = this.buffer.writeFloatLE(value, this.at)
  }

  double(value: number): void {
    this.room(8)
    this.at = this.buffer.writeDoubleLE(value, this.at)
  }

  int64(text: string): void {
    this.varint64(int64In(BigInt(text), -(2n ** 63n), 2n ** 63n - 1n))
  }

  /** An integral number as int64 (a Timestamp's seconds). */
  int64Number(value: number): void {
    if (value >= 0 && value < 2 ** 32) this.varint32(value)
    else this.varint64(BigInt(value))
  }

  uint64(text: string): void {
    this.varint64(int64In(BigInt(text), 0n, 2n ** 64n - 1n))
  }

  sint64(text: string): void {
    const value = int64In(BigInt(text), -(2n ** 63n), 2n ** 63n - 1n)
    this.varint64((value << 1n) ^ (value >> 63n))
  }

  fixed64(text: string): void {
    this.room(8)
    this.at = this.buffer.writeBigUInt64LE(int64In(BigInt(text), 0n, 2n ** 64n - 1n), this.at)
  }

  sfixed64(text: string): void {
    this.room(8)
    this.at = this.buffer.writeBigInt64LE(int64In(BigInt(text), -(2n ** 63n), 2n ** 63n - 1n), this.at)
  }

  /** Starts field `field`'s nested message; `close` with what this returns ends it. */
  open(field: number): number {
    this.tag(field, WireType.LengthDelimited)
    this.room(1)
    return this.at++
  }

  close(start: number): void {
    const length = this.at - start - 1
    let size = 1
    for (let rest = length >>> 7; rest > 0; rest >>>= 7) size++
    if (size > 1) {
      this.room(size - 1)
      this.buffer.copyWithin(start + size, start + 1, this.at)
      this.at += size - 1
    }
    const end = this.at
    this.at = start
    this.varint32(length)
    this.at = end
  }

  finish(): Uint8Array {
    return this.buffer.subarray(0, this.at)
  }
}

const int64In = (value: bigint, min: bigint, max: bigint): bigint => {
  if (value < min || value > max) throw new RangeError("64-bit integer out of range")
  return value
}

/** Thrown inside for a shape left to the library; never escapes. */
const NOT_PLAIN: unique symbol = Symbol("not plain ProtoJSON")
const notPlain = (): never => {
  throw NOT_PLAIN
}

/** Nesting followed before leaving the message to the library (and its own recursion limit). */
const MAX_DEPTH = 100

type Json = Record<string, unknown>
type WriteValue = (writer: Bytes, value: unknown, depth: number) => void

interface FieldPlan {
  readonly jsonName: string
  /** Writes the field (tag included) unless its value is proto3's default where that means "not set". */
  readonly write: WriteValue
  /** The oneof it belongs to, if any: at most one member may be given. */
  readonly oneof: string | undefined
}

type MessagePlan = (writer: Bytes, json: unknown, depth: number) => void

const plans = new Map<string, MessagePlan>()

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)

const INT32 = { min: -0x80000000, max: 0x7fffffff }
const UINT32 = { min: 0, max: 0xffffffff }
/** "-0" is the library's: it reads it as 0, the default, not written. */
const INT64_TEXT = /^(?:0|-?[1-9][0-9]*)$/
/**
 * Base64 as ProtoJSON has it (standard or URL-safe, padded or not), whose bytes Buffer and the
 * library read alike; a last group of one character the library refuses, and padding past the
 * last group it reads otherwise.
 */
const BASE64 = /^(?:[A-Za-z0-9+/_-]{4})*(?:[A-Za-z0-9+/_-]{2}(?:==)?|[A-Za-z0-9+/_-]{3}=?)?$/

const integer = (value: unknown, range: { readonly min: number; readonly max: number }): number =>
  typeof value === "number" && Number.isInteger(value) && value >= range.min && value <= range.max ? value : notPlain()

const int64Text = (value: unknown): string =>
  typeof value === "string" && INT64_TEXT.test(value)
    ? value
    : typeof value === "number" && Number.isSafeInteger(value)
    ? String(value)
    : notPlain()

/**
 * A string field's text: with a lone surrogate (no UTF-8 for it) the library refuses the field,
 * where Buffer would write U+FFFD. (Struct keys and Values it writes with U+FFFD: so does this.)
 */
const text = (value: unknown): string =>
  typeof value === "string" && (value as string & { isWellFormed(): boolean }).isWellFormed() ? value : notPlain()

const finite = (value: unknown): number => (typeof value === "number" && Number.isFinite(value) ? value : notPlain())

const base64 = (value: unknown): Uint8Array => typeof value === "string" && BASE64.test(value) ? Buffer.from(value, "base64") : notPlain()

/** A scalar's wire type and writer (no tag), and whether a value is proto3's default. */
const scalarOf = (type: ScalarType): {
  readonly wire: WireType
  readonly write: (writer: Bytes, value: unknown) => void
  readonly isDefault: (value: unknown) => boolean
} => {
  const isZero = (value: unknown) => value === 0 || value === "0"
  // -0 is not proto3's default of a double or float: it is written (Object.is tells it from 0).
  const isPositiveZero = (value: unknown) => Object.is(value, 0)
  switch (type) {
    case ScalarType.STRING:
      return {
        wire: WireType.LengthDelimited,
        write: (w, v) => w.string(text(v)),
        isDefault: (v) => v === ""
      }
    case ScalarType.BYTES:
      return { wire: WireType.LengthDelimited, write: (w, v) => w.bytes(base64(v)), isDefault: (v) => v === "" }
    case ScalarType.BOOL:
      return { wire: WireType.Varint, write: (w, v) => w.bool(typeof v === "boolean" ? v : notPlain()), isDefault: (v) => v === false }
    case ScalarType.DOUBLE:
      return { wire: WireType.Bit64, write: (w, v) => w.double(finite(v)), isDefault: isPositiveZero }
    case ScalarType.FLOAT:
      return { wire: WireType.Bit32, write: (w, v) => w.float(finite(v)), isDefault: isPositiveZero }
    case ScalarType.INT32:
      return { wire: WireType.Varint, write: (w, v) => w.int32(integer(v, INT32)), isDefault: isZero }
    case ScalarType.SINT32:
      return { wire: WireType.Varint, write: (w, v) => w.sint32(integer(v, INT32)), isDefault: isZero }
    case ScalarType.SFIXED32:
      return { wire: WireType.Bit32, write: (w, v) => w.sfixed32(integer(v, INT32)), isDefault: isZero }
    case ScalarType.UINT32:
      return { wire: WireType.Varint, write: (w, v) => w.uint32(integer(v, UINT32)), isDefault: isZero }
    case ScalarType.FIXED32:
      return { wire: WireType.Bit32, write: (w, v) => w.fixed32(integer(v, UINT32)), isDefault: isZero }
    case ScalarType.INT64:
      return { wire: WireType.Varint, write: (w, v) => w.int64(int64Text(v)), isDefault: isZero }
    case ScalarType.SINT64:
      return { wire: WireType.Varint, write: (w, v) => w.sint64(int64Text(v)), isDefault: isZero }
    case ScalarType.SFIXED64:
      return { wire: WireType.Bit64, write: (w, v) => w.sfixed64(int64Text(v)), isDefault: isZero }
    // Unsigned 64-bit: a minus sign is the library's to refuse.
    case ScalarType.UINT64:
      return { wire: WireType.Varint, write: (w, v) => w.uint64(unsigned(int64Text(v))), isDefault: isZero }
    case ScalarType.FIXED64:
      return { wire: WireType.Bit64, write: (w, v) => w.fixed64(unsigned(int64Text(v))), isDefault: isZero }
  }
}

const unsigned = (text: string): string => (text.startsWith("-") ? notPlain() : text)

/** An enum value as its number: by name, or the number itself. */
const enumOf = (
  desc: DescEnum
): { readonly write: (writer: Bytes, value: unknown) => void; readonly isDefault: (value: unknown) => boolean } => {
  const byName = new Map(desc.values.map((value) => [value.name, value.number]))
  const numberOf = (value: unknown) => typeof value === "string" ? byName.get(value) ?? notPlain() : integer(value, INT32)
  return { write: (w, v) => w.int32(numberOf(v)), isDefault: (v) => numberOf(v) === 0 }
}

const writeMessageValue = (field: DescField & { readonly message: DescMessage }): WriteValue => (w, v, depth) => {
  const start = w.open(field.number)
  planOf(field.message)(w, v, depth + 1)
  w.close(start)
}

/** How one field is written; undefined for the kinds left to the library. */
const fieldPlan = (field: DescField): FieldPlan | undefined => {
  const oneof = field.oneof?.name
  // Set means written, default or not: a oneof's member, proto3 `optional`, a message.
  const explicit = oneof !== undefined || field.presence === 1
  const withPresence = (isDefault: (value: unknown) => boolean, write: WriteValue): WriteValue =>
    explicit ? write : (w, v, depth) => {
      if (!isDefault(v)) write(w, v, depth)
    }
  switch (field.fieldKind) {
    case "scalar": {
      const scalar = scalarOf(field.scalar)
      return {
        jsonName: field.jsonName,
        oneof,
        write: withPresence(scalar.isDefault, (w, v) => scalar.write(w.tag(field.number, scalar.wire), v))
      }
    }
    case "enum": {
      const values = enumOf(field.enum)
      return {
        jsonName: field.jsonName,
        oneof,
        write: withPresence(values.isDefault, (w, v) => values.write(w.tag(field.number, WireType.Varint), v))
      }
    }
    case "message":
      return field.delimitedEncoding ? undefined : { jsonName: field.jsonName, oneof, write: writeMessageValue(field) }
    case "list": {
      const write = listWriter(field)
      return write === undefined ? undefined : { jsonName: field.jsonName, oneof, write }
    }
    case "map": {
      const write = mapWriter(field)
      return write === undefined ? undefined : { jsonName: field.jsonName, oneof, write }
    }
  }
}

const listWriter = (field: DescField & { readonly fieldKind: "list" }): WriteValue | undefined => {
  const items = (value: unknown): ReadonlyArray<unknown> => (Array.isArray(value) ? value : notPlain())
  if (field.listKind === "message") {
    if (field.delimitedEncoding) return undefined
    const plan = planOf(field.message)
    return (w, v, depth) => {
      for (const item of items(v)) {
        const start = w.open(field.number)
        plan(w, item, depth + 1)
        w.close(start)
      }
    }
  }
  const item = field.listKind === "enum"
    ? { wire: WireType.Varint, write: enumOf(field.enum).write }
    : scalarOf(field.scalar)
  if (field.packed) {
    return (w, v) => {
      const list = items(v)
      if (list.length === 0) return
      const start = w.open(field.number)
      for (const value of list) item.write(w, value)
      w.close(start)
    }
  }
  return (w, v) => {
    for (const value of items(v)) item.write(w.tag(field.number, item.wire), value)
  }
}

/** Maps with string keys (all A2A has); entries in the JSON object's order, as the library writes them. */
const mapWriter = (field: DescField & { readonly fieldKind: "map" }): WriteValue | undefined => {
  if (field.mapKey !== ScalarType.STRING) return undefined
  let writeValue: WriteValue
  switch (field.mapKind) {
    case "message": {
      const plan = planOf(field.message)
      writeValue = (w, v, depth) => {
        const start = w.open(2)
        plan(w, v, depth + 1)
        w.close(start)
      }
      break
    }
    case "enum": {
      const values = enumOf(field.enum)
      writeValue = (w, v) => values.write(w.tag(2, WireType.Varint), v)
      break
    }
    case "scalar": {
      const scalar = scalarOf(field.scalar)
      writeValue = (w, v) => scalar.write(w.tag(2, scalar.wire), v)
      break
    }
  }
  return (w, v, depth) => {
    if (!isObject(v)) notPlain()
    const entries = v as Json
    for (const key in entries) {
      const value = entries[key]
      if (value === undefined || value === null) notPlain()
      const start = w.open(field.number)
      w.tag(1, WireType.LengthDelimited).string(text(key))
      writeValue(w, value, depth)
      w.close(start)
    }
  }
}

// ---------------------------------------------------------------------------
// Well-known types with a JSON form of their own

/** google.protobuf.Timestamp's RFC 3339 text, read as the library reads it. */
const RFC3339 = /^([0-9]{4})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]{1,9}))?(?:Z|([+-][0-9][0-9]:[0-9][0-9]))$/
const EARLIEST = Date.parse("0001-01-01T00:00:00Z")
const LATEST = Date.parse("9999-12-31T23:59:59Z")

const writeTimestamp: MessagePlan = (w, json) => {
  const match = typeof json === "string" ? RFC3339.exec(json) : null
  if (match === null) return notPlain()
  const ms = Date.parse(`${match[1]}-${match[2]}-${match[3]}T${match[4]}:${match[5]}:${match[6]}${match[8] ?? "Z"}`)
  if (Number.isNaN(ms) || ms < EARLIEST || ms > LATEST) notPlain()
  const seconds = ms / 1000
  const nanos = match[7] === undefined ? 0 : Number(match[7].padEnd(9, "0"))
  if (seconds !== 0) w.tag(1, WireType.Varint).int64Number(seconds)
  if (nanos !== 0) w.tag(2, WireType.Varint).int32(nanos)
}

/** google.protobuf.Value: null, number, string, bool, Struct (5) or ListValue (6). */
const writeValue: MessagePlan = (w, json, depth) => {
  if (depth > MAX_DEPTH) notPlain()
  switch (typeof json) {
    case "number":
      // A number past the largest double (JSON.parse reads 1e400 as Infinity) is no JSON value: it is
      // null, as the JSON doors write it and the stores keep it, never a Value no reader takes.
      if (Number.isFinite(json)) w.tag(2, WireType.Bit64).double(json)
      else w.tag(1, WireType.Varint).int32(0)
      return
    case "string":
      w.tag(3, WireType.LengthDelimited).string(json)
      return
    case "boolean":
      w.tag(4, WireType.Varint).bool(json)
      return
    case "object":
      if (json === null) {
        w.tag(1, WireType.Varint).int32(0)
        return
      }
      const start = w.open(Array.isArray(json) ? 6 : 5)
      ;(Array.isArray(json) ? writeListValue : writeStruct)(w, json, depth + 1)
      w.close(start)
      return
    default:
      notPlain()
  }
}

/** google.protobuf.Struct: `map<string, Value> fields = 1`. */
const writeStruct: MessagePlan = (w, json, depth) => {
  if (!isObject(json)) return notPlain()
  for (const key in json) {
    const value = json[key]
    if (value === undefined) notPlain()
    const entry = w.open(1)
    w.tag(1, WireType.LengthDelimited).string(key)
    const start = w.open(2)
    writeValue(w, value, depth + 1)
    w.close(start)
    w.close(entry)
  }
}

/** google.protobuf.ListValue: `repeated Value values = 1`. */
const writeListValue: MessagePlan = (w, json, depth) => {
  if (!Array.isArray(json)) return notPlain()
  for (const value of json as ReadonlyArray<unknown>) {
    const start = w.open(1)
    writeValue(w, value, depth + 1)
    w.close(start)
  }
}

const WELL_KNOWN: Readonly<Record<string, MessagePlan>> = {
  "google.protobuf.Timestamp": writeTimestamp,
  "google.protobuf.Struct": writeStruct,
  "google.protobuf.Value": writeValue,
  "google.protobuf.ListValue": writeListValue
}

// ---------------------------------------------------------------------------

/** The writer of one message type's JSON, made on first use (a field's plan is made on its first write: types nest and recurse). */
const planOf = (desc: DescMessage): MessagePlan => {
  const known = plans.get(desc.typeName)
  if (known !== undefined) return known
  let plan: MessagePlan
  if (Object.hasOwn(WELL_KNOWN, desc.typeName)) {
    plan = WELL_KNOWN[desc.typeName]!
  } else if (desc.typeName.startsWith("google.protobuf.") && desc.fields.length > 0) {
    // Any, Duration, FieldMask, the wrappers: their JSON is the library's to read.
    plan = notPlain
  } else {
    let fields: ReadonlyArray<FieldPlan> | undefined
    plan = (w, json, depth) => {
      if (depth > MAX_DEPTH || !isObject(json)) notPlain()
      // In field-number order, as the library writes them.
      const planned = fields ??= [...desc.fields].sort((a, b) => a.number - b.number).map((field) =>
        fieldPlan(field) ?? { jsonName: field.jsonName, oneof: undefined, write: notPlain }
      )
      writeFields(w, planned, json as Json, depth)
    }
  }
  plans.set(desc.typeName, plan)
  return plan
}

const writeFields = (w: Bytes, fields: ReadonlyArray<FieldPlan>, json: Json, depth: number) => {
  let given = 0
  let oneofs: Set<string> | undefined
  for (const field of fields) {
    const value = json[field.jsonName]
    if (value === undefined) continue
    if (value === null) notPlain()
    given++
    if (field.oneof !== undefined) {
      oneofs ??= new Set()
      if (oneofs.has(field.oneof)) notPlain()
      oneofs.add(field.oneof)
    }
    field.write(w, value, depth)
  }
  // A key that names no field (a proto name, an unknown field) is the library's to read.
  if (keyCount(json) !== given) notPlain()
}

const keyCount = (json: Json): number => {
  let count = 0
  for (const key in json) if (Object.hasOwn(json, key)) count++
  return count
}

/**
 * `json` as the bytes of a `schema` message, or undefined when it is not in the plain shapes above
 * (or a value the writer refuses, a float out of range say: the library then says why).
 */
export const protoJsonToBinary = (schema: DescMessage, json: unknown): Uint8Array | undefined => {
  const writer = new Bytes()
  try {
    planOf(schema)(writer, json, 0)
    return writer.finish()
  } catch {
    return undefined
  }
}
