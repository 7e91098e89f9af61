/**
 * Card discovery: agent-card.json, then agent.json (at the root, then under the agent's path),
 * or an explicit card URL. Cards are cached per URL and credentials, honouring Cache-Control and
 * revalidated with ETag; where each agent's card was found is remembered.
 */
import { HttpClientRequest, type HttpClientResponse } from "@effect/platform"
import { Clock, Effect, Option, Ref } from "effect"
import { createHash } from "node:crypto"
import { pathToFileURL } from "node:url"
import { describeParseError } from "../../a2a/parseProblems.js"
import { cardFromWire } from "../../a2a/translate.js"
import { type A2aClientError, CardNotFound, InvalidCard } from "../../domain/clientErrors.js"
import type { AddressClass } from "../../domain/ipAddresses.js"
import { exceedsJsonDepth, MAX_AGENT_JSON_DEPTH } from "../../domain/limits.js"
import { answerExcerpt } from "../../domain/terminalText.js"
import { failureOf, isHttpSuccess, parseJson, TOO_DEEP } from "./answers.js"
import type { DiscoveredCard } from "./cardCache.js"
import { exchange, JSON_CONTENT_TYPE } from "./exchange.js"
import { type CardFetcher, cardFetcher, fetchedFrom, reachFrom, rememberCardHost } from "./interfaceHosts.js"
import type { ClientState } from "./state.js"
import { credentialHeaders, credentialsFor, type Target, withoutSecrets } from "./target.js"

export type { DiscoveredCard } from "./cardCache.js"

/** A card's JSON exactly as served, where discovery found it. */
export interface CardJson {
  readonly json: unknown
  readonly cardUrl: string
  /** The classes of the addresses the card was fetched from (none for a card the user gave). */
  readonly reach: ReadonlyArray<AddressClass>
}

const DEFAULT_CARD_MAX_AGE_MS = 300_000
const WELL_KNOWN_PATHS = ["/.well-known/agent-card.json", "/.well-known/agent.json"] as const

/** The card URLs to try, best first. A URL that names a .json file is a card URL itself. */
export const cardCandidates = (target: Target): ReadonlyArray<string> => {
  if (target.cardUrl !== undefined) return [target.cardUrl]
  if (/\.json$/i.test(new URL(target.agentUrl).pathname)) return [target.agentUrl]
  const base = new URL(target.agentUrl)
  const atRoot = WELL_KNOWN_PATHS.map((path) => `${base.origin}${path}`)
  // Some agents serve the card under their own path rather than the domain root.
  const path = base.pathname.replace(/\/+$/, "")
  const underPath = path === "" ? [] : WELL_KNOWN_PATHS.map((p) => `${base.origin}${path}${p}`)
  return [...atRoot, ...underPath]
}

const maxAgeMs = (cacheControl: string | undefined) => {
  if (/no-store|no-cache/i.test(cacheControl ?? "")) return 0
  const match = /max-age=(\d+)/i.exec(cacheControl ?? "")
  return match ? Number(match[1]) * 1000 : DEFAULT_CARD_MAX_AGE_MS
}

export const decodeCard = (url: string, raw: unknown) =>
  Effect.mapError(cardFromWire(raw), (error) => new InvalidCard({ url, reason: describeParseError(error, "the card").message }))

const cardRequest = (target: Target, cardUrl: string, etag: string | undefined) =>
  HttpClientRequest.get(cardUrl).pipe(
    HttpClientRequest.setHeaders({
      accept: JSON_CONTENT_TYPE,
      "a2a-version": "1.0",
      ...credentialHeaders(credentialsFor(target, cardUrl)),
      ...(etag === undefined ? {} : { "if-none-match": etag })
    })
  )

/** The JSON of a card answer; none on 404/410, where the next candidate is worth a try. */
const cardJsonOf = (
  target: Target,
  cardUrl: string,
  response: HttpClientResponse.HttpClientResponse,
  text: string
): Effect.Effect<Option.Option<unknown>, A2aClientError> => {
  if (response.status === 404 || response.status === 410) return Effect.succeed(Option.none<unknown>())
  if (!isHttpSuccess(response.status)) return Effect.fail(failureOf(target, cardUrl, response, text))
  return Option.match(parseJson(text), {
    onNone: () =>
      Effect.zipRight(
        Effect.logDebug(`The answer from ${cardUrl}: ${answerExcerpt(withoutSecrets(target, text))}`),
        Effect.fail(new InvalidCard({ url: cardUrl, reason: "the response is not JSON" }))
      ),
    onSome: (json) =>
      exceedsJsonDepth(json, MAX_AGENT_JSON_DEPTH)
        ? Effect.fail(new InvalidCard({ url: cardUrl, reason: TOO_DEEP }))
        : Effect.succeed(Option.some(json))
  })
}

/**
 * Cards are cached per URL and per credentials sent: an extended card fetched with a token is
 * never served to a later call without it (the fingerprint is a hash, never the secret).
 */
const cacheKeyOf = (target: Target, cardUrl: string) => {
  const credentials = credentialsFor(target, cardUrl)
  if (credentials === undefined) return cardUrl
  const secret = credentials.kind === "bearer" ? `bearer:${credentials.token}` : `${credentials.header}:${credentials.key}`
  return `${cardUrl}#${createHash("sha256").update(secret).digest("hex").slice(0, 16)}`
}

