/**
 * `relay mcp` as MCP clients meet it: the built CLI spawned and driven over real stdio,
 * streamable HTTP and SSE by the SDK client; DNS-rebinding protection (Host and Origin); stdout
 * carrying nothing but MCP messages and a clean exit when stdin closes; the transport option
 * refusing other values; the pinned MCP inspector CLI; and the session store shared live with
 * the terminal commands in both directions. Needs `npm run build` first.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js"
import { type CallToolResult, LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import * as Fs from "node:fs"
import http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { allowedHostNames } from "../../src/mcp/httpTransports.js"
import { closedPortUrl, headerOf, rpcMethodOf, waitUntil } from "../helpers/a2aPrograms.js"
import { relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { initializeRequest } from "../helpers/mcpMessages.js"
import { tempHome } from "../helpers/stateHome.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { reply, startStub, type Stub, v1Card } from "../services/a2aClientHarness.js"
import { HOSTILE_MESSAGES, leaksInternals, oversizedCall } from "./hostileMessages.js"

const BEARER = "live-sharing-bearer-0123456789"
const TOOL_COUNT = 21
/** A package of its own, since its engines field asks for Node 22: `npm ci --prefix test/clients/inspector`. */
const INSPECTOR = fileURLToPath(new URL("../clients/inspector/node_modules/.bin/mcp-inspector", import.meta.url))

const home = tempHome()
let agent: SdkAgentHandle
let secured: SdkAgentHandle
/** An agent that accepts any body size and answers with the size of the message text it got. */
let measuring: Stub
/** An agent whose task never finishes: a send_message there ends only when relay's own wait runs out. */
let working: Stub
const cleanups: Array<() => Promise<unknown>> = []

const measuringAgent = () =>
  startStub((base) => ({
    "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
    "POST /rpc": (request) => {
      const body = request.body as { id: unknown; params: { message: { parts: ReadonlyArray<{ text: string }> } } }
      const text = `received ${body.params.message.parts[0]!.text.length} characters`
      return { body: { jsonrpc: "2.0", id: body.id, result: { message: { messageId: "m-1", role: "ROLE_AGENT", parts: [{ text }] } } } }
    }
  }))

const WORKING_TASK = { id: "task-working", contextId: "context-working", status: { state: "TASK_STATE_WORKING" } }

const workingAgent = () =>
  startStub((base) => ({
    "GET /.well-known/agent-card.json": reply(
      v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }], { streaming: false, pushNotifications: false })
    ),
    "POST /rpc": (request) => {
      const body = request.body as { id: unknown; method: string }
      return { body: { jsonrpc: "2.0", id: body.id, result: body.method === "SendMessage" ? { task: WORKING_TASK } : WORKING_TASK } }
    }
  }))

/**
 * send_message at the working agent answers "working" once relay's wait, set to 1 s here, runs
 * out. That wait also covers reaching the agent, so its card is fetched first (undici loaded, the
 * card cached): a first call on a loaded machine could spend the whole second getting there.
 */
const expectWaitOfOneSecond = async (client: Client) => {
  structured(await callTool(client, "get_agent_card", { agent_url: working.baseUrl }))
  const started = Date.now()
  // The call's own timeout (15 s) bounds the wait; relay's default wait (45 s) would outlast it.
  const result = structured(await callTool(client, "send_message", { agent_url: working.baseUrl, message: "wait for me" }))
  expect(result).toMatchObject({ state: "working", task_id: WORKING_TASK.id })
  expect(result["next_step"]).toMatch(/wait_for_task/)
  expect(Date.now() - started).toBeGreaterThanOrEqual(900)
}

beforeAll(async () => {
  requireBuiltRelay()
  ;[agent, secured, measuring, working] = await Promise.all([
    startSdkAgent(),
    startSdkAgent({ requireBearer: BEARER }),
    measuringAgent(),
    workingAgent()
  ])
})

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined)
  await Promise.allSettled([agent?.close(), secured?.close(), measuring?.close(), working?.close()])
  home.cleanup()
})

const relayEnv = (extra: Record<string, string> = {}): Record<string, string> => {
  const env: Record<string, string> = {}
  for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
  return { ...env, RELAY_HOME: home.stateDir, NO_COLOR: "1", ...extra }
}

const textOf = (result: CallToolResult) => result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/** callTool's declared result also admits the legacy `toolResult` shape; this server never sends it. */
const callTool = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args }, undefined, { timeout: 15_000 })) as CallToolResult

