/**
 * Logins with a person in the loop, end to end: authorization code + PKCE through relay's
 * loopback listener, and the device authorization grant, against a real OpenID provider
 * (oidc-provider) whose interaction pages a scripted browser clicks through. The agent accepts
 * only JWTs the provider signed for it. Then refresh, refresh failure and revocation.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { browse } from "../helpers/browser.js"
import { runRelay, startRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { AGENT_SCOPE, type ProviderHandle, startProvider } from "../peers/oidcProvider.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

const AUDIENCE = "urn:relay-test:people-agent"
const WEB_CLIENT = "relay-people"
const DEVICE_CLIENT = "relay-device"
const DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"

const home = tempHome()
let provider: ProviderHandle
let agent: SdkAgentHandle
const printed: string[] = []

interface Stored {
  readonly access_token: string
  readonly refresh_token?: string
  readonly expires_at?: string
  readonly flow: string
}
const storeFile = () => Path.join(home.stateDir, "sessions.json")
const readStore = () => JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { sessions: Record<string, { credentials?: Stored }> }
const stored = () => readStore().sessions[agent.baseUrl]?.credentials
const editStored = (change: (credentials: Stored) => Stored) => {
  const file = readStore()
  file.sessions[agent.baseUrl] = { ...file.sessions[agent.baseUrl], credentials: change(stored()!) }
  Fs.writeFileSync(storeFile(), JSON.stringify(file))
}
const relay = async (args: ReadonlyArray<string>) => {
  const result = await runRelay(args, { stateDir: home.stateDir })
  printed.push(result.stdout, result.stderr)
  return result
}
const tokens = new Set<string>()
const remember = () => {
  const credentials = stored()
  if (credentials !== undefined) {
    tokens.add(credentials.access_token)
    if (credentials.refresh_token !== undefined) tokens.add(credentials.refresh_token)
  }
  return credentials
}

/** `relay auth login` with a browser step: the URL relay prints is clicked through. */
const browserLogin = async (options: { readonly deny?: boolean; readonly extra?: ReadonlyArray<string> } = {}) => {
  const running = startRelay(
    [
      "auth",
      "login",
      "--url",
      agent.baseUrl,
      "--client-id",
      WEB_CLIENT,
      "--flow",
      "authorization_code",
      "--no-browser",
      ...(options.extra ?? [])
    ],
    { stateDir: home.stateDir }
  )
  const [, url] = await running.stderrMatch(/^\s+(http\S+)$/m)
  const parsed = new URL(url!)
  const redirect = new URL(parsed.searchParams.get("redirect_uri")!)
  const landed = await browse(url!, { providerOrigin: provider.issuer, deny: options.deny ?? false })
  const result = await running.done
  printed.push(result.stdout, result.stderr)
  return { result, authorizationUrl: parsed, redirect, landed }
}

beforeAll(async () => {
  provider = await startProvider({
    audience: AUDIENCE,
    clients: [
      {
        client_id: WEB_CLIENT,
        application_type: "native",
        grant_types: ["authorization_code", "refresh_token"],
        response_types: ["code"],
        // RFC 8252 §7.3: any port on the loopback address is accepted for native clients.
        redirect_uris: ["http://127.0.0.1/callback"]
      },
      { client_id: DEVICE_CLIENT, grant_types: [DEVICE_GRANT, "refresh_token"] }
    ]
  })
  agent = await startSdkAgent({
    verifyBearer: provider.verifyBearer,
    security: {
      // v0.3-style scheme in a v1.0 card: relay reads either.
      securitySchemes: { people: { scheme: { $case: "openIdConnectSecurityScheme", value: { openIdConnectUrl: provider.issuer } } } },
      securityRequirements: [{ schemes: { people: { list: ["openid", AGENT_SCOPE] } } }]
    }
  })
}, 30_000)

afterAll(async () => {
  await Promise.allSettled([provider?.close(), agent?.close()])
  home.cleanup()
})

describe("authorization code + PKCE", () => {
  it("prints the URL, listens on 127.0.0.1, checks state and saves tokens the agent accepts", async () => {
    const { result, authorizationUrl, redirect, landed } = await browserLogin()
    expect(result.code, result.stderr).toBe(0)
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256")
    expect(authorizationUrl.searchParams.get("code_challenge")).toMatch(/^[\w-]{43}$/)
    expect(authorizationUrl.searchParams.get("state")).toMatch(/^[\w-]{20,}$/)
    expect(authorizationUrl.searchParams.get("scope")).toBe(`openid ${AGENT_SCOPE}`)
    expect(redirect.hostname).toBe("127.0.0.1")
    expect(Number(redirect.port)).toBeGreaterThan(0)
    expect(landed).toMatchObject({ status: 200 })
    expect(result.stdout).toContain(`Logged in to ${agent.baseUrl} (authorization_code)`)
    const credentials = remember()!
    expect(credentials.flow).toBe("authorization_code")
    expect(credentials.refresh_token).toBeDefined()

    const sent = await relay(["message", "send", "--url", agent.baseUrl, "hello"])
    expect(sent.code, sent.stderr).toBe(0)
    // The listener is gone once the login ends.
    await expect(fetch(redirect, { signal: AbortSignal.timeout(2000) })).rejects.toThrow()
  })

  it("a request to the listener without the right state is turned away and the login goes on", async () => {
    const running = startRelay(
      ["auth", "login", "--url", agent.baseUrl, "--client-id", WEB_CLIENT, "--flow", "authorization_code", "--no-browser"],
      { stateDir: home.stateDir }
    )
    const [, url] = await running.stderrMatch(/^\s+(http\S+)$/m)
    const redirect = new URL(new URL(url!).searchParams.get("redirect_uri")!)
    const forged = await fetch(`${redirect.href}?code=stolen&state=forged`)
    expect(forged.status).toBe(400)
    await browse(url!, { providerOrigin: provider.issuer })
    const result = await running.done
    printed.push(result.stdout, result.stderr)
    expect(result.code, result.stderr).toBe(0)
    remember()
  })

  it("denied consent is access_denied, exit code 3", async () => {
    const { result } = await browserLogin({ deny: true, extra: ["--json"] })
    expect(result.code).toBe(3)
    expect(JSON.parse(result.stderr.slice(result.stderr.indexOf("{")))).toMatchObject({ error: { code: "oauth_access_denied" } })
  })

  it("no browser coming back ends at the login timeout, exit code 3", async () => {
    const running = startRelay(
      [
        "auth",
        "login",
        "--url",
        agent.baseUrl,
        "--client-id",
        WEB_CLIENT,
        "--flow",
        "authorization_code",
        "--no-browser",
        "--login-timeout",
        "1"
      ],
      { stateDir: home.stateDir }
    )
    const result = await running.done
    expect(result.code).toBe(3)
    expect(result.stderr).toContain("Gave up waiting for the browser to come back after 1 s")
  })
})

