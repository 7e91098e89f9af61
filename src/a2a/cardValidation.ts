/**
 * Agent card validation for both A2A card generations.
 *
 * Unlike validators that stop at the first problem, `validateCard` collects every issue, each with a
 * stable code (see CARD_ISSUE_CODES), a severity, a JSON pointer and a fix hint.
 * - v1.0 cards are checked with hand-written rules taken from the REQUIRED markers of the normative
 *   `a2a.proto` (spec §5.7: a required repeated field needs at least one element).
 * - v0.3 cards are checked with ajv against the official v0.3.0 JSON Schema (AgentCard definition).
 * - Hybrid cards (both shapes, as @a2a-js/sdk serves them in legacy-compat mode) get the v1.0 rules
 *   plus the schema checks of their v0.3-only fields.
 */
import { Ajv } from "ajv"
import type { ErrorObject, ValidateFunction } from "ajv"
import { Either } from "effect"
import { isLoopbackHost } from "../domain/hosts.js"
import { a2aV03AgentCardSchema } from "./schemas/a2aV03Schema.js"
import { readAsClient } from "./usableInterfaces.js"

export type CardIssueSeverity = "error" | "warning" | "info"

export interface CardIssue {
  readonly code: string
  readonly severity: CardIssueSeverity
  /** JSON pointer into the card, e.g. "/supportedInterfaces/0/url"; "" is the card itself. */
  readonly path: string
  readonly message: string
  readonly hint: string
}

export type CardGeneration = "1.0" | "0.3" | "hybrid" | "unknown"

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

// ---------------------------------------------------------------------------------------------
// Issue codes: one table holds the fixed severity and the description of every code we emit.
// ---------------------------------------------------------------------------------------------

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

// ---------------------------------------------------------------------------------------------
// Small helpers: JSON values, pointers, the issue collector.
// ---------------------------------------------------------------------------------------------

type JsonObject = Readonly<Record<string, unknown>>

const isObject = (value: unknown): value is JsonObject =>
  typeof value === "object" && value !== null && !Array.isArray(value)

/** ProtoJSON treats `null` like an absent field. */
const isPresent = (value: unknown): boolean => value !== undefined && value !== null

const describeType = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value === "object" ? "an object" : `a ${typeof value}`

const escapeSegment = (segment: string): string => segment.replace(/~/g, "~0").replace(/\//g, "~1")

const at = (base: string, ...segments: ReadonlyArray<string | number>): string =>
  base + segments.map((segment) => `/${escapeSegment(String(segment))}`).join("")

const quote = (key: string): string => `\`${key}\``

interface Context {
  readonly generation: CardGeneration
  readonly report: (code: CardIssueCode, path: string, message: string, hint: string) => void
}

const makeCollector = (generation: CardGeneration) => {
  const issues: Array<CardIssue> = []
  const context: Context = {
    generation,
    report: (code, path, message, hint) => {
      issues.push({ code, severity: CARD_ISSUE_SEVERITIES[code], path, message, hint })
    }
  }
  return { context, issues }
}

// ---------------------------------------------------------------------------------------------
// Field readers: each reports what is wrong and returns the value only when it is usable.
// ---------------------------------------------------------------------------------------------

const reportType = (ctx: Context, path: string, key: string, expected: string, value: unknown): void =>
  ctx.report(
    "field.type",
    path,
    `${quote(key)} must be ${expected}, not ${describeType(value)}`,
    `Write ${quote(key)} as ${expected}.`
  )

const requiredString = (ctx: Context, owner: JsonObject, key: string, base: string, hint: string): string | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value) || value === "") {
    ctx.report("field.required", path, `${quote(key)} is required${value === "" ? " but empty" : ""}`, hint)
    return undefined
  }
  if (typeof value !== "string") {
    reportType(ctx, path, key, "a string", value)
    return undefined
  }
  return value
}

const optionalString = (ctx: Context, owner: JsonObject, key: string, base: string): string | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (typeof value !== "string") {
    reportType(ctx, at(base, key), key, "a string", value)
    return undefined
  }
  return value
}

const optionalBoolean = (ctx: Context, owner: JsonObject, key: string, base: string): void => {
  const value = owner[key]
  if (isPresent(value) && typeof value !== "boolean") reportType(ctx, at(base, key), key, "a boolean", value)
}

const requiredObject = (ctx: Context, owner: JsonObject, key: string, base: string, hint: string): JsonObject | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value)) {
    ctx.report("field.required", path, `${quote(key)} is required`, hint)
    return undefined
  }
  if (!isObject(value)) {
    reportType(ctx, path, key, "an object", value)
    return undefined
  }
  return value
}

const optionalObject = (ctx: Context, owner: JsonObject, key: string, base: string): JsonObject | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (!isObject(value)) {
    reportType(ctx, at(base, key), key, "an object", value)
    return undefined
  }
  return value
}

const requiredList = (
  ctx: Context,
  owner: JsonObject,
  key: string,
  base: string,
  hint: string
): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  const path = at(base, key)
  if (!isPresent(value)) {
    ctx.report("field.required", path, `${quote(key)} is required`, hint)
    return undefined
  }
  if (!Array.isArray(value)) {
    reportType(ctx, path, key, "an array", value)
    return undefined
  }
  if (value.length === 0) ctx.report("field.empty_list", path, `${quote(key)} must have at least one element`, hint)
  return value
}

const optionalList = (ctx: Context, owner: JsonObject, key: string, base: string): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  if (!isPresent(value)) return undefined
  if (!Array.isArray(value)) {
    reportType(ctx, at(base, key), key, "an array", value)
    return undefined
  }
  return value
}

/** Reports non-string elements of a list that must hold strings. */
const checkStringItems = (ctx: Context, list: ReadonlyArray<unknown> | undefined, path: string, key: string): void => {
  list?.forEach((item, index) => {
    if (typeof item !== "string") reportType(ctx, at(path, index), `${key}[${index}]`, "a string", item)
  })
}

/** Objects of a list, with their pointers; reports the elements that are not objects. */
const objectItems = (
  ctx: Context | undefined,
  list: ReadonlyArray<unknown> | undefined,
  path: string,
  key: string
): ReadonlyArray<readonly [JsonObject, string]> => {
  const items: Array<readonly [JsonObject, string]> = []
  list?.forEach((item, index) => {
    if (isObject(item)) items.push([item, at(path, index)])
    else if (ctx !== undefined) reportType(ctx, at(path, index), `${key}[${index}]`, "an object", item)
  })
  return items
}

