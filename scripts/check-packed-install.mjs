// Packs relay, installs the tarball globally into a temporary prefix and runs the installed copy
// with only Node on PATH, under this Node and under each `--node VERSION` (the npm registry's
// node-<platform>-<arch> package, so no download beyond the registry; kept in a cache folder):
// --version, session list, doctor --json (exit 0 or 1, valid JSON naming that Node), a stdio
// tools/list, a message sent to `relay server agent`, and the MCP client entry naming the
// installed `relay`. Used by .ci/run: `node scripts/check-packed-install.mjs --node 22.23.3 --node 24.21.0`.
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { parseArgs } from "node:util"
import { nodeBinary } from "./nodeBinary.mjs"

const root = Path.resolve(import.meta.dirname, "..")
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-pack-"))
const { values: options } = parseArgs({ options: { node: { type: "string", multiple: true, default: [] } } })
const fail = (message) => {
  console.error(`packed install: ${message}`)
  process.exit(1)
}

/** Resolves with what `relay mcp` answers to tools/list over stdio; anything but JSON-RPC on stdout throws. */
const listToolsOverStdio = (relay, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(relay, ["mcp"], { cwd: work, env, stdio: ["pipe", "pipe", "ignore"] })
    const timer = setTimeout(() => (child.kill(), reject(new Error("no tools/list answer within 30 s"))), 30_000)
    let buffered = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop()
      for (const line of lines) {
        const message = JSON.parse(line)
        if (message.id === 2) {
          clearTimeout(timer)
          child.kill()
          resolve(message.result.tools)
        }
      }
    })
    child.stdin.write(
      [
        {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ci", version: "1" } }
        },
        { jsonrpc: "2.0", method: "notifications/initialized" },
        { jsonrpc: "2.0", id: 2, method: "tools/list" }
      ].map((message) => JSON.stringify(message)).join("\n") + "\n"
    )
  })

/** Starts `relay server agent` (echo model, port 0) and resolves with the child and the URL it prints first. */
const startAgent = (relay, env) =>
  new Promise((resolve, reject) => {
    const child = spawn(relay, ["server", "agent", "--host", "127.0.0.1", "--port", "0", "-m", "echo", "--json"], {
      cwd: work,
      env,
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stderr = ""
    const timer = setTimeout(() => (child.kill(), reject(new Error(`relay server agent printed no URL within 30 s: ${stderr}`))), 30_000)
    child.stderr.setEncoding("utf8").on("data", (chunk) => (stderr += chunk))
    let stdout = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      stdout += chunk
      if (!stdout.includes("\n")) return
      clearTimeout(timer)
      resolve({ child, url: JSON.parse(stdout.split("\n")[0]).url })
    })
    child.once("exit", (code) => reject(new Error(`relay server agent exited ${code}: ${stderr}`)))
  })

