// Load over gRPC when h2load (support/h2load.mjs) is not installed, where autocannon speaks only
// HTTP/1.1: `connections` calls kept in flight for
// `seconds`, spread over one HTTP/2 connection per CALLS_PER_SESSION of them (gRPC clients
// multiplex), each call the same request bytes to one unary method. Like autocannon, it is a bare
// client: gRPC's framing on node:http2 (a length-prefixed message, `grpc-status` in the trailers),
// not @grpc/grpc-js, whose client cost about as much CPU per call as the server it measured and
// shared the machine's cores with it. The figures come in autocannon's shape (requests.average per
// second, latency p50/p99 in ms, errors) so a scenario runs either way. Its own CPU (~110–180 µs
// a call, against autocannon's ~35–50 µs a request) is taken from the server's cores, which is why
// h2load is preferred.
import { BinaryWriter } from "@bufbuild/protobuf/wire"
import { connect } from "node:http2"
import { percentile } from "./stats.mjs"

/** Calls that share one HTTP/2 connection. */
const CALLS_PER_SESSION = 8

/**
 * The bytes of an lf.a2a.v1 SendMessageRequest with one text part from the user (a2a.proto:
 * SendMessageRequest.message = 2; Message.message_id = 1, role = 4, parts = 5; Part.text = 1).
 */
export const v1SendMessageBytes = (messageId, text) => {
  const part = new BinaryWriter().uint32((1 << 3) | 2).string(text).finish()
  const message = new BinaryWriter()
    .uint32((1 << 3) | 2).string(messageId)
    .uint32((4 << 3) | 0).int32(1) // ROLE_USER
    .uint32((5 << 3) | 2).bytes(part)
    .finish()
  return Buffer.from(new BinaryWriter().uint32((2 << 3) | 2).bytes(message).finish())
}

/** A gRPC message on the wire: not compressed (0), its length (big-endian), its bytes. */
export const framed = (message) => {
  const frame = Buffer.alloc(5 + message.length)
  frame.writeUInt32BE(message.length, 1)
  message.copy(frame, 5)
  return frame
}

/**
 * One call on `session`: `done(status, dataBytes)` once it closes, with its `grpc-status` (a
 * failed call answers with it in the headers, trailers-only; a served one in the trailers) and
 * the answer's bytes on the wire (gRPC frames).
 */
const unaryCall = (session, headers, body, done) => {
  const stream = session.request(headers)
  let status
  let dataBytes = 0
  stream.on("response", (response) => (status = response["grpc-status"]))
  stream.on("trailers", (trailers) => (status = trailers["grpc-status"]))
  stream.on("data", (chunk) => (dataBytes += chunk.length))
  stream.on("close", () => done(status, dataBytes))
  stream.end(body)
}

const callHeaders = (path, metadata) => ({
  ":method": "POST",
  ":path": path,
  "content-type": "application/grpc",
  te: "trailers",
  ...metadata
})

/** One call on a connection of its own: resolves with its `grpc-status` and its answer's bytes on the wire. */
export const grpcCall = ({ address, path, request, metadata = {} }) =>
  new Promise((resolve, reject) => {
    const session = connect(`http://${address}`)
    session.on("error", reject)
    unaryCall(session, callHeaders(path, metadata), framed(request), (status, dataBytes) => {
      session.close()
      resolve({ status, dataBytes })
    })
  })

/** Runs the load; resolves with autocannon-like figures. */
export const grpcLoad = ({ address, path, request, metadata = {}, connections, seconds }) =>
  new Promise((resolve, reject) => {
    const sessions = Array.from({ length: Math.ceil(connections / CALLS_PER_SESSION) }, () => connect(`http://${address}`))
    for (const session of sessions) session.on("error", reject)
    const headers = callHeaders(path, metadata)
    const body = framed(request)
    const latencies = []
    let errors = 0
    let running = connections
    const start = performance.now()
    const end = start + seconds * 1000
    const finish = () => {
      const elapsed = (performance.now() - start) / 1000
      for (const session of sessions) session.close()
      const ms = latencies.length === 0 ? [0] : latencies
      resolve({
        requests: { average: latencies.length / elapsed, total: latencies.length },
        latency: { p50: Math.round(percentile(ms, 0.5)), p99: Math.round(percentile(ms, 0.99)) },
        errors,
        timeouts: 0,
        non2xx: 0
      })
    }
    const callOnce = (session) => {
      if (performance.now() >= end) {
        if (--running === 0) finish()
        return
      }
      const sent = performance.now()
      unaryCall(session, headers, body, (status) => {
        if (status === "0") latencies.push(performance.now() - sent)
        else errors++
        callOnce(session)
      })
    }
    for (let call = 0; call < connections; call++) callOnce(sessions[call % sessions.length])
  })
