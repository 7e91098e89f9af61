/**
 * Logging in from the assistant (src/mcp/assistantLogin.ts): a tool refused for want of an OAuth
 * login offers the authorization page through a client that opens pages (URL-mode elicitation:
 * an `elicitation/create` request in 2025-11-25, an `input_required` result the client answers by
 * retrying in 2026-07-28), relay finishes authorization code + PKCE on its loopback listener, and
 * the call goes through.
 * Against a real OpenID provider (oidc-provider) whose pages a scripted browser clicks through,
 * and the official SDK agent accepting only tokens the provider signed for it.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import {
  ElicitationCompleteNotificationSchema,
  type ElicitRequest,
  ElicitRequestSchema,
  type ElicitResult
} from "@modelcontextprotocol/sdk/types.js"
import { createMcpHandler } from "@modelcontextprotocol/server"
import { Duration, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeMcpServer } from "../../src/mcp/server.js"
import type { ToolContext } from "../../src/mcp/toolKit.js"
import { browse } from "../helpers/browser.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { AGENT_SCOPE, type ProviderHandle, startProvider } from "../peers/oidcProvider.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

const AUDIENCE = "urn:relay-test:assistant-login"
const WEB_CLIENT = "relay-assistant"

const home = tempHome()
let runtime: AppRuntime
let provider: ProviderHandle
let agent: SdkAgentHandle
/** What the page-opening client was asked, the interactions it was told are complete, and its next answer. */
const asked: Array<ElicitRequest["params"]> = []
const completed: Array<string> = []
let answer: "accept" | "decline" = "accept"
let pages: Client
let formsOnly: Client
let context: ToolContext

interface Stored {
  readonly access_token: string
  readonly refresh_token?: string
  readonly expires_at?: string
  readonly flow: string
  readonly client_id: string
}
const storeFile = () => Path.join(home.stateDir, "sessions.json")
const readStore = () => JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { sessions: Record<string, { credentials?: Stored }> }
const stored = () => Fs.existsSync(storeFile()) ? readStore().sessions[agent.baseUrl]?.credentials : undefined
const expireStored = () => {
  const file = readStore()
  const session = file.sessions[agent.baseUrl]!
  session.credentials = { ...session.credentials!, expires_at: new Date(Date.now() - 1000).toISOString() }
  Fs.writeFileSync(storeFile(), JSON.stringify(file))
}

/** The agent's saved tokens forgotten: its card's OAuth is what asks for a login, with relay mcp's client id. */
const forgetStored = () => {
  const file = readStore()
  delete file.sessions[agent.baseUrl]!.credentials
  Fs.writeFileSync(storeFile(), JSON.stringify(file))
}

/** A person at the client: opens the page offered and clicks through the provider's pages. */
const person = (params: ElicitRequest["params"]): ElicitResult => {
  asked.push(params)
  if (params.mode === "url" && answer === "accept") void browse(params.url, { providerOrigin: provider.issuer })
  return { action: answer }
}

