/**
 * OAuth under MCP: tools use the tokens `relay auth login` saved, an assistant never sees or
 * passes a token or secret, and a tool that needs a login says which command the user runs.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Duration, Effect, ManagedRuntime, TestClock, TestContext } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { login } from "../../src/programs/oauth.js"
import { OAuth } from "../../src/services/OAuth.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { AGENT_SCOPE, type ProviderHandle, startProvider } from "../peers/oidcProvider.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { reply, startStub, v1Card } from "../services/a2aClientHarness.js"

const AUDIENCE = "urn:relay-test:mcp-agent"
const CLIENT_ID = "relay-mcp"
const SECRET = "mcp-secret-0123456789-abcdefghij"

const home = tempHome()
let runtime: AppRuntime
let mcp: Client
let provider: ProviderHandle
let agent: SdkAgentHandle

const noInteraction = { prompt: () => Effect.void, openBrowser: false, timeout: Duration.seconds(5) }
const loginOnce = () =>
  runtime.runPromise(
    login({
      agentUrl: agentUrlOf(agent.baseUrl),
      flow: "client_credentials",
      clientId: CLIENT_ID,
      clientSecret: SECRET,
      interaction: noInteraction
    })
  )
const storeFile = () => Path.join(home.stateDir, "sessions.json")
const storedToken = () =>
  (JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { sessions: Record<string, { credentials: { access_token: string } }> })
    .sessions[agent.baseUrl]!.credentials.access_token
/** Changes the saved credentials as another process (or time) would. */
const editStored = (change: (credentials: Record<string, unknown>) => Record<string, unknown>) => {
  const file = JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { sessions: Record<string, { credentials: Record<string, unknown> }> }
  file.sessions[agent.baseUrl]!.credentials = change(file.sessions[agent.baseUrl]!.credentials)
  Fs.writeFileSync(storeFile(), JSON.stringify(file))
}
const expired = () => new Date(Date.now() - 1000).toISOString()

beforeAll(async () => {
  provider = await startProvider({
    audience: AUDIENCE,
    clients: [{ client_id: CLIENT_ID, client_secret: SECRET, grant_types: ["client_credentials"] }]
  })
  agent = await startSdkAgent({
    verifyBearer: provider.verifyBearer,
    security: {
      securitySchemes: { oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: provider.issuer } } },
      securityRequirements: [{ schemes: { oidc: { list: [AGENT_SCOPE] } } }]
    }
  })
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime))
}, 30_000)

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([provider?.close(), agent?.close()])
  await runtime?.dispose()
  home.cleanup()
})

describe("MCP tools with OAuth tokens", () => {
  it("send_message uses the saved tokens; the result never shows them", async () => {
    await loginOnce()
    const token = storedToken()
    const result = await callTool(mcp, "send_message", { agent_url: agent.baseUrl, message: "hello over mcp" })
    expect(result.isError ?? false, textOf(result)).toBe(false)
    expect(JSON.stringify(result)).not.toContain(token)
    expect(agent.requests.some((request) => request.headers["authorization"] === `Bearer ${token}`)).toBe(true)
  })

  it("client credentials renew themselves in a long-running server: a tool after expiry gets a new token", async () => {
    const before = storedToken()
    editStored((credentials) => ({ ...credentials, expires_at: expired() }))
    const result = await callTool(mcp, "list_tasks", { agent_url: agent.baseUrl })
    expect(result.isError ?? false, textOf(result)).toBe(false)
    expect(storedToken()).not.toBe(before)
    expect(JSON.stringify(result)).not.toContain(SECRET)
  })

  it("a tool whose tokens expired without a way to renew returns needs_auth with the exact login command", async () => {
    // As an earlier relay saved client credentials: without the secret.
    editStored(({ client_secret: _secret, ...credentials }) => ({ ...credentials, expires_at: expired() }))
    const result = await callTool(mcp, "list_tasks", { agent_url: agent.baseUrl })
    expect(result.isError).toBe(true)
    const text = textOf(result)
    expect(text).toContain("Error [needs_auth]")
    expect(text).toContain(`\`relay auth login --url ${agent.baseUrl} --client-id ${CLIENT_ID} --client-secret -\``)
    expect(text).not.toContain(storedToken())
  })

  it("no tool takes a client secret, password or client id", async () => {
    const { tools } = await mcp.listTools()
    const parameters = tools.flatMap((tool) => Object.keys(tool.inputSchema.properties ?? {}))
    expect(parameters.filter((name) => /secret|password|client_id|refresh/i.test(name))).toEqual([])
  })
})

describe("an agent whose card declares OAuth refuses a tool (401)", () => {
  it("the result tells the assistant which login the user runs, with the card's flow", async () => {
    const stub = await startStub((base) => ({
      "GET /.well-known/agent-card.json": reply({
        ...v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]),
        securitySchemes: { machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/token`, scopes: {} } } } } }
      }),
      "POST /rpc": reply({ error: "unauthorized" }, 401)
    }))
    try {
      const result = await callTool(mcp, "send_message", { agent_url: stub.baseUrl, message: "hello" })
      expect(result.isError).toBe(true)
      const text = textOf(result)
      expect(text).toContain("Error [auth_required]")
      expect(text).toContain(`\`relay auth login --url ${stub.baseUrl} --client-id <CLIENT_ID> --client-secret -\``)
      expect(text).not.toContain("set_agent_credentials")
    } finally {
      await stub.close()
    }
  })
})

describe("clock skew", () => {
  it("a token that expired by this machine's clock as it arrives is refused as clock skew", async () => {
    // This machine's clock runs two hours ahead of the provider's.
    const failure = await Effect.runPromise(
      Effect.gen(function*() {
        yield* TestClock.setTime(Date.now() + 2 * 60 * 60 * 1000)
        const oauth = yield* OAuth
        const server = yield* oauth.discover(undefined, "client_credentials", provider.issuer)
        return yield* Effect.flip(
          oauth.clientCredentials(server, { clientId: CLIENT_ID, clientSecret: SECRET }, [AGENT_SCOPE], { agentUrl: agent.baseUrl })
        )
      }).pipe(Effect.provide(TestContext.TestContext))
    )
    expect(failure._tag).toBe("ClockSkew")
    expect(failure.code).toBe("oauth_clock_skew")
    expect(failure.message).toMatch(/expired \d+ s ago by this machine's clock/)
  })
})
