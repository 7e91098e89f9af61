/**
 * The OAuth service done by openid-client (OAuth.ts loads this module on the first OAuth call).
 */
import { Clock, Deferred, Duration, Effect, Scope } from "effect"
import { decodeJwt } from "jose"
import { spawn } from "node:child_process"
import http from "node:http"
import type { AddressInfo } from "node:net"
import * as client from "openid-client"
import { MAX_OAUTH_RESPONSE_BYTES } from "../../domain/limits.js"
import {
  ClockSkew,
  insecureReason,
  type LoginCommand,
  LoginTimedOut,
  OAuthDiscoveryFailed,
  OAuthInsecureEndpoint,
  OAuthRefused,
  OAuthResponseTooLarge,
  type OAuthScheme
} from "../../domain/oauth.js"
import { maskSecretsIn } from "../../domain/secrets.js"
import type { OAuthFlow } from "../../domain/session.js"
import { answerTooLargeIn, boundedFetch } from "./boundedFetch.js"
import type { AuthServer, GrantError, OAuthClientId, OAuthService, Tokens } from "./service.js"

// A token issued this far in the future, or already expired when it arrives, means the clocks disagree.
const CLOCK_TOLERANCE_MS = 5 * 60_000

const checkSecure = (url: string) => {
  const reason = insecureReason(url)
  return reason === undefined ? Effect.void : Effect.fail(new OAuthInsecureEndpoint({ url, reason }))
}

const isLoopbackHttp = (url: string) => url.startsWith("http:")

/** The RFC 6749 §5.2 error code and description of a refusal, wherever the library put them. */
const refusalOf = (error: unknown): { readonly error: string; readonly description?: string | undefined } => {
  if (error instanceof client.ResponseBodyError || error instanceof client.AuthorizationResponseError) {
    return { error: error.error, description: error.error_description }
  }
  // A 401 from the token endpoint (bad client credentials) arrives as a WWW-Authenticate challenge.
  if (error instanceof client.WWWAuthenticateChallengeError) {
    const parameters = error.cause[0]?.parameters
    return { error: parameters?.error ?? "invalid_client", description: parameters?.error_description }
  }
  return { error: "request_failed", description: error instanceof Error ? error.message : String(error) }
}

/** An answer past the size limit, wherever openid-client wrapped it. */
const tooLarge = (error: unknown): OAuthResponseTooLarge | undefined => {
  const found = answerTooLargeIn(error)
  return found &&
    new OAuthResponseTooLarge({ url: found.url, limit: found.limit, ...(found.declared === undefined ? {} : { declared: found.declared }) })
}

/**
 * The failure of a request that carried `secrets` (the client secret, a refresh token, a token to
 * revoke): a server's error and description may quote what it was sent, and are shown masked.
 */
const loginFailure =
  (login: LoginCommand, secrets: ReadonlyArray<string | undefined> = []) => (error: unknown): OAuthRefused | OAuthResponseTooLarge => {
    const sent = secrets.filter((secret): secret is string => secret !== undefined)
    const { description, error: code } = refusalOf(error)
    return tooLarge(error) ?? new OAuthRefused({
      error: maskSecretsIn(code, sent),
      description: description === undefined ? undefined : maskSecretsIn(description, sent),
      login
    })
  }

const metadataFromCard = (scheme: OAuthScheme | undefined, flow: OAuthFlow): AuthServer | undefined => {
  const endpoints = scheme?.flows[flow]
  if (endpoints?.tokenUrl === undefined) return undefined
  return {
    issuer: new URL(endpoints.tokenUrl).origin,
    token_endpoint: endpoints.tokenUrl,
    authorization_endpoint: endpoints.authorizationUrl,
    device_authorization_endpoint: endpoints.deviceAuthorizationUrl
  }
}

const serverOf = (metadata: client.ServerMetadata, url: string): Effect.Effect<AuthServer, OAuthDiscoveryFailed> =>
  metadata.token_endpoint === undefined
    ? Effect.fail(new OAuthDiscoveryFailed({ url, reason: "the metadata names no token_endpoint" }))
    : Effect.succeed({
      issuer: metadata.issuer,
      token_endpoint: metadata.token_endpoint,
      authorization_endpoint: metadata.authorization_endpoint,
      device_authorization_endpoint: metadata.device_authorization_endpoint,
      revocation_endpoint: metadata.revocation_endpoint,
      code_challenge_methods_supported: metadata.code_challenge_methods_supported
    })

