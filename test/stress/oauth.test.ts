// OAuth under hostile and crowded conditions (issue 27, items 5 and 8): an authorization server
// answering a token request with 800 MB, and 8 processes renewing one expired token at once
// against a provider that rotates refresh tokens and revokes the whole grant when a used one
// comes back (oidc-provider). Uses the built dist.
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_OAUTH_RESPONSE_BYTES } from "../../src/domain/limits.js"
import { browse } from "../helpers/browser.js"
import { relayBin, runRelay, startRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { measure } from "../helpers/peakMemory.js"
import { tempHome } from "../helpers/stateHome.js"
import { type Progress, streamHugeJson } from "../peers/hugeAnswers.js"
import { AGENT_SCOPE, type ProviderHandle, startProvider } from "../peers/oidcProvider.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { reply, startStub, type Stub, type StubRoute, v1Card } from "../services/a2aClientHarness.js"

const MB = 1000 * 1000
const HUGE = 800 * MB
const RSS_CEILING_KB = 200 * 1024
const TOKEN_HEAD = "{\"token_type\":\"Bearer\",\"expires_in\":600,\"access_token\":\""
const TOKEN_TAIL = "\"}"
const home = tempHome()
afterAll(() => home.cleanup())

describe("an 800 MB token response", () => {
  const streamed: Progress = { written: 0, cutShort: false }
  const announced: Progress = { written: 0, cutShort: false }
  let server: Stub
  const tokenOf = (progress: Progress, declareLength: boolean): StubRoute => (_request, res) => {
    streamHugeJson(res, { head: TOKEN_HEAD, tail: TOKEN_TAIL, size: HUGE, declareLength }, progress)
    return undefined
  }

  beforeAll(async () => {
    server = await startStub((base) => ({
      "GET /.well-known/agent-card.json": reply({
        ...v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }]),
        securitySchemes: {
          streamed: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/streamed`, scopes: {} } } } },
          announced: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/announced`, scopes: {} } } } }
        }
      }),
      "POST /streamed": tokenOf(streamed, false),
      "POST /announced": tokenOf(announced, true)
    }))
  })
  afterAll(() => server?.close())

  const login = (scheme: string) => {
    const child = spawn(process.execPath, [
      relayBin,
      "auth",
      "login",
      "--url",
      server.baseUrl,
      "--client-id",
      "relay",
      "--client-secret",
      "-",
      "--scheme",
      scheme,
      "--json"
    ], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" },
      stdio: "pipe"
    })
    child.stdin.end("a-client-secret\n")
    return measure(child, 60_000)
  }

  it("streamed or announced, relay stops at 1 MiB: oauth_response_too_large, a small RSS, the server cut off", async () => {
    const started = Date.now()
    const [fromStream, fromLength] = [await login("streamed"), await login("announced")]
    const seconds = (Date.now() - started) / 1000
    for (const result of [fromStream, fromLength]) {
      expect(result.code, result.stderr).toBe(3)
      expect((JSON.parse(result.stderr) as { error: { code: string } }).error.code).toBe("oauth_response_too_large")
      expect(result.peakKb).toBeLessThan(RSS_CEILING_KB)
    }
    expect(fromStream.stderr).toContain(`${MAX_OAUTH_RESPONSE_BYTES}-byte limit`)
    expect(fromLength.stderr).toContain(`(${TOKEN_HEAD.length + HUGE + TOKEN_TAIL.length} bytes)`)
    await new Promise((resolve) => setTimeout(resolve, 200))
    for (const progress of [streamed, announced]) {
      expect(progress.cutShort).toBe(true)
      expect(progress.written).toBeLessThan(HUGE / 10)
    }
    reportFigures("oauth, 800 MB token response", {
      "peak RSS streamed MB": Math.round(fromStream.peakKb / 1024),
      "peak RSS announced MB": Math.round(fromLength.peakKb / 1024),
      "MB sent before the cut (streamed)": (streamed.written / MB).toFixed(1),
      "MB sent before the cut (announced)": (announced.written / MB).toFixed(1),
      seconds: seconds.toFixed(1)
    })
  }, 150_000)
})

describe("8 processes renewing one expired token", () => {
  const DEVICE_CLIENT = "relay-device"
  const AUDIENCE = "urn:relay-test:stress-agent"
  const PROCESSES = 8
  const ROUNDS = 3
  let provider: ProviderHandle
  let agent: SdkAgentHandle
  const storeFile = () => Path.join(home.stateDir, "sessions.json")
  const expireSavedToken = () => {
    const file = JSON.parse(Fs.readFileSync(storeFile(), "utf8")) as { sessions: Record<string, { credentials: Record<string, unknown> }> }
    file.sessions[agent.baseUrl]!.credentials["expires_at"] = new Date(Date.now() - 1000).toISOString()
    Fs.writeFileSync(storeFile(), JSON.stringify(file))
  }
  const tokenRequests = () => provider.requests.filter((request) => request.path === "/token").length

  beforeAll(async () => {
    provider = await startProvider({
      audience: AUDIENCE,
      // A public client: oidc-provider rotates its refresh token at each use and revokes the grant on reuse.
      clients: [{ client_id: DEVICE_CLIENT, grant_types: ["urn:ietf:params:oauth:grant-type:device_code", "refresh_token"] }]
    })
    agent = await startSdkAgent({
      verifyBearer: provider.verifyBearer,
      security: {
        securitySchemes: { people: { openIdConnectSecurityScheme: { openIdConnectUrl: provider.issuer } } },
        securityRequirements: [{ schemes: { people: { list: [AGENT_SCOPE] } } }]
      }
    })
    const running = startRelay(["auth", "login", "--url", agent.baseUrl, "--client-id", DEVICE_CLIENT, "--flow", "device_code"], {
      stateDir: home.stateDir
    })
    const [, url] = await running.stderrMatch(/open (http\S+)\s+and enter the code/)
    await browse(url!, { providerOrigin: provider.issuer })
    const result = await running.done
    if (result.code !== 0) throw new Error(`device login failed: ${result.stderr}`)
  }, 60_000)
  afterAll(() => Promise.allSettled([provider?.close(), agent?.close()]))

  it(`${PROCESSES} at once, ${ROUNDS} rounds: all succeed, one refresh per round, the grant never revoked`, async () => {
    let succeeded = 0
    let refreshes = 0
    const started = Date.now()
    for (let round = 0; round < ROUNDS; round++) {
      expireSavedToken()
      const seen = tokenRequests()
      const results = await Promise.all(
        Array.from(
          { length: PROCESSES },
          () => runRelay(["task", "list", "--url", agent.baseUrl], { stateDir: home.stateDir, timeoutMs: 60_000 })
        )
      )
      const failed = results.filter((result) => result.code !== 0)
      expect(failed.map((result) => result.stderr)).toEqual([])
      succeeded += results.length - failed.length
      const roundRefreshes = tokenRequests() - seen
      expect(roundRefreshes).toBe(1)
      refreshes += roundRefreshes
    }
    reportFigures("oauth, 8 processes renewing one token", {
      processes: PROCESSES,
      rounds: ROUNDS,
      succeeded,
      refreshes,
      seconds: ((Date.now() - started) / 1000).toFixed(1)
    })
  }, 240_000)
})
