/**
 * The card URL is part of the session (issue 27, item 14). An agent whose card is not at the
 * well-known path (Mastra serves `/api/.well-known/<id>/agent-card.json`) is found once the user
 * gave `--card-url` (or `card_url`) once: every later command, tool and suggested command uses the
 * saved URL, whichever door saved it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf, toolOk } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { INPUT_REQUIRED_QUESTION, withBehaviour } from "../peers/behaviours.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"

const CARD_PATH = "/api/.well-known/weather-agent/agent-card.json"

let agent: V03AgentHandle
const homes: Array<ReturnType<typeof tempHome>> = []
const runtimes: Array<AppRuntime> = []
const clients: Array<Client> = []

const newHome = () => {
  const home = tempHome()
  homes.push(home)
  return home
}

/** The MCP tools over a state directory (the one the terminal uses, when given). */
const toolsOn = async (stateDir: string) => {
  const runtime = ManagedRuntime.make(appLayer(stateDir))
  runtimes.push(runtime)
  const client = await connectTools(contextFor(runtime))
  clients.push(client)
  return client
}

beforeAll(async () => {
  agent = await startV03Agent({ cardPath: CARD_PATH })
})

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()))
  await Promise.allSettled(runtimes.map((runtime) => runtime.dispose()))
  await agent?.close()
  for (const home of homes) home.cleanup()
})

/** A command that must succeed; its stdout. */
const ok = async (stateDir: string, args: ReadonlyArray<string>) => {
  const result = await runRelay(args, { stateDir })
  expect(result.code, `relay ${args.join(" ")}: ${result.stderr}`).toBe(0)
  return result.stdout
}

const okJson = async (stateDir: string, args: ReadonlyArray<string>) =>
  JSON.parse(await ok(stateDir, [...args, "--json"])) as Record<string, unknown>

/** A `--wait` that runs out leaves the task running and exits 1 (README: Exit codes); its output is the answer so far. */
const waitRanOut = async (stateDir: string, args: ReadonlyArray<string>) => {
  const result = await runRelay(args, { stateDir })
  expect(result.code, `relay ${args.join(" ")}: ${result.stderr}`).toBe(1)
  return result.stdout
}

/** The `relay …` commands a hint printed, one per line, as a user would paste them. */
const suggestedCommands = (text: string) => [...text.matchAll(/^\s*relay (.+)$/gm)].map((match) => match[1]!.split(" "))

