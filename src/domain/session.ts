/**
 * Session records: one per agent, keyed by the normalised agent URL, shared by every door.
 */
import { Effect, Either, Schema } from "effect"
import { InvalidAgentUrl } from "./errors.js"

export const DEFAULT_API_KEY_HEADER = "X-API-Key"

export const BearerCredentials = Schema.Struct({
  kind: Schema.Literal("bearer"),
  token: Schema.String
})

export const ApiKeyCredentials = Schema.Struct({
  kind: Schema.Literal("api_key"),
  key: Schema.String,
  header: Schema.optionalWith(Schema.String, { default: () => DEFAULT_API_KEY_HEADER })
})

export const Credentials = Schema.Union(BearerCredentials, ApiKeyCredentials)
export type Credentials = typeof Credentials.Type

export const SessionRecord = Schema.Struct({
  agent_url: Schema.String,
  context_id: Schema.optional(Schema.String),
  task_id: Schema.optional(Schema.String),
  last_state: Schema.optional(Schema.String),
  credentials: Schema.optional(Credentials),
  updated_at: Schema.String
})
export type SessionRecord = typeof SessionRecord.Type

export const STORE_FORMAT_VERSION = 1

/** The whole sessions.json file. `version` lets a later relay migrate or refuse. */
export const StoreFile = Schema.Struct({
  version: Schema.Literal(STORE_FORMAT_VERSION),
  sessions: Schema.Record({ key: Schema.String, value: SessionRecord })
})
export type StoreFile = typeof StoreFile.Type

export const emptyStore = (): StoreFile => ({ version: STORE_FORMAT_VERSION, sessions: {} })

/** The ids and state a conversation leaves behind; `null` clears a field. */
export interface SessionPatch {
  readonly context_id?: string | null
  readonly task_id?: string | null
  readonly last_state?: string | null
}

/**
 * The key of a session: lower-case scheme and host, default port dropped, trailing slash
 * dropped, fragment dropped. `http://Agent.Example:80/a2a/` and `http://agent.example/a2a`
 * are the same agent.
 */
export const normalizeAgentUrl = (input: string): Either.Either<string, InvalidAgentUrl> => {
  const raw = input.trim()
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return Either.left(new InvalidAgentUrl({ url: input, reason: "not an absolute URL" }))
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    return Either.left(new InvalidAgentUrl({ url: input, reason: `unsupported scheme ${url.protocol}` }))
  }
  if (url.username !== "" || url.password !== "") {
    return Either.left(
      new InvalidAgentUrl({ url: input, reason: "credentials in the URL are not allowed; use relay auth set" })
    )
  }
  // WHATWG URL already lower-cases scheme and host and drops the scheme's default port.
  const path = url.pathname.replace(/\/+$/, "")
  return Either.right(`${url.protocol}//${url.host}${path}${url.search}`)
}

/** `normalizeAgentUrl` as an Effect: the canonical key, or the typed error. */
export const canonicalAgentUrl = (input: string): Effect.Effect<string, InvalidAgentUrl> =>
  Either.match(normalizeAgentUrl(input), { onLeft: Effect.fail, onRight: Effect.succeed })

/** Shows enough of a secret to recognise it (its last 4 characters), never enough to use it. */
export const maskSecret = (secret: string): string => (secret.length >= 16 ? `…${secret.slice(-4)}` : "****")

/** A URL fit to print: user info and query (where tokens hide) replaced by "***". */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const userInfo = parsed.username !== "" || parsed.password !== "" ? "***@" : ""
    const path = parsed.pathname === "/" ? "" : parsed.pathname
    return `${parsed.protocol}//${userInfo}${parsed.host}${path}${parsed.search === "" ? "" : "?***"}`
  } catch {
    return "(not a URL)"
  }
}

/** Credentials as they may be shown: kind, header, masked secret. */
export interface MaskedCredentials {
  readonly auth_type: Credentials["kind"]
  readonly masked: string
  readonly header: string
}

export const maskCredentials = (credentials: Credentials): MaskedCredentials =>
  credentials.kind === "bearer"
    ? { auth_type: "bearer", masked: maskSecret(credentials.token), header: "Authorization" }
    : { auth_type: "api_key", masked: maskSecret(credentials.key), header: credentials.header }

/** A session as listings show it: ids, state and only whether credentials exist. */
export interface SessionSummary {
  readonly agent_url: string
  readonly context_id: string | null
  readonly task_id: string | null
  readonly last_state: string | null
  readonly has_credentials: boolean
  readonly updated_at: string | null
}

export const summarize = (record: SessionRecord): SessionSummary => ({
  agent_url: record.agent_url,
  context_id: record.context_id ?? null,
  task_id: record.task_id ?? null,
  last_state: record.last_state ?? null,
  has_credentials: record.credentials !== undefined,
  updated_at: record.updated_at
})

/** Applies a patch; `undefined` keeps a field, `null` removes it. */
export const applyPatch = (record: SessionRecord, patch: SessionPatch, now: string): SessionRecord => {
  const next: { -readonly [K in keyof SessionRecord]: SessionRecord[K] } = { ...record, updated_at: now }
  for (const field of ["context_id", "task_id", "last_state"] as const) {
    const value = patch[field]
    if (value === null) delete next[field]
    else if (value !== undefined) next[field] = value
  }
  return next
}

/** What an agent with nothing saved looks like in listings. */
export const emptySummary = (agentUrl: string): SessionSummary => ({
  agent_url: agentUrl,
  context_id: null,
  task_id: null,
  last_state: null,
  has_credentials: false,
  updated_at: null
})

export const newRecord = (agentUrl: string, now: string): SessionRecord => ({ agent_url: agentUrl, updated_at: now })
