/**
 * The A2A client's card cache is bounded (issue 27, item 4): at most MAX_CACHED_CARDS cards and
 * MAX_CACHED_CARD_BYTES of card JSON, the least recently used going first; a card over the byte
 * bound is not kept. Through the client against stub agents, and the cache's order on its own.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { afterAll } from "vitest"
import { MAX_CACHED_CARD_BYTES, MAX_CACHED_CARDS } from "../../src/domain/limits.js"
import { A2aClient, type Target } from "../../src/services/A2aClient.js"
import { type CachedCard, makeCardCache } from "../../src/services/a2aClient/cardCache.js"
import type { DiscoveredCard } from "../../src/services/a2aClient/discovery.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { recording, reply, stubPool, v1Card, withClient } from "./a2aClientHarness.js"

const stubs = stubPool()
afterAll(() => stubs.closeAll())

/** A stub serving `count` cards at /cards/<i>.json, each padded to about `bytes`. */
const cardServer = (count: number, bytes = 0) =>
  stubs.start((base) => {
    const card = { ...v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]), description: "d".repeat(bytes) }
    return Object.fromEntries(Array.from({ length: count }, (_, i) => [`GET /cards/${i}.json`, reply(card)]))
  })

/** Discovers card `i` of the server; resolves with how many requests that took. */
const fetches = (server: { baseUrl: string; requests: Parameters<typeof recording>[0] }, i: number, maxResponseBytes?: number) =>
  Effect.gen(function*() {
    const a2a = yield* A2aClient
    const target: Target = { agentUrl: agentUrlOf(server.baseUrl), cardUrl: `${server.baseUrl}/cards/${i}.json`, maxResponseBytes }
    return (yield* recording(server.requests, a2a.discover(target))).sent.length
  })

describe("the client's card cache", () => {
  it.live(`keeps at most ${MAX_CACHED_CARDS} cards: one more pushes out the least recently used`, () =>
    withClient(Effect.gen(function*() {
      const server = yield* cardServer(MAX_CACHED_CARDS + 1)
      for (let i = 0; i <= MAX_CACHED_CARDS; i++) expect(yield* fetches(server, i)).toBe(1)
      expect(yield* fetches(server, MAX_CACHED_CARDS)).toBe(0)
      expect(yield* fetches(server, 0)).toBe(1)
    })))

  it.live("keeps at most MAX_CACHED_CARD_BYTES of cards; a card over it is not kept", () =>
    withClient(Effect.gen(function*() {
      const third = Math.floor(MAX_CACHED_CARD_BYTES / 3)
      const server = yield* cardServer(3, third + 1000)
      for (let i = 0; i < 3; i++) expect(yield* fetches(server, i)).toBe(1)
      // Three cards of a third and more do not fit: the first went, the last two stay.
      expect(yield* fetches(server, 2)).toBe(0)
      expect(yield* fetches(server, 1)).toBe(0)
      expect(yield* fetches(server, 0)).toBe(1)

      // Larger than the cache, read with a larger answer limit: fetched again each time.
      const huge = yield* cardServer(1, MAX_CACHED_CARD_BYTES)
      expect(yield* fetches(huge, 0, 2 * MAX_CACHED_CARD_BYTES)).toBe(1)
      expect(yield* fetches(huge, 0, 2 * MAX_CACHED_CARD_BYTES)).toBe(1)
    })))
})

describe("makeCardCache", () => {
  const entry = (name: string, size: number): CachedCard => ({
    card: { raw: { name: name.padEnd(size - 11, ".") } } as unknown as DiscoveredCard,
    etag: undefined,
    expiresAt: Number.MAX_SAFE_INTEGER
  })

  it("evicts the least recently used, where a read counts as a use", () => {
    const cache = makeCardCache(2, 1000)
    cache.set("a", entry("a", 100))
    cache.set("b", entry("b", 100))
    expect(cache.get("a")).toBeDefined()
    cache.set("c", entry("c", 100))
    expect([cache.get("a"), cache.get("b"), cache.get("c")].map((kept) => kept !== undefined)).toEqual([true, false, true])
  })

  it("counts bytes, and replacing an entry frees the old one's", () => {
    const cache = makeCardCache(10, 1000)
    cache.set("a", entry("a", 400))
    cache.set("a", entry("a", 400))
    cache.set("b", entry("b", 400))
    expect(cache.get("a")).toBeDefined()
    cache.set("c", entry("c", 400))
    expect([cache.get("a"), cache.get("b"), cache.get("c")].map((kept) => kept !== undefined)).toEqual([true, false, true])
    cache.set("d", entry("d", 1001))
    expect(cache.get("d")).toBeUndefined()
    expect(cache.get("a")).toBeDefined()
  })
})
