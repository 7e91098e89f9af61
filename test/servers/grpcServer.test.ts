// gRPC's wire on node:http2 (src/servers/agent/grpcServer.ts) under a handler of its own: what
// @grpc/grpc-js's client reads from it (messages, statuses with their details, compression,
// deadlines, cancellation), and what a raw HTTP/2 client can send that no gRPC client does.
import * as grpc from "@grpc/grpc-js"
import * as http2 from "node:http2"
import * as net from "node:net"
import * as v8 from "node:v8"
import * as zlib from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { GRPC_STATUS } from "../../src/a2a/grpcCodec.js"
import { type GrpcCall, makeGrpcServer } from "../../src/servers/agent/grpcServer.js"

const MAX_BYTES = 1024
const REQUEST_MS = 2000

/** Calls the handler saw cancelled, by their request text. */
const cancelled: Array<string> = []

const server = makeGrpcServer({
  serves: (path) => path.startsWith("/test.Service/"),
  refuse: (call) =>
    call.metadata("x-refuse") === undefined ? undefined : {
      code: GRPC_STATUS.PERMISSION_DENIED,
      details: "refused: 100% ✗",
      statusDetails: Buffer.from([1, 2, 3, 250])
    },
  handle: (call: GrpcCall, message: Buffer) => {
    const text = message.toString()
    switch (call.path) {
      case "/test.Service/Echo":
        return call.reply(message)
      case "/test.Service/Stream":
        for (const word of text.split(" ")) call.write(Buffer.from(word))
        return call.end()
      case "/test.Service/Fail":
        return call.end({ code: GRPC_STATUS.NOT_FOUND, details: text })
      case "/test.Service/Later": // the answer after 50 ms
        return void setTimeout(() => call.reply(message), 50)
      case "/test.Service/Trickle": // one message, then nothing
        call.write(Buffer.from(text))
        return call.onCancel(() => cancelled.push(text))
      default: // Hang: never answers
        call.onCancel(() => cancelled.push(text))
    }
  }
}, { maxMessageBytes: MAX_BYTES, requestMs: REQUEST_MS, idleMs: 10_000 })

let address: string

beforeAll(async () => {
  address = `127.0.0.1:${await server.listen("127.0.0.1", 0)}`
})

afterAll(() => server.close())

const bytes = (buffer: Buffer) => buffer

/** A grpc-js client of `service`'s methods, every message passed as its bytes. */
const clientOf = (service: string, methods: Readonly<Record<string, { readonly streaming: boolean }>>) =>
  grpc.makeGenericClientConstructor(
    Object.fromEntries(
      Object.entries(methods).map(([name, { streaming }]) => [name, {
        path: `/${service}/${name}`,
        requestStream: false,
        responseStream: streaming,
        requestSerialize: bytes,
        requestDeserialize: bytes,
        responseSerialize: bytes,
        responseDeserialize: bytes
      }])
    ),
    service
  )

const UNARY = { streaming: false }
const Client = clientOf("test.Service", { Echo: UNARY, Fail: UNARY, Hang: UNARY, Stream: { streaming: true } })

type UnaryMethod = (
  request: Buffer,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  done: (error: grpc.ServiceError | null, answer?: Buffer) => void
) => grpc.ClientUnaryCall

const unary = (
  method: "Echo" | "Fail" | "Hang",
  request: string,
  { metadata = new grpc.Metadata(), options = {}, compress = false }: {
    metadata?: grpc.Metadata
    options?: grpc.CallOptions
    compress?: boolean
  } = {}
) => {
  const client = new Client(address, grpc.credentials.createInsecure(), compress ? { "grpc.default_compression_algorithm": 2 } : {})
  let call: grpc.ClientUnaryCall | undefined
  const answer = new Promise<Buffer>((resolve, reject) => {
    call = (client[method] as UnaryMethod).call(client, Buffer.from(request), metadata, options, (error, answer) => {
      client.close()
      return error === null ? resolve(answer!) : reject(error)
    })
  })
  return { answer, cancel: () => call!.cancel() }
}

const rejection = (promise: Promise<unknown>) => promise.then(() => expect.fail("the call succeeded"), (error: grpc.ServiceError) => error)

/** Resolves once `check` holds, polling; rejects after `ms`. */
const eventually = async (check: () => boolean, ms = 5000) => {
  const until = Date.now() + ms
  while (!check()) {
    if (Date.now() > until) throw new Error("timed out")
    await new Promise((resolve) => setTimeout(resolve, 10))
  }
}

