/**
 * Session use cases: list, show and clear the saved conversation state of agents, and the card
 * URL saved with it. Clearing never touches credentials (SPEC §4.1 rule 3); `relay auth clear` does
 * that. The card URL stays too: it says where the agent is, not where the conversation stands.
 */
import { Effect, Option } from "effect"
import type { AgentUrl } from "../domain/agentUrl.js"
import { emptySummary, type SessionSummary, summarize } from "../domain/session.js"
import { SessionStore } from "../services/SessionStore.js"

export interface SessionList {
  readonly count: number
  readonly sessions: ReadonlyArray<SessionSummary>
}

export const listSessions = Effect.fn("listSessions")(function*() {
  const store = yield* SessionStore
  const records = yield* store.list
  return { count: records.length, sessions: records.map(summarize) } satisfies SessionList
})

/** The saved state of one agent; an agent never seen gives an empty session, not an error. */
export const showSession = Effect.fn("showSession")(function*(agentUrl: AgentUrl) {
  const store = yield* SessionStore
  const record = yield* store.get(agentUrl)
  return Option.match(record, { onNone: () => emptySummary(agentUrl), onSome: summarize })
})

/** Clearing all sessions names no agent: the field is left out, not null (README, JSON shapes). */
export type ClearResult =
  & ({ readonly all: true } | {
    readonly all: false
    /** The agent whose session was cleared. */
    readonly agent_url: string
  })
  & {
    /** How many sessions had state that is now gone. */
    readonly cleared: number
    /** Whether saved credentials remain (of that agent, or of any with --all): false when there were none. */
    readonly credentials_kept: boolean
  }

export const clearSessions = Effect.fn("clearSessions")(function*(agentUrl: AgentUrl | undefined) {
  const store = yield* SessionStore
  if (agentUrl === undefined) {
    const cleared = yield* store.clearAll
    const kept = (yield* store.list).some((record) => record.credentials !== undefined)
    return { all: true, cleared, credentials_kept: kept } satisfies ClearResult
  }
  const cleared = yield* store.clear(agentUrl)
  const kept = Option.exists(yield* store.get(agentUrl), (record) => record.credentials !== undefined)
  return { all: false, agent_url: agentUrl, cleared: cleared ? 1 : 0, credentials_kept: kept } satisfies ClearResult
})

/** The card URL saved with the agent's session, if any. */
export const savedCardUrlOf = (agentUrl: AgentUrl) =>
  Effect.map(Effect.flatMap(SessionStore, (store) => store.get(agentUrl)), (record) => Option.getOrUndefined(record)?.card_url)

/** Saves where the agent's card is, for every later call (only once a card was found there). */
export const saveCardUrl = (agentUrl: AgentUrl, cardUrl: string) =>
  Effect.asVoid(Effect.flatMap(SessionStore, (store) => store.update(agentUrl, { card_url: cardUrl })))
