/**
 * Agents by name, the part that reads cards: adding a name (the card fetched, validated and
 * summarised; issues warn, never refuse), reading the cards again, and listing (and adding) the
 * agents a domain's AI catalog names. Loaded by the commands and tools that do one of these, with
 * the card validator; agentNames.ts is the part every door loads.
 */
import { Clock, Effect, Either } from "effect"
import { hostOfUrl, originOfUrl } from "../a2a/hosts.js"
import { validateCard } from "../a2a/validation/cardValidation.js"
import { isObject, type JsonObject } from "../a2a/validation/context.js"
import {
  type AgentBook,
  AgentNameTaken,
  type AgentRecord,
  canonicalName,
  cardAgentUrl,
  freeName,
  InvalidAgentName,
  InvalidCatalog,
  looksLikeName,
  slugOf,
  summarizeCard
} from "../domain/agents.js"
import { type AgentUrl, normalizeAgentUrl } from "../domain/agentUrl.js"
import { isDescribed } from "../domain/errors.js"
import type { AddressClass } from "../domain/ipAddresses.js"
import { MAX_CATALOG_AGENTS } from "../domain/limits.js"
import { answerExcerpt } from "../domain/terminalText.js"
import { A2aClient, cardCandidates, type CardJson, type Target } from "../services/A2aClient.js"
import { HostAddressing } from "../services/a2aClient/interfaceHosts.js"
import { SessionStore } from "../services/SessionStore.js"
import { type AgentView, recordOf, showAgent } from "./agentNames.js"
import { type AgentAccess, resolveTarget, withAgentTarget } from "./agentTarget.js"
import { saveCardUrl, savedCardUrlOf } from "./sessions.js"

const nowIso = Effect.map(Clock.currentTimeMillis, (ms) => new Date(ms).toISOString())

/** What the validator said of the card, in short: `relay card validate` lists every issue. */
export interface CardCheck {
  readonly valid: boolean
  readonly error_count: number
  readonly warning_count: number
  readonly issues: ReadonlyArray<{ readonly code: string; readonly severity: string; readonly path: string; readonly message: string }>
}

const ISSUES_SHOWN = 5

const cardCheckOf = (json: unknown): CardCheck => {
  const { valid, issues } = validateCard(json)
  return {
    valid,
    error_count: issues.filter((issue) => issue.severity === "error").length,
    warning_count: issues.filter((issue) => issue.severity === "warning").length,
    issues: issues.filter((issue) => issue.severity !== "info").slice(0, ISSUES_SHOWN)
      .map(({ code, severity, path, message }) => ({ code, severity, path, message: answerExcerpt(message) }))
  }
}

/** A card as found: its JSON, where it was, and the URL of the agent it describes. */
interface FoundCard {
  readonly agentUrl: AgentUrl
  readonly cardUrl: string
  readonly json: unknown
}

/** The canonical form of the agent URL a card names for itself (relative to where the card was), if it names one. */
const ownAgentUrl = (json: unknown, cardUrl: string): AgentUrl | undefined => {
  const own = cardAgentUrl(json)
  if (own === undefined) return undefined
  try {
    return Either.getOrUndefined(normalizeAgentUrl(new URL(own, cardUrl).href))
  } catch {
    return undefined
  }
}

const namesCardFile = (url: string) => /\.json$/i.test(new URL(url).pathname)

/**
 * The agent's card: at the card URL given (or saved with the URL's session), else at the well-known
 * paths, at the root and then under the URL's path. A URL that is itself a card file (`….json`) is
 * the card, and its agent is where the card's own URL says.
 */
const findCard = (access: AgentAccess) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const { result, target } = yield* withAgentTarget(access, (target) => client.fetchCardJson(target))
    const own = target.cardUrl === undefined && namesCardFile(access.agentUrl) ? ownAgentUrl(result.json, result.cardUrl) : undefined
    return { agentUrl: own ?? access.agentUrl, cardUrl: result.cardUrl, json: result.json } satisfies FoundCard
  })

/** A card off the agent's well-known paths is saved with its session, for every later call from either door. */
const keepCardUrl = (agentUrl: AgentUrl, cardUrl: string) =>
  Effect.gen(function*() {
    if (cardCandidates({ agentUrl }).includes(cardUrl)) return
    if ((yield* savedCardUrlOf(agentUrl)) !== cardUrl) yield* saveCardUrl(agentUrl, cardUrl)
  })

const nameOf = (given: string) => {
  const text = given.trim()
  return looksLikeName(text) ? Effect.succeed(canonicalName(text)) : Effect.fail(new InvalidAgentName({ name: given }))
}

const ensureFree = (book: AgentBook, name: string) => {
  const taken = book.agents[name]
  return taken === undefined ? Effect.void : Effect.fail(new AgentNameTaken({ name, url: taken.url }))
}

