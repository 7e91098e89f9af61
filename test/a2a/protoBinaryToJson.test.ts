// The direct protobuf reader (src/a2a/protoBinaryToJson.ts) against the library it stands in for
// (@bufbuild/protobuf's fromBinary + toJson): the bytes of random messages of every A2A message
// type, as written and then mangled, must read as the same JSON; whatever the reader leaves
// (undefined) the library reads differently or refuses, and the gRPC codec then says what it says.
import { create, createFileRegistry, type DescMessage, fromBinary, fromJson, type JsonValue, toBinary, toJson } from "@bufbuild/protobuf"
import { BinaryWriter, WireType } from "@bufbuild/protobuf/wire"
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema, ValueSchema } from "@bufbuild/protobuf/wkt"
import { Either } from "effect"
import { describe, expect, it } from "vitest"
import { grpcService } from "../../src/a2a/grpcCodec.js"
import { protoBinaryToJson } from "../../src/a2a/protoBinaryToJson.js"
import { A2AService as A2AServiceV03 } from "../../src/a2a/schemas/a2aV03_pb.js"
import { A2AService as A2AServiceV1, file_lf_a2a_v1_a2a as v1File } from "../../src/a2a/schemas/a2aV1_pb.js"
import { messageJson, random, SCHEMAS, withEdges } from "../helpers/protoJsonSamples.js"

/** The gRPC codec's (grpcCodec.ts). */
const RECURSION_LIMIT = 512

/** What the library reads: the JSON, or its error's text. */
const library = (schema: DescMessage, bytes: Uint8Array): Either.Either<JsonValue, string> =>
  Either.try({
    try: () => toJson(schema, fromBinary(schema, bytes, { readUnknownFields: false, recursionLimit: RECURSION_LIMIT })),
    catch: (error) => (error as Error).message
  })

const bytesOf = (schema: DescMessage, json: unknown): Uint8Array | undefined => {
  try {
    return toBinary(schema, fromJson(schema, json as JsonValue, { ignoreUnknownFields: true }))
  } catch {
    return undefined
  }
}

/** The reader's answer is the library's, or it leaves the bytes to the library; says which. */
const expectSameAsLibrary = (schema: DescMessage, bytes: Uint8Array): "direct" | "library" => {
  const fast = protoBinaryToJson(schema, bytes)
  const reference = library(schema, bytes)
  if (fast === undefined) return "library"
  const hex = Buffer.from(bytes).toString("hex")
  expect({ type: schema.typeName, hex, json: JSON.stringify(fast) }).toEqual({
    type: schema.typeName,
    hex,
    json: Either.isRight(reference) ? JSON.stringify(reference.right) : `library refused: ${reference.left}`
  })
  // As JSON text: the same keys in the same order; strictly equal: -0 kept apart from 0.
  expect(fast).toStrictEqual(reference.pipe(Either.getOrThrow))
  return "direct"
}

const REQUESTS = [...A2AServiceV1.methods, ...A2AServiceV03.methods].map((method) => method.input)

const written = (write: (writer: BinaryWriter) => unknown): Uint8Array => {
  const writer = new BinaryWriter()
  write(writer)
  return writer.finish()
}

/** Field `number` holding `value` length-delimited: a message's bytes, or a string. */
const delimited = (number: number, value: Uint8Array | string): Uint8Array =>
  written((w) =>
    typeof value === "string" ? w.tag(number, WireType.LengthDelimited).string(value) : w.tag(number, WireType.LengthDelimited).bytes(value)
  )

const joined = (...parts: ReadonlyArray<Uint8Array>): Uint8Array => Buffer.concat(parts)

const messageOf = (name: string) => v1File.messages.find((message) => message.name === name)!

