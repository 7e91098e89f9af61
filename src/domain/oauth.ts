/**
 * OAuth 2.0 / OpenID Connect as an agent card declares it, and the errors of logging in.
 *
 * Cards come in three shapes (a2a-protocol.md §2.2): v1.0 ProtoJSON oneofs
 * (`{oauth2SecurityScheme: {...}}`), v0.3 OpenAPI style (`{type: "oauth2", ...}`) and the
 * `{scheme: {$case, value}}` form one SDK serialises; all are read here.
 */
import { Schema } from "effect"
import { isLoopbackHost } from "../a2a/hosts.js"
import { act, type Hint } from "./hints.js"
import type { OAuthFlow } from "./session.js"

export interface FlowEndpoints {
  readonly tokenUrl?: string | undefined
  readonly authorizationUrl?: string | undefined
  readonly deviceAuthorizationUrl?: string | undefined
  readonly scopes: ReadonlyArray<string>
}

/** One OAuth2 or OpenID Connect scheme of a card, with the scopes its requirements ask for. */
export interface OAuthScheme {
  readonly name: string
  readonly type: "oauth2" | "openIdConnect"
  /** openIdConnectUrl, or oauth2MetadataUrl (RFC 8414). */
  readonly metadataUrl?: string | undefined
  readonly flows: Partial<Record<OAuthFlow, FlowEndpoints>>
  /** Scopes named by the card's (or a skill's) security requirements for this scheme. */
  readonly requiredScopes: ReadonlyArray<string>
}

type Json = Record<string, unknown>

const isObject = (value: unknown): value is Json => typeof value === "object" && value !== null && !Array.isArray(value)
const stringOf = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined)
const stringsOf = (value: unknown): ReadonlyArray<string> =>
  Array.isArray(value) ? value.filter((item): item is string => typeof item === "string") : []

/** The oneof member (v1.0), the `$case` value (SDK form) or the object itself with its `type` (v0.3). */
const schemeBody = (value: unknown): { readonly type: string; readonly body: Json } | undefined => {
  if (!isObject(value)) return undefined
  if (isObject(value["scheme"]) && typeof value["scheme"]["$case"] === "string" && isObject(value["scheme"]["value"])) {
    return schemeBody({ [value["scheme"]["$case"]]: value["scheme"]["value"] })
  }
  if (isObject(value["oauth2SecurityScheme"])) return { type: "oauth2", body: value["oauth2SecurityScheme"] }
  if (isObject(value["openIdConnectSecurityScheme"])) return { type: "openIdConnect", body: value["openIdConnectSecurityScheme"] }
  if (typeof value["type"] === "string") return { type: value["type"], body: value }
  return undefined
}

const endpointsOf = (flow: unknown): FlowEndpoints | undefined => {
  if (!isObject(flow)) return undefined
  return {
    tokenUrl: stringOf(flow["tokenUrl"]),
    authorizationUrl: stringOf(flow["authorizationUrl"]),
    deviceAuthorizationUrl: stringOf(flow["deviceAuthorizationUrl"]),
    scopes: isObject(flow["scopes"]) ? Object.keys(flow["scopes"]) : []
  }
}

/** v0.3 lists several flows side by side; v1.0's `flows` is a oneof (possibly in `$case` form). */
const flowsOf = (flows: unknown): Partial<Record<OAuthFlow, FlowEndpoints>> => {
  if (!isObject(flows)) return {}
  const members = isObject(flows["flow"]) && typeof flows["flow"]["$case"] === "string"
    ? { [flows["flow"]["$case"]]: flows["flow"]["value"] }
    : flows
  const result: Partial<Record<OAuthFlow, FlowEndpoints>> = {}
  const clientCredentials = endpointsOf(members["clientCredentials"])
  const authorizationCode = endpointsOf(members["authorizationCode"])
  const deviceCode = endpointsOf(members["deviceCode"])
  if (clientCredentials) result.client_credentials = clientCredentials
  if (authorizationCode) result.authorization_code = authorizationCode
  if (deviceCode) result.device_code = deviceCode
  return result
}