describe("the grpc-js client", () => {
  it("gets a unary answer, and a streamed one message by message to its end", async () => {
    expect((await unary("Echo", "hello").answer).toString()).toBe("hello")
    const client = new Client(address, grpc.credentials.createInsecure())
    const stream = (client["Stream"] as (r: Buffer) => grpc.ClientReadableStream<Buffer>).call(client, Buffer.from("one two three"))
    const words: Array<string> = []
    stream.on("data", (word: Buffer) => words.push(word.toString()))
    const status = await new Promise<grpc.StatusObject>((resolve) => stream.on("status", resolve))
    client.close()
    expect(words).toEqual(["one", "two", "three"])
    expect(status.code).toBe(grpc.status.OK)
  })

  it("reads an error's code, its percent-encoded message and its binary details", async () => {
    const failed = await rejection(unary("Fail", "no such task: 50% ✓").answer)
    expect(failed.code).toBe(grpc.status.NOT_FOUND)
    expect(failed.details).toBe("no such task: 50% ✓")
    const metadata = new grpc.Metadata()
    metadata.set("x-refuse", "yes")
    const refused = await rejection(unary("Echo", "hi", { metadata }).answer)
    expect(refused.code).toBe(grpc.status.PERMISSION_DENIED)
    expect(refused.details).toBe("refused: 100% ✗")
    expect(refused.metadata.get("grpc-status-details-bin")).toEqual([Buffer.from([1, 2, 3, 250])])
  })

  it("sends gzip-compressed messages, which are read", async () => {
    expect((await unary("Echo", "squeezed ".repeat(50), { compress: true }).answer).toString()).toBe("squeezed ".repeat(50))
  })

  it("cancels a call, and the handler learns it", async () => {
    const call = unary("Hang", "cancel me")
    await new Promise((resolve) => setTimeout(resolve, 100))
    call.cancel()
    expect((await rejection(call.answer)).code).toBe(grpc.status.CANCELLED)
    await eventually(() => cancelled.includes("cancel me"))
  })

  it("has its deadline kept by the server: DEADLINE_EXCEEDED, the handler's work cancelled", async () => {
    const call = unary("Hang", "too late", { options: { deadline: Date.now() + 300 } })
    expect((await rejection(call.answer)).code).toBe(grpc.status.DEADLINE_EXCEEDED)
    await eventually(() => cancelled.includes("too late"))
  })

  it("is refused UNIMPLEMENTED for a method the handler does not serve", async () => {
    const other = clientOf("other.Service", { Nope: UNARY })
    const nope = new other(address, grpc.credentials.createInsecure())
    const error = await rejection(
      new Promise((resolve, reject) =>
        (nope["Nope"] as UnaryMethod).call(nope, Buffer.from("x"), new grpc.Metadata(), {}, (error, answer) => {
          nope.close()
          return error === null ? resolve(answer) : reject(error)
        })
      )
    )
    expect(error.code).toBe(grpc.status.UNIMPLEMENTED)
  })
})

// ---------------------------------------------------------------------------
// A raw HTTP/2 client

const frame = (message: Buffer, compressed = false) => {
  const prefix = Buffer.alloc(5)
  prefix[0] = compressed ? 1 : 0
  prefix.writeUInt32BE(message.length, 1)
  return Buffer.concat([prefix, message])
}

interface RawAnswer {
  readonly headers: http2.IncomingHttpHeaders
  readonly trailers: http2.IncomingHttpHeaders
  readonly data: Buffer
}

/**
 * One request with `headers` and `body` (the gRPC ones by default); what came back, within 5 s. With
 * `apartMs`, each piece of the body goes in a DATA frame of its own, that long after the one before.
 */
const raw = (body: ReadonlyArray<Buffer>, headers: http2.OutgoingHttpHeaders = {}, path = "/test.Service/Echo", apartMs = 0) =>
  new Promise<RawAnswer>((resolve, reject) => {
    const session = http2.connect(`http://${address}`)
    const timer = setTimeout(() => reject(new Error("no answer within 5 s")), 5000)
    const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers", ...headers })
    let answer: http2.IncomingHttpHeaders = {}
    let trailers: http2.IncomingHttpHeaders = {}
    const data: Array<Buffer> = []
    stream.on("response", (h) => (answer = h))
    stream.on("trailers", (t) => (trailers = t))
    stream.on("data", (chunk: Buffer) => data.push(chunk))
    stream.on("error", () => {})
    stream.on("close", () => {
      clearTimeout(timer)
      session.close()
      resolve({ headers: answer, trailers, data: Buffer.concat(data) })
    })
    const send = async () => {
      for (const [index, chunk] of body.entries()) {
        if (index > 0 && apartMs > 0) await new Promise((later) => setTimeout(later, apartMs))
        stream.write(chunk)
      }
      stream.end()
    }
    void send()
  })

