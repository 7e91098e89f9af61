/**
 * Slow clients time out without blocking others: a client that never finishes its headers, and
 * one that never finishes its body, are cut (408 and a closed socket) within the server's client
 * timeouts, while ordinary requests are answered meanwhile.
 */
import * as Net from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type AgentHandle, startAgent } from "./agentHarness.js"

const TIMEOUTS = { headersMs: 500, requestMs: 1000 }
let agent: AgentHandle

beforeAll(async () => {
  agent = await startAgent({ clientTimeouts: TIMEOUTS })
})

afterAll(async () => {
  await agent?.close()
})

/** Opens a raw connection, writes `text` and never more; resolves with what came back once the server closes it. */
const stall = (text: string, limitMs: number) =>
  new Promise<{ readonly answer: string; readonly ms: number }>((resolve, reject) => {
    const { hostname, port } = new URL(agent.baseUrl)
    const started = performance.now()
    const socket = Net.connect(Number(port), hostname, () => socket.write(text))
    let answer = ""
    socket.on("data", (chunk) => (answer += chunk.toString("latin1")))
    socket.on("error", () => {})
    socket.on("close", () => {
      clearTimeout(timer)
      resolve({ answer, ms: performance.now() - started })
    })
    const timer = setTimeout(() => {
      socket.destroy()
      reject(new Error(`the server kept a stalled client for ${limitMs} ms`))
    }, limitMs)
  })

describe("slow clients", () => {
  it("are cut at the header and request limits while others are served", async () => {
    const slowHeaders = stall("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: appl", 5000)
    const slowBody = stall("POST / HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\"", 5000)
    // Meanwhile the server answers everyone else.
    const healthy = await Promise.all(
      Array.from({ length: 20 }, () => fetch(`${agent.baseUrl}/health`).then((response) => response.status))
    )
    expect(healthy).toEqual(Array.from({ length: 20 }, () => 200))
    const [headers, body] = await Promise.all([slowHeaders, slowBody])
    expect(headers.answer).toMatch(/^HTTP\/1\.1 408/)
    expect(body.answer).toMatch(/^HTTP\/1\.1 408/)
    expect(headers.ms).toBeLessThan(TIMEOUTS.headersMs + 2000)
    expect(body.ms).toBeLessThan(TIMEOUTS.requestMs + 2000)
  })
})