/** Scheme name → scopes, from `securityRequirements` (v1.0) or `security` (v0.3), of the card and its skills. */
const requiredScopes = (card: Json): ReadonlyMap<string, ReadonlyArray<string>> => {
  const scopes = new Map<string, Set<string>>()
  const add = (name: string, list: ReadonlyArray<string>) => {
    const known = scopes.get(name) ?? new Set<string>()
    for (const scope of list) known.add(scope)
    scopes.set(name, known)
  }
  const readRequirements = (holder: Json) => {
    for (const requirement of Array.isArray(holder["securityRequirements"]) ? holder["securityRequirements"] : []) {
      if (!isObject(requirement) || !isObject(requirement["schemes"])) continue
      for (const [name, value] of Object.entries(requirement["schemes"])) add(name, isObject(value) ? stringsOf(value["list"]) : [])
    }
    for (const requirement of Array.isArray(holder["security"]) ? holder["security"] : []) {
      if (!isObject(requirement)) continue
      for (const [name, value] of Object.entries(requirement)) add(name, stringsOf(value))
    }
  }
  readRequirements(card)
  for (const skill of Array.isArray(card["skills"]) ? card["skills"] : []) if (isObject(skill)) readRequirements(skill)
  return new Map([...scopes].map(([name, set]) => [name, [...set]]))
}

/** Every OAuth2 and OpenID Connect scheme a card declares, in the card's order. */
export const oauthSchemesOf = (card: unknown): ReadonlyArray<OAuthScheme> => {
  if (!isObject(card) || !isObject(card["securitySchemes"])) return []
  const required = requiredScopes(card)
  const schemes: Array<OAuthScheme> = []
  for (const [name, value] of Object.entries(card["securitySchemes"])) {
    const scheme = schemeBody(value)
    if (scheme === undefined) continue
    if (scheme.type === "oauth2") {
      schemes.push({
        name,
        type: "oauth2",
        metadataUrl: stringOf(scheme.body["oauth2MetadataUrl"]),
        flows: flowsOf(scheme.body["flows"]),
        requiredScopes: required.get(name) ?? []
      })
    } else if (scheme.type === "openIdConnect") {
      schemes.push({
        name,
        type: "openIdConnect",
        metadataUrl: stringOf(scheme.body["openIdConnectUrl"]),
        flows: {},
        requiredScopes: required.get(name) ?? []
      })
    }
  }
  return schemes
}

/**
 * The scheme to log in with: the one named, else the first that offers the flow (an OpenID
 * Connect scheme offers whatever its provider's metadata allows, so it fits any flow).
 */
export const chooseScheme = (
  schemes: ReadonlyArray<OAuthScheme>,
  flow: OAuthFlow,
  name?: string | undefined
): OAuthScheme | undefined =>
  name !== undefined
    ? schemes.find((scheme) => scheme.name === name)
    : schemes.find((scheme) => scheme.flows[flow] !== undefined) ??
      schemes.find((scheme) => scheme.metadataUrl !== undefined)

/**
 * How a card invites a login, when it declares OAuth relay can use: the flow of its first usable
 * scheme (none for an OpenID Connect or metadata-only scheme: its provider decides), so a refusal
 * (401) can name the `relay auth login` that fits. Undefined when the card declares no such scheme.
 */
export const loginOffered = (card: unknown): { readonly flow?: OAuthFlow | undefined } | undefined => {
  for (const scheme of oauthSchemesOf(card)) {
    const flow = (Object.keys(scheme.flows) as Array<OAuthFlow>)[0]
    if (flow !== undefined) return { flow }
    if (scheme.metadataUrl !== undefined) return {}
  }
  return undefined
}

/** Scopes to ask for: the user's, else what the requirements name, else none (the server's default). */
export const scopesFor = (scheme: OAuthScheme | undefined, override: ReadonlyArray<string> | undefined) =>
  override ?? scheme?.requiredScopes ?? []

