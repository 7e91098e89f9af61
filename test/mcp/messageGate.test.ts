/**
 * The pieces in front of every MCP transport, in process: the message gate (size, depth,
 * envelope), the stdio line framer that skips an oversized line without holding it, the id found
 * at the edges of such a line, and the Origin rule of the HTTP transports.
 */
import { describe, expect, it } from "vitest"
import { MAX_JSON_DEPTH } from "../../src/domain/limits.js"
import { admitText, idAtEdges } from "../../src/mcp/messageGate.js"
import { isAllowedOrigin, parseOrigin } from "../../src/mcp/origins.js"
import { admitFramed, type Framed, LineFramer } from "../../src/mcp/stdio.js"
import { deepArray, HOSTILE_MESSAGES, oversizedCall } from "./hostileMessages.js"

const PING = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}"

const lines = (framed: ReadonlyArray<Framed>) => framed.map((f) => (f._tag === "Line" ? f.text : `<${f.bytes} bytes>`))

describe("the line framer", () => {
  it("joins lines split across chunks and skips blank lines and CRs", () => {
    const framer = new LineFramer(1000)
    expect(lines(framer.push(Buffer.from("{\"a\":")))).toEqual([])
    expect(lines(framer.push(Buffer.from("1}\r\n\n{\"b\":2}\n{\"c\"")))).toEqual(["{\"a\":1}", "{\"b\":2}"])
    expect(lines(framer.push(Buffer.from(":3}\n")))).toEqual(["{\"c\":3}"])
  })

  it("skips a line over the limit as it streams by, keeping only its edges, and frames the next line whole", () => {
    const framer = new LineFramer(100)
    const text = oversizedCall(42, 10_000)
    const framed: Array<Framed> = []
    for (let at = 0; at < text.length; at += 333) framed.push(...framer.push(Buffer.from(text.slice(at, at + 333))))
    framed.push(...framer.push(Buffer.from(`\n${PING}\n`)))
    expect(lines(framed)).toEqual([`<${text.length} bytes>`, PING])
    const oversized = framed[0]!
    if (oversized._tag !== "Oversized") throw new Error("expected the oversized line first")
    expect(oversized.head.length).toBeLessThanOrEqual(1024)
    expect(oversized.tail.length).toBeLessThanOrEqual(1024)
    // Its answer goes to its own id, found at the end of the line.
    expect(admitFramed(oversized, 100)).toMatchObject({ _tag: "Refused", answer: { id: 42, error: { code: -32600 } } })
  })

  it("accepts a line of exactly the limit", () => {
    const framer = new LineFramer(PING.length)
    expect(lines(framer.push(Buffer.from(`${PING}\n`)))).toEqual([PING])
    expect(lines(framer.push(Buffer.from(`${PING} \n`)))).toEqual([`<${PING.length + 1} bytes>`])
  })
})

describe("the id of an oversized message", () => {
  it.each([
    ["{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":{\"p\":\"…", "", 7],
    ["{\"id\":\"abc\",\"jsonrpc\":\"2.0\",…", "", "abc"],
    ["{…", "…\"}},\"jsonrpc\":\"2.0\",\"id\":8}", 8],
    ["{…", "…,\"id\":\"q\\\"x\"}\n", "q\"x"],
    // Nested ids, ids in strings and ids in the middle are not the message's id.
    ["{\"method\":\"x\",\"params\":{\"id\":9,", "…\"id\":5}}", null],
    ["{…", "…\"text\":\"a,\\\"id\\\":5}\"}", null],
    ["{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"id\":4,", "…}", null],
    ["{…", "…,\"id\":1.5}", null],
    ["{…", "…,\"id\":true}", null]
  ])("%s … %s → %s", (head, tail, id) => {
    expect(idAtEdges(head, tail)).toBe(id)
  })
})

describe("the message gate", () => {
  it("accepts JSON-RPC messages nesting up to the limit", () => {
    expect(admitText(PING)).toMatchObject({ _tag: "Accepted", message: { id: 1, method: "ping" } })
    // The root object, params and x are three levels.
    const atLimit = `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":${deepArray(MAX_JSON_DEPTH - 2)}}}`
    expect(admitText(atLimit)._tag).toBe("Accepted")
    const overLimit = `{"jsonrpc":"2.0","id":2,"method":"ping","params":{"x":${deepArray(MAX_JSON_DEPTH - 1)}}}`
    expect(admitText(overLimit)).toMatchObject({ _tag: "Refused", answer: { id: 2, error: { code: -32602 } } })
  })

  it.each(HOSTILE_MESSAGES.filter((message) => message.status !== 413))("refuses $name with $code", (message) => {
    const admission = admitText(message.text)
    expect(admission._tag).toBe("Refused")
    if (admission._tag !== "Refused") return
    expect(admission.silent).toBe(!message.answeredOnStdio)
    expect(admission.answer).toEqual({ jsonrpc: "2.0", id: message.id, error: { code: message.code, message: admission.reason } })
  })

  it("never echoes what it could not parse", () => {
    const admission = admitText("root:x:0:0:root:/root:/bin/bash")
    expect(JSON.stringify(admission)).not.toContain("root:")
  })
})

describe("the Origin rule of the HTTP transports", () => {
  const served = ["localhost", "127.0.0.1", "[::1]"]

  it("allows no Origin, the origin relay serves, and the origins given with --allow-origin", () => {
    expect(isAllowedOrigin(undefined, served, 8090, [])).toBe(true)
    expect(isAllowedOrigin("http://127.0.0.1:8090", served, 8090, [])).toBe(true)
    expect(isAllowedOrigin("http://localhost:8090", served, 8090, [])).toBe(true)
    expect(isAllowedOrigin("http://[::1]:8090", served, 8090, [])).toBe(true)
    expect(isAllowedOrigin("http://localhost", served, 80, [])).toBe(true)
    expect(isAllowedOrigin("http://localhost:6274", served, 8090, ["http://localhost:6274"])).toBe(true)
    expect(isAllowedOrigin("https://app.example", served, 8090, ["https://app.example"])).toBe(true)
  })

  it("refuses other local ports, other schemes, other hosts and opaque origins", () => {
    expect(isAllowedOrigin("http://localhost:6274", served, 8090, [])).toBe(false)
    expect(isAllowedOrigin("https://localhost:8090", served, 8090, [])).toBe(false)
    expect(isAllowedOrigin("http://evil.example:8090", served, 8090, [])).toBe(false)
    expect(isAllowedOrigin("null", served, 8090, [])).toBe(false)
    expect(isAllowedOrigin("http://localhost:6275", served, 8090, ["http://localhost:6274"])).toBe(false)
  })

  it("takes --allow-origin values in the form browsers send, and nothing with a path", () => {
    expect(parseOrigin("http://localhost:6274")).toBe("http://localhost:6274")
    expect(parseOrigin("HTTPS://App.Example:443")).toBe("https://app.example")
    for (const bad of ["localhost:6274", "http://localhost:6274/", "http://localhost/app", "ftp://x", "null", "*", "http://u:p@host"]) {
      expect(parseOrigin(bad), bad).toBeUndefined()
    }
  })
})
