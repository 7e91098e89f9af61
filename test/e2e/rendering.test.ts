/**
 * One rendering of a task's text: one task with a streamed (chunked) text artifact and a data
 * artifact reads the same through every door (terminal send, stream and task get; MCP
 * send_message, get_task and wait_for_task; the push notifications) on both protocol generations.
 * An answer streamed in chunks and then sent whole again without `append` (Google ADK) shows once
 * at every door.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Either, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { applyStreamEvent, eventText, resultText } from "../../src/a2a/text.js"
import { decodePushPayload } from "../../src/a2a/translate.js"
import type * as V1 from "../../src/a2a/v1.js"
import { excerpt } from "../../src/domain/notification.js"
import { webhookBaseUrl } from "../../src/servers/webhook/WebhookServer.js"
import { relayJson, runRelay } from "../helpers/cli.js"
import { appLayer, type AppRuntime, connectTools, contextFor, toolOk } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { ADK_WHOLE, FACTS_DATA, STREAMED_PIECES, withBehaviour } from "../peers/behaviours.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"

const EXPECTED = `${STREAMED_PIECES.join("")}\n${JSON.stringify(FACTS_DATA, null, 2)}`
const PEERS = ["SDK 1.3.0", "SDK 0.3.14"] as const

const home = tempHome()
const peers = new Map<string, { readonly baseUrl: string; readonly close: () => Promise<void> }>()
let runtime: AppRuntime
let mcp: Client
let webhookUrl: string

beforeAll(async () => {
  const [v1, v03] = await Promise.all([startSdkAgent(), startV03Agent()])
  peers.set(PEERS[0], v1)
  peers.set(PEERS[1], v03)
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  webhookUrl = await runtime.runPromise(webhookBaseUrl)
  mcp = await connectTools(contextFor(runtime))
})

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([...peers.values()].map((peer) => peer.close()))
  await runtime?.dispose()
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>) => relayJson(args, home.stateDir)

const tool = (name: string, args: Record<string, unknown>) => toolOk(mcp, name, args)

describe.each(PEERS)("the same text at every door (%s)", (name) => {
  it("terminal and MCP, blocking and streamed, sent and fetched", async () => {
    const url = peers.get(name)!.baseUrl
    const message = withBehaviour("chunks-and-parts", "render")
    const sent = await relay(["message", "send", "--url", url, message])
    const streamed = await relay(["message", "send", "--url", url, "--stream", message])
    const fetched = await relay(["task", "get", "--url", url, String(sent["task_id"])])
    const viaMcp = await tool("send_message", { agent_url: url, message })
    const viaMcpStream = await tool("send_message", { agent_url: url, message, stream: true })
    const gotTask = await tool("get_task", { agent_url: url, task_id: viaMcp["task_id"] })
    const waited = await tool("wait_for_task", { agent_url: url, task_id: viaMcpStream["task_id"] })
    const texts = [sent, streamed, fetched, viaMcp, viaMcpStream, gotTask, waited].map((result) => result["text"])
    expect(texts).toEqual(Array.from(texts, () => EXPECTED))
  })

  it("push notifications carry the same text: a task snapshot (0.3) or events that fold into it (1.0)", async () => {
    const url = peers.get(name)!.baseUrl
    const sent = await tool("send_message", {
      agent_url: url,
      message: withBehaviour("chunks-and-parts", "push"),
      push_url: `${webhookUrl}/hook`
    })
    const taskId = String(sent["task_id"])
    type Listed = ReadonlyArray<{ readonly state: string | null; readonly text: string | null; readonly body: unknown }>
    let entries: Listed = []
    await waitUntilAsync(async () => {
      const listed = await relay(["notifications", "list", "--task-id", taskId])
      entries = (Array.isArray(listed) ? listed : listed["notifications"]) as Listed
      return entries.some((entry) => entry.state === "completed")
    })
    // Every notification is summarised on one line by the same renderer (text.ts).
    const events = entries.map((entry) => Either.getOrThrow(decodePushPayload(entry.body)).event)
    expect(entries.map((entry) => entry.text)).toEqual(events.map((event) => excerpt(eventText(event))))
    // Together they are the task every other door shows.
    const folded = events.reduce<V1.Task | undefined>(applyStreamEvent, undefined)
    expect(folded && resultText(folded)).toBe(EXPECTED)
    const viaMcp = await tool("get_push_notifications", { task_id: taskId })
    expect((viaMcp["notifications"] as Listed).map((entry) => entry.text)).toEqual(entries.map((entry) => entry.text))
  })
})

/** How many times `text` holds `part`. */
const occurrences = (text: string, part: string) => text.split(part).length - 1

describe.each(PEERS)("an artifact sent whole again without append replaces it: shown once (%s)", (name) => {
  const message = withBehaviour("chunks-then-whole", "adk")

  it("on the terminal's stream, in its --json pieces and in its result", async () => {
    const url = peers.get(name)!.baseUrl
    const streamed = await runRelay(["message", "stream", "--url", url, message], { stateDir: home.stateDir })
    expect(streamed.code, streamed.stderr).toBe(0)
    expect(occurrences(streamed.stdout, ADK_WHOLE)).toBe(1)
    const ndjson = await runRelay(["message", "stream", "--url", url, "--json", message], { stateDir: home.stateDir })
    const lines = ndjson.stdout.trimEnd().split("\n").map((line) => JSON.parse(line) as Record<string, unknown>)
    const pieces = lines.filter((line) => line["kind"] === "update").map((line) => String(line["text"])).join("")
    expect(occurrences(pieces, ADK_WHOLE)).toBe(1)
    expect(lines.at(-1)!["text"]).toBe(ADK_WHOLE)
  })

  it("in every final result, terminal and MCP, streamed or not", async () => {
    const url = peers.get(name)!.baseUrl
    const sent = await relay(["message", "send", "--url", url, message])
    const viaMcp = await tool("send_message", { agent_url: url, message })
    const viaMcpStream = await tool("send_message", { agent_url: url, message, stream: true })
    const fetched = await tool("get_task", { agent_url: url, task_id: viaMcpStream["task_id"] })
    expect([sent, viaMcp, viaMcpStream, fetched].map((result) => result["text"])).toEqual([ADK_WHOLE, ADK_WHOLE, ADK_WHOLE, ADK_WHOLE])
  })
})

const waitUntilAsync = async (check: () => Promise<boolean>, timeoutMs = 10_000) => {
  const deadline = Date.now() + timeoutMs
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting for a completed notification")
    await new Promise((resolve) => setTimeout(resolve, 50))
  }
}
