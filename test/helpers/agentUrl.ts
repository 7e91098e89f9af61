// Tests stand where a door stands: they decode the agent URLs they pass to programs and services.
import { Either } from "effect"
import { type AgentUrl, normalizeAgentUrl } from "../../src/domain/agentUrl.js"

/** The canonical AgentUrl of a URL the test knows to be valid (throws otherwise). */
export const agentUrlOf = (url: string): AgentUrl => Either.getOrThrow(normalizeAgentUrl(url))