/** A call's status: in the trailers, or in the headers of a trailers-only answer. */
const statusOf = (answer: RawAnswer) => Number(answer.trailers["grpc-status"] ?? answer.headers["grpc-status"])

describe("a raw HTTP/2 client", () => {
  it("allows a bounded number of calls at once on one connection", async () => {
    const session = http2.connect(`http://${address}`)
    try {
      const settings = await new Promise<http2.Settings>((resolve) => session.once("remoteSettings", resolve))
      expect(settings.maxConcurrentStreams).toBe(256)
    } finally {
      session.close()
    }
  })

  it("gets 415 for a request that is not gRPC", async () => {
    const answer = await raw([Buffer.from("{}")], { "content-type": "application/json" })
    expect(answer.headers[":status"]).toBe(415)
  })

  it("is refused a second message, no message, or a message cut short", async () => {
    const two = await raw([frame(Buffer.from("a")), frame(Buffer.from("b"))])
    expect(statusOf(two)).toBe(GRPC_STATUS.UNIMPLEMENTED)
    expect(statusOf(await raw([]))).toBe(GRPC_STATUS.UNIMPLEMENTED)
    const cut = frame(Buffer.from("hello")).subarray(0, 7)
    expect(statusOf(await raw([cut]))).toBe(GRPC_STATUS.INTERNAL)
  })

  it("refuses a message whose announced length is over the limit, before the rest arrives", async () => {
    const prefix = Buffer.alloc(5)
    prefix.writeUInt32BE(MAX_BYTES + 1, 1)
    const answer = await raw([prefix])
    expect(statusOf(answer)).toBe(GRPC_STATUS.RESOURCE_EXHAUSTED)
    expect(answer.headers["grpc-message"]).toContain(`larger than ${MAX_BYTES} bytes`)
    // The prefix in three frames (2 + 2 + 1 bytes) is read as one.
    const split = await raw([prefix.subarray(0, 2), prefix.subarray(2, 4), prefix.subarray(4)], {}, "/test.Service/Echo", 30)
    expect(statusOf(split)).toBe(GRPC_STATUS.RESOURCE_EXHAUSTED)
    expect(split.headers["grpc-message"]).toContain(`message is larger than ${MAX_BYTES} bytes`)
  })

  it("refuses a compressed message that inflates past the limit, and an encoding it does not know", async () => {
    const bomb = zlib.gzipSync(Buffer.alloc(MAX_BYTES * 4))
    expect(statusOf(await raw([frame(bomb, true)], { "grpc-encoding": "gzip" }))).toBe(GRPC_STATUS.RESOURCE_EXHAUSTED)
    const answer = await raw([frame(Buffer.from("x"), true)], { "grpc-encoding": "snappy" })
    expect(statusOf(answer)).toBe(GRPC_STATUS.UNIMPLEMENTED)
    // What it takes instead, so that the client can fall back (grpc's compression.md).
    expect(answer.headers["grpc-accept-encoding"]).toBe("identity,deflate,gzip")
    const deflated = await raw([frame(zlib.deflateSync(Buffer.from("deflated")), true)], { "grpc-encoding": "deflate" })
    expect(deflated.data.subarray(5).toString()).toBe("deflated")
  })

  it("refuses a message marked compressed without a compression named, or with a flag other than 0 or 1: INTERNAL", async () => {
    const gzipped = zlib.gzipSync(Buffer.from("x"))
    expect(statusOf(await raw([frame(gzipped, true)]))).toBe(GRPC_STATUS.INTERNAL)
    expect(statusOf(await raw([frame(gzipped, true)], { "grpc-encoding": "identity" }))).toBe(GRPC_STATUS.INTERNAL)
    const flagged = frame(Buffer.from("x"))
    flagged[0] = 7
    const odd = await raw([flagged])
    expect(statusOf(odd)).toBe(GRPC_STATUS.INTERNAL)
    expect(odd.headers["grpc-message"]).toContain("compressed flag is 7")
  })

  it("takes a grpc-timeout longer than a node timer holds (30 days, as grpc-js writes it) as no deadline", async () => {
    for (const timeout of ["2592000S", "99999999H"]) {
      const answer = await raw([frame(Buffer.from("in time"))], { "grpc-timeout": timeout }, "/test.Service/Later")
      expect(statusOf(answer)).toBe(GRPC_STATUS.OK)
      expect(answer.data).toEqual(frame(Buffer.from("in time")))
    }
  })

  it("refuses a malformed grpc-timeout, and keeps a well-formed one without the client's help", async () => {
    expect(statusOf(await raw([frame(Buffer.from("x"))], { "grpc-timeout": "soon" }))).toBe(GRPC_STATUS.INTERNAL)
    const began = Date.now()
    const late = await raw([frame(Buffer.from("raw deadline"))], { "grpc-timeout": "200m" }, "/test.Service/Hang")
    expect(statusOf(late)).toBe(GRPC_STATUS.DEADLINE_EXCEEDED)
    expect(Date.now() - began).toBeGreaterThanOrEqual(180)
    await eventually(() => cancelled.includes("raw deadline"))
  })

  it("ends a stream that outlives its grpc-timeout with DEADLINE_EXCEEDED in the trailers, after what was sent", async () => {
    const answer = await raw([frame(Buffer.from("first"))], { "grpc-timeout": "200m" }, "/test.Service/Trickle")
    expect(answer.data).toEqual(frame(Buffer.from("first")))
    expect(answer.trailers["grpc-status"]).toBe(String(GRPC_STATUS.DEADLINE_EXCEEDED))
    await eventually(() => cancelled.includes("first"))
  })

  it("answers in frames with the status in trailers, and unpadded base64 details", async () => {
    const answer = await raw([frame(Buffer.from("framed"))])
    expect(answer.headers["content-type"]).toBe("application/grpc+proto")
    expect(answer.data).toEqual(frame(Buffer.from("framed")))
    expect(answer.trailers["grpc-status"]).toBe("0")
    const refused = await raw([frame(Buffer.from("x"))], { "x-refuse": "1" })
    expect(refused.headers["grpc-status-details-bin"]).toBe(Buffer.from([1, 2, 3, 250]).toString("base64").replace(/=+$/, ""))
    expect(refused.headers["grpc-message"]).toBe("refused: 100%25 %E2%9C%97")
  })
})

