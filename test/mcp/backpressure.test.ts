/** One MCP client's pace: requests in flight, requests held while it is behind, and the stall cut-off. */
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js"
import { EventEmitter } from "node:events"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { McpClientNotReading } from "../../src/domain/errors.js"
import { makeBackpressure, type PaceLimits } from "../../src/mcp/backpressure.js"

const request = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "t" } })
const answer = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", id, result: {} })
const cancel = (id: number): JSONRPCMessage => ({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } })

/** An outlet whose reader takes a write only when the test says so. */
class FakeOutlet extends EventEmitter {
  readonly written: Array<number> = []
  private pending: (() => void) | undefined
  destroyed = false
  write(chunk: Uint8Array, done: () => void) {
    this.written.push(chunk.length)
    this.pending = done
  }
  end() {}
  destroy() {
    this.destroyed = true
    this.emit("close")
  }
  /** The reader takes the write in progress (the outbox then writes the next). */
  take() {
    const done = this.pending
    this.pending = undefined
    done?.()
  }
}

const setup = (limits: Partial<PaceLimits> = {}) => {
  const delivered: Array<JSONRPCMessage> = []
  const held: Array<boolean> = []
  const cutOff: Array<McpClientNotReading> = []
  const pace = makeBackpressure({ maxInFlight: 2, maxBytes: 100, stallMs: 1000, ...limits }, {
    deliver: (message) => void delivered.push(message),
    cutOff: (reason) => void cutOff.push(reason),
    holding: (on) => void held.push(on)
  })
  const outlet = new FakeOutlet()
  const outbox = pace.outbox(outlet)
  const sendBytes = (bytes: number) => outbox.send(new Uint8Array(bytes))
  /** The server answers request `id` with `bytes`. */
  const answerWith = (id: number, bytes: number) => {
    sendBytes(bytes)
    pace.sent(answer(id))
  }
  const ids = () => delivered.map((message) => ("id" in message ? message.id : "method" in message ? message.method : undefined))
  return { pace, outlet, delivered, held, cutOff, sendBytes, answerWith, ids }
}

afterEach(() => void vi.useRealTimers())

describe("backpressure", () => {
  it("handles at most maxInFlight requests at once, in order; notifications pass at once", () => {
    const { pace, held, answerWith, ids } = setup()
    for (const id of [1, 2, 3, 4]) pace.receive(request(id))
    pace.receive({ jsonrpc: "2.0", method: "notifications/initialized" })
    expect(ids()).toEqual([1, 2, "notifications/initialized"])
    expect(held).toEqual([true])
    answerWith(2, 0)
    expect(ids()).toEqual([1, 2, "notifications/initialized", 3])
    answerWith(1, 0)
    answerWith(3, 0)
    expect(ids()).toEqual([1, 2, "notifications/initialized", 3, 4])
    expect(held).toEqual([true, false])
  })

  it("starts no request while the client is behind, and the next one once it has read", () => {
    const { pace, outlet, sendBytes, answerWith, ids } = setup()
    pace.receive(request(1))
    // 201 bytes unread, 150 besides the largest message (51): more than 100.
    answerWith(1, 50)
    sendBytes(50)
    sendBytes(50)
    sendBytes(51)
    pace.receive(request(2))
    expect(ids()).toEqual([1])
    // The small messages went out together once the first was taken.
    outlet.take()
    expect(outlet.written).toEqual([50, 151])
    expect(ids()).toEqual([1, 2])
  })

  it("writes a large message in slices of 1 MiB, one at a time", () => {
    const { outlet, sendBytes } = setup()
    sendBytes(2.5 * 1024 * 1024)
    expect(outlet.written).toEqual([1024 * 1024])
    outlet.take()
    outlet.take()
    expect(outlet.written).toEqual([1024 * 1024, 1024 * 1024, 512 * 1024])
  })

  it("one answer larger than the bound does not put the client behind", () => {
    const { pace, answerWith, ids } = setup()
    pace.receive(request(1))
    answerWith(1, 10_000)
    pace.receive(request(2))
    expect(ids()).toEqual([1, 2])
  })

  it("drops a request cancelled before it started: it is never handled", () => {
    const { pace, answerWith, ids } = setup({ maxInFlight: 1 })
    for (const id of [1, 2, 3]) pace.receive(request(id))
    pace.receive(cancel(2))
    answerWith(1, 0)
    expect(ids()).toEqual([1, "notifications/cancelled", 3])
  })

  it("frees the place of a request cancelled while in flight: the SDK never answers it", () => {
    const { pace, ids } = setup({ maxInFlight: 1 })
    pace.receive(request(1))
    pace.receive(request(2))
    pace.receive(cancel(1))
    expect(ids()).toEqual([1, "notifications/cancelled", 2])
  })

  it("cuts off a client behind that reads nothing for stallMs; one that reads meanwhile goes on", () => {
    vi.useFakeTimers()
    const { pace, outlet, cutOff, sendBytes, ids } = setup()
    pace.receive(request(1))
    for (let i = 0; i < 4; i++) sendBytes(60)
    vi.advanceTimersByTime(900)
    // The reader takes the first message: still behind, but reading.
    outlet.take()
    vi.advanceTimersByTime(900)
    expect(cutOff).toEqual([])
    vi.advanceTimersByTime(1100)
    expect(cutOff.map((reason) => reason.message)).toEqual([
      "The MCP client left 180 bytes of answers unread (at most 100 may wait) and read nothing for 1 s; its session was closed"
    ])
    // Requests left waiting are dropped with it.
    pace.receive(request(2))
    expect(ids()).toEqual([1])
  })

  it("cuts off a client behind whose other streams take only small messages meanwhile: that is not reading", () => {
    vi.useFakeTimers()
    const { pace, cutOff, sendBytes } = setup({ maxBytes: 1600 })
    // Another stream of the session (a request's, its answer not written yet) takes what it is sent.
    const other = new FakeOutlet()
    const otherOutbox = pace.outbox(other)
    pace.receive(request(1))
    for (let i = 0; i < 4; i++) sendBytes(1000)
    for (let period = 0; period < 3 && cutOff.length === 0; period++) {
      otherOutbox.send(new Uint8Array(50))
      other.take()
      vi.advanceTimersByTime(1000)
    }
    expect(cutOff.map((reason) => reason.message)).toEqual([
      "The MCP client left 4000 bytes of answers unread (at most 1600 may wait) and read only 50 bytes in 1 s (a client behind must read 100); its session was closed"
    ])
  })

  it("dropAll destroys the outlets still open", () => {
    const { pace, outlet } = setup()
    pace.dropAll()
    expect(outlet.destroyed).toBe(true)
  })
})
