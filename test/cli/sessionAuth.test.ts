/** `relay session …` and `relay auth …` end to end: output, --json shapes, exit codes, masking. */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
const relay = (args: ReadonlyArray<string>, input?: string) =>
  runRelay(args, { stateDir: home.stateDir, ...(input === undefined ? {} : { input }) })
const json = (text: string) => JSON.parse(text) as Record<string, unknown>

const TOKEN = "tok_0123456789abcdefXYZ"
const KEY = "key_9876543210fedcbaQRS"

beforeAll(() => Fs.rmSync(home.stateDir, { recursive: true, force: true }))
afterAll(home.cleanup)

describe("relay --version / --help", () => {
  it("prints the package version", async () => {
    const pkg = JSON.parse(Fs.readFileSync(new URL("../../package.json", import.meta.url), "utf8"))
    const result = await relay(["--version"])
    expect(result.code).toBe(0)
    expect(result.stdout.trim()).toBe(pkg.version)
  })

  it.each([["--help"], ["session", "--help"], ["auth", "set", "--help"]])("%s works on every level", async (...args) => {
    const result = await relay(args)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("USAGE")
  })

  it("a mistyped command is a usage error on stderr with exit code 2", async () => {
    const result = await relay(["sesion", "list"])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr.length).toBeGreaterThan(0)
  })
})