describe("the card URL saved with the session", () => {
  it("is needed once: without it the card is not found", async () => {
    const home = newHome()
    const result = await runRelay(["message", "send", "--url", agent.baseUrl, "hi", "--json"], { stateDir: home.stateDir })
    expect(result.code).toBe(1)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "card_not_found" } })
  })

  it("on the terminal: every later command and every suggested command finds the card without --card-url", async () => {
    const { stateDir } = newHome()
    // First use: the card URL is given, and saved with the session once the card is found there.
    const first = await waitRanOut(stateDir, [
      "message",
      "send",
      "--url",
      agent.baseUrl,
      "--card-url",
      agent.cardUrl,
      "--wait",
      "1",
      withBehaviour("slow-cancellable", "first")
    ])
    expect(await okJson(stateDir, ["session", "show", "--url", agent.baseUrl])).toMatchObject({ card_url: agent.cardUrl })
    expect(await ok(stateDir, ["session", "show", "--url", agent.baseUrl])).toContain(agent.cardUrl)

    // The task still runs: the commands the hint suggests work as printed.
    const suggested = suggestedCommands(first)
    expect(suggested.map((words) => words.slice(0, 2).join(" "))).toEqual(["task get", "task resubscribe"])
    for (const words of suggested) expect(words).not.toContain("--card-url")
    expect(await ok(stateDir, suggested[0]!)).toMatch(/State\s+(working|completed)/)
    expect(await ok(stateDir, suggested[1]!)).toMatch(/State\s+completed/)

    // A conversation that asks for input: its reply hint works as printed.
    const asked = await ok(stateDir, ["message", "send", "--url", agent.baseUrl, withBehaviour("input-required", "plan a trip")])
    expect(asked).toContain(INPUT_REQUIRED_QUESTION)
    const reply = suggestedCommands(asked)[0]!
    expect(reply.slice(0, 2)).toEqual(["message", "send"])
    expect(reply).toContain("--continue")
    expect(await okJson(stateDir, [...reply.filter((word) => word !== "<text>"), "Lisbon"])).toMatchObject({ state: "completed" })

    // Every other command that contacts the agent.
    const slow = JSON.parse(
      await waitRanOut(stateDir, [
        "message",
        "send",
        "--url",
        agent.baseUrl,
        "--wait",
        "1",
        withBehaviour("slow-cancellable", "cancel me"),
        "--json"
      ])
    ) as Record<string, unknown>
    const taskId = String(slow["task_id"])
    expect(await okJson(stateDir, ["task", "cancel", "--url", agent.baseUrl, taskId])).toMatchObject({ state: "canceled" })
    // On the finished task, so the agent never tries to deliver to the hook.
    const hook = "http://127.0.0.1:9/hook"
    expect(await okJson(stateDir, ["task", "notification", "set", "--url", agent.baseUrl, taskId, "--webhook-url", hook])).toMatchObject({
      url: hook
    })
    expect(await okJson(stateDir, ["task", "notification", "list", "--url", agent.baseUrl, taskId])).toMatchObject({ count: 1 })
    expect(await okJson(stateDir, ["card", "get", "--url", agent.baseUrl])).toMatchObject({ card_url: agent.cardUrl })
    expect(await okJson(stateDir, ["card", "validate", agent.baseUrl])).toMatchObject({ valid: true })

    // Clearing the conversation keeps where the card is.
    await ok(stateDir, ["session", "clear", "--url", agent.baseUrl])
    expect(await okJson(stateDir, ["message", "send", "--url", agent.baseUrl, "again"])).toMatchObject({ state: "completed" })
  }, 60_000)

  it("a card URL where no card is served is not saved", async () => {
    const { stateDir } = newHome()
    const wrong = `${agent.baseUrl}/api/.well-known/nobody/agent-card.json`
    const result = await runRelay(["message", "send", "--url", agent.baseUrl, "--card-url", wrong, "hi", "--json"], { stateDir })
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "card_not_found" } })
    expect(await okJson(stateDir, ["session", "show", "--url", agent.baseUrl])).toMatchObject({ card_url: null })
  })

  it("under MCP: card_url is saved on first use, and every later tool (and the terminal) uses it", async () => {
    const { stateDir } = newHome()
    const tools = await toolsOn(stateDir)
    const withoutCard = await callTool(tools, "get_agent_card", { agent_url: agent.baseUrl })
    expect(withoutCard.isError).toBe(true)
    expect(textOf(withoutCard)).toContain("card_not_found")

    const sent = await toolOk(tools, "send_message", {
      agent_url: agent.baseUrl,
      card_url: agent.cardUrl,
      message: withBehaviour("input-required", "plan")
    })
    expect(sent).toMatchObject({ state: "input-required" })
    expect(await toolOk(tools, "get_session_info", { agent_url: agent.baseUrl })).toMatchObject({ card_url: agent.cardUrl })
    expect(await toolOk(tools, "send_message", { agent_url: agent.baseUrl, message: "Lisbon", use_session: true })).toMatchObject({
      state: "completed"
    })
    expect(await toolOk(tools, "get_task", { agent_url: agent.baseUrl, task_id: sent["task_id"] })).toMatchObject({ state: "completed" })
    const slow = await toolOk(tools, "send_message", {
      agent_url: agent.baseUrl,
      message: withBehaviour("slow-cancellable", "x"),
      timeout_seconds: 1
    })
    expect(await toolOk(tools, "cancel_task", { agent_url: agent.baseUrl, task_id: slow["task_id"] })).toMatchObject({ state: "canceled" })
    expect(await toolOk(tools, "wait_for_task", { agent_url: agent.baseUrl, task_id: slow["task_id"] })).toMatchObject({
      state: "canceled"
    })
    expect(await toolOk(tools, "get_agent_card", { agent_url: agent.baseUrl })).toMatchObject({ card_url: agent.cardUrl })

    // The other door shares the session: the terminal finds the card the MCP tool saved.
    expect(await okJson(stateDir, ["task", "get", "--url", agent.baseUrl, String(sent["task_id"])])).toMatchObject({ state: "completed" })
  })

  it("under MCP: the card URL the terminal saved serves every tool", async () => {
    const { stateDir } = newHome()
    await ok(stateDir, ["card", "get", "--url", agent.baseUrl, "--card-url", agent.cardUrl])
    const tools = await toolsOn(stateDir)
    const sent = await toolOk(tools, "send_message", { agent_url: agent.baseUrl, message: "hello" })
    expect(sent).toMatchObject({ state: "completed" })
    expect(await toolOk(tools, "get_task", { agent_url: agent.baseUrl, task_id: sent["task_id"] })).toMatchObject({ state: "completed" })
    expect(await toolOk(tools, "list_sessions", {})).toMatchObject({ sessions: [{ agent_url: agent.baseUrl, card_url: agent.cardUrl }] })
  })
})
