/** v0.3 cards: ajv against the official v0.3.0 schema, compiled once on first use. */
import type { ErrorObject, ValidateFunction } from "ajv"
import { Ajv } from "ajv"
import type { CardGeneration } from "../cardGeneration.js"
import { a2aV03AgentCardSchema } from "../schemas/a2aV03Schema.js"
import { at, type Context, isObject, type JsonObject, quote } from "./context.js"
import type { CardIssueCode } from "./issues.js"

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
      const hint = generation === "hybrid" && path === "/url"
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
        hint: generation === "hybrid"
          ? "v0.3 clients read securitySchemes in the OpenAPI-style form: give it a `type` of apiKey, http, oauth2, openIdConnect or mutualTLS."
          : "Give the scheme a `type` of apiKey, http, oauth2, openIdConnect or mutualTLS."
      }
    default:
      return { message: `v0.3 schema: ${error.message ?? error.keyword}`, hint: "Follow the A2A v0.3 AgentCard schema." }
  }
}

/** Fields only the v0.3 half of a hybrid card has; the v1.0 rules own every other path. */
const isV03OnlyPath = (path: string): boolean =>
  /^\/(url|preferredTransport|protocolVersion|additionalInterfaces|supportsAuthenticatedExtendedCard|security|securitySchemes)(\/|$)/.test(
    path
  ) ||
  /^\/skills\/\d+\/security(\/|$)/.test(path)

export const checkV03Schema = (ctx: Context, card: JsonObject): void => {
  for (const { error, path } of v03Violations(card)) {
    if (ctx.generation === "hybrid" && !isV03OnlyPath(path)) continue
    const { message, hint } = v03Text(error, path, ctx.generation)
    ctx.report(V03_CODES[error.keyword] ?? "v03.schema", path, message, hint)
  }
}