const withAgent = (book: AgentBook, name: string, record: AgentRecord): AgentBook => ({
  ...book,
  agents: { ...book.agents, [name]: record }
})

export interface AddedAgent {
  readonly agent: AgentView
  readonly card_check: CardCheck
}

export interface AddAgentInput extends AgentAccess {
  readonly name: string
  /** The user's own words for the agent (shown instead of the card's description). */
  readonly description?: string | undefined
}

export const addAgent = Effect.fn("addAgent")(function*(input: AddAgentInput) {
  const name = yield* nameOf(input.name)
  const store = yield* SessionStore
  // A taken name is refused before anything is fetched; checked again under the lock when saving.
  yield* ensureFree(yield* store.agents, name)
  const found = yield* findCard(input)
  yield* keepCardUrl(found.agentUrl, found.cardUrl)
  const now = yield* nowIso
  const record: AgentRecord = {
    url: found.agentUrl,
    ...(input.description === undefined || input.description === "" ? {} : { description: input.description }),
    card: summarizeCard(found.json),
    card_read_at: now,
    added_at: now
  }
  yield* store.updateAgents((book) => Effect.as(ensureFree(book, name), [undefined, withAgent(book, name, record)] as const))
  return { agent: yield* showAgent(name), card_check: cardCheckOf(found.json) } satisfies AddedAgent
})

// ---------------------------------------------------------------------------
// Reading cards again

export interface RefreshOutcome {
  readonly name: string
  readonly url: string
  readonly ok: boolean
  readonly card_name: string | null
  readonly skill_count: number
  readonly error: { readonly code: string; readonly message: string } | null
}

export interface RefreshResult {
  readonly count: number
  readonly failed: number
  readonly agents: ReadonlyArray<RefreshOutcome>
}

const failureOf = (error: unknown) =>
  isDescribed(error) ? { code: error.code, message: error.message } : { code: "internal_error", message: String(error) }

/** Reads one name's card again and keeps its summary (unless the name was removed or moved meanwhile). */
const refreshOne = (name: string, record: AgentRecord) =>
  Effect.gen(function*() {
    const agentUrl = yield* Either.match(normalizeAgentUrl(record.url), { onLeft: Effect.fail, onRight: Effect.succeed })
    const found = yield* findCard({ agentUrl })
    yield* keepCardUrl(agentUrl, found.cardUrl)
    const card = summarizeCard(found.json)
    const now = yield* nowIso
    const store = yield* SessionStore
    yield* store.updateAgents((book) => {
      const current = book.agents[name]
      return Effect.succeed(
        [undefined, current?.url === record.url ? withAgent(book, name, { ...current, card, card_read_at: now }) : book] as const
      )
    })
    return {
      name,
      url: record.url,
      ok: true,
      card_name: card.name,
      skill_count: card.skills.length + card.skills_omitted,
      error: null
    } satisfies RefreshOutcome
  }).pipe(Effect.catchAll((error) =>
    Effect.succeed(
      {
        name,
        url: record.url,
        ok: false,
        card_name: record.card?.name ?? null,
        skill_count: 0,
        error: failureOf(error)
      } satisfies RefreshOutcome
    )
  ))

/** Reads the card of one name, or of every one, again; a card that cannot be read keeps its old summary. */
export const refreshAgents = Effect.fn("refreshAgents")(function*(name: string | undefined) {
  const book = yield* Effect.flatMap(SessionStore, (store) => store.agents)
  const names = name === undefined ? Object.keys(book.agents).sort() : [canonicalName(name.trim())]
  if (name !== undefined) yield* recordOf(book, names[0]!)
  const agents = yield* Effect.forEach(names, (each) => refreshOne(each, book.agents[each]!), { concurrency: 4 })
  return { count: agents.length, failed: agents.filter((outcome) => !outcome.ok).length, agents } satisfies RefreshResult
})

// ---------------------------------------------------------------------------
// AI catalogs (a proposal, not yet final: https://github.com/Agent-Card/ai-catalog)

export const CATALOG_PATH = "/.well-known/ai-catalog.json"
const A2A_CARD_TYPE = "application/a2a-agent-card+json"
const CATALOG_MAJOR = 1

export interface DiscoveredAgent {
  /** The catalog's identifier of the entry. */
  readonly identifier: string | null
  /** The entry's display name, else the card's name. */
  readonly card_name: string | null
  readonly description: string | null
  readonly agent_url: string | null
  /** Where the card was read (null when the catalog holds it inline). */
  readonly card_url: string | null
  readonly skills: ReadonlyArray<string>
  /** The name it has, or got with --add. */
  readonly name: string | null
  readonly added: boolean
  /** Why it cannot be used (its card could not be read, names no agent URL, …). */
  readonly error: string | null
}

