/**
 * The terminal against agents that misbehave (issue 15, item 3), each through the spawned CLI:
 * an agent that hangs, answers HTML, garbage or a 500, drops its SSE stream midway (what arrived
 * is shown, the error surfaced, and resubscribing finishes the task), redirects to another
 * origin (the credentials never reach it), or streams forever (idle and total limits). Every
 * fault ends in exit code 1 with a clear message on stderr and no stack.
 */
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { tempHome } from "../helpers/stateHome.js"
import { closeServer, listenOnLoopback, readBodyText, tryParseJson } from "../peers/httpUtil.js"

const home = tempHome()
const SECRET = "fault-test-secret-7f3a9c"
let agent: http.Server
let agentUrl: string
let other: http.Server
let otherUrl: string
/** Headers of every request the other origin received. */
const otherRequests: Array<http.IncomingHttpHeaders> = []
/** Open sockets the agent holds (hanging and endless answers), cut at the end. */
const held: Array<http.ServerResponse> = []
let faults = 0

type Json = Record<string, any>
const TASK = { id: "task-fault", contextId: "ctx-fault" }
const frame = (id: unknown, result: Json) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`
const working = (id: unknown) => frame(id, { task: { ...TASK, status: { state: "TASK_STATE_WORKING" } } })
const partial = (id: unknown) =>
  frame(id, {
    artifactUpdate: { taskId: TASK.id, contextId: TASK.contextId, artifact: { artifactId: "a1", parts: [{ text: "partial answer" }] } }
  })
const completed = (id: unknown) =>
  frame(id, { statusUpdate: { taskId: TASK.id, contextId: TASK.contextId, status: { state: "TASK_STATE_COMPLETED" } } })
const SSE = { "content-type": "text/event-stream", "cache-control": "no-cache" }
/** A task whose resubscription drops midway, as "drop" does to a send. */
const DROPPED_ON_RESUBSCRIBE = "task-dropped-again"

/** What the agent does, by the text of the message (or the method, to resubscribe). */
const answer = (body: Json, res: http.ServerResponse) => {
  const id = body["id"]
  if (body["method"] === "SubscribeToTask") {
    res.writeHead(200, SSE)
    if (body["params"]?.["id"] !== DROPPED_ON_RESUBSCRIBE) return res.end(working(id) + partial(id) + completed(id))
    res.write(working(id) + partial(id))
    return setTimeout(() => res.socket?.destroy(), 100)
  }
  const text: string = body["params"]?.["message"]?.["parts"]?.[0]?.["text"] ?? ""
  switch (text) {
    case "hang":
      return held.push(res)
    case "html":
      res.writeHead(200, { "content-type": "text/html" })
      return res.end(`<html><body><h1>Welcome to nginx!</h1>${"<p>filler</p>".repeat(10_000)}</body></html>`)
    case "garbage":
      res.writeHead(200, { "content-type": "application/json" })
      return res.end("}{\u0000\u00ffnot json at all")
    case "500":
      res.writeHead(500, { "content-type": "text/html" })
      return res.end("<html><body>Internal Server Error</body></html>")
    case "drop":
      res.writeHead(200, SSE)
      res.write(working(id) + partial(id))
      // The connection dies midway: no final event, no clean end.
      return setTimeout(() => res.socket?.destroy(), 100)
    case "silent":
      res.writeHead(200, SSE)
      res.write(working(id))
      return held.push(res)
    case "endless": {
      res.writeHead(200, SSE)
      const timer = setInterval(() => res.write(working(id)), 100)
      res.on("close", () => clearInterval(timer))
      return held.push(res)
    }
    default:
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(JSON.stringify({ jsonrpc: "2.0", id, result: { task: { ...TASK, status: { state: "TASK_STATE_COMPLETED" } } } }))
  }
}

beforeAll(async () => {
  other = http.createServer((req, res) => {
    otherRequests.push(req.headers)
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ jsonrpc: "2.0", id: 1, result: { task: { ...TASK, status: { state: "TASK_STATE_COMPLETED" } } } }))
  })
  otherUrl = await listenOnLoopback(other)
  agent = http.createServer(async (req, res) => {
    const path = (req.url ?? "/").split("?")[0]
    if (req.method === "GET" && path === "/.well-known/agent-card.json") {
      const card = validV1Card(agentUrl)
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(
        JSON.stringify({ ...card, supportedInterfaces: [{ url: `${agentUrl}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }] })
      )
    }
    if (req.method === "GET" && path === "/redirecting/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" })
      return res.end(
        JSON.stringify({
          ...validV1Card(agentUrl),
          supportedInterfaces: [{ url: `${agentUrl}/moved`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]
        })
      )
    }
    if (path === "/moved") {
      // Another origin: a client that follows must not take the credentials along.
      res.writeHead(307, { location: `${otherUrl}/rpc` })
      return res.end()
    }
    const body = tryParseJson(await readBodyText(req)) as Json
    answer(body ?? {}, res)
  })
  agentUrl = await listenOnLoopback(agent)
})

