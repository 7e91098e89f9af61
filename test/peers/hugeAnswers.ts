// Answers no honest agent sends: JSON bodies of any size streamed without ever being held in
// memory (backpressure respected), and JSON nested far deeper than any A2A object. The progress
// record tells a test how much was written before the client hung up.
import type http from "node:http"
import { reply, startStub, v1Card } from "../services/a2aClientHarness.js"

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
export const nestedObject = (depth: number, inner = "{}"): string => `${"{\"a\":".repeat(depth)}${inner}${"}".repeat(depth)}`

/**
 * An SSE answer that never ends: the task, then artifact updates of `chunkBytes` of text each,
 * every one appended to the same artifact (each well under the per-event limit), as fast as the
 * client reads them (backpressure respected), until the client hangs up. `wrap` puts each result
 * in its binding's envelope (a JSON-RPC response with the request's id).
 */
export const streamEndlessAppends = (
  res: http.ServerResponse,
  options: { readonly chunkBytes: number; readonly wrap: (result: unknown) => unknown },
  progress: Progress
): void => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  res.once("close", () => (progress.cutShort = true))
  const event = (result: unknown) => `data: ${JSON.stringify(options.wrap(result))}\n\n`
  const write = (data: string) => {
    progress.written += Buffer.byteLength(data)
    return res.write(data)
  }
  write(event({ task: ENDLESS_TASK }))
  const chunk = event({
    artifactUpdate: {
      taskId: "endless",
      contextId: "c",
      artifact: { artifactId: "answer", parts: [{ text: "a".repeat(options.chunkBytes) }] },
      append: true
    }
  })
  const pump = () => {
    while (!res.destroyed) {
      if (!write(chunk)) return void res.once("drain", pump)
    }
  }
  pump()
}

/** The task an endless agent works on, as SendMessage and GetTask show it: working, without end. */
const ENDLESS_TASK = { id: "endless", contextId: "c", status: { state: "TASK_STATE_WORKING" } }

/**
 * A JSON-RPC 1.0 agent whose answer never ends: SendMessage and GetTask show its task working,
 * SendStreamingMessage and SubscribeToTask stream `chunkBytes` appends to it forever (see
 * streamEndlessAppends), so every way relay follows a task meets the endless stream.
 */
export const startEndlessAgent = (chunkBytes: number, progress: Progress) =>
  startStub((base) => ({
    "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
    "POST /rpc": (request, res) => {
      const { id, method } = request.body as { id: unknown; method: string }
      const wrap = (result: unknown) => ({ jsonrpc: "2.0", id, result })
      if (method === "SendStreamingMessage" || method === "SubscribeToTask") {
        streamEndlessAppends(res, { chunkBytes, wrap }, progress)
        return undefined
      }
      return { body: wrap(method === "SendMessage" ? { task: ENDLESS_TASK } : ENDLESS_TASK) }
    }
  }))