describe("protoBinaryToJson", () => {
  it("reads the library's JSON from random messages of every A2A message type, both generations", () => {
    const next = random(33)
    let direct = 0
    let total = 0
    for (const schema of SCHEMAS) {
      for (let round = 0; round < 25; round++) {
        const bytes = bytesOf(schema, messageJson(schema, next, 0))
        if (bytes === undefined) continue
        total++
        if (expectSameAsLibrary(schema, bytes) === "direct") direct++
      }
    }
    expect(direct).toBe(total)
  })

  it("reads the library's JSON from random messages with values at the edges", () => {
    const next = random(35)
    let direct = 0
    for (const schema of SCHEMAS) {
      for (let round = 0; round < 15; round++) {
        const bytes = bytesOf(schema, withEdges(messageJson(schema, next, 0), next))
        if (bytes !== undefined && expectSameAsLibrary(schema, bytes) === "direct") direct++
      }
    }
    expect(direct).toBeGreaterThan(SCHEMAS.length * 15 * 0.3)
  })

  it("agrees with the library on every request type's bytes mangled: flipped, cut, repeated, with unknown fields", () => {
    const next = random(34)
    const counts = { direct: 0, library: 0 }
    for (const schema of REQUESTS) {
      for (let round = 0; round < 40; round++) {
        const bytes = bytesOf(schema, messageJson(schema, next, 0))
        if (bytes === undefined || bytes.length === 0) continue
        const at = Math.floor(next() * bytes.length)
        const flipped = Uint8Array.from(bytes)
        flipped[at] = Math.floor(next() * 256)
        const unknown = written((w) => {
          w.tag(1000, WireType.Varint).int64(-1n)
          w.tag(1001, WireType.Bit64).double(1.5)
          w.tag(1002, WireType.Bit32).float(2)
          w.tag(1003, WireType.LengthDelimited).string("ignored")
        })
        for (
          const mangled of [
            flipped,
            bytes.subarray(0, at),
            Buffer.concat([bytes, bytes]), // singular fields again: last one wins; messages merge
            Buffer.concat([unknown, bytes, unknown])
          ]
        ) {
          counts[expectSameAsLibrary(schema, mangled)]++
        }
      }
    }
    expect(counts.direct).toBeGreaterThan(counts.library)
  })

  it("skips unknown fields, takes the last of a repeated singular scalar, and an unknown enum number as the number", () => {
    const bytes = written((w) => {
      w.tag(1, WireType.LengthDelimited).string("first")
      w.tag(99, WireType.LengthDelimited).bytes(Uint8Array.of(1, 2, 3))
      w.tag(4, WireType.Varint).int32(42) // role: no such value
      w.tag(98, WireType.Varint).uint64(2n ** 64n - 1n)
      w.tag(1, WireType.LengthDelimited).string("last")
      w.tag(2, WireType.LengthDelimited).string("context")
      w.tag(2, WireType.LengthDelimited).string("") // the default again: not written
    })
    expect(protoBinaryToJson(messageOf("Message"), bytes)).toStrictEqual({ messageId: "last", role: 42 })
    expectSameAsLibrary(messageOf("Message"), bytes)
  })

  it("writes bytes as padded standard base64, a oneof member and Timestamps as the library does", () => {
    const part = messageOf("Part")
    for (const raw of [[], [0xfb], [0xfb, 0xff], [0xfb, 0xff, 0xbf], [0, 0, 0, 0]]) {
      const bytes = delimited(2, Uint8Array.from(raw))
      expect(expectSameAsLibrary(part, bytes)).toBe("direct")
    }
    // The last member of a oneof wins.
    const both = joined(delimited(1, "text"), delimited(3, "u"))
    expect(protoBinaryToJson(part, both)).toStrictEqual({ url: "u" })
    const status = messageOf("TaskStatus")
    for (const nanos of [0, 1, 1_000, 1_000_000, 123_000_000, 123_456_000, 123_456_789, 999_999_999]) {
      for (const seconds of [0n, 1_700_000_000n, -62_135_596_800n, 253_402_300_799n]) {
        const bytes = delimited(3, written((w) => w.tag(1, WireType.Varint).int64(seconds).tag(2, WireType.Varint).int32(nanos)))
        expect(expectSameAsLibrary(status, bytes)).toBe("direct")
      }
    }
  })

  it("reads every scalar type, packed and unpacked, NaN and the infinities as the library writes them", () => {
    const scalars = scalarsMessage()
    const samples = [0, -0, 1, -1, 1.5, 2 ** 31 - 1, -(2 ** 31), 2 ** 40, NaN, Infinity, -Infinity]
    for (const [index, type] of SCALAR_TYPES.entries()) {
      const [one, many, wire] = [index + 1, 100 + index + 1, wireOf(type)]
      for (const value of samples) {
        const single = written((w) => writeScalar(w.tag(one, wire), type, value))
        const unpacked = written((w) => writeScalar(writeScalar(w.tag(many, wire), type, value).tag(many, wire), type, 7))
        const packed = written((w) => writeScalar(writeScalar(w.tag(many, WireType.LengthDelimited).fork(), type, value), type, 7).join())
        for (const bytes of [single, unpacked, packed]) expect(expectSameAsLibrary(scalars, bytes)).toBe("direct")
      }
    }
  })

  it("leaves to the library what toJson refuses or reads otherwise, and the codec keeps the library's error text", () => {
    const send = grpcService("1.0").methods["SendMessage"]!.request
    const sendSchema = A2AServiceV1.method.sendMessage.input
    const task = messageOf("Task")
    // Task.metadata (6): a Struct of one entry.
    const metadata = (key: string, value: Uint8Array) => delimited(6, delimited(1, joined(delimited(1, key), delimited(2, value))))
    const timestamp = (write: (w: BinaryWriter) => unknown) => delimited(3, written(write))
    const cases: ReadonlyArray<readonly [DescMessage, Uint8Array]> = [
      // A message field given with the wrong wire type; a string field as a varint.
      [sendSchema, written((w) => w.tag(2, WireType.Varint).int32(5))],
      [sendSchema, written((w) => w.tag(1, WireType.Varint).int32(5))],
      // A length past the end; a varint that never ends; a group.
      [sendSchema, Uint8Array.of(0x12, 0x05, 0x0a, 0x01)],
      [sendSchema, Uint8Array.of(0x0a, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)],
      [sendSchema, written((w) => w.tag(50, WireType.StartGroup).tag(50, WireType.EndGroup))],
      // Invalid UTF-8 in a string: cut, a surrogate, overlong, past U+10FFFF.
      [sendSchema, delimited(1, Uint8Array.of(0xc3, 0x28))],
      [sendSchema, delimited(1, Uint8Array.of(0x61, 0xed, 0xa0, 0x80))],
      [sendSchema, delimited(1, Uint8Array.of(0xc0, 0x80))],
      [sendSchema, delimited(1, Uint8Array.of(0xf4, 0x90, 0x80, 0x80))],
      // A byte order mark, which the library's TextDecoder drops.
      [messageOf("Message"), delimited(1, Uint8Array.of(0xef, 0xbb, 0xbf, 0x61))],
      // A Value with no kind, a NaN Value, a Timestamp out of range or with negative nanos.
      [task, metadata("a", new Uint8Array())],
      [task, metadata("a", written((w) => w.tag(2, WireType.Bit64).double(NaN)))],
      [task, metadata("__proto__", delimited(3, "x"))],
      [messageOf("TaskStatus"), timestamp((w) => w.tag(1, WireType.Varint).int64(-62_135_596_801n))],
      [messageOf("TaskStatus"), timestamp((w) => w.tag(2, WireType.Varint).int32(-1))],
      // A message field given twice (Value.struct_value): merged by the library.
      [task, metadata("a", joined(delimited(5, new Uint8Array()), delimited(5, new Uint8Array())))]
    ]
    for (const [schema, bytes] of cases) {
      expectSameAsLibrary(schema, bytes)
    }
    for (const [schema, bytes] of cases.slice(0, 9)) {
      // The library reads some of these (a string field's varint as a length), refuses others.
      expect(protoBinaryToJson(schema, bytes)).toBeUndefined()
      expect(send.toJson(bytes)).toStrictEqual(library(schema, bytes))
    }
  })

  it("leaves nesting past its depth to the library, which refuses it past the codec's limit", () => {
    const nested = (levels: number) => {
      // Value{list_value: ListValue{values: [Value{...}]}}: two levels each.
      let value = delimited(3, "deep")
      for (let level = 0; level < levels; level++) value = delimited(6, delimited(1, value))
      return value
    }
    expect(expectSameAsLibrary(ValueSchema, nested(40))).toBe("direct")
    expect(expectSameAsLibrary(ValueSchema, nested(200))).toBe("library")
    const task = grpcService("1.0").methods["GetTask"]!.response
    // Task.metadata = Struct{"a": Value{...}}, 600 levels and more.
    const deep = delimited(6, delimited(1, joined(delimited(1, "a"), delimited(2, nested(300)))))
    const refused = task.toJson(deep)
    expect(Either.isLeft(refused) && refused.left).toMatch(/maximum recursion depth of 512/)
  })
})

