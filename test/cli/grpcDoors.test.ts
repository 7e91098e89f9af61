/**
 * gRPC at the doors (#33, built CLI: `npm run build` first), against one `relay server agent --auth
 * --grpc-port 0`: a card given in a file (`--card-file`) reaches a gRPC-only agent whose card is
 * at no HTTP path; results name the binding they came over, at the terminal (--json and the human
 * view) and in the MCP tools' structuredContent; and the gRPC port, another origin than the card's,
 * gets the credentials saved for it with the command its refusal names.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { requireBuiltRelay, runRelay, startAgentServer } from "../helpers/cli.js"
import { appLayer, connectTools, contextFor } from "../helpers/mcpTools.js"
import { stateDirsFor, tempHome } from "../helpers/stateHome.js"

const KEY = "grpc-doors-key-0123456789abcdef"

const freshStateDir = stateDirsFor(afterAll)
const home = tempHome()
let agentUrl: string
let grpcAddress: string
let grpcOrigin: string
let cardFile: string
let cardSite: Http.Server
let stopAgent: () => void

/** Starts relay's own agent (echo model, key required, gRPC in plaintext on loopback) and waits for its start-up line. */
const startAgent = async () => {
  const agent = await startAgentServer(["--grpc-port", "0", "--auth", "--store", "memory", "-m", "echo"], {
    stateDir: home.stateDir,
    env: { RELAY_AGENT_KEY: KEY }
  })
  stopAgent = agent.kill
  return { url: agent.info.url, grpc_address: agent.info.grpc_address! }
}

/** Relay's card with every interface but the gRPC ones removed: the card of a gRPC-only agent. */
const grpcOnlyCard = (card: Record<string, unknown>) => {
  const { url: _url, preferredTransport: _preferred, additionalInterfaces: _more, ...rest } = card
  const interfaces = card["supportedInterfaces"] as Array<{ protocolBinding: string }>
  return { ...rest, supportedInterfaces: interfaces.filter((entry) => entry.protocolBinding === "GRPC") }
}

beforeAll(async () => {
  requireBuiltRelay()
  const started = await startAgent()
  agentUrl = started.url
  grpcAddress = started.grpc_address
  grpcOrigin = `http://${grpcAddress}`
  const card = grpcOnlyCard(await (await fetch(`${agentUrl}/.well-known/agent-card.json`)).json() as Record<string, unknown>)
  cardFile = Path.join(home.parent, "grpc-card.json")
  Fs.writeFileSync(cardFile, JSON.stringify(card))
  // The same card served on a third origin, for the MCP tools (which take a card URL, not a file).
  cardSite = Http.createServer((_request, response) => response.setHeader("content-type", "application/json").end(JSON.stringify(card)))
  await new Promise<void>((resolve) => cardSite.listen(0, "127.0.0.1", resolve))
}, 30_000)

afterAll(async () => {
  stopAgent?.()
  await new Promise((resolve) => cardSite?.close(resolve))
  home.cleanup()
})

const relayJson = async (args: ReadonlyArray<string>, stateDir = freshStateDir()) => {
  const result = await runRelay([...args, "--json"], { stateDir })
  // A failure's JSON follows any warning logged before it.
  return { ...result, json: () => JSON.parse(result.code === 0 ? result.stdout : result.stderr.slice(result.stderr.indexOf("{"))) }
}

describe("--card-file: a gRPC-only agent whose card is at no HTTP path", () => {
  it("relay message send reaches it by the card's gRPC interface, and the result names GRPC and A2A 1.0", async () => {
    const result = await relayJson(["message", "send", "--card-file", cardFile, "--binding", "grpc", "--api-key", KEY, "hi by file"])
    expect(result.code, result.stderr).toBe(0)
    expect(result.json()).toMatchObject({ state: "completed", text: "hi by file", binding: "GRPC", protocol_version: "1.0" })
  })

  it("relay card get --card-file prints the card as relay reads it; task get names the interface in its human view", async () => {
    const stateDir = freshStateDir()
    const card = await relayJson(["card", "get", "--card-file", cardFile], stateDir)
    expect(card.code, card.stderr).toBe(0)
    expect(card.json()).toMatchObject({ agent_url: grpcOrigin, card_url: `file://${cardFile}`, card: { name: expect.any(String) } })

    const sent = await relayJson(["message", "send", "--card-file", cardFile, "--api-key", KEY, "kept"], stateDir)
    const taskId = (sent.json() as { task_id: string }).task_id
    const human = await runRelay(["task", "get", "--card-file", cardFile, "--api-key", KEY, taskId], { stateDir })
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/Interface\s+GRPC, A2A 1\.0/)
  })

  it.each([
    ["a missing file", () => Path.join(home.parent, "nope.json"), /no such file/],
    ["a file that is not JSON", () => writeFile("not-json.json", "{ nope"), /not JSON/],
    ["JSON that is not a card", () => writeFile("not-a-card.json", JSON.stringify({ name: 7 })), /not an agent card/]
  ])("%s is a usage error (exit 2) whose hint names relay card validate", async (_case, file, reason) => {
    const path = file()
    const result = await relayJson(["message", "send", "--card-file", path, "hi"])
    expect(result.code, result.stderr).toBe(2)
    const { error } = result.json() as { error: { code: string; message: string; hint: string } }
    expect(error.code).toBe("invalid_input")
    expect(error.message).toMatch(reason)
    expect(error.hint).toContain(`relay card validate ${path}`)
  })

  it("--card-file with --card-url is a usage error", async () => {
    const result = await relayJson(["card", "get", "--card-file", cardFile, "--card-url", `${agentUrl}/card.json`])
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--card-file and --card-url do not go together")
  })
})

