/**
 * `relay auth login|show|logout` and OAuth tokens at work, end to end: the built CLI against a real
 * OpenID provider (oidc-provider) in front of an SDK agent that accepts only JWTs the provider
 * signed for it (signature via the provider's JWKS, issuer, audience, expiry).
 */
import { decodeJwt } from "jose"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { ADMIN_SCOPE, AGENT_SCOPE, type ProviderHandle, startProvider } from "../peers/oidcProvider.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

const AUDIENCE = "urn:relay-test:agent"
const CLIENT_ID = "relay-cc"
const SECRET = "cc-secret-0123456789-abcdefghij"

const home = tempHome()
let provider: ProviderHandle
let oidcAgent: SdkAgentHandle
let oauth2Agent: SdkAgentHandle
let plainAgent: SdkAgentHandle
/** Everything relay printed in this file: no token may ever appear in it. */
const printed: string[] = []
/** Every access and refresh token relay held in this file. */
const issued = new Set<string>()

const relay = async (args: ReadonlyArray<string>, options: { readonly input?: string; readonly env?: Record<string, string> } = {}) => {
  const result = await runRelay(args, { stateDir: home.stateDir, ...options })
  printed.push(result.stdout, result.stderr)
  return result
}

interface StoredOAuth {
  readonly kind: string
  readonly access_token: string
  readonly refresh_token?: string
  readonly expires_at?: string
  readonly client_secret?: string
  readonly scopes: ReadonlyArray<string>
  readonly token_endpoint: string
}

const storeFile = () => Path.join(home.stateDir, "sessions.json")
const readStore = () =>
  JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { version: number; sessions: Record<string, { credentials?: StoredOAuth }> }
const storedFor = (url: string): StoredOAuth => {
  const credentials = readStore().sessions[url]?.credentials
  if (credentials === undefined) throw new Error(`no credentials for ${url}`)
  issued.add(credentials.access_token)
  if (credentials.refresh_token !== undefined) issued.add(credentials.refresh_token)
  return credentials
}
const editStored = (url: string, change: (credentials: StoredOAuth) => StoredOAuth) => {
  const file = readStore()
  file.sessions[url] = { ...file.sessions[url], credentials: change(storedFor(url)) }
  Fs.writeFileSync(storeFile(), JSON.stringify(file))
}

const bearerOf = (headers: Readonly<Record<string, string | string[] | undefined>>) =>
  /^Bearer (.+)$/.exec(String(headers["authorization"] ?? ""))?.[1]

const login = (url: string, extra: ReadonlyArray<string> = [], secret = SECRET) =>
  relay(["auth", "login", "--url", url, "--client-id", CLIENT_ID, "--client-secret", "-", ...extra], { input: `${secret}\n` })

beforeAll(async () => {
  provider = await startProvider({
    audience: AUDIENCE,
    clients: [{ client_id: CLIENT_ID, client_secret: SECRET, grant_types: ["client_credentials"] }]
  })
  const verifyBearer = provider.verifyBearer
  const requirement = (name: string) => [{ schemes: { [name]: { list: [AGENT_SCOPE] } } }]
  ;[oidcAgent, oauth2Agent, plainAgent] = await Promise.all([
    // The SDK serves its ts-proto {$case, value} form; relay reads it like ProtoJSON and v0.3.
    startSdkAgent({
      verifyBearer,
      security: {
        securitySchemes: {
          oidc: {
            scheme: {
              $case: "openIdConnectSecurityScheme",
              value: { description: "Test provider", openIdConnectUrl: `${provider.issuer}/.well-known/openid-configuration` }
            }
          }
        },
        securityRequirements: requirement("oidc")
      }
    }),
    startSdkAgent({
      verifyBearer,
      security: {
        securitySchemes: {
          machines: {
            scheme: {
              $case: "oauth2SecurityScheme",
              value: {
                description: "Client credentials",
                oauth2MetadataUrl: "",
                flows: {
                  flow: {
                    $case: "clientCredentials",
                    value: { tokenUrl: `${provider.issuer}/token`, refreshUrl: "", scopes: { [AGENT_SCOPE]: "use the agent" } }
                  }
                }
              }
            }
          }
        },
        securityRequirements: requirement("machines")
      }
    }),
    startSdkAgent()
  ])
}, 30_000)