/** The scalar types of the test message `Scalars`: field i + 1 singular, 100 + i + 1 repeated (packed by proto3). */
const SCALAR_TYPES = [
  FieldDescriptorProto_Type.DOUBLE,
  FieldDescriptorProto_Type.FLOAT,
  FieldDescriptorProto_Type.INT64,
  FieldDescriptorProto_Type.UINT64,
  FieldDescriptorProto_Type.INT32,
  FieldDescriptorProto_Type.FIXED64,
  FieldDescriptorProto_Type.FIXED32,
  FieldDescriptorProto_Type.BOOL,
  FieldDescriptorProto_Type.UINT32,
  FieldDescriptorProto_Type.SFIXED32,
  FieldDescriptorProto_Type.SFIXED64,
  FieldDescriptorProto_Type.SINT32,
  FieldDescriptorProto_Type.SINT64
]

const scalarsMessage = (): DescMessage => {
  const field = (type: FieldDescriptorProto_Type, number: number, repeated: boolean) => ({
    name: `${repeated ? "many" : "one"}_${FieldDescriptorProto_Type[type].toLowerCase()}`,
    jsonName: `${repeated ? "many" : "one"}${FieldDescriptorProto_Type[type]}`,
    number,
    type,
    label: repeated ? FieldDescriptorProto_Label.REPEATED : FieldDescriptorProto_Label.OPTIONAL
  })
  const file = create(FileDescriptorProtoSchema, {
    name: "scalars.proto",
    package: "test",
    syntax: "proto3",
    messageType: [{
      name: "Scalars",
      field: SCALAR_TYPES.flatMap((type, index) => [field(type, index + 1, false), field(type, 100 + index + 1, true)])
    }]
  })
  return createFileRegistry(file, () => undefined).getMessage("test.Scalars")!
}