const structured = (result: CallToolResult) => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  return result.structuredContent as Record<string, unknown>
}

/** Resolves with the exit code; rejects (after killing the process) when it does not exit in time. */
const exitOf = (child: ChildProcessWithoutNullStreams, timeoutMs: number): Promise<number | null> =>
  new Promise((resolve, reject) => {
    if (child.exitCode !== null) return resolve(child.exitCode)
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`relay mcp did not exit within ${timeoutMs} ms`))
    }, timeoutMs)
    child.once("exit", (code) => {
      clearTimeout(timer)
      resolve(code)
    })
  })

interface HttpServerProcess {
  readonly url: string
  readonly child: ChildProcessWithoutNullStreams
  readonly stderr: () => string
}

/** Spawns `relay mcp` on an HTTP transport with port 0 and reads the URL it prints on stderr. */
const startHttpServer = (args: ReadonlyArray<string>, env: Record<string, string> = {}): Promise<HttpServerProcess> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, "mcp", ...args, "--port", "0"], { env: relayEnv(env), stdio: "pipe" })
    cleanups.push(async () => {
      child.kill("SIGTERM")
      await exitOf(child, 5000)
    })
    let stderr = ""
    let stdout = ""
    const timer = setTimeout(() => reject(new Error(`no URL printed within 10 s\nstderr: ${stderr}`)), 10_000)
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => {
      stderr += chunk
      const match = /listening at (http:\/\/\S+)/.exec(stderr)
      if (match?.[1] !== undefined) {
        clearTimeout(timer)
        resolve({ url: match[1], child, stderr: () => `${stderr}${stdout}` })
      }
    })
    child.once("exit", (code) => reject(new Error(`relay mcp exited early (${code})\nstderr: ${stderr}`)))
  })

interface RawResponse {
  readonly status: number
  readonly body: string
  readonly contentType: string
  readonly headers: http.IncomingHttpHeaders
}

/** A plain HTTP request with whatever Host/Origin headers a test needs (fetch forbids setting Host). */
const rawRequest = (
  url: string,
  options: { readonly method: string; readonly headers: Record<string, string>; readonly body?: string }
): Promise<RawResponse> =>
  new Promise((resolve, reject) => {
    const request = http.request(url, { method: options.method, headers: options.headers, timeout: 5000 }, (response) => {
      let body = ""
      const contentType = response.headers["content-type"] ?? ""
      response.on("data", (chunk) => (body += chunk))
      response.on("end", () => resolve({ status: response.statusCode ?? 0, body, contentType, headers: response.headers }))
      // An accepted SSE stream never ends: the status is all a test needs.
      if (contentType.startsWith("text/event-stream")) {
        resolve({ status: response.statusCode ?? 0, body: "", contentType, headers: response.headers })
        response.destroy()
      }
    })
    request.on("timeout", () => request.destroy(new Error("request timed out")))
    request.on("error", reject)
    request.end(options.body)
  })

const INITIALIZE = JSON.stringify(initializeRequest("raw", 1))
const MCP_POST_HEADERS = { "content-type": "application/json", accept: "application/json, text/event-stream" }

const connectStdio = async (args: ReadonlyArray<string>, env: Record<string, string> = {}) => {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [relayBin, "mcp", ...args],
    env: relayEnv(env),
    stderr: "pipe"
  })
  const client = new Client({ name: "transports-test", version: "1.0.0" })
  await client.connect(transport)
  cleanups.push(() => client.close())
  return client
}

interface StdioSession {
  readonly child: ChildProcessWithoutNullStreams
  readonly write: (line: string) => void
  /** The answer carrying `id`, within the timeout. */
  readonly answer: (id: string | number | null, timeoutMs?: number) => Promise<Record<string, unknown>>
  readonly answers: () => ReadonlyArray<Record<string, unknown>>
  readonly stderr: () => string
}