/**
 * Credentials and codes travel only over https, or plain http to this machine (a test provider,
 * a local gateway). Returns the reason a URL is refused, or undefined.
 */
export const insecureReason = (url: string): string | undefined => {
  let parsed: URL
  try {
    parsed = new URL(url)
  } catch {
    return "it is not an absolute URL"
  }
  if (parsed.protocol === "https:") return undefined
  if (parsed.protocol === "http:" && isLoopbackHost(parsed.hostname)) return undefined
  return parsed.protocol === "http:" ? "plain http is only used on this machine (loopback)" : `unsupported scheme ${parsed.protocol}`
}

/** What `relay auth login` needs to be repeated: shown in hints at every door (loginCommand, authNeeded.ts). */
export interface LoginCommand {
  readonly agentUrl: string
  readonly flow?: OAuthFlow | undefined
  readonly clientId?: string | undefined
}

// ---------------------------------------------------------------------------
// Errors: each says what the person can do; every one is "authentication needed" (exit code 3).

/** The card declares no OAuth scheme that fits, or the scheme named does not exist. */
export class OAuthSchemeUnknown extends Schema.TaggedError<OAuthSchemeUnknown>()("OAuthSchemeUnknown", {
  agentUrl: Schema.String,
  flow: Schema.String,
  declared: Schema.Array(Schema.String),
  wanted: Schema.optional(Schema.String)
}) {
  readonly code = "oauth_scheme_unknown"
  readonly authNeeded = true
  override get message() {
    const declared = this.declared.length === 0 ? "none" : this.declared.join(", ")
    return this.wanted !== undefined
      ? `The card of ${this.agentUrl} declares no OAuth scheme named "${this.wanted}" (OAuth schemes: ${declared})`
      : `The card of ${this.agentUrl} declares no OAuth2 or OpenID Connect scheme for the ${this.flow} flow (OAuth schemes: ${declared})`
  }
  get hint(): Hint {
    return "Name the authorization server yourself with --issuer <URL> (its metadata is discovered), or choose a declared scheme with --scheme."
  }
}

/** The provider's metadata (OpenID Connect discovery or RFC 8414) could not be read or lacks an endpoint. */
export class OAuthDiscoveryFailed extends Schema.TaggedError<OAuthDiscoveryFailed>()("OAuthDiscoveryFailed", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "oauth_discovery_failed"
  readonly authNeeded = true
  override get message() {
    return `Cannot use the authorization server metadata at ${this.url}: ${this.reason}`
  }
  get hint(): Hint {
    return "Check that the provider is up and that the card's openIdConnectUrl / oauth2MetadataUrl is right, or give --issuer <URL>."
  }
}

/** An endpoint that would receive credentials is not https (nor http on loopback). */
export class OAuthInsecureEndpoint extends Schema.TaggedError<OAuthInsecureEndpoint>()("OAuthInsecureEndpoint", {
  url: Schema.String,
  reason: Schema.String
}) {
  readonly code = "oauth_insecure_endpoint"
  readonly authNeeded = true
  override get message() {
    return `Refusing to send credentials to ${this.url}: ${this.reason}`
  }
  get hint(): Hint {
    return "Ask the agent's operator for an https authorization server; relay sends secrets over plain http only to 127.0.0.1/localhost."
  }
}

const REFUSAL_ADVICE: Readonly<Record<string, string>> = {
  invalid_client: "The client id or secret was refused: check them with the provider (and that the client may use this flow).",
  invalid_grant: "The grant was refused (expired or already used code, revoked refresh token): log in again.",
  unauthorized_client: "This client may not use this flow: enable it for the client at the provider, or use another --flow.",
  invalid_scope: "A scope was refused: ask for others with --scope.",
  access_denied: "Consent was denied: log in again and allow access.",
  expired_token: "The device code expired before it was approved: log in again and approve sooner.",
  unsupported_grant_type: "The provider does not offer this flow: use another --flow."
}

