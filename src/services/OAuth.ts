/**
 * OAuth: the protocol work of logging in, done by openid-client (an OpenID-certified library):
 * metadata discovery (OpenID Connect discovery, RFC 8414), token requests per flow (RFC 6749,
 * 7636, 8628), refresh and revocation (RFC 7009). Every URL that would receive a secret is
 * checked first: https, or http on loopback only. Every answer is read up to MAX_OAUTH_RESPONSE_BYTES.
 *
 * It has a default implementation (oauth/openIdClient.ts), so doors need not provide it; tests may
 * replace it. The implementation, openid-client and its helpers load on the first OAuth call:
 * every command that may reach an agent can need a saved token renewed, few ever do, and the
 * libraries are code `relay mcp` would otherwise parse at start (bench/README.md).
 */
import { Context, Effect } from "effect"
import type { OAuthService } from "./oauth/service.js"

export type {
  AuthServer,
  GrantError,
  Interaction,
  InteractiveGrant,
  LoginPrompt,
  OAuthClientId,
  OAuthService,
  Tokens
} from "./oauth/service.js"

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
