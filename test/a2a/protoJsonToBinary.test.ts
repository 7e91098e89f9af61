// The direct ProtoJSON writer (src/a2a/protoJsonToBinary.ts) against the library it stands in
// for (@bufbuild/protobuf's fromJson + toBinary): random ProtoJSON of every message type of both
// A2A generations, made from the descriptors, must come out as the same bytes; whatever the
// writer leaves (undefined) must be what the library reads differently or refuses.
import { create, createFileRegistry, type DescMessage, fromJson, type JsonValue, toBinary } from "@bufbuild/protobuf"
import { FieldDescriptorProto_Label, FieldDescriptorProto_Type, FileDescriptorProtoSchema } from "@bufbuild/protobuf/wkt"
import { describe, expect, it } from "vitest"
import { protoJsonToBinary } from "../../src/a2a/protoJsonToBinary.js"
import { file_lf_a2a_v1_a2a as v1File } from "../../src/a2a/schemas/a2aV1_pb.js"
import { messageJson, random, SCHEMAS, withEdges } from "../helpers/protoJsonSamples.js"

const library = (schema: DescMessage, json: unknown): Uint8Array | undefined => {
  try {
    return toBinary(schema, fromJson(schema, json as JsonValue, { ignoreUnknownFields: true }))
  } catch {
    return undefined
  }
}