afterAll(async () => {
  for (const res of held) res.destroy()
  await closeServer(agent)
  await closeServer(other)
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir, timeoutMs: 20_000 })

/**
 * A failure (exit 1, or 4 when the agent gave no answer at all) with a message on stderr, and
 * nothing that looks like a stack trace or the agent's page.
 */
const expectClearFailure = (result: { code: number | null; stderr: string }, words: RegExp, exitCode = 1) => {
  expect(result.code, result.stderr).toBe(exitCode)
  expect(result.stderr).toMatch(words)
  expect(result.stderr).not.toMatch(/^\s+at .+:\d+:\d+\)?$/m)
  // An excerpt of what the agent sent may be quoted; a page never is.
  expect(result.stderr.length).toBeLessThan(2000)
  faults++
}

describe("an agent that misbehaves", () => {
  it("hangs: --timeout ends the call with a timeout that names the option", async () => {
    const started = Date.now()
    const result = await relay(["message", "send", "--url", agentUrl, "--timeout", "1", "hang"])
    expectClearFailure(result, /--timeout|timed out|no answer/i, 4)
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it.each([
    ["html", /html|JSON|content type|invalid/i],
    ["garbage", /JSON|invalid|parse/i],
    ["500", /500|server error/i]
  ])("answers %s: a clear error", async (text, words) => {
    expectClearFailure(await relay(["message", "send", "--url", agentUrl, text]), words)
  })

  it("drops its stream midway: what arrived is shown, the error surfaced, and resubscribing finishes the task", async () => {
    const dropped = await relay(["message", "stream", "--url", agentUrl, "drop"])
    expect(dropped.stdout).toContain("partial answer")
    expectClearFailure(dropped, /stream|connection|closed|ended|terminated/i)
    const resumed = await relay(["task", "resubscribe", "--url", agentUrl, TASK.id])
    expect(resumed.code, resumed.stderr).toBe(0)
    expect(resumed.stdout).toContain("completed")
    expect(resumed.stdout).toContain("partial answer")
  })

  it("drops its stream right after text that may begin a secret given for the call: that text is still shown", async () => {
    // "answer" may begin the token, so it waits for the next piece, which never comes.
    const token = ["--bearer-token", "answer-token-0123456789"]
    const dropped = await relay(["message", "stream", "--url", agentUrl, ...token, "drop"])
    expect(dropped.stdout).toContain("partial answer")
    expectClearFailure(dropped, /stream|connection|closed|ended|terminated/i)
    const events = await relay(["message", "stream", "--url", agentUrl, ...token, "--json", "drop"])
    const texts = events.stdout.trim().split("\n").map((line) => (JSON.parse(line) as { readonly text?: string }).text ?? "")
    expect(texts.join("")).toBe("partial answer")
    expect(events.code).toBe(1)
    const resubscribed = await relay(["task", "resubscribe", "--url", agentUrl, ...token, DROPPED_ON_RESUBSCRIBE])
    expect(resubscribed.stdout).toContain("partial answer")
    expectClearFailure(resubscribed, /stream|connection|closed|ended|terminated/i)
  })

  it("redirects to another origin: the credentials never reach it", async () => {
    const result = await relay([
      "message",
      "send",
      "--url",
      `${agentUrl}/redirecting`,
      "--bearer-token",
      SECRET,
      "--api-key",
      SECRET,
      "hello"
    ])
    for (const headers of otherRequests) {
      expect(headers["authorization"]).toBeUndefined()
      expect(headers["x-api-key"]).toBeUndefined()
      expect(JSON.stringify(headers)).not.toContain(SECRET)
    }
    expect(result.stdout + result.stderr).not.toContain(SECRET)
    if (result.code !== 0) expectClearFailure(result, /redirect|307|moved|status/i)
    else faults++
  })

  it("goes silent mid-stream: --stream-idle-timeout ends it, naming the option", async () => {
    const started = Date.now()
    const result = await relay(["message", "stream", "--url", agentUrl, "--stream-idle-timeout", "1", "silent"])
    expectClearFailure(result, /stream-idle-timeout|idle|silent/i)
    expect(Date.now() - started).toBeLessThan(8000)
  })

  it("streams forever: --wait bounds the whole call and leaves the task running, as it says", async () => {
    const started = Date.now()
    const result = await relay(["message", "stream", "--url", agentUrl, "--wait", "2", "endless"])
    expect(Date.now() - started).toBeLessThan(9000)
    expect(result.stdout + result.stderr).toContain(TASK.id)
    expect(result.stdout).toMatch(/State\s+working/)
    expect(result.stdout).toContain("still running")
    faults++
    reportFigures("client faults", {
      "faults survived": faults,
      "requests reaching the redirect's origin": otherRequests.length,
      "credentials forwarded": 0
    })
  })
})
