/**
 * The MCP tools in process: an SDK Client over InMemoryTransport talks to makeMcpServer, whose
 * programs run with the real layers (file session store on a temp state dir, the A2A client over
 * undici, the notification log and relay's own webhook receiver) against the official A2A SDK
 * peers. Every tool is called on its success and error paths; the client validates every
 * structuredContent against the listed outputSchema, error results included.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult, Progress, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Duration, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maskSecret } from "../../src/domain/secrets.js"
import { HEARTBEAT } from "../../src/mcp/progress.js"
import { INSTRUCTIONS, SERVER_NAME } from "../../src/mcp/server.js"
import { ERROR_META_KEY, withoutSecrets } from "../../src/mcp/toolResult.js"
import type { ToolContext } from "../../src/mcp/tools.js"
import { webhookBaseUrl } from "../../src/servers/webhook/WebhookServer.js"
import { VERSION } from "../../src/version.js"
import { closedPortUrl, headerOf, rpcMethodOf, sentMessages, startTaskOn, waitUntil } from "../helpers/a2aPrograms.js"
import {
  appLayer,
  type AppRuntime,
  type CallOptions as ToolCallOptions,
  callTool,
  connectTools,
  contextFor,
  textOf
} from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { INPUT_REQUIRED_QUESTION, secretEchoText, SLOW_TASK_MS, withBehaviour } from "../peers/behaviours.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"

// Long enough to be unmistakable, so "not echoed" means something.
const BEARER = "bearer-secret-0123456789abcdef"
const API_KEY = "apikey-secret-9876543210fedcba"
const PUSH_TOKEN = "push-token-secret-13579bdf2468"
const SECRETS = [BEARER, API_KEY, PUSH_TOKEN]

const TOOL_NAMES = [
  "validate_agent_card",
  "get_agent_card",
  "send_message",
  "get_task",
  "cancel_task",
  "set_task_notification",
  "get_task_notification",
  "list_sessions",
  "get_session_info",
  "clear_session_data",
  "set_agent_credentials",
  "clear_agent_credentials",
  "list_tasks",
  "list_task_notifications",
  "delete_task_notification",
  "wait_for_task",
  "get_push_notifications",
  "check_agent",
  "list_agents",
  "add_agent",
  "remove_agent"
]

const home = tempHome()
const brokenHome = tempHome()
let runtime: AppRuntime
let brokenRuntime: AppRuntime
let webhookUrl: string
let agent: SdkAgentHandle
let secured: SdkAgentHandle
let legacy: V03AgentHandle
let client: Client
const clients: Array<Client> = []
/** Every result any test saw, for the check that no secret ever comes back. */
const seen: Array<CallToolResult> = []

/** A client connected in memory to a fresh server, closed after the suite. */
const connect = async (context: ToolContext): Promise<Client> => {
  const connected = await connectTools(context)
  clients.push(connected)
  return connected
}

interface CallOptions extends ToolCallOptions {
  readonly via?: Client
}

const call = async (name: string, args: Record<string, unknown> = {}, options: CallOptions = {}): Promise<CallToolResult> => {
  const typed = await callTool(options.via ?? client, name, args, options)
  seen.push(typed)
  return typed
}

/** A success: not an error, a text summary, and the structured content (already validated by the client). */
const ok = (result: CallToolResult): Record<string, unknown> => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  expect(textOf(result).length).toBeGreaterThan(0)
  expect(result.structuredContent).toBeDefined()
  return result.structuredContent as Record<string, unknown>
}

interface ErrorInfo {
  readonly code: string
  readonly message: string
  readonly hint: string
}

/** A failure: isError, a stable code and a hint, in the text and in _meta; hints name tools, not commands. */
const failed = (result: CallToolResult, code?: string): ErrorInfo => {
  expect(result.isError, JSON.stringify(result)).toBe(true)
  const info = result._meta?.[ERROR_META_KEY] as ErrorInfo | undefined
  expect(info, JSON.stringify(result)).toBeDefined()
  if (info === undefined) throw new Error("no error meta")
  expect(info.code).toMatch(/^[a-z_]+$/)
  if (code !== undefined) expect(info.code).toBe(code)
  expect(info.hint.length).toBeGreaterThan(0)
  expect(info.hint).not.toMatch(/relay (task|auth|card|session) |--[a-z]/)
  expect(textOf(result)).toContain(`Error [${info.code}]`)
  expect(textOf(result)).toContain(`Hint: ${info.hint}`)
  return info
}

/** A client whose user allowed reading the test's home folder (`--allow-read`), connected once. */
let readingHomeClient: Client | undefined
const readingHome = async () => (readingHomeClient ??= await connect(contextFor(runtime, { allowRead: [home.parent] })))

beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  webhookUrl = await runtime.runPromise(webhookBaseUrl)
  // A store that is damaged on disk: every store-backed tool must fail cleanly on it.
  Fs.mkdirSync(brokenHome.stateDir, { recursive: true, mode: 0o700 })
  brokenRuntime = ManagedRuntime.make(appLayer(brokenHome.stateDir))
  ;[agent, secured, legacy] = await Promise.all([
    startSdkAgent({ extendedCard: true }),
    startSdkAgent({ requireBearer: BEARER, extendedCard: true, name: "Secured Agent" }),
    startV03Agent()
  ])
  client = await connect(contextFor(runtime))
})