describe("protoJsonToBinary", () => {
  it("writes the library's bytes for random ProtoJSON of every A2A message type, both generations", () => {
    const next = random(33)
    let direct = 0
    for (const schema of SCHEMAS) {
      for (let round = 0; round < 25; round++) {
        const json = messageJson(schema, next, 0)
        const fast = protoJsonToBinary(schema, json)
        const reference = library(schema, json)
        if (fast === undefined) continue
        direct++
        expect({ type: schema.typeName, json, bytes: Buffer.from(fast).toString("hex") }).toEqual({
          type: schema.typeName,
          json,
          bytes: Buffer.from(reference ?? []).toString("hex")
        })
      }
    }
    // Nearly all of them take the direct way (those with a oneof member given by number, say, may not).
    expect(direct).toBeGreaterThan(SCHEMAS.length * 25 * 0.9)
  })

  it("writes the library's bytes for random ProtoJSON with values at the edges, or leaves them to the library", () => {
    const next = random(35)
    let direct = 0
    for (const schema of SCHEMAS) {
      for (let round = 0; round < 20; round++) {
        const json = withEdges(messageJson(schema, next, 0), next)
        const fast = protoJsonToBinary(schema, json)
        if (fast === undefined) continue
        direct++
        const reference = library(schema, json)
        // The JSON cut short in the message (its long texts would drown it): the seed replays it whole.
        const shown = JSON.stringify(json).substring(0, 1_000)
        expect({ type: schema.typeName, json: shown, same: reference !== undefined && Buffer.compare(fast, reference) === 0 })
          .toEqual({ type: schema.typeName, json: shown, same: true })
      }
    }
    expect(direct).toBeGreaterThan(SCHEMAS.length * 20 * 0.4)
  })

  it("leaves to the library what is not plain: unknown keys, proto names, null, wrong types, Any", () => {
    const [sendResponse] = v1File.messages.filter((m) => m.name === "SendMessageResponse")
    const task = { id: "t", contextId: "c", status: { state: "TASK_STATE_COMPLETED" } }
    expect(protoJsonToBinary(sendResponse!, { task })).toBeDefined()
    for (
      const json of [
        { task: { ...task, unknownField: 1 } },
        { task: { ...task, context_id: "c" } },
        { task: { ...task, metadata: null } },
        { task: { ...task, id: 5 } },
        { task: { ...task, status: { state: "NO_SUCH_STATE" } } },
        { task: { ...task, status: { state: "TASK_STATE_COMPLETED", timestamp: "yesterday" } } },
        { task, message: { messageId: "m", role: "ROLE_USER" } },
        [task],
        null
      ]
    ) {
      expect(protoJsonToBinary(sendResponse!, json)).toBeUndefined()
    }
  })

  it("leaves a string field with a lone surrogate to the library, which refuses it; a Struct's strings take U+FFFD in both", () => {
    const part = messageOf("Part")
    const scopes = messageOf("ClientCredentialsOAuthFlow")
    for (
      const [schema, json] of [
        [part, { text: "\ud800" }],
        [part, { text: "a\udc00b" }],
        [messageOf("Message"), { messageId: "m", referenceTaskIds: ["t", "\ud83d"] }],
        [scopes, { scopes: { "\ud800": "read" } }],
        [scopes, { scopes: { read: "\udfff" } }]
      ] as const
    ) {
      expect(protoJsonToBinary(schema, json)).toBeUndefined()
      expect(library(schema, json)).toBeUndefined()
    }
    // A pair is one character (4 bytes of UTF-8); in a Struct or Value the library writes U+FFFD too.
    for (const json of [{ text: "\ud83d\ude00" }, { data: "\ud800" }, { metadata: { "\udc00": ["x\ud800"] } }]) {
      const fast = protoJsonToBinary(part, json)
      expect(fast).toBeDefined()
      expect(Buffer.from(fast!).toString("hex")).toBe(Buffer.from(library(part, json)!).toString("hex"))
    }
  })

  it("writes a number no double holds (Infinity, NaN) in a Struct or Value as null, as the JSON doors write it", () => {
    const part = messageOf("Part")
    for (
      const [json, asNull] of [
        [{ data: Number.POSITIVE_INFINITY }, { data: null }],
        [{ text: "t", metadata: { x: Number.NEGATIVE_INFINITY, y: [Number.NaN, 1] } }, { text: "t", metadata: { x: null, y: [null, 1] } }]
      ] as const
    ) {
      const fast = protoJsonToBinary(part, json)
      expect(fast).toBeDefined()
      expect(Buffer.from(fast!).toString("hex")).toBe(Buffer.from(library(part, asNull)!).toString("hex"))
    }
  })

  it("reads base64 as the library does: a last group of one character and padding past the last group are its own", () => {
    const part = messageOf("Part")
    // Buffer took "A" as no byte and "QUJDR" as "ABC"; the library refuses both. "QUJD==" it reads as "AB".
    for (const raw of ["A", "QUJDR", "QUJD==", "QUJD=", "QUI==", "==", "=", "QUJDRA==="]) {
      expect(protoJsonToBinary(part, { raw })).toBeUndefined()
    }
    expect(library(part, { raw: "A" })).toBeUndefined()
    for (const raw of ["", "QQ", "QQ==", "QUI", "QUI=", "QUJD", "QUJDRA", "-_-_", "+/+/", "_w==", "_w"]) {
      const fast = protoJsonToBinary(part, { raw })
      expect(fast).toBeDefined()
      expect(Buffer.from(fast!).toString("hex")).toBe(Buffer.from(library(part, { raw })!).toString("hex"))
    }
  })

  it("keeps proto3's defaults as the library does: -0 of a double or float written, \"-0\" of a 64-bit integer its own", () => {
    // No A2A message has such a field without presence (only Struct's Values, a oneof): a message of its own.
    const file = create(FileDescriptorProtoSchema, {
      name: "implicit.proto",
      package: "test",
      syntax: "proto3",
      messageType: [{
        name: "Implicit",
        field: [
          FieldDescriptorProto_Type.DOUBLE,
          FieldDescriptorProto_Type.FLOAT,
          FieldDescriptorProto_Type.INT64,
          FieldDescriptorProto_Type.SINT64,
          FieldDescriptorProto_Type.SFIXED64
        ]
          .map((type, index) => ({
            name: `f${index + 1}`,
            jsonName: `f${index + 1}`,
            number: index + 1,
            type,
            label: FieldDescriptorProto_Label.OPTIONAL
          }))
      }]
    })
    const implicit = createFileRegistry(file, () => undefined).getMessage("test.Implicit")!
    for (const json of [{ f1: -0 }, { f2: -0 }, { f1: 0, f2: 0 }, { f3: 0, f4: "0", f5: -0 }]) {
      const fast = protoJsonToBinary(implicit, json)
      expect(fast).toBeDefined()
      expect(Buffer.from(fast!).toString("hex")).toBe(Buffer.from(library(implicit, json)!).toString("hex"))
    }
    expect(Buffer.from(protoJsonToBinary(implicit, { f1: -0 })!).toString("hex")).toBe("090000000000000080")
    for (const json of [{ f3: "-0" }, { f4: "-0" }, { f5: "-0" }]) {
      expect(protoJsonToBinary(implicit, json)).toBeUndefined()
      expect(library(implicit, json)).toHaveLength(0)
    }
  })
})

const messageOf = (name: string) => v1File.messages.find((message) => message.name === name)!
