/**
 * Agents by name at the terminal, with the built CLI (`npm run build` first) against relay's own
 * agent, SDK peers and a site of JSON documents: `relay agent add|list|show|use|remove|refresh|discover`,
 * a name at every command that takes an agent, RELAY_AGENT and the default agent, a card off the
 * well-known path added once, an AI catalog, a hostile card, and one store shared live with a
 * running `relay mcp`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { CARD_SUMMARY_LIMITS } from "../../src/domain/limits.js"
import { closedPortUrl } from "../helpers/a2aPrograms.js"
import { type CliResult, relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { stateDirsFor } from "../helpers/stateHome.js"
import { A2A_CARD_TYPE, aiCatalog, CATALOG_PATH, hostileCard, type JsonSite, startJsonSite } from "../peers/catalogSite.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const MASTRA_CARD_PATH = "/api/.well-known/weather/agent-card.json"
const freshHome = stateDirsFor(afterAll)

let relayAgent: AgentHandle
let sdk: SdkAgentHandle
let mastra: V03AgentHandle
let v03: V03AgentHandle
let site: JsonSite
let hostile: JsonSite
let closed: string

beforeAll(async () => {
  requireBuiltRelay()
  ;[relayAgent, sdk, mastra, v03, hostile, closed] = await Promise.all([
    startAgent({ model: "echo" }),
    startSdkAgent(),
    startV03Agent({ cardPath: MASTRA_CARD_PATH }),
    startV03Agent(),
    startJsonSite((baseUrl) => ({ "/.well-known/agent-card.json": hostileCard(baseUrl) })),
    closedPortUrl()
  ])
  site = await startJsonSite(() => ({
    [CATALOG_PATH]: aiCatalog([
      { identifier: "urn:air:test:a2a:relay", type: A2A_CARD_TYPE, url: `${relayAgent.baseUrl}/.well-known/agent-card.json` },
      { identifier: "urn:air:test:a2a:sdk", type: A2A_CARD_TYPE, url: sdk.cardUrl },
      // A card inline: its agent serves it at the well-known path too, where later calls find it.
      { identifier: "urn:air:test:a2a:weather", type: A2A_CARD_TYPE, data: v03.card, displayName: "Weather Desk" },
      { identifier: "urn:air:test:mcp:files", type: "application/mcp-server-card+json", url: "http://127.0.0.1:9/mcp" },
      // A catalog on loopback that points at a public address: not fetched (the card interface rule).
      { identifier: "urn:air:test:a2a:far", type: A2A_CARD_TYPE, url: "http://93.184.216.34/.well-known/agent-card.json" },
      { identifier: "urn:air:test:a2a:empty", type: A2A_CARD_TYPE }
    ]),
    "/not-a-catalog.json": { hello: "world" }
  }))
}, 60_000)

afterAll(async () => {
  await Promise.allSettled([relayAgent?.close(), sdk?.close(), mastra?.close(), v03?.close(), site?.close(), hostile?.close()])
})

const ok = (result: CliResult, what: string) => {
  expect(result.code, `${what}\n${result.stderr}`).toBe(0)
  return result
}
type Run = (...args: ReadonlyArray<string>) => Promise<CliResult>
/** A command that must succeed, with --json: its result. */
const jsonOf = async (run: Run, ...args: ReadonlyArray<string>) =>
  JSON.parse(ok(await run(...args, "--json"), args.join(" ")).stdout) as Record<string, any>
const errorOf = (result: CliResult) => (JSON.parse(result.stderr) as { error: { code: string; message: string; hint: string } }).error
const relay = (stateDir: string, env: Record<string, string> = {}) => (...args: ReadonlyArray<string>) => runRelay(args, { stateDir, env })

/** A raw control character a terminal would obey (ESC, CR, BEL, …); a newline between lines is relay's own. */
const RAW_CONTROLS = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/