afterAll(async () => {
  await Promise.allSettled(clients.map((each) => each.close()))
  await Promise.allSettled([agent?.close(), secured?.close(), legacy?.close()])
  await Promise.allSettled([runtime?.dispose(), brokenRuntime?.dispose()])
  home.cleanup()
  brokenHome.cleanup()
})

describe("the server and its tool list", () => {
  it("reports the name a2a-relay, the package version and instructions about A2A agents", () => {
    expect(client.getServerVersion()).toEqual({ name: "a2a-relay", version: VERSION })
    expect(SERVER_NAME).toBe("a2a-relay")
    const packageJson = JSON.parse(Fs.readFileSync(Path.join(import.meta.dirname, "../../package.json"), "utf8")) as { version: string }
    expect(VERSION).toBe(packageJson.version)
    const instructions = client.getInstructions() ?? ""
    expect(instructions).toBe(INSTRUCTIONS)
    expect(instructions).toMatch(/Agent-to-Agent \(A2A\) protocol capabilities/)
    expect(instructions).toMatch(/interact\s+with A2A agents/)
    expect(instructions).toMatch(/validate agent cards/)
    expect(instructions).toMatch(/discover agent capabilities/)
  })

  it("lists exactly the twenty-one tools, each with a title, a when-and-next description and an object outputSchema", async () => {
    const { tools } = await client.listTools()
    expect(tools.map((tool) => tool.name).sort()).toEqual([...TOOL_NAMES].sort())
    for (const tool of tools) {
      expect(tool.title, tool.name).toMatch(/\w{3,}/)
      expect(tool.description?.length ?? 0, tool.name).toBeGreaterThan(80)
      // "when to use it": every description says when; "what to call next": it names another tool.
      expect(tool.description, tool.name).toMatch(/\bUse\b/)
      const others = TOOL_NAMES.filter((name) => name !== tool.name)
      expect(others.some((name) => tool.description?.includes(name)), `${tool.name} names a next tool`).toBe(true)
      expect(tool.inputSchema.type).toBe("object")
      expect(tool.outputSchema?.type, tool.name).toBe("object")
      expect(Object.keys(tool.outputSchema?.properties ?? {}).length, tool.name).toBeGreaterThan(0)
    }
  })

  it("annotates every tool as the MCP conventions suggest (read-only, destructive, idempotent, open-world)", async () => {
    const remoteRead = { readOnlyHint: true, idempotentHint: true, openWorldHint: true }
    const localRead = { readOnlyHint: true, idempotentHint: true, openWorldHint: false }
    const expected: Record<string, Record<string, boolean>> = {
      validate_agent_card: remoteRead,
      get_agent_card: remoteRead,
      get_task: remoteRead,
      wait_for_task: remoteRead,
      list_tasks: remoteRead,
      get_task_notification: remoteRead,
      list_task_notifications: remoteRead,
      list_sessions: localRead,
      get_session_info: localRead,
      get_push_notifications: localRead,
      send_message: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
      cancel_task: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      set_task_notification: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true },
      delete_task_notification: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true },
      set_agent_credentials: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      clear_agent_credentials: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      clear_session_data: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
      // It creates a few tasks on the agent: not read-only, not idempotent, nothing destroyed.
      check_agent: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      list_agents: localRead,
      // It reads the card over the network; adding a taken name fails.
      add_agent: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
      remove_agent: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
    }
    const { tools } = await client.listTools()
    for (const tool of tools) expect(tool.annotations, tool.name).toEqual(expected[tool.name])
  })

  it("takes the parameters of SPEC §4.1 (primary and alternate names), and bearer_token/api_key wherever an agent is contacted", async () => {
    const { tools } = await client.listTools()
    const byName = new Map(tools.map((tool): [string, Tool] => [tool.name, tool]))
    const params = (name: string) => Object.keys(byName.get(name)?.inputSchema.properties ?? {}).sort()
    const required = (name: string) => [...(byName.get(name)?.inputSchema.required ?? [])].sort()
    const spec: Record<string, ReadonlyArray<string>> = {
      validate_agent_card: ["source", "from_file"],
      get_agent_card: ["agent_url", "authenticated"],
      send_message: [
        "agent_url",
        "message",
        "text",
        "context_id",
        "task_id",
        "use_session",
        "bearer_token",
        "api_key",
        "stream",
        "push_url",
        "push_token"
      ],
      get_task: ["agent_url", "task_id", "history_length", "bearer_token", "api_key"],
      cancel_task: ["agent_url", "task_id", "bearer_token", "api_key"],
      set_task_notification: ["agent_url", "task_id", "webhook_url", "url", "webhook_token", "token", "bearer_token", "api_key"],
      get_task_notification: ["agent_url", "task_id", "config_id", "bearer_token", "api_key"],
      list_sessions: [],
      get_session_info: ["agent_url"],
      clear_session_data: ["agent_url"],
      set_agent_credentials: ["agent_url", "bearer_token", "api_key", "api_key_header"],
      clear_agent_credentials: ["agent_url"]
    }
    for (const [name, names] of Object.entries(spec)) {
      for (const param of names) expect(params(name), name).toContain(param)
    }
    expect(params("list_sessions")).toEqual([])
    // Only what is optional in SPEC is optional here (message/webhook_url: one of two names is required).
    expect(required("send_message")).toEqual(["agent_url"])
    expect(required("get_task")).toEqual(["agent_url", "task_id"])
    expect(required("set_task_notification")).toEqual(["agent_url", "task_id"])
    expect(required("clear_session_data")).toEqual([])
    expect(required("set_agent_credentials")).toEqual(["agent_url"])
    expect(required("validate_agent_card")).toEqual(["source"])
    // (add_agent reads a card too, at the URL it is to save: with the credentials saved for that URL.)
    const contacting = tools.filter((tool) => tool.annotations?.openWorldHint === true && tool.name !== "add_agent")
    expect(contacting.length).toBe(12)
    for (const tool of contacting) {
      expect(params(tool.name), tool.name).toEqual(expect.arrayContaining(["bearer_token", "api_key"]))
      expect(required(tool.name), tool.name).not.toContain("bearer_token")
    }
    const waiting = ["send_message", "wait_for_task"]
    for (const name of waiting) expect(params(name)).toContain("timeout_seconds")
    expect(Duration.toMillis(HEARTBEAT)).toBe(10_000)
  })

  it("answers arguments that break the input schema with a coded error result, and unknown tools with JSON-RPC -32602", async () => {
    const missing = failed(await call("get_task", { agent_url: agent.baseUrl }), "invalid_arguments")
    expect(missing.message).toMatch(/task_id/)
    failed(await call("get_push_notifications", { limit: 0 }), "invalid_arguments")
    // A protocol error in both eras (MCP 2025-11-25 and 2026-07-28, server/tools "Error Handling").
    await expect(call("no_such_tool", {})).rejects.toMatchObject({ code: -32602, message: expect.stringMatching(/no_such_tool/) })
  })
})