export interface Discovery {
  readonly catalog_url: string
  readonly count: number
  readonly agents: ReadonlyArray<DiscoveredAgent>
  /** A2A entries past the MAX_CATALOG_AGENTS read. */
  readonly not_read: number
  /** Entries of other kinds (MCP servers, skills, …), left out. */
  readonly other_entries: number
}

type Json = JsonObject
const text = (value: unknown) => (typeof value === "string" ? value : null)

/** The catalog's address: the URL itself when it names a JSON file, else the well-known path of its origin. */
const catalogUrlOf = (url: AgentUrl) => (namesCardFile(url) ? url : `${new URL(url).origin}${CATALOG_PATH}`)

/** The A2A entries of a catalog, checked as the proposal says (specVersion, entries). */
const entriesOf = (catalogUrl: string, json: unknown) => {
  const invalid = (reason: string) => Effect.fail(new InvalidCatalog({ url: catalogUrl, reason }))
  if (!isObject(json)) return invalid("it is not a JSON object")
  const version = text(json["specVersion"])
  if (version === null) return invalid("it has no specVersion")
  if (Number.parseInt(version, 10) > CATALOG_MAJOR) {
    return invalid(`specVersion ${answerExcerpt(version)} is newer than relay reads (${CATALOG_MAJOR}.x)`)
  }
  const entries = json["entries"]
  if (!Array.isArray(entries)) return invalid("it has no entries list")
  const agents = entries.filter((entry): entry is Json => isObject(entry) && entry["type"] === A2A_CARD_TYPE)
  return Effect.succeed({ agents, others: entries.length - agents.length })
}

/**
 * Whether a card a catalog names may be fetched: on the catalog's origin, or on a host that reaches
 * only the classes of address the catalog's host was fetched from (a public catalog cannot send
 * relay to this machine, the local network or a metadata service; the rule of card interfaces,
 * README Security). Said here, to give the reason; the fetch itself holds every connection to
 * those classes (Target.cardReach), whatever the card host's DNS answers by then.
 */
const mayFetch = (catalog: CardJson, cardUrl: URL) =>
  Effect.gen(function*() {
    if (cardUrl.origin === new URL(catalog.cardUrl).origin) return undefined
    const addressing = yield* HostAddressing
    const catalogReach = catalog.reach
    const cardReach = yield* Effect.promise(() =>
      addressing.cardHostClasses(hostOfUrl(cardUrl.href) ?? "").catch((): ReadonlyArray<AddressClass> => [])
    )
    const outside = cardReach.find((kind) => !catalogReach.includes(kind))
    return cardReach.length === 0
      ? `${cardUrl.hostname} does not resolve`
      : outside === undefined
      ? undefined
      : `its card's host is a ${outside} address, the catalog's is not: not fetched (add it by its URL to vouch for it)`
  })

/** The card of a catalog entry: inline (`data`) or at its `url`; a reason when it cannot be had. */
const entryCard = (target: Target, catalog: CardJson, entry: Json) =>
  Effect.gen(function*() {
    if (isObject(entry["data"])) return Either.right({ json: entry["data"] as unknown, cardUrl: null })
    const url = text(entry["url"])
    if (url === null) return Either.left("the entry has neither url nor data")
    let cardUrl: URL
    try {
      cardUrl = new URL(url, catalog.cardUrl)
    } catch {
      return Either.left("its url is not a URL")
    }
    if (cardUrl.protocol !== "http:" && cardUrl.protocol !== "https:") return Either.left("its url is not http(s)")
    const refused = yield* mayFetch(catalog, cardUrl)
    if (refused !== undefined) return Either.left(refused)
    const client = yield* A2aClient
    const fetched = yield* Effect.either(client.fetchCardJson({ ...target, cardUrl: cardUrl.href, cardReach: catalog.reach }))
    return Either.map(
      Either.mapLeft(fetched, (error) => error.message),
      (found) => ({ json: found.json, cardUrl: found.cardUrl as string | null })
    )
  })

/** The last segment of an identifier (`urn:air:example.com:a2a:research` is research), the name of last resort. */
const identifierTail = (identifier: string | null) => identifier?.split(/[:/]/).filter((part) => part !== "").at(-1) ?? null

interface Candidate {
  readonly view: DiscoveredAgent
  readonly found?: { readonly agentUrl: AgentUrl; readonly cardUrl: string | null; readonly json: unknown }
}

