// Start-up: how long a command takes from spawn to exit, against the platform floor `node -e ""`
// and against what the stack allows: a minimal CLI of effect + @effect/cli + @effect/platform-node
// (bench/fixtures/minimal-cli.ts, bundled like relay), printing one line through NodeRuntime.runMain.
// The commands take turns, each round in a rotated order, so a busy moment on the machine hits
// them all alike; each figure is the median of its runs. `relay completions bash` runs in every new
// shell that sources it: its goal is against `relay --version`.
//
//   BENCH_STARTUP_RUNS  runs of each command (default 10)
import { join } from "node:path"
import { initializeAndListTools } from "./support/mcpStdio.mjs"
import { buildMinimalCli } from "./support/minimalCli.mjs"
import { benchDir, exitOf, progress, relayBin, relayEnv, stop, tempRelayHome, track } from "./support/processes.mjs"
import { elapsedMs, median } from "./support/stats.mjs"

const runs = Number(process.env.BENCH_STARTUP_RUNS ?? 10)
export const settings = { runs }
const TIMEOUT_MS = 30_000
const validCard = join(benchDir, "fixtures", "valid-card.json")

/** Runs a command to its end; resolves with the milliseconds from spawn to exit. */
const timeCommand = async (args, env) => {
  const start = process.hrtime.bigint()
  const child = track(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"], env })
  let stderr = ""
  child.stdout.resume()
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const code = await exitOf(child, TIMEOUT_MS, args.join(" "))
  const ms = elapsedMs(start)
  if (code !== 0) throw new Error(`${args.join(" ")} exited with ${code}:\n${stderr}`)
  return ms
}

/** Spawns `relay mcp` on stdio; resolves with the milliseconds until it answered tools/list. */
const timeMcpToolsList = async (env) => {
  const start = process.hrtime.bigint()
  const child = track(process.execPath, [relayBin, "mcp"], { stdio: ["pipe", "pipe", "ignore"], env })
  try {
    await initializeAndListTools(child, TIMEOUT_MS)
    return elapsedMs(start)
  } finally {
    child.stdin.end()
    await stop(child)
  }
}

export const measure = async () => {
  const env = relayEnv(tempRelayHome())
  const minimalCli = await buildMinimalCli()
  const commands = [
    { id: "startup.floor", label: "node -e \"\"", time: () => timeCommand(["-e", ""], env) },
    { id: "startup.minimal_effect", label: "minimal Effect CLI (reference)", time: () => timeCommand([minimalCli], env) },
    { id: "startup.version", label: "relay --version", goal: 2.0, time: () => timeCommand([relayBin, "--version"], env) },
    { id: "startup.session_list", label: "relay session list", goal: 2.0, time: () => timeCommand([relayBin, "session", "list"], env) },
    {
      id: "startup.completions_bash",
      label: "relay completions bash",
      versionGoal: 2.0,
      time: () => timeCommand([relayBin, "completions", "bash"], env)
    },
    {
      id: "startup.card_validate",
      label: "relay card validate --file",
      time: () => timeCommand([relayBin, "card", "validate", "--file", validCard], env)
    },
    { id: "startup.mcp_tools_list", label: "relay mcp: initialize + tools/list", goal: 3.0, time: () => timeMcpToolsList(env) }
  ]
  const samples = new Map(commands.map((command) => [command.id, []]))
  for (let round = 0; round < runs; round++) {
    progress(`start-up round ${round + 1}/${runs}`)
    for (let turn = 0; turn < commands.length; turn++) {
      const command = commands[(round + turn) % commands.length]
      samples.get(command.id).push(await command.time())
    }
  }
  const floor = median(samples.get("startup.floor"))
  const minimal = median(samples.get("startup.minimal_effect"))
  const version = median(samples.get("startup.version"))
  const REFERENCES = new Set(["startup.floor", "startup.minimal_effect"])
  return commands.map((command) => {
    const value = median(samples.get(command.id))
    const toFloor = { to: "floor", value: value / floor, goal: command.goal === undefined ? undefined : { op: "<=", limit: command.goal } }
    return {
      id: command.id,
      group: "Start-up",
      label: command.label,
      value,
      unit: "ms",
      detail: `median of ${runs}${command.id === "startup.floor" ? ", the floor" : ""}`,
      ratios: command.id === "startup.floor"
        ? []
        : REFERENCES.has(command.id)
        ? [toFloor]
        : [
          toFloor,
          { to: "minimal Effect CLI", value: value / minimal },
          ...(command.versionGoal === undefined
            ? []
            : [{ to: "relay --version", value: value / version, goal: { op: "<=", limit: command.versionGoal } }])
        ]
    }
  })
}
