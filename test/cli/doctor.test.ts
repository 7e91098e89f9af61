/** `relay doctor` on a healthy and on a broken state directory, as a user runs it. */
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterEach, beforeEach, describe, expect, it } from "vitest"
import { emptyStore } from "../../src/domain/session.js"
import { relayBin, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

let home: ReturnType<typeof tempHome>
beforeEach(() => (home = tempHome()))
afterEach(() => home.cleanup())

interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
  readonly fix: string | null
}

const doctor = async (args: ReadonlyArray<string> = ["--json"], env: Record<string, string> = {}) => {
  const run = await runRelay(["doctor", ...args], {
    stateDir: home.stateDir,
    env: { HOME: home.parent, XDG_CONFIG_HOME: Path.join(home.parent, ".config"), RELAY_MODEL: "echo", RELAY_STORE_KEY: "", ...env },
    timeoutMs: 40_000
  })
  return run
}
const byName = (checks: ReadonlyArray<Check>) => Object.fromEntries(checks.map((check) => [check.name, check]))

describe("relay doctor", () => {
  it("passes every check of a healthy state directory; the exit code follows the checks", async () => {
    Fs.mkdirSync(home.stateDir, { mode: 0o700 })
    Fs.writeFileSync(Path.join(home.stateDir, "sessions.json"), JSON.stringify(emptyStore()), { mode: 0o600 })
    const run = await doctor()
    const report = JSON.parse(run.stdout) as { ok: boolean; checks: ReadonlyArray<Check> }
    const checks = byName(report.checks)
    for (const name of ["node", "state directory", "session store", "mcp", "model", "mcp clients"]) {
      expect(checks[name], name).toMatchObject({ ok: true, fix: null })
    }
    expect(checks.mcp!.detail).toMatch(/answered tools\/list with \d+ tools/)
    expect(checks.model!.detail).toContain("echo")
    expect(checks["task store"]).toMatchObject({ ok: true, detail: expect.stringContaining("push secrets sealed with its store.key") })
    expect(Object.keys(checks).filter((name) => name.startsWith("port "))).toEqual(["port 8000", "port 9000", "port 8090"])
    // Ports may be taken by something else on a shared machine: the exit code must agree with the report.
    expect(run.code).toBe(report.ok ? 0 : 1)
  }, 60_000)

  it("names each problem of a broken state directory with its fix, and exits 1", async () => {
    Fs.mkdirSync(home.stateDir, { mode: 0o755 })
    Fs.chmodSync(home.stateDir, 0o755)
    const store = Path.join(home.stateDir, "sessions.json")
    Fs.writeFileSync(store, "{ not json")
    Fs.chmodSync(store, 0o644)
    const cursor = Path.join(home.parent, ".cursor", "mcp.json")
    Fs.mkdirSync(Path.dirname(cursor), { recursive: true })
    Fs.writeFileSync(
      cursor,
      JSON.stringify({ mcpServers: { "a2a-relay": { command: "/usr/bin/node", args: ["/gone/relay/dist/main.js", "mcp"] } } })
    )

    const run = await doctor(["--json"], { RELAY_STORE_KEY: "too short" })
    expect(run.code).toBe(1)
    const checks = byName((JSON.parse(run.stdout) as { checks: ReadonlyArray<Check> }).checks)
    expect(checks["state directory"]).toMatchObject({ ok: false, fix: `chmod 700 ${home.stateDir}` })
    expect(checks["session store"]!.ok).toBe(false)
    expect(checks["session store"]!.detail).toContain("not valid JSON: invalid symbol at line 1, column 3")
    expect(checks["session store"]!.fix).toContain("Move")
    expect(checks["mcp client cursor"]).toMatchObject({ ok: false, fix: "relay mcp install --client cursor --name a2a-relay" })
    expect(checks["mcp client cursor"]!.detail).toContain("/gone/relay/dist/main.js")
    expect(checks["task store"]).toMatchObject({ ok: false, detail: expect.stringContaining("RELAY_STORE_KEY is shorter than 16") })
    // Reads only: the damaged store is still where it was.
    expect(Fs.readFileSync(store, "utf8")).toBe("{ not json")

    const human = await doctor([])
    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/✗ state directory: .*\n {2}fix: chmod 700 /)
    expect(human.stdout).toMatch(/✓ node: Node \d+/)
  }, 60_000)

  it("tells a client entry that uses another store than the terminal from one that shares it, whatever its paths", async () => {
    const write = (file: string, servers: Record<string, unknown>) => {
      Fs.mkdirSync(Path.dirname(file), { recursive: true })
      Fs.writeFileSync(file, JSON.stringify({ mcpServers: servers }))
    }
    const relayMain = Fs.realpathSync(relayBin)
    // Written by hand: node and the main file, in a folder whose name says nothing of relay.
    write(Path.join(home.parent, ".cursor", "mcp.json"), { mine: { command: process.execPath, args: [relayMain, "mcp"] } })
    write(Path.join(home.parent, ".gemini", "settings.json"), {
      "a2a-relay": { command: process.execPath, args: [relayMain, "mcp"], env: { RELAY_HOME: home.stateDir } }
    })
    const checks = byName((JSON.parse((await doctor()).stdout) as { checks: ReadonlyArray<Check> }).checks)
    expect(checks["mcp client cursor"]).toMatchObject({
      ok: false,
      fix: expect.stringContaining("relay mcp install --client cursor --name mine")
    })
    expect(checks["mcp client cursor"]!.detail).toContain(`this shell ${home.stateDir}: sessions and credentials are not shared`)
    expect(checks["mcp client gemini"]).toMatchObject({ ok: true })
    expect(checks["mcp client gemini"]!.detail).toContain("with this shell's store")
  }, 60_000)

  describe("the state directory, tried as every command uses it", () => {
    const stateCheck = async (stateDir: string, env: Record<string, string> = {}) => {
      const run = await runRelay(["doctor", "--json"], {
        stateDir,
        env: { HOME: home.parent, RELAY_MODEL: "echo", ...env },
        timeoutMs: 40_000
      })
      expect(run.stderr).not.toMatch(/\n\s+at /)
      return { code: run.code, check: byName((JSON.parse(run.stdout) as { checks: ReadonlyArray<Check> }).checks)["state directory"]! }
    }

    it("a missing directory is created 0700 and reported with its real mode", async () => {
      const { check } = await stateCheck(home.stateDir)
      expect(check).toMatchObject({ ok: true })
      expect(check.detail).toContain("(mode 700, created now, writable, store lock taken and released")
      expect(Fs.statSync(home.stateDir).mode & 0o777).toBe(0o700)
      expect(Fs.readdirSync(home.stateDir).filter((name) => name.startsWith(".doctor-") || name.endsWith(".lock"))).toEqual([])
    }, 60_000)

    it("a path under a regular file fails with the reason, not a stack trace", async () => {
      const file = Path.join(home.parent, "plain-file")
      Fs.writeFileSync(file, "")
      const { check, code } = await stateCheck(Path.join(file, "state"))
      expect(code).toBe(1)
      expect(check).toMatchObject({ ok: false })
      expect(check.detail).toContain("a part of the path is a file, not a directory")
      expect(check.fix).toContain("RELAY_HOME=")
    }, 60_000)

    it("a directory owned by another user fails with a RELAY_HOME the user can set", async () => {
      const isRoot = process.getuid?.() === 0
      // As root, a directory of nobody's; otherwise one of root's.
      const dir = isRoot ? Path.join(home.parent, "theirs") : "/usr"
      if (isRoot) {
        Fs.mkdirSync(dir, { mode: 0o700 })
        Fs.chownSync(dir, 65534, 65534)
      }
      const { check } = await stateCheck(dir)
      expect(check).toMatchObject({ ok: false })
      expect(check.detail).toMatch(/belongs to another user \(uid \d+; you are \d+\)/)
      expect(check.fix).toBe("Use a directory of your own: export RELAY_HOME=$HOME/.local/state/a2a-relay-$(id -un)")
    }, 60_000)

    it("a directory its owner cannot write to fails with permission denied", async () => {
      const isRoot = process.getuid?.() === 0
      const dir = Path.join(home.parent, "read-only")
      Fs.mkdirSync(dir, { mode: 0o500 })
      Fs.chmodSync(dir, 0o500)
      // Root writes anywhere: the doctor runs as nobody, in a directory of nobody's, from a copy of the
      // built relay that nobody can read wherever the checkout lies.
      let main = relayBin
      if (isRoot) {
        Fs.chmodSync(home.parent, 0o755)
        Fs.chownSync(dir, 65534, 65534)
        Fs.cpSync(Path.dirname(relayBin), Path.join(home.parent, "dist"), { recursive: true })
        main = Path.join(home.parent, "dist", Path.basename(relayBin))
      }
      const run = await new Promise<{ code: number | null; stdout: string }>((resolve, reject) => {
        const child = spawn(process.execPath, [main, "doctor", "--json"], {
          env: { ...process.env, RELAY_HOME: dir, HOME: home.parent, RELAY_MODEL: "echo", NO_COLOR: "1" },
          ...(isRoot ? { uid: 65534, gid: 65534 } : {})
        })
        let stdout = ""
        child.stdout.on("data", (chunk) => (stdout += chunk))
        const timer = setTimeout(() => child.kill("SIGKILL"), 40_000)
        child.on("error", reject)
        child.on("close", (code) => {
          clearTimeout(timer)
          resolve({ code, stdout })
        })
      })
      expect(run.code).toBe(1)
      const check = byName((JSON.parse(run.stdout) as { checks: ReadonlyArray<Check> }).checks)["state directory"]!
      expect(check).toMatchObject({ ok: false })
      expect(check.detail).toBe(`${dir}: cannot write a file in it: permission denied`)
    }, 60_000)
  })

  it("a model that cannot answer fails the model check with what to set", async () => {
    const run = await runRelay(["doctor", "--json"], {
      stateDir: home.stateDir,
      env: { HOME: home.parent, RELAY_MODEL: "gateway:gpt-4o-mini", RELAY_GATEWAY_URL: "http://127.0.0.1:9/v1" },
      timeoutMs: 40_000
    })
    const model = byName((JSON.parse(run.stdout) as { checks: ReadonlyArray<Check> }).checks).model!
    expect(model.ok).toBe(false)
    expect(model.detail).toContain("gateway:gpt-4o-mini")
    expect(model.fix).toContain("RELAY_MODEL")
    expect(run.code).toBe(1)
  }, 60_000)
})
