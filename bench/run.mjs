// `npm run bench` (which builds dist/ first): runs every measurement in this run, prints one table
// of medians and ratios on stdout (progress goes to stderr) and writes bench/results/latest.json.
//
// Each measurement is one module beside this file, exporting `measure()`, which resolves with the
// rows of the table (their shape: support/report.mjs), and `settings`, recorded in the results.
//
// Exit code: 0 when every measurement ran, whether or not its goals were met (the table says);
// 1 when a measurement failed. Every child process is stopped at the end, whatever happened.
import { existsSync, mkdirSync, writeFileSync } from "node:fs"
import { cpus, loadavg } from "node:os"
import { join } from "node:path"
import * as agentServer from "./agent-server.mjs"
import * as mcpOverhead from "./mcp-overhead.mjs"
import * as memory from "./memory.mjs"
import * as startup from "./startup.mjs"
import * as streaming from "./streaming.mjs"
import { benchDir, progress, relayBin, stopAll } from "./support/processes.mjs"
import { goalsOf, renderTable } from "./support/report.mjs"
import * as webhook from "./webhook.mjs"

const ALL = [
  ["start-up", startup],
  ["memory", memory],
  ["agent server", agentServer],
  ["streaming", streaming],
  ["MCP overhead", mcpOverhead],
  ["webhook receiver", webhook]
]
// BENCH_ONLY="streaming,webhook receiver" runs only those (names as above), e.g. while working on one.
const only = process.env.BENCH_ONLY?.split(",").map((name) => name.trim())
const measurements = only === undefined ? ALL : ALL.filter(([name]) => only.includes(name))
const GROUP_ORDER = ["Start-up", "Memory", "Agent server", "Streaming", "MCP overhead", "Webhook receiver"]

const machine = () => ({
  cores: cpus().length,
  cpu_model: cpus()[0]?.model ?? "unknown",
  node: process.version,
  platform: `${process.platform} ${process.arch}`,
  load_average_at_start: loadavg().map((load) => Number(load.toFixed(2))),
  date: new Date().toISOString()
})

const startedAt = performance.now()

const main = async () => {
  if (!existsSync(relayBin)) throw new Error(`${relayBin} is missing: run "npm run build" (npm run bench does)`)
  const about = machine()
  const rows = []
  const failures = []
  for (const [name, module] of measurements) {
    progress(`${name}…`)
    try {
      rows.push(...(await module.measure()))
    } catch (error) {
      failures.push({ measurement: name, error: String(error?.stack ?? error) })
      progress(`${name} FAILED: ${error?.stack ?? error}`)
    } finally {
      // A failed measurement leaves nothing running for the next one.
      await stopAll()
    }
  }
  rows.sort((a, b) => GROUP_ORDER.indexOf(a.group) - GROUP_ORDER.indexOf(b.group))
  const goals = goalsOf(rows)
  process.stdout.write(`\n${renderTable(rows)}\n\n`)
  process.stdout.write(
    `${goals.filter((goal) => goal.pass).length} of ${goals.length} goals met; ` +
      `${about.cores} × ${about.cpu_model}, Node ${about.node}, ${about.date}\n`
  )
  for (const failure of failures) process.stdout.write(`FAILED: ${failure.measurement} (see stderr)\n`)
  const totalSeconds = (performance.now() - startedAt) / 1000
  process.stdout.write(`bench run took ${totalSeconds.toFixed(0)} s (after the build)\n`)

  const results = {
    machine: about,
    settings: Object.fromEntries(measurements.map(([name, module]) => [name, module.settings ?? {}])),
    figures: rows.map(({ ratios, goal, ...figure }) => figure),
    ratios: rows.flatMap((row) =>
      (row.ratios ?? []).map((ratio) => ({ id: `${row.id}/${ratio.to}`, of: row.id, to: ratio.to, value: ratio.value }))
    ),
    goals,
    failures,
    run_seconds: Number(totalSeconds.toFixed(1))
  }
  const resultsDir = join(benchDir, "results")
  mkdirSync(resultsDir, { recursive: true })
  writeFileSync(join(resultsDir, "latest.json"), `${JSON.stringify(results, null, 2)}\n`)
  progress(`wrote ${join(resultsDir, "latest.json")}`)
  return failures.length === 0 ? 0 : 1
}

try {
  process.exitCode = await main()
} catch (error) {
  progress(`failed: ${error?.stack ?? error}`)
  process.exitCode = 1
} finally {
  await stopAll()
}