const writeFile = (name: string, text: string) => {
  const path = Path.join(home.parent, name)
  Fs.writeFileSync(path, text)
  return path
}

describe("results name the binding they came over", () => {
  it("at the terminal: JSON-RPC and HTTP+JSON, picked with --binding", async () => {
    const stateDir = freshStateDir()
    const jsonRpc = await relayJson(["message", "send", "--url", agentUrl, "--binding", "jsonrpc", "--api-key", KEY, "one"], stateDir)
    expect(jsonRpc.json()).toMatchObject({ state: "completed", binding: "JSONRPC", protocol_version: "1.0" })
    const taskId = (jsonRpc.json() as { task_id: string }).task_id
    const rest = await relayJson(["task", "get", "--url", agentUrl, "--binding", "rest", "--api-key", KEY, taskId], stateDir)
    expect(rest.json()).toMatchObject({ task_id: taskId, binding: "HTTP+JSON", protocol_version: "1.0" })
    const listed = await relayJson([
      "task",
      "list",
      "--url",
      agentUrl,
      "--binding",
      "grpc",
      "--allow-cross-origin-credentials",
      "--api-key",
      KEY
    ], stateDir)
    expect(listed.json()).toMatchObject({ binding: "GRPC", protocol_version: "1.0" })
  })

  it("in the MCP tools' structuredContent, which the tools' output schemas declare", async () => {
    const stateDir = freshStateDir()
    const runtime = ManagedRuntime.make(appLayer(stateDir))
    const client = await connectTools(contextFor(runtime), new Client({ name: "binding-test", version: "1.0.0" }))
    try {
      const tools = (await client.listTools()).tools
      const sendSchema = tools.find((tool) => tool.name === "send_message")?.outputSchema as { properties: Record<string, unknown> }
      expect(Object.keys(sendSchema.properties)).toEqual(expect.arrayContaining(["binding", "protocol_version"]))

      const overJsonRpc = await client.callTool({ name: "send_message", arguments: { agent_url: agentUrl, api_key: KEY, text: "mcp one" } })
      expect(overJsonRpc.structuredContent).toMatchObject({ state: "completed", binding: "JSONRPC", protocol_version: "1.0" })
      // The gRPC-only card, served where the agent is not: the agent is its gRPC port.
      const cardUrl = `http://127.0.0.1:${(cardSite.address() as AddressInfo).port}/card.json`
      const overGrpc = await client.callTool({
        name: "send_message",
        arguments: { agent_url: grpcOrigin, card_url: cardUrl, api_key: KEY, text: "mcp two" }
      })
      expect(overGrpc.structuredContent).toMatchObject({ state: "completed", text: "mcp two", binding: "GRPC", protocol_version: "1.0" })
      const taskId = (overGrpc.structuredContent as { task_id: string }).task_id
      const got = await client.callTool({ name: "get_task", arguments: { agent_url: grpcOrigin, api_key: KEY, task_id: taskId } })
      expect(got.structuredContent).toMatchObject({ task_id: taskId, binding: "GRPC" })
    } finally {
      await client.close()
      await runtime.dispose()
    }
  })
})

describe("credentials for relay's own --auth gRPC port (another origin than the card's)", () => {
  it("the refusal names the relay auth set command for the gRPC origin; after it, the call succeeds", async () => {
    const stateDir = freshStateDir()
    const saved = await relayJson(["auth", "set", "--url", agentUrl, "--api-key", KEY], stateDir)
    expect(saved.code, saved.stderr).toBe(0)
    const refused = await relayJson(["message", "send", "--url", agentUrl, "--binding", "grpc", "hi"], stateDir)
    expect(refused.code, refused.stderr).toBe(3)
    const { error } = refused.json() as { error: { code: string; hint: string } }
    expect(error.code).toBe("auth_required")
    const command = `relay auth set --url ${grpcOrigin} --bearer-token <TOKEN> (or --api-key <KEY>)`
    expect(error.hint).toContain(command)
    expect(refused.stderr).toContain(`relay auth set --url ${grpcOrigin}`)

    const savedThere = await relayJson(["auth", "set", "--url", grpcOrigin, "--api-key", KEY], stateDir)
    expect(savedThere.code, savedThere.stderr).toBe(0)
    const sent = await relayJson(["message", "send", "--url", agentUrl, "--binding", "grpc", "hi again"], stateDir)
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.json()).toMatchObject({ state: "completed", text: "hi again", binding: "GRPC" })
    // The address as the card gives it (host:port) names the same credentials.
    const shown = await relayJson(["auth", "show", "--url", grpcAddress], stateDir)
    expect(shown.json()).toMatchObject({ agent_url: grpcOrigin, credentials: { auth_type: "api_key" } })
  })
})