describe("relay agent add, list, show, use and remove", () => {
  it("saves a name, shows its card's name, description and skills, makes it the default, and forgets it", async () => {
    const run = relay(freshHome())
    const added = ok(await run("agent", "add", "Local", relayAgent.baseUrl), "add")
    expect(added.stdout).toContain(`Added local: ${relayAgent.baseUrl} (relay agent)`)
    const listed = ok(await run("agent", "list"), "list").stdout
    expect(listed).toMatch(
      /^Agents \(1\)\n\nlocal\n {2}URL +http:\/\/127\.0\.0\.1:\d+\n {2}Card +relay agent\n {2}About +relay's local A2A agent/
    )
    expect(listed).toMatch(/Skills +Chat\n/)
    expect(listed).toMatch(/Card read +\d{4}-\d\d-\d\dT/)
    expect(ok(await run("agent", "list", "--names"), "names").stdout).toBe(`local\t${relayAgent.baseUrl}\n`)
    expect(ok(await run("agent", "show", "local"), "show").stdout).toMatch(/- Chat: Answers each message.*\[chat, llm, testing\]/)

    // Without --url there is no agent until one is the default.
    const none = await run("message", "send", "hi", "--json")
    expect(none.code).toBe(2)
    expect(errorOf(none)).toMatchObject({
      code: "invalid_input",
      message: "No agent given",
      hint: expect.stringContaining("relay agent use NAME")
    })
    expect(ok(await run("agent", "use", "local"), "use").stdout).toContain("local is the default agent")
    expect(await jsonOf(run, "message", "send", "hello default")).toMatchObject({ state: "completed", text: "hello default" })
    expect(await jsonOf(run, "agent", "list")).toMatchObject({
      count: 1,
      default_agent: "local",
      agents: [{ name: "local", is_default: true }]
    })
    // A name's session is its URL's.
    expect(await jsonOf(run, "session", "show", "--url", relayAgent.baseUrl)).toMatchObject({ last_state: "completed" })

    expect(ok(await run("agent", "remove", "local"), "remove").stdout).toContain("Removed local")
    expect(await jsonOf(run, "agent", "remove", "local")).toEqual({ name: "local", removed: false, url: null })
    expect((await run("message", "send", "hi")).code).toBe(2)
    expect(await jsonOf(run, "agent", "list")).toEqual({ count: 0, default_agent: null, agents: [] })
  })

  it("refuses a taken name, a name that is no name, an unknown one, and an agent whose card cannot be read", async () => {
    const run = relay(freshHome())
    ok(await run("agent", "add", "sdk", sdk.baseUrl), "add")
    expect(errorOf(await run("agent", "add", "sdk", relayAgent.baseUrl, "--json"))).toMatchObject({
      code: "agent_exists",
      hint: expect.stringContaining("relay agent remove sdk")
    })
    expect(errorOf(await run("agent", "add", "a/b", relayAgent.baseUrl, "--json"))).toMatchObject({ code: "invalid_agent_name" })
    expect(errorOf(await run("agent", "add", "x", "sdk", "--json"))).toMatchObject({ code: "invalid_agent_url" })
    const down = await run("agent", "add", "down", closed, "--json")
    expect(down.code).toBe(4)
    expect(errorOf(down).code).toBe("agent_unreachable")
    const unknown = await run("message", "send", "--url", "nobody", "hi", "--json")
    expect(unknown.code).toBe(1)
    expect(errorOf(unknown)).toMatchObject({ code: "unknown_agent", hint: expect.stringContaining("relay agent list") })
    expect((await jsonOf(run, "agent", "list"))["count"]).toBe(1)
    expect(await jsonOf(run, "agent", "refresh")).toMatchObject({ count: 1, failed: 0, agents: [{ name: "sdk", ok: true }] })
  })
})

