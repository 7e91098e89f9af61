/**
 * How every command ends, as a script sees it: exit codes (0 ok, 1 failure, 2 usage, 3 auth,
 * 4 unreachable, 130/143 signals), reports on stderr (JSON with --json), and a closed stdout.
 * The built CLI (`npm run build` first) is spawned against stub agents on loopback.
 */
import { execFile, spawn } from "node:child_process"
import * as Fs from "node:fs"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { closedPortUrl, waitUntil } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { type CliResult, relayBin, runRelay } from "../helpers/cli.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { tempHome } from "../helpers/stateHome.js"
import { leaksInternals } from "../mcp/hostileMessages.js"
import { closeServer, listenOnLoopback, sendJson } from "../peers/httpUtil.js"
import { reply, startStub, type Stub, v1Card } from "../services/a2aClientHarness.js"

const home = tempHome()
const relay = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir })

interface StubAgent {
  readonly baseUrl: string
  /** A2A requests (not the card) received, and those whose connection closed before an answer. */
  readonly received: Array<string>
  readonly abandoned: Array<string>
  close(): Promise<void>
}

/** An agent with a valid card whose A2A endpoint answers with `answer` (or never, when it returns false). */
const startStubAgent = async (answer: (res: http.ServerResponse) => boolean): Promise<StubAgent> => {
  const received: Array<string> = []
  const abandoned: Array<string> = []
  let baseUrl = ""
  const server = http.createServer((req, res) => {
    if (req.url === "/.well-known/agent-card.json") return sendJson(res, 200, validV1Card(baseUrl))
    const request = `${req.method} ${req.url}`
    received.push(request)
    res.on("close", () => void (res.writableEnded || abandoned.push(request)))
    req.resume()
    answer(res)
  })
  baseUrl = await listenOnLoopback(server)
  return { baseUrl, received, abandoned, close: () => closeServer(server) }
}

let silent: StubAgent
let refusing: StubAgent
let closedUrl: string

beforeAll(async () => {
  silent = await startStubAgent(() => false)
  refusing = await startStubAgent((res) => {
    res.writeHead(401, { "www-authenticate": "Bearer", "content-type": "application/json" })
    res.end(JSON.stringify({ error: "unauthorized" }))
    return true
  })
  closedUrl = await closedPortUrl()
})

afterAll(async () => {
  await Promise.all([silent.close(), refusing.close()])
  home.cleanup()
})

const json = <T = Record<string, unknown>>(text: string): T => JSON.parse(text) as T

/** The JSON error on stderr; no error answer of the terminal door carries a stack trace or a path of this machine. */
const jsonError = (result: CliResult) => {
  expect(leaksInternals(result.stderr), result.stderr).toBe(false)
  return json<{ error: { code: string; message: string; hint: string } }>(result.stderr).error
}