/**
 * A metadata URL is either an issuer (discovery appends the well-known path) or the document
 * itself; openid-client takes both, checking the issuer only in the first case.
 */
const discoverFrom = (url: string, algorithm: "oidc" | "oauth2", fetchWithin: client.CustomFetch) =>
  Effect.zipRight(
    Effect.mapError(checkSecure(url), (error) => new OAuthDiscoveryFailed({ url, reason: error.reason })),
    Effect.tryPromise({
      try: () =>
        client.discovery(new URL(url), "relay", undefined, client.None(), {
          algorithm,
          [client.customFetch]: fetchWithin,
          ...(isLoopbackHttp(url) ? { execute: [client.allowInsecureRequests] } : {})
        }),
      catch: (error) => tooLarge(error) ?? new OAuthDiscoveryFailed({ url, reason: error instanceof Error ? error.message : String(error) })
    })
  ).pipe(Effect.flatMap((config) => serverOf(config.serverMetadata(), url)))

/** A client configuration for one request; credentials go only to the endpoints the server named. */
const configurationFor = (server: AuthServer, id: OAuthClientId, fetchWithin: client.CustomFetch) => {
  const config = new client.Configuration(
    // exactOptionalPropertyTypes: absent endpoints are left out, not set to undefined.
    Object.fromEntries(Object.entries(server).filter(([, value]) => value !== undefined)) as client.ServerMetadata,
    id.clientId,
    undefined,
    // RFC 6749 §2.3.1: every server supports HTTP Basic for client secrets.
    id.clientSecret === undefined ? client.None() : client.ClientSecretBasic(id.clientSecret)
  )
  if (isLoopbackHttp(server.token_endpoint)) client.allowInsecureRequests(config)
  config[client.customFetch] = fetchWithin
  return config
}

/** Refuses tokens whose JWT times disagree with this machine's clock beyond the tolerance. */
const checkClock = (accessToken: string, now: number): Effect.Effect<void, ClockSkew> => {
  let claims: { readonly iat?: number | undefined; readonly exp?: number | undefined }
  try {
    claims = decodeJwt(accessToken)
  } catch {
    return Effect.void // opaque token: nothing to compare
  }
  if (claims.iat !== undefined && claims.iat * 1000 > now + CLOCK_TOLERANCE_MS) {
    return Effect.fail(
      new ClockSkew({ detail: `the token was issued ${Math.round((claims.iat * 1000 - now) / 1000)} s in this machine's future` })
    )
  }
  if (claims.exp !== undefined && claims.exp * 1000 < now - CLOCK_TOLERANCE_MS) {
    return Effect.fail(
      new ClockSkew({ detail: `the new token expired ${Math.round((now - claims.exp * 1000) / 1000)} s ago by this machine's clock` })
    )
  }
  return Effect.void
}

// The last instant a Date can hold (ECMA-262 time values): an expiry past it is saved as none.
const LATEST_DATE_MS = 8.64e15

const tokensOf = (response: client.TokenEndpointResponse & client.TokenEndpointResponseHelpers, now: number): Tokens => {
  const expiresIn = response.expiresIn()
  const expiresAt = expiresIn === undefined ? undefined : now + expiresIn * 1000
  return {
    access_token: response.access_token,
    refresh_token: response.refresh_token,
    // Any finite expires_in passes openid-client; one of 1e300 s would make no date to save.
    expiresAt: expiresAt !== undefined && expiresAt <= LATEST_DATE_MS ? expiresAt : undefined,
    scopes: response.scope === undefined ? undefined : response.scope.split(" ").filter((scope) => scope !== "")
  }
}

/** Runs a token request and checks what comes back. */
const tokenRequest = (
  server: AuthServer,
  login: LoginCommand,
  secrets: ReadonlyArray<string | undefined>,
  request: (signal: AbortSignal) => Promise<client.TokenEndpointResponse & client.TokenEndpointResponseHelpers>
): Effect.Effect<Tokens, GrantError> =>
  Effect.gen(function*() {
    yield* checkSecure(server.token_endpoint)
    // The signal stops a device poll that is timed out, so no timer keeps the process alive.
    const response = yield* Effect.tryPromise({ try: request, catch: loginFailure(login, secrets) })
    const now = yield* Clock.currentTimeMillis
    yield* checkClock(response.access_token, now)
    return tokensOf(response, now)
  })