/** Every command that takes an agent, with what it needs besides (a task id, a config id, …). */
const COMMANDS: ReadonlyArray<{
  readonly args: (flag: string, name: string) => ReadonlyArray<string>
  readonly contacts: boolean
  /** What a word that is no saved name is: unknown_agent, but a file to card validate. */
  readonly unknown?: string
}> = [
  { args: (flag, name) => ["message", "send", flag, name, "hello by name"], contacts: true },
  { args: (flag, name) => ["message", "stream", flag, name, "hello by name"], contacts: true },
  { args: (flag, name) => ["task", "get", flag, name, "no-such-task"], contacts: true },
  { args: (flag, name) => ["task", "list", flag, name], contacts: true },
  { args: (flag, name) => ["task", "cancel", flag, name, "no-such-task"], contacts: true },
  { args: (flag, name) => ["task", "resubscribe", flag, name, "no-such-task"], contacts: true },
  {
    args: (flag, name) => ["task", "notification", "set", flag, name, "no-such-task", "--webhook-url", "http://127.0.0.1:9/hook"],
    contacts: true
  },
  { args: (flag, name) => ["task", "notification", "get", flag, name, "no-such-task"], contacts: true },
  { args: (flag, name) => ["task", "notification", "list", flag, name, "no-such-task"], contacts: true },
  { args: (flag, name) => ["task", "notification", "delete", flag, name, "no-such-task", "--config-id", "c"], contacts: true },
  { args: (flag, name) => ["card", "get", flag, name], contacts: true },
  { args: (_flag, name) => ["card", "validate", name], contacts: true, unknown: "card_file_refused" },
  { args: (_flag, name) => ["check", name, "--only", "card"], contacts: true },
  { args: (flag, name) => ["check", flag, name, "--only", "card"], contacts: true },
  { args: (flag, name) => ["auth", "login", flag, name, "--client-id", "relay-test"], contacts: true },
  { args: (flag, name) => ["session", "show", flag, name], contacts: false },
  { args: (flag, name) => ["session", "clear", flag, name], contacts: false },
  { args: (flag, name) => ["auth", "set", flag, name, "--bearer-token", "by-name-0123456789abcdef"], contacts: false },
  { args: (flag, name) => ["auth", "show", flag, name], contacts: false },
  { args: (flag, name) => ["auth", "clear", flag, name], contacts: false },
  { args: (flag, name) => ["auth", "logout", flag, name], contacts: false }
]

describe("a name wherever an agent is taken", () => {
  it("every command resolves --url NAME (and --agent NAME) to the name's URL; an unknown name is unknown_agent", async () => {
    const run = relay(freshHome())
    ok(await run("agent", "add", "sdk", sdk.baseUrl), "add")
    for (const [index, command] of COMMANDS.entries()) {
      const flag = index % 2 === 0 ? "--url" : "--agent"
      const before = sdk.requests.length
      const result = await run(...command.args(flag, "sdk"), "--json")
      const line = command.args(flag, "sdk").join(" ")
      // Whatever the command's own outcome (no such task is not_found), the name stood for the URL.
      if (result.code !== 0) {
        expect(["invalid_agent_url", "unknown_agent", "invalid_input"], `${line}: ${result.stderr}`).not.toContain(errorOf(result).code)
      }
      if (command.contacts) expect(sdk.requests.length, `${line} reached the agent`).toBeGreaterThan(before)
      else expect(result.stdout, line).toContain(sdk.baseUrl)
      const unknown = await run(...command.args(flag, "nobody"), "--json")
      expect(errorOf(unknown).code, `${command.args(flag, "nobody").join(" ")}: ${unknown.stderr}`).toBe(command.unknown ?? "unknown_agent")
    }
  }, 180_000)

  it("RELAY_AGENT (a name or a URL) is the agent of commands given none, before the default; --url comes first", async () => {
    const stateDir = freshHome()
    const run = relay(stateDir)
    ok(await run("agent", "add", "sdk", sdk.baseUrl), "add sdk")
    ok(await run("agent", "add", "relay", relayAgent.baseUrl), "add relay")
    ok(await run("agent", "use", "relay"), "use")
    const byDefault = await jsonOf(run, "card", "get")
    expect(byDefault["agent_url"]).toBe(relayAgent.baseUrl)
    expect((await jsonOf(relay(stateDir, { RELAY_AGENT: "sdk" }), "card", "get"))["agent_url"]).toBe(sdk.baseUrl)
    expect((await jsonOf(relay(stateDir, { RELAY_AGENT: sdk.baseUrl }), "card", "get"))["agent_url"]).toBe(sdk.baseUrl)
    expect((await jsonOf(relay(stateDir, { RELAY_AGENT: "sdk" }), "card", "get", "--url", "relay"))["agent_url"]).toBe(relayAgent.baseUrl)
    const unknown = await relay(stateDir, { RELAY_AGENT: "nobody" })("card", "get", "--json")
    expect(errorOf(unknown).code).toBe("unknown_agent")
  })
})