describe("exit codes", () => {
  it("0 when the command succeeds", async () => {
    expect((await relay(["session", "list", "--json"])).code).toBe(0)
  })

  it("1 for a failure: a card file that does not exist, with a plain message", async () => {
    const result = await relay(["card", "validate", "--file", "missing.json", "--json"])
    expect(result.code).toBe(1)
    expect(jsonError(result)).toMatchObject({ code: "card_file_refused", message: expect.stringMatching(/missing\.json.*no such file/) })
    expect(result.stderr).not.toMatch(/NotFound|FileSystem|readFile/)
  })

  it("1 when the task a message started ends failed or rejected, after printing the answer", async () => {
    const ending = async (state: string) => {
      let baseUrl = ""
      const server = http.createServer((req, res) => {
        if (req.url === "/.well-known/agent-card.json") return sendJson(res, 200, validV1Card(baseUrl))
        let body = ""
        req.on("data", (chunk) => (body += chunk))
        req.on("end", () => {
          const status = { state, message: { messageId: "m-1", role: "ROLE_AGENT", parts: [{ text: "disk full" }] } }
          sendJson(res, 200, { jsonrpc: "2.0", id: JSON.parse(body).id, result: { task: { id: "t-1", contextId: "c-1", status } } })
        })
      })
      baseUrl = await listenOnLoopback(server)
      // A home of its own: the sessions these sends save must not show in the other tests' lists.
      const own = tempHome()
      try {
        return await runRelay(["message", "send", "--url", baseUrl, "--json", "hi"], { stateDir: own.stateDir })
      } finally {
        await closeServer(server)
        own.cleanup()
      }
    }
    for (const [state, label] of [["TASK_STATE_FAILED", "failed"], ["TASK_STATE_REJECTED", "rejected"]]) {
      const result = await ending(state!)
      expect(result.code, result.stderr).toBe(1)
      expect(json(result.stdout)).toMatchObject({ state: label, text: "disk full" })
    }
    const completed = await ending("TASK_STATE_COMPLETED")
    expect(completed.code, completed.stderr).toBe(0)
  })

  it("2 for a usage error, plain text without --json", async () => {
    const result = await relay(["message", "send", "hello"])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("--url")
  })

  it("2 for a usage error, as a JSON error with --json (and nothing else on stderr)", async () => {
    const result = await relay(["task", "get", "--url", "http://127.0.0.1:9", "--json"])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    const error = jsonError(result)
    expect(error).toMatchObject({ code: "usage", message: expect.stringContaining("TASK_ID") })
    expect(error.hint).toContain("--help")
    // No agent at all (no --url, no RELAY_AGENT, no default) is one too.
    const noAgent = await relay(["message", "send", "--json", "hello"])
    expect(noAgent.code).toBe(2)
    expect(jsonError(noAgent)).toMatchObject({ code: "invalid_input", message: "No agent given", hint: expect.stringContaining("--url") })
  })

  it("3 when the agent wants authentication (HTTP 401)", async () => {
    const result = await relay(["message", "send", "--url", refusing.baseUrl, "--json", "hi"])
    expect(result.code).toBe(3)
    expect(jsonError(result).code).toBe("auth_required")
  })

  it("4 when nothing listens at the agent's address", async () => {
    const result = await relay(["message", "send", "--url", closedUrl, "--json", "hi"])
    expect(result.code).toBe(4)
    expect(jsonError(result).code).toBe("agent_unreachable")
  })

  it("4 when the agent gives no answer before the request timeout", async () => {
    const result = await relay(["message", "send", "--url", silent.baseUrl, "--timeout", "1", "--json", "hi"])
    expect(result.code).toBe(4)
    expect(jsonError(result).code).toBe("timeout")
  })

  it("the root help lists the exit codes", async () => {
    const result = await relay(["--help"])
    expect(result.code).toBe(0)
    for (
      const line of [/^\s+0\s+ok/m, /^\s+2\s+usage/m, /^\s+3\s+authentication/m, /^\s+4\s+agent unreachable/m, /130.*SIGINT.*143.*SIGTERM/]
    ) {
      expect(result.stdout).toMatch(line)
    }
  })
})

/** What relay printed so far. */
interface Printed {
  readonly stdout: string
  readonly stderr: string
}

/**
 * Spawns relay, waits until `ready` (by default: the silent agent holds its request), then sends
 * `signal`. `stateDir` is the home relay runs with.
 */
const interrupt = (
  args: ReadonlyArray<string>,
  signal: NodeJS.Signals,
  options: { readonly ready?: (printed: Printed) => boolean; readonly stateDir?: string } = {}
): Promise<CliResult> =>
  new Promise((resolve, reject) => {
    const before = silent.received.length
    const ready = options.ready ?? (() => silent.received.length > before)
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: options.stateDir ?? home.stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`relay ${args.join(" ")} did not end after ${signal}\nstderr: ${stderr}`))
    }, 15_000)
    child.on("close", (code) => {
      clearTimeout(timer)
      resolve({ code, stdout, stderr })
    })
    waitUntil(`relay ${args.join(" ")} to be ready for ${signal}`, () => ready({ stdout, stderr }), 10_000)
      .then(() => child.kill(signal), reject)
  })