const scopeParameters = (scopes: ReadonlyArray<string>): Record<string, string> => scopes.length === 0 ? {} : { scope: scopes.join(" ") }

const missingEndpoint = (server: AuthServer, name: string) =>
  new OAuthDiscoveryFailed({ url: server.issuer, reason: `the authorization server names no ${name}` })

const endpoint = (server: AuthServer, name: "authorization_endpoint" | "device_authorization_endpoint") => {
  const url = server[name]
  return url === undefined ? Effect.fail(missingEndpoint(server, name)) : Effect.as(checkSecure(url), url)
}

/** Best effort: a missing opener (no desktop) is fine, the URL is printed anyway. */
const openInBrowser = (url: string) =>
  Effect.sync(() => {
    const [command, args] = process.platform === "darwin"
      ? ["open", [url]] as const
      : process.platform === "win32"
      ? ["cmd", ["/c", "start", "", url]] as const
      : ["xdg-open", [url]] as const
    try {
      const child = spawn(command, args, { stdio: "ignore", detached: true })
      child.on("error", () => undefined)
      child.unref()
    } catch {
      // no opener on this machine
    }
  })

// RFC 8628 §3.2: without an interval the client waits 5 s between polls; relay never polls more than once a second.
const DEFAULT_POLL_SECONDS = 5
const MIN_POLL_SECONDS = 1

const CALLBACK_PATH = "/callback"

const page = (res: http.ServerResponse, status: number, text: string) => {
  res.writeHead(status, { "content-type": "text/plain; charset=utf-8", "cache-control": "no-store" })
  res.end(text)
}

/**
 * A listener on 127.0.0.1 (a free port) for the one redirect that carries our `state`; other
 * requests are answered and ignored, so a stray or forged request cannot end the login.
 */
const loopbackRedirect = (
  state: string
): Effect.Effect<{ readonly redirectUri: string; readonly received: Effect.Effect<URL> }, OAuthRefused, Scope.Scope> =>
  Effect.gen(function*() {
    const deferred = yield* Deferred.make<URL>()
    let origin = "http://127.0.0.1"
    const server = yield* Effect.acquireRelease(
      Effect.async<http.Server, OAuthRefused>((resume) => {
        const server = http.createServer((req, res) => {
          const url = new URL(req.url ?? "/", origin)
          if (url.pathname !== CALLBACK_PATH || url.searchParams.get("state") !== state) {
            page(res, 400, "This is relay's login listener; this request is not the login it waits for.")
            return
          }
          const failed = url.searchParams.has("error")
          page(res, failed ? 400 : 200, failed ? "The login did not complete; see the terminal." : "Logged in. You can close this window.")
          Deferred.unsafeDone(deferred, Effect.succeed(url))
        })
        server.once(
          "error",
          (error) =>
            resume(
              Effect.fail(
                new OAuthRefused({
                  error: "request_failed",
                  description: `cannot listen on 127.0.0.1: ${error.message}`,
                  login: { agentUrl: "" }
                })
              )
            )
        )
        server.listen(0, "127.0.0.1", () => resume(Effect.succeed(server)))
      }),
      (server) =>
        Effect.async<void>((resume) => {
          server.close(() => resume(Effect.void))
          server.closeAllConnections()
        })
    )
    const { port } = server.address() as AddressInfo
    origin = `http://127.0.0.1:${port}`
    return { redirectUri: `${origin}${CALLBACK_PATH}`, received: Deferred.await(deferred) }
  })

const waitAtMost = <A, E, R>(effect: Effect.Effect<A, E, R>, timeout: Duration.Duration, step: string) =>
  Effect.timeoutFail(effect, {
    duration: timeout,
    onTimeout: () => new LoginTimedOut({ waitedSeconds: Math.round(Duration.toSeconds(timeout)), step })
  })