/** `relay mcp` spawned on stdio and initialized, driven line by line. */
const stdioSession = async (): Promise<StdioSession> => {
  const child = spawn(process.execPath, [relayBin, "mcp"], { env: relayEnv(), stdio: "pipe" })
  cleanups.push(async () => void child.kill("SIGKILL"))
  let stdout = ""
  let stderr = ""
  child.stdout.on("data", (chunk) => (stdout += chunk))
  child.stderr.on("data", (chunk) => (stderr += chunk))
  const answers = () => stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
  const answer = async (id: string | number | null, timeoutMs = 10_000) => {
    const deadline = Date.now() + timeoutMs
    for (;;) {
      const found = answers().find((message) => message["id"] === id)
      if (found !== undefined) return found
      if (Date.now() > deadline) throw new Error(`no answer to id ${id}\nstdout: ${stdout.slice(0, 2000)}\nstderr: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
  }
  const write = (line: string) => void child.stdin.write(`${line}\n`)
  write(INITIALIZE)
  await answer(1)
  write(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }))
  return { child, write, answer, answers, stderr: () => stderr }
}

describe("stdio", () => {
  let client: Client

  beforeAll(async () => {
    client = await connectStdio(["--wait-seconds", "1"])
  })

  it("serves the tools to the SDK client over real stdio", async () => {
    expect(client.getServerVersion()?.name).toBe("a2a-relay")
    const { tools } = await client.listTools()
    expect(tools.length).toBe(TOOL_COUNT)
    const sessions = structured(await callTool(client, "list_sessions"))
    expect(sessions["count"]).toBe((sessions["sessions"] as ReadonlyArray<unknown>).length)
  })

  it("honours --wait-seconds: send_message answers 'working' after about a second", async () => {
    await expectWaitOfOneSecond(client)
  })

  it("shares the store live: `relay auth set` is used by the running server, and what it saves shows in `relay session list`", async () => {
    // Terminal → MCP: the running server was started before these credentials existed.
    const refused = await callTool(client, "send_message", { agent_url: secured.baseUrl, message: "before" })
    expect(refused.isError).toBe(true)
    const set = await runRelay(["auth", "set", "--url", secured.baseUrl, "--bearer-token", BEARER], { stateDir: home.stateDir })
    expect(set.code, set.stderr).toBe(0)
    const before = secured.requests.length
    const sent = structured(await callTool(client, "send_message", { agent_url: secured.baseUrl, message: "after auth set" }))
    expect(sent["text"]).toBe("echo: after auth set")
    const sends = secured.requests.slice(before).filter((request) => rpcMethodOf(request) === "SendMessage")
    expect(sends.length).toBe(1)
    expect(sends.map((request) => headerOf(request, "authorization"))).toEqual([`Bearer ${BEARER}`])

    // MCP → terminal: the session the server just saved is listed at once.
    const listed = await runRelay(["session", "list", "--json"], { stateDir: home.stateDir })
    expect(listed.code, listed.stderr).toBe(0)
    const sessions = (JSON.parse(listed.stdout) as { sessions: ReadonlyArray<Record<string, unknown>> }).sessions
    expect(sessions.find((session) => session["agent_url"] === secured.baseUrl)).toMatchObject({
      context_id: sent["context_id"],
      task_id: sent["task_id"],
      last_state: "completed",
      has_credentials: true
    })

    // MCP → terminal for credentials, and terminal → MCP for clearing them.
    structured(await callTool(client, "set_agent_credentials", { agent_url: agent.baseUrl, api_key: "live-key-abcdef" }))
    const afterSet = await runRelay(["session", "list", "--json"], { stateDir: home.stateDir })
    const agentSession = (JSON.parse(afterSet.stdout) as { sessions: ReadonlyArray<Record<string, unknown>> }).sessions
      .find((session) => session["agent_url"] === agent.baseUrl)
    expect(agentSession?.["has_credentials"]).toBe(true)
    const cleared = await runRelay(["auth", "clear", "--url", secured.baseUrl], { stateDir: home.stateDir })
    expect(cleared.code, cleared.stderr).toBe(0)
    expect(structured(await callTool(client, "get_session_info", { agent_url: secured.baseUrl }))["has_credentials"]).toBe(false)
    const refusedAgain = await callTool(client, "send_message", { agent_url: secured.baseUrl, message: "after auth clear" })
    expect(refusedAgain.isError).toBe(true)
    expect(textOf(refusedAgain)).toContain("auth_required")
  })

  it("writes nothing but MCP messages on stdout, logs on stderr, and exits 0 when stdin closes", async () => {
    const child = spawn(process.execPath, [relayBin, "mcp"], { env: relayEnv(), stdio: "pipe" })
    cleanups.push(async () => void child.kill("SIGKILL"))
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    child.stderr.on("data", (chunk) => (stderr += chunk))
    const lines = [
      INITIALIZE,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/list" }),
      JSON.stringify({ jsonrpc: "2.0", id: 3, method: "tools/call", params: { name: "list_sessions", arguments: {} } }),
      // A failing call (nothing listens on port 9) must not leak anything onto stdout either.
      JSON.stringify({
        jsonrpc: "2.0",
        id: 4,
        method: "tools/call",
        params: { name: "get_agent_card", arguments: { agent_url: "http://127.0.0.1:9" } }
      })
    ]
    child.stdin.write(`${lines.join("\n")}\n`)
    const deadline = Date.now() + 10_000
    while (!stdout.includes("\"id\":4")) {
      if (Date.now() > deadline) throw new Error(`no answer to all requests\nstdout: ${stdout}\nstderr: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    child.stdin.end()
    expect(await exitOf(child, 5000)).toBe(0)

    const messages = stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
    expect(messages.every((message) => message["jsonrpc"] === "2.0")).toBe(true)
    expect(messages.map((message) => message["id"])).toEqual([1, 2, 3, 4])
    expect(stderr).toContain("MCP server ready on stdio")
  })

  it("answers a 12 MB line with an error to its id, then answers a ping, and exits 0 when stdin closes", async () => {
    const session = await stdioSession()
    session.write(oversizedCall(13, 12_000_000))
    session.write(JSON.stringify({ jsonrpc: "2.0", id: 14, method: "ping" }))
    expect(await session.answer(14)).toMatchObject({ result: {} })
    const refused = await session.answer(13)
    expect(refused).toMatchObject({ error: { code: -32600 } })
    expect((refused["error"] as { message: string }).message).toMatch(/12000\d{3} bytes, over the 10485760-byte limit/)
    expect(session.stderr()).toContain("Refused an MCP message on stdin")
    session.child.stdin.end()
    expect(await exitOf(session.child, 5000)).toBe(0)
  })

  it("refuses every message of the hostile corpus (deep, oversized, broken) and serves a ping after each", async () => {
    const session = await stdioSession()
    let pingId = 100
    for (const message of HOSTILE_MESSAGES) {
      session.write(message.text)
      session.write(JSON.stringify({ jsonrpc: "2.0", id: ++pingId, method: "ping" }))
      expect(await session.answer(pingId), message.name).toMatchObject({ result: {} })
    }
    const errors = session.answers().filter((answer) => answer["error"] !== undefined)
    const expected = HOSTILE_MESSAGES.filter((message) => message.answeredOnStdio)
    expect(errors.map((answer) => [answer["id"], (answer["error"] as { code: number }).code]))
      .toEqual(expected.map((message) => [message.id, message.code]))
    expect(errors.some((answer) => leaksInternals(JSON.stringify(answer)))).toBe(false)
    session.child.stdin.end()
    expect(await exitOf(session.child, 5000)).toBe(0)
  })

  it("refuses any other transport value with exit 2, naming the three", async () => {
    const result = await runRelay(["mcp", "--transport", "websocket"], { stateDir: home.stateDir })
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    for (const name of ["stdio", "sse", "streamable-http"]) expect(result.stderr).toContain(name)
    const short = await runRelay(["mcp", "-t", "http"], { stateDir: home.stateDir })
    expect(short.code).toBe(2)
  })
})