/** The authorization server refused (RFC 6749 §5.2 / RFC 8628 §3.5 error codes). */
export class OAuthRefused extends Schema.TaggedError<OAuthRefused>()("OAuthRefused", {
  error: Schema.String,
  description: Schema.optional(Schema.String),
  login: Schema.Struct({ agentUrl: Schema.String, flow: Schema.optional(Schema.String), clientId: Schema.optional(Schema.String) })
}) {
  readonly authNeeded = true
  get code() {
    return REFUSAL_ADVICE[this.error] === undefined ? "oauth_error" : `oauth_${this.error}`
  }
  override get message() {
    return `The authorization server refused: ${this.error}${this.description ? ` (${this.description})` : ""}`
  }
  get hint(): Hint {
    return [
      REFUSAL_ADVICE[this.error] ?? "Check the client's settings at the provider.",
      " Log in with ",
      act("Login", this.login as LoginCommand),
      "."
    ]
  }
}

/** Saved tokens expired and cannot be renewed (no refresh token, or the refresh was refused). */
export class LoginRequired extends Schema.TaggedError<LoginRequired>()("LoginRequired", {
  login: Schema.Struct({ agentUrl: Schema.String, flow: Schema.optional(Schema.String), clientId: Schema.optional(Schema.String) }),
  reason: Schema.String
}) {
  readonly code = "needs_auth"
  readonly authNeeded = true
  override get message() {
    return `Logging in to ${this.login.agentUrl} is needed again: ${this.reason}`
  }
  get hint(): Hint {
    return ["Log in with ", act("Login", this.login as LoginCommand), "."]
  }
}

/** An authorization server answered more than relay reads (MAX_OAUTH_RESPONSE_BYTES); reading stopped there. */
export class OAuthResponseTooLarge extends Schema.TaggedError<OAuthResponseTooLarge>()("OAuthResponseTooLarge", {
  url: Schema.String,
  limit: Schema.Number,
  /** The size the server announced in Content-Length, when it did. */
  declared: Schema.optional(Schema.Number)
}) {
  readonly code = "oauth_response_too_large"
  readonly authNeeded = true
  override get message() {
    const size = this.declared === undefined ? "" : ` (${this.declared} bytes)`
    return `The authorization server at ${this.url} sent an answer over the ${this.limit}-byte limit${size}; relay stopped reading it`
  }
  get hint(): Hint {
    return "No OAuth answer is that large: check the authorization server the agent's card names (or --issuer) with the agent's operator."
  }
}

/** No answer in time: the browser never came back, or the device code was never approved. */
export class LoginTimedOut extends Schema.TaggedError<LoginTimedOut>()("LoginTimedOut", {
  waitedSeconds: Schema.Number,
  step: Schema.String
}) {
  readonly code = "oauth_timeout"
  readonly authNeeded = true
  override get message() {
    return `Gave up waiting for ${this.step} after ${this.waitedSeconds} s`
  }
  get hint(): Hint {
    return "Run the login again and finish it in the browser sooner, or allow longer with --login-timeout <seconds>."
  }
}

/** A token the provider issued is not valid yet or already expired by this machine's clock. */
export class ClockSkew extends Schema.TaggedError<ClockSkew>()("ClockSkew", {
  detail: Schema.String
}) {
  readonly code = "oauth_clock_skew"
  readonly authNeeded = true
  override get message() {
    return `The tokens do not fit this machine's clock: ${this.detail}`
  }
  get hint(): Hint {
    return "Set this machine's clock right (enable NTP time sync), then log in again."
  }
}

export type OAuthError =
  | OAuthSchemeUnknown
  | OAuthDiscoveryFailed
  | OAuthInsecureEndpoint
  | OAuthRefused
  | OAuthResponseTooLarge
  | LoginRequired
  | LoginTimedOut
  | ClockSkew