const wireOf = (type: FieldDescriptorProto_Type): WireType =>
  [FieldDescriptorProto_Type.DOUBLE, FieldDescriptorProto_Type.FIXED64, FieldDescriptorProto_Type.SFIXED64].includes(type)
    ? WireType.Bit64
    : [FieldDescriptorProto_Type.FLOAT, FieldDescriptorProto_Type.FIXED32, FieldDescriptorProto_Type.SFIXED32].includes(type)
    ? WireType.Bit32
    : WireType.Varint

/** A number written as a `type` value (without its tag), cut to the type's range. */
const writeScalar = (w: BinaryWriter, type: FieldDescriptorProto_Type, value: number): BinaryWriter => {
  const integer = Number.isFinite(value) ? Math.trunc(value) : 0
  const n = BigInt(integer)
  switch (type) {
    case FieldDescriptorProto_Type.DOUBLE:
      return w.double(value)
    case FieldDescriptorProto_Type.FLOAT:
      return w.float(Math.abs(value) > 3e38 && Number.isFinite(value) ? 1 : value)
    case FieldDescriptorProto_Type.FIXED32:
      return w.fixed32(Math.abs(integer) % 2 ** 32)
    case FieldDescriptorProto_Type.SFIXED32:
      return w.sfixed32(integer | 0)
    case FieldDescriptorProto_Type.FIXED64:
      return w.fixed64(n < 0n ? -n : n)
    case FieldDescriptorProto_Type.SFIXED64:
      return w.sfixed64(n)
    case FieldDescriptorProto_Type.SINT32:
      return w.sint32(integer | 0)
    case FieldDescriptorProto_Type.SINT64:
      return w.sint64(n)
    case FieldDescriptorProto_Type.UINT32:
      return w.uint32(Math.abs(integer) % 2 ** 32)
    case FieldDescriptorProto_Type.INT32:
      return w.int32(integer | 0)
    default: // int64, uint64 (-1 as 2^64 - 1) and bool (any varint: not 0 is true)
      return w.int64(n)
  }
}