afterAll(async () => {
  await Promise.allSettled([provider?.close(), oidcAgent?.close(), oauth2Agent?.close(), plainAgent?.close()])
  home.cleanup()
})

describe("client credentials", () => {
  it("logs in from the card's openIdConnectUrl with the required scopes; the agent accepts the JWT", async () => {
    const result = await login(oidcAgent.baseUrl, ["--json"])
    expect(result.code, result.stderr).toBe(0)
    const output = JSON.parse(result.stdout) as Record<string, unknown>
    expect(output).toMatchObject({
      agent_url: oidcAgent.baseUrl,
      auth_type: "oauth",
      flow: "client_credentials",
      scheme: "oidc",
      scopes: [AGENT_SCOPE]
    })

    const stored = storedFor(oidcAgent.baseUrl)
    expect(stored.kind).toBe("oauth")
    expect(stored.client_secret, "kept with the tokens, so they renew without a new login").toBe(SECRET)
    expect(stored.token_endpoint).toBe(`${provider.issuer}/token`)
    expect(decodeJwt(stored.access_token)).toMatchObject({ aud: AUDIENCE, scope: AGENT_SCOPE, client_id: CLIENT_ID })
    expect(Fs.statSync(storeFile()).mode & 0o777).toBe(0o600)
    expect(readStore().version).toBe(2)
    // The secret went to the token endpoint with HTTP Basic, nowhere else.
    const tokenRequests = provider.requests.filter((request) => request.path === "/token")
    expect(tokenRequests.at(-1)?.headers["authorization"]).toMatch(/^Basic /)

    const sent = await relay(["message", "send", "--url", oidcAgent.baseUrl, "hello"])
    expect(sent.code, sent.stderr).toBe(0)
    expect(sent.stdout).toContain("hello")
    const tokensSent = oidcAgent.requests.map((request) => bearerOf(request.headers)).filter((token) => token !== undefined)
    expect(tokensSent.length).toBeGreaterThan(0)
    expect(new Set(tokensSent)).toEqual(new Set([stored.access_token]))
  })

  it("reads the token URL from a v1.0 oauth2 clientCredentials flow, secret from RELAY_CLIENT_SECRET", async () => {
    const result = await relay(["auth", "login", "--url", oauth2Agent.baseUrl, "--client-id", CLIENT_ID], {
      env: { RELAY_CLIENT_SECRET: SECRET }
    })
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`Logged in to ${oauth2Agent.baseUrl} (client_credentials)`)
    expect(storedFor(oauth2Agent.baseUrl).scopes).toEqual([AGENT_SCOPE])
    const listed = await relay(["task", "list", "--url", oauth2Agent.baseUrl])
    expect(listed.code, listed.stderr).toBe(0)
  })

  it("--scope overrides the card's scopes", async () => {
    const result = await login(oauth2Agent.baseUrl, ["--scope", ADMIN_SCOPE])
    expect(result.code, result.stderr).toBe(0)
    expect(decodeJwt(storedFor(oauth2Agent.baseUrl).access_token)).toMatchObject({ scope: ADMIN_SCOPE })
  })

  it("auth show: kind, scopes, expiry and a masked token", async () => {
    const stored = storedFor(oidcAgent.baseUrl)
    const result = await relay(["auth", "show", "--url", oidcAgent.baseUrl, "--json"])
    expect(result.code).toBe(0)
    const shown = JSON.parse(result.stdout) as { credentials: Record<string, unknown> }
    expect(shown.credentials).toMatchObject({
      auth_type: "oauth",
      flow: "client_credentials",
      scopes: [AGENT_SCOPE],
      expires_at: stored.expires_at,
      masked: `…${stored.access_token.slice(-4)}`,
      refreshable: true
    })
    expect(result.stdout).not.toContain(SECRET)
    const human = await relay(["auth", "show", "--url", oidcAgent.baseUrl])
    expect(human.stdout).toMatch(/Type\s+oauth/)
    expect(human.stdout).toMatch(/Expires\s+\d{4}-/)
    expect(human.stdout).toMatch(/Renews\s+yes, without you/)
  })
})

