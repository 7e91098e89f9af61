/**
 * A request's body gathered as it arrives (src/servers/bodyBytes.ts): whole whatever its chunks,
 * and, sent a byte per chunk, held in memory of the order of its size (exchange.ts readBody; the
 * gRPC door's DATA frames are in grpcServer.test.ts).
 */
import http from "node:http"
import net from "node:net"
import v8 from "node:v8"
import { describe, expect, it } from "vitest"
import { BodyBytes } from "../../src/servers/bodyBytes.js"
import { type BodyRead, readBody } from "../../src/servers/exchange.js"
import { closeServer, listenOnLoopback } from "../peers/httpUtil.js"

/** The bytes of V8's old space in use: what survived collections, without young garbage not yet collected. */
const oldSpaceUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === "old_space")!.space_used_size

describe("BodyBytes", () => {
  it("gives back exactly what came, however it was cut, with or without the size announced", () => {
    const body = Buffer.from(Array.from({ length: 5000 }, (_, index) => index % 251))
    for (const announced of [undefined, body.length]) {
      for (const cut of [1, 7, 64, 4999, 5000]) {
        const kept = new BodyBytes()
        if (announced !== undefined) kept.expect(announced)
        for (let at = 0; at < body.length; at += cut) kept.add(body.subarray(at, at + cut))
        expect(kept.bytes.equals(body), `cut ${cut}, announced ${announced}`).toBe(true)
      }
    }
  })

  it("keeps a body of one chunk as it came, without a copy", () => {
    const chunk = Buffer.from("one chunk")
    const kept = new BodyBytes()
    kept.add(chunk)
    expect(kept.bytes.buffer).toBe(chunk.buffer)
  })
})

describe("readBody", () => {
  it("holds a body sent a byte per chunk in memory of the order of its size", async () => {
    const BODY_BYTES = 512 * 1024
    let keptWhenRead = 0
    let read: BodyRead | undefined
    const server = http.createServer((request, response) =>
      readBody(request, { maxBytes: 2 * BODY_BYTES, cutOffBytes: 8 * BODY_BYTES }, (body) => {
        // Measured while the body is still held: whatever was kept of its chunks is still here.
        keptWhenRead = oldSpaceUsed()
        read = body
        response.end()
      })
    )
    const port = Number(new URL(await listenOnLoopback(server)).port)
    const socket = net.connect(port, "127.0.0.1")
    socket.on("error", () => {})
    try {
      const keptBefore = oldSpaceUsed()
      socket.write("POST / HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
      // The body a byte per chunk, paced by the socket.
      for (let sent = 0; sent < BODY_BYTES; sent++) {
        if (!socket.write("1\r\na\r\n")) await new Promise((drained) => socket.once("drain", drained))
      }
      socket.write("0\r\n\r\n")
      const deadline = Date.now() + 30_000
      while (read === undefined && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 20))
      expect(read?._tag === "Complete" && read.bytes.length).toBe(BODY_BYTES)
      // A Buffer kept per chunk would hold many times the body's size.
      expect(keptWhenRead - keptBefore).toBeLessThan(16 * BODY_BYTES)
    } finally {
      socket.destroy()
      await closeServer(server)
    }
  }, 40_000)
})