describe("agent cards", () => {
  it("validate_agent_card validates a live v1.0 card, sending the given bearer token", async () => {
    const result = ok(await call("validate_agent_card", { source: secured.baseUrl, bearer_token: BEARER }))
    expect(result).toMatchObject({
      valid: true,
      source: secured.baseUrl,
      agent_name: "Secured Agent",
      protocol_version: "1.0",
      capabilities: { streaming: true, push_notifications: true },
      error_count: 0
    })
    const cardRequest = secured.requests.find((request) => request.path === "/.well-known/agent-card.json")
    expect(cardRequest && headerOf(cardRequest, "authorization")).toBe(`Bearer ${BEARER}`)
  })

  it("validate_agent_card reports every problem of a broken card file, and fails on a missing file or dead URL", async () => {
    const file = Path.join(home.parent, "broken-card.json")
    Fs.writeFileSync(file, JSON.stringify({ name: "Broken", skills: "none" }))
    const result = ok(await call("validate_agent_card", { source: file, from_file: true }, { via: await readingHome() }))
    expect(result["valid"]).toBe(false)
    expect(result["error_count"]).toBeGreaterThan(1)
    const issues = result["issues"] as ReadonlyArray<{ code: string; path: string; hint: string }>
    expect(issues.length).toBeGreaterThan(1)
    for (const issue of issues) expect(issue.hint.length).toBeGreaterThan(0)

    const missing = await call("validate_agent_card", { source: Path.join(home.parent, "nope.json"), from_file: true }, {
      via: await readingHome()
    })
    expect(failed(missing, "card_file_refused").message).toContain("no such file")
    failed(await call("validate_agent_card", { source: await closedPortUrl() }), "agent_unreachable")
  })

  it("validate_agent_card with from_file reads only inside the client's roots and allowed directories, never the state directory", async () => {
    const file = Path.join(home.parent, "card-elsewhere.json")
    Fs.writeFileSync(file, JSON.stringify({ name: "Elsewhere", skills: "none" }))
    // The default client declares no roots and the user allowed nothing: the file exists, and is not read.
    for (const source of [file, Path.join(home.parent, "absent.json")]) {
      const refused = failed(await call("validate_agent_card", { source, from_file: true }), "card_file_refused")
      expect(refused.message).toContain("the MCP client declared no roots and the user allowed no directory")
      expect(refused.hint).toContain("let relay mcp read the directory")
    }
    // The state directory holds credentials: refused even where the user allowed its parent.
    Fs.mkdirSync(home.stateDir, { recursive: true, mode: 0o700 })
    const inStateDir = Path.join(home.stateDir, "looks-like-a-card.json")
    Fs.writeFileSync(inStateDir, JSON.stringify({ name: "not a card" }))
    const inState = await call("validate_agent_card", { source: inStateDir, from_file: true }, { via: await readingHome() })
    expect(failed(inState, "card_file_refused").message).toContain("state directory")
  })

  it("validate_agent_card with from_file refuses devices and /proc, and shows nothing of a file that is not a card", async () => {
    const everywhere = await connect(contextFor(runtime, { allowRead: ["/"] }))
    const refusedFile = async (source: string) =>
      failed(await call("validate_agent_card", { source, from_file: true }, { via: everywhere }), "card_file_refused").message
    expect(await refusedFile("/dev/zero")).toContain("not a regular file")
    expect(await refusedFile("/proc/self/environ")).toContain("special file of /proc")
    const passwd = Path.join(home.parent, "passwd")
    Fs.writeFileSync(passwd, "root:x:0:0:root:/root:/bin/bash\n")
    const notCard = await call("validate_agent_card", { source: passwd, from_file: true }, { via: everywhere })
    failed(notCard, "invalid_card")
    expect(JSON.stringify(notCard)).not.toContain("root:")
  })

  it("get_agent_card returns the card, and the extended card with credentials", async () => {
    const plain = ok(await call("get_agent_card", { agent_url: agent.baseUrl }))
    expect(plain).toMatchObject({ agent_url: agent.baseUrl, generation: "1.0" })
    expect((plain["card"] as { name: string }).name).toBe("SDK Test Agent")
    const extended = ok(await call("get_agent_card", { agent_url: secured.baseUrl, authenticated: true, bearer_token: BEARER }))
    const skills = (extended["card"] as { skills: ReadonlyArray<{ id: string }> }).skills.map((skill) => skill.id)
    expect(skills).toContain("extended-only")
  })

  it("get_agent_card fails with a code and a hint: bad URL, nothing listening, extended card without credentials", async () => {
    failed(await call("get_agent_card", { agent_url: "not a url" }), "invalid_agent_url")
    failed(await call("get_agent_card", { agent_url: await closedPortUrl() }), "agent_unreachable")
    const auth = failed(await call("get_agent_card", { agent_url: secured.baseUrl, authenticated: true }), "auth_required")
    expect(auth.hint).toContain("set_agent_credentials")
  })
})

