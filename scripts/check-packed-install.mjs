// Packs relay, installs the tarball globally into a temporary prefix and runs the installed copy
// with only Node on PATH: --version, doctor --json (exit 0 or 1, valid JSON either way), a stdio
// tools/list, and the MCP client entry naming the installed `relay`. Used by .ci/run.
import { execFileSync, spawn, spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"

const root = Path.resolve(import.meta.dirname, "..")
const work = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-pack-"))
const fail = (message) => {
  console.error(`packed install: ${message}`)
  process.exit(1)
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
  const relay = Path.join(prefix, "bin", "relay")
  // Only Node (and the installed relay) on PATH; run outside the repository so nothing resolves from it.
  const env = {
    PATH: [Path.join(prefix, "bin"), Path.dirname(process.execPath), "/usr/bin", "/bin"].join(Path.delimiter),
    HOME: Path.join(work, "home"),
    RELAY_HOME: Path.join(work, "state"),
    NO_COLOR: "1"
  }
  const run = (args) => spawnSync(relay, args, { cwd: work, env, encoding: "utf8", timeout: 120_000 })

  const version = run(["--version"])
  const expected = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")).version
  if (version.status !== 0 || !version.stdout.includes(expected)) fail(`--version: ${version.status} ${version.stdout}${version.stderr}`)

  const doctor = run(["doctor", "--json"])
  if (doctor.status !== 0 && doctor.status !== 1) fail(`doctor exited ${doctor.status}: ${doctor.stderr}`)
  const report = JSON.parse(doctor.stdout)
  if (!Array.isArray(report.checks) || report.checks.length === 0) fail(`doctor --json: ${doctor.stdout}`)
  for (const check of report.checks) console.error(`  doctor ${check.ok ? "ok  " : "FAIL"} ${check.name}: ${check.detail}`)

  const config = JSON.parse(run(["mcp", "config", "--client", "cursor", "--json"]).stdout)
  if (config.entry.command !== relay) fail(`mcp config names ${config.entry.command}, not the installed ${relay}`)

  const tools = await new Promise((resolve, reject) => {
    const child = spawn(relay, ["mcp"], { cwd: work, env, stdio: ["pipe", "pipe", "ignore"] })
    const timer = setTimeout(() => (child.kill(), reject(new Error("no tools/list answer within 30 s"))), 30_000)
    let buffered = ""
    child.stdout.setEncoding("utf8").on("data", (chunk) => {
      buffered += chunk
      const lines = buffered.split("\n")
      buffered = lines.pop()
      for (const line of lines) {
        const message = JSON.parse(line) // anything but JSON-RPC on stdout throws here
        if (message.id === 2) {
          clearTimeout(timer)
          child.kill()
          resolve(message.result.tools)
        }
      }
    })
    child.stdin.write([
      { jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ci", version: "1" } } },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/list" }
    ].map((message) => JSON.stringify(message)).join("\n") + "\n")
  })
  if (tools.length === 0) fail("tools/list returned no tools")
  console.error(`packed install OK: relay ${expected}, doctor exit ${doctor.status}, ${tools.length} MCP tools`)
} finally {
  Fs.rmSync(work, { recursive: true, force: true })
}