/** The service; every answer of the authorization server is read up to `maxResponseBytes`. */
export const makeOAuth = (maxResponseBytes: number = MAX_OAUTH_RESPONSE_BYTES): OAuthService => {
  const fetchWithin = boundedFetch(maxResponseBytes)
  const configure = (server: AuthServer, id: OAuthClientId) => configurationFor(server, id, fetchWithin)
  return {
    discover: (scheme, flow, issuer) => {
      if (issuer !== undefined) {
        return discoverFrom(issuer, "oidc", fetchWithin).pipe(Effect.orElse(() => discoverFrom(issuer, "oauth2", fetchWithin)))
      }
      if (scheme?.metadataUrl !== undefined) {
        return discoverFrom(scheme.metadataUrl, scheme.type === "openIdConnect" ? "oidc" : "oauth2", fetchWithin)
      }
      const fromCard = metadataFromCard(scheme, flow)
      return fromCard === undefined
        ? Effect.fail(new OAuthDiscoveryFailed({ url: scheme?.name ?? "(no scheme)", reason: `the card names no token URL for ${flow}` }))
        : Effect.as(
          Effect.mapError(
            checkSecure(fromCard.token_endpoint),
            (error) => new OAuthDiscoveryFailed({ url: error.url, reason: error.reason })
          ),
          fromCard
        )
    },
    clientCredentials: (server, id, scopes, login) =>
      tokenRequest(server, login, [id.clientSecret], () => client.clientCredentialsGrant(configure(server, id), scopeParameters(scopes))),
    authorizationCode: (server, id, scopes, login, interaction) =>
      Effect.scoped(Effect.gen(function*() {
        yield* endpoint(server, "authorization_endpoint")
        const config = configure(server, id)
        const verifier = client.randomPKCECodeVerifier()
        const challenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(verifier))
        const state = client.randomState()
        const listener = yield* Effect.mapError(loopbackRedirect(state), (error) => new OAuthRefused({ ...error, login }))
        const url = client.buildAuthorizationUrl(config, {
          redirect_uri: listener.redirectUri,
          ...scopeParameters(scopes),
          code_challenge: challenge,
          code_challenge_method: "S256",
          state
        }).href
        yield* interaction.prompt({ url })
        if (interaction.openBrowser) yield* openInBrowser(url)
        const redirected = yield* waitAtMost(listener.received, interaction.timeout, "the browser to come back")
        return yield* tokenRequest(server, login, [id.clientSecret], () =>
          client.authorizationCodeGrant(config, redirected, { pkceCodeVerifier: verifier, expectedState: state }, {
            redirect_uri: listener.redirectUri
          }))
      })),
    deviceCode: (server, id, scopes, login, interaction) =>
      Effect.gen(function*() {
        yield* endpoint(server, "device_authorization_endpoint")
        const config = configure(server, id)
        const started = yield* Effect.tryPromise({
          try: () => client.initiateDeviceAuthorization(config, scopeParameters(scopes)),
          catch: loginFailure(login, [id.clientSecret])
        })
        yield* interaction.prompt({ url: started.verification_uri_complete ?? started.verification_uri, userCode: started.user_code })
        // The code expires on the server's clock too: wait no longer than it lives.
        const timeout = Duration.min(interaction.timeout, Duration.seconds(started.expires_in))
        // openid-client polls as often as the server says (any positive interval): a millisecond would be a flood.
        const polled = { ...started, interval: Math.max(started.interval ?? DEFAULT_POLL_SECONDS, MIN_POLL_SECONDS) }
        return yield* waitAtMost(
          tokenRequest(server, login, [id.clientSecret], (signal) =>
            client.pollDeviceAuthorizationGrant(config, polled, undefined, { signal })),
          timeout,
          "the device code to be approved"
        )
      }),
    refresh: (server, id, refreshToken, login) =>
      tokenRequest(server, login, [id.clientSecret, refreshToken], () => client.refreshTokenGrant(configure(server, id), refreshToken)),
    revoke: (server, id, token, login) =>
      server.revocation_endpoint === undefined
        ? Effect.succeed(false)
        : Effect.zipRight(
          checkSecure(server.revocation_endpoint),
          Effect.as(
            Effect.tryPromise({
              try: () => client.tokenRevocation(configure(server, id), token),
              catch: loginFailure(login, [id.clientSecret, token])
            }),
            true
          )
        )
  }
}
