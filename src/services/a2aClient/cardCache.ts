/**
 * The client's cards, bounded: a long-lived process (`relay mcp`) meets any number of agents, and
 * a card may be megabytes. At most MAX_CACHED_CARDS cards and MAX_CACHED_CARD_BYTES of card JSON
 * are kept; past either, the least recently used go. A card larger than the byte bound is not
 * kept: it is fetched again when next needed.
 */
import type { ClientCardGeneration } from "../../a2a/cardGeneration.js"
import type * as V1 from "../../a2a/v1.js"
import { MAX_CACHED_CARD_BYTES, MAX_CACHED_CARDS } from "../../domain/limits.js"

/** An agent's card as discovery found it (discovery.ts), and as the cache keeps it. */
export interface DiscoveredCard {
  readonly card: V1.AgentCard
  /** The card JSON exactly as served. */
  readonly raw: unknown
  readonly generation: ClientCardGeneration
  readonly declaredProtocolVersion?: string | undefined
  readonly cardUrl: string
}

export interface CachedCard {
  readonly card: DiscoveredCard
  readonly etag: string | undefined
  readonly expiresAt: number
  /** The addresses the card was fetched from (none recorded for an IP literal): they judge its host while it is used. */
  readonly fetchedFrom?: ReadonlyArray<string> | undefined
}

export interface CardCache {
  /** The card under `key`, now the most recently used. */
  readonly get: (key: string) => CachedCard | undefined
  /** Keeps `entry` under `key` as the most recently used, dropping the least recently used past the bounds. */
  readonly set: (key: string, entry: CachedCard) => void
}

/** The size a card counts for: its JSON as served, in UTF-8 bytes. */
const sizeOf = (entry: CachedCard) => Buffer.byteLength(JSON.stringify(entry.card.raw) ?? "")

export const makeCardCache = (maxCards: number = MAX_CACHED_CARDS, maxBytes: number = MAX_CACHED_CARD_BYTES): CardCache => {
  // A Map iterates in insertion order: re-inserting on use keeps the least recently used first.
  const entries = new Map<string, { readonly entry: CachedCard; readonly size: number }>()
  let bytes = 0
  const forget = (key: string) => {
    bytes -= entries.get(key)?.size ?? 0
    entries.delete(key)
  }
  return {
    get: (key) => {
      const kept = entries.get(key)
      if (kept === undefined) return undefined
      entries.delete(key)
      entries.set(key, kept)
      return kept.entry
    },
    set: (key, entry) => {
      // A revalidated card (304) keeps its size: a large one is not serialised again.
      const previous = entries.get(key)
      const size = previous?.entry.card === entry.card ? previous.size : sizeOf(entry)
      forget(key)
      if (size > maxBytes) return
      entries.set(key, { entry, size })
      bytes += size
      for (const oldest of entries.keys()) {
        if (entries.size <= maxCards && bytes <= maxBytes) break
        forget(oldest)
      }
    }
  }
}
