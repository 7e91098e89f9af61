/**
 * `relay server push` and `relay notifications list` end to end, run as the built CLI
 * (`npm run build` first): startup output, printing and logging, tokens, Ctrl+C, filters, --json, --follow.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as Path from "node:path"
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest"
import { relayBin, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
beforeAll(() => Fs.rmSync(home.stateDir, { recursive: true, force: true }))
afterAll(home.cleanup)

const WAIT_MS = 8_000

/** A long-running relay process whose output can be awaited. */
interface Running {
  readonly child: ChildProcessWithoutNullStreams
  readonly stdout: () => string
  readonly stderr: () => string
  /** Resolves with the first match of `pattern` in the stream's output so far or to come. */
  readonly waitFor: (stream: "stdout" | "stderr", pattern: RegExp, timeoutMs?: number) => Promise<RegExpMatchArray>
  /** Sends the signal and resolves with the exit code. */
  readonly stop: (signal?: NodeJS.Signals) => Promise<number | null>
}

const running: Array<Running> = []
afterEach(() => {
  for (const process of running.splice(0)) if (process.child.exitCode === null) process.child.kill("SIGKILL")
})

const startRelay = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Running => {
  const child = spawn(process.execPath, [relayBin, ...args], {
    env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", ...env },
    stdio: ["pipe", "pipe", "pipe"]
  })
  const output = { stdout: "", stderr: "" }
  const listeners = new Set<() => void>()
  child.stdout.on("data", (chunk) => {
    output.stdout += chunk
    listeners.forEach((listener) => listener())
  })
  child.stderr.on("data", (chunk) => {
    output.stderr += chunk
    listeners.forEach((listener) => listener())
  })
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)))

  const waitFor = (stream: "stdout" | "stderr", pattern: RegExp, timeoutMs = WAIT_MS) =>
    new Promise<RegExpMatchArray>((resolve, reject) => {
      const check = () => {
        const match = output[stream].match(pattern)
        if (match === null) return false
        cleanup()
        resolve(match)
        return true
      }
      const timer = setTimeout(() => {
        cleanup()
        reject(new Error(`no ${pattern} on ${stream} within ${timeoutMs} ms\nstdout: ${output.stdout}\nstderr: ${output.stderr}`))
      }, timeoutMs)
      const listener = () => void check()
      const cleanup = () => {
        clearTimeout(timer)
        listeners.delete(listener)
      }
      listeners.add(listener)
      check()
    })

  const stop = (signal: NodeJS.Signals = "SIGINT") => {
    child.kill(signal)
    const timeout = new Promise<never>((_, reject) =>
      setTimeout(() => reject(new Error(`relay did not exit after ${signal}\nstderr: ${output.stderr}`)), WAIT_MS)
    )
    return Promise.race([exited, timeout])
  }

  const handle: Running = { child, stdout: () => output.stdout, stderr: () => output.stderr, waitFor, stop }
  running.push(handle)
  return handle
}

/** Starts `relay server push` on a free port and returns it with the push URL it printed. */
const startPushServer = async (extraArgs: ReadonlyArray<string> = [], env: Record<string, string> = {}) => {
  const server = startRelay(["server", "push", "--port", "0", ...extraArgs], env)
  const [, pushUrl = ""] = await server.waitFor("stderr", /Push URL[^:]*: (http:\/\/\S+)/)
  return { server, pushUrl }
}

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/a2a+json", ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000)
  })
  return { status: response.status, body: (await response.json()) as Record<string, unknown> }
}

const statusUpdate = (taskId: string, state: string, text: string) => ({
  statusUpdate: {
    taskId,
    contextId: "ctx-cli",
    status: { state, message: { messageId: `m-${taskId}-${state}`, role: "ROLE_AGENT", parts: [{ text }] } }
  }
})

const portIsFree = (url: string) =>
  new Promise<boolean>((resolve) => {
    const { hostname, port } = new URL(url)
    const socket = Net.connect({ host: hostname, port: Number(port) })
    socket.once("connect", () => {
      socket.destroy()
      resolve(false)
    })
    socket.once("error", () => resolve(true))
  })

const relay = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir })

describe("relay server push", () => {
  it("prints the push URL, prints and logs each notification, and exits 0 on Ctrl+C", async () => {
    const { server, pushUrl } = await startPushServer()
    expect(pushUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/notifications$/)
    expect(server.stderr()).toContain("No --token: accepting every notification")
    expect(server.stderr()).toContain(Path.join(home.stateDir, "notifications.ndjson"))
    expect(server.stdout()).toBe("")

    const health = await fetch(new URL("/health", pushUrl), { signal: AbortSignal.timeout(5_000) })
    expect(health.status).toBe(200)

    const reply = await post(pushUrl, statusUpdate("cli-task-1", "TASK_STATE_INPUT_REQUIRED", "Which city, please?"), {
      "x-a2a-notification-token": "not-required-here"
    })
    expect(reply).toMatchObject({ status: 200, body: { status: "ok" } })
    await server.waitFor("stdout", /Which city, please\?/)
    const printed = server.stdout()
    expect(printed).toContain("POST /notifications")
    expect(printed).toContain("status-update")
    expect(printed).toContain("input-required")
    expect(printed).toContain("task cli-task-1")
    expect(printed).toContain("token present")
    expect(printed).not.toContain("not-required-here")

    expect((await post(`${pushUrl}/v03`, { kind: "task", id: "cli-task-2", contextId: "c", status: { state: "completed" } })).status)
      .toBe(200)
    await server.waitFor("stdout", /cli-task-2/)

    expect(await server.stop("SIGINT")).toBe(0)
    expect(await portIsFree(pushUrl)).toBe(true)
    const log = Fs.readFileSync(Path.join(home.stateDir, "notifications.ndjson"), "utf8").trim().split("\n")
    expect(log.map((line) => JSON.parse(line).task_id)).toEqual(["cli-task-1", "cli-task-2"])
  })

  it("--json prints one NDJSON line per notification; --token rejects others with 401; SIGTERM exits 0", async () => {
    const { server, pushUrl } = await startPushServer(["--json", "--token", "s3cret-token"])
    expect(server.stderr()).toMatch(/Token required/)
    expect(server.stderr()).not.toContain("s3cret-token")

    expect((await post(pushUrl, statusUpdate("cli-task-3", "TASK_STATE_WORKING", "x"))).status).toBe(401)
    await server.waitFor("stderr", /Rejected POST \/notifications: 401/)
    expect((await post(pushUrl, statusUpdate("cli-task-3", "TASK_STATE_WORKING", "x"), { authorization: "Bearer wrong" })).status)
      .toBe(401)
    const ok = await post(pushUrl, statusUpdate("cli-task-3", "TASK_STATE_COMPLETED", "all done"), {
      authorization: "Bearer s3cret-token"
    })
    expect(ok.status).toBe(200)

    // The address first (README: Servers), then one line per notification.
    const [lines = ""] = await server.waitFor("stdout", /^.*\n.*\n/)
    const [address, record] = lines.trim().split("\n").map((line) => JSON.parse(line))
    expect(address).toMatchObject({ url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/), push_url: pushUrl, token_required: true })
    expect(record).toMatchObject({ id: ok.body["id"], task_id: "cli-task-3", state: "completed", text: "all done", token_present: true })
    expect(server.stdout().trim().split("\n")).toHaveLength(2)
    expect(server.stdout() + server.stderr()).not.toContain("s3cret-token")
    expect(await server.stop("SIGTERM")).toBe(0)
  })

  it("RELAY_PUSH_TOKEN requires the token as --token does, without it in the process list", async () => {
    // A home of its own: the listing tests below count what the shared log holds.
    const envHome = tempHome()
    const { server, pushUrl } = await startPushServer([], { RELAY_PUSH_TOKEN: "env-token-123", RELAY_HOME: envHome.stateDir })
    expect(server.stderr()).toMatch(/Token required/)
    expect((await post(pushUrl, statusUpdate("cli-task-env", "TASK_STATE_WORKING", "x"))).status).toBe(401)
    const ok = await post(pushUrl, statusUpdate("cli-task-env", "TASK_STATE_WORKING", "x"), { "x-a2a-notification-token": "env-token-123" })
    expect(ok.status).toBe(200)
    expect(await server.stop("SIGTERM")).toBe(0)
    envHome.cleanup()
  })

  it("refuses a blank token as a usage error: it would make a receiver no sender could post to", async () => {
    for (const [args, env] of [[[], { RELAY_PUSH_TOKEN: "" }], [["--token", "  "], {}]] as const) {
      // A receiver that started would run until killed: the timeout fails the test then.
      const result = await runRelay(["server", "push", "--port", "0", ...args], { stateDir: home.stateDir, env, timeoutMs: 8_000 })
      expect(result.code, JSON.stringify(args)).toBe(2)
      expect(result.stderr).toContain("The push token (--token or RELAY_PUSH_TOKEN) is empty")
      expect(result.stderr).not.toContain("listening")
    }
  })

  it("a port already in use is a clear error with exit code 1", async () => {
    const blocker = Net.createServer()
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve))
    const { port } = blocker.address() as Net.AddressInfo
    try {
      const result = await relay(["server", "push", "--port", String(port)])
      expect(result.code).toBe(1)
      expect(result.stderr).toContain(`Cannot listen on 127.0.0.1:${port}`)
      expect(result.stdout).toBe("")
    } finally {
      blocker.close()
    }
  })

  it("rejects an impossible port as a usage error", async () => {
    const result = await relay(["server", "push", "--port", "70000"])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--port needs a port number, between 0 and 65535")
  })
})