describe("a command cut short after the agent showed its task", () => {
  // The agent shows its task working, then falls silent (streams stay open without another event).
  const TASK = { id: "stalled-task", contextId: "stalled-context", status: { state: "TASK_STATE_WORKING" } }
  const own = tempHome()
  let stalling: Stub
  let agentUrl = ""

  beforeAll(async () => {
    stalling = await startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
      "POST /rpc": (request, res) => {
        const { id, method } = request.body as { id: unknown; method: string }
        if (method === "SendStreamingMessage" || method === "SubscribeToTask") {
          res.writeHead(200, { "content-type": "text/event-stream" })
          res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: { task: TASK } })}\n\n`)
          return undefined
        }
        return { body: { jsonrpc: "2.0", id, result: method === "SendMessage" ? { task: TASK } : TASK } }
      }
    }))
    agentUrl = agentUrlOf(stalling.baseUrl)
  })

  afterAll(async () => {
    await stalling?.close()
    own.cleanup()
  })

  const commands = () => [`relay task get --url ${agentUrl} ${TASK.id}`, `relay task resubscribe --url ${agentUrl} ${TASK.id}`]
  /** The task once shown: its state line on stderr, or its first NDJSON update on stdout. */
  const taskShown = (printed: Printed) => printed.stderr.includes("[working]") || printed.stdout.includes(TASK.id)
  const stop = (args: ReadonlyArray<string>, signal: NodeJS.Signals) =>
    interrupt(["message", ...args], signal, { ready: taskShown, stateDir: own.stateDir })
  const savedSession = async () => {
    const shown = await runRelay(["session", "show", "--url", agentUrl, "--json"], { stateDir: own.stateDir })
    expect(shown.code, shown.stderr).toBe(0)
    return json(shown.stdout)
  }
  const expectPointsAtTask = (error: { code: string; hint: string }, code: string) => {
    expect(error).toMatchObject({ code, task_id: TASK.id, context_id: TASK.contextId })
    for (const command of commands()) expect(error.hint).toContain(command)
  }

  for (const [command, signal, exitCode] of [["send", "SIGINT", 130], ["stream", "SIGTERM", 143]] as const) {
    it(`message ${command}: ${signal} exits ${exitCode}, names the task and the commands to get back to it, and leaves it in the session`, async () => {
      await runRelay(["session", "clear", "--url", agentUrl], { stateDir: own.stateDir })
      const result = await stop([command, "--url", agentUrl, "hi"], signal)
      expect(result.code, result.stderr).toBe(exitCode)
      expect(result.stderr).toContain(`error: interrupted by ${signal}`)
      expect(result.stderr).toContain(`hint: The task ${TASK.id} may still be running.`)
      for (const line of commands()) expect(result.stderr).toContain(line)
      expect(await savedSession()).toMatchObject({ task_id: TASK.id, context_id: TASK.contextId, last_state: "working" })
    })
  }

  it("message stream --json: SIGINT exits 130 with the task's ids in the interrupted JSON error", async () => {
    const result = await stop(["stream", "--url", agentUrl, "--json", "hi"], "SIGINT")
    expect(result.code, result.stderr).toBe(130)
    expectPointsAtTask(jsonError(result), "interrupted")
  })

  it("--stream-idle-timeout: exit 1, the timeout's hint followed by the task and the commands to get back to it", async () => {
    const plain = await runRelay(["message", "stream", "--url", agentUrl, "--stream-idle-timeout", "1", "hi"], { stateDir: own.stateDir })
    expect(plain.code, plain.stderr).toBe(1)
    expect(plain.stderr).toContain("--stream-idle-timeout <seconds>")
    expect(plain.stderr).toContain(`The task ${TASK.id} may still be running.`)
    for (const line of commands()) expect(plain.stderr).toContain(line)
    const asJson = await runRelay(["message", "stream", "--url", agentUrl, "--stream-idle-timeout", "1", "--json", "hi"], {
      stateDir: own.stateDir
    })
    expect(asJson.code, asJson.stderr).toBe(1)
    expectPointsAtTask(jsonError(asJson), "timeout")
  })
})

describe("a closed stdout", () => {
  it("ends the command quietly with exit 0 when the reader stops early (relay … | head), never a stack trace", async () => {
    const longCard = (baseUrl: string) => ({ ...validV1Card(baseUrl), description: "lorem ipsum dolor sit amet\n".repeat(40_000) })
    let baseUrl = ""
    const server = http.createServer((_req, res) => sendJson(res, 200, longCard(baseUrl)))
    baseUrl = await listenOnLoopback(server)
    try {
      const result = await new Promise<CliResult>((resolve, reject) => {
        const child = spawn(process.execPath, [relayBin, "card", "get", "--url", baseUrl], {
          env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
          stdio: ["ignore", "pipe", "pipe"]
        })
        let stdout = ""
        let stderr = ""
        // Like `head -c`: read one chunk, then close the pipe while relay still has most of the card to write.
        child.stdout.once("data", (chunk) => {
          stdout += chunk
          child.stdout.destroy()
        })
        child.stderr.on("data", (chunk) => (stderr += chunk))
        const timer = setTimeout(() => {
          child.kill("SIGKILL")
          reject(new Error(`relay did not end after its stdout closed\nstderr: ${stderr}`))
        }, 15_000)
        child.on("close", (code) => {
          clearTimeout(timer)
          resolve({ code, stdout, stderr })
        })
      })
      expect(result.stdout.length).toBeGreaterThan(0)
      expect(result.stdout.length).toBeLessThan(longCard(baseUrl).description.length)
      expect(result.stderr).toBe("")
      expect(result.code).toBe(0)
    } finally {
      await closeServer(server)
    }
  })
})

describe("JSON shapes (README): lists are {count, <items>}, results one object, servers' addresses on stdout", () => {
  it("every local list is {count, <items>}", async () => {
    for (const [args, items] of [[["session", "list"], "sessions"], [["notifications", "list"], "notifications"]] as const) {
      const result = await relay([...args, "--json"])
      expect(result.code).toBe(0)
      expect(json(result.stdout)).toEqual({ count: 0, [items]: [] })
    }
  })

  it("session clear --all --json names no agent rather than a null one", async () => {
    const result = await relay(["session", "clear", "--all", "--json"])
    expect(result.code).toBe(0)
    // Nothing saved: no credentials to have kept.
    expect(json(result.stdout)).toEqual({ all: true, cleared: 0, credentials_kept: false })
  })

  it("relay mcp --json prints its address on stdout, and a signal is its normal end (exit 0, nothing reported)", async () => {
    const child = spawn(process.execPath, [relayBin, "mcp", "--transport", "streamable-http", "--port", "0", "--json"], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve))
    try {
      await waitUntil("the address on stdout", () => stdout.includes("\n"), 10_000)
      expect(json(stdout)).toEqual({ transport: "streamable-http", url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/) })
      child.kill("SIGINT")
      expect(await exited).toBe(0)
      expect(stderr).not.toContain("interrupted")
    } finally {
      if (child.exitCode === null) child.kill("SIGKILL")
    }
  })
})

describe("--log-level and --verbose: one setting", () => {
  const cardFetchLog = /GET \S+\/\.well-known\/agent-card\.json → 200/

  it("--verbose and --log-level debug show the requests; neither shows none; given both, the more detailed wins", async () => {
    const card = (...flags: ReadonlyArray<string>) => relay(["card", "get", "--url", refusing.baseUrl, "--json", ...flags])
    expect((await card()).stderr).not.toMatch(cardFetchLog)
    expect((await card("--verbose")).stderr).toMatch(cardFetchLog)
    // After the command's own options too, where @effect/cli's built-in refused it.
    expect((await card("--log-level", "debug")).stderr).toMatch(cardFetchLog)
    expect((await card("--log-level=error", "--verbose")).stderr).toMatch(cardFetchLog)
  })

  it("--log-level none silences warnings, --log-level error too; the default shows them; a bad level is a usage error", async () => {
    const loose = tempHome()
    Fs.mkdirSync(loose.stateDir, { mode: 0o755 })
    Fs.chmodSync(loose.stateDir, 0o755)
    try {
      const list = (...flags: ReadonlyArray<string>) => runRelay(["session", "list", ...flags], { stateDir: loose.stateDir })
      expect((await list()).stderr).toContain("readable by other users")
      for (const level of ["none", "error"]) {
        const quiet = await list("--log-level", level)
        expect(quiet.code).toBe(0)
        expect(quiet.stderr).toBe("")
      }
      expect((await list("--log-level", "loud")).code).toBe(2)
    } finally {
      loose.cleanup()
    }
  })
})

/** A streaming agent that thinks aloud in its status ("thinking hard") before streaming its answer in two chunks. */
const startThinkingAgent = async () => {
  let baseUrl = ""
  const status = (state: string, text?: string) => ({
    state,
    ...(text === undefined ? {} : { message: { messageId: `s-${state}`, role: "ROLE_AGENT", parts: [{ text }] } })
  })
  const ids = { taskId: "think-1", contextId: "ctx-think" }
  const events = [
    { task: { id: ids.taskId, contextId: ids.contextId, status: status("TASK_STATE_SUBMITTED") } },
    { statusUpdate: { ...ids, status: status("TASK_STATE_WORKING", "thinking hard") } },
    { artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: "The quick" }] } } },
    { artifactUpdate: { ...ids, artifact: { artifactId: "a", parts: [{ text: " brown fox" }] }, append: true, lastChunk: true } },
    { statusUpdate: { ...ids, status: status("TASK_STATE_COMPLETED") } }
  ]
  const server = http.createServer((req, res) => {
    if (req.url === "/.well-known/agent-card.json") return sendJson(res, 200, validV1Card(baseUrl))
    let body = ""
    req.on("data", (chunk) => (body += chunk))
    req.on("end", () => {
      const { id } = JSON.parse(body) as { id: unknown }
      res.writeHead(200, { "content-type": "text/event-stream" })
      void (async () => {
        for (const result of events) {
          res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`)
          await new Promise((resolve) => setTimeout(resolve, 30))
        }
        res.end()
      })()
    })
  })
  baseUrl = await listenOnLoopback(server)
  return { baseUrl, close: () => closeServer(server) }
}

