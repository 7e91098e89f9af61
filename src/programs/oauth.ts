/**
 * OAuth use cases: log in to an agent as its card declares, keep the tokens fresh, log out.
 * Tokens live in the session store next to the other credentials (with the client secret, when
 * one was given: renewing needs it); only the access token is ever sent to the agent, and only
 * as a bearer token.
 */
import { Clock, Effect, Option } from "effect"
import type { AgentUrl } from "../domain/agentUrl.js"
import { chooseScheme, type LoginCommand, LoginRequired, oauthSchemesOf, OAuthSchemeUnknown, scopesFor } from "../domain/oauth.js"
import { type Credentials, isRenewable, type OAuthCredentials, type OAuthFlow, type SavedCredentials } from "../domain/session.js"
import { A2aClient } from "../services/A2aClient.js"
import { type AuthServer, type Interaction, OAuth, type OAuthClientId, type Tokens } from "../services/OAuth.js"
import { SessionStore } from "../services/SessionStore.js"
import { saveCardUrl, savedCardUrlOf } from "./sessions.js"

export interface LoginInput {
  readonly agentUrl: AgentUrl
  readonly cardUrl?: string | undefined
  readonly flow: OAuthFlow
  readonly clientId: string
  readonly clientSecret?: string | undefined
  /**
   * The token endpoint a saved secret was used with, when the secret is reused (a login the MCP
   * door starts): it is sent to no other, since the card that names the endpoint may have changed.
   */
  readonly clientSecretFor?: string | undefined
  /** Overrides the scopes the card's requirements name. */
  readonly scopes?: ReadonlyArray<string> | undefined
  /** A scheme of the card by name, instead of the first that fits. */
  readonly scheme?: string | undefined
  /** The authorization server's issuer (or metadata URL), instead of what the card declares. */
  readonly issuer?: string | undefined
  /** How the person takes part (authorization code and device flows). */
  readonly interaction: Interaction
}

export interface LoginResult {
  readonly agent_url: string
  readonly auth_type: "oauth"
  readonly flow: OAuthFlow
  readonly scheme: string | null
  readonly issuer: string
  readonly scopes: ReadonlyArray<string>
  readonly expires_at: string | null
  readonly refreshable: boolean
}

// Renew this long before the access token expires, so a request never leaves with a dying token.
const RENEW_MARGIN_MS = 60_000

const loginOf = (agentUrl: string, flow: OAuthFlow, clientId: string): LoginCommand => ({ agentUrl, flow, clientId })

/** The card's OAuth schemes; with --issuer the card is optional (an agent may not publish one). */
const schemeFor = (input: LoginInput, agentUrl: AgentUrl) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const card = yield* client.fetchCardJson({ agentUrl, cardUrl: input.cardUrl ?? (yield* savedCardUrlOf(agentUrl)) }).pipe(
      Effect.tap((found) => (input.cardUrl === undefined ? Effect.void : saveCardUrl(agentUrl, found.cardUrl))),
      Effect.map((found) => found.json),
      input.issuer === undefined ? (effect) => effect : Effect.orElseSucceed(() => undefined)
    )
    const schemes = oauthSchemesOf(card)
    const scheme = chooseScheme(schemes, input.flow, input.scheme)
    if (scheme === undefined && (input.issuer === undefined || input.scheme !== undefined)) {
      return yield* new OAuthSchemeUnknown({
        agentUrl,
        flow: input.flow,
        declared: schemes.map((known) => known.name),
        wanted: input.scheme
      })
    }
    return scheme
  })

/**
 * What the store keeps. The client secret stays with the tokens (the store is 0600 and never
 * printed): client credentials renew with it, and a confidential client must authenticate to refresh.
 */
