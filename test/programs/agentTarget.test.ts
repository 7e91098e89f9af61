/**
 * programs/agentTarget.ts: a call the agent refused with 401 for saved OAuth tokens is repeated
 * once with renewed tokens; the refusal is matched by its class (AuthRequired), not by its shape.
 */
import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit } from "effect"
import { AuthRequired, type CredentialsSent } from "../../src/domain/clientErrors.js"
import type { OAuthCredentials } from "../../src/domain/session.js"
import { retryWithRenewedToken } from "../../src/programs/agentTarget.js"
import type { Target } from "../../src/services/A2aClient.js"
import { OAuth, type OAuthService } from "../../src/services/OAuth.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const AGENT = agentUrlOf("http://agent.test")

const savedTokens: OAuthCredentials = {
  kind: "oauth",
  flow: "device_code",
  access_token: "access-0",
  refresh_token: "refresh-0",
  expires_at: new Date(Date.now() + 600_000).toISOString(),
  scopes: [],
  issuer: "https://issuer.test",
  token_endpoint: "https://issuer.test/token",
  client_id: "relay"
}

const target: Target = { agentUrl: AGENT, credentials: { kind: "bearer", token: "access-0" } }

/** An authorization server that counts refresh grants. */
const countingServer = () => {
  let refreshes = 0
  const notUsed = () => Effect.die("not used here")
  const service: OAuthService = {
    discover: notUsed,
    authorizationCode: notUsed,
    deviceCode: notUsed,
    revoke: notUsed,
    clientCredentials: notUsed,
    refresh: () =>
      Effect.sync(() => ({ access_token: `access-${++refreshes}`, refresh_token: `refresh-${refreshes}`, expiresAt: Date.now() + 600_000 }))
  }
  return { refreshes: () => refreshes, service }
}

const withSavedTokens = (service: OAuthService) => <A, E>(effect: Effect.Effect<A, E, SessionStore.SessionStore>) =>
  Effect.gen(function*() {
    yield* Effect.flatMap(SessionStore.SessionStore, (store) => store.setCredentials(AGENT, savedTokens))
    return yield* effect
  }).pipe(Effect.provideService(OAuth, service), Effect.provide(SessionStore.layerMemory))

const refusal = (status: number, credentials: typeof CredentialsSent.Type) =>
  new AuthRequired({ url: "http://agent.test/a2a", agentUrl: AGENT, status, credentials })

/** A call refused the first time with `error`, answered with the bearer token it was given after. */
const refusedOnce = (error: unknown) => {
  let calls = 0
  return (called: Target) =>
    ++calls === 1 ? Effect.fail(error) : Effect.succeed(called.credentials?.kind === "bearer" ? called.credentials.token : "none")
}

describe("retryWithRenewedToken", () => {
  it.effect("a 401 for the saved tokens renews them once and repeats the call with the new ones", () => {
    const server = countingServer()
    return Effect.gen(function*() {
      const { result, target: renewed } = yield* retryWithRenewedToken(target, refusedOnce(refusal(401, "saved")))
      expect(result).toBe("access-1")
      expect(renewed.credentials).toEqual({ kind: "bearer", token: "access-1" })
      expect(server.refreshes()).toBe(1)
    }).pipe(withSavedTokens(server.service))
  })

  it.effect("a 401 for tokens another caller renewed meanwhile repeats the call with the saved ones, renewing nothing", () => {
    const server = countingServer()
    return Effect.gen(function*() {
      // The call left with access-0; another caller's renewal saved access-elsewhere before the 401 came back.
      const renewedElsewhere = { ...savedTokens, access_token: "access-elsewhere", refresh_token: "refresh-elsewhere" }
      const answer = refusedOnce(refusal(401, "saved"))
      const call = (called: Target) =>
        Effect.flatMap(SessionStore.SessionStore, (store) => store.setCredentials(AGENT, renewedElsewhere)).pipe(
          Effect.zipRight(answer(called))
        )
      const { result } = yield* retryWithRenewedToken(target, call)
      expect(result).toBe("access-elsewhere")
      expect(server.refreshes()).toBe(0)
    }).pipe(withSavedTokens(server.service))
  })

  it.effect.each(
    [
      ["a 403 (not allowed, whatever the token)", refusal(403, "saved")],
      ["a 401 for credentials given with the call", refusal(401, "given")],
      // The same tag and fields, but not the error relay's client raises (e.g. one that crossed a JSON boundary).
      ["an object shaped like a 401 refusal of saved tokens", { _tag: "AuthRequired", status: 401, credentials: "saved" }]
    ] as const
  )("%s is passed on, nothing renewed", ([_name, error]) => {
    const server = countingServer()
    return Effect.gen(function*() {
      const exit = yield* Effect.exit(retryWithRenewedToken(target, refusedOnce(error)))
      expect(exit).toEqual(Exit.fail(error))
      expect(server.refreshes()).toBe(0)
    }).pipe(withSavedTokens(server.service))
  })
})
