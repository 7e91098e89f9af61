// Load from h2load (nghttp2's load generator, Debian's `nghttp2-client`): a native client that
// speaks HTTP/2 (gRPC's transport) and HTTP/1.1 alike, and costs the shared cores next to nothing
// (~5 µs of CPU per request, where autocannon took ~35–50 and a node:http2 client ~110–180). The
// gRPC row and its JSON-RPC reference both run under it, so their ratio compares the servers alone.
// It is optional: without it the bench falls back to autocannon and support/grpcLoad.mjs, and says so.
//
// h2load judges an answer by its HTTP status, and gRPC answers 200 even when a call fails (the
// status is in `grpc-status`), so the caller checks what only a served call carries: its DATA bytes
// (`dataBytes`; a failed call is trailers-only, no DATA at all).
import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { exitOf, track } from "./processes.mjs"
import { percentile } from "./stats.mjs"

let installed

/** Whether `h2load` runs here (checked once). */
export const h2loadInstalled = () => (installed ??= spawnSync("h2load", ["--version"], { stdio: "ignore" }).status === 0)

const numberAfter = (text, pattern) => {
  const match = pattern.exec(text)
  if (match === null) throw new Error(`h2load printed no ${pattern}:\n${text}`)
  return Number(match[1])
}

/**
 * `clients` connections, each with `streams` requests in flight (HTTP/2; `h1` speaks HTTP/1.1,
 * one at a time), POSTing `body` with `headers` to `url` for `seconds`. Resolves with autocannon's
 * shape of figures (requests.average per second, latency p50/p99 in ms, failures) and `dataBytes`,
 * the answers' DATA bytes.
 */
export const h2load = async ({ url, headers, body, h1 = false, clients, streams, seconds }) => {
  const dir = mkdtempSync(join(tmpdir(), "relay-bench-h2load-"))
  try {
    const bodyFile = join(dir, "body")
    const logFile = join(dir, "log")
    writeFileSync(bodyFile, body)
    const args = [
      ...(h1 ? ["--h1"] : []),
      ["-t", "1"],
      ["-c", clients],
      ["-m", streams],
      ["-D", seconds],
      ["-d", bodyFile],
      ["--log-file", logFile],
      ...Object.entries(headers).map(([name, value]) => ["-H", `${name}: ${value}`]),
      url
    ].flat().map(String)
    const child = track("h2load", args, { stdio: ["ignore", "pipe", "pipe"] })
    let output = ""
    child.stdout.on("data", (chunk) => (output += chunk))
    child.stderr.on("data", (chunk) => (output += chunk))
    const code = await exitOf(child, (seconds + 30) * 1000, "h2load")
    if (code !== 0) throw new Error(`h2load exited with ${code}:\n${output}`)
    const done = numberAfter(output, /requests: \d+ total, \d+ started, (\d+) done/)
    const succeeded = numberAfter(output, /(\d+) succeeded/)
    // The log: one line per request, its start (µs), HTTP status and duration (µs).
    const latencies = readFileSync(logFile, "utf8").trim().split("\n").map((line) => Number(line.split("\t")[2]) / 1000)
    return {
      requests: { average: numberAfter(output, /finished in [^,]+, ([\d.]+) req\/s/), total: succeeded },
      latency: { p50: Math.round(percentile(latencies, 0.5)), p99: Math.round(percentile(latencies, 0.99)) },
      errors: numberAfter(output, /(\d+) errored/),
      timeouts: numberAfter(output, /(\d+) timeout/),
      non2xx: done - succeeded,
      dataBytes: numberAfter(output, /\((\d+)\) data/)
    }
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}