/** Runs the installed relay under one `node` binary (first on PATH) with a state directory of its own. */
const smoke = async (prefix, node, expectedVersion) => {
  const started = performance.now()
  const nodeVersion = execFileSync(node, ["--version"], { encoding: "utf8" }).trim().slice(1)
  const relay = Path.join(prefix, "bin", "relay")
  const home = Fs.mkdtempSync(Path.join(work, `node-${nodeVersion}-`))
  // Only this Node (and the installed relay) first on PATH; run outside the repository so nothing resolves from it.
  const env = {
    PATH: [Path.join(prefix, "bin"), Path.dirname(node), "/usr/bin", "/bin"].join(Path.delimiter),
    HOME: Path.join(home, "home"),
    RELAY_HOME: Path.join(home, "state"),
    NO_COLOR: "1"
  }
  const run = (args) => spawnSync(relay, args, { cwd: work, env, encoding: "utf8", timeout: 120_000 })
  const under = `under Node ${nodeVersion}`

  const version = run(["--version"])
  if (version.status !== 0 || !version.stdout.includes(expectedVersion)) {
    fail(`--version ${under}: ${version.status} ${version.stdout}${version.stderr}`)
  }

  const empty = run(["session", "list", "--json"])
  if (empty.status !== 0 || JSON.parse(empty.stdout).count !== 0) {
    fail(`session list ${under}: ${empty.status} ${empty.stdout}${empty.stderr}`)
  }

  const doctor = run(["doctor", "--json"])
  if (doctor.status !== 0 && doctor.status !== 1) fail(`doctor ${under} exited ${doctor.status}: ${doctor.stderr}`)
  const report = JSON.parse(doctor.stdout)
  if (!Array.isArray(report.checks) || report.checks.length === 0) fail(`doctor --json ${under}: ${doctor.stdout}`)
  for (const check of report.checks) console.error(`  doctor ${check.ok ? "ok  " : "FAIL"} ${check.name}: ${check.detail}`)
  // The relay that ran is the one under test: doctor names the Node it runs on.
  const nodeCheck = report.checks.find((check) => check.name === "node")
  if (nodeCheck?.detail !== `Node ${nodeVersion}`) fail(`doctor ran on ${nodeCheck?.detail}, not Node ${nodeVersion}`)

  const config = JSON.parse(run(["mcp", "config", "--client", "cursor", "--json"]).stdout)
  if (config.entry.command !== relay) fail(`mcp config names ${config.entry.command}, not the installed ${relay}`)

  const tools = await listToolsOverStdio(relay, env)
  if (tools.length === 0) fail(`tools/list ${under} returned no tools`)

  const agent = await startAgent(relay, env)
  try {
    const text = `smoke ${under}`
    const sent = run(["message", "send", "--url", agent.url, "--json", text])
    if (sent.status !== 0) fail(`message send ${under}: ${sent.status} ${sent.stderr}`)
    const answer = JSON.parse(sent.stdout)
    if (answer.state !== "completed" || answer.text !== text) fail(`message send ${under} answered ${sent.stdout}`)
  } finally {
    agent.child.kill("SIGINT")
  }
  const sessions = JSON.parse(run(["session", "list", "--json"]).stdout).sessions
  if (sessions.length !== 1 || sessions[0].agent_url !== agent.url) {
    fail(`session list ${under} after the send: ${JSON.stringify(sessions)}`)
  }

  const seconds = ((performance.now() - started) / 1000).toFixed(1)
  console.error(
    `packed install OK ${under}: relay ${expectedVersion}, doctor exit ${doctor.status}, ${tools.length} MCP tools, a message sent to relay server agent (${seconds} s)`
  )
}

try {
  const [packed] = JSON.parse(execFileSync("npm", ["pack", "--json", "--pack-destination", work], { cwd: root, encoding: "utf8" }))
  const files = packed.files.map((file) => file.path).sort()
  console.error(`packed ${packed.filename}: ${(packed.size / 1e6).toFixed(1)} MB, files ${files.join(", ")}`)
  if (files.some((file) => file.startsWith("test/") || file.startsWith("src/"))) fail(`unexpected files: ${files}`)
  // Stack traces under --enable-source-maps point into src/ through these (test/cli/sourceMaps.test.ts).
  if (!files.includes("dist/chunks/app.cjs.map") || !files.includes("dist/main.cjs.map")) fail(`no source maps: ${files}`)
  // `relay completions SHELL` prints these (src/main.ts); without them it works, slower.
  if (!files.includes("dist/completions/relay.bash")) fail(`no completion scripts: ${files}`)

  const prefix = Path.join(work, "prefix")
  execFileSync("npm", ["install", "-g", "--prefix", prefix, "--no-audit", "--no-fund", Path.join(work, packed.filename)], {
    stdio: ["ignore", "ignore", "inherit"]
  })
  const expected = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")).version
  for (const node of [process.execPath, ...options.node.map(nodeBinary)]) await smoke(prefix, node, expected)
} finally {
  Fs.rmSync(work, { recursive: true, force: true })
}