describe("messages and tasks", () => {
  it("send_message answers with the message result and saves the session (alternate name `text` too)", async () => {
    const result = ok(await call("send_message", { agent_url: agent.baseUrl, message: "hello" }))
    expect(result).toMatchObject({ state: "completed", text: "echo: hello", kind: "task", needs_input: false, needs_auth: false })
    expect(result["task_id"]).toEqual(expect.any(String))
    expect(result["next_step"]).toMatch(/send_message/)
    const session = ok(await call("get_session_info", { agent_url: agent.baseUrl }))
    expect(session).toMatchObject({ context_id: result["context_id"], task_id: result["task_id"], last_state: "completed" })

    const viaText = ok(await call("send_message", { agent_url: agent.baseUrl, text: withBehaviour("message-only", "hi") }))
    expect(viaText).toMatchObject({ kind: "message", text: "echo: hi", task_id: null })
  })

  it("send_message with use_session continues the saved context and the task waiting for input (rules 1–2)", async () => {
    const first = ok(await call("send_message", { agent_url: agent.baseUrl, message: withBehaviour("input-required", "first") }))
    expect(first).toMatchObject({ state: "input-required", needs_input: true, text: INPUT_REQUIRED_QUESTION })
    expect(first["next_step"]).toMatch(/send_message/)
    const before = agent.requests.length
    const second = ok(await call("send_message", { agent_url: agent.baseUrl, message: "second", use_session: true }))
    expect(second).toMatchObject({
      state: "completed",
      text: "echo: first + second",
      task_id: first["task_id"],
      context_id: first["context_id"]
    })
    const sent = sentMessages(agent.requests.slice(before))
    expect(sent[0]).toMatchObject({ contextId: first["context_id"], taskId: first["task_id"] })
  })

  it("send_message reports needs_auth and failed tasks as results, and fails with codes on bad input and refused auth", async () => {
    const auth = ok(await call("send_message", { agent_url: agent.baseUrl, message: withBehaviour("auth-required", "x") }))
    expect(auth).toMatchObject({ state: "auth-required", needs_auth: true })
    expect(auth["next_step"]).toMatch(/set_agent_credentials/)
    const failedTask = ok(await call("send_message", { agent_url: agent.baseUrl, message: withBehaviour("fail", "x") }))
    expect(failedTask["state"]).toBe("failed")

    failed(await call("send_message", { agent_url: agent.baseUrl }), "invalid_input")
    failed(await call("send_message", { agent_url: agent.baseUrl, message: "   " }), "invalid_input")
    failed(await call("send_message", { agent_url: "ftp://x", message: "hi" }), "invalid_agent_url")
    const refused = failed(await call("send_message", { agent_url: secured.baseUrl, message: "hi" }), "auth_required")
    expect(refused.hint).toContain("set_agent_credentials")
    failed(await call("send_message", { agent_url: secured.baseUrl, message: "hi", bearer_token: "wrong-token-123456" }), "auth_required")
    failed(await call("send_message", { agent_url: await closedPortUrl(), message: "hi" }), "agent_unreachable")
  })

  it("send_message with an explicit bearer_token sends it (and never echoes it)", async () => {
    const before = secured.requests.length
    const result = ok(await call("send_message", { agent_url: secured.baseUrl, message: "with token", bearer_token: BEARER }))
    expect(result["text"]).toBe("echo: with token")
    const sends = secured.requests.slice(before).filter((request) => rpcMethodOf(request) === "SendMessage")
    expect(sends.length).toBeGreaterThan(0)
    for (const request of sends) expect(headerOf(request, "authorization")).toBe(`Bearer ${BEARER}`)
  })

  it("get_task shows a task (with history when asked) and fails on an unknown task", async () => {
    const sent = ok(await call("send_message", { agent_url: agent.baseUrl, message: "for get_task" }))
    const task = ok(await call("get_task", { agent_url: agent.baseUrl, task_id: sent["task_id"] }))
    expect(task).toMatchObject({ task_id: sent["task_id"], state: "completed", text: "echo: for get_task" })
    const withHistory = ok(await call("get_task", { agent_url: agent.baseUrl, task_id: sent["task_id"], history_length: 5 }))
    const history = withHistory["history"] as ReadonlyArray<{ role: string; text: string }>
    expect(history.some((entry) => entry.role === "user" && entry.text === "for get_task")).toBe(true)

    const missing = failed(await call("get_task", { agent_url: agent.baseUrl, task_id: "no-such-task" }), "not_found")
    expect(missing.hint).toContain("list_tasks")
    failed(await call("get_task", { agent_url: agent.baseUrl, task_id: " " }), "invalid_input")
  })

  it("list_tasks lists the agent's tasks, filters by state, and fails on a bad state or a v0.3 agent", async () => {
    const all = ok(await call("list_tasks", { agent_url: agent.baseUrl }))
    expect(all["count"]).toBeGreaterThan(0)
    const completed = ok(await call("list_tasks", { agent_url: agent.baseUrl, status: "completed", page_size: 50 }))
    const tasks = completed["tasks"] as ReadonlyArray<{ state: string }>
    expect(tasks.length).toBeGreaterThan(0)
    expect(tasks.every((task) => task.state === "completed")).toBe(true)
    failed(await call("list_tasks", { agent_url: agent.baseUrl, status: "sleeping" }), "invalid_input")
    const legacyError = failed(await call("list_tasks", { agent_url: legacy.baseUrl }))
    expect(legacyError.code).toMatch(/unsupported_operation|protocol_error/)
  })

  it("cancel_task cancels a running task and fails on one that already finished", async () => {
    const { taskId } = await startTaskOn(agent.jsonRpcUrl, withBehaviour("slow-cancellable", "to cancel"))
    const cancelled = ok(await call("cancel_task", { agent_url: agent.baseUrl, task_id: taskId }))
    expect(cancelled).toMatchObject({ task_id: taskId, state: "canceled" })
    const done = ok(await call("send_message", { agent_url: agent.baseUrl, message: "finished" }))
    const refused = failed(await call("cancel_task", { agent_url: agent.baseUrl, task_id: done["task_id"] }), "protocol_error")
    expect(refused.hint).toContain("get_task")
  })
})

