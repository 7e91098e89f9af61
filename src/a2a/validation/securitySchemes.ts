/** v1.0 security schemes: the oneof members, the v0.3 `type` and ts-proto `$case` forms, OAuth2 flows. */
import { at, type Context, isObject, isPresent, type JsonObject, quote } from "./context.js"
import { optionalObject, optionalString, reportType, requiredObject, requiredString } from "./fields.js"
import { checkOptionalUrl } from "./values.js"

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

export const checkSecuritySchemesStructure = (ctx: Context, card: JsonObject): void => {
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

const memberOf = (kind: SchemeKind): string => Object.keys(SCHEME_MEMBERS).find((member) => SCHEME_MEMBERS[member] === kind) ?? kind

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
      requiredString(ctx, body, "scheme", path, "Name the HTTP auth scheme, e.g. \"Bearer\".")
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
  const location = requiredString(ctx, body, locationKey, path, "Say where the key goes: \"header\", \"query\" or \"cookie\".")
  if (location !== undefined && !API_KEY_LOCATIONS.includes(location)) {
    ctx.report(
      "security_scheme.invalid_location",
      at(path, locationKey),
      `${JSON.stringify(location)} is not query, header or cookie`,
      "Use \"header\", \"query\" or \"cookie\"."
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
  const present: Array<readonly [string, unknown, string]> = isObject(tagged) && typeof tagged["$case"] === "string"
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
        "Declare the scopes, e.g. {\"read\": \"Read access\"} ({} if none)."
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
