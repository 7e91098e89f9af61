/**
 * What the OAuth service is (OAuth.ts holds its Tag; oauth/openIdClient.ts implements it): its
 * calls and the data they exchange, apart from both so neither imports the other.
 */
import type { Duration, Effect } from "effect"
import type {
  ClockSkew,
  LoginCommand,
  LoginTimedOut,
  OAuthDiscoveryFailed,
  OAuthInsecureEndpoint,
  OAuthRefused,
  OAuthResponseTooLarge,
  OAuthScheme
} from "../../domain/oauth.js"
import type { OAuthFlow } from "../../domain/session.js"

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
