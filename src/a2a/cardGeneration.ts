/**
 * Which protocol generation an agent card is written in: one rule for the client (translate.cardFromWire)
 * and the validator (validation/cardValidation).
 *
 * - v1.0 cards declare `supportedInterfaces` (REQUIRED in a2a.proto's AgentCard, unknown to v0.3).
 * - v0.3 cards declare their endpoint at card level: `url` and `protocolVersion` (both REQUIRED in the
 *   v0.3.0 schema) and `preferredTransport` (the binding of `url`).
 * - Hybrid cards declare both, as @a2a-js/sdk serves them in legacy-compat mode.
 *
 * `additionalInterfaces` decides nothing, like the other v0.3-only fields (`security`,
 * `supportsAuthenticatedExtendedCard`): v0.3 defines it as endpoints *in addition to* the main `url`,
 * so on a v1.0 card it is a leftover of the migration (1.0 folded it into `supportedInterfaces`), not a
 * v0.3 half a v0.3 client could read. ProtoJSON reads `null` as an absent field.
 */
export type CardGeneration = "1.0" | "0.3" | "hybrid" | "unknown"

/** What the client reads a card as: a card of neither shape is read as v1.0. */
export type ClientCardGeneration = Exclude<CardGeneration, "unknown">

const V03_ENDPOINT_FIELDS = ["url", "preferredTransport", "protocolVersion"] as const

const isPresent = (value: unknown): boolean => value !== undefined && value !== null

/** The generation a card's JSON is written in; "unknown" when it declares neither endpoint shape. */
export const cardGeneration = (json: unknown): CardGeneration => {
  if (typeof json !== "object" || json === null || Array.isArray(json)) return "unknown"
  const card = json as Readonly<Record<string, unknown>>
  const hasV1 = isPresent(card["supportedInterfaces"])
  const hasV03 = V03_ENDPOINT_FIELDS.some((key) => isPresent(card[key]))
  if (hasV1 && hasV03) return "hybrid"
  if (hasV1) return "1.0"
  if (hasV03) return "0.3"
  return "unknown"
}