describe("a connection", () => {
  const IDLE_MS = 300
  const idling = makeGrpcServer({ serves: () => true, refuse: () => undefined, handle: (call, message) => call.reply(message) }, {
    maxMessageBytes: MAX_BYTES,
    requestMs: REQUEST_MS,
    idleMs: IDLE_MS
  })
  let idlingAddress: string
  beforeAll(async () => {
    idlingAddress = `127.0.0.1:${await idling.listen("127.0.0.1", 0)}`
  })
  afterAll(() => idling.close())

  /** Resolves once `session` is told to go away; rejects after `ms`. */
  const goaway = (session: http2.ClientHttp2Session, ms: number) =>
    new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no GOAWAY within ${ms} ms`)), ms)
      session.once("goaway", () => {
        clearTimeout(timer)
        resolve()
      })
    })

  it("is closed once its calls have ended and none opens for the idle time, again and again", async () => {
    const session = http2.connect(`http://${idlingAddress}`)
    try {
      for (const word of ["one", "two"]) {
        const stream = session.request({
          ":method": "POST",
          ":path": "/test.Service/Echo",
          "content-type": "application/grpc",
          te: "trailers"
        })
        stream.resume()
        stream.end(frame(Buffer.from(word)))
        await new Promise((closed) => stream.once("close", closed))
      }
      const began = performance.now()
      await goaway(session, IDLE_MS * 10)
      expect(performance.now() - began).toBeGreaterThanOrEqual(IDLE_MS * 0.9)
    } finally {
      session.destroy()
    }
  })
})

