/**
 * MCP over stdio with a size limit that cannot wedge the server. The SDK's stdio transport closes
 * itself when a line outgrows its read buffer and leaves stdin paused, so the server neither answers
 * nor notices EOF. This transport frames lines itself: a line over the limit is skipped as it
 * streams by (never buffered past the limit) and answered with an error, and every other line goes
 * through the message gate. Requests reach the server at the client's pace (backpressure.ts):
 * while some wait their turn, stdin is not read. It closes once stdin ended and the requests read
 * before were answered, or when the client is cut off for not reading its answers: then `cutOff`
 * says why.
 */
import { type JSONRPCMessage, serializeMessage, type Transport } from "@modelcontextprotocol/server"
import type { Readable, Writable } from "node:stream"
import type { McpClientNotReading } from "../domain/errors.js"
import { MAX_MCP_MESSAGE_BYTES, MCP_CLIENT_PACE, MCP_STDIN_END_GRACE_MS } from "../domain/limits.js"
import { type Backpressure, makeBackpressure, type Outbox, type PaceLimits } from "./backpressure.js"
import { type Admission, admitText, idAtEdges, oversized, type Refused } from "./messageGate.js"

const NEWLINE = 0x0a
/** How much of an oversized line's start and end is kept to find its id. */
const EDGE_BYTES = 1024

/** A complete line, or the size and the edges of one that went over the limit. */
export type Framed =
  | { readonly _tag: "Line"; readonly text: string }
  | { readonly _tag: "Oversized"; readonly bytes: number; readonly head: string; readonly tail: string }

/** The last `count` bytes of some buffers, copied. */
const lastBytes = (buffers: ReadonlyArray<Buffer>, count: number): Buffer => {
  const kept: Array<Buffer> = []
  let size = 0
  for (let i = buffers.length - 1; i >= 0 && size < count; i--) {
    const buffer = buffers[i]!
    const part = buffer.subarray(Math.max(0, buffer.length - (count - size)))
    kept.unshift(part)
    size += part.length
  }
  return Buffer.concat(kept)
}

/** Splits a byte stream into newline-delimited lines of at most `maxBytes` bytes each. */
export class LineFramer {
  private pending: Array<Buffer> = []
  private pendingBytes = 0
  private oversized: { bytes: number; head: Buffer; tail: Buffer } | undefined

  constructor(private readonly maxBytes: number) {}

  push(chunk: Buffer): ReadonlyArray<Framed> {
    const framed: Array<Framed> = []
    let start = 0
    for (let end = chunk.indexOf(NEWLINE); end !== -1; end = chunk.indexOf(NEWLINE, start)) {
      this.take(chunk.subarray(start, end))
      framed.push(this.endLine())
      start = end + 1
    }
    if (start < chunk.length) this.take(chunk.subarray(start))
    return framed.filter((line) => line._tag === "Oversized" || line.text.trim() !== "")
  }

  /** The line stdin ended in without its newline, if any. */
  end(): ReadonlyArray<Framed> {
    if (this.oversized === undefined && this.pendingBytes === 0) return []
    const last = this.endLine()
    return last._tag === "Line" && last.text.trim() === "" ? [] : [last]
  }

  private take(piece: Buffer) {
    if (this.oversized !== undefined) {
      this.oversized.bytes += piece.length
      this.oversized.tail = lastBytes([this.oversized.tail, piece], EDGE_BYTES)
    } else if (this.pendingBytes + piece.length > this.maxBytes) {
      const seen = [...this.pending, piece]
      this.oversized = {
        bytes: this.pendingBytes + piece.length,
        head: Buffer.concat(seen, Math.min(EDGE_BYTES, this.pendingBytes + piece.length)),
        tail: lastBytes(seen, EDGE_BYTES)
      }
      this.pending = []
      this.pendingBytes = 0
    } else {
      this.pending.push(piece)
      this.pendingBytes += piece.length
    }
  }

  private endLine(): Framed {
    const oversized = this.oversized
    this.oversized = undefined
    if (oversized !== undefined) {
      return { _tag: "Oversized", bytes: oversized.bytes, head: oversized.head.toString("utf8"), tail: oversized.tail.toString("utf8") }
    }
    const text = Buffer.concat(this.pending, this.pendingBytes).toString("utf8").replace(/\r$/, "")
    this.pending = []
    this.pendingBytes = 0
    return { _tag: "Line", text }
  }
}

/** What the transport makes of one framed line. */
export const admitFramed = (framed: Framed, maxBytes: number): Admission =>
  framed._tag === "Line"
    ? admitText(framed.text)
    : oversized(maxBytes, framed.bytes, idAtEdges(framed.head, framed.tail))

