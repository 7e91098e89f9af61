/** One card-generation rule for the client (cardFromWire) and the validator (validateCard). */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { cardGeneration } from "../../src/a2a/cardGeneration.js"
import { cardFromWire } from "../../src/a2a/translate.js"
import { validateCard } from "../../src/a2a/validation/cardValidation.js"
import { validV03Card, validV1Card } from "../helpers/sampleCards.js"

const REST = { url: "https://weather.example.com/a2a/rest", transport: "HTTP+JSON" }

const withoutEndpoint = (card: Record<string, unknown>): Record<string, unknown> => {
  const { url: _url, preferredTransport: _transport, protocolVersion: _version, ...rest } = card
  return rest
}

describe("cardGeneration", () => {
  it("tells the generations apart by their endpoint fields; null counts as absent", () => {
    expect(cardGeneration(validV1Card())).toBe("1.0")
    expect(cardGeneration(validV03Card())).toBe("0.3")
    expect(cardGeneration({ ...validV03Card(), supportedInterfaces: validV1Card()["supportedInterfaces"] })).toBe("hybrid")
    expect(cardGeneration({ protocolVersion: "0.3.0", supportedInterfaces: [] })).toBe("hybrid")
    expect(cardGeneration({ ...validV1Card(), url: null, preferredTransport: null })).toBe("1.0")
    expect(cardGeneration({ name: "no endpoint" })).toBe("unknown")
    expect(cardGeneration([validV1Card()])).toBe("unknown")
  })

  it.effect("a v1.0 card with a leftover additionalInterfaces is 1.0 for the client and the validator alike", () =>
    Effect.gen(function*() {
      // Before: the client called this card hybrid while the validator called it 1.0.
      const card = { ...validV1Card(), additionalInterfaces: [REST] }
      const read = yield* cardFromWire(card)
      const validation = validateCard(card)
      expect(read.generation).toBe("1.0")
      expect(validation.generation).toBe("1.0")
      expect(read.card.supportedInterfaces).toEqual(validV1Card()["supportedInterfaces"])
      expect(validation.valid).toBe(true)
      expect(validation.issues.map((issue) => [issue.code, issue.path])).toContainEqual(["migration.v03_field", "/additionalInterfaces"])
    }))

  it.effect("additionalInterfaces alone declares no generation, and the client still reaches its endpoints", () =>
    Effect.gen(function*() {
      // Before: the client called this card 0.3 while the validator called it unknown.
      const card = { ...withoutEndpoint(validV03Card()), additionalInterfaces: [REST] }
      expect(cardGeneration(card)).toBe("unknown")
      const validation = validateCard(card)
      expect(validation.generation).toBe("unknown")
      expect(validation.valid).toBe(false)
      expect(validation.issues.map((issue) => issue.code)).toContain("card.generation_unknown")
      const read = yield* cardFromWire(card)
      expect(read.generation).toBe("1.0")
      expect(read.card.supportedInterfaces).toEqual([{ url: REST.url, protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }])
    }))

  it.effect("a v0.3 card with additionalInterfaces is 0.3 for both, its endpoints in order", () =>
    Effect.gen(function*() {
      const card = { ...validV03Card(), additionalInterfaces: [REST] }
      const read = yield* cardFromWire(card)
      expect(read.generation).toBe("0.3")
      expect(validateCard(card).generation).toBe("0.3")
      expect(read.card.supportedInterfaces.map((entry) => entry.protocolBinding)).toEqual(["JSONRPC", "HTTP+JSON"])
    }))

  it.effect("a hybrid card whose supportedInterfaces is empty is read through its v0.3 url", () =>
    Effect.gen(function*() {
      const card = { ...validV03Card(), supportedInterfaces: [] }
      const read = yield* cardFromWire(card)
      expect(read.generation).toBe("hybrid")
      expect(validateCard(card).generation).toBe("hybrid")
      expect(read.card.supportedInterfaces).toEqual([
        { url: "https://weather.example.com/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "0.3" }
      ])
    }))
})