describe("refresh", () => {
  it("an expired access token is refreshed with the refresh token", async () => {
    const before = remember()!
    editStored((credentials) => ({ ...credentials, expires_at: new Date(Date.now() - 1000).toISOString() }))
    const listed = await relay(["task", "list", "--url", agent.baseUrl])
    expect(listed.code, listed.stderr).toBe(0)
    const after = remember()!
    expect(after.access_token).not.toBe(before.access_token)
    expect(Date.parse(after.expires_at!)).toBeGreaterThan(Date.now())
  })

  it("a refused refresh asks for a new login with the exact command", async () => {
    editStored((credentials) => ({
      ...credentials,
      refresh_token: "revoked-or-unknown-refresh-token",
      expires_at: new Date(Date.now() - 1000).toISOString()
    }))
    const listed = await relay(["task", "list", "--url", agent.baseUrl, "--json"])
    expect(listed.code).toBe(3)
    const error = (JSON.parse(listed.stderr) as { error: { code: string; message: string; hint: string } }).error
    expect(error.code).toBe("needs_auth")
    expect(error.message).toContain("invalid_grant")
    expect(error.hint).toContain(`relay auth login --url ${agent.baseUrl} --client-id ${WEB_CLIENT} --flow authorization_code`)
  })
})

describe("device authorization grant", () => {
  it("shows the verification URL and code, polls until approved, saves tokens the agent accepts", async () => {
    const running = startRelay(["auth", "login", "--url", agent.baseUrl, "--client-id", DEVICE_CLIENT, "--flow", "device_code"], {
      stateDir: home.stateDir
    })
    const [, url, code] = await running.stderrMatch(/open (http\S+)\s+and enter the code (\S+)/)
    expect(code).toMatch(/^[A-Z-]+$/)
    await browse(url!, { providerOrigin: provider.issuer })
    const result = await running.done
    printed.push(result.stdout, result.stderr)
    expect(result.code, result.stderr).toBe(0)
    expect(remember()!.flow).toBe("device_code")
    const sent = await relay(["message", "send", "--url", agent.baseUrl, "from the device"])
    expect(sent.code, sent.stderr).toBe(0)
  })

  it("processes renewing the same expired token at once: one refresh, every one succeeds (the provider rotates and revokes on reuse)", async () => {
    // A public client's refresh token rotates at each use, and oidc-provider revokes the whole
    // grant when a used one comes back: two refreshes would end the login for everyone.
    const before = remember()!
    editStored((credentials) => ({ ...credentials, expires_at: new Date(Date.now() - 1000).toISOString() }))
    const tokenRequests = () => provider.requests.filter((request) => request.path === "/token").length
    const seen = tokenRequests()
    const results = await Promise.all(Array.from({ length: 3 }, () => relay(["task", "list", "--url", agent.baseUrl])))
    expect(results.map((result) => [result.code, result.code === 0 ? "" : result.stderr])).toEqual(results.map(() => [0, ""]))
    expect(tokenRequests() - seen).toBe(1)
    const after = remember()!
    expect(after.refresh_token).not.toBe(before.refresh_token)
    // The family is intact: the rotated refresh token still works.
    editStored((credentials) => ({ ...credentials, expires_at: new Date(Date.now() - 1000).toISOString() }))
    expect((await relay(["task", "list", "--url", agent.baseUrl])).code).toBe(0)
    remember()
  })
})

describe("logout", () => {
  it("revokes the refresh token at the provider, which then refuses it", async () => {
    const credentials = remember()!
    const result = await relay(["auth", "logout", "--url", agent.baseUrl])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain("tokens revoked at the server")
    expect(provider.requests.filter((request) => request.path === "/token/revocation").length).toBeGreaterThanOrEqual(1)
    const refresh = await fetch(`${provider.issuer}/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "refresh_token", refresh_token: credentials.refresh_token!, client_id: DEVICE_CLIENT })
    })
    expect(refresh.status).toBe(400)
    expect(((await refresh.json()) as { error: string }).error).toBe("invalid_grant")
  })

  it("no token appeared in anything relay printed", () => {
    expect(tokens.size).toBeGreaterThan(3)
    const all = printed.join("\n")
    for (const token of tokens) expect(all).not.toContain(token)
  })
})