export interface BoundedStdioOptions {
  readonly input?: Readable | undefined
  readonly output?: Writable | undefined
  readonly maxBytes?: number | undefined
  /** The client's pace (default MCP_CLIENT_PACE). */
  readonly pace?: PaceLimits | undefined
  /** How long requests read before stdin ended may still take (default MCP_STDIN_END_GRACE_MS). */
  readonly endGraceMs?: number | undefined
  /** Where refused messages are reported (stderr via the logger). */
  readonly log: (line: string) => void
}

/** The stdio transport of `relay mcp`. */
export class BoundedStdioTransport implements Transport {
  onclose?: (() => void) | undefined
  onerror?: ((error: Error) => void) | undefined
  onmessage?: (<T extends JSONRPCMessage>(message: T) => void) | undefined

  private readonly input: Readable
  private readonly output: Writable
  private readonly maxBytes: number
  private readonly framer: LineFramer
  private readonly pace: Backpressure
  private readonly stdout: Outbox
  private ended = false
  /** Set once stdin ended while requests it brought were still unanswered. */
  private draining: ReturnType<typeof setTimeout> | undefined
  private readonly graceMs: number
  /** Set when the client was cut off for not reading its answers; the transport is then closed. */
  cutOff: McpClientNotReading | undefined
  /** Settles when the transport closes: stdin ended, or the client was cut off. */
  readonly closed: Promise<void>
  private readonly markClosed: () => void

  constructor(private readonly options: BoundedStdioOptions) {
    this.input = options.input ?? process.stdin
    this.output = options.output ?? process.stdout
    this.maxBytes = options.maxBytes ?? MAX_MCP_MESSAGE_BYTES
    this.graceMs = options.endGraceMs ?? MCP_STDIN_END_GRACE_MS
    this.framer = new LineFramer(this.maxBytes)
    this.pace = makeBackpressure(options.pace ?? MCP_CLIENT_PACE, {
      deliver: (message) => this.onmessage?.(message),
      cutOff: (reason) => {
        this.cutOff = reason
        void this.close()
      },
      holding: (held) => {
        if (this.ended) return
        if (held) this.input.pause()
        else this.input.resume()
      }
    })
    this.stdout = this.pace.outbox(this.output)
    let markClosed = () => {}
    this.closed = new Promise((resolve) => (markClosed = resolve))
    this.markClosed = markClosed
  }

  private readonly onData = (chunk: Buffer) => this.admit(this.framer.push(chunk))

  private admit(lines: ReadonlyArray<Framed>) {
    for (const framed of lines) {
      const admission = admitFramed(framed, this.maxBytes)
      if (admission._tag === "Accepted") this.pace.receive(admission.message)
      else this.refuse(admission)
    }
  }

  /**
   * Stdin ended: the requests already read are answered first, within MCP_STDIN_END_GRACE_MS (a
   * script piping its requests in closes stdin right after them), then the transport closes.
   */
  private readonly onEnd = () => {
    if (this.ended || this.draining !== undefined) return
    this.input.off("data", this.onData)
    // A last request without its newline is still a request.
    this.admit(this.framer.end())
    this.draining = setTimeout(() => {
      this.options.log(`stdin ended ${this.graceMs} ms ago and requests read before it are still unanswered: exiting without them`)
      void this.close()
    }, this.graceMs)
    this.pace.whenIdle(() => void this.close())
  }

  private readonly onError = (error: Error) => {
    this.onerror?.(error)
    void this.close()
  }

  private refuse(refusal: Refused) {
    this.options.log(`Refused an MCP message on stdin: ${refusal.reason}`)
    if (!refusal.silent) this.write(`${JSON.stringify(refusal.answer)}\n`)
  }

  start(): Promise<void> {
    this.input.on("data", this.onData)
    this.input.once("end", this.onEnd)
    this.input.once("close", this.onEnd)
    this.input.on("error", this.onError)
    return Promise.resolve()
  }

  /** Queues the message for stdout, where it goes out at the client's pace. */
  send(message: JSONRPCMessage): Promise<void> {
    this.write(serializeMessage(message))
    this.pace.sent(message)
    return Promise.resolve()
  }

  /** Nothing more is written to a client that was cut off. */
  private write(text: string) {
    if (this.cutOff === undefined) this.stdout.send(Buffer.from(text))
  }

  close(): Promise<void> {
    if (this.ended) return Promise.resolve()
    this.ended = true
    clearTimeout(this.draining)
    this.input.off("data", this.onData)
    this.input.off("end", this.onEnd)
    this.input.off("close", this.onEnd)
    this.input.off("error", this.onError)
    this.pace.stop()
    this.onclose?.()
    this.markClosed()
    return Promise.resolve()
  }
}