/** The card at `cardUrl`, from the cache or else through `fetcher`, whose addresses then judge its interfaces. */
const fetchCard = (state: ClientState, target: Target, cardUrl: string, fetcher: CardFetcher) =>
  Effect.gen(function*() {
    const now = yield* Clock.currentTimeMillis
    const key = cacheKeyOf(target, cardUrl)
    const cached = state.cardCache.get(key)
    if (cached && cached.expiresAt > now) {
      yield* rememberCardHost(state, cardUrl, cached.fetchedFrom)
      return Option.some(cached.card)
    }

    const { response, text } = yield* exchange({ ...state, http: fetcher.http }, target, cardRequest(target, cardUrl, cached?.etag))
    const expiresAt = now + maxAgeMs(response.headers["cache-control"])
    if (response.status === 304 && cached) {
      // The card is the one fetched before: the addresses it came from still judge its host.
      state.cardCache.set(key, { ...cached, expiresAt })
      yield* rememberCardHost(state, cardUrl, cached.fetchedFrom)
      return Option.some(cached.card)
    }
    const raw = yield* cardJsonOf(target, cardUrl, response, text)
    if (Option.isNone(raw)) return Option.none()
    const card: DiscoveredCard = { ...(yield* decodeCard(cardUrl, raw.value)), raw: raw.value, cardUrl }
    const addresses = fetchedFrom(fetcher, cardUrl)
    state.cardCache.set(key, { card, etag: response.headers["etag"], expiresAt, fetchedFrom: addresses })
    yield* rememberCardHost(state, cardUrl, addresses)
    return Option.some(card)
  })

/** The first of `candidates` that yields something, else CardNotFound. */
const firstCard = <A>(
  target: Target,
  candidates: ReadonlyArray<string>,
  fetchOne: (cardUrl: string) => Effect.Effect<Option.Option<A>, A2aClientError>
) =>
  Effect.gen(function*() {
    const tried: Array<string> = []
    for (const cardUrl of candidates) {
      tried.push(cardUrl)
      const found = yield* fetchOne(cardUrl)
      if (Option.isSome(found)) return found.value
    }
    return yield* new CardNotFound({ url: target.agentUrl, tried })
  })

/** Where a card the user gave lives, as a URL: the base its relative URLs would resolve against (none is usable). */
const givenCardUrl = (source: string) => pathToFileURL(source).href

/** A card the user gave (`--card-file`), decoded as discovery decodes a served one. */
const givenCard = (given: NonNullable<Target["card"]>): Effect.Effect<DiscoveredCard, A2aClientError> =>
  Effect.map(decodeCard(given.source, given.json), (decoded) => ({ ...decoded, raw: given.json, cardUrl: givenCardUrl(given.source) }))

export const discover = (state: ClientState, target: Target): Effect.Effect<DiscoveredCard, A2aClientError> =>
  target.card !== undefined ? givenCard(target.card) : Effect.gen(function*() {
    const candidates = cardCandidates(target)
    const key = candidates.join(" ")
    const known = (yield* Ref.get(state.cardLocations)).get(key)
    const ordered = known === undefined ? candidates : [known, ...candidates.filter((url) => url !== known)]
    // The discovery's own client (interfaceHosts.ts says why): undici's agent is made on its first request.
    const fetcher = yield* cardFetcher(state)
    const card = yield* firstCard(target, ordered, (cardUrl) => fetchCard(state, target, cardUrl, fetcher)).pipe(
      // No card, yet its connections say where the hosts asked are: an agent reached without a card
      // (binding and version pinned) is judged by them (downloads.ts), not by a lookup.
      Effect.tapError(() =>
        Effect.forEach(ordered, (cardUrl) => rememberCardHost(state, cardUrl, fetchedFrom(fetcher, cardUrl)), { discard: true })
      )
    )
    if (card.cardUrl !== known) yield* Ref.update(state.cardLocations, (map) => new Map(map).set(key, card.cardUrl))
    return card
  }).pipe(Effect.scoped, Effect.withSpan("A2aClient.discover"))

/** The card JSON as served, undecoded and uncached, so a validator can report on any card. */
export const fetchCardJson = (state: ClientState, target: Target): Effect.Effect<CardJson, A2aClientError> =>
  target.card !== undefined ?
    Effect.succeed({ json: target.card.json, cardUrl: givenCardUrl(target.card.source), reach: [] }) :
    Effect.flatMap(cardFetcher(state, target.cardReach), (fetcher) =>
      firstCard(target, cardCandidates(target), (cardUrl) =>
        exchange({ ...state, http: fetcher.http }, target, cardRequest(target, cardUrl, undefined)).pipe(
          Effect.flatMap(({ response, text }) =>
            cardJsonOf(target, cardUrl, response, text)
          ),
          Effect.flatMap(Option.match({
            onNone: () =>
              Effect.succeedNone,
            onSome: (json) => {
              // The reach from this fetch's own connection: the shared record may change meanwhile.
              const addresses = fetchedFrom(fetcher, cardUrl)
              return Effect.zipRight(
                rememberCardHost(state, cardUrl, addresses),
                Effect.map(reachFrom(state, cardUrl, addresses), (reach) => Option.some({ json, cardUrl, reach }))
              )
            }
          }))
        ))).pipe(Effect.scoped, Effect.withSpan("A2aClient.fetchCardJson"))

/** The extended card replaces the cached one (§6a.12) for calls with the same credentials. */
export const replaceCachedCard = (state: ClientState, target: Target, card: DiscoveredCard) =>
  Effect.sync(() => {
    const key = cacheKeyOf(target, card.cardUrl)
    const cached = state.cardCache.get(key)
    if (cached !== undefined) state.cardCache.set(key, { ...cached, card })
  })