/** A list field read without reporting anything (semantic checks run after the structural ones). */
const listOf = (owner: JsonObject, key: string): ReadonlyArray<unknown> | undefined => {
  const value = owner[key]
  return Array.isArray(value) ? value : undefined
}

// ---------------------------------------------------------------------------------------------
// URLs, media types, protocol bindings and versions.
// ---------------------------------------------------------------------------------------------

const parseUrl = (text: string): URL | undefined => {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

const isHttpUrl = (url: URL): boolean => url.protocol === "http:" || url.protocol === "https:"


/** Optional URL-valued fields: an empty string is ProtoJSON's "unset". */
const checkOptionalUrl = (ctx: Context, value: string | undefined, path: string, key: string): void => {
  if (value === undefined || value === "") return
  const url = parseUrl(value)
  if (url === undefined || !isHttpUrl(url)) {
    ctx.report(
      "url.invalid",
      path,
      `${quote(key)} is not an absolute http(s) URL: ${JSON.stringify(value)}`,
      "Use a full URL such as https://example.com/docs."
    )
  }
}

const MEDIA_TYPE = /^[A-Za-z0-9!#$&^_.+*-]+\/[A-Za-z0-9!#$&^_.+*-]+(\s*;.*)?$/

const checkMediaTypes = (ctx: Context, list: ReadonlyArray<unknown> | undefined, path: string): void => {
  list?.forEach((item, index) => {
    if (typeof item === "string" && !MEDIA_TYPE.test(item.trim())) {
      ctx.report(
        "media_type.invalid",
        at(path, index),
        `${JSON.stringify(item)} is not a media type`,
        "Modes are media types such as text/plain, application/json or image/png."
      )
    }
  })
}

const CORE_BINDINGS = ["JSONRPC", "HTTP+JSON", "GRPC"] as const

const BINDING_ALIASES: Readonly<Partial<Record<string, string>>> = {
  REST: "HTTP+JSON",
  HTTP: "HTTP+JSON",
  HTTP_JSON: "HTTP+JSON",
  HTTPJSON: "HTTP+JSON",
  "JSON-RPC": "JSONRPC",
  JSON_RPC: "JSONRPC"
}

const isCoreBinding = (binding: string): boolean => CORE_BINDINGS.some((core) => core === binding)

const looksLikeUri = (text: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\S+$/.test(text) && parseUrl(text) !== undefined

const checkBinding = (ctx: Context, binding: string, path: string, key: string): void => {
  if (isCoreBinding(binding)) return
  const upper = binding.toUpperCase()
  const intended = CORE_BINDINGS.find((core) => core === upper) ?? BINDING_ALIASES[upper]
  if (intended !== undefined) {
    ctx.report(
      "interface.binding_unknown",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is not a core binding name`,
      `Write it exactly as ${JSON.stringify(intended)}; binding names are case-sensitive.`
    )
  } else if (looksLikeUri(binding)) {
    ctx.report(
      "interface.binding_custom",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is a custom binding`,
      "Only clients that know this binding can use the interface; also list a JSONRPC or HTTP+JSON interface."
    )
  } else {
    ctx.report(
      "interface.binding_unknown",
      path,
      `${quote(key)} ${JSON.stringify(binding)} is neither a core binding nor a URI`,
      "Use JSONRPC, HTTP+JSON or GRPC, or name a custom binding with a URI."
    )
  }
}

const HOST_PORT = /^(\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/

const checkInterfaceUrl = (ctx: Context, urlText: string, binding: string | undefined, path: string): void => {
  const isGrpc = binding?.toUpperCase() === "GRPC"
  if (isGrpc && HOST_PORT.test(urlText)) return
  const url = parseUrl(urlText)
  // relay reaches every interface over http(s), so an ftp:// URL is unusable whatever the binding says.
  if (url === undefined || !isHttpUrl(url)) {
    ctx.report(
      "interface.url_invalid",
      path,
      `${JSON.stringify(urlText)} is not an absolute http(s) URL`,
      isGrpc
        ? "Use an absolute URL such as https://agent.example.com/a2a, or host:port for gRPC."
        : "Use an absolute URL such as https://agent.example.com/a2a/jsonrpc."
    )
    return
  }
  if (url.protocol === "http:" && !isLoopbackHost(url.hostname)) {
    ctx.report(
      "interface.url_insecure",
      path,
      `${JSON.stringify(urlText)} uses plain http on a non-loopback host`,
      "Use HTTPS: credentials and messages would otherwise travel in clear text."
    )
  }
}

interface ParsedVersion {
  readonly major: number
  readonly minor: number
  readonly patch: number | undefined
}

const parseProtocolVersion = (text: string): ParsedVersion | undefined => {
  const match = /^(\d+)\.(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  return { major: Number(match[1]), minor: Number(match[2]), patch: match[3] === undefined ? undefined : Number(match[3]) }
}

const checkInterfaceVersion = (ctx: Context, version: string, path: string): void => {
  const parsed = parseProtocolVersion(version)
  if (parsed === undefined) {
    ctx.report(
      "interface.protocol_version_invalid",
      path,
      `protocolVersion ${JSON.stringify(version)} is not Major.Minor`,
      'Write the version as "1.0" (or "0.3" for a v0.3 interface).'
    )
  } else if (parsed.patch !== undefined) {
    ctx.report(
      "interface.protocol_version_patch",
      path,
      `protocolVersion ${JSON.stringify(version)} has a patch number`,
      `Write "${parsed.major}.${parsed.minor}": clients negotiate on Major.Minor only.`
    )
  }
}

// ---------------------------------------------------------------------------------------------
// v1.0 structural rules (REQUIRED fields of a2a.proto).
// ---------------------------------------------------------------------------------------------

const checkSupportedInterfaces = (ctx: Context, card: JsonObject): void => {
  const list = requiredList(
    ctx,
    card,
    "supportedInterfaces",
    "",
    'Declare at least one interface, e.g. {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}.'
  )
  const seen = new Set<string>()
  for (const [entry, path] of objectItems(ctx, list, "/supportedInterfaces", "supportedInterfaces")) {
    const url = requiredString(ctx, entry, "url", path, "Give the interface the absolute URL it is served at.")
    const bindingHint = isPresent(entry["transport"])
      ? "1.0 renamed the v0.3 `transport` to `protocolBinding`."
      : "Name the binding: JSONRPC, HTTP+JSON or GRPC."
    const binding = requiredString(ctx, entry, "protocolBinding", path, bindingHint)
    const version = requiredString(ctx, entry, "protocolVersion", path, 'Declare the protocol version this interface speaks, e.g. "1.0".')
    optionalString(ctx, entry, "tenant", path)
    if (url !== undefined) checkInterfaceUrl(ctx, url, binding, at(path, "url"))
    if (binding !== undefined) checkBinding(ctx, binding, at(path, "protocolBinding"), "protocolBinding")
    if (version !== undefined) checkInterfaceVersion(ctx, version, at(path, "protocolVersion"))
    if (isPresent(entry["transport"])) {
      ctx.report(
        "migration.v03_field",
        at(path, "transport"),
        "`transport` is the v0.3 name of this field",
        "Rename it to `protocolBinding`."
      )
    }
    const key = JSON.stringify([url, binding, version])
    if (url !== undefined && binding !== undefined && version !== undefined) {
      if (seen.has(key)) {
        ctx.report("interface.duplicate", path, "this interface repeats an earlier one", "Remove the duplicate entry.")
      }
      seen.add(key)
    }
  }
}

const checkProvider = (ctx: Context, card: JsonObject): void => {
  const provider = optionalObject(ctx, card, "provider", "")
  if (provider === undefined) return
  requiredString(ctx, provider, "organization", "/provider", "Name the organization that provides the agent, or drop `provider`.")
  const url = requiredString(ctx, provider, "url", "/provider", "Give the provider's website URL, or drop `provider`.")
  checkOptionalUrl(ctx, url, "/provider/url", "url")
}

const checkCapabilities = (ctx: Context, card: JsonObject): void => {
  const capabilities = requiredObject(
    ctx,
    card,
    "capabilities",
    "",
    'Declare capabilities, even if empty: {"streaming": false, "pushNotifications": false}.'
  )
  if (capabilities === undefined) return
  for (const flag of ["streaming", "pushNotifications", "extendedAgentCard", "skillQuery"]) {
    optionalBoolean(ctx, capabilities, flag, "/capabilities")
  }
  const extensions = optionalList(ctx, capabilities, "extensions", "/capabilities")
  for (const [extension, path] of objectItems(ctx, extensions, "/capabilities/extensions", "extensions")) {
    const uri = optionalString(ctx, extension, "uri", path)
    if (uri === undefined && !isPresent(extension["uri"])) {
      ctx.report("extension.uri_missing", at(path, "uri"), "the extension has no `uri`", "Identify the extension by its URI.")
    }
    optionalString(ctx, extension, "description", path)
    optionalBoolean(ctx, extension, "required", path)
    optionalObject(ctx, extension, "params", path)
  }
}

const checkModes = (ctx: Context, owner: JsonObject, key: string, base: string, required: boolean): void => {
  const list = required
    ? requiredList(ctx, owner, key, base, "List the media types the agent accepts or produces, e.g. [\"text/plain\"].")
    : optionalList(ctx, owner, key, base)
  checkStringItems(ctx, list, at(base, key), key)
}

const checkSkillStructure = (ctx: Context, skill: JsonObject, path: string): void => {
  requiredString(ctx, skill, "id", path, "Give the skill a unique id.")
  requiredString(ctx, skill, "name", path, "Give the skill a human-readable name.")
  requiredString(ctx, skill, "description", path, "Describe what the skill does.")
  const tags = requiredList(ctx, skill, "tags", path, "Add at least one keyword tag.")
  checkStringItems(ctx, tags, at(path, "tags"), "tags")
  checkStringItems(ctx, optionalList(ctx, skill, "examples", path), at(path, "examples"), "examples")
  checkModes(ctx, skill, "inputModes", path, false)
  checkModes(ctx, skill, "outputModes", path, false)
  checkSecurityRequirementsStructure(ctx, skill, path)
}

const checkSignaturesStructure = (ctx: Context, card: JsonObject): void => {
  const list = optionalList(ctx, card, "signatures", "")
  for (const [signature, path] of objectItems(ctx, list, "/signatures", "signatures")) {
    requiredString(ctx, signature, "protected", path, "Put the base64url-encoded protected JWS header here.")
    requiredString(ctx, signature, "signature", path, "Put the base64url-encoded JWS signature here.")
    optionalObject(ctx, signature, "header", path)
  }
}

const checkSecurityRequirementsStructure = (ctx: Context, owner: JsonObject, base: string): void => {
  const list = optionalList(ctx, owner, "securityRequirements", base)
  for (const [requirement, path] of objectItems(ctx, list, at(base, "securityRequirements"), "securityRequirements")) {
    if (!isPresent(requirement["schemes"])) {
      if (Object.values(requirement).some(Array.isArray)) {
        ctx.report(
          "security_requirement.noncanonical_shape",
          path,
          "the requirement uses the v0.3 `{name: [scopes]}` form",
          'Write it as {"schemes": {"<name>": {"list": ["<scope>"]}}}.'
        )
      }
      continue
    }
    const schemes = optionalObject(ctx, requirement, "schemes", path)
    for (const [name, scopes] of Object.entries(schemes ?? {})) {
      const scopesPath = at(path, "schemes", name)
      if (!isObject(scopes)) {
        reportType(ctx, scopesPath, name, 'an object like {"list": []}', scopes)
        continue
      }
      checkStringItems(ctx, optionalList(ctx, scopes, "list", scopesPath), at(scopesPath, "list"), "list")
    }
  }
}

// --- security schemes ------------------------------------------------------------------------

type SchemeKind = "apiKey" | "http" | "oauth2" | "openIdConnect" | "mtls"
type SchemeForm = "oneof" | "type" | "case"

const SCHEME_MEMBERS: Readonly<Partial<Record<string, SchemeKind>>> = {
  apiKeySecurityScheme: "apiKey",
  httpAuthSecurityScheme: "http",
  oauth2SecurityScheme: "oauth2",
  openIdConnectSecurityScheme: "openIdConnect",
  mtlsSecurityScheme: "mtls"
}

const SCHEME_TYPES: Readonly<Partial<Record<string, SchemeKind>>> = {
  apiKey: "apiKey",
  http: "http",
  oauth2: "oauth2",
  openIdConnect: "openIdConnect",
  mutualTLS: "mtls"
}

const MEMBER_LIST = Object.keys(SCHEME_MEMBERS).join(", ")

const checkSecuritySchemesStructure = (ctx: Context, card: JsonObject): void => {
  const schemes = optionalObject(ctx, card, "securitySchemes", "")
  for (const [name, scheme] of Object.entries(schemes ?? {})) {
    const path = at("/securitySchemes", name)
    if (!isObject(scheme)) reportType(ctx, path, name, "an object", scheme)
    else checkSecurityScheme(ctx, scheme, path)
  }
}

const checkSecurityScheme = (ctx: Context, scheme: JsonObject, path: string): void => {
  const members = Object.keys(scheme).filter((key) => SCHEME_MEMBERS[key] !== undefined && isPresent(scheme[key]))
  if (members.length > 1) {
    ctx.report(
      "security_scheme.multiple_members",
      path,
      `the scheme sets ${members.map(quote).join(" and ")}`,
      "A SecurityScheme is a oneof: keep exactly one member."
    )
    return
  }
  const [member] = members
  const memberKind = member === undefined ? undefined : SCHEME_MEMBERS[member]
  if (member !== undefined && memberKind !== undefined) {
    checkSchemeBody(ctx, memberKind, scheme[member], at(path, member), "oneof")
    return
  }
  const type = scheme["type"]
  if (typeof type === "string") {
    // A hybrid card serves the v0.3 shape on purpose; the v0.3 schema checks it there.
    if (ctx.generation === "hybrid") return
    const kind = SCHEME_TYPES[type]
    ctx.report(
      "security_scheme.noncanonical_shape",
      path,
      "the scheme uses the v0.3 `type` form",
      kind === undefined
        ? `Use a v1.0 oneof member: ${MEMBER_LIST}.`
        : `Wrap the fields in ${quote(memberOf(kind))}; 1.0 replaced \`type\` with the member name (\`in\` became \`location\`).`
    )
    if (kind === undefined) reportUnknownScheme(ctx, at(path, "type"), `unknown scheme type ${JSON.stringify(type)}`)
    else checkSchemeBody(ctx, kind, scheme, path, "type")
    return
  }
  const tagged = scheme["scheme"]
  if (isObject(tagged) && typeof tagged["$case"] === "string") {
    const kind = SCHEME_MEMBERS[tagged["$case"]]
    ctx.report(
      "security_scheme.noncanonical_shape",
      path,
      "the scheme uses the ts-proto `{scheme: {$case, value}}` form",
      `Serialize the card with AgentCard.toJSON so it becomes {${JSON.stringify(tagged["$case"])}: {...}}.`
    )
    if (kind === undefined) {
      reportUnknownScheme(ctx, at(path, "scheme", "$case"), `unknown scheme $case ${JSON.stringify(tagged["$case"])}`)
    } else checkSchemeBody(ctx, kind, tagged["value"], at(path, "scheme", "value"), "case")
    return
  }
  reportUnknownScheme(ctx, path, "the scheme has no recognised member")
}

const memberOf = (kind: SchemeKind): string =>
  Object.keys(SCHEME_MEMBERS).find((member) => SCHEME_MEMBERS[member] === kind) ?? kind

const reportUnknownScheme = (ctx: Context, path: string, message: string): void =>
  ctx.report("security_scheme.unknown_shape", path, message, `Use exactly one of ${MEMBER_LIST}.`)

const checkSchemeBody = (ctx: Context, kind: SchemeKind, body: unknown, path: string, form: SchemeForm): void => {
  if (!isObject(body)) {
    reportType(ctx, path, memberOf(kind), "an object", body)
    return
  }
  optionalString(ctx, body, "description", path)
  switch (kind) {
    case "apiKey":
      return checkApiKeyScheme(ctx, body, path, form)
    case "http":
      requiredString(ctx, body, "scheme", path, 'Name the HTTP auth scheme, e.g. "Bearer".')
      optionalString(ctx, body, "bearerFormat", path)
      return
    case "oauth2": {
      const flows = requiredObject(ctx, body, "flows", path, "Describe the OAuth2 flow, e.g. clientCredentials with tokenUrl and scopes.")
      if (flows !== undefined) checkOAuthFlows(ctx, flows, at(path, "flows"), form)
      checkOptionalUrl(ctx, optionalString(ctx, body, "oauth2MetadataUrl", path), at(path, "oauth2MetadataUrl"), "oauth2MetadataUrl")
      return
    }
    case "openIdConnect": {
      const url = requiredString(ctx, body, "openIdConnectUrl", path, "Give the OpenID Connect discovery URL.")
      checkOptionalUrl(ctx, url, at(path, "openIdConnectUrl"), "openIdConnectUrl")
      return
    }
    case "mtls":
      return
  }
}

const API_KEY_LOCATIONS = ["query", "header", "cookie"]

const checkApiKeyScheme = (ctx: Context, body: JsonObject, path: string, form: SchemeForm): void => {
  const locationKey = form === "type" ? "in" : "location"
  const location = requiredString(ctx, body, locationKey, path, 'Say where the key goes: "header", "query" or "cookie".')
  if (location !== undefined && !API_KEY_LOCATIONS.includes(location)) {
    ctx.report(
      "security_scheme.invalid_location",
      at(path, locationKey),
      `${JSON.stringify(location)} is not query, header or cookie`,
      'Use "header", "query" or "cookie".'
    )
  }
  requiredString(ctx, body, "name", path, "Name the header, query parameter or cookie that carries the key.")
}

type FlowName = "authorizationCode" | "clientCredentials" | "deviceCode" | "implicit" | "password"

interface FlowFields {
  readonly required: ReadonlyArray<string>
  readonly optional: ReadonlyArray<string>
}

const FLOW_URL_FIELDS: Readonly<Record<FlowName, FlowFields>> = {
  authorizationCode: { required: ["authorizationUrl", "tokenUrl"], optional: ["refreshUrl"] },
  clientCredentials: { required: ["tokenUrl"], optional: ["refreshUrl"] },
  deviceCode: { required: ["deviceAuthorizationUrl", "tokenUrl"], optional: ["refreshUrl"] },
  // Deprecated flows have no REQUIRED fields in the v1.0 proto.
  implicit: { required: [], optional: ["authorizationUrl", "refreshUrl"] },
  password: { required: [], optional: ["tokenUrl", "refreshUrl"] }
}

const isFlowName = (name: string): name is FlowName => name in FLOW_URL_FIELDS

const checkOAuthFlows = (ctx: Context, flows: JsonObject, path: string, form: SchemeForm): void => {
  const tagged = flows["flow"]
  const present: Array<readonly [string, unknown, string]> =
    isObject(tagged) && typeof tagged["$case"] === "string"
      ? [[tagged["$case"], tagged["value"], at(path, "flow", "value")]]
      : Object.keys(flows)
          .filter((key) => isFlowName(key) && isPresent(flows[key]))
          .map((key) => [key, flows[key], at(path, key)] as const)
  if (present.length === 0) {
    ctx.report(
      "oauth_flows.none",
      path,
      "no OAuth2 flow is declared",
      "Declare one flow: authorizationCode, clientCredentials or deviceCode."
    )
    return
  }
  // v0.3 (`type` form) allowed several flows at once; the v1.0 oneof does not.
  if (present.length > 1 && form !== "type") {
    ctx.report(
      "oauth_flows.multiple",
      path,
      `the flows oneof sets ${present.map(([name]) => quote(name)).join(" and ")}`,
      "Keep one flow per scheme; declare another scheme for the other flow."
    )
  }
  for (const [name, flow, flowPath] of present) {
    if (!isFlowName(name)) {
      ctx.report(
        "oauth_flows.none",
        flowPath,
        `unknown OAuth2 flow ${JSON.stringify(name)}`,
        "Use authorizationCode, clientCredentials or deviceCode."
      )
      continue
    }
    checkOAuthFlow(ctx, name, flow, flowPath)
  }
}

const checkOAuthFlow = (ctx: Context, name: FlowName, flow: unknown, path: string): void => {
  if (name === "implicit" || name === "password") {
    ctx.report(
      "oauth_flows.deprecated",
      path,
      `the ${name} flow is deprecated`,
      name === "implicit" ? "Use authorizationCode with PKCE." : "Use authorizationCode with PKCE or deviceCode."
    )
  }
  if (!isObject(flow)) {
    reportType(ctx, path, name, "an object", flow)
    return
  }
  const fields = FLOW_URL_FIELDS[name]
  for (const key of fields.required) {
    checkOptionalUrl(ctx, requiredString(ctx, flow, key, path, `Give the flow's ${key}.`), at(path, key), key)
  }
  for (const key of fields.optional) checkOptionalUrl(ctx, optionalString(ctx, flow, key, path), at(path, key), key)
  const scopes = flow["scopes"]
  if (!isPresent(scopes)) {
    if (fields.required.length > 0) {
      ctx.report(
        "oauth_flow.scopes_missing",
        at(path, "scopes"),
        "the flow has no `scopes` map",
        'Declare the scopes, e.g. {"read": "Read access"} ({} if none).'
      )
    }
  } else if (!isObject(scopes)) {
    reportType(ctx, at(path, "scopes"), "scopes", "an object of scope → description", scopes)
  } else {
    for (const [scope, description] of Object.entries(scopes)) {
      if (typeof description !== "string") reportType(ctx, at(path, "scopes", scope), scope, "a string", description)
    }
  }
}

// --- the whole v1.0 card -----------------------------------------------------------------------

const checkV1Structure = (ctx: Context, card: JsonObject): void => {
  requiredString(ctx, card, "name", "", "Give the agent a human-readable name.")
  requiredString(ctx, card, "description", "", "Describe what the agent does.")
  requiredString(ctx, card, "version", "", 'Give the agent\'s own version, e.g. "1.0.0".')
  // An unknown-generation card already has an error saying supportedInterfaces is missing.
  if (ctx.generation !== "unknown") checkSupportedInterfaces(ctx, card)
  checkProvider(ctx, card)
  checkOptionalUrl(ctx, optionalString(ctx, card, "documentationUrl", ""), "/documentationUrl", "documentationUrl")
  checkOptionalUrl(ctx, optionalString(ctx, card, "iconUrl", ""), "/iconUrl", "iconUrl")
  checkCapabilities(ctx, card)
  checkSecuritySchemesStructure(ctx, card)
  checkSecurityRequirementsStructure(ctx, card, "")
  checkModes(ctx, card, "defaultInputModes", "", true)
  checkModes(ctx, card, "defaultOutputModes", "", true)
  const skills = requiredList(ctx, card, "skills", "", "Describe at least one skill with id, name, description and tags.")
  for (const [skill, path] of objectItems(ctx, skills, "/skills", "skills")) checkSkillStructure(ctx, skill, path)
  checkSignaturesStructure(ctx, card)
}

const SECURITY_RENAME_HINT =
  '1.0 renamed `security` to `securityRequirements`, written as [{"schemes": {"<name>": {"list": ["<scope>"]}}}].'

/** Fields that 1.0 renamed or moved; `url`, `preferredTransport` and `protocolVersion` make a card hybrid instead. */
const V03_LEFTOVERS: Readonly<Record<string, string>> = {
  additionalInterfaces:
    "1.0 moved `additionalInterfaces` into `supportedInterfaces[]` ({url, protocolBinding, protocolVersion}; " +
    "`transport` became `protocolBinding`).",
  supportsAuthenticatedExtendedCard: "1.0 moved it to `capabilities.extendedAgentCard`.",
  security: SECURITY_RENAME_HINT
}

const checkV1Leftovers = (ctx: Context, card: JsonObject): void => {
  for (const [key, hint] of Object.entries(V03_LEFTOVERS)) {
    if (isPresent(card[key])) ctx.report("migration.v03_field", at("", key), `${quote(key)} is a v0.3 field`, hint)
  }
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) {
    if (isPresent(skill["security"])) {
      ctx.report(
        "migration.v03_field",
        at(path, "security"),
        "`security` is the v0.3 name of this field",
        SECURITY_RENAME_HINT
      )
    }
  }
}

const checkRemovedFields = (ctx: Context, card: JsonObject): void => {
  const capabilities = card["capabilities"]
  if (isObject(capabilities) && isPresent(capabilities["stateTransitionHistory"])) {
    ctx.report(
      "migration.removed_field",
      "/capabilities/stateTransitionHistory",
      "`stateTransitionHistory` was removed in 1.0",
      "Drop it; v1.0 clients ignore it."
    )
  }
}

// ---------------------------------------------------------------------------------------------
// Rules for every generation: media types, skill ids, scheme references, interfaces, signatures.
// ---------------------------------------------------------------------------------------------

const checkAllMediaTypes = (ctx: Context, card: JsonObject): void => {
  checkMediaTypes(ctx, listOf(card, "defaultInputModes"), "/defaultInputModes")
  checkMediaTypes(ctx, listOf(card, "defaultOutputModes"), "/defaultOutputModes")
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) {
    checkMediaTypes(ctx, listOf(skill, "inputModes"), at(path, "inputModes"))
    checkMediaTypes(ctx, listOf(skill, "outputModes"), at(path, "outputModes"))
  }
}

const checkUniqueSkillIds = (ctx: Context, card: JsonObject): void => {
  const firstIndex = new Map<string, number>()
  listOf(card, "skills")?.forEach((skill, index) => {
    const id = isObject(skill) ? skill["id"] : undefined
    if (typeof id !== "string" || id === "") return
    const first = firstIndex.get(id)
    if (first === undefined) {
      firstIndex.set(id, index)
      return
    }
    ctx.report(
      "skill.duplicate_id",
      at("/skills", index, "id"),
      `skill id ${JSON.stringify(id)} is already used by /skills/${first}`,
      "Give every skill a unique id."
    )
  })
}

/** Scheme names referenced by one requirement, with their pointers, in either card generation's shape. */
const referencedSchemes = (requirement: JsonObject, path: string): ReadonlyArray<readonly [string, string]> => {
  const schemes = requirement["schemes"]
  if (isObject(schemes)) return Object.keys(schemes).map((name) => [name, at(path, "schemes", name)] as const)
  if (isPresent(schemes)) return []
  return Object.keys(requirement).map((name) => [name, at(path, name)] as const)
}

const checkSchemeReferences = (ctx: Context, card: JsonObject): void => {
  const defined = isObject(card["securitySchemes"]) ? new Set(Object.keys(card["securitySchemes"])) : new Set<string>()
  const checkOwner = (owner: JsonObject, base: string): void => {
    for (const key of ["securityRequirements", "security"]) {
      for (const [requirement, path] of objectItems(undefined, listOf(owner, key), at(base, key), key)) {
        for (const [name, namePath] of referencedSchemes(requirement, path)) {
          if (defined.has(name)) continue
          ctx.report(
            "security_requirement.undefined_scheme",
            namePath,
            `scheme ${JSON.stringify(name)} is not defined in securitySchemes`,
            defined.size === 0
              ? `Declare ${JSON.stringify(name)} in \`securitySchemes\`.`
              : `Declare it in \`securitySchemes\` or use one of: ${[...defined].join(", ")}.`
          )
        }
      }
    }
  }
  checkOwner(card, "")
  for (const [skill, path] of objectItems(undefined, listOf(card, "skills"), "/skills", "skills")) checkOwner(skill, path)
}

/** v0.3 endpoints: `url` + `preferredTransport` and `additionalInterfaces[]` (types are the schema's job). */
const checkLegacyInterfaces = (ctx: Context, card: JsonObject): void => {
  const url = card["url"]
  const transport = typeof card["preferredTransport"] === "string" ? card["preferredTransport"] : undefined
  if (typeof url === "string" && url !== "") checkInterfaceUrl(ctx, url, transport ?? "JSONRPC", "/url")
  if (transport !== undefined) checkBinding(ctx, transport, "/preferredTransport", "preferredTransport")
  const additional = objectItems(undefined, listOf(card, "additionalInterfaces"), "/additionalInterfaces", "")
  for (const [entry, path] of additional) {
    const entryTransport = typeof entry["transport"] === "string" ? entry["transport"] : undefined
    if (typeof entry["url"] === "string" && entry["url"] !== "") checkInterfaceUrl(ctx, entry["url"], entryTransport, at(path, "url"))
    if (entryTransport !== undefined) checkBinding(ctx, entryTransport, at(path, "transport"), "transport")
  }
}

const checkHybridConsistency = (ctx: Context, card: JsonObject): void => {
  const url = card["url"]
  if (typeof url !== "string" || url === "") return
  const transport = typeof card["preferredTransport"] === "string" ? card["preferredTransport"] : "JSONRPC"
  const listed = objectItems(undefined, listOf(card, "supportedInterfaces"), "", "").some(
    ([entry]) => entry["url"] === url && entry["protocolBinding"] === transport
  )
  if (!listed) {
    ctx.report(
      "hybrid.url_not_in_interfaces",
      "/url",
      `${JSON.stringify(url)} over ${transport} is not in supportedInterfaces`,
      'List it in `supportedInterfaces` too (with protocolVersion "0.3"), so v0.3 and v1.0 clients see the same endpoints.'
    )
  }
}

const checkSignaturesPresent = (ctx: Context, card: JsonObject): void => {
  const signatures = listOf(card, "signatures")
  if (signatures !== undefined && signatures.length > 0) {
    ctx.report(
      "signature.not_verified",
      "/signatures",
      `the card carries ${signatures.length} JWS signature(s) that were not verified`,
      "Verify them against the signer's published keys before trusting the card's contents."
    )
  }
}

const checkKindFields = (ctx: Context, card: JsonObject): void => {
  const owners: Array<readonly [JsonObject, string]> = [
    [card, ""],
    ...objectItems(undefined, listOf(card, "supportedInterfaces"), "/supportedInterfaces", ""),
    ...objectItems(undefined, listOf(card, "skills"), "/skills", "")
  ]
  for (const [owner, path] of owners) {
    if (isPresent(owner["kind"])) {
      ctx.report(
        "migration.kind_field",
        at(path, "kind"),
        "`kind` discriminators were removed in 1.0",
        "Drop the field; v1.0 tells types apart by member name."
      )
    }
  }
}

const V1_FIELDS = [
  "name",
  "description",
  "supportedInterfaces",
  "provider",
  "version",
  "documentationUrl",
  "capabilities",
  "securitySchemes",
  "securityRequirements",
  "defaultInputModes",
  "defaultOutputModes",
  "skills",
  "signatures",
  "iconUrl"
]

const V03_FIELDS = Object.keys(a2aV03AgentCardSchema.definitions.AgentCard.properties)

const knownFields = (generation: CardGeneration): ReadonlySet<string> => {
  switch (generation) {
    case "0.3":
      return new Set(V03_FIELDS)
    case "hybrid":
      return new Set([...V1_FIELDS, ...V03_FIELDS])
    default:
      // v0.3 leftovers on a v1.0 card get their own migration issues.
      return new Set([...V1_FIELDS, ...Object.keys(V03_LEFTOVERS)])
  }
}

const checkUnknownFields = (ctx: Context, card: JsonObject): void => {
  const known = knownFields(ctx.generation)
  for (const key of Object.keys(card)) {
    if (known.has(key) || key === "kind") continue
    ctx.report(
      "card.unknown_field",
      at("", key),
      `${quote(key)} is not an AgentCard field`,
      "Clients ignore unknown fields; check the spelling if you meant a standard field."
    )
  }
}

// ---------------------------------------------------------------------------------------------
// v0.3: ajv against the official schema, compiled once on first use.
// ---------------------------------------------------------------------------------------------

const SCHEME_DEFINITION_BY_TYPE: Readonly<Record<string, string>> = {
  apiKey: "APIKeySecurityScheme",
  http: "HTTPAuthSecurityScheme",
  oauth2: "OAuth2SecurityScheme",
  openIdConnect: "OpenIdConnectSecurityScheme",
  mutualTLS: "MutualTLSSecurityScheme"
}

interface V03Validators {
  readonly card: ValidateFunction
  /** One validator per security scheme `type`, used to report only the branch the card meant. */
  readonly schemeByType: ReadonlyMap<string, ValidateFunction>
}

let v03Validators: V03Validators | undefined

const getV03Validators = (): V03Validators => {
  if (v03Validators === undefined) {
    const ajv = new Ajv({ allErrors: true, strict: true })
    const { definitions } = a2aV03AgentCardSchema
    v03Validators = {
      card: ajv.compile(a2aV03AgentCardSchema),
      schemeByType: new Map(
        Object.entries(SCHEME_DEFINITION_BY_TYPE).map(([type, name]) => [
          type,
          ajv.compile({ $ref: `#/definitions/${name}`, definitions })
        ])
      )
    }
  }
  return v03Validators
}

interface SchemaViolation {
  readonly error: ErrorObject
  /** Pointer of the offending value; for `required`, the pointer of the missing property. */
  readonly path: string
}

const toViolation = (error: ErrorObject, base: string): SchemaViolation => {
  const path = base + error.instancePath
  return error.keyword === "required"
    ? { error, path: at(path, String(error.params["missingProperty"])) }
    : { error, path }
}

/** Runs the schema; an invalid security scheme is re-checked against the branch its `type` names. */
const v03Violations = (card: JsonObject): ReadonlyArray<SchemaViolation> => {
  const validators = getV03Validators()
  if (validators.card(card)) return []
  const errors = validators.card.errors ?? []
  const schemes: JsonObject = isObject(card["securitySchemes"]) ? card["securitySchemes"] : {}
  const failedSchemes = Object.keys(schemes)
    .map((name) => [name, at("/securitySchemes", name)] as const)
    .filter(([, path]) => errors.some((error) => error.keyword === "anyOf" && error.instancePath === path))
  const isInFailedScheme = (error: ErrorObject): boolean =>
    failedSchemes.some(([, path]) => error.instancePath === path || error.instancePath.startsWith(`${path}/`))
  const violations = errors.filter((error) => !isInFailedScheme(error)).map((error) => toViolation(error, ""))
  for (const [name, path] of failedSchemes) {
    const scheme = schemes[name]
    const type = isObject(scheme) ? scheme["type"] : undefined
    const branch = typeof type === "string" ? validators.schemeByType.get(type) : undefined
    const anyOf = errors.find((error) => error.keyword === "anyOf" && error.instancePath === path)
    if (branch === undefined || branch(scheme)) {
      if (anyOf !== undefined) violations.push({ error: anyOf, path })
    } else {
      violations.push(...(branch.errors ?? []).map((error) => toViolation(error, path)))
    }
  }
  return violations
}

const V03_CODES: Readonly<Partial<Record<string, CardIssueCode>>> = {
  required: "v03.required",
  type: "v03.type",
  enum: "v03.enum",
  const: "v03.const",
  anyOf: "v03.anyOf"
}

const v03Text = (error: ErrorObject, path: string, generation: CardGeneration): { message: string; hint: string } => {
  const params = error.params
  switch (error.keyword) {
    case "required": {
      const property = String(params["missingProperty"])
      const hint =
        generation === "hybrid" && path === "/url"
          ? "v0.3 clients read the top-level `url`; add the URL of a 0.3 interface, or drop `protocolVersion`/`preferredTransport` to publish a pure v1.0 card."
          : `Add ${quote(property)}; the A2A v0.3 schema requires it here.`
      return { message: `v0.3 schema: missing required property ${quote(property)}`, hint }
    }
    case "type":
      return { message: `v0.3 schema: must be of type ${String(params["type"])}`, hint: `Use a JSON ${String(params["type"])} here.` }
    case "enum": {
      const allowed = Array.isArray(params["allowedValues"]) ? params["allowedValues"].map(String).join(", ") : ""
      return { message: `v0.3 schema: must be one of ${allowed}`, hint: `Use one of: ${allowed}.` }
    }
    case "const":
      return {
        message: `v0.3 schema: must be ${JSON.stringify(params["allowedValue"])}`,
        hint: `Set it to ${JSON.stringify(params["allowedValue"])}.`
      }
    case "anyOf":
      return {
        message: "v0.3 schema: the security scheme has no valid `type`",
        hint:
          generation === "hybrid"
            ? "v0.3 clients read securitySchemes in the OpenAPI-style form: give it a `type` of apiKey, http, oauth2, openIdConnect or mutualTLS."
            : "Give the scheme a `type` of apiKey, http, oauth2, openIdConnect or mutualTLS."
      }
    default:
      return { message: `v0.3 schema: ${error.message ?? error.keyword}`, hint: "Follow the A2A v0.3 AgentCard schema." }
  }
}

/** Fields only the v0.3 half of a hybrid card has; the v1.0 rules own every other path. */
const isV03OnlyPath = (path: string): boolean =>
  /^\/(url|preferredTransport|protocolVersion|additionalInterfaces|supportsAuthenticatedExtendedCard|security|securitySchemes)(\/|$)/.test(path) ||
  /^\/skills\/\d+\/security(\/|$)/.test(path)

const checkV03Schema = (ctx: Context, card: JsonObject): void => {
  for (const { error, path } of v03Violations(card)) {
    if (ctx.generation === "hybrid" && !isV03OnlyPath(path)) continue
    const { message, hint } = v03Text(error, path, ctx.generation)
    ctx.report(V03_CODES[error.keyword] ?? "v03.schema", path, message, hint)
  }
}

// ---------------------------------------------------------------------------------------------
// Entry point.
// ---------------------------------------------------------------------------------------------

const detectGeneration = (card: JsonObject): CardGeneration => {
  const hasV1 = isPresent(card["supportedInterfaces"])
  const hasV03 = ["url", "preferredTransport", "protocolVersion"].some((key) => isPresent(card[key]))
  if (hasV1 && hasV03) return "hybrid"
  if (hasV1) return "1.0"
  if (hasV03) return "0.3"
  return "unknown"
}

const summarizeCapabilities = (card: JsonObject): CardCapabilitySummary => {
  const capabilities: JsonObject = isObject(card["capabilities"]) ? card["capabilities"] : {}
  return {
    streaming: capabilities["streaming"] === true,
    pushNotifications: capabilities["pushNotifications"] === true,
    extendedAgentCard: capabilities["extendedAgentCard"] === true || card["supportsAuthenticatedExtendedCard"] === true
  }
}

const highestInterfaceVersion = (card: JsonObject): string | undefined => {
  let best: { readonly text: string; readonly version: ParsedVersion } | undefined
  for (const [entry] of objectItems(undefined, listOf(card, "supportedInterfaces"), "", "")) {
    const text = entry["protocolVersion"]
    if (typeof text !== "string") continue
    const version = parseProtocolVersion(text)
    if (version === undefined) continue
    const newer =
      best === undefined ||
      version.major > best.version.major ||
      (version.major === best.version.major && version.minor > best.version.minor)
    if (newer) best = { text, version }
  }
  return best?.text
}

const declaredProtocolVersion = (card: JsonObject, generation: CardGeneration): string | undefined => {
  const legacy = typeof card["protocolVersion"] === "string" && card["protocolVersion"] !== "" ? card["protocolVersion"] : undefined
  switch (generation) {
    case "0.3":
      return legacy
    case "1.0":
      return highestInterfaceVersion(card)
    case "hybrid":
      // Hybrid cards count as v1.0: their interfaces say more than the v0.3 half's single version.
      return highestInterfaceVersion(card) ?? legacy
    case "unknown":
      return undefined
  }
}

const comparePaths = (left: string, right: string): number => {
  const a = left.split("/")
  const b = right.split("/")
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    const x = a[index] ?? ""
    const y = b[index] ?? ""
    if (x === y) continue
    const bothNumeric = /^\d+$/.test(x) && /^\d+$/.test(y)
    if (bothNumeric) return Number(x) - Number(y)
    return x < y ? -1 : 1
  }
  return a.length - b.length
}

const compareText = (left: string, right: string): number => (left < right ? -1 : left > right ? 1 : 0)

const sortIssues = (issues: ReadonlyArray<CardIssue>): ReadonlyArray<CardIssue> => {
  const unique = new Map(issues.map((issue) => [JSON.stringify([issue.path, issue.code, issue.message]), issue]))
  return [...unique.values()].sort(
    (a, b) => comparePaths(a.path, b.path) || compareText(a.code, b.code) || compareText(a.message, b.message)
  )
}

const NO_CAPABILITIES: CardCapabilitySummary = { streaming: false, pushNotifications: false, extendedAgentCard: false }

const notAnObject = (json: unknown): CardValidation => ({
  valid: false,
  generation: "unknown",
  capabilities: NO_CAPABILITIES,
  issues: [
    {
      code: "card.not_object",
      severity: CARD_ISSUE_SEVERITIES["card.not_object"],
      path: "",
      message: `the card must be a JSON object, not ${describeType(json)}`,
      hint: "Serve the agent card as a JSON object at /.well-known/agent-card.json."
    }
  ]
})

const runRules = (ctx: Context, card: JsonObject): void => {
  switch (ctx.generation) {
    case "1.0":
      checkV1Structure(ctx, card)
      checkV1Leftovers(ctx, card)
      checkRemovedFields(ctx, card)
      break
    case "0.3":
      ctx.report(
        "card.legacy_generation",
        "",
        "this is a v0.3 agent card",
        "1.0 moved `url` into `supportedInterfaces[].url` (with `protocolBinding` and `protocolVersion`); publish `supportedInterfaces` too to reach v1.0 clients."
      )
      checkV03Schema(ctx, card)
      checkLegacyInterfaces(ctx, card)
      break
    case "hybrid":
      checkV1Structure(ctx, card)
      checkRemovedFields(ctx, card)
      checkV03Schema(ctx, card)
      checkLegacyInterfaces(ctx, card)
      checkHybridConsistency(ctx, card)
      break
    case "unknown":
      ctx.report(
        "card.generation_unknown",
        "",
        "the card has neither `supportedInterfaces` (v1.0) nor `url`/`protocolVersion` (v0.3)",
        'Add `supportedInterfaces`, e.g. [{"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}].'
      )
      checkV1Structure(ctx, card)
      checkV1Leftovers(ctx, card)
      break
  }
  checkAllMediaTypes(ctx, card)
  checkUniqueSkillIds(ctx, card)
  checkSchemeReferences(ctx, card)
  checkSignaturesPresent(ctx, card)
  checkKindFields(ctx, card)
  checkUnknownFields(ctx, card)
}

const SKIPPED_SHOWN = 5

/**
 * Reads the card as the client does (same decoding, same interface predicate, see
 * usableInterfaces) and reports what would stop the client, so "valid" always means "usable".
 * A card the client cannot decode is reported only when no other rule explained it already.
 */
const checkClientCanUse = (ctx: Context, card: JsonObject, othersFoundErrors: boolean): void => {
  const reading = readAsClient(card)
  if (Either.isLeft(reading)) {
    if (!othersFoundErrors) {
      ctx.report("card.unreadable", "", `relay cannot read the card: ${reading.left}`, "Fix that field; relay's client rejects the card as it is.")
    }
    return
  }
  const { usable, skipped } = reading.right
  // No interface at all is reported by the structural rules (required, empty list, v0.3 url).
  if (usable.length > 0 || (skipped.length === 0 && othersFoundErrors)) return
  const reasons = skipped.slice(0, SKIPPED_SHOWN).map(({ entry, reason }) => `${entry.protocolBinding} ${entry.protocolVersion} at ${entry.url}: ${reason}`)
  const more = skipped.length > SKIPPED_SHOWN ? `; and ${skipped.length - SKIPPED_SHOWN} more` : ""
  ctx.report(
    "card.no_usable_interface",
    ctx.generation === "0.3" ? "" : "/supportedInterfaces",
    skipped.length === 0 ? "the card declares no interface relay can use" : `relay can use none of the interfaces (${reasons.join("; ")}${more})`,
    'Declare an interface relay speaks, e.g. {"url": "https://agent.example.com/a2a", "protocolBinding": "JSONRPC", "protocolVersion": "1.0"}.'
  )
}

/** Validates an agent card of either generation and reports every issue found. Never throws. */
export const validateCard = (json: unknown): CardValidation => {
  if (!isObject(json)) return notAnObject(json)
  const generation = detectGeneration(json)
  const { context, issues } = makeCollector(generation)
  runRules(context, json)
  checkClientCanUse(context, json, issues.some((issue) => issue.severity === "error"))
  const sorted = sortIssues(issues)
  const agentName = typeof json["name"] === "string" && json["name"] !== "" ? json["name"] : undefined
  const protocolVersion = declaredProtocolVersion(json, generation)
  return {
    valid: sorted.every((issue) => issue.severity !== "error"),
    generation,
    ...(agentName === undefined ? {} : { agentName }),
    ...(protocolVersion === undefined ? {} : { protocolVersion }),
    capabilities: summarizeCapabilities(json),
    issues: sorted
  }
}
