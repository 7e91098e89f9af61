/**
 * Session records: one per agent, keyed by the normalised agent URL, shared by every door.
 */
import { Schema } from "effect"
import { type AgentBook, AgentRecord } from "./agents.js"
import type { AgentUrl } from "./agentUrl.js"
import { maskSecret } from "./secrets.js"

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

/** What relay sends on a request: a bearer token or an API key. */
export const Credentials = Schema.Union(BearerCredentials, ApiKeyCredentials)
export type Credentials = typeof Credentials.Type

/** How OAuth tokens were obtained; a re-login repeats the same flow. */
export const OAuthFlow = Schema.Literal("client_credentials", "authorization_code", "device_code")
export type OAuthFlow = typeof OAuthFlow.Type

/**
 * Tokens relay obtained itself (relay auth login). The access token is sent as a bearer token;
 * the rest is what a refresh, a revocation or a repeat of the login needs, the client secret
 * included when one was given (client credentials renew with it; it is never shown).
 */
export const OAuthCredentials = Schema.Struct({
  kind: Schema.Literal("oauth"),
  flow: OAuthFlow,
  access_token: Schema.String,
  refresh_token: Schema.optional(Schema.String),
  /** ISO time the access token expires, when the server said. */
  expires_at: Schema.optional(Schema.String),
  scopes: Schema.Array(Schema.String),
  issuer: Schema.String,
  token_endpoint: Schema.String,
  revocation_endpoint: Schema.optional(Schema.String),
  client_id: Schema.String,
  client_secret: Schema.optional(Schema.String)
})
export type OAuthCredentials = typeof OAuthCredentials.Type

/** Whether relay can obtain new tokens without the user: a refresh token, or client credentials' secret. */
export const isRenewable = (credentials: OAuthCredentials) =>
  credentials.refresh_token !== undefined || (credentials.flow === "client_credentials" && credentials.client_secret !== undefined)

/** What the store keeps per agent: credentials to send, or OAuth tokens to send and renew. */
export const SavedCredentials = Schema.Union(BearerCredentials, ApiKeyCredentials, OAuthCredentials)
export type SavedCredentials = typeof SavedCredentials.Type

export const SessionRecord = Schema.Struct({
  agent_url: Schema.String,
  /**
   * Where the agent's card is, when the user gave it (--card-url) and a card was found there:
   * every later call goes there instead of the well-known paths. Optional: older files lack it.
   */
  card_url: Schema.optional(Schema.String),
  context_id: Schema.optional(Schema.String),
  task_id: Schema.optional(Schema.String),
  last_state: Schema.optional(Schema.String),
  credentials: Schema.optional(SavedCredentials),
  updated_at: Schema.String
})
export type SessionRecord = typeof SessionRecord.Type

/**
 * Version 2 added OAuth credentials, version 3 agents by name. A file is written in the oldest
 * version that holds what it carries (formatVersionOf): version 1 files are read as they are (a
 * subset) and written back as version 2, and a store that names no agent stays version 2, so an
 * older relay keeps reading it; one that names agents is version 3, which an older relay refuses
 * as too new instead of dropping the names when it writes.
 */
export const STORE_FORMAT_VERSION = 3 as const

/** The whole sessions.json file. `version` lets a later relay migrate or refuse. */
export const StoreFile = Schema.Struct({
  version: Schema.Literal(1, 2, STORE_FORMAT_VERSION),
  sessions: Schema.Record({ key: Schema.String, value: SessionRecord }),
  /** Agents by name (absent while there are none). */
  agents: Schema.optional(Schema.Record({ key: Schema.String, value: AgentRecord })),
  /** The name `relay agent use` chose: the agent of commands given none. */
  default_agent: Schema.optional(Schema.String)
})
export type StoreFile = typeof StoreFile.Type