beforeAll(async () => {
  provider = await startProvider({
    audience: AUDIENCE,
    clients: [{
      client_id: WEB_CLIENT,
      application_type: "native",
      // No refresh token: once the access token expires, only a new login helps.
      grant_types: ["authorization_code"],
      response_types: ["code"],
      redirect_uris: ["http://127.0.0.1/callback"]
    }]
  })
  agent = await startSdkAgent({
    verifyBearer: provider.verifyBearer,
    security: {
      securitySchemes: { people: { openIdConnectSecurityScheme: { openIdConnectUrl: provider.issuer } } },
      securityRequirements: [{ schemes: { people: { list: ["openid", AGENT_SCOPE] } } }]
    }
  })
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  context = contextFor(runtime, { loginClientId: WEB_CLIENT })
  const pageClient = new Client({ name: "page-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {}, url: {} } } })
  pageClient.setRequestHandler(ElicitRequestSchema, (request) => person(request.params))
  pageClient.setNotificationHandler(ElicitationCompleteNotificationSchema, (notification) => {
    completed.push(notification.params.elicitationId)
  })
  const formClient = new Client({ name: "form-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  formClient.setRequestHandler(ElicitRequestSchema, (request) => person(request.params))
  ;[pages, formsOnly] = await Promise.all([connectTools(context, pageClient), connectTools(context, formClient)])
}, 30_000)

afterAll(async () => {
  await Promise.allSettled([pages?.close(), formsOnly?.close()])
  await Promise.allSettled([provider?.close(), agent?.close()])
  await runtime?.dispose()
  home.cleanup()
})

const send = (client: Client) => callTool(client, "send_message", { agent_url: agent.baseUrl, message: "hello" }, { timeoutMs: 30_000 })

/** The one question asked: a URL elicitation of the provider's login page for relay's web client (PKCE, a loopback redirect). */
const loginPageOffered = () => {
  expect(asked).toHaveLength(1)
  const offered = asked[0]!
  if (offered.mode !== "url") return expect.fail(`a ${offered.mode} question was asked, not a page`)
  const page = new URL(offered.url)
  expect(page.origin).toBe(provider.issuer)
  expect(page.searchParams.get("client_id")).toBe(WEB_CLIENT)
  expect(page.searchParams.get("code_challenge_method")).toBe("S256")
  expect(new URL(page.searchParams.get("redirect_uri")!).hostname).toBe("127.0.0.1")
  expect(offered.message).toContain(agent.baseUrl)
  return offered
}

describe("login through the client", () => {
  it("an agent that needs a login: the user is offered the page, relay logs in and the message goes through", async () => {
    asked.length = 0
    const result = await send(pages)
    expect(result.isError ?? false, textOf(result)).toBe(false)
    const offered = loginPageOffered()
    expect(completed).toEqual([offered.elicitationId])
    const credentials = stored()!
    expect(credentials).toMatchObject({ flow: "authorization_code", client_id: WEB_CLIENT })
    expect(agent.requests.some((request) => request.headers["authorization"] === `Bearer ${credentials.access_token}`)).toBe(true)
    // Neither the model nor the client sees a token.
    expect(JSON.stringify([result, asked])).not.toContain(credentials.access_token)
  })

  it("saved tokens that expired with no way to renew: the user logs in again through the client", async () => {
    const before = stored()!.access_token
    expireStored()
    asked.length = 0
    const result = await callTool(pages, "list_tasks", { agent_url: agent.baseUrl }, { timeoutMs: 30_000 })
    expect(result.isError ?? false, textOf(result)).toBe(false)
    expect(asked.map((params) => params.mode)).toEqual(["url"])
    expect(stored()!.access_token).not.toBe(before)
  })

  it("declined: the result is today's needs_auth with the terminal command", async () => {
    expireStored()
    asked.length = 0
    answer = "decline"
    try {
      const result = await send(pages)
      expect(asked).toHaveLength(1)
      expect(result.isError).toBe(true)
      expect(textOf(result)).toContain("Error [needs_auth]")
      expect(textOf(result)).toContain(`relay auth login --url ${agent.baseUrl} --client-id ${WEB_CLIENT} --flow authorization_code`)
    } finally {
      answer = "accept"
    }
  })

  it("a client that cannot open pages is not asked: today's needs_auth", async () => {
    asked.length = 0
    const result = await send(formsOnly)
    expect(asked).toHaveLength(0)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain("Error [needs_auth]")
  })
})

describe("login through a 2026-07-28 client: the page in an input_required result, the call retried", () => {
  /** What the modern client sent: each tools/call's params (a retry carries requestState). */
  const calls: Array<Record<string, unknown>> = []

  /** The v2 client pinned to 2026-07-28, in process, declaring `elicitation` as given; `browseAfter` delays the person. */
  const modernClient = async (
    elicitation: { form?: Record<string, never>; url?: Record<string, never> },
    serverContext: ToolContext = context,
    browseAfter = 0
  ) => {
    const handler = createMcpHandler(({ era }) => makeMcpServer(serverContext, era), { legacy: "reject" })
    const client = new ClientV2(
      { name: "modern-page-client", version: "1.0.0" },
      { capabilities: { elicitation }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
    )
    client.setRequestHandler("elicitation/create", (request) => {
      const params = request.params as ElicitRequest["params"]
      asked.push(params)
      if (params.mode === "url" && answer === "accept") {
        setTimeout(() => void browse(params.url, { providerOrigin: provider.issuer }), browseAfter)
      }
      return { action: answer }
    })
    const fetchSeen = async (url: string | URL, init?: RequestInit) => {
      const body = typeof init?.body === "string" ? JSON.parse(init.body) as { method?: string; params?: Record<string, unknown> } : {}
      if (body.method === "tools/call") calls.push(body.params ?? {})
      return handler.fetch(new Request(url, init))
    }
    await client.connect(new StreamableHTTPClientTransport(new URL("http://relay.test/mcp"), { fetch: fetchSeen }))
    return { client, close: () => client.close().finally(() => handler.close()) }
  }

  const sendModern = (client: ClientV2) =>
    client.callTool({ name: "send_message", arguments: { agent_url: agent.baseUrl, message: "hello" } }, { timeout: 30_000 }) as Promise<
      { isError?: boolean; content: Array<{ type: string; text?: string }> }
    >
  const modernText = (result: { content: Array<{ type: string; text?: string }> }) =>
    result.content.flatMap((block) => (block.type === "text" && block.text !== undefined ? [block.text] : [])).join("\n")

  it("an agent whose card wants a login: the page is offered, relay logs in while the client retries, the message goes through", async () => {
    forgetStored()
    asked.length = 0
    calls.length = 0
    const { client, close } = await modernClient({ form: {}, url: {} })
    try {
      const result = await sendModern(client)
      expect(result.isError ?? false, modernText(result)).toBe(false)
      loginPageOffered()
      // The first call, then its retry with the user's reply and the state naming the page.
      expect(calls).toHaveLength(2)
      expect(calls[1]).toMatchObject({ inputResponses: { relay_page: { action: "accept" } }, requestState: expect.any(String) })
      const credentials = stored()!
      expect(credentials).toMatchObject({ flow: "authorization_code", client_id: WEB_CLIENT })
      expect(agent.requests.some((request) => request.headers["authorization"] === `Bearer ${credentials.access_token}`)).toBe(true)
      expect(JSON.stringify([result, asked, calls])).not.toContain(credentials.access_token)
    } finally {
      await close()
    }
  })

  it("a login still going on when the retry comes: the client is asked to retry again (requestState alone) until it is done", async () => {
    expireStored()
    asked.length = 0
    calls.length = 0
    const { client, close } = await modernClient({ url: {} }, { ...context, loginLeg: Duration.millis(200) }, 600)
    try {
      const before = stored()!.access_token
      const result = await sendModern(client)
      expect(result.isError ?? false, modernText(result)).toBe(false)
      expect(asked).toHaveLength(1)
      expect(calls.length).toBeGreaterThanOrEqual(3)
      expect(calls.slice(2).every((params) => params["inputResponses"] === undefined && typeof params["requestState"] === "string"))
        .toBe(true)
      expect(stored()!.access_token).not.toBe(before)
    } finally {
      await close()
    }
  })

  it("declined: the result is today's needs_auth with the terminal command", async () => {
    expireStored()
    asked.length = 0
    answer = "decline"
    const { client, close } = await modernClient({ form: {}, url: {} })
    try {
      const result = await sendModern(client)
      expect(asked).toHaveLength(1)
      expect(result.isError).toBe(true)
      expect(modernText(result)).toContain("Error [needs_auth]")
      expect(modernText(result)).toContain(`relay auth login --url ${agent.baseUrl} --client-id ${WEB_CLIENT} --flow authorization_code`)
    } finally {
      answer = "accept"
      await close()
    }
  })

  it("a client that declares no URL elicitation is not asked: today's needs_auth", async () => {
    asked.length = 0
    const { client, close } = await modernClient({ form: {} })
    try {
      const result = await sendModern(client)
      expect(asked).toHaveLength(0)
      expect(result.isError).toBe(true)
      expect(modernText(result)).toContain("Error [needs_auth]")
    } finally {
      await close()
    }
  })
})