describe("relay notifications list", () => {
  // Runs after the server tests above, which logged cli-task-1, cli-task-2 and cli-task-3.
  const listed = async (args: ReadonlyArray<string>) =>
    (JSON.parse((await relay(["notifications", "list", "--json", ...args])).stdout) as { notifications: Array<Record<string, unknown>> })
      .notifications

  it("--json gives the log as {count, notifications} like every list, oldest first", async () => {
    const result = await relay(["notifications", "list", "--json"])
    expect(result.code).toBe(0)
    const parsed = JSON.parse(result.stdout) as { count: number; notifications: Array<Record<string, unknown>> }
    expect(Object.keys(parsed)).toEqual(["count", "notifications"])
    expect(parsed.count).toBe(3)
    const records = parsed.notifications
    expect(records.map((r) => r["task_id"])).toEqual(["cli-task-1", "cli-task-2", "cli-task-3"])
    expect(records[1]).toMatchObject({ kind: "task", protocol: "0.3", state: "completed", path: "/notifications/v03" })
  })

  it("filters by task, keeps the newest N and honours --since", async () => {
    expect((await listed(["--task-id", "cli-task-2"])).map((r) => r["task_id"])).toEqual(["cli-task-2"])
    expect((await listed(["--limit", "2"])).map((r) => r["task_id"])).toEqual(["cli-task-2", "cli-task-3"])
    expect(await listed(["--since", "1h"])).toHaveLength(3)
  })

  it("prints a readable list, and says so when nothing matches", async () => {
    const human = await relay(["notifications", "list"])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain("Notifications (3)")
    expect(human.stdout).toContain("\"Which city, please?\"")
    const none = await relay(["notifications", "list", "--task-id", "no-such-task"])
    expect(none.stdout).toContain("No notifications logged")
  })

  it("a bad --since or --limit is a usage error on stderr", async () => {
    const since = await relay(["notifications", "list", "--since", "last tuesday", "--json"])
    expect(since.code).toBe(2)
    expect(since.stdout).toBe("")
    expect(JSON.parse(since.stderr)).toMatchObject({ error: { code: "invalid_input" } })
    expect((await relay(["notifications", "list", "--limit", "0"])).code).toBe(2)
  })

  it("--follow --json prints the backlog, then new notifications as they arrive, until Ctrl+C", async () => {
    const follower = startRelay(["notifications", "list", "--follow", "--json", "--limit", "1"])
    await follower.waitFor("stdout", /cli-task-3.*\n/)
    const { server, pushUrl } = await startPushServer()
    await post(pushUrl, statusUpdate("cli-task-4", "TASK_STATE_WORKING", "followed"))
    await follower.waitFor("stdout", /cli-task-4.*\n/)
    const lines = follower.stdout().trim().split("\n").map((line) => JSON.parse(line))
    expect(lines.map((r) => r.task_id)).toEqual(["cli-task-3", "cli-task-4"])
    expect(await follower.stop("SIGINT")).toBe(0)
    expect(await server.stop("SIGINT")).toBe(0)
  })
})

