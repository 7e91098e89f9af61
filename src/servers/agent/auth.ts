/**
 * API-key authentication of the agent server (`relay server agent --auth`).
 *
 * The key is accepted as `X-API-Key: <key>` or `Authorization: Bearer <key>` and compared in
 * constant time. The agent card and /health stay open so clients can discover how to
 * authenticate; everything else answers 401 with `WWW-Authenticate` without a valid key.
 */
import { Config, Effect, Option, Redacted } from "effect"
import { randomBytes } from "node:crypto"
import type { IncomingHttpHeaders } from "node:http"
import type * as V1 from "../../a2a/v1.js"
import { secretCheck } from "../../domain/secretCheck.js"

export const API_KEY_HEADER = "X-API-Key"
export const API_KEY_SCHEME = "apiKey"
export const BEARER_SCHEME = "bearer"
/** Sent with every 401: either way of presenting the key works. */
export const WWW_AUTHENTICATE = `Bearer realm="relay-agent", ApiKey realm="relay-agent", header="${API_KEY_HEADER}"`

/** Where the server's key came from, for the start-up message. */
export type KeySource = "--key" | "RELAY_AGENT_KEY" | "generated"

export interface AgentKey {
  readonly key: Redacted.Redacted<string>
  readonly source: KeySource
}

/** 32 random bytes, base64url: 43 characters that survive URLs, headers and shells. */
export const generateKey = (): string => randomBytes(32).toString("base64url")

/** The key to require: `--key`, else RELAY_AGENT_KEY, else a new random one. */
export const resolveAgentKey = (explicit: Option.Option<Redacted.Redacted<string>>) =>
  Effect.gen(function*() {
    if (Option.isSome(explicit) && Redacted.value(explicit.value).trim() !== "") {
      return { key: explicit.value, source: "--key" } satisfies AgentKey
    }
    const fromEnv = yield* Config.option(Config.redacted("RELAY_AGENT_KEY")).pipe(Effect.orDie)
    if (Option.isSome(fromEnv) && Redacted.value(fromEnv.value).trim() !== "") {
      return { key: fromEnv.value, source: "RELAY_AGENT_KEY" } satisfies AgentKey
    }
    return { key: Redacted.make(generateKey()), source: "generated" } satisfies AgentKey
  })

const BEARER = /^Bearer\s+(\S+)\s*$/i

/** The keys a request presents, in either accepted header. */
const presentedKeys = (headers: IncomingHttpHeaders): ReadonlyArray<string> => {
  const keys: Array<string> = []
  const apiKey = headers["x-api-key"]
  if (typeof apiKey === "string" && apiKey !== "") keys.push(apiKey.trim())
  const bearer = BEARER.exec(headers["authorization"] ?? "")?.[1]
  if (bearer !== undefined) keys.push(bearer)
  return keys
}

/**
 * A check of the request headers against the key. The key's digest is computed once; each
 * presented key is hashed too, so the comparison takes the same time whatever its length.
 */
export const makeKeyCheck = (key: Redacted.Redacted<string>) => {
  const matches = secretCheck(Redacted.value(key))
  return (headers: IncomingHttpHeaders): boolean => presentedKeys(headers).some(matches)
}

/** The card's security schemes and requirements when auth is on: either scheme satisfies it. */
export const cardSecurity = (): Pick<V1.AgentCard, "securitySchemes" | "securityRequirements"> => ({
  securitySchemes: {
    [API_KEY_SCHEME]: {
      apiKeySecurityScheme: { location: "header", name: API_KEY_HEADER, description: "The server's API key" }
    },
    [BEARER_SCHEME]: {
      httpAuthSecurityScheme: { scheme: "Bearer", description: "The server's API key as a bearer token" }
    }
  },
  securityRequirements: [
    { schemes: { [API_KEY_SCHEME]: { list: [] } } },
    { schemes: { [BEARER_SCHEME]: { list: [] } } }
  ]
})
