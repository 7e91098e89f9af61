/** The card group: checks of the agent as a whole, on its card as served. */
import { Either } from "effect"
import * as V1 from "../../a2a/v1.js"
import { validateCard } from "../../a2a/validation/cardValidation.js"
import { type CheckOutcome, failed, passed } from "../../domain/conformance.js"
import { interfaceUse } from "../../a2a/usableInterfaces.js"
import type { RawResponse } from "../../services/RawHttp.js"
import { parseJson, shown } from "./rawExchanges.js"

/** The card as fetched for the card checks. */
export interface ServedCard {
  readonly cardUrl: string
  readonly response: RawResponse
}

const served = ({ cardUrl, response }: ServedCard): CheckOutcome => {
  if (response.status !== 200) return failed(`${cardUrl} answered ${shown(response)}`)
  const type = response.headers["content-type"] ?? ""
  if (!/json/i.test(type)) return failed(`${cardUrl} came with Content-Type ${JSON.stringify(type)}, not JSON`)
  return parseJson(response.text) === undefined ? failed(`${cardUrl} is not JSON`) : passed(cardUrl)
}

const valid = ({ response }: ServedCard): CheckOutcome => {
  const result = validateCard(parseJson(response.text))
  const errors = result.issues.filter((issue) => issue.severity === "error")
  return errors.length === 0
    ? passed(`a v${result.generation} card`)
    : failed(errors.map((issue) => `${issue.code} at ${issue.path || "/"}: ${issue.message}`).join("; "))
}

/** Whether the decoded card declares any interface we could talk to (any binding or version). */
export const interfacesOutcome = (card: V1.AgentCard | undefined, cardUrl: string): CheckOutcome => {
  if (card === undefined) return failed("the card could not be read as an A2A card")
  if (card.supportedInterfaces.length === 0) return failed("the card declares no interface (supportedInterfaces, or url + preferredTransport)")
  const problems = card.supportedInterfaces.flatMap((entry, index) => {
    const use = interfaceUse(entry, cardUrl)
    return Either.isLeft(use) ? [`interface ${index}: ${use.left}`] : []
  })
  return problems.length < card.supportedInterfaces.length
    ? passed(card.supportedInterfaces.map((entry) => `${entry.protocolBinding} ${entry.protocolVersion}`).join(", "))
    : failed(problems.join("; "))
}

const caching = ({ response }: ServedCard): CheckOutcome =>
  response.headers["cache-control"] !== undefined || response.headers["etag"] !== undefined
    ? passed([response.headers["cache-control"], response.headers["etag"]].filter(Boolean).join(", "))
    : failed("neither Cache-Control nor ETag is sent with the card")

export const cardChecks = {
  "card.served": served,
  "card.valid": valid,
  "card.caching": caching
} as const