describe("a closing server", () => {
  const handled: Array<string> = []
  const stopped: Array<string> = []
  const closing = makeGrpcServer({
    serves: () => true,
    refuse: () => undefined,
    handle: (call, message) => {
      handled.push(message.toString())
      if (call.path === "/test.Service/Trickle") call.write(message)
      call.onCancel(() => stopped.push(message.toString()))
    }
  }, { maxMessageBytes: MAX_BYTES, requestMs: REQUEST_MS, idleMs: 10_000 })

  /** A call on `session` whose answer, status and all, comes back by its close (within 5 s). */
  const open = (session: http2.ClientHttp2Session, path: string, text: string) =>
    new Promise<RawAnswer>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("no answer within 5 s")), 5000)
      const stream = session.request({ ":method": "POST", ":path": path, "content-type": "application/grpc", te: "trailers" })
      let headers: http2.IncomingHttpHeaders = {}
      let trailers: http2.IncomingHttpHeaders = {}
      const data: Array<Buffer> = []
      stream.on("response", (h) => (headers = h))
      stream.on("trailers", (t) => (trailers = t))
      stream.on("data", (chunk: Buffer) => data.push(chunk))
      stream.on("error", () => {})
      stream.on("close", () => {
        clearTimeout(timer)
        resolve({ headers, trailers, data: Buffer.concat(data) })
      })
      stream.end(frame(Buffer.from(text)))
    })

  it("ends the calls in flight UNAVAILABLE, as gRPC says of a server shutting down, and stops their work", async () => {
    const session = http2.connect(`http://127.0.0.1:${await closing.listen("127.0.0.1", 0)}`)
    session.on("error", () => {})
    try {
      const waiting = open(session, "/test.Service/Hang", "waiting")
      const streaming = open(session, "/test.Service/Trickle", "streaming")
      await eventually(() => handled.length === 2)
      closing.close()
      const [unanswered, answering] = await Promise.all([waiting, streaming])
      // Nothing sent yet: trailers-only; a stream: its messages, then the status in its trailers.
      expect(statusOf(unanswered)).toBe(GRPC_STATUS.UNAVAILABLE)
      expect(answering.data).toEqual(frame(Buffer.from("streaming")))
      expect(answering.trailers["grpc-status"]).toBe(String(GRPC_STATUS.UNAVAILABLE))
      expect(answering.trailers["grpc-message"]).toBe("The server is shutting down")
      await eventually(() => stopped.includes("waiting") && stopped.includes("streaming"))
    } finally {
      session.destroy()
    }
  })
})

/** The bytes of V8's old space in use: what survived collections, without the young garbage that has not been collected yet. */
const oldSpaceUsed = () => v8.getHeapSpaceStatistics().find((space) => space.space_name === "old_space")!.space_used_size

describe("a request in many DATA frames", () => {
  const MESSAGE_BYTES = 1024 * 1024
  let keptWhenRead = 0
  let readBytes = 0
  const large = makeGrpcServer({
    serves: () => true,
    refuse: () => undefined,
    handle: (call, message) => {
      // Measured while the request is still held: whatever the door kept of its frames is still here.
      keptWhenRead = oldSpaceUsed()
      readBytes = message.length
      call.reply(Buffer.alloc(0))
    }
  }, { maxMessageBytes: MESSAGE_BYTES, requestMs: 30_000, idleMs: 10_000 })

  /** An HTTP/2 frame: its length, type, flags and stream, then `payload`. */
  const h2Frame = (type: number, flags: number, stream: number, payload: Buffer) => {
    const header = Buffer.alloc(9)
    header.writeUIntBE(payload.length, 0, 3)
    header[3] = type
    header[4] = flags
    header.writeUInt32BE(stream, 5)
    return Buffer.concat([header, payload])
  }
  /** A header field as an HPACK literal without indexing (names and values under 128 bytes). */
  const literal = (name: string, value: string) =>
    Buffer.concat([Buffer.from([0, name.length]), Buffer.from(name), Buffer.from([value.length]), Buffer.from(value)])

  it("holds a message sent a byte per frame in memory of the order of its size", async () => {
    const port = await large.listen("127.0.0.1", 0)
    const socket = net.connect(port, "127.0.0.1")
    socket.on("error", () => {})
    try {
      const headers = Buffer.concat([
        literal(":method", "POST"),
        literal(":scheme", "http"),
        literal(":path", "/test.Service/Echo"),
        literal(":authority", "localhost"),
        literal("content-type", "application/grpc"),
        literal("te", "trailers")
      ])
      const prefix = Buffer.alloc(5)
      prefix.writeUInt32BE(MESSAGE_BYTES, 1)
      const keptBefore = oldSpaceUsed()
      socket.write(Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"))
      socket.write(h2Frame(4, 0, 0, Buffer.alloc(0))) // SETTINGS
      socket.write(h2Frame(1, 4, 1, headers)) // HEADERS, END_HEADERS
      socket.write(h2Frame(0, 0, 1, prefix))
      const byte = Buffer.from("a")
      // The message a byte per DATA frame, the last one with END_STREAM; paced by the socket.
      for (let sent = 1; sent <= MESSAGE_BYTES; sent++) {
        if (!socket.write(h2Frame(0, sent === MESSAGE_BYTES ? 1 : 0, 1, byte))) {
          await new Promise((drained) => socket.once("drain", drained))
        }
      }
      await eventually(() => readBytes > 0, 30_000)
      expect(readBytes).toBe(MESSAGE_BYTES)
      // A Buffer kept per frame would hold many times the message's size.
      expect(keptWhenRead - keptBefore).toBeLessThan(16 * MESSAGE_BYTES)
    } finally {
      socket.destroy()
      large.close()
    }
  })
})
