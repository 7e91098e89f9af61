/**
 * The agent URL as relay keys and addresses it. Each door decodes the user's `--url` / `agent_url`
 * once (normalizeAgentUrl); below the doors only the branded, canonical form travels, so no
 * program or service canonicalises again.
 */
import { Effect, Either, Schema } from "effect"
import { InvalidAgentUrl } from "./errors.js"

/** A canonical agent URL (see normalizeAgentUrl); the only way to make one is to normalise. */
export const AgentUrl = Schema.String.pipe(Schema.brand("AgentUrl"))
export type AgentUrl = typeof AgentUrl.Type

/**
 * The key of a session: lower-case scheme and host, default port dropped, trailing slash
 * dropped, fragment dropped. `http://Agent.Example:80/a2a/` and `http://agent.example/a2a`
 * are the same agent.
 */
export const normalizeAgentUrl = (input: string): Either.Either<AgentUrl, InvalidAgentUrl> => {
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
  return Either.right(AgentUrl.make(`${url.protocol}//${url.host}${path}${url.search}`))
}

/** `normalizeAgentUrl` as an Effect: the canonical URL, or the typed error. */
export const canonicalAgentUrl = (input: string): Effect.Effect<AgentUrl, InvalidAgentUrl> =>
  Either.match(normalizeAgentUrl(input), { onLeft: Effect.fail, onRight: Effect.succeed })
