/**
 * The card group: checks of the agent as a whole, on its card as served. Without a card (or with
 * one that cannot be read) nothing else can run: one check names that root cause, and every other
 * check is skipped with it.
 */
import { type Duration, Effect, Either } from "effect"
import { protocolVersionOf } from "../../a2a/dialects.js"
import type { ProtocolVersion } from "../../a2a/protocolVersion.js"
import { interfaceUse } from "../../a2a/usableInterfaces.js"
import type * as V1 from "../../a2a/v1.js"
import { validateCard } from "../../a2a/validation/cardValidation.js"
import { type CheckOutcome, failed, passed, skipped, warned } from "../../domain/conformance.js"
import { A2aClient, type DiscoveredCard, type Target } from "../../services/A2aClient.js"
import { RawHttp, type RawResponse } from "../../services/RawHttp.js"
import { MAX_CHECK_BODY_BYTES } from "./context.js"
import { parseJson, shown } from "./rawExchanges.js"

/** The card as fetched for the card checks. */
export interface ServedCard {
  readonly cardUrl: string
  readonly response: RawResponse
}

/** What the run learned of the card before any other check. */
export interface CardFindings {
  /** Why there is no card at all; undefined when one was found. */
  readonly noCard: string | undefined
  readonly served: ServedCard | undefined
  /** The answer at the well-known path, when the card was found somewhere else. */
  readonly wellKnown: RawResponse | undefined
  /** The card as relay reads it, or why it cannot. */
  readonly card: Either.Either<DiscoveredCard, string>
}

/** Where every agent serves its card (v1.0 §8.2, v0.3 §5.3). */
export const WELL_KNOWN_CARD_PATH = "/.well-known/agent-card.json"

const wellKnownUrl = (agentUrl: string) => `${new URL(agentUrl).origin}${WELL_KNOWN_CARD_PATH}`

const isUnreachable = (error: { readonly _tag: string }) => error._tag === "AgentUnreachable" || error._tag === "RequestTimeout"

/** Fetches the card where discovery finds it (raw, for its headers) and, when that is not the well-known path, that path too. */
export const findCard = (target: Target, timeout: Duration.Duration) =>
  Effect.gen(function*() {
    const client = yield* A2aClient
    const http = yield* RawHttp
    const get = (url: string) =>
      http.exchange({
        method: "GET",
        url,
        headers: { "A2A-Version": "1.0", Accept: "application/json" },
        timeout,
        maxBytes: MAX_CHECK_BODY_BYTES
      })
    const cardJson = yield* Effect.either(client.fetchCardJson(target))
    if (cardJson._tag === "Left") {
      if (isUnreachable(cardJson.left)) return yield* cardJson.left
      return { noCard: cardJson.left.message, served: undefined, wellKnown: undefined, card: Either.left("no card") } satisfies CardFindings
    }
    const { cardUrl } = cardJson.right
    const served: ServedCard = { cardUrl, response: yield* get(cardUrl) }
    const wellKnown = cardUrl === wellKnownUrl(target.agentUrl) ? undefined : yield* get(wellKnownUrl(target.agentUrl))
    const card = yield* Effect.either(Effect.mapError(client.discover(target), (error) => error.message))
    return { noCard: undefined, served, wellKnown, card } satisfies CardFindings
  })

/** The generation whose sections the card checks cite: the card's own (a hybrid card is read as v1.0). */
export const cardProtocol = (findings: CardFindings): ProtocolVersion | undefined =>
  findings.served === undefined ? undefined : validateCard(parseJson(findings.served.response.text)).generation === "0.3" ? "0.3" : "1.0"

const servesJson = (response: RawResponse) => response.status === 200 && /json/i.test(response.headers["content-type"] ?? "")

const served = ({ served: { cardUrl, response }, wellKnown }: CardFindings & { served: ServedCard }): CheckOutcome => {
  if (response.status !== 200) return failed(`${cardUrl} answered ${shown(response)}`)
  const type = response.headers["content-type"] ?? ""
  if (!/json/i.test(type)) return failed(`${cardUrl} came with Content-Type ${JSON.stringify(type)}, not JSON`)
  if (parseJson(response.text) === undefined) return failed(`${cardUrl} is not JSON`)
  if (wellKnown === undefined) return passed(cardUrl)
  // The well-known path is where clients look (a MUST nowhere, a recommendation everywhere): elsewhere only is a warning.
  const path = new URL(cardUrl).pathname
  return servesJson(wellKnown) && parseJson(wellKnown.text) !== undefined
    ? passed(`${WELL_KNOWN_CARD_PATH} (and ${path})`)
    : warned(`no card at the well-known path ${WELL_KNOWN_CARD_PATH} (HTTP ${wellKnown.status}); the card was found only at ${path}`)
}