describe("bounded waits, progress and cancellation", () => {
  it("send_message stops waiting after timeout_seconds with state working, task id and a wait_for_task hint, reporting progress meanwhile", async () => {
    const progress: Array<Progress & { at: number }> = []
    const started = Date.now()
    const result = ok(
      await call(
        "send_message",
        { agent_url: agent.baseUrl, message: withBehaviour("slow-cancellable", "long job"), timeout_seconds: 1 },
        { onprogress: (update) => progress.push({ ...update, at: Date.now() }) }
      )
    )
    const took = Date.now() - started
    expect(took).toBeGreaterThanOrEqual(900)
    expect(took).toBeLessThan(SLOW_TASK_MS)
    expect(result).toMatchObject({ state: "working", kind: "task" })
    expect(result["task_id"]).toEqual(expect.any(String))
    expect(result["next_step"]).toContain(`wait_for_task with task_id ${String(result["task_id"])}`)

    // The 100 ms heartbeat repeats the latest status while nothing changes; progress only grows.
    expect(progress.length).toBeGreaterThanOrEqual(5)
    expect(progress.some((update) => update.message?.startsWith("working") === true)).toBe(true)
    const gaps = progress.slice(1).map((update, index) => update.at - (progress[index]?.at ?? 0))
    expect(Math.max(...gaps)).toBeLessThan(600)
    progress.slice(1).forEach((update, index) => expect(update.progress).toBeGreaterThan(progress[index]?.progress ?? Infinity))

    // wait_for_task picks it up and waits until it completes, again with progress.
    const waitProgress: Array<Progress> = []
    const finished = ok(
      await call(
        "wait_for_task",
        { agent_url: agent.baseUrl, task_id: result["task_id"], timeout_seconds: 10 },
        { onprogress: (update) => waitProgress.push(update) }
      )
    )
    expect(finished).toMatchObject({ task_id: result["task_id"], state: "completed", text: "echo: long job" })
    expect(waitProgress.length).toBeGreaterThan(0)
  })

  it("without timeout_seconds the server's default wait applies; wait_for_task also stops at its bound", async () => {
    const shortWait = await connect(contextFor(runtime, { defaultWait: Duration.seconds(1) }))
    const started = Date.now()
    const result = ok(
      await call("send_message", { agent_url: agent.baseUrl, message: withBehaviour("slow-cancellable", "default wait") }, {
        via: shortWait
      })
    )
    expect(result["state"]).toBe("working")
    expect(Date.now() - started).toBeLessThan(SLOW_TASK_MS)
    const waited = ok(await call("wait_for_task", { agent_url: agent.baseUrl, task_id: result["task_id"] }, { via: shortWait }))
    expect(waited["state"]).toMatch(/working|completed/)
    expect(Date.now() - started).toBeLessThan(SLOW_TASK_MS + 1500)
    failed(await call("wait_for_task", { agent_url: agent.baseUrl, task_id: "no-such-task", timeout_seconds: 1 }), "not_found")
  })

  it("stream: true follows the agent's stream and turns it into progress with the agent's text", async () => {
    const progress: Array<Progress> = []
    const before = agent.requests.length
    const result = ok(
      await call(
        "send_message",
        { agent_url: agent.baseUrl, message: withBehaviour("chunked-artifact", "streamed"), stream: true },
        { onprogress: (update) => progress.push(update) }
      )
    )
    expect(result).toMatchObject({ state: "completed" })
    expect(result["text"]).toContain("chunk 3: done")
    expect(agent.requests.slice(before).some((request) => rpcMethodOf(request) === "SendStreamingMessage")).toBe(true)
    const messages = progress.map((update) => update.message ?? "")
    expect(messages.some((message) => message.includes("chunk"))).toBe(true)
  })

  it("a cancelled tool call aborts the outgoing HTTP request: the agent sees its stream closed long before the task ends", async () => {
    const controller = new AbortController()
    const before = agent.requests.length
    const started = Date.now()
    const pending = call(
      "send_message",
      { agent_url: agent.baseUrl, message: withBehaviour("slow-cancellable", "abandoned"), stream: true, timeout_seconds: 30 },
      { signal: controller.signal, onprogress: (update) => update.message?.startsWith("working") === true && controller.abort() }
    )
    await expect(pending).rejects.toThrow()
    const streamRequest = () => agent.requests.slice(before).find((request) => rpcMethodOf(request) === "SendStreamingMessage")
    await waitUntil("the agent to see the stream close", () => streamRequest()?.status !== undefined, 2000)
    // The slow task needs SLOW_TASK_MS to finish; the connection closed well before that.
    expect(Date.now() - started).toBeLessThan(SLOW_TASK_MS - 500)
  })
})

