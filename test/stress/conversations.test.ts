/**
 * Conversations with agents that ask for input (issue: follow-ups return the answer). The
 * official SDK peers (1.3.0 and 0.3.14) re-publish the waiting task when a follow-up turn starts,
 * then think, then answer: a follow-up must return that answer, not the old question, and the
 * session must record the final state. Driven through the terminal (`-C`, spawned CLI) and MCP
 * (`use_session`, explicit `task_id`), blocking and streaming.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayJson } from "../helpers/cli.js"
import { appLayer, type AppRuntime, connectTools, contextFor, toolOk } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { combinedText, INPUT_REQUIRED_QUESTION, SECOND_QUESTION, withBehaviour } from "../peers/behaviours.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"

interface Peer {
  readonly baseUrl: string
  readonly close: () => Promise<void>
}

const PEERS = ["SDK 1.3.0 JSON-RPC", "SDK 1.3.0 HTTP+JSON", "SDK 0.3.14"] as const
const peers = new Map<string, Peer>()
const home = tempHome()
let runtime: AppRuntime
let mcp: Client

beforeAll(async () => {
  const [v1Rpc, v1Rest, v03] = await Promise.all([startSdkAgent(), startSdkAgent({ bindings: ["HTTP+JSON"] }), startV03Agent()])
  for (const [name, peer] of [[PEERS[0], v1Rpc], [PEERS[1], v1Rest], [PEERS[2], v03]] as const) {
    peers.set(name, { baseUrl: peer.baseUrl, close: () => peer.close() })
  }
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime))
})

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([...peers.values()].map((peer) => peer.close()))
  await runtime?.dispose()
  home.cleanup()
})

const savedSession = (url: string): Record<string, unknown> | undefined => {
  const file = JSON.parse(Fs.readFileSync(Path.join(home.stateDir, "sessions.json"), "utf8")) as {
    sessions: Record<string, Record<string, unknown>>
  }
  return Object.entries(file.sessions).find(([key]) => url.startsWith(key) || key.startsWith(url))?.[1]
}

/** `relay message send --json` on the shared state directory; the parsed result. */
const send = (args: ReadonlyArray<string>) => relayJson(["message", "send", ...args], home.stateDir)

const tool = (name: string, args: Record<string, unknown>) => toolOk(mcp, name, args)

const peer = (name: string) => peers.get(name)!

describe.each([false, true])("follow-ups on the terminal (stream: %s)", (stream) => {
  const streamFlag = stream ? ["--stream"] : []

  it.each(PEERS)("`-C` returns the agent's answer and saves the final state (%s)", async (name) => {
    const { baseUrl } = peer(name)
    const first = await send(["--url", baseUrl, ...streamFlag, withBehaviour("republish-then-answer", "Book a trip")])
    expect(first, name).toMatchObject({ state: "input-required", text: INPUT_REQUIRED_QUESTION })
    const answer = await send(["--url", baseUrl, ...streamFlag, "-C", "Lisbon"])
    expect(answer, name).toMatchObject({ task_id: first["task_id"], state: "completed", text: combinedText(["Book a trip", "Lisbon"]) })
    expect(savedSession(baseUrl)).toMatchObject({ task_id: first["task_id"], last_state: "completed" })
  })

  it.each(PEERS)("an agent that needs a second input asks its second question, then answers (%s)", async (name) => {
    const { baseUrl } = peer(name)
    const first = await send(["--url", baseUrl, ...streamFlag, withBehaviour("ask-twice", "Book a trip")])
    expect(first).toMatchObject({ state: "input-required", text: INPUT_REQUIRED_QUESTION })
    const second = await send(["--url", baseUrl, ...streamFlag, "-C", "Lisbon"])
    expect(second, name).toMatchObject({ task_id: first["task_id"], state: "input-required", text: SECOND_QUESTION })
    expect(savedSession(baseUrl)).toMatchObject({ last_state: "input-required" })
    const third = await send(["--url", baseUrl, ...streamFlag, "-C", "Friday"])
    expect(third, name).toMatchObject({ state: "completed", text: combinedText(["Book a trip", "Lisbon", "Friday"]) })
    expect(savedSession(baseUrl)).toMatchObject({ last_state: "completed" })
  })
})

describe.each([false, true])("follow-ups through MCP send_message (stream: %s)", (stream) => {
  it.each(PEERS)("use_session continues the waiting task and returns the answer (%s)", async (name) => {
    const { baseUrl } = peer(name)
    const first = await tool("send_message", { agent_url: baseUrl, stream, message: withBehaviour("republish-then-answer", "Plan") })
    expect(first).toMatchObject({ state: "input-required", needs_input: true })
    const answer = await tool("send_message", { agent_url: baseUrl, stream, use_session: true, message: "Porto" })
    expect(answer, name).toMatchObject({ task_id: first["task_id"], state: "completed", text: combinedText(["Plan", "Porto"]) })
    const session = await tool("get_session_info", { agent_url: baseUrl })
    expect(JSON.stringify(session)).toContain("completed")
  })

  it.each(PEERS)("an explicit task_id continues that task through both of its questions (%s)", async (name) => {
    const { baseUrl } = peer(name)
    const first = await tool("send_message", { agent_url: baseUrl, stream, message: withBehaviour("ask-twice", "Plan") })
    const taskId = first["task_id"]
    const second = await tool("send_message", { agent_url: baseUrl, stream, task_id: taskId, message: "Porto" })
    expect(second, name).toMatchObject({ task_id: taskId, state: "input-required", text: SECOND_QUESTION })
    const third = await tool("send_message", { agent_url: baseUrl, stream, task_id: taskId, message: "Monday" })
    expect(third, name).toMatchObject({ task_id: taskId, state: "completed", text: combinedText(["Plan", "Porto", "Monday"]) })
  })
})