const savedFrom = (
  flow: OAuthFlow,
  server: AuthServer,
  id: OAuthClientId,
  tokens: Tokens,
  asked: ReadonlyArray<string>,
  previous?: OAuthCredentials | undefined
): OAuthCredentials => ({
  kind: "oauth",
  flow,
  access_token: tokens.access_token,
  // RFC 6749 §6: a refresh may or may not issue a new refresh token; keep the old one if not.
  ...(tokens.refresh_token ?? previous?.refresh_token ? { refresh_token: tokens.refresh_token ?? previous?.refresh_token } : {}),
  ...(tokens.expiresAt === undefined ? {} : { expires_at: new Date(tokens.expiresAt).toISOString() }),
  scopes: tokens.scopes ?? asked,
  issuer: server.issuer,
  token_endpoint: server.token_endpoint,
  ...(server.revocation_endpoint === undefined ? {} : { revocation_endpoint: server.revocation_endpoint }),
  client_id: id.clientId,
  ...(id.clientSecret === undefined ? {} : { client_secret: id.clientSecret })
})

const resultOf = (agentUrl: string, scheme: string | undefined, saved: OAuthCredentials): LoginResult => ({
  agent_url: agentUrl,
  auth_type: "oauth",
  flow: saved.flow,
  scheme: scheme ?? null,
  issuer: saved.issuer,
  scopes: saved.scopes,
  expires_at: saved.expires_at ?? null,
  refreshable: isRenewable(saved)
})

/** Tokens by the flow asked for: the client's own identity, a person in a browser, or a person on another device. */
const obtainTokens = (input: LoginInput, server: AuthServer, id: OAuthClientId, scopes: ReadonlyArray<string>, login: LoginCommand) =>
  Effect.flatMap(OAuth, (oauth) => {
    switch (input.flow) {
      case "client_credentials":
        return oauth.clientCredentials(server, id, scopes, login)
      case "authorization_code":
        return oauth.authorizationCode(server, id, scopes, login, input.interaction)
      case "device_code":
        return oauth.deviceCode(server, id, scopes, login, input.interaction)
    }
  })

/** The client secret to send to `server`: a reused one only to the token endpoint it was saved with. */
const secretFor = (input: LoginInput, server: AuthServer) =>
  input.clientSecretFor === undefined || input.clientSecretFor === server.token_endpoint ? input.clientSecret : undefined

/** Logs in with the flow asked for and saves the tokens for the agent. */
export const login = Effect.fn("oauthLogin")(function*(input: LoginInput) {
  const agentUrl = input.agentUrl
  const oauth = yield* OAuth
  const scheme = yield* schemeFor(input, agentUrl)
  const server = yield* oauth.discover(scheme, input.flow, input.issuer)
  const scopes = scopesFor(scheme, input.scopes)
  const id: OAuthClientId = { clientId: input.clientId, clientSecret: secretFor(input, server) }
  const tokens = yield* obtainTokens(input, server, id, scopes, loginOf(agentUrl, input.flow, input.clientId))
  const saved = savedFrom(input.flow, server, id, tokens, scopes)
  yield* Effect.flatMap(SessionStore, (store) => store.setCredentials(agentUrl, saved))
  return resultOf(agentUrl, scheme?.name, saved)
})

const serverOf = (saved: OAuthCredentials): AuthServer => ({
  issuer: saved.issuer,
  token_endpoint: saved.token_endpoint,
  revocation_endpoint: saved.revocation_endpoint
})

const idOf = (saved: OAuthCredentials): OAuthClientId => ({ clientId: saved.client_id, clientSecret: saved.client_secret })