describe("push notifications", () => {
  it("send_message with push_url makes the agent post to relay's receiver; get_push_notifications reads them", async () => {
    const sent = ok(
      await call("send_message", {
        agent_url: agent.baseUrl,
        message: "push me",
        push_url: `${webhookUrl}/hook`,
        push_token: PUSH_TOKEN
      })
    )
    const taskId = String(sent["task_id"])
    let notifications: Record<string, unknown> = {}
    await waitUntilAsync("a notification for the task", async () => {
      notifications = ok(await call("get_push_notifications", { task_id: taskId }))
      return (notifications["count"] as number) > 0
    })
    const list = notifications["notifications"] as ReadonlyArray<{ task_id: string | null }>
    expect(list.every((entry) => entry.task_id === taskId)).toBe(true)
    const limited = ok(await call("get_push_notifications", { limit: 1, since: "10m" }))
    expect(limited["count"]).toBe(1)

    const config = ok(await call("get_task_notification", { agent_url: agent.baseUrl, task_id: taskId }))
    expect(config["url"]).toContain(`${webhookUrl}/hook`)
    expect(config["token"]).not.toBeNull()
  })

  it("get_push_notifications fails with a code on a bad since", async () => {
    failed(await call("get_push_notifications", { since: "yesterday-ish" }), "invalid_input")
  })

  it("set, get, list and delete a task's push configs (alternate names url/token), and fail on unknown tasks", async () => {
    const { taskId } = await startTaskOn(agent.jsonRpcUrl, withBehaviour("input-required", "push configs"))
    const set = ok(
      await call("set_task_notification", { agent_url: agent.baseUrl, task_id: taskId, url: `${webhookUrl}/a`, token: PUSH_TOKEN })
    )
    expect(set).toMatchObject({ task_id: taskId, url: `${webhookUrl}/a` })
    const second = ok(
      await call("set_task_notification", {
        agent_url: agent.baseUrl,
        task_id: taskId,
        webhook_url: `${webhookUrl}/b`,
        webhook_token: PUSH_TOKEN
      })
    )
    const configId = String(second["config_id"])
    const got = ok(await call("get_task_notification", { agent_url: agent.baseUrl, task_id: taskId, config_id: configId }))
    expect(got["url"]).toBe(`${webhookUrl}/b`)
    const listed = ok(await call("list_task_notifications", { agent_url: agent.baseUrl, task_id: taskId }))
    expect(listed["count"]).toBe(2)
    const deleted = ok(await call("delete_task_notification", { agent_url: agent.baseUrl, task_id: taskId, config_id: configId }))
    expect(deleted).toEqual({ task_id: taskId, config_id: configId, deleted: true })
    expect(ok(await call("list_task_notifications", { agent_url: agent.baseUrl, task_id: taskId }))["count"]).toBe(1)

    failed(await call("set_task_notification", { agent_url: agent.baseUrl, task_id: taskId }), "invalid_input")
    failed(await call("set_task_notification", { agent_url: agent.baseUrl, task_id: taskId, url: "not-a-url" }), "invalid_input")
    failed(await call("set_task_notification", { agent_url: agent.baseUrl, task_id: "no-such-task", url: `${webhookUrl}/c` }))
    failed(await call("get_task_notification", { agent_url: agent.baseUrl, task_id: "no-such-task" }))
    failed(await call("list_task_notifications", { agent_url: agent.baseUrl, task_id: "no-such-task" }))
    failed(await call("delete_task_notification", { agent_url: agent.baseUrl, task_id: "no-such-task", config_id: "nope" }))
  })
})