const validationErrors = (response: RawResponse) =>
  validateCard(parseJson(response.text)).issues.filter((issue) => issue.severity === "error")

const valid = ({ served: { response } }: CardFindings & { served: ServedCard }): CheckOutcome => {
  const errors = validationErrors(response)
  return errors.length === 0
    ? passed(`a v${validateCard(parseJson(response.text)).generation} card`)
    : failed(errors.map((issue) => `${issue.code} at ${issue.path || "/"}: ${issue.message}`).join("; "))
}

/** Whether the decoded card declares any interface we could talk to (any binding or version). */
export const interfacesOutcome = (card: V1.AgentCard, cardUrl: string): CheckOutcome => {
  if (card.supportedInterfaces.length === 0) {
    return failed("the card declares no interface (supportedInterfaces, or url + preferredTransport)")
  }
  const problems = card.supportedInterfaces.flatMap((entry, index) => {
    const use = interfaceUse(entry, cardUrl)
    return Either.isLeft(use) ? [`interface ${index}: ${use.left}`] : []
  })
  return problems.length < card.supportedInterfaces.length
    ? passed(card.supportedInterfaces.map((entry) => `${entry.protocolBinding} ${entry.protocolVersion}`).join(", "))
    : failed(problems.join("; "))
}

const interfaces = (findings: CardFindings & { served: ServedCard }): CheckOutcome =>
  Either.match(findings.card, {
    onLeft: (reason) =>
      validationErrors(findings.served.response).length > 0
        ? skipped("the card could not be read as an A2A card (see card.valid)")
        : failed(`the card could not be read as an A2A card: ${reason}`),
    onRight: (found) => interfacesOutcome(found.card, findings.served.cardUrl)
  })

/** Caching is a v1.0 SHOULD (§8.6.1): an agent that speaks only v0.3 is not held to it. */
const declaresV1 = (findings: CardFindings) =>
  Either.match(findings.card, {
    onLeft: () => cardProtocol(findings) !== "0.3",
    onRight: (found) => found.card.supportedInterfaces.some((entry) => protocolVersionOf(entry.protocolVersion) === "1.0")
  })

const caching = (findings: CardFindings & { served: ServedCard }): CheckOutcome => {
  if (!declaresV1(findings)) return skipped("a v1.0 recommendation, and the agent declares only v0.3 interfaces")
  const { headers } = findings.served.response
  return headers["cache-control"] !== undefined || headers["etag"] !== undefined
    ? passed([headers["cache-control"], headers["etag"]].filter(Boolean).join(", "))
    : failed("neither Cache-Control nor ETag is sent with the card")
}

const cardChecks = {
  "card.served": served,
  "card.valid": valid,
  "card.interfaces": interfaces,
  "card.caching": caching
} as const

/**
 * The check that fails for the root cause when nothing else can run, and that cause: no card
 * (card.served), or a card relay cannot read (card.valid when the validator says why, else
 * card.interfaces). Undefined when there is a card to work with.
 */
export const cardBlocker = (findings: CardFindings): { readonly id: string; readonly reason: string } | undefined => {
  if (findings.noCard !== undefined) return { id: "card.served", reason: `no card: ${findings.noCard}` }
  if (Either.isRight(findings.card) || findings.served === undefined) return undefined
  return validationErrors(findings.served.response).length > 0
    ? { id: "card.valid", reason: "the card could not be read as an A2A card (see card.valid)" }
    : { id: "card.interfaces", reason: "the card could not be read as an A2A card (see card.interfaces)" }
}

/** The outcome of one card check; without a card, the root cause or a skip naming it. */
export const cardOutcome = (id: string, findings: CardFindings): CheckOutcome => {
  const check = cardChecks[id as keyof typeof cardChecks]
  if (findings.served !== undefined) return check({ ...findings, served: findings.served })
  const reason = `no card: ${findings.noCard ?? "none found"}`
  return id === "card.served" ? failed(reason) : skipped(reason)
}
