/**
 * Credential use cases: save, show (masked) and clear the secret relay sends to an agent.
 */
import { Effect, Option } from "effect"
import type { AgentUrl } from "../domain/agentUrl.js"
import { InvalidInput } from "../domain/errors.js"
import { act } from "../domain/hints.js"
import { type Credentials, DEFAULT_API_KEY_HEADER, maskCredentials, type MaskedCredentials } from "../domain/session.js"
import { SessionStore } from "../services/SessionStore.js"

export interface SetCredentialsInput {
  readonly agentUrl: AgentUrl
  readonly bearerToken?: string | undefined
  readonly apiKey?: string | undefined
  readonly apiKeyHeader?: string | undefined
}

export interface SetCredentialsResult {
  readonly agent_url: string
  readonly auth_type: Credentials["kind"]
}

// RFC 9110 token characters: anything else cannot be an HTTP header name.
const HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/
// A secret with a line break would let it smuggle extra headers into requests.
const HEADER_VALUE = /^[^\r\n\0]+$/

const checkSecret = (what: string, value: string) =>
  HEADER_VALUE.test(value) && value.trim() === value
    ? Effect.succeed(value)
    : Effect.fail(
      new InvalidInput({
        reason: `The ${what} is empty, has surrounding spaces or contains a line break`,
        suggestion: `Pass the ${what} exactly as the agent issued it`
      })
    )

const checkHeaderName = (header: string) =>
  HEADER_NAME.test(header)
    ? Effect.succeed(header)
    : Effect.fail(
      new InvalidInput({
        reason: `"${header}" is not a valid HTTP header name`,
        suggestion: `Use letters, digits and dashes, for example ${DEFAULT_API_KEY_HEADER}`
      })
    )

/** Builds credentials from optional inputs: bearer wins when both are given (SPEC §4.1 rule 4). */
export const credentialsFrom = (input: Omit<SetCredentialsInput, "agentUrl">) => {
  if (input.bearerToken !== undefined) {
    return Effect.map(checkSecret("bearer token", input.bearerToken), (token): Credentials => ({ kind: "bearer", token }))
  }
  if (input.apiKey !== undefined) {
    return Effect.map(
      Effect.all([checkSecret("API key", input.apiKey), checkHeaderName(input.apiKeyHeader ?? DEFAULT_API_KEY_HEADER)]),
      ([key, header]): Credentials => ({ kind: "api_key", key, header })
    )
  }
  return Effect.fail(
    new InvalidInput({
      reason: "A bearer token or an API key is required",
      suggestion: ["Give one: ", act("GiveCredentials"), "."]
    })
  )
}

export const setCredentials = Effect.fn("setCredentials")(function*(input: SetCredentialsInput) {
  const store = yield* SessionStore
  const credentials = yield* credentialsFrom(input)
  yield* store.setCredentials(input.agentUrl, credentials)
  return { agent_url: input.agentUrl, auth_type: credentials.kind } satisfies SetCredentialsResult
})

export interface ShowCredentialsResult {
  readonly agent_url: string
  readonly credentials: MaskedCredentials | null
}

export const showCredentials = Effect.fn("showCredentials")(function*(agentUrl: AgentUrl) {
  const store = yield* SessionStore
  const credentials = yield* store.getCredentials(agentUrl)
  return {
    agent_url: agentUrl,
    credentials: Option.match(credentials, { onNone: () => null, onSome: maskCredentials })
  } satisfies ShowCredentialsResult
})

export const clearCredentials = Effect.fn("clearCredentials")(function*(agentUrl: AgentUrl) {
  const store = yield* SessionStore
  return { agent_url: agentUrl, cleared: yield* store.clearCredentials(agentUrl) }
})