describe("relay auth / session", () => {
  it("starts empty", async () => {
    const result = await relay(["session", "list", "--json"])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toEqual({ count: 0, sessions: [] })
    expect((await relay(["session", "list"])).stdout).toContain("No saved sessions")
  })

  it("auth set saves a bearer token under the normalised URL and never prints it", async () => {
    const result = await relay(["auth", "set", "--url", "HTTP://Agent.Test:80/", "--bearer-token", TOKEN, "--json"])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toEqual({ agent_url: "http://agent.test", auth_type: "bearer" })
    expect(result.stdout + result.stderr).not.toContain(TOKEN)
    expect(Fs.statSync(Path.join(home.stateDir, "sessions.json")).mode & 0o777).toBe(0o600)
    expect(Fs.statSync(home.stateDir).mode & 0o777).toBe(0o700)
  })

  it("bearer wins when both secrets are given", async () => {
    const result = await relay(["auth", "set", "--url", "http://both.test", "--bearer-token", TOKEN, "--api-key", KEY, "--json"])
    expect(json(result.stdout)["auth_type"]).toBe("bearer")
  })

  it("auth set with an API key reads it from stdin with '-' and keeps a custom header", async () => {
    const result = await relay(["auth", "set", "--url", "http://key.test", "--api-key", "-", "--api-key-header", "X-Agent-Key"], `${KEY}\n`)
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("Saved API key for http://key.test")
    const shown = await relay(["auth", "show", "--url", "http://key.test", "--json"])
    expect(json(shown.stdout)).toEqual({
      agent_url: "http://key.test",
      credentials: { auth_type: "api_key", header: "X-Agent-Key", masked: `…${KEY.slice(-4)}` }
    })
    expect(shown.stdout).not.toContain(KEY)
  })

  it("auth show masks the secret in human output", async () => {
    const result = await relay(["auth", "show", "--url", "http://agent.test"])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain("bearer")
    expect(result.stdout).toContain(`…${TOKEN.slice(-4)}`)
    expect(result.stdout).not.toContain(TOKEN)
  })

  it("auth set without a secret fails with exit 2 and a hint on stderr", async () => {
    const result = await relay(["auth", "set", "--url", "http://agent.test"])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("A bearer token or an API key is required")
    expect(result.stderr).toContain("hint: Give one: --bearer-token <TOKEN> or --api-key <KEY>")
  })

  it("errors are JSON on stderr with --json", async () => {
    const result = await relay(["session", "show", "--url", "not a url", "--json"])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(json(result.stderr)).toMatchObject({ error: { code: "invalid_agent_url" } })
  })

  // Every door decodes --url once, before any program runs: the same error, exit code and JSON everywhere.
  it.each([
    ["session", "show", "--url", "ftp://x"],
    ["session", "clear", "--url", "ftp://x"],
    ["auth", "set", "--url", "ftp://x", "--bearer-token", TOKEN],
    ["auth", "show", "--url", "ftp://x"],
    ["auth", "clear", "--url", "ftp://x"],
    ["auth", "logout", "--url", "ftp://x"],
    ["message", "send", "--url", "ftp://x", "hi"],
    ["task", "get", "--url", "ftp://x", "t-1"],
    ["task", "notification", "list", "--url", "ftp://x", "t-1"],
    ["card", "get", "--url", "ftp://x"],
    ["check", "ftp://x"]
  ])("%s %s refuses a bad agent URL: exit 1, the invalid_agent_url error as JSON on stderr", async (...args) => {
    const result = await relay([...args, "--json"])
    expect(result.code).toBe(1)
    expect(result.stdout).toBe("")
    expect(json(result.stderr)).toEqual({
      error: {
        code: "invalid_agent_url",
        message: "Invalid agent URL \"ftp://x\": unsupported scheme ftp:",
        hint: "Give the agent's base URL with its scheme, for example http://127.0.0.1:8000"
      }
    })
  })

  it("session list shows has_credentials and never the secret", async () => {
    const result = await relay(["session", "list", "--json"])
    const list = json(result.stdout) as { count: number; sessions: Array<Record<string, unknown>> }
    expect(list.count).toBe(3)
    expect(list.sessions.map((s) => s["agent_url"])).toEqual(["http://agent.test", "http://both.test", "http://key.test"])
    expect(list.sessions.every((s) => s["has_credentials"] === true)).toBe(true)
    expect(Object.keys(list.sessions[0]!).sort()).toEqual(
      ["agent_url", "card_url", "context_id", "has_credentials", "last_state", "task_id", "updated_at"]
    )
    expect(result.stdout).not.toContain(TOKEN)
  })

  it("session show of an unknown agent is an empty session", async () => {
    const result = await relay(["session", "show", "--url", "http://never.test", "--json"])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({ agent_url: "http://never.test", context_id: null, has_credentials: false })
  })

  it("session clear needs --url or --all, and keeps credentials", async () => {
    expect((await relay(["session", "clear"])).code).toBe(2)
    expect((await relay(["session", "clear", "--url", "http://a.test", "--all"])).code).toBe(2)
    const cleared = await relay(["session", "clear", "--all", "--json"])
    expect(cleared.code).toBe(0)
    expect(json(cleared.stdout)).toEqual({ all: true, cleared: expect.any(Number), credentials_kept: true })
    const shown = await relay(["auth", "show", "--url", "http://agent.test", "--json"])
    expect(json(shown.stdout)["credentials"]).toMatchObject({ auth_type: "bearer" })
  })

  it("auth clear removes credentials and says when there were none", async () => {
    const first = await relay(["auth", "clear", "--url", "http://agent.test", "--json"])
    expect(json(first.stdout)).toEqual({ agent_url: "http://agent.test", cleared: true })
    const second = await relay(["auth", "clear", "--url", "http://agent.test", "--json"])
    expect(json(second.stdout)).toEqual({ agent_url: "http://agent.test", cleared: false })
    const listed = json((await relay(["session", "list", "--json"])).stdout) as { count: number }
    expect(listed.count).toBe(2)
  })

  it("a corrupt store is reported naming the file, and kept aside", async () => {
    const file = Path.join(home.stateDir, "sessions.json")
    Fs.writeFileSync(file, "garbage")
    const result = await relay(["session", "list"])
    expect(result.code).toBe(1)
    expect(result.stderr).toContain(file)
    const aside = Fs.readdirSync(home.stateDir).find((name) => name.startsWith("sessions.json.corrupt-"))
    expect(aside).toBeDefined()
    expect(Fs.readFileSync(Path.join(home.stateDir, aside!), "utf8")).toBe("garbage")
  })

  it("a damaged store is described as what it is: where the JSON breaks, or which field is missing", async () => {
    const file = Path.join(home.stateDir, "sessions.json")
    Fs.writeFileSync(file, `{"version": 2, "sessions": {"a": }}`)
    const broken = await relay(["session", "list"])
    expect(broken.code).toBe(1)
    expect(broken.stderr).toContain("is damaged (not valid JSON: value expected at line 1, column 34)")
    Fs.writeFileSync(file, `{"version": 2}`)
    const missing = await relay(["session", "list"])
    expect(missing.stderr).toContain("is damaged (field `sessions` missing)")
    for (const run of [broken, missing]) expect(run.stderr.split("\n").every((line) => line.length < 400)).toBe(true)
  })

  it("colour codes appear only on a TTY: piped output, help and usage errors are plain", async () => {
    const list = await runRelay(["session", "list"], { stateDir: home.stateDir, env: { NO_COLOR: "" } })
    expect(list.stdout).not.toMatch(/\u001b\[/)
    const help = await runRelay(["--help"], { stateDir: home.stateDir, env: { NO_COLOR: "" } })
    expect(help.stdout).toContain("USAGE")
    expect(help.stdout).not.toMatch(/\u001b\[/)
    const usage = await runRelay(["sesion"], { stateDir: home.stateDir, env: { NO_COLOR: "" } })
    expect(usage.stderr).not.toMatch(/\u001b\[/)
  })
})
