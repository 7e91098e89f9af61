// Load over gRPC, where autocannon speaks only HTTP/1.1: `connections` calls kept in flight for
// `seconds`, spread over one HTTP/2 connection per CALLS_PER_CHANNEL of them (gRPC clients
// multiplex), each call the same request bytes to one unary method. The figures come in
// autocannon's shape (requests.average per second, latency p50/p99 in ms, errors) so a scenario
// runs either way.
import { BinaryWriter } from "@bufbuild/protobuf/wire"
import * as grpc from "@grpc/grpc-js"
import { percentile } from "./stats.mjs"

/** Calls that share one channel (one HTTP/2 connection). */
const CALLS_PER_CHANNEL = 8

const passBytes = (bytes) => bytes

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

/** Runs the load; resolves with autocannon-like figures. */
export const grpcLoad = ({ address, path, request, metadata = {}, connections, seconds }) =>
  new Promise((resolve) => {
    const channels = Array.from(
      { length: Math.ceil(connections / CALLS_PER_CHANNEL) },
      // Each its own connection: grpc-js would otherwise share one subchannel among them.
      () => new grpc.Client(address, grpc.credentials.createInsecure(), { "grpc.use_local_subchannel_pool": 1, "grpc.enable_channelz": 0 })
    )
    const md = new grpc.Metadata()
    for (const [key, value] of Object.entries(metadata)) md.set(key, value)
    const latencies = []
    let errors = 0
    let running = connections
    const start = performance.now()
    const end = start + seconds * 1000
    const finish = () => {
      const elapsed = (performance.now() - start) / 1000
      for (const channel of channels) channel.close()
      const ms = latencies.length === 0 ? [0] : latencies
      resolve({
        requests: { average: latencies.length / elapsed, total: latencies.length },
        latency: { p50: Math.round(percentile(ms, 0.5)), p99: Math.round(percentile(ms, 0.99)) },
        errors,
        timeouts: 0,
        non2xx: 0
      })
    }
    const callOnce = (channel) => {
      if (performance.now() >= end) {
        if (--running === 0) finish()
        return
      }
      const sent = performance.now()
      channel.makeUnaryRequest(path, passBytes, passBytes, request, md, { deadline: Date.now() + 30_000 }, (error) => {
        if (error) errors++
        else latencies.push(performance.now() - sent)
        callOnce(channel)
      })
    }
    for (let call = 0; call < connections; call++) callOnce(channels[call % channels.length])
  })