describe("renewal", () => {
  it("client credentials renew themselves before they expire: no new login, the secret stays in the store", async () => {
    expect((await login(oauth2Agent.baseUrl)).code).toBe(0)
    const before = storedFor(oauth2Agent.baseUrl)
    expect(before.client_secret).toBe(SECRET)
    editStored(oauth2Agent.baseUrl, (credentials) => ({ ...credentials, expires_at: new Date(Date.now() - 1000).toISOString() }))
    const tokenCalls = provider.requests.filter((request) => request.path === "/token").length

    const listed = await relay(["task", "list", "--url", oauth2Agent.baseUrl])
    expect(listed.code, listed.stderr).toBe(0)
    expect(provider.requests.filter((request) => request.path === "/token").length).toBe(tokenCalls + 1)
    const after = storedFor(oauth2Agent.baseUrl)
    expect(after.access_token).not.toBe(before.access_token)
    expect(Date.parse(after.expires_at!)).toBeGreaterThan(Date.now())
  })

  it("a token the agent refuses (401) is renewed once and the call repeated", async () => {
    const sent = await relay(["message", "send", "--url", oauth2Agent.baseUrl, "--json", "keep this"])
    expect(sent.code, sent.stderr).toBe(0)
    const taskId = (JSON.parse(sent.stdout) as { task_id: string }).task_id
    // A token the provider never signed: the agent answers 401.
    editStored(oauth2Agent.baseUrl, (credentials) => ({ ...credentials, access_token: "forged.token.value-0123456789" }))
    const seen = oauth2Agent.requests.length

    const got = await relay(["task", "get", "--url", oauth2Agent.baseUrl, taskId, "--json"])
    expect(got.code, got.stderr).toBe(0)
    const statuses = oauth2Agent.requests.slice(seen).filter((request) => request.path !== "/.well-known/agent-card.json").map((request) =>
      request.status
    )
    expect(statuses).toEqual([401, 200])
    expect(storedFor(oauth2Agent.baseUrl).access_token).not.toContain("forged")

    // Push config reads and task lists too.
    for (
      const args of [["task", "notification", "list", "--url", oauth2Agent.baseUrl, taskId], ["task", "list", "--url", oauth2Agent.baseUrl]]
    ) {
      editStored(oauth2Agent.baseUrl, (credentials) => ({ ...credentials, access_token: "forged.token.value-0123456789" }))
      const from = oauth2Agent.requests.length
      const result = await relay(args)
      expect(result.code, result.stderr).toBe(0)
      expect(
        oauth2Agent.requests.slice(from).filter((request) => request.path !== "/.well-known/agent-card.json").map((request) =>
          request.status
        )
      )
        .toEqual([401, 200])
      storedFor(oauth2Agent.baseUrl)
    }
  })

  it("a message refused with 401 is sent once more with renewed tokens, and only once", async () => {
    editStored(oauth2Agent.baseUrl, (credentials) => ({ ...credentials, access_token: "forged.token.value-0123456789" }))
    const seen = oauth2Agent.requests.length
    const sent = await relay(["message", "send", "--url", oauth2Agent.baseUrl, "once please"])
    expect(sent.code, sent.stderr).toBe(0)
    const renewed = storedFor(oauth2Agent.baseUrl).access_token
    const calls = oauth2Agent.requests.slice(seen).filter((request) => request.path !== "/.well-known/agent-card.json")
    // The refused request is the send itself (nothing precedes it in a new conversation); it is sent
    // again with the renewed token, and the agent took the message exactly once.
    expect(calls[0]).toMatchObject({ status: 401 })
    const taken = calls.filter((request) => (request.body as { method?: string } | undefined)?.method === "SendMessage")
    expect(taken.map((request) => [request.status, bearerOf(request.headers)])).toEqual([[200, renewed]])
  })

  it("an expired token without a way to renew asks for a login, with the exact command (needs_auth)", async () => {
    expect((await login(oidcAgent.baseUrl)).code).toBe(0)
    // As an earlier relay saved client credentials: without the secret.
    editStored(
      oidcAgent.baseUrl,
      ({ client_secret: _secret, ...credentials }) => ({ ...credentials, expires_at: new Date(Date.now() - 1000).toISOString() })
    )
    const result = await relay(["task", "list", "--url", oidcAgent.baseUrl, "--json"])
    // Authentication needed, whichever command met it.
    expect(result.code).toBe(3)
    const error = (JSON.parse(result.stderr) as { error: { code: string; hint: string } }).error
    expect(error.code).toBe("needs_auth")
    expect(error.hint).toContain(`relay auth login --url ${oidcAgent.baseUrl} --client-id ${CLIENT_ID} --client-secret -`)
  })
})