/** New tokens without the user: client credentials ask again with the saved secret; other flows refresh. */
const newTokens = (agentUrl: AgentUrl, saved: OAuthCredentials) =>
  Effect.gen(function*() {
    const oauth = yield* OAuth
    const login = loginOf(agentUrl, saved.flow, saved.client_id)
    const server = serverOf(saved)
    const tokens = saved.flow === "client_credentials" && saved.client_secret !== undefined
      ? yield* oauth.clientCredentials(server, idOf(saved), saved.scopes, login)
      : saved.refresh_token !== undefined
      ? yield* oauth.refresh(server, idOf(saved), saved.refresh_token, login)
      : yield* new LoginRequired({ login, reason: "the access token expired and there is no refresh token" })
    return savedFrom(saved.flow, server, idOf(saved), tokens, saved.scopes, saved)
  }).pipe(
    Effect.catchTag("OAuthRefused", (refused) =>
      Effect.fail(new LoginRequired({ login: refused.login, reason: `renewing the token was refused (${refused.error})` })))
  )

const expiresSoon = (saved: OAuthCredentials, now: number) =>
  saved.expires_at !== undefined && Date.parse(saved.expires_at) - RENEW_MARGIN_MS <= now

/**
 * Renews `seen` under the store's lock, so processes sharing the store never renew at once: with
 * refresh-token rotation a second refresh with the same token is reuse, and the provider revokes
 * them all. Whoever waited reads the store again and uses what the first one saved, unless that
 * too is refused or about to expire.
 */
const renew = (agentUrl: AgentUrl, seen: OAuthCredentials, force: boolean) =>
  Effect.flatMap(SessionStore, (store) =>
    store.updateCredentials(agentUrl, (saved) =>
      Effect.gen(function*() {
        if (Option.isNone(saved)) {
          const login = loginOf(agentUrl, seen.flow, seen.client_id)
          return yield* new LoginRequired({ login, reason: "the saved tokens were removed (relay auth logout?)" })
        }
        const current = saved.value
        // Credentials saved meanwhile by `relay auth set` are used as they are.
        if (current.kind !== "oauth") return current
        const refused = force && current.access_token === seen.access_token
        return refused || expiresSoon(current, yield* Clock.currentTimeMillis) ? yield* newTokens(agentUrl, current) : current
      }))).pipe(Effect.withSpan("oauthRenew"))

const asSent = (credentials: SavedCredentials): Credentials =>
  credentials.kind === "oauth" ? { kind: "bearer", token: credentials.access_token } : credentials

/**
 * The bearer credentials for saved OAuth tokens: renewed first when they expire within a minute,
 * or with `force` when the agent refused them.
 */
export const bearerFor = (agentUrl: AgentUrl, saved: OAuthCredentials, force = false) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    return asSent(force || expiresSoon(saved, now) ? yield* renew(agentUrl, saved, force) : saved)
  })

export interface LogoutResult {
  readonly agent_url: string
  readonly removed: boolean
  /** Whether the authorization server was asked to revoke the tokens (it offers revocation). */
  readonly revoked: boolean
}

/**
 * Forgets an agent's credentials, then revokes OAuth tokens when the server offers it (RFC 7009),
 * the refresh token before the access token (revoking it may end both). The tokens revoked are the
 * ones taken from the store under its lock: a renewal under way elsewhere saved its tokens first,
 * or finds none to renew, so no token it got outlives the logout.
 */
export const logout = Effect.fn("oauthLogout")(function*(key: AgentUrl) {
  const store = yield* SessionStore
  const oauth = yield* OAuth
  const saved = yield* store.takeCredentials(key)
  let revoked = false
  if (Option.isSome(saved) && saved.value.kind === "oauth") {
    const tokens = saved.value
    const login = loginOf(key, tokens.flow, tokens.client_id)
    for (const token of [tokens.refresh_token, tokens.access_token]) {
      if (token === undefined) continue
      // A failed revocation is logged; the tokens are forgotten all the same.
      revoked = (yield* oauth.revoke(serverOf(tokens), idOf(tokens), token, login).pipe(
        Effect.tapError((error) => Effect.logWarning(`Revocation failed: ${error.message}`)),
        Effect.orElseSucceed(() => false)
      )) || revoked
    }
  }
  return { agent_url: key, removed: Option.isSome(saved), revoked } satisfies LogoutResult
})
