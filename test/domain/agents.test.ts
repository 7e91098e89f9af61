/**
 * Agents by name, the pure rules: a name is a bare word and a URL has a scheme (never confused),
 * names made of cards' names (slugged, never overwriting one), and a card's summary bounded
 * whatever the card (10 000 skills, megabytes of text) and kept as the card said it, escaping left
 * to the doors.
 */
import { describe, expect, it } from "vitest"
import { cardAgentUrl, freeName, looksLikeName, slugOf, summarizeCard } from "../../src/domain/agents.js"
import { normalizeAgentUrl } from "../../src/domain/agentUrl.js"
import { CARD_SUMMARY_LIMITS } from "../../src/domain/limits.js"
import { hostileCard } from "../peers/catalogSite.js"

describe("names and URLs", () => {
  it("a name is a bare word; anything with a scheme, a slash, a colon or a space is not", () => {
    for (const name of ["local", "Research-Bot", "a", "agent.v2", "x_1", "9lives", "a".repeat(64)]) {
      expect(looksLikeName(name), name).toBe(true)
    }
    for (
      const text of [
        "http://127.0.0.1:8000",
        "localhost:8000",
        "127.0.0.1:8000",
        "./card.json",
        "a b",
        "",
        "-x",
        ".hidden",
        "a".repeat(65),
        "na\u001bme"
      ]
    ) {
      expect(looksLikeName(text), JSON.stringify(text)).toBe(false)
    }
  })

  it("no name is ever a valid agent URL, and no valid agent URL looks like a name", () => {
    for (const name of ["local", "agent.v2", "localhost"]) expect(normalizeAgentUrl(name)._tag, name).toBe("Left")
    for (const url of ["http://local", "https://agent.example/a2a", "http://127.0.0.1:8000"]) {
      expect(normalizeAgentUrl(url)._tag).toBe("Right")
      expect(looksLikeName(url)).toBe(false)
    }
  })

  it("slugs a card's name into a name, and never takes one that is taken", () => {
    expect(slugOf("Relay Agent")).toBe("relay-agent")
    expect(slugOf("  Café Réservé!  ")).toBe("cafe-reserve")
    expect(slugOf("\u001b[31m")).toBe("31m")
    expect(slugOf("✨✨")).toBe("agent")
    expect(looksLikeName(slugOf("x".repeat(500)))).toBe(true)
    const taken = new Set(["relay-agent", "relay-agent-2"])
    expect(freeName("relay-agent", (name) => taken.has(name))).toBe("relay-agent-3")
    expect(freeName("fresh", (name) => taken.has(name))).toBe("fresh")
    expect(looksLikeName(freeName("y".repeat(64), (name) => name === "y".repeat(64)))).toBe(true)
  })
})

describe("a card's summary", () => {
  it("keeps what an assistant chooses by: name, description, skills with their tags and modes (the agent's defaults when a skill names none)", () => {
    const summary = summarizeCard({
      name: "Travel",
      description: "Books trips",
      version: "1.2.0",
      defaultInputModes: ["text/plain"],
      defaultOutputModes: ["text/plain", "application/json"],
      skills: [
        { id: "flights", name: "Flights", description: "Finds flights", tags: ["travel"], inputModes: ["application/json"] },
        { id: "hotels", name: "Hotels", description: "Finds hotels", tags: [] }
      ]
    })
    expect(summary).toEqual({
      name: "Travel",
      description: "Books trips",
      version: "1.2.0",
      default_input_modes: ["text/plain"],
      default_output_modes: ["text/plain", "application/json"],
      skills: [
        {
          id: "flights",
          name: "Flights",
          description: "Finds flights",
          tags: ["travel"],
          input_modes: ["application/json"],
          output_modes: ["text/plain", "application/json"]
        },
        {
          id: "hotels",
          name: "Hotels",
          description: "Finds hotels",
          tags: [],
          input_modes: ["text/plain"],
          output_modes: ["text/plain", "application/json"]
        }
      ],
      skills_omitted: 0
    })
  })

  it("is bounded for a hostile card: 10 000 skills keep 64 and count the rest, texts and lists are cut", () => {
    const card = hostileCard("http://127.0.0.1:1")
    const summary = summarizeCard(card)
    expect(summary.skills).toHaveLength(CARD_SUMMARY_LIMITS.skills)
    expect(summary.skills_omitted).toBe(10_000 - CARD_SUMMARY_LIMITS.skills)
    expect(summary.description!.length).toBeLessThanOrEqual(CARD_SUMMARY_LIMITS.descriptionChars)
    expect(summary.name!.length).toBeLessThanOrEqual(CARD_SUMMARY_LIMITS.shortChars)
    for (const skill of summary.skills) {
      expect(skill.description.length).toBeLessThanOrEqual(CARD_SUMMARY_LIMITS.skillDescriptionChars)
      expect(skill.tags.length).toBeLessThanOrEqual(CARD_SUMMARY_LIMITS.listItems)
    }
    expect(JSON.stringify(summary).length).toBeLessThan(350_000)
    // Kept as the card said it: each door escapes what it shows.
    expect(summary.name).toContain("\u001b")
  })

  it("reads anything without failing: not an object, wrong types, skills that are not objects", () => {
    expect(summarizeCard("nope")).toMatchObject({ name: null, skills: [], skills_omitted: 0 })
    expect(summarizeCard({ name: 7, skills: [1, null, { id: 3, tags: "x" }] }).skills).toEqual([
      { id: "", name: "", description: "", tags: [], input_modes: [], output_modes: [] }
    ])
  })

  it("finds the agent's own URL: v0.3 url, else the first v1.0 interface", () => {
    expect(cardAgentUrl({ url: "http://a.test/rpc" })).toBe("http://a.test/rpc")
    expect(cardAgentUrl({ supportedInterfaces: [{ url: "http://b.test/a2a", protocolBinding: "JSONRPC" }] })).toBe("http://b.test/a2a")
    expect(cardAgentUrl({ supportedInterfaces: [] })).toBeUndefined()
    expect(cardAgentUrl(null)).toBeUndefined()
  })
})