describe("sessions and credentials (shared store)", () => {
  it("set_agent_credentials saves a bearer token (bearer wins over an API key); later calls use it", async () => {
    const saved = ok(await call("set_agent_credentials", { agent_url: secured.baseUrl, bearer_token: BEARER, api_key: API_KEY }))
    expect(saved).toEqual({ agent_url: secured.baseUrl, auth_type: "bearer" })
    const before = secured.requests.length
    ok(await call("send_message", { agent_url: secured.baseUrl, message: "saved token" }))
    const sends = secured.requests.slice(before).filter((request) => rpcMethodOf(request) === "SendMessage")
    expect(sends.map((request) => headerOf(request, "authorization"))).toEqual([`Bearer ${BEARER}`])
    expect(sends.every((request) => headerOf(request, "x-api-key") === undefined)).toBe(true)
  })

  it("a saved token the agent echoes is shown masked in send_message's result, text and structured content", async () => {
    const echoing = await startSdkAgent({ behaviour: "echo-secret" })
    try {
      ok(await call("set_agent_credentials", { agent_url: echoing.baseUrl, bearer_token: BEARER }))
      const result = await call("send_message", { agent_url: echoing.baseUrl, message: "who am I" })
      expect(echoing.requests.some((request) => headerOf(request, "authorization") === `Bearer ${BEARER}`)).toBe(true)
      expect(JSON.stringify(result)).not.toContain(BEARER)
      expect(ok(result)["text"]).toContain(secretEchoText(maskSecret(BEARER)))
      // The session the test made goes: the listing tests below count the credentialed ones.
      ok(await call("clear_agent_credentials", { agent_url: echoing.baseUrl }))
      ok(await call("clear_session_data", { agent_url: echoing.baseUrl }))
    } finally {
      await echoing.close()
    }
  })

  it("set_agent_credentials saves an API key under the chosen header", async () => {
    const saved = ok(await call("set_agent_credentials", { agent_url: agent.baseUrl, api_key: API_KEY, api_key_header: "X-Custom-Key" }))
    expect(saved).toEqual({ agent_url: agent.baseUrl, auth_type: "api_key" })
    const before = agent.requests.length
    ok(await call("send_message", { agent_url: agent.baseUrl, message: "saved key" }))
    const sends = agent.requests.slice(before).filter((request) => rpcMethodOf(request) === "SendMessage")
    expect(sends.map((request) => headerOf(request, "x-custom-key"))).toEqual([API_KEY])
  })

  it("set_agent_credentials without a secret answers {error} as an error result the client validates (rule 4)", async () => {
    const result = await call("set_agent_credentials", { agent_url: agent.baseUrl })
    failed(result, "invalid_input")
    expect(result.structuredContent).toEqual({ error: "Either bearer_token or api_key must be provided" })
    failed(
      await call("set_agent_credentials", { agent_url: agent.baseUrl, api_key: API_KEY, api_key_header: "Bad Header" }),
      "invalid_input"
    )
    failed(await call("set_agent_credentials", { agent_url: "not a url", bearer_token: BEARER }), "invalid_agent_url")
    // A bare word is a name: one never saved is unknown_agent.
    failed(await call("set_agent_credentials", { agent_url: "nope", bearer_token: BEARER }), "unknown_agent")
  })

  it("list_sessions counts the sessions and tells exactly which have credentials (rule 5)", async () => {
    const listed = ok(await call("list_sessions"))
    const sessions = listed["sessions"] as ReadonlyArray<{ agent_url: string; has_credentials: boolean }>
    expect(listed["count"]).toBe(sessions.length)
    const credentialed = sessions.filter((session) => session.has_credentials).map((session) => session.agent_url).sort()
    expect(credentialed).toEqual([agent.baseUrl, secured.baseUrl].sort())
    expect(sessions.map((session) => session.agent_url)).toContain(agent.baseUrl)
  })

  it("clear_session_data forgets the conversation but keeps the credentials (rule 3); clearing all does too", async () => {
    const cleared = ok(await call("clear_session_data", { agent_url: secured.baseUrl }))
    expect(cleared).toEqual({ all: false, agent_url: secured.baseUrl, cleared: 1, credentials_kept: true })
    const info = ok(await call("get_session_info", { agent_url: secured.baseUrl }))
    expect(info).toMatchObject({ context_id: null, task_id: null, has_credentials: true })
    ok(await call("send_message", { agent_url: secured.baseUrl, message: "still authorised" }))

    const all = ok(await call("clear_session_data"))
    expect(all["all"]).toBe(true)
    expect(all).not.toHaveProperty("agent_url")
    expect(all["cleared"]).toBeGreaterThanOrEqual(2)
    const after = ok(await call("list_sessions"))
    const sessions = after["sessions"] as ReadonlyArray<{ context_id: string | null; has_credentials: boolean }>
    expect(sessions.every((session) => session.context_id === null && session.has_credentials)).toBe(true)
    failed(await call("clear_session_data", { agent_url: "not a url" }), "invalid_agent_url")
  })

  it("get_session_info shows an agent never seen as empty, and fails on a bad URL", async () => {
    const unknown = ok(await call("get_session_info", { agent_url: "http://127.0.0.1:9/never" }))
    expect(unknown).toMatchObject({ context_id: null, task_id: null, has_credentials: false })
    failed(await call("get_session_info", { agent_url: "mailto:x@y" }), "invalid_agent_url")
  })

  it("clear_agent_credentials removes saved credentials; the agent then refuses again", async () => {
    expect(ok(await call("clear_agent_credentials", { agent_url: secured.baseUrl }))).toEqual({ agent_url: secured.baseUrl, cleared: true })
    expect(ok(await call("clear_agent_credentials", { agent_url: secured.baseUrl }))).toEqual({
      agent_url: secured.baseUrl,
      cleared: false
    })
    failed(await call("send_message", { agent_url: secured.baseUrl, message: "no token" }), "auth_required")
    failed(await call("clear_agent_credentials", { agent_url: "::" }), "invalid_agent_url")
  })

  it("store-backed tools fail with a code and a hint when the session file is damaged", async () => {
    const broken = await connect(contextFor(brokenRuntime))
    Fs.writeFileSync(Path.join(brokenHome.stateDir, "sessions.json"), "{ not json")
    const info = failed(await call("list_sessions", {}, { via: broken }), "state_file_corrupt")
    expect(info.hint.length).toBeGreaterThan(0)
    Fs.writeFileSync(Path.join(brokenHome.stateDir, "sessions.json"), "{ not json")
    failed(await call("send_message", { agent_url: agent.baseUrl, message: "hi" }, { via: broken }), "state_file_corrupt")
  })
})

