/**
 * OAuth: the protocol work of logging in, done by openid-client (an OpenID-certified library):
 * metadata discovery (OpenID Connect discovery, RFC 8414), token requests per flow (RFC 6749,
 * 7636, 8628), refresh and revocation (RFC 7009). Every URL that would receive a secret is
 * checked first: https, or http on loopback only. Every answer is read up to MAX_OAUTH_RESPONSE_BYTES.
 *
 * It has a default implementation (oauth/openIdClient.ts), so doors need not provide it; tests may
 * replace it. The implementation, openid-client and its helpers load on the first OAuth call:
 * every command that may reach an agent can need a saved token renewed, few ever do, and the
 * libraries are ~65 KB of code `relay mcp` would otherwise parse at start.
 */
import { Context, type Duration, Effect } from "effect"
import type {
  ClockSkew,
  LoginCommand,
  LoginTimedOut,
  OAuthDiscoveryFailed,
  OAuthInsecureEndpoint,
  OAuthRefused,
  OAuthResponseTooLarge,
  OAuthScheme
} from "../domain/oauth.js"
import type { OAuthFlow } from "../domain/session.js"

/** The authorization server endpoints relay uses (from discovery or straight from the card). */
export interface AuthServer {
  readonly issuer: string
  readonly token_endpoint: string
  readonly authorization_endpoint?: string | undefined
  readonly device_authorization_endpoint?: string | undefined
  readonly revocation_endpoint?: string | undefined
  readonly code_challenge_methods_supported?: ReadonlyArray<string> | undefined
}

export interface OAuthClientId {
  readonly clientId: string
  readonly clientSecret?: string | undefined
}

/** A token response, reduced to what relay keeps. */
export interface Tokens {
  readonly access_token: string
  readonly refresh_token?: string | undefined
  /** ms since the epoch, when the server gave expires_in. */
  readonly expiresAt?: number | undefined
  /** The scopes granted, when the server said (RFC 6749 §5.1), else undefined. */
  readonly scopes?: ReadonlyArray<string> | undefined
}

export type GrantError = OAuthRefused | OAuthInsecureEndpoint | OAuthResponseTooLarge | ClockSkew

/** What the person must do to log in: open a URL (and, for a device, enter a code). */
export interface LoginPrompt {
  readonly url: string
  readonly userCode?: string | undefined
}

/** How a person takes part in a login: shown the prompt, given a bounded time. */
export interface Interaction {
  readonly prompt: (prompt: LoginPrompt) => Effect.Effect<void>
  /** Open the URL in the default browser too (the URL is always shown). */
  readonly openBrowser: boolean
  readonly timeout: Duration.Duration
}

/** A grant a person takes part in (a browser or another device), so it may time out waiting for them. */
export type InteractiveGrant = (
  server: AuthServer,
  id: OAuthClientId,
  scopes: ReadonlyArray<string>,
  login: LoginCommand,
  interaction: Interaction
) => Effect.Effect<Tokens, GrantError | LoginTimedOut | OAuthDiscoveryFailed>

let loading: Promise<OAuthService> | undefined
const implementation = Effect.promise(() => (loading ??= import("./oauth/openIdClient.js").then((module) => module.makeOAuth())))

/** The default service: each call loads the implementation first (once). */
const loadedOnFirstUse: OAuthService = {
  discover: (...args) => Effect.flatMap(implementation, (oauth) => oauth.discover(...args)),
  clientCredentials: (...args) => Effect.flatMap(implementation, (oauth) => oauth.clientCredentials(...args)),
  authorizationCode: (...args) => Effect.flatMap(implementation, (oauth) => oauth.authorizationCode(...args)),
  deviceCode: (...args) => Effect.flatMap(implementation, (oauth) => oauth.deviceCode(...args)),
  refresh: (...args) => Effect.flatMap(implementation, (oauth) => oauth.refresh(...args)),
  revoke: (...args) => Effect.flatMap(implementation, (oauth) => oauth.revoke(...args))
}

export class OAuth extends Context.Reference<OAuth>()("relay/OAuth", {
  defaultValue: () => loadedOnFirstUse
}) {}

export interface OAuthService {
  /** The server's endpoints: from the scheme's metadata URL, an issuer given by the user, or the card's flow URLs. */
  readonly discover: (
    scheme: OAuthScheme | undefined,
    flow: OAuthFlow,
    issuer?: string | undefined
  ) => Effect.Effect<AuthServer, OAuthDiscoveryFailed | OAuthInsecureEndpoint | OAuthResponseTooLarge>
  readonly clientCredentials: (
    server: AuthServer,
    id: OAuthClientId,
    scopes: ReadonlyArray<string>,
    login: LoginCommand
  ) => Effect.Effect<Tokens, GrantError>
  /** Authorization code with PKCE (RFC 7636, S256) and a loopback redirect (RFC 8252 §7.3). */
  readonly authorizationCode: InteractiveGrant
  /** Device authorization grant (RFC 8628): the person approves on another device. */
  readonly deviceCode: InteractiveGrant
  readonly refresh: (server: AuthServer, id: OAuthClientId, refreshToken: string, login: LoginCommand) => Effect.Effect<Tokens, GrantError>
  /** Revokes a token (RFC 7009) when the server has a revocation endpoint; true if it was asked. */
  readonly revoke: (server: AuthServer, id: OAuthClientId, token: string, login: LoginCommand) => Effect.Effect<boolean, GrantError>
}