describe("message stream: the answer on stdout, the agent's status on stderr", () => {
  let thinking: Awaited<ReturnType<typeof startThinkingAgent>>
  beforeAll(async () => {
    thinking = await startThinkingAgent()
  })
  afterAll(() => thinking.close())

  it("never glues the status text to the answer; status lines stand alone on stderr; stdout ends with a newline", async () => {
    const result = await relay(["message", "stream", "--url", thinking.baseUrl, "hi"])
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith("The quick brown fox\n")).toBe(true)
    expect(result.stdout).not.toContain("thinking hard")
    expect(result.stdout.endsWith("\n")).toBe(true)
    const lines = result.stderr.trim().split("\n")
    expect(lines).toContain("[working] thinking hard")
    expect(lines).toContain("[completed]")
  })

  it("--json prints NDJSON: one update per event as it arrives, then the result on one line", async () => {
    const result = await relay(["message", "stream", "--url", thinking.baseUrl, "--json", "hi"])
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    const lines = result.stdout.trimEnd().split("\n").map((line) => json(line))
    const updates = lines.slice(0, -1)
    expect(updates.every((update) => update["kind"] === "update")).toBe(true)
    expect(updates.map((update) => update["text"]).join("")).toBe("The quick brown fox")
    expect(updates).toContainEqual(expect.objectContaining({ state: "working", status: "thinking hard", text: "" }))
    expect(lines.at(-1)).toMatchObject({ kind: "task", state: "completed", text: "The quick brown fox", task_id: "think-1" })
  })
})