describe("secrets", () => {
  it("an agent URL carrying credentials is refused without echoing them", async () => {
    const info = failed(await call("get_session_info", { agent_url: `http://user:${BEARER}@127.0.0.1:1` }), "invalid_agent_url")
    expect(info.message).toContain("***@127.0.0.1")
  })

  it("withoutSecrets cuts every given secret out of a result, wherever it sits", () => {
    const leaky: CallToolResult = {
      content: [{ type: "text", text: `token ${API_KEY} here` }],
      structuredContent: { nested: [{ value: `x${API_KEY}y` }], short: "abc" }
    }
    const clean = withoutSecrets(leaky, [API_KEY, undefined, "abc"])
    expect(JSON.stringify(clean)).not.toContain(API_KEY)
    expect(clean.structuredContent).toEqual({ nested: [{ value: "x[redacted]y" }], short: "abc" })
  })

  it("withoutSecrets leaves a file's base64 bytes whole, where a secret is never typed and a match would corrupt it", () => {
    const secret = "QUJDREVGR0hJSktM"
    const bytes = `iVBORw0KGgo${secret}AAAA`
    const result: CallToolResult = {
      content: [
        { type: "text", text: `said ${secret}` },
        { type: "image", data: bytes, mimeType: "image/png" },
        { type: "audio", data: bytes, mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "file:///tmp/a.bin", blob: bytes } }
      ],
      structuredContent: { data: `a ${secret}`, parts: [{ data: { note: secret } }] }
    }
    const clean = withoutSecrets(result, [secret])
    expect(clean.content).toEqual([
      { type: "text", text: "said [redacted]" },
      { type: "image", data: bytes, mimeType: "image/png" },
      { type: "audio", data: bytes, mimeType: "audio/wav" },
      { type: "resource", resource: { uri: "file:///tmp/a.bin", blob: bytes } }
    ])
    // A data part's JSON (or any other `data`) is what the agent wrote, scrubbed as text.
    expect(clean.structuredContent).toEqual({ data: "a [redacted]", parts: [{ data: { note: "[redacted]" } }] })
  })

  it("no token or key given to any tool appears anywhere in any result", () => {
    expect(seen.length).toBeGreaterThan(60)
    const everything = JSON.stringify(seen)
    for (const secret of SECRETS) expect(everything).not.toContain(secret)
  })
})

/** Like waitUntil, for an async check (each attempt ~25 ms apart); rejects after `timeoutMs`. */
async function waitUntilAsync(what: string, check: () => Promise<boolean>, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
