/** The resumable-SSE event store: ids per stream, replay after an id, bounded memory. */
import { describe, expect, it } from "vitest"
import { makeEventStore } from "../../src/mcp/eventStore.js"

const message = (id: number) => ({ jsonrpc: "2.0" as const, id, result: {} })

const replay = async (store: ReturnType<typeof makeEventStore>, after: string) => {
  const sent: Array<[string, unknown]> = []
  const streamId = await store.replayEventsAfter(after, { send: async (id, m) => void sent.push([id, m]) })
  return { streamId, sent }
}

describe("event store", () => {
  it("replays only the later events of the same stream, in order", async () => {
    const store = makeEventStore()
    const a1 = await store.storeEvent("a", message(1))
    await store.storeEvent("b", message(2))
    const a3 = await store.storeEvent("a", message(3))
    const a4 = await store.storeEvent("a", message(4))
    expect(await store.getStreamIdForEventId!(a1)).toBe("a")
    const { streamId, sent } = await replay(store, a1)
    expect(streamId).toBe("a")
    expect(sent).toEqual([[a3, message(3)], [a4, message(4)]])
  })

  it("keeps only the newest events: a stream whose events were all dropped is unknown", async () => {
    const store = makeEventStore(2)
    const old = await store.storeEvent("old", message(1))
    await store.storeEvent("new", message(2))
    await store.storeEvent("new", message(3))
    expect(await store.getStreamIdForEventId!(old)).toBeUndefined()
    expect(await store.getStreamIdForEventId!("not an id")).toBeUndefined()
    expect((await replay(store, old)).sent).toEqual([])
  })

  it("keeps at most maxBytes of events, the newest first; an event larger than maxBytes is not kept", async () => {
    const big = (id: number, size: number) => ({ jsonrpc: "2.0" as const, id, result: { text: "x".repeat(size) } })
    const store = makeEventStore(1000, 1000)
    const first = await store.storeEvent("a", big(1, 400))
    const second = await store.storeEvent("s", big(2, 400))
    const third = await store.storeEvent("s", big(3, 400))
    // Three events of ~440 bytes exceed 1000: the oldest went, the two newest stay.
    expect(await store.getStreamIdForEventId!(first)).toBeUndefined()
    expect(await store.getStreamIdForEventId!(second)).toBe("s")
    expect((await replay(store, second)).sent.map(([id]) => id)).toEqual([third])
    // One event over the bound is not kept, and evicts nothing: the bound holds even for a single event.
    const huge = await store.storeEvent("t", big(4, 5000))
    expect(await store.getStreamIdForEventId!(huge)).toBeUndefined()
    expect((await replay(store, second)).sent.map(([id]) => id)).toEqual([third])
    // A later event of the same stream resumes after it without it.
    const after = await store.storeEvent("t", big(5, 10))
    expect((await replay(store, huge)).sent.map(([id]) => id)).toEqual([after])
  })
})
