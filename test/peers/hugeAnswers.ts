// Answers no honest agent sends: JSON bodies of any size streamed without ever being held in
// memory (backpressure respected), and JSON nested far deeper than any A2A object. The progress
// record tells a test how much was written before the client hung up.
import type http from "node:http"

export interface Progress {
  /** Bytes written so far. */
  written: number
  /** The client closed the connection before the body was complete. */
  cutShort: boolean
}

const CHUNK = Buffer.alloc(64 * 1024, 0x61) // "aaaa…": inside a JSON string, any length is valid JSON

/**
 * Writes `head`, then `size` bytes of filler, then `tail` (so `head` + filler + `tail` is JSON
 * when `head` opens a string the tail closes). With `declareLength` the size is announced in
 * Content-Length; without it the body is chunked and only its end tells the size.
 */
export const streamHugeJson = (
  res: http.ServerResponse,
  options: {
    readonly head: string
    readonly tail: string
    readonly size: number
    readonly declareLength: boolean
    readonly status?: number
    readonly contentType?: string
  },
  progress: Progress
): void => {
  const total = Buffer.byteLength(options.head) + options.size + Buffer.byteLength(options.tail)
  res.writeHead(options.status ?? 200, {
    "content-type": options.contentType ?? "application/json",
    ...(options.declareLength ? { "content-length": String(total) } : {})
  })
  res.once("close", () => {
    if (!res.writableFinished) progress.cutShort = true
  })
  const write = (data: Buffer | string) => {
    progress.written += Buffer.byteLength(data)
    return res.write(data)
  }
  write(options.head)
  let left = options.size
  const pump = () => {
    while (left > 0 && !res.destroyed) {
      const piece = left >= CHUNK.length ? CHUNK : CHUNK.subarray(0, left)
      left -= piece.length
      if (!write(piece)) return void res.once("drain", pump)
    }
    if (!res.destroyed) {
      write(options.tail)
      res.end()
    }
  }
  pump()
}

/** `{"a":{"a":…}}` nested `depth` levels around `inner`. */
export const nestedObject = (depth: number, inner = "{}"): string => `${'{"a":'.repeat(depth)}${inner}${"}".repeat(depth)}`
