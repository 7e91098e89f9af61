/**
 * Agents by name, the part every door loads: telling a name from a URL and resolving it (each door
 * does so once, where it decodes the agent URL), and listing, showing, choosing and removing names.
 * Nothing here contacts an agent; adding and refreshing, which read cards, are agentCards.ts.
 */
import { Config, Effect, Option } from "effect"
import { type AgentBook, type AgentRecord, canonicalName, looksLikeName, type SkillSummary, UnknownAgent } from "../domain/agents.js"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import { InvalidEnvironment, InvalidInput } from "../domain/errors.js"
import type { SessionRecord } from "../domain/session.js"
import { SessionStore } from "../services/SessionStore.js"

/** One named agent as every door shows it: what to choose it by, and what relay keeps for its URL. */
export interface AgentView {
  readonly name: string
  readonly url: string
  readonly is_default: boolean
  /** The user's description, else the card's. */
  readonly description: string | null
  readonly card_name: string | null
  readonly skills: ReadonlyArray<SkillSummary>
  /** Skills the card listed past what relay keeps. */
  readonly skills_omitted: number
  readonly default_input_modes: ReadonlyArray<string>
  readonly default_output_modes: ReadonlyArray<string>
  /** Where the card is, when it is off the well-known paths (saved with the URL's session). */
  readonly card_url: string | null
  readonly has_credentials: boolean
  /** When the card was last read (null: never, e.g. it could not be read since). */
  readonly card_read_at: string | null
  readonly added_at: string
}

export interface AgentList {
  readonly count: number
  readonly default_agent: string | null
  readonly agents: ReadonlyArray<AgentView>
}

export const viewOf = (name: string, record: AgentRecord, book: AgentBook, session: SessionRecord | undefined): AgentView => ({
  name,
  url: record.url,
  is_default: book.default_agent === name,
  description: record.description ?? record.card?.description ?? null,
  card_name: record.card?.name ?? null,
  skills: record.card?.skills ?? [],
  skills_omitted: record.card?.skills_omitted ?? 0,
  default_input_modes: record.card?.default_input_modes ?? [],
  default_output_modes: record.card?.default_output_modes ?? [],
  card_url: session?.card_url ?? null,
  has_credentials: session?.credentials !== undefined,
  card_read_at: record.card_read_at ?? null,
  added_at: record.added_at
})

/** The record of a name, or UnknownAgent. */
export const recordOf = (book: AgentBook, name: string): Effect.Effect<AgentRecord, UnknownAgent> => {
  const record = book.agents[canonicalName(name)]
  return record === undefined ? Effect.fail(new UnknownAgent({ name: canonicalName(name) })) : Effect.succeed(record)
}

/** Each saved session by its agent URL, for the views. */
const sessionsByUrl = Effect.flatMap(
  SessionStore,
  (store) => Effect.map(store.list, (records) => new Map(records.map((record) => [record.agent_url, record] as const)))
)

/** The view of one name, with what the store keeps for its URL. */
const viewIn = (book: AgentBook, name: string) =>
  Effect.flatMap(
    recordOf(book, name),
    (record) => Effect.map(sessionsByUrl, (sessions) => viewOf(canonicalName(name), record, book, sessions.get(record.url)))
  )

/**
 * Listings in code-unit order of the name (the same in every locale; no localeCompare, whose first
 * call loads ICU's collation).
 */
const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0)

export const listAgents = Effect.fn("listAgents")(function*() {
  const book = yield* Effect.flatMap(SessionStore, (store) => store.agents)
  const sessions = yield* sessionsByUrl
  const agents = Object.keys(book.agents).sort(byName).map((name) =>
    viewOf(name, book.agents[name]!, book, sessions.get(book.agents[name]!.url))
  )
  return { count: agents.length, default_agent: book.default_agent ?? null, agents } satisfies AgentList
})

export const showAgent = Effect.fn("showAgent")(function*(name: string) {
  const store = yield* SessionStore
  return yield* viewIn(yield* store.agents, name)
})

/** The default agent of commands given none: `relay agent use`. */
export const useAgent = Effect.fn("useAgent")(function*(name: string) {
  const store = yield* SessionStore
  const chosen = canonicalName(name)
  yield* store.updateAgents((book) =>
    Effect.as(recordOf(book, chosen), [undefined, book.default_agent === chosen ? book : { ...book, default_agent: chosen }] as const)
  )
  return yield* viewIn(yield* store.agents, chosen)
})

export interface RemoveResult {
  readonly name: string
  readonly removed: boolean
  /** The URL the name stood for (null when there was no such name); its session and credentials stay. */
  readonly url: string | null
}

/** Forgets a name (and the default, when it was); the URL's session and credentials stay. Removing what is not there is no error. */
export const removeAgent = Effect.fn("removeAgent")(function*(name: string) {
  const store = yield* SessionStore
  const gone = canonicalName(name)
  return yield* store.updateAgents((book): Effect.Effect<readonly [RemoveResult, AgentBook]> => {
    const record = book.agents[gone]
    if (record === undefined) return Effect.succeed([{ name: gone, removed: false, url: null }, book])
    const { [gone]: _removed, ...agents } = book.agents
    return Effect.succeed([
      { name: gone, removed: true, url: record.url },
      { agents, default_agent: book.default_agent === gone ? undefined : book.default_agent }
    ])
  })
})

// ---------------------------------------------------------------------------
// Resolving what a door was given

/** A name's URL, or the URL itself: a bare word is a name, anything else must be an http(s) URL. */
export const agentUrlOf = (given: string) => {
  const text = given.trim()
  if (!looksLikeName(text)) return canonicalAgentUrl(given)
  return Effect.flatMap(
    Effect.flatMap(SessionStore, (store) => store.agents),
    (book) => Effect.flatMap(recordOf(book, text), (record) => canonicalAgentUrl(record.url))
  )
}

/** The URL of `text` when it is a saved name; none when it is anything else (a URL, a file, a name never saved). */
export const savedAgentUrl = (text: string) =>
  looksLikeName(text.trim())
    ? Effect.map(Effect.flatMap(SessionStore, (store) => store.agents), (book) =>
      Option.fromNullable(book.agents[canonicalName(text.trim())]?.url))
    : Effect.succeed(Option.none<string>())

const noAgentGiven = () =>
  new InvalidInput({
    reason: "No agent given",
    suggestion: "Pass --url with the agent's name or URL (or --agent NAME), set RELAY_AGENT, or choose a default with relay agent use NAME"
  })

const relayAgentVariable = Config.option(Config.nonEmptyString("RELAY_AGENT")).pipe(
  Effect.mapError((error) => new InvalidEnvironment({ reason: String(error) }))
)

/**
 * The agent a command is about, as its canonical URL: the name or URL given; given none,
 * RELAY_AGENT (a name or a URL), else the default `relay agent use` chose, else a usage error.
 */
export const resolveAgentUrl = (given: string | undefined) =>
  Effect.gen(function*() {
    if (given !== undefined) return yield* agentUrlOf(given)
    const fromEnvironment = yield* relayAgentVariable
    if (Option.isSome(fromEnvironment)) return yield* agentUrlOf(fromEnvironment.value)
    const book = yield* Effect.flatMap(SessionStore, (store) => store.agents)
    if (book.default_agent === undefined) return yield* noAgentGiven()
    return yield* agentUrlOf(book.default_agent)
  })
