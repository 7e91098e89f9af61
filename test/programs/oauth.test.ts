/**
 * Renewing saved OAuth tokens (programs/oauth.ts) with a counting authorization server: renewals
 * that meet are one renewal (the store's lock; across processes see test/cli/oauthPeople.test.ts
 * and test/stress/oauth.test.ts), whoever waited uses what was saved, client credentials
 * renew with their saved secret, and a logout during a renewal revokes what the renewal saved.
 */
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Exit, Option } from "effect"
import { LoginRequired } from "../../src/domain/oauth.js"
import type { OAuthCredentials } from "../../src/domain/session.js"
import { bearerFor, login, logout } from "../../src/programs/oauth.js"
import { OAuth, type OAuthService } from "../../src/services/OAuth.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { closedPortUrl, ProgramLayer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const AGENT = agentUrlOf("http://agent.test")

/** A server that rotates refresh tokens and counts each grant; a renewal takes a while, so callers meet. */
const countingServer = () => {
  const grants = { refresh: 0, clientCredentials: 0 }
  const revoked: Array<string> = []
  let issued = 0
  const tokens = () => {
    issued++
    return { access_token: `access-${issued}`, refresh_token: `refresh-${issued}`, expiresAt: Date.now() + 600_000 }
  }
  const notUsed = () => Effect.die("not used here")
  const service: OAuthService = {
    discover: notUsed,
    authorizationCode: notUsed,
    deviceCode: notUsed,
    revoke: (_server, _id, token) => Effect.sync(() => (revoked.push(token), true)),
    refresh: () => Effect.sync(() => (grants.refresh++, tokens())).pipe(Effect.delay("50 millis")),
    clientCredentials: () => Effect.sync(() => (grants.clientCredentials++, tokens())).pipe(Effect.delay("50 millis"))
  }
  return { grants, revoked, service }
}

const saved = (overrides: Partial<OAuthCredentials> = {}): OAuthCredentials => ({
  kind: "oauth",
  flow: "device_code",
  access_token: "access-0",
  refresh_token: "refresh-0",
  expires_at: new Date(Date.now() - 1000).toISOString(),
  scopes: [],
  issuer: "https://issuer.test",
  token_endpoint: "https://issuer.test/token",
  client_id: "relay",
  ...overrides
})

const withStore =
  (credentials: OAuthCredentials, service: OAuthService) => <A, E>(effect: Effect.Effect<A, E, SessionStore.SessionStore>) =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      yield* store.setCredentials(AGENT, credentials)
      return yield* effect
    }).pipe(Effect.provideService(OAuth, service), Effect.provide(SessionStore.layerMemory))

const storedCredentials = Effect.flatMap(SessionStore.SessionStore, (store) => store.getCredentials(AGENT)).pipe(
  Effect.map(Option.getOrThrow)
)

describe("renewing saved tokens", () => {
  it.live("eight callers meeting an expired token: one refresh, all get the new token, the rotated refresh token is saved", () => {
    const server = countingServer()
    const expired = saved()
    return Effect.gen(function*() {
      const sent = yield* Effect.all(Array.from({ length: 8 }, () => bearerFor(AGENT, expired)), { concurrency: "unbounded" })
      expect(server.grants.refresh).toBe(1)
      expect(new Set(sent.map((credentials) => credentials.kind === "bearer" && credentials.token))).toEqual(new Set(["access-1"]))
      expect(yield* storedCredentials).toMatchObject({ access_token: "access-1", refresh_token: "refresh-1" })
    }).pipe(withStore(expired, server.service))
  })

  it.live("a token the agent refused, renewed by several callers at once: one refresh", () => {
    const server = countingServer()
    const fresh = saved({ expires_at: new Date(Date.now() + 600_000).toISOString() })
    return Effect.gen(function*() {
      yield* Effect.all(Array.from({ length: 4 }, () => bearerFor(AGENT, fresh, true)), { concurrency: "unbounded" })
      expect(server.grants.refresh).toBe(1)
    }).pipe(withStore(fresh, server.service))
  })

  it.live("tokens another process renewed meanwhile are used as they are", () => {
    const server = countingServer()
    const renewedElsewhere = saved({
      access_token: "access-elsewhere",
      refresh_token: "refresh-elsewhere",
      expires_at: new Date(Date.now() + 600_000).toISOString()
    })
    return Effect.gen(function*() {
      // This caller read the old, expired tokens before the other process saved its own.
      expect(yield* bearerFor(AGENT, saved())).toEqual({ kind: "bearer", token: "access-elsewhere" })
      // Refused tokens that are no longer the saved ones: the saved ones are tried, not renewed.
      expect(yield* bearerFor(AGENT, saved({ access_token: "refused" }), true)).toEqual({ kind: "bearer", token: "access-elsewhere" })
      expect(server.grants).toEqual({ refresh: 0, clientCredentials: 0 })
    }).pipe(withStore(renewedElsewhere, server.service))
  })

  it.live("client credentials renew with the saved secret, which stays saved", () => {
    const server = countingServer()
    const machine = saved({ flow: "client_credentials", refresh_token: undefined, client_secret: "the-secret" })
    return Effect.gen(function*() {
      expect(yield* bearerFor(AGENT, machine)).toEqual({ kind: "bearer", token: "access-1" })
      expect(server.grants).toEqual({ refresh: 0, clientCredentials: 1 })
      expect(yield* storedCredentials).toMatchObject({ access_token: "access-1", client_secret: "the-secret" })
    }).pipe(withStore(machine, server.service))
  })

  it.live("tokens removed meanwhile (logout) need a login", () => {
    const server = countingServer()
    return Effect.gen(function*() {
      yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.clearCredentials(AGENT))
      const error = yield* Effect.flip(bearerFor(AGENT, saved()))
      expect(error).toBeInstanceOf(LoginRequired)
      expect(server.grants.refresh).toBe(0)
    }).pipe(withStore(saved(), server.service))
  })
})