describe("the logging capability", () => {
  it("sends relay's log lines of a tool call as MCP log messages, at or above the level the client set", async () => {
    const client = await connectStdio(["--verbose"])
    expect(client.getServerCapabilities()?.logging).toBeDefined()
    const messages: Array<{ level: string; data: unknown }> = []
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => void messages.push(notification.params))
    const nowhere = await closedPortUrl()
    await client.setLoggingLevel("debug")
    await client.callTool({ name: "get_agent_card", arguments: { agent_url: nowhere } })
    await waitUntil("a log message", () => messages.some((m) => String(m.data).includes("Cannot reach")))
    expect(messages.find((m) => String(m.data).includes("Cannot reach"))).toMatchObject({ level: "debug" })
    expect(messages.every((m) => !leaksInternals(String(m.data)))).toBe(true)

    await client.setLoggingLevel("error")
    const before = messages.length
    await client.callTool({ name: "get_agent_card", arguments: { agent_url: nowhere } })
    // A round trip after the call: any log message of the call would have arrived before its answer.
    await client.listTools()
    expect(messages.length).toBe(before)
  })
})

describe("streamable HTTP", () => {
  let server: HttpServerProcess

  beforeAll(async () => {
    server = await startHttpServer(["--transport", "streamable-http"], { RELAY_MCP_WAIT_SECONDS: "1" })
  })

  it("binds 127.0.0.1 by default and serves /mcp to the SDK client (RELAY_MCP_WAIT_SECONDS applies)", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
    const client = new Client({ name: "http-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    cleanups.push(() => client.close())
    expect((await client.listTools()).tools.length).toBe(TOOL_COUNT)
    structured(await callTool(client, "list_sessions"))
    await expectWaitOfOneSecond(client)
  })

  it("answers 403 to a foreign Host or Origin (DNS rebinding), and serves the origin it serves itself", async () => {
    const evilHost = await rawRequest(server.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, host: "evil.example" },
      body: INITIALIZE
    })
    expect(evilHost.status).toBe(403)
    const evilOrigin = await rawRequest(server.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, origin: "http://evil.example" },
      body: INITIALIZE
    })
    expect(evilOrigin.status).toBe(403)
    const nullOrigin = await rawRequest(server.url, { method: "POST", headers: { ...MCP_POST_HEADERS, origin: "null" }, body: INITIALIZE })
    expect(nullOrigin.status).toBe(403)
    // Another local port is another origin (any local web page could be there).
    const otherPort = await rawRequest(server.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, origin: "http://localhost:6274" },
      body: INITIALIZE
    })
    expect(otherPort.status).toBe(403)
    expect(JSON.parse(otherPort.body)).toMatchObject({ jsonrpc: "2.0", error: { message: expect.stringContaining("--allow-origin") } })
    const { port } = new URL(server.url)
    for (const origin of [`http://127.0.0.1:${port}`, `http://localhost:${port}`]) {
      const served = await rawRequest(server.url, { method: "POST", headers: { ...MCP_POST_HEADERS, origin }, body: INITIALIZE })
      expect(served.status, origin).toBe(200)
    }
    // Without a session a GET has nothing to stream: 405, as both eras allow (2026-07-28 has no GET at all).
    const noSession = await rawRequest(server.url, { method: "GET", headers: { accept: "text/event-stream" } })
    expect(noSession.status).toBe(405)
    const unknownSession = await rawRequest(server.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, "mcp-session-id": "nope" },
      body: INITIALIZE
    })
    expect(unknownSession.status).toBe(404)
  })

  it("serves the origins given with --allow-origin (repeatable), and still refuses the others", async () => {
    const allowing = await startHttpServer([
      "-t",
      "streamable-http",
      "--allow-origin",
      "http://localhost:6274",
      "--allow-origin",
      "https://tools.example"
    ])
    const post = (origin: string) =>
      rawRequest(allowing.url, { method: "POST", headers: { ...MCP_POST_HEADERS, origin }, body: INITIALIZE }).then((r) => r.status)
    expect(await post("http://localhost:6274")).toBe(200)
    expect(await post("https://tools.example")).toBe(200)
    expect(await post("http://localhost:6275")).toBe(403)
    expect(await post("http://tools.example")).toBe(403)
  })

  it("resumes a stream after a reconnect: event ids and a retry hint, then Last-Event-ID replays what was missed", async () => {
    const server = await startHttpServer(["-t", "streamable-http"])
    const version = "2025-11-25"
    const initialize = JSON.stringify({ ...JSON.parse(INITIALIZE), params: { ...JSON.parse(INITIALIZE).params, protocolVersion: version } })
    const opened = await fetch(server.url, {
      method: "POST",
      headers: MCP_POST_HEADERS,
      body: initialize,
      signal: AbortSignal.timeout(5000)
    })
    await opened.text()
    const session = { "mcp-session-id": opened.headers.get("mcp-session-id") ?? "", "mcp-protocol-version": version }
    const post = (body: unknown) =>
      fetch(server.url, {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, ...session },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(5000)
      })
    await (await post({ jsonrpc: "2.0", method: "notifications/initialized" })).text()
    // The answer to tools/list comes on an SSE stream whose events carry ids; the first primes it with `retry`.
    const listed = await (await post({ jsonrpc: "2.0", id: 2, method: "tools/list" })).text()
    const ids = [...listed.matchAll(/^id: (.+)$/gm)].map((match) => match[1]!)
    expect(ids.length).toBeGreaterThanOrEqual(2)
    expect(listed).toMatch(/^retry: \d+$/m)
    // A client that lost the stream after the priming event asks for the rest.
    const resumed = await fetch(server.url, {
      method: "GET",
      headers: { accept: "text/event-stream", ...session, "last-event-id": ids[0]! },
      signal: AbortSignal.timeout(5000)
    })
    expect(resumed.status).toBe(200)
    const reader = resumed.body!.getReader()
    let replayed = ""
    while (!replayed.includes("\"tools\"")) {
      const { value, done } = await reader.read()
      if (done) break
      replayed += new TextDecoder().decode(value)
    }
    await reader.cancel()
    expect(replayed).toContain(`id: ${ids.at(-1)}`)
    expect(replayed).toContain("\"id\":2")
  })

  it("answers a browser's CORS preflight for an allowed origin, and refuses a foreign one", async () => {
    const allowing = await startHttpServer(["-t", "streamable-http", "--allow-origin", "http://localhost:6274"])
    const preflight = (origin: string) =>
      rawRequest(allowing.url, {
        method: "OPTIONS",
        headers: { origin, "access-control-request-method": "POST", "access-control-request-headers": "content-type, mcp-session-id" }
      })
    const allowed = await preflight("http://localhost:6274")
    expect(allowed.status).toBe(204)
    expect(allowed.headers["access-control-allow-origin"]).toBe("http://localhost:6274")
    expect(allowed.headers["access-control-allow-methods"]).toContain("POST")
    expect(String(allowed.headers["access-control-allow-headers"]).toLowerCase()).toContain("mcp-session-id")
    const foreign = await preflight("http://evil.example")
    expect(foreign.status).toBe(403)
    expect(foreign.headers["access-control-allow-origin"]).toBeUndefined()
    expect(JSON.parse(foreign.body)).toMatchObject({ jsonrpc: "2.0", error: { code: -32000 } })
    // The answer itself names the origin and lets the page read the session id.
    const initialized = await rawRequest(allowing.url, {
      method: "POST",
      headers: { ...MCP_POST_HEADERS, origin: "http://localhost:6274" },
      body: INITIALIZE
    })
    expect(initialized.headers["access-control-allow-origin"]).toBe("http://localhost:6274")
    expect(String(initialized.headers["access-control-expose-headers"]).toLowerCase()).toContain("mcp-session-id")
  })

  it("lets an allowed browser origin send the headers a 2026-07-28 request carries (Mcp-Method, Mcp-Name)", async () => {
    const allowing = await startHttpServer(["-t", "streamable-http", "--allow-origin", "http://localhost:6274"])
    const requested = ["content-type", "mcp-protocol-version", "mcp-method", "mcp-name"]
    const allowed = await rawRequest(allowing.url, {
      method: "OPTIONS",
      headers: {
        origin: "http://localhost:6274",
        "access-control-request-method": "POST",
        "access-control-request-headers": requested.join(", ")
      }
    })
    expect(allowed.status).toBe(204)
    const allowedHeaders = String(allowed.headers["access-control-allow-headers"]).toLowerCase().split(/\s*,\s*/)
    for (const header of requested) expect(allowedHeaders, header).toContain(header)
  })

  it("refuses an --allow-origin value that is not an origin, with exit 2", async () => {
    for (const value of ["localhost:6274", "http://localhost:6274/app", "*"]) {
      const result = await runRelay(["mcp", "-t", "streamable-http", "--allow-origin", value], { stateDir: home.stateDir })
      expect(result.code, value).toBe(2)
      expect(result.stderr).toContain("--allow-origin")
    }
  })

  it("answers every message of the hostile corpus with a JSON-RPC error in JSON: never HTML, a stack or a path", async () => {
    for (const message of HOSTILE_MESSAGES) {
      const answer = await rawRequest(server.url, { method: "POST", headers: MCP_POST_HEADERS, body: message.text })
      expect(answer.status, message.name).toBe(message.status)
      expect(answer.contentType, message.name).toMatch(/^application\/json/)
      expect(leaksInternals(answer.body), answer.body).toBe(false)
      // The id of a body refused for its size is not read: null.
      expect(JSON.parse(answer.body), message.name).toEqual({
        jsonrpc: "2.0",
        id: message.status === 413 ? null : message.id,
        error: { code: message.code, message: expect.any(String) }
      })
    }
    const other = [
      { method: "POST", headers: { ...MCP_POST_HEADERS, "content-type": "text/plain" }, body: INITIALIZE, status: 415 },
      {
        method: "POST",
        headers: { ...MCP_POST_HEADERS, "content-type": "application/json; charset=latin1" },
        body: INITIALIZE,
        status: 415
      },
      { method: "GET", headers: {}, status: 404, path: "/elsewhere" }
    ]
    for (const request of other) {
      const answer = await rawRequest(new URL(request.path ?? "/mcp", server.url).toString(), request)
      expect(answer.status).toBe(request.status)
      expect(answer.contentType).toMatch(/^application\/json/)
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", id: null, error: { code: expect.any(Number) } })
      expect(leaksInternals(answer.body), answer.body).toBe(false)
    }
    expect((await rawRequest(server.url, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE })).status).toBe(200)
  })

  it("accepts a send_message of 2 MB, as stdio does (the limit is 10 MiB on both)", async () => {
    const client = new Client({ name: "big-http-test", version: "1.0.0" })
    await client.connect(new StreamableHTTPClientTransport(new URL(server.url)))
    cleanups.push(() => client.close())
    const text = "z".repeat(2 * 1024 * 1024)
    const result = structured(await callTool(client, "send_message", { agent_url: measuring.baseUrl, message: text }))
    expect(result["text"]).toBe(`received ${text.length} characters`)
  })

  it("fails with exit 1 and a hint when the port is taken", async () => {
    const port = Number(new URL(server.url).port)
    const result = await runRelay(["mcp", "-t", "streamable-http", "--port", String(port)], { stateDir: home.stateDir })
    expect(result.code).toBe(1)
    expect(result.stderr).toMatch(/Cannot listen on 127\.0\.0\.1:\d+/)
    expect(result.stderr).toMatch(/hint: Choose another --port/)
  })

  it("accepts only loopback names by default, and this machine's own names on a wildcard bind", () => {
    expect(allowedHostNames("127.0.0.1")).toEqual(["localhost", "127.0.0.1", "[::1]"])
    expect(allowedHostNames("::1")).toEqual(["localhost", "127.0.0.1", "[::1]"])
    expect(allowedHostNames("192.168.7.7")).toContain("192.168.7.7")
    // As a Host header names them once parsed: a name in lower case, an IPv6 literal in its shortest form.
    expect(allowedHostNames("MyBox.Example")).toContain("mybox.example")
    expect(allowedHostNames("fd00::0001")).toContain("[fd00::1]")
    const wildcard = allowedHostNames("0.0.0.0")
    expect(wildcard).toEqual(expect.arrayContaining(["localhost", "127.0.0.1", Os.hostname().toLowerCase()]))
    expect(wildcard).not.toContain("evil.example")
  })

  it("stops cleanly on SIGTERM", async () => {
    const other = await startHttpServer(["-t", "streamable-http"])
    other.child.kill("SIGTERM")
    expect(await exitOf(other.child, 5000)).toBe(0)
  })
})