describe("errors a person can act on (exit code 3)", () => {
  it("a wrong client secret is invalid_client", async () => {
    const result = await login(oidcAgent.baseUrl, ["--json"], "not-the-secret-0123456789")
    expect(result.code).toBe(3)
    const error = (JSON.parse(result.stderr) as { error: { code: string; hint: string } }).error
    expect(error.code).toBe("oauth_invalid_client")
    expect(error.hint).toMatch(/client id or secret was refused/)
  })

  it("a card without OAuth schemes names the fix", async () => {
    const result = await login(plainAgent.baseUrl)
    expect(result.code).toBe(3)
    expect(result.stderr).toContain("declares no OAuth2 or OpenID Connect scheme")
    expect(result.stderr).toContain("--issuer")
  })

  it("discovery that fails says where", async () => {
    const result = await login(plainAgent.baseUrl, ["--issuer", "http://127.0.0.1:9/nowhere", "--json"])
    expect(result.code).toBe(3)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "oauth_discovery_failed" } })
  })

  it("--issuer logs in without the card's help", async () => {
    const result = await login(plainAgent.baseUrl, ["--issuer", provider.issuer, "--scope", AGENT_SCOPE])
    expect(result.code, result.stderr).toBe(0)
  })

  it("secrets go over https only, or plain http to this machine", async () => {
    const result = await login(plainAgent.baseUrl, ["--issuer", "http://auth.example.com", "--json"])
    expect(result.code).toBe(3)
    expect(JSON.parse(result.stderr)).toMatchObject({
      error: { code: "oauth_discovery_failed", message: expect.stringContaining("loopback") }
    })
  })
})

describe("logout", () => {
  it("asks the server to revoke, then forgets the tokens and the client secret", async () => {
    expect((await login(oidcAgent.baseUrl)).code).toBe(0)
    expect(storedFor(oidcAgent.baseUrl).client_secret).toBe(SECRET)
    const revocations = provider.requests.filter((request) => request.path === "/token/revocation").length
    const result = await relay(["auth", "logout", "--url", oidcAgent.baseUrl])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`Logged out of ${oidcAgent.baseUrl}`)
    expect(provider.requests.filter((request) => request.path === "/token/revocation").length).toBeGreaterThan(revocations)
    expect(readStore().sessions[oidcAgent.baseUrl]?.credentials, "the client secret went with the tokens").toBeUndefined()
  })
})

describe("tokens stay secret", () => {
  it("no token or secret ever appears in what relay printed", () => {
    expect(issued.size).toBeGreaterThan(3)
    const all = printed.join("\n")
    for (const token of issued) expect(all).not.toContain(token)
    expect(all).not.toContain(SECRET)
  })

  it("access tokens reach only the agent; the provider never receives one as a bearer token", () => {
    for (const request of provider.requests) expect(bearerOf(request.headers)).toBeUndefined()
    for (const agent of [oidcAgent, oauth2Agent, plainAgent]) {
      for (const request of agent.requests) {
        const token = bearerOf(request.headers)
        if (token !== undefined) expect(issued.has(token) || token.includes("forged")).toBe(true)
      }
    }
    // The plain agent was never told any token: its URL had no credentials.
    expect(plainAgent.requests.every((request) => bearerOf(request.headers) === undefined)).toBe(true)
  })
})