describe("a card off the well-known path", () => {
  it("is given once with --card-url when the agent is added; the name (or the URL) then needs it no more", async () => {
    const run = relay(freshHome())
    expect((await run("message", "send", "--url", mastra.baseUrl, "hi", "--json")).code).toBe(1)
    ok(await run("agent", "add", "weather", mastra.baseUrl, "--card-url", mastra.cardUrl), "add")
    expect(await jsonOf(run, "message", "send", "--url", "weather", "hello weather")).toMatchObject({
      state: "completed",
      text: expect.stringContaining("hello weather")
    })
    expect(await jsonOf(run, "agent", "show", "weather")).toMatchObject({ card_url: mastra.cardUrl, card_name: "v0.3 Test Agent" })
    expect(ok(await run("message", "send", "--url", mastra.baseUrl, "by URL too"), "by URL").stdout).toContain("by URL too")
  })

  it("a URL that is itself the card file adds the agent the card names, the card remembered", async () => {
    const run = relay(freshHome())
    const added = await jsonOf(run, "agent", "add", "weather", mastra.cardUrl)
    expect(added["agent"]).toMatchObject({ url: mastra.jsonRpcUrl, card_url: mastra.cardUrl })
    expect(await jsonOf(run, "message", "send", "--agent", "weather", "by card file")).toMatchObject({ state: "completed" })
  })
})