describe("SSE", () => {
  let server: HttpServerProcess

  beforeAll(async () => {
    server = await startHttpServer(["--transport", "sse", "--host", "127.0.0.1"])
  })

  it("serves /sse with posts to /messages to the SDK client", async () => {
    expect(server.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/sse$/)
    const client = new Client({ name: "sse-test", version: "1.0.0" })
    await client.connect(new SSEClientTransport(new URL(server.url)))
    cleanups.push(() => client.close())
    expect((await client.listTools()).tools.length).toBe(TOOL_COUNT)
    const card = structured(await callTool(client, "get_agent_card", { agent_url: agent.baseUrl }))
    expect(card["agent_url"]).toBe(agent.baseUrl)
  })

  it("answers 403 to a foreign Host or Origin on /sse and /messages", async () => {
    const messages = server.url.replace(/\/sse$/, "/messages?sessionId=x")
    expect((await rawRequest(server.url, { method: "GET", headers: { host: "evil.example" } })).status).toBe(403)
    expect((await rawRequest(server.url, { method: "GET", headers: { origin: "http://evil.example" } })).status).toBe(403)
    expect(
      (await rawRequest(messages, { method: "POST", headers: { ...MCP_POST_HEADERS, host: "evil.example:80" }, body: INITIALIZE })).status
    ).toBe(403)
    expect(
      (await rawRequest(messages, { method: "POST", headers: { ...MCP_POST_HEADERS, origin: "https://evil.example" }, body: INITIALIZE }))
        .status
    ).toBe(403)
    expect((await rawRequest(server.url, { method: "GET", headers: { origin: "http://127.0.0.1:6274" } })).status).toBe(403)
    expect((await rawRequest(server.url, { method: "GET", headers: { origin: new URL(server.url).origin } })).status).toBe(200)
    expect((await rawRequest(messages, { method: "POST", headers: MCP_POST_HEADERS, body: INITIALIZE })).status).toBe(404)
  })

  it("serves the origins given with --allow-origin on /sse and /messages", async () => {
    const allowing = await startHttpServer(["-t", "sse", "--allow-origin", "http://127.0.0.1:6274"])
    const messages = allowing.url.replace(/\/sse$/, "/messages?sessionId=x")
    const origin = { origin: "http://127.0.0.1:6274" }
    expect((await rawRequest(allowing.url, { method: "GET", headers: origin })).status).toBe(200)
    // Past the Origin check: an unknown session.
    expect((await rawRequest(messages, { method: "POST", headers: { ...MCP_POST_HEADERS, ...origin }, body: INITIALIZE })).status).toBe(404)
    expect((await rawRequest(allowing.url, { method: "GET", headers: { origin: "http://127.0.0.1:6275" } })).status).toBe(403)
  })

  it("answers the hostile corpus on /messages with JSON-RPC errors before looking up the session", async () => {
    const messages = server.url.replace(/\/sse$/, "/messages?sessionId=x")
    for (const message of HOSTILE_MESSAGES) {
      const answer = await rawRequest(messages, { method: "POST", headers: MCP_POST_HEADERS, body: message.text })
      expect(answer.status, message.name).toBe(message.status)
      expect(answer.contentType).toMatch(/^application\/json/)
      expect(JSON.parse(answer.body)).toMatchObject({ jsonrpc: "2.0", error: { code: message.code } })
      expect(leaksInternals(answer.body), answer.body).toBe(false)
    }
  })
})