const candidateOf = (target: Target, catalog: CardJson, entry: Json) =>
  Effect.gen(function*() {
    const identifier = text(entry["identifier"])
    const base = { identifier, agent_url: null, card_url: null, skills: [], name: null, added: false }
    const card = yield* entryCard(target, catalog, entry)
    if (Either.isLeft(card)) {
      const title = text(entry["displayName"]) ?? identifierTail(identifier)
      return { view: { ...base, card_name: title, description: text(entry["description"]), error: card.left } } satisfies Candidate
    }
    const { json, cardUrl } = card.right
    const summary = summarizeCard(json)
    const agentUrl = ownAgentUrl(json, cardUrl ?? catalog.cardUrl)
    const view: DiscoveredAgent = {
      ...base,
      card_name: text(entry["displayName"]) ?? summary.name ?? identifierTail(identifier),
      description: text(entry["description"]) ?? summary.description,
      agent_url: agentUrl ?? null,
      card_url: cardUrl,
      skills: summary.skills.map((skill) => skill.name || skill.id),
      error: agentUrl === undefined ? "its card names no http(s) URL for its agent" : null
    }
    return agentUrl === undefined ? { view } : { view, found: { agentUrl, cardUrl, json } }
  })

/**
 * Whether a catalog's card may be kept as its agent's card URL: only on the agent's own origin. A
 * catalog may name any agent, and a card URL kept for another origin's agent would repoint that
 * agent's card (its interfaces, its OAuth endpoints) for every later call; such an agent's card is
 * found where the agent serves it, as for a card the catalog holds inline.
 */
const speaksForAgent = (found: { readonly agentUrl: AgentUrl; readonly cardUrl: string | null }): found is {
  readonly agentUrl: AgentUrl
  readonly cardUrl: string
} => found.cardUrl !== null && originOfUrl(found.cardUrl) === originOfUrl(found.agentUrl)

/** Saves each usable agent under its card's name, slugged: a name already taken gets -2, -3, …; an agent already named keeps its name. */
const addAll = (candidates: ReadonlyArray<Candidate>) =>
  Effect.gen(function*() {
    const usable = candidates.flatMap((candidate) => (candidate.found === undefined ? [] : [[candidate, candidate.found] as const]))
    for (const [, found] of usable) if (speaksForAgent(found)) yield* keepCardUrl(found.agentUrl, found.cardUrl)
    const now = yield* nowIso
    const store = yield* SessionStore
    const named = yield* store.updateAgents((book) => {
      let next = book
      const names = new Map<Candidate, { readonly name: string; readonly added: boolean }>()
      for (const [candidate, found] of usable) {
        const existing = Object.keys(next.agents).find((name) => next.agents[name]!.url === found.agentUrl)
        if (existing !== undefined) {
          names.set(candidate, { name: existing, added: false })
          continue
        }
        const name = freeName(slugOf(candidate.view.card_name ?? "agent"), (taken) => next.agents[taken] !== undefined)
        next = withAgent(next, name, { url: found.agentUrl, card: summarizeCard(found.json), card_read_at: now, added_at: now })
        names.set(candidate, { name, added: true })
      }
      return Effect.succeed([names, next] as const)
    })
    return candidates.map((candidate) => ({ ...candidate.view, ...(named.get(candidate) ?? {}) }))
  })

/** The names agents already have, by URL, for a listing without --add. */
const withKnownNames = (candidates: ReadonlyArray<Candidate>) =>
  Effect.map(Effect.flatMap(SessionStore, (store) => store.agents), (book) =>
    candidates.map(({ view }) => ({
      ...view,
      name: Object.keys(book.agents).find((name) => view.agent_url !== null && book.agents[name]!.url === view.agent_url) ?? null
    })))

export interface DiscoverInput {
  /** The domain (or the catalog's own URL). */
  readonly url: AgentUrl
  /** Save every usable agent under its card's name. */
  readonly add: boolean
}

/** The agents a domain's AI catalog names (`/.well-known/ai-catalog.json`), each with its card's name; with `add`, saved. */
export const discoverAgents = Effect.fn("discoverAgents")(function*(input: DiscoverInput) {
  const client = yield* A2aClient
  const catalogUrl = catalogUrlOf(input.url)
  const target = yield* resolveTarget({ agentUrl: input.url })
  const catalog = yield* client.fetchCardJson({ ...target, cardUrl: catalogUrl }).pipe(
    Effect.catchTag("CardNotFound", () => Effect.fail(new InvalidCatalog({ url: catalogUrl, reason: "nothing is there (HTTP 404)" })))
  )
  const { agents: entries, others } = yield* entriesOf(catalogUrl, catalog.json)
  const read = entries.slice(0, MAX_CATALOG_AGENTS)
  const candidates = yield* Effect.forEach(read, (entry) => candidateOf(target, catalog, entry), { concurrency: 4 })
  const agents = input.add ? yield* addAll(candidates) : yield* withKnownNames(candidates)
  return {
    catalog_url: catalogUrl,
    count: agents.length,
    agents,
    not_read: entries.length - read.length,
    other_entries: others
  } satisfies Discovery
})