/** The version a file is written in: the oldest that holds its content. */
export const formatVersionOf = (file: StoreFile): 2 | typeof STORE_FORMAT_VERSION =>
  file.agents === undefined && file.default_agent === undefined ? 2 : STORE_FORMAT_VERSION

/** The names of a store, and its default. */
export const agentBookOf = (file: StoreFile): AgentBook => ({ agents: file.agents ?? {}, default_agent: file.default_agent })

/** The store with `book` as its names; fields with nothing in them are left out (the file stays version 2). */
export const withAgentBook = (file: StoreFile, book: AgentBook): StoreFile => {
  const { agents: _agents, default_agent: _default, ...rest } = file
  return {
    ...rest,
    ...(Object.keys(book.agents).length === 0 ? {} : { agents: book.agents }),
    ...(book.default_agent === undefined ? {} : { default_agent: book.default_agent })
  }
}

export const emptyStore = (): StoreFile => ({ version: 2, sessions: {} })

/** The ids and state a conversation leaves behind, and where the card is; `null` clears a field. */
export interface SessionPatch {
  readonly card_url?: string | null
  readonly context_id?: string | null
  readonly task_id?: string | null
  readonly last_state?: string | null
}

/** Credentials as they may be shown: kind, header, masked secret; OAuth adds flow, scopes and expiry. */
export interface MaskedCredentials {
  readonly auth_type: SavedCredentials["kind"]
  readonly masked: string
  readonly header: string
  readonly flow?: OAuthFlow
  readonly scopes?: ReadonlyArray<string>
  readonly expires_at?: string | null
  readonly refreshable?: boolean
  readonly client_id?: string
  readonly issuer?: string
}

export const maskCredentials = (credentials: SavedCredentials): MaskedCredentials => {
  switch (credentials.kind) {
    case "bearer":
      return { auth_type: "bearer", masked: maskSecret(credentials.token), header: "Authorization" }
    case "api_key":
      return { auth_type: "api_key", masked: maskSecret(credentials.key), header: credentials.header }
    case "oauth":
      return {
        auth_type: "oauth",
        masked: maskSecret(credentials.access_token),
        header: "Authorization",
        flow: credentials.flow,
        scopes: credentials.scopes,
        expires_at: credentials.expires_at ?? null,
        refreshable: isRenewable(credentials),
        client_id: credentials.client_id,
        issuer: credentials.issuer
      }
  }
}

/** A session as listings show it: ids, state and only whether credentials exist. */
export interface SessionSummary {
  readonly agent_url: string
  readonly card_url: string | null
  readonly context_id: string | null
  readonly task_id: string | null
  readonly last_state: string | null
  readonly has_credentials: boolean
  readonly updated_at: string | null
}

export const summarize = (record: SessionRecord): SessionSummary => ({
  agent_url: record.agent_url,
  card_url: record.card_url ?? null,
  context_id: record.context_id ?? null,
  task_id: record.task_id ?? null,
  last_state: record.last_state ?? null,
  has_credentials: record.credentials !== undefined,
  updated_at: record.updated_at
})

/** Applies a patch; `undefined` keeps a field, `null` removes it. */
export const applyPatch = (record: SessionRecord, patch: SessionPatch, now: string): SessionRecord => {
  const next: { -readonly [K in keyof SessionRecord]: SessionRecord[K] } = { ...record, updated_at: now }
  for (const field of ["card_url", "context_id", "task_id", "last_state"] as const) {
    const value = patch[field]
    if (value === null) delete next[field]
    else if (value !== undefined) next[field] = value
  }
  return next
}

/** What an agent with nothing saved looks like in listings. */
export const emptySummary = (agentUrl: AgentUrl): SessionSummary => ({
  agent_url: agentUrl,
  card_url: null,
  context_id: null,
  task_id: null,
  last_state: null,
  has_credentials: false,
  updated_at: null
})

export const newRecord = (agentUrl: AgentUrl, now: string): SessionRecord => ({ agent_url: agentUrl, updated_at: now })