describe("the pinned MCP inspector CLI", () => {
  beforeAll(() => {
    if (!Fs.existsSync(INSPECTOR)) throw new Error("the MCP inspector is missing: run npm ci --prefix test/clients/inspector")
  })
  const inspect = (args: ReadonlyArray<string>) =>
    new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
      const child = spawn(INSPECTOR, ["--cli", "-e", `RELAY_HOME=${home.stateDir}`, process.execPath, relayBin, "mcp", ...args], {
        // The inspector keeps a catalog file; keep it out of the real home directory.
        env: relayEnv({ MCP_CATALOG_PATH: Path.join(home.parent, "inspector-catalog.json") }),
        stdio: "pipe"
      })
      let stdout = ""
      let stderr = ""
      child.stdout.on("data", (chunk) => (stdout += chunk))
      child.stderr.on("data", (chunk) => (stderr += chunk))
      const timer = setTimeout(() => {
        child.kill("SIGKILL")
        reject(new Error(`inspector timed out\nstderr: ${stderr}`))
      }, 25_000)
      child.once("exit", (code) => {
        clearTimeout(timer)
        resolve({ code, stdout, stderr })
      })
      child.stdin.end()
    })

  it("lists the tools and calls list_sessions", async () => {
    const inspected = "http://127.0.0.1:1/inspected"
    const saved = await runRelay(["auth", "set", "--url", inspected, "--bearer-token", "inspector-token-123"], { stateDir: home.stateDir })
    expect(saved.code, saved.stderr).toBe(0)
    const [listed, called] = await Promise.all([
      inspect(["--method", "tools/list"]),
      inspect(["--method", "tools/call", "--tool-name", "list_sessions"])
    ])
    expect(listed.code, listed.stderr).toBe(0)
    const tools = (JSON.parse(listed.stdout) as { tools: ReadonlyArray<{ name: string }> }).tools
    expect(tools.length).toBe(TOOL_COUNT)
    expect(tools.map((tool) => tool.name)).toContain("send_message")

    expect(called.code, called.stderr).toBe(0)
    const result = JSON.parse(called.stdout) as CallToolResult
    expect(result.isError ?? false).toBe(false)
    const content = result.structuredContent as { count: number; sessions: ReadonlyArray<{ agent_url: string }> }
    expect(content.count).toBe(content.sessions.length)
    // The inspector's server reads the same store the terminal command wrote.
    expect(content.sessions.map((session) => session.agent_url)).toContain(inspected)
  }, 30_000)
})
