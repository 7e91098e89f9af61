// Streaming: `relay server agent -m mock` streams "stream 200 every 0ms" (200 artifact chunks
// with no pause between them) over JSON-RPC SendStreamingMessage (A2A 1.0); the client records
// when each SSE event arrives.
//
// - Time to first event: from sending the request to the first SSE event (the task).
// - Per chunk: with the model pausing 0 ms, the time between the first and the last chunk at the
//   client, divided by the gaps between them, is all the time a chunk costs between the model and
//   the client (relay's task store, encoding, SSE framing, loopback TCP and the client's parsing):
//   an upper bound of what relay adds per chunk, with the model's own pace taken out. Single
//   inter-arrival gaps are not used for the goal: chunks that arrive in one TCP read have a gap of
//   about 0, which would flatter the figure. The figure is the median over the runs.
// The same is measured on a bare node:http SSE server writing the same events (the floor).
//
//   BENCH_STREAM_RUNS  streams per server (default 20)
import { randomUUID } from "node:crypto"
import { request } from "node:http"
import { join } from "node:path"
import { benchDir, progress, startRelayAgent, startServer, withTimeout } from "./support/processes.mjs"
import { median } from "./support/stats.mjs"

const runs = Number(process.env.BENCH_STREAM_RUNS ?? 20)
const CHUNKS = 200
const TIMEOUT_MS = 30_000

const streamRequest = () =>
  JSON.stringify({
    jsonrpc: "2.0",
    id: 1,
    method: "SendStreamingMessage",
    params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: `stream ${CHUNKS} every 0ms` }] } }
  })

/** Posts `body` to `url` and resolves with the arrival time (ms since sending) of every SSE event. */
const readStream = (url, body) =>
  new Promise((resolve, reject) => {
    const start = process.hrtime.bigint()
    const events = []
    let buffered = ""
    const req = request(url, {
      method: "POST",
      headers: { "content-type": "application/json", "a2a-version": "1.0", accept: "text/event-stream" }
    }, (response) => {
      if (response.statusCode !== 200) reject(new Error(`${url} answered ${response.statusCode}`))
      response.setEncoding("utf8")
      response.on("data", (text) => {
        const at = Number(process.hrtime.bigint() - start) / 1e6
        buffered += text
        let end
        while ((end = buffered.indexOf("\n\n")) >= 0) {
          const frame = buffered.slice(0, end)
          buffered = buffered.slice(end + 2)
          const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("\n")
          if (data !== "") events.push({ at, result: JSON.parse(data).result })
        }
      })
      response.on("end", () => resolve(events))
      response.on("error", reject)
    })
    req.on("error", reject)
    req.end(body)
  })

/** One stream: time to first event and the time per chunk, after checking every chunk came. */
const measureStream = async (url) => {
  const events = await withTimeout(readStream(url, streamRequest()), TIMEOUT_MS, `stream from ${url}`)
  const chunks = events.filter((event) => event.result?.artifactUpdate !== undefined)
  const last = events.at(-1)?.result?.statusUpdate?.status?.state
  if (chunks.length !== CHUNKS || last !== "TASK_STATE_COMPLETED") {
    throw new Error(`${url}: ${chunks.length} of ${CHUNKS} chunks, last state ${last}`)
  }
  const gaps = chunks.slice(1).map((chunk, index) => chunk.at - chunks[index].at)
  return { firstEvent: events[0].at, perChunk: (chunks.at(-1).at - chunks[0].at) / (CHUNKS - 1), gapMedian: median(gaps) }
}

const row = (id, label, value, detail, ratios = [], goal) => ({ id, group: "Streaming", label, value, unit: "ms", detail, ratios, goal })

export const measure = async () => {
  progress("streaming: starting relay (mock) and the floor")
  const [relay, floor] = await Promise.all([
    startRelayAgent("mock"),
    startServer("floor server", process.execPath, [join(benchDir, "support", "floor-server.mjs")], {
      env: { ...process.env, FLOOR_STREAM_CHUNKS: String(CHUNKS) },
      findUrl: (text) => (text.includes("\n") ? text.slice(0, text.indexOf("\n")).trim() : undefined)
    })
  ])
  const targets = { relay: `${relay.url}/`, floor: `${floor.url}/stream` }
  // Warm-up: the first streams pay for compiling the code paths.
  for (let run = 0; run < 3; run++) for (const url of Object.values(targets)) await measureStream(url)
  const samples = { relay: [], floor: [] }
  for (let run = 0; run < runs; run++) {
    progress(`streaming: run ${run + 1}/${runs}`)
    const order = run % 2 === 0 ? ["relay", "floor"] : ["floor", "relay"]
    for (const name of order) samples[name].push(await measureStream(targets[name]))
  }
  const figure = (name, key) => median(samples[name].map((sample) => sample[key]))
  const detail = (name) => `median of ${runs}; single gaps p50 ${figure(name, "gapMedian").toFixed(3)} ms`
  return [
    row("streaming.first_event.floor", "node:http SSE, first event (floor)", figure("floor", "firstEvent"), `median of ${runs}`),
    row("streaming.first_event", "relay server agent -m mock, first SSE event", figure("relay", "firstEvent"), `median of ${runs}`, [{
      to: "floor",
      value: figure("relay", "firstEvent") / figure("floor", "firstEvent")
    }]),
    row("streaming.per_chunk.floor", `node:http SSE, per chunk of ${CHUNKS} (floor)`, figure("floor", "perChunk"), detail("floor")),
    row("streaming.per_chunk", `relay server agent -m mock, per chunk of ${CHUNKS}, pace 0`, figure("relay", "perChunk"), detail("relay"), [
      { to: "floor", value: figure("relay", "perChunk") / figure("floor", "perChunk") }
    ], { op: "<", limit: 1 })
  ]
}

export const settings = { runs, chunks: CHUNKS }
