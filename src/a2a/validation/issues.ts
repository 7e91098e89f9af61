/** Card issues: their shape, and the one table of codes with their fixed severity and description. */
import type { CardGeneration } from "../cardGeneration.js"

export type CardIssueSeverity = "error" | "warning" | "info"

export interface CardIssue {
  readonly code: string
  readonly severity: CardIssueSeverity
  /** JSON pointer into the card, e.g. "/supportedInterfaces/0/url"; "" is the card itself. */
  readonly path: string
  readonly message: string
  readonly hint: string
}

export interface CardCapabilitySummary {
  readonly streaming: boolean
  readonly pushNotifications: boolean
  readonly extendedAgentCard: boolean
}

export interface CardValidation {
  /** True when no issue has severity "error". */
  readonly valid: boolean
  readonly generation: CardGeneration
  readonly agentName?: string
  /** v0.3 cards: `protocolVersion`; otherwise the highest `supportedInterfaces[].protocolVersion`. */
  readonly protocolVersion?: string
  readonly capabilities: CardCapabilitySummary
  /** Sorted by path (numeric segments numerically), then code. */
  readonly issues: ReadonlyArray<CardIssue>
}

const CODE_TABLE = {
  "card.not_object": ["error", "The card is not a JSON object."],
  "card.generation_unknown": [
    "error",
    "The card has neither v1.0 `supportedInterfaces` nor the v0.3 `url`/`preferredTransport`/`protocolVersion`."
  ],
  "card.legacy_generation": ["info", "The card uses the v0.3 layout; clients that only speak v1.0 cannot read it."],
  "card.unknown_field": ["info", "A top-level field that the card's protocol generation does not define."],
  "card.no_usable_interface": [
    "error",
    "relay can use none of the card's interfaces: it needs JSONRPC or HTTP+JSON, protocol 1.0 or 0.3, and an http(s) URL."
  ],
  "card.unreadable": ["error", "relay's client cannot read the card as an agent card, although no other rule found an error."],
  "field.required": ["error", "A field the protocol marks REQUIRED is missing or empty."],
  "field.type": ["error", "A field has the wrong JSON type."],
  "field.empty_list": ["error", "A REQUIRED list is empty; required repeated fields need at least one element."],
  "url.invalid": ["warning", "A URL field does not hold an absolute http(s) URL."],
  "media_type.invalid": ["warning", "An input/output mode does not look like a media type (type/subtype)."],
  "interface.url_invalid": ["error", "An interface URL is not an absolute http(s) URL, whatever the binding (gRPC may use host:port)."],
  "interface.url_query": [
    "error",
    "An interface URL has a query or a fragment: operation paths go under the URL, so it must be a plain base URL."
  ],
  "interface.url_insecure": ["warning", "An interface URL uses plain http on a non-loopback host."],
  "interface.binding_custom": ["info", "An interface uses a custom protocol binding URI that generic clients will skip."],
  "interface.binding_unknown": ["warning", "A protocol binding is neither a core binding (JSONRPC, HTTP+JSON, GRPC) nor a URI."],
  "interface.protocol_version_invalid": ["error", "An interface protocolVersion is not written as Major.Minor."],
  "interface.protocol_version_patch": ["warning", "An interface protocolVersion carries a patch number."],
  "interface.duplicate": ["warning", "The same url, binding and version are declared twice."],
  "hybrid.url_not_in_interfaces": [
    "warning",
    "A hybrid card's v0.3 `url` + `preferredTransport` pair is not listed in `supportedInterfaces`."
  ],
  "extension.uri_missing": ["warning", "A capability extension has no `uri`."],
  "skill.duplicate_id": ["error", "Two skills share the same id."],
  "security_scheme.noncanonical_shape": [
    "warning",
    "A security scheme uses the v0.3 `type` form or the ts-proto `$case` form instead of the v1.0 oneof member."
  ],
  "security_scheme.unknown_shape": ["error", "A security scheme matches no known scheme kind."],
  "security_scheme.multiple_members": ["error", "A security scheme sets more than one member of its oneof."],
  "security_scheme.invalid_location": ["error", "An API key scheme's location is not query, header or cookie."],
  "oauth_flows.none": ["error", "An OAuth2 scheme declares no flow."],
  "oauth_flows.multiple": ["error", "An OAuth2 scheme sets more than one flow in the v1.0 oneof."],
  "oauth_flows.deprecated": ["warning", "An OAuth2 scheme uses the deprecated implicit or password flow."],
  "oauth_flow.scopes_missing": ["warning", "An OAuth2 flow has no `scopes` map."],
  "security_requirement.noncanonical_shape": [
    "warning",
    "A security requirement uses the v0.3 `{name: [scopes]}` form instead of `{schemes: {name: {list}}}`."
  ],
  "security_requirement.undefined_scheme": ["error", "A security requirement names a scheme that `securitySchemes` does not define."],
  "migration.v03_field": ["warning", "A v0.3 field on a v1.0 card; v1.0 clients ignore it."],
  "migration.removed_field": ["info", "A field that v1.0 removed."],
  "migration.kind_field": ["info", "A `kind` discriminator; v1.0 removed them."],
  "signature.not_verified": ["info", "The card carries JWS signatures that this check does not verify."],
  "v03.required": ["error", "v0.3 schema: a required property is missing."],
  "v03.type": ["error", "v0.3 schema: a value has the wrong JSON type."],
  "v03.enum": ["error", "v0.3 schema: a value is not one of the allowed values."],
  "v03.const": ["error", "v0.3 schema: a value differs from the constant the schema expects."],
  "v03.anyOf": ["error", "v0.3 schema: a security scheme has no valid `type` discriminator."],
  "v03.schema": ["error", "v0.3 schema: every other schema violation."]
} as const satisfies Record<string, readonly [CardIssueSeverity, string]>

export type CardIssueCode = keyof typeof CODE_TABLE

const mapCodeTable = <V>(pick: (entry: readonly [CardIssueSeverity, string]) => V): Readonly<Record<CardIssueCode, V>> => {
  const result: Partial<Record<CardIssueCode, V>> = {}
  for (const [code, entry] of Object.entries(CODE_TABLE)) result[code as CardIssueCode] = pick(entry)
  return result as Record<CardIssueCode, V>
}

/** Every code `validateCard` can emit, with a short description. */
export const CARD_ISSUE_CODES: Readonly<Record<CardIssueCode, string>> = mapCodeTable(([, description]) => description)

/** The fixed severity of every code. */
export const CARD_ISSUE_SEVERITIES: Readonly<Record<CardIssueCode, CardIssueSeverity>> = mapCodeTable(
  ([severity]) => severity
)
