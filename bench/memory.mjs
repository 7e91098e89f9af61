// Memory: resident memory (VmRSS) of an idle `relay mcp` on stdio, once it has answered
// initialize + tools/list and settled for a second. (The agent server's is read in
// agent-server.mjs, right after its throughput run.)
//
//   BENCH_MEMORY_RUNS  processes sampled (default 3); the figure is their median
import { initializeAndListTools } from "./support/mcpStdio.mjs"
import { progress, relayBin, relayEnv, residentBytes, sleep, stop, tempRelayHome, track } from "./support/processes.mjs"
import { median } from "./support/stats.mjs"

const runs = Number(process.env.BENCH_MEMORY_RUNS ?? 3)
const SETTLE_MS = 1_000
export const settings = { runs, settleMs: SETTLE_MS }
export const GOAL_MB = 80

/** The row of a resident-memory figure, with the ≤ 80 MB goal unless `goal` is false (a reference). */
export const memoryRow = (id, label, bytes, detail, { goal = true, ratios } = {}) => ({
  id,
  group: "Memory",
  label,
  value: bytes / 1024 ** 2,
  unit: "MB",
  detail,
  ...(goal ? { goal: { op: "<=", limit: GOAL_MB } } : {}),
  ...(ratios === undefined ? {} : { ratios })
})

const idleMcpBytes = async () => {
  const child = track(process.execPath, [relayBin, "mcp"], { stdio: ["pipe", "pipe", "ignore"], env: relayEnv(tempRelayHome()) })
  try {
    await initializeAndListTools(child)
    await sleep(SETTLE_MS)
    return residentBytes(child.pid)
  } finally {
    child.stdin.end()
    await stop(child)
  }
}

export const measure = async () => {
  const samples = []
  for (let run = 0; run < runs; run++) {
    progress(`memory: idle relay mcp ${run + 1}/${runs}`)
    samples.push(await idleMcpBytes())
  }
  return [memoryRow("memory.mcp_idle", "relay mcp, idle (after tools/list)", median(samples), `VmRSS, median of ${runs}`)]
}