describe("relay agent discover", () => {
  it("lists the agents of a domain's AI catalog with their cards' names, and what it could not use", async () => {
    const run = relay(freshHome())
    const listed = ok(await run("agent", "discover", site.baseUrl), "discover").stdout
    expect(listed).toContain(`Agents in ${site.baseUrl}${CATALOG_PATH} (5)`)
    expect(listed).toContain(`✓ relay agent ${relayAgent.baseUrl}`)
    expect(listed).toContain("✓ SDK Test Agent")
    expect(listed).toContain("✓ Weather Desk")
    expect(listed).toMatch(/✗ far\n +its card's host is a public address/)
    expect(listed).toMatch(/✗ empty\n +the entry has neither url nor data/)
    expect(listed).toContain("Save them under their cards' names with --add")
    const discovery = await jsonOf(run, "agent", "discover", site.baseUrl)
    expect(discovery).toMatchObject({ catalog_url: `${site.baseUrl}${CATALOG_PATH}`, count: 5, other_entries: 1, not_read: 0 })
    expect((await jsonOf(run, "agent", "list"))["count"]).toBe(0)
  })

  it("--add saves each under its card's name, slugged, never overwriting a name; an agent already named keeps its name", async () => {
    const run = relay(freshHome())
    ok(await run("agent", "add", "mine", relayAgent.baseUrl), "relay agent already named")
    ok(await run("agent", "add", "sdk-test-agent", mastra.baseUrl, "--card-url", mastra.cardUrl), "a name the slug would take")
    const result = await jsonOf(run, "agent", "discover", site.baseUrl, "--add")
    const byIdentifier = Object.fromEntries((result["agents"] as Array<{ identifier: string; name: string | null; added: boolean }>)
      .map((agent) => [agent.identifier, { name: agent.name, added: agent.added }]))
    expect(byIdentifier).toEqual({
      "urn:air:test:a2a:relay": { name: "mine", added: false },
      "urn:air:test:a2a:sdk": { name: "sdk-test-agent-2", added: true },
      "urn:air:test:a2a:weather": { name: "weather-desk", added: true },
      "urn:air:test:a2a:far": { name: null, added: false },
      "urn:air:test:a2a:empty": { name: null, added: false }
    })
    // An agent from a catalog is where its card says (the SDK agent: its JSON-RPC interface).
    expect(await jsonOf(run, "agent", "show", "sdk-test-agent-2")).toMatchObject({ url: sdk.jsonRpcUrl })
    expect(await jsonOf(run, "agent", "show", "sdk-test-agent")).toMatchObject({ url: mastra.baseUrl })
    expect(await jsonOf(run, "message", "send", "--url", "weather-desk", "from the catalog")).toMatchObject({ state: "completed" })
    // Again: nothing new, every agent keeps its name.
    const again = await jsonOf(run, "agent", "discover", site.baseUrl, "--add")
    expect((again["agents"] as Array<{ added: boolean }>).some((agent) => agent.added)).toBe(false)
  })

  it("--add never repoints an agent's card: a catalog's card on another origin than its agent is not kept for it", async () => {
    const run = relay(freshHome())
    ok(await run("agent", "add", "victim", v03.jsonRpcUrl), "the agent, its card at its well-known path")
    // A catalog elsewhere serves a card of its own that claims to be the victim's agent.
    const impostor = await startJsonSite((baseUrl) => ({
      [CATALOG_PATH]: aiCatalog([{ identifier: "urn:air:test:a2a:impostor", type: A2A_CARD_TYPE, url: `${baseUrl}/cards/impostor.json` }]),
      "/cards/impostor.json": { ...v03.card, name: "Impostor", url: v03.jsonRpcUrl }
    }))
    try {
      const result = await jsonOf(run, "agent", "discover", impostor.baseUrl, "--add")
      expect(result["agents"]).toMatchObject([{ identifier: "urn:air:test:a2a:impostor", name: "victim", added: false }])
      expect(impostor.requests).toContain("GET /cards/impostor.json")
    } finally {
      await impostor.close()
    }
    // The victim's session keeps no card URL: its card is still read where the agent serves it.
    const session = await jsonOf(run, "session", "show", "--url", v03.jsonRpcUrl)
    expect(session["card_url"] ?? null).toBeNull()
    expect(await jsonOf(run, "agent", "show", "victim")).toMatchObject({ card_url: null })
  })

  it("says what is wrong when there is no catalog, or it is not one", async () => {
    const run = relay(freshHome())
    expect(errorOf(await run("agent", "discover", relayAgent.baseUrl, "--json"))).toMatchObject({
      code: "invalid_catalog",
      message: expect.stringContaining("nothing is there")
    })
    expect(errorOf(await run("agent", "discover", `${site.baseUrl}/not-a-catalog.json`, "--json"))).toMatchObject({
      code: "invalid_catalog",
      message: expect.stringContaining("no specVersion")
    })
  })
})

describe("a hostile card", () => {
  it("10 000 skills, control characters and huge texts: added with a warning, listed bounded and escaped", async () => {
    const run = relay(freshHome())
    const added = ok(await run("agent", "add", "hostile", hostile.baseUrl), "add")
    expect(added.stderr).toMatch(/^warning: the card has \d+ error\(s\) and \d+ warning\(s\); relay card validate hostile lists them all/)
    for (
      const args of [["agent", "add", "x", hostile.baseUrl], ["agent", "list"], ["agent", "show", "hostile"], [
        "agent",
        "discover",
        hostile.baseUrl
      ]]
    ) {
      const result = await run(...args)
      expect(result.stdout + result.stderr, args.join(" ")).not.toMatch(RAW_CONTROLS)
    }
    const listed = ok(await run("agent", "list"), "list").stdout
    expect(listed.length).toBeLessThan(3000)
    expect(listed).toContain("Evil\\u001b[31m Agent\\nerror: fake relay line")
    expect(listed).toMatch(/Skills +skill\\u001b\[2J0\\r\\nhint: run rm -rf, .* \(and 9990 more\)/)
    const shown = ok(await run("agent", "show", "hostile"), "show").stdout
    expect(shown.split("\n").filter((line) => line.startsWith("  - "))).toHaveLength(CARD_SUMMARY_LIMITS.skills)
    expect(shown.length).toBeLessThan(150_000)
    expect(await jsonOf(run, "agent", "show", "hostile")).toMatchObject({ skills_omitted: 10_000 - CARD_SUMMARY_LIMITS.skills })
  })
})

describe("one store for every door, live", () => {
  it("a running relay mcp's list_agents sees what relay agent add just saved, and relay sees what remove_agent removed", async () => {
    const stateDir = freshHome()
    const env: Record<string, string> = {}
    for (const [key, value] of Object.entries(process.env)) if (value !== undefined) env[key] = value
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [relayBin, "mcp"],
      env: { ...env, RELAY_HOME: stateDir },
      stderr: "pipe"
    })
    const mcp = new Client({ name: "agents-test", version: "1.0.0" })
    await mcp.connect(transport)
    try {
      const list = async () =>
        ((await mcp.callTool({ name: "list_agents", arguments: {} })) as CallToolResult).structuredContent as {
          count: number
          agents: Array<{ name: string }>
        }
      expect((await list()).count).toBe(0)
      ok(await runRelay(["agent", "add", "relay", relayAgent.baseUrl], { stateDir }), "add")
      expect((await list()).agents.map((agent) => agent.name)).toEqual(["relay"])
      const sent =
        (await mcp.callTool({ name: "send_message", arguments: { agent_url: "relay", text: "from the assistant" } })) as CallToolResult
      expect(sent.structuredContent).toMatchObject({ state: "completed", text: "from the assistant" })
      await mcp.callTool({ name: "remove_agent", arguments: { name: "relay" } })
      expect((await jsonOf(relay(stateDir), "agent", "list"))["count"]).toBe(0)
    } finally {
      await mcp.close()
    }
  })
})