describe("control characters a sender puts in a notification cannot forge lines (issue 18.6)", () => {
  const hostile = {
    statusUpdate: {
      taskId: "evil\nFAKE LINE",
      contextId: "ctx\r\u001b[2Kwiped",
      status: {
        state: "TASK_STATE_WORKING\nFORGED STATE",
        message: { messageId: "m-evil", role: "ROLE_AGENT", parts: [{ text: "hello\u001b[31m red \u009b2J\u2028next" }] }
      }
    }
  }

  /** No line starts with forged text, and no raw control character is left but the newlines between lines. */
  const expectNoForgery = (output: string) => {
    for (const line of output.split("\n")) expect(line).not.toMatch(/^\s*(FAKE LINE|FORGED STATE|forged state)/i)
    expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/)
    expect(output).toContain("task evil\\nFAKE LINE")
    expect(output).toContain("working\\nforged state")
    expect(output).toContain("context ctx\\r\\u001b[2Kwiped")
    // The excerpt collapses whitespace (U+2028 included); what is left is escaped.
    expect(output).toContain("hello\\u001b[31m red \\u009b2J next")
  }

  it("relay server push prints the notification in its three lines, control characters shown", async () => {
    const ownHome = tempHome()
    try {
      const { server, pushUrl } = await startPushServer([], { RELAY_HOME: ownHome.stateDir })
      expect((await post(pushUrl, hostile)).status).toBe(200)
      await server.waitFor("stdout", /next"\n/)
      expectNoForgery(server.stdout())
      expect(server.stdout().trim().split("\n")).toHaveLength(3)
      expect(await server.stop("SIGINT")).toBe(0)

      const listed = await runRelay(["notifications", "list"], { stateDir: ownHome.stateDir })
      expect(listed.code).toBe(0)
      expectNoForgery(listed.stdout)
      // The heading, a blank line, then the notification's three lines.
      expect(listed.stdout.trim().split("\n")).toHaveLength(5)

      // --json keeps the exact values, JSON-escaped.
      const [record] =
        JSON.parse((await runRelay(["notifications", "list", "--json"], { stateDir: ownHome.stateDir })).stdout).notifications
      expect(record).toMatchObject({ task_id: "evil\nFAKE LINE", state: "working\nforged state" })
    } finally {
      ownHome.cleanup()
    }
  })
})

describe("file parts of a notification (issue 29 item 10)", () => {
  it("relay server push saves the bytes beside the log; the list shows one line per file, --json a files array", async () => {
    const ownHome = tempHome()
    try {
      const { server, pushUrl } = await startPushServer([], { RELAY_HOME: ownHome.stateDir })
      const bytes = Buffer.from("hello from a pushed file\n")
      const body = {
        artifactUpdate: {
          taskId: "cli-files",
          contextId: "c",
          artifact: {
            artifactId: "a",
            parts: [{ raw: bytes.toString("base64"), filename: "../hello\u001b[31m.txt", mediaType: "text/plain" }, {
              url: "https://x.example/r.pdf",
              filename: "r.pdf",
              mediaType: "application/pdf"
            }]
          }
        }
      }
      expect((await post(pushUrl, body)).status).toBe(200)
      await server.waitFor("stdout", /r\.pdf.*\n/)
      expect(await server.stop("SIGINT")).toBe(0)

      const sha256 = createHash("sha256").update(bytes).digest("hex")
      const saved = Path.join(ownHome.stateDir, "notifications-files", sha256)
      expect(Fs.readFileSync(saved)).toEqual(bytes)
      const human = await runRelay(["notifications", "list"], { stateDir: ownHome.stateDir })
      expect(human.stdout).toContain(`  file ../hello\\u001b[31m.txt (text/plain, ${bytes.length} bytes) → ${saved}\n`)
      expect(human.stdout).toContain("  file r.pdf (application/pdf) at https://x.example/r.pdf")
      const [record] =
        JSON.parse((await runRelay(["notifications", "list", "--json"], { stateDir: ownHome.stateDir })).stdout).notifications
      // The shape of a file among an answer's parts (`message send --json`): the same keys, in the same order.
      const asPart = { kind: "file", text: null }
      const ofArtifact = { data: null, artifact_id: "a" }
      expect(record.files).toEqual([
        {
          ...asPart,
          name: "../hello\u001b[31m.txt",
          media_type: "text/plain",
          size: bytes.length,
          sha256,
          path: saved,
          url: null,
          note: null,
          ...ofArtifact
        },
        {
          ...asPart,
          name: "r.pdf",
          media_type: "application/pdf",
          size: null,
          sha256: null,
          path: null,
          url: "https://x.example/r.pdf",
          note: null,
          ...ofArtifact
        }
      ])
      expect(Object.keys(record.files[0])).toEqual([
        "kind",
        "text",
        "name",
        "media_type",
        "size",
        "sha256",
        "path",
        "url",
        "note",
        "data",
        "artifact_id"
      ])
    } finally {
      ownHome.cleanup()
    }
  })
})