describe("logging out", () => {
  it.live("during a renewal: the tokens the renewal saved are the ones revoked and forgotten", () => {
    const server = countingServer()
    const expired = saved()
    return Effect.gen(function*() {
      const renewal = yield* Effect.fork(bearerFor(AGENT, expired))
      yield* Effect.sleep("10 millis") // the renewal holds the store while it asks the server
      const result = yield* logout(AGENT)
      expect(yield* renewal.await).toEqual(Exit.succeed({ kind: "bearer", token: "access-1" }))
      expect(result).toEqual({ agent_url: AGENT, removed: true, revoked: true })
      expect(server.revoked).toEqual(["refresh-1", "access-1"])
      expect(yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.getCredentials(AGENT))).toEqual(Option.none())
    }).pipe(withStore(expired, server.service))
  })
})

describe("a client secret reused for a login (the MCP door's)", () => {
  /** An authorization server at `tokenEndpoint` that takes any client and records the secret it was sent. */
  const recordingServer = (tokenEndpoint: string) => {
    const secrets: Array<string | undefined> = []
    const notUsed = () => Effect.die("not used here")
    const service: OAuthService = {
      discover: () => Effect.succeed({ issuer: new URL(tokenEndpoint).origin, token_endpoint: tokenEndpoint }),
      authorizationCode: notUsed,
      deviceCode: notUsed,
      revoke: notUsed,
      refresh: notUsed,
      clientCredentials: (_server, id) =>
        Effect.sync(() => (secrets.push(id.clientSecret), { access_token: "access-new", expiresAt: Date.now() + 600_000 }))
    }
    return { secrets, service }
  }

  const loginWith = (service: OAuthService, clientSecretFor: string) =>
    Effect.gen(function*() {
      const agentUrl = agentUrlOf(yield* Effect.promise(closedPortUrl))
      return yield* login({
        agentUrl,
        flow: "client_credentials",
        clientId: "relay",
        clientSecret: "saved-secret-0123456789",
        clientSecretFor,
        // The card cannot be read (nothing listens): the issuer given stands in for it.
        issuer: "https://issuer.test",
        interaction: { prompt: () => Effect.void, openBrowser: false, timeout: Duration.seconds(5) }
      })
    }).pipe(Effect.provideService(OAuth, service), Effect.provide(ProgramLayer))

  it.live("goes to the token endpoint it was saved with", () => {
    const server = recordingServer("https://issuer.test/token")
    return Effect.map(loginWith(server.service, "https://issuer.test/token"), () => {
      expect(server.secrets).toEqual(["saved-secret-0123456789"])
    })
  })

  it.live("goes to no other: a card that now names another token endpoint gets the login without it", () => {
    const server = recordingServer("https://elsewhere.test/token")
    return Effect.map(loginWith(server.service, "https://issuer.test/token"), () => {
      expect(server.secrets).toEqual([undefined])
    })
  })
})
