// A real OpenID Connect provider for tests: oidc-provider (an OpenID-certified implementation)
// on 127.0.0.1:0, issuing JWT access tokens for one agent (the audience). Every request it
// receives is recorded, so tests can see what reached the token and revocation endpoints.
import { createRemoteJWKSet, exportJWK, generateKeyPair, jwtVerify } from "jose"
import http from "node:http"
import Provider from "oidc-provider"
import { closeServer, listenOnLoopback, type RecordedRequest, recordRequest } from "./httpUtil.js"

export const AGENT_SCOPE = "agent:use"
/** A second scope the agent knows, for tests that ask for less than the card names. */
export const ADMIN_SCOPE = "agent:admin"

export interface TestClient {
  readonly client_id: string
  readonly client_secret?: string
  readonly grant_types: ReadonlyArray<string>
  readonly redirect_uris?: ReadonlyArray<string>
  readonly response_types?: ReadonlyArray<string>
  readonly token_endpoint_auth_method?: string
  readonly application_type?: "native" | "web"
}

export interface ProviderOptions {
  /** The agent the tokens are for: their `aud`. */
  readonly audience: string
  readonly clients: ReadonlyArray<TestClient>
  /** Access token lifetime in seconds (default 600). */
  readonly accessTokenTtl?: number
}

export interface ProviderHandle {
  readonly issuer: string
  readonly requests: RecordedRequest[]
  /** The check an agent makes of a bearer token: signed by this provider (its JWKS), for the audience, not expired. */
  readonly verifyBearer: (token: string) => Promise<boolean>
  close(): Promise<void>
}

export const startProvider = async (options: ProviderOptions): Promise<ProviderHandle> => {
  const server = http.createServer()
  const issuer = await listenOnLoopback(server)
  const { privateKey } = await generateKeyPair("RS256", { extractable: true })
  const jwk = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" }
  const ttl = options.accessTokenTtl ?? 600

  const provider = new Provider(issuer, {
    clients: options.clients.map((client) => ({
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: client.client_secret === undefined ? "none" : "client_secret_basic",
      ...client
    })) as never,
    jwks: { keys: [jwk] } as never,
    scopes: ["openid", "offline_access", AGENT_SCOPE, ADMIN_SCOPE],
    features: {
      clientCredentials: { enabled: true },
      revocation: { enabled: true },
      devInteractions: { enabled: true },
      deviceFlow: { enabled: true },
      resourceIndicators: {
        enabled: true,
        // Tokens are for the agent even when the client names no resource (relay does not).
        defaultResource: () => options.audience,
        useGrantedResource: () => true,
        getResourceServerInfo: () => ({
          scope: `${AGENT_SCOPE} ${ADMIN_SCOPE}`,
          audience: options.audience,
          accessTokenFormat: "jwt",
          accessTokenTTL: ttl
        })
      }
    },
    ttl: { AccessToken: ttl, ClientCredentials: ttl },
    pkce: { required: () => true },
    // A refresh token for every client allowed one (no offline_access consent dance in tests).
    issueRefreshToken: async (_ctx: unknown, client: { grantTypeAllowed(type: string): boolean }) =>
      client.grantTypeAllowed("refresh_token")
  })
  provider.proxy = false
  const callback = provider.callback()
  const requests: RecordedRequest[] = []
  server.on("request", (req: http.IncomingMessage, res: http.ServerResponse) => {
    recordRequest(requests, req, res, () => undefined)
    void callback(req, res)
  })
  const keys = createRemoteJWKSet(new URL(`${issuer}/jwks`))
  const verifyBearer = async (token: string) => {
    await jwtVerify(token, keys, { issuer, audience: options.audience })
    return true
  }
  return { issuer, requests, verifyBearer, close: () => closeServer(server) }
}