/** Runs relay on a pseudo-terminal (util-linux `script`), stdout and stderr both on it, as a person sees it. */
const relayOnTerminal = (args: ReadonlyArray<string>): Promise<string> =>
  new Promise((resolve, reject) => {
    const quoted = [process.execPath, relayBin, ...args].map((arg) => `'${arg.replace(/'/g, "'\\''")}'`).join(" ")
    execFile("script", ["-qec", quoted, "/dev/null"], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
      timeout: 20_000
    }, (error, stdout) => (error !== null && error.killed ? reject(error) : resolve(stdout)))
  })

describe("while the agent is silent", () => {
  it("a terminal shows the latest state and the time waited on one redrawn stderr line, erased before the error", async () => {
    const screen = await relayOnTerminal(["message", "send", "--url", silent.baseUrl, "--timeout", "3", "hi"])
    expect(screen).toMatch(/waiting for the agent · 1s/)
    expect(screen).toMatch(/waiting for the agent · 2s\r\u001b\[Kerror: /)
  })

  it("never with --json, and never when stderr is not a terminal", async () => {
    const screen = await relayOnTerminal(["message", "send", "--url", silent.baseUrl, "--timeout", "2", "--json", "hi"])
    expect(screen).toContain("\"code\": \"timeout\"")
    expect(screen).not.toContain("waiting for the agent")
    const piped = await relay(["message", "send", "--url", silent.baseUrl, "--timeout", "2", "hi"])
    expect(piped.code).toBe(4)
    expect(piped.stderr).not.toContain("waiting for the agent")
  })
})
