// Random ProtoJSON of any A2A message type, made from the descriptors (seeded, so a failure
// replays): what the direct protobuf codecs (src/a2a/protoJsonToBinary.ts, protoBinaryToJson.ts)
// are held to the library with.
import type { DescField, DescMessage } from "@bufbuild/protobuf"
import { file_a2a_v1_a2a as v03File } from "../../src/a2a/schemas/a2aV03_pb.js"
import { file_lf_a2a_v1_a2a as v1File } from "../../src/a2a/schemas/a2aV1_pb.js"

/** A small seeded generator (mulberry32), so a failure replays. */
export const random = (seed: number) => () => {
  seed = (seed + 0x6d2b79f5) | 0
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed)
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296
}

const TEXTS = ["", "hello", "é ünïcode ✓", "emoji 🙂 and \u0000 nul", "x".repeat(300), "tasks/abc", "0"]

const jsonValue = (next: () => number, depth: number): unknown => {
  const kind = Math.floor(next() * (depth > 2 ? 4 : 6))
  switch (kind) {
    case 0:
      return null
    case 1:
      return Math.round((next() - 0.5) * 1e6) / 100
    case 2:
      return TEXTS[Math.floor(next() * TEXTS.length)]
    case 3:
      return next() < 0.5
    case 4:
      return Array.from({ length: Math.floor(next() * 3) }, () => jsonValue(next, depth + 1))
    default:
      return Object.fromEntries(Array.from({ length: Math.floor(next() * 3) }, (_, i) => [`k${i}`, jsonValue(next, depth + 1)]))
  }
}

const timestamp = (next: () => number) => {
  const ms = Math.floor(next() * 4e12)
  const text = new Date(ms).toISOString()
  // With 0, 3 or 9 fraction digits, and an offset now and then.
  const fraction = [".000", "", ".123456789"][Math.floor(next() * 3)]!
  return next() < 0.8 ? text.replace(/\.\d+Z$/, `${fraction}Z`) : text.replace(/\.\d+Z$/, "+02:00")
}

const scalar = (field: DescField, next: () => number): unknown => {
  const type = field.fieldKind === "scalar" || field.fieldKind === "list" || field.fieldKind === "map" ? field.scalar : undefined
  switch (type) {
    case 9: // string
      return TEXTS[Math.floor(next() * TEXTS.length)]
    case 8: // bool
      return next() < 0.5
    case 12: // bytes
      return Buffer.from(Array.from({ length: Math.floor(next() * 8) }, () => Math.floor(next() * 256))).toString("base64")
    case 1: // double
    case 2: // float
      return next() < 0.2 ? 0 : Math.round((next() - 0.5) * 1e4) / 16
    case 3: // int64
    case 4: // uint64
    case 18: // sint64
      return next() < 0.5 ? String(Math.floor(next() * 1e15)) : Math.floor(next() * 1000)
    default: // the 32-bit integers
      return next() < 0.2 ? 0 : Math.floor(next() * 100_000) * (type === 13 || type === 7 ? 1 : next() < 0.3 ? -1 : 1)
  }
}

export const messageJson = (desc: DescMessage, next: () => number, depth: number): unknown => {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return timestamp(next)
    case "google.protobuf.Struct":
      return Object.fromEntries(Array.from({ length: Math.floor(next() * 3) }, (_, i) => [`key${i}`, jsonValue(next, depth)]))
    case "google.protobuf.Value":
      return jsonValue(next, depth) ?? 1
    case "google.protobuf.ListValue":
      return [jsonValue(next, depth)]
  }
  const json: Record<string, unknown> = {}
  const chosenOneofs = new Set<string>()
  for (const field of desc.fields) {
    if (next() < 0.35 || depth > 4) continue
    if (field.oneof !== undefined) {
      if (chosenOneofs.has(field.oneof.name)) continue
      chosenOneofs.add(field.oneof.name)
    }
    const one = (): unknown => {
      if (field.fieldKind === "message" || (field.fieldKind === "list" && field.listKind === "message")) {
        return messageJson(field.message!, next, depth + 1)
      }
      if (field.fieldKind === "map" && field.mapKind === "message") return messageJson(field.message, next, depth + 1)
      const values = field.fieldKind === "enum" || (field.fieldKind === "list" && field.listKind === "enum") ||
          (field.fieldKind === "map" && field.mapKind === "enum")
        ? field.enum!.values
        : undefined
      if (values !== undefined) {
        const value = values[Math.floor(next() * values.length)]!
        return next() < 0.8 ? value.name : value.number
      }
      return scalar(field, next)
    }
    json[field.jsonName] = field.fieldKind === "list"
      ? Array.from({ length: Math.floor(next() * 3) }, one)
      : field.fieldKind === "map"
      ? Object.fromEntries(Array.from({ length: Math.floor(next() * 3) }, (_, i) => [`m${i}`, one()]))
      : one()
  }
  return json
}

const withNested = (messages: ReadonlyArray<DescMessage>): ReadonlyArray<DescMessage> =>
  messages.flatMap((message) => [message, ...withNested(message.nestedMessages)])

/** Every message type of both A2A generations, nested ones included. */
export const SCHEMAS = withNested([...v1File.messages, ...v03File.messages])

/**
 * Values at the edges, for the leaves of random ProtoJSON: lone surrogates, astral characters, a
 * byte order mark, long text, base64 cut or padded past its last group, "-0", the integer limits,
 * doubles past float's range, Timestamps at the ends of theirs or with offsets and odd fractions.
 */
const EDGE_TEXTS = [
  "",
  "\ud800",
  "a\udc00b",
  "\ud83d\ude00 𝄞",
  "\ufeffbom",
  "\u0000",
  "y".repeat(20_000),
  "-0",
  "A",
  "QUJDR",
  "QUJD==",
  "QUI==",
  "QUI",
  "_-8",
  "==",
  "0001-01-01T00:00:00Z",
  "9999-12-31T23:59:59.999999999Z",
  "0001-01-01T00:59:59+01:00",
  "2020-01-01T00:00:00.5+05:30",
  "2020-02-30T00:00:00Z",
  "2020-01-01T24:00:00Z"
]
const EDGE_NUMBERS = [-0, 0.5, 2 ** 31 - 1, 2 ** 31, -(2 ** 31), 2 ** 32 - 1, 1e308, 5e-324, 2 ** 53 + 2, 99, -1]

/** `json` with some of its leaves (and now and then a key) swapped for values at the edges. */
export const withEdges = (json: unknown, next: () => number): unknown => {
  const edge = <T>(values: ReadonlyArray<T>): T => values[Math.floor(next() * values.length)]!
  if (Array.isArray(json)) return json.map((item) => withEdges(item, next))
  if (typeof json === "object" && json !== null) {
    return Object.fromEntries(
      Object.entries(json).map(([key, value]) => [next() < 0.05 ? edge(EDGE_TEXTS) : key, withEdges(value, next)])
    )
  }
  if (typeof json === "string" && next() < 0.5) return edge(EDGE_TEXTS)
  if (typeof json === "number" && next() < 0.3) return edge(EDGE_NUMBERS)
  return json
}
