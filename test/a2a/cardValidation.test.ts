import { AgentCard as SdkAgentCard } from "@a2a-js/sdk"
import { duplicateInterfacesForLegacy } from "@a2a-js/sdk/compat/v0_3"
import { agentCardHandler } from "@a2a-js/sdk/server/express"
import { Effect, Either } from "effect"
import express from "express"
import type { Server } from "node:http"
import type { AddressInfo } from "node:net"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { cardFromWire } from "../../src/a2a/translate.js"
import { CARD_ISSUE_CODES, CARD_ISSUE_SEVERITIES, validateCard } from "../../src/a2a/validation/cardValidation.js"
import type { CardIssue, CardValidation } from "../../src/a2a/validation/cardValidation.js"
import { selectEndpoints } from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

// ---------------------------------------------------------------------------------------------
// Fixtures
// ---------------------------------------------------------------------------------------------

type Card = Record<string, unknown>

/** A clean v1.0 card: every REQUIRED field, canonical ProtoJSON. */
const cleanV1Card = (): Card => ({
  name: "Recipe Agent",
  description: "Helps with recipes.",
  version: "2.1.0",
  supportedInterfaces: [
    { url: "https://recipes.example.com/a2a/jsonrpc", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: "https://recipes.example.com/a2a/rest", protocolBinding: "HTTP+JSON", protocolVersion: "1.0", tenant: "" },
    { url: "recipes.example.com:443", protocolBinding: "GRPC", protocolVersion: "1.0" }
  ],
  provider: { organization: "Example Kitchens", url: "https://example.com" },
  capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
  securitySchemes: {
    bearer: { httpAuthSecurityScheme: { scheme: "Bearer", bearerFormat: "JWT" } },
    oauth: {
      oauth2SecurityScheme: {
        flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token", scopes: { read: "Read recipes" } } }
      }
    },
    key: { apiKeySecurityScheme: { location: "header", name: "X-API-Key" } }
  },
  securityRequirements: [{ schemes: { bearer: { list: [] } } }, { schemes: { oauth: { list: ["read"] } } }],
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain", "application/json"],
  skills: [
    {
      id: "find-recipe",
      name: "Find recipe",
      description: "Finds a recipe.",
      tags: ["cooking"],
      examples: ["A vegan lasagne"],
      inputModes: ["text/plain"],
      outputModes: ["application/json"],
      securityRequirements: [{ schemes: { key: { list: [] } } }]
    }
  ]
})

/** The sample card of spec §8.5 (docs/specification.md of a2aproject/A2A, v1.0.1). */
const specSampleCard = (): Card => ({
  name: "GeoSpatial Route Planner Agent",
  description: "Provides advanced route planning, traffic analysis, and custom map generation services.",
  supportedInterfaces: [
    { url: "https://georoute-agent.example.com/a2a/v1", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
    { url: "https://georoute-agent.example.com/a2a/grpc", protocolBinding: "GRPC", protocolVersion: "1.0" },
    { url: "https://georoute-agent.example.com/a2a/json", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" }
  ],
  provider: { organization: "Example Geo Services Inc.", url: "https://www.examplegeoservices.com" },
  iconUrl: "https://georoute-agent.example.com/icon.png",
  version: "1.2.0",
  documentationUrl: "https://docs.examplegeoservices.com/georoute-agent/api",
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false, extendedAgentCard: true },
  securitySchemes: {
    google: {
      openIdConnectSecurityScheme: { openIdConnectUrl: "https://accounts.google.com/.well-known/openid-configuration" }
    }
  },
  security: [{ google: ["openid", "profile", "email"] }],
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["application/json", "image/png"],
  skills: [
    {
      id: "route-optimizer-traffic",
      name: "Traffic-Aware Route Optimizer",
      description: "Calculates the optimal driving route between two or more locations.",
      tags: ["maps", "routing", "navigation", "directions", "traffic"],
      examples: ["Plan a route from A to B avoiding tolls."],
      inputModes: ["application/json", "text/plain"],
      outputModes: ["application/json", "application/vnd.geo+json", "text/html"]
    },
    {
      id: "custom-map-generator",
      name: "Personalized Map Generator",
      description: "Creates custom map images.",
      tags: ["maps", "customization", "visualization", "cartography"],
      inputModes: ["application/json"],
      outputModes: ["image/png", "image/jpeg", "application/json", "text/html"]
    }
  ],
  signatures: [{ protected: "eyJhbGciOiJFUzI1NiJ9", signature: "QFdkNLNszlGj3z3u0YQGt_T9LixY3qtdQpZmsTdDHDe3" }]
})

/** A v0.3.0 card in the shape of the v0.3 spec sample. */
const v03Card = (): Card => ({
  protocolVersion: "0.3.0",
  name: "GeoSpatial Route Planner Agent",
  description: "Route planning.",
  url: "https://georoute-agent.example.com/a2a/v1",
  preferredTransport: "JSONRPC",
  additionalInterfaces: [
    { url: "https://georoute-agent.example.com/a2a/v1", transport: "JSONRPC" },
    { url: "https://georoute-agent.example.com/a2a/grpc", transport: "GRPC" },
    { url: "https://georoute-agent.example.com/a2a/json", transport: "HTTP+JSON" }
  ],
  provider: { organization: "Example Geo Services Inc.", url: "https://www.examplegeoservices.com" },
  version: "1.2.0",
  capabilities: { streaming: true, pushNotifications: true, stateTransitionHistory: false },
  securitySchemes: {
    google: { type: "openIdConnect", openIdConnectUrl: "https://accounts.google.com/.well-known/openid-configuration" },
    key: { type: "apiKey", in: "header", name: "X-API-Key" }
  },
  security: [{ google: ["openid", "profile", "email"] }],
  defaultInputModes: ["application/json", "text/plain"],
  defaultOutputModes: ["application/json", "image/png"],
  skills: [
    {
      id: "route-optimizer-traffic",
      name: "Traffic-Aware Route Optimizer",
      description: "Calculates routes.",
      tags: ["maps", "routing"],
      security: [{ key: [] }]
    }
  ],
  supportsAuthenticatedExtendedCard: true
})

/** What @a2a-js/sdk 1.3.0 serves to clients without `A2A-Version` when legacyCompat is on. */
const hybridCard = (): Card => ({
  name: "Echo",
  description: "Echoes.",
  version: "1.0.0",
  url: "http://127.0.0.1:4000/a2a/jsonrpc",
  preferredTransport: "JSONRPC",
  protocolVersion: "0.3",
  capabilities: { streaming: true, pushNotifications: true },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes text.", tags: ["echo"], security: [{ bearer: [] }] }],
  additionalInterfaces: [{ url: "http://127.0.0.1:4000/a2a/rest", transport: "HTTP+JSON" }],
  supportsAuthenticatedExtendedCard: false,
  securitySchemes: { bearer: { type: "http", scheme: "Bearer", bearerFormat: "JWT" } },
  security: [{ bearer: [] }],
  supportedInterfaces: [
    { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
    { url: "http://127.0.0.1:4000/a2a/rest", protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" },
    { url: "http://127.0.0.1:4000/a2a/jsonrpc", protocolBinding: "JSONRPC", tenant: "", protocolVersion: "0.3" },
    { url: "http://127.0.0.1:4000/a2a/rest", protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "0.3" }
  ]
})

// ---------------------------------------------------------------------------------------------
// Helpers
// ---------------------------------------------------------------------------------------------

type IssueKey = readonly [CardIssue["severity"], string, string]

const keys = (result: CardValidation): ReadonlyArray<IssueKey> =>
  result.issues.map((issue) => [issue.severity, issue.code, issue.path] as const)

/** Every result produced in this file, so the code-table test sees them all. */
const seen: Array<CardValidation> = []
const check = (json: unknown): CardValidation => {
  const result = validateCard(json)
  seen.push(result)
  return result
}

// ---------------------------------------------------------------------------------------------
// Valid cards of each generation
// ---------------------------------------------------------------------------------------------

describe("validateCard: valid cards", () => {
  it("accepts a clean v1.0 card without any issue and summarizes it", () => {
    const result = check(cleanV1Card())
    expect(result).toEqual({
      valid: true,
      generation: "1.0",
      agentName: "Recipe Agent",
      protocolVersion: "1.0",
      capabilities: { streaming: true, pushNotifications: false, extendedAgentCard: true },
      issues: []
    })
  })

  it("accepts the spec §8.5 sample and flags only its v0.3 leftovers and the unverified signature", () => {
    const result = check(specSampleCard())
    expect(result.valid).toBe(true)
    expect(result.generation).toBe("1.0")
    expect(keys(result)).toEqual([
      ["info", "migration.removed_field", "/capabilities/stateTransitionHistory"],
      ["warning", "migration.v03_field", "/security"],
      ["info", "signature.not_verified", "/signatures"]
    ])
    const security = result.issues.find((issue) => issue.path === "/security")
    expect(security?.hint).toContain("securityRequirements")
  })

  it("accepts a valid v0.3 card and notes that it is a legacy card", () => {
    const result = check(v03Card())
    expect(result.valid).toBe(true)
    expect(result.generation).toBe("0.3")
    expect(result.protocolVersion).toBe("0.3.0")
    expect(result.agentName).toBe("GeoSpatial Route Planner Agent")
    expect(result.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: true })
    expect(keys(result)).toEqual([["info", "card.legacy_generation", ""]])
    expect(result.issues[0]?.hint).toContain("1.0 moved `url` into `supportedInterfaces[].url`")
  })

  it("accepts a hybrid card like the SDK's legacy-compat output without any issue", () => {
    const result = check(hybridCard())
    expect(result).toMatchObject({ valid: true, generation: "hybrid", protocolVersion: "1.0", issues: [] })
  })

  it("reads the highest Major.Minor among the interfaces, numerically", () => {
    const card = cleanV1Card()
    card["supportedInterfaces"] = [
      { url: "https://a.example.com/a", protocolBinding: "JSONRPC", protocolVersion: "0.3" },
      { url: "https://a.example.com/b", protocolBinding: "JSONRPC", protocolVersion: "1.10" },
      { url: "https://a.example.com/c", protocolBinding: "JSONRPC", protocolVersion: "1.2" }
    ]
    expect(check(card).protocolVersion).toBe("1.10")
  })
})

// ---------------------------------------------------------------------------------------------
// Real peer: the cards @a2a-js/sdk 1.3.0 actually serves
// ---------------------------------------------------------------------------------------------

describe("validateCard: cards served by @a2a-js/sdk 1.3.0", () => {
  let server: Server
  let baseUrl = ""

  const sdkCard = (): SdkAgentCard => ({
    name: "SDK Agent",
    description: "Served by the official SDK.",
    version: "0.0.1",
    supportedInterfaces: duplicateInterfacesForLegacy(
      [
        { url: `${baseUrl}/a2a/jsonrpc`, protocolBinding: "JSONRPC", tenant: "", protocolVersion: "1.0" },
        { url: `${baseUrl}/a2a/rest`, protocolBinding: "HTTP+JSON", tenant: "", protocolVersion: "1.0" }
      ],
      ["JSONRPC", "HTTP+JSON"]
    ),
    provider: { organization: "Tests", url: "https://example.com" },
    capabilities: { streaming: true, pushNotifications: true, extensions: [], extendedAgentCard: false },
    securitySchemes: {
      bearer: { scheme: { $case: "httpAuthSecurityScheme", value: { description: "", scheme: "Bearer", bearerFormat: "JWT" } } }
    },
    securityRequirements: [{ schemes: { bearer: { list: [] } } }],
    defaultInputModes: ["text/plain"],
    defaultOutputModes: ["text/plain"],
    skills: [
      {
        id: "echo",
        name: "Echo",
        description: "Echoes text.",
        tags: ["echo"],
        examples: [],
        inputModes: [],
        outputModes: [],
        securityRequirements: []
      }
    ],
    signatures: []
  })

  beforeAll(async () => {
    const app = express()
    app.use(
      "/.well-known/agent-card.json",
      agentCardHandler({ agentCardProvider: async () => sdkCard(), legacyCompat: { enabled: true } })
    )
    server = await new Promise<Server>((resolve, reject) => {
      const listening = app.listen(0, "127.0.0.1", () => resolve(listening))
      listening.once("error", reject)
    })
    const { port } = server.address() as AddressInfo // listen() on a TCP port always yields AddressInfo
    baseUrl = `http://127.0.0.1:${port}`
  })

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })

  const fetchCard = async (headers: Record<string, string>): Promise<unknown> => {
    const response = await fetch(`${baseUrl}/.well-known/agent-card.json`, { headers, signal: AbortSignal.timeout(5_000) })
    expect(response.status).toBe(200)
    return response.json()
  }

  it("finds no issue in the hybrid card served to v0.3 clients", async () => {
    const card = await fetchCard({})
    // The SDK really serves both shapes here: v0.3 `url` + `type`-form schemes, and v1.0 interfaces.
    expect(card).toMatchObject({
      url: `${baseUrl}/a2a/jsonrpc`,
      protocolVersion: "0.3",
      securitySchemes: { bearer: { type: "http", scheme: "Bearer" } },
      supportedInterfaces: expect.arrayContaining([expect.objectContaining({ protocolVersion: "1.0" })])
    })
    const result = check(card)
    expect(result.generation).toBe("hybrid")
    expect(result.issues).toEqual([])
    expect(result).toMatchObject({ valid: true, agentName: "SDK Agent", protocolVersion: "1.0" })
    expect(result.capabilities).toEqual({ streaming: true, pushNotifications: true, extendedAgentCard: false })
  })

  it("flags only the ts-proto $case security scheme in the card served to v1.0 clients", async () => {
    const card = await fetchCard({ "A2A-Version": "1.0" })
    expect(card).toMatchObject({ securitySchemes: { bearer: { scheme: { $case: "httpAuthSecurityScheme" } } } })
    const result = check(card)
    expect(result.generation).toBe("1.0")
    expect(result.valid).toBe(true)
    expect(keys(result)).toEqual([["warning", "security_scheme.noncanonical_shape", "/securitySchemes/bearer"]])
  })

  it("finds no issue in the SDK's canonical ProtoJSON (AgentCard.toJSON)", () => {
    const result = check(SdkAgentCard.toJSON(sdkCard()))
    expect(result).toMatchObject({ valid: true, generation: "1.0", issues: [] })
  })
})

// ---------------------------------------------------------------------------------------------
// Broken cards: every issue reported, with the right code, path and severity
// ---------------------------------------------------------------------------------------------

describe("validateCard: broken v1.0 cards", () => {
  it("reports every missing REQUIRED field of an almost empty card at once", () => {
    const result = check({ supportedInterfaces: [] })
    expect(result.valid).toBe(false)
    expect(result.generation).toBe("1.0")
    expect(keys(result)).toEqual([
      ["error", "field.required", "/capabilities"],
      ["error", "field.required", "/defaultInputModes"],
      ["error", "field.required", "/defaultOutputModes"],
      ["error", "field.required", "/description"],
      ["error", "field.required", "/name"],
      ["error", "field.required", "/skills"],
      ["error", "field.empty_list", "/supportedInterfaces"],
      ["error", "field.required", "/version"]
    ])
  })

  it("reports wrong types, empty strings and empty required lists", () => {
    const card = cleanV1Card()
    card["name"] = 42
    card["description"] = ""
    card["capabilities"] = { streaming: "yes", extensions: [{ description: "no uri" }, 3] }
    card["defaultInputModes"] = []
    card["defaultOutputModes"] = ["text/plain", 7]
    card["provider"] = { organization: "Org" }
    card["documentationUrl"] = "docs"
    const result = check(card)
    expect(keys(result)).toEqual([
      ["warning", "extension.uri_missing", "/capabilities/extensions/0/uri"],
      ["error", "field.type", "/capabilities/extensions/1"],
      ["error", "field.type", "/capabilities/streaming"],
      ["error", "field.empty_list", "/defaultInputModes"],
      ["error", "field.type", "/defaultOutputModes/1"],
      ["error", "field.required", "/description"],
      ["warning", "url.invalid", "/documentationUrl"],
      ["error", "field.type", "/name"],
      ["error", "field.required", "/provider/url"]
    ])
    expect(result.issues.find((issue) => issue.path === "/description")?.message).toContain("empty")
  })

  it("reports every interface problem: URLs, bindings, versions, duplicates and the v0.3 `transport`", () => {
    const card = cleanV1Card()
    card["supportedInterfaces"] = [
      { url: "http://agent.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0.1" },
      { url: "/relative", protocolBinding: "jsonrpc", protocolVersion: "v1" },
      { url: "https://a.example.com/x", transport: "JSONRPC", protocolVersion: "1.0" },
      { url: "wss://a.example.com/custom", protocolBinding: "https://bindings.example.com/ws", protocolVersion: "1.0" },
      { url: "https://a.example.com/rest", protocolBinding: "REST", protocolVersion: "1.0" },
      { url: "http://localhost:8080/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: "http://localhost:8080/a2a", protocolBinding: "JSONRPC", protocolVersion: "1.0" },
      { url: "localhost:50051", protocolBinding: "GRPC", protocolVersion: "1.0" },
      { url: "ftp://a.example.com/x", protocolBinding: "HTTP+JSON", protocolVersion: "1.0" },
      "not an object"
    ]
    const result = check(card)
    expect(result.valid).toBe(false)
    expect(keys(result)).toEqual([
      ["warning", "interface.protocol_version_patch", "/supportedInterfaces/0/protocolVersion"],
      ["warning", "interface.url_insecure", "/supportedInterfaces/0/url"],
      ["warning", "interface.binding_unknown", "/supportedInterfaces/1/protocolBinding"],
      ["error", "interface.protocol_version_invalid", "/supportedInterfaces/1/protocolVersion"],
      ["error", "interface.url_invalid", "/supportedInterfaces/1/url"],
      ["error", "field.required", "/supportedInterfaces/2/protocolBinding"],
      ["warning", "migration.v03_field", "/supportedInterfaces/2/transport"],
      ["info", "interface.binding_custom", "/supportedInterfaces/3/protocolBinding"],
      // relay reaches interfaces over http(s) only, whatever the binding (issue 17.5).
      ["error", "interface.url_invalid", "/supportedInterfaces/3/url"],
      ["warning", "interface.binding_unknown", "/supportedInterfaces/4/protocolBinding"],
      ["warning", "interface.duplicate", "/supportedInterfaces/6"],
      ["error", "interface.url_invalid", "/supportedInterfaces/8/url"],
      ["error", "field.type", "/supportedInterfaces/9"]
    ])
    const hintAt = (path: string): string => result.issues.find((issue) => issue.path === path)?.hint ?? ""
    expect(hintAt("/supportedInterfaces/0/url")).toContain("HTTPS")
    expect(hintAt("/supportedInterfaces/0/protocolVersion")).toContain("\"1.0\"")
    expect(hintAt("/supportedInterfaces/1/protocolBinding")).toContain("\"JSONRPC\"")
    expect(hintAt("/supportedInterfaces/2/protocolBinding")).toContain("transport")
    expect(hintAt("/supportedInterfaces/4/protocolBinding")).toContain("\"HTTP+JSON\"")
  })

  it("reports every skill problem: required fields, empty tags, duplicate ids and media types", () => {
    const card = cleanV1Card()
    card["skills"] = [
      { id: "a", name: "A", description: "First", tags: ["t"], inputModes: ["text"] },
      { id: "a", tags: [] },
      { id: "c", name: "C", description: "Third", tags: ["t", 5], outputModes: ["image/png", "png"] }
    ]
    card["defaultOutputModes"] = ["json"]
    const result = check(card)
    expect(keys(result)).toEqual([
      ["warning", "media_type.invalid", "/defaultOutputModes/0"],
      ["warning", "media_type.invalid", "/skills/0/inputModes/0"],
      ["error", "field.required", "/skills/1/description"],
      ["error", "skill.duplicate_id", "/skills/1/id"],
      ["error", "field.required", "/skills/1/name"],
      ["error", "field.empty_list", "/skills/1/tags"],
      ["warning", "media_type.invalid", "/skills/2/outputModes/1"],
      ["error", "field.type", "/skills/2/tags/1"]
    ])
  })

  it("reports every security problem: shapes, oneofs, flows, locations and undefined references", () => {
    const card = cleanV1Card()
    card["securitySchemes"] = {
      legacy: { type: "apiKey", in: "body", name: "k" },
      tsproto: { scheme: { $case: "httpAuthSecurityScheme", value: { scheme: "" } } },
      both: { httpAuthSecurityScheme: { scheme: "Bearer" }, mtlsSecurityScheme: {} },
      strange: { foo: {} },
      oauth: {
        oauth2SecurityScheme: {
          flows: { clientCredentials: { tokenUrl: "https://auth.example.com/token" }, implicit: { authorizationUrl: "x" } }
        }
      },
      noflow: { oauth2SecurityScheme: { flows: {} } },
      oidc: { openIdConnectSecurityScheme: {} },
      key: { apiKeySecurityScheme: { location: "header" } }
    }
    card["securityRequirements"] = [{ schemes: { ghost: { list: [] } } }, { legacy: [] }]
    card["skills"] = [{
      id: "s",
      name: "S",
      description: "D",
      tags: ["t"],
      securityRequirements: [{ schemes: { phantom: { list: ["x", 1] } } }]
    }]
    const result = check(card)
    expect(keys(result)).toEqual([
      ["error", "security_requirement.undefined_scheme", "/securityRequirements/0/schemes/ghost"],
      ["warning", "security_requirement.noncanonical_shape", "/securityRequirements/1"],
      ["error", "security_scheme.multiple_members", "/securitySchemes/both"],
      ["error", "field.required", "/securitySchemes/key/apiKeySecurityScheme/name"],
      ["warning", "security_scheme.noncanonical_shape", "/securitySchemes/legacy"],
      ["error", "security_scheme.invalid_location", "/securitySchemes/legacy/in"],
      ["error", "oauth_flows.none", "/securitySchemes/noflow/oauth2SecurityScheme/flows"],
      ["error", "oauth_flows.multiple", "/securitySchemes/oauth/oauth2SecurityScheme/flows"],
      ["warning", "oauth_flow.scopes_missing", "/securitySchemes/oauth/oauth2SecurityScheme/flows/clientCredentials/scopes"],
      ["warning", "oauth_flows.deprecated", "/securitySchemes/oauth/oauth2SecurityScheme/flows/implicit"],
      ["warning", "url.invalid", "/securitySchemes/oauth/oauth2SecurityScheme/flows/implicit/authorizationUrl"],
      ["error", "field.required", "/securitySchemes/oidc/openIdConnectSecurityScheme/openIdConnectUrl"],
      ["error", "security_scheme.unknown_shape", "/securitySchemes/strange"],
      ["warning", "security_scheme.noncanonical_shape", "/securitySchemes/tsproto"],
      ["error", "field.required", "/securitySchemes/tsproto/scheme/value/scheme"],
      ["error", "security_requirement.undefined_scheme", "/skills/0/securityRequirements/0/schemes/phantom"],
      ["error", "field.type", "/skills/0/securityRequirements/0/schemes/phantom/list/1"]
    ])
    const legacy = result.issues.find((issue) => issue.path === "/securitySchemes/legacy")
    expect(legacy?.hint).toContain("apiKeySecurityScheme")
  })

  it("flags v0.3 leftovers and kind fields on a pure v1.0 card with migration hints", () => {
    const card = cleanV1Card()
    card["additionalInterfaces"] = [{ url: "https://recipes.example.com/a2a/rest", transport: "HTTP+JSON" }]
    card["supportsAuthenticatedExtendedCard"] = true
    card["kind"] = "agent-card"
    card["capabilities"] = { streaming: false, stateTransitionHistory: true }
    card["skills"] = [{ id: "s", name: "S", description: "D", tags: ["t"], security: [{ bearer: [] }], kind: "skill" }]
    card["extras"] = {}
    const result = check(card)
    expect(result.valid).toBe(true)
    expect(keys(result)).toEqual([
      ["warning", "migration.v03_field", "/additionalInterfaces"],
      ["info", "migration.removed_field", "/capabilities/stateTransitionHistory"],
      ["info", "card.unknown_field", "/extras"],
      ["info", "migration.kind_field", "/kind"],
      ["info", "migration.kind_field", "/skills/0/kind"],
      ["warning", "migration.v03_field", "/skills/0/security"],
      ["warning", "migration.v03_field", "/supportsAuthenticatedExtendedCard"]
    ])
    expect(result.issues.find((issue) => issue.path === "/additionalInterfaces")?.hint).toContain("supportedInterfaces")
    expect(result.issues.find((issue) => issue.path === "/supportsAuthenticatedExtendedCard")?.hint).toContain(
      "capabilities.extendedAgentCard"
    )
    // The v0.3 flag still counts for the summary.
    expect(result.capabilities.extendedAgentCard).toBe(true)
  })

  it("escapes JSON pointer segments of scheme names", () => {
    const card = cleanV1Card()
    card["securitySchemes"] = { "a/b~c": { mtlsSecurityScheme: {} } }
    card["securityRequirements"] = [{ schemes: { "x/y": { list: [] } } }]
    card["skills"] = [{ id: "s", name: "S", description: "D", tags: ["t"] }]
    expect(keys(check(card))).toEqual([
      ["error", "security_requirement.undefined_scheme", "/securityRequirements/0/schemes/x~1y"]
    ])
  })
})

describe("validateCard: broken v0.3 cards", () => {
  it("turns every schema violation into its own issue, reporting only the branch a scheme's type names", () => {
    const card = v03Card()
    card["name"] = 3
    card["capabilities"] = { streaming: "yes" }
    card["url"] = "http://agent.example.com/a2a"
    card["additionalInterfaces"] = [{ url: "https://agent.example.com/rest" }]
    card["securitySchemes"] = {
      key: { type: "apiKey", in: "body" },
      proto: { httpAuthSecurityScheme: { scheme: "Bearer" } },
      oauth: { type: "oauth2", flows: { clientCredentials: { scopes: { read: 1 } } } }
    }
    card["security"] = [{ key: [] }, { missing: [] }]
    card["skills"] = [{ id: "s", name: "S", tags: "t", security: [{ proto: [] }] }]
    card["defaultInputModes"] = ["text"]
    const result = check(card)
    expect(result.valid).toBe(false)
    expect(keys(result)).toEqual([
      ["info", "card.legacy_generation", ""],
      ["error", "v03.required", "/additionalInterfaces/0/transport"],
      ["error", "v03.type", "/capabilities/streaming"],
      ["warning", "media_type.invalid", "/defaultInputModes/0"],
      ["error", "v03.type", "/name"],
      ["error", "security_requirement.undefined_scheme", "/security/1/missing"],
      ["error", "v03.enum", "/securitySchemes/key/in"],
      ["error", "v03.required", "/securitySchemes/key/name"],
      ["error", "v03.type", "/securitySchemes/oauth/flows/clientCredentials/scopes/read"],
      ["error", "v03.required", "/securitySchemes/oauth/flows/clientCredentials/tokenUrl"],
      ["error", "v03.anyOf", "/securitySchemes/proto"],
      ["error", "v03.required", "/skills/0/description"],
      ["error", "v03.type", "/skills/0/tags"],
      ["warning", "interface.url_insecure", "/url"]
    ])
    const anyOf = result.issues.find((issue) => issue.code === "v03.anyOf")
    expect(anyOf?.hint).toContain("type")
  })

  it("reports the required v0.3 fields a card is missing", () => {
    const result = check({ protocolVersion: "0.3.0", name: "Only a name" })
    expect(result.generation).toBe("0.3")
    expect(keys(result)).toEqual([
      ["info", "card.legacy_generation", ""],
      ["error", "v03.required", "/capabilities"],
      ["error", "v03.required", "/defaultInputModes"],
      ["error", "v03.required", "/defaultOutputModes"],
      ["error", "v03.required", "/description"],
      ["error", "v03.required", "/skills"],
      ["error", "v03.required", "/url"],
      ["error", "v03.required", "/version"]
    ])
  })
})

describe("validateCard: broken hybrid cards", () => {
  it("reports shared fields once, through the v1.0 rules, and the v0.3 half through the schema", () => {
    const card = hybridCard()
    delete card["url"]
    delete card["name"]
    card["securitySchemes"] = { bearer: { httpAuthSecurityScheme: { scheme: "Bearer" } } }
    card["preferredTransport"] = 5
    const result = check(card)
    expect(result.generation).toBe("hybrid")
    expect(keys(result)).toEqual([
      ["error", "field.required", "/name"],
      ["error", "v03.type", "/preferredTransport"],
      ["error", "v03.anyOf", "/securitySchemes/bearer"],
      ["error", "v03.required", "/url"]
    ])
    expect(result.issues.find((issue) => issue.path === "/url")?.hint).toContain("pure v1.0 card")
  })

  it("warns when the v0.3 url is not one of the supported interfaces", () => {
    const card = hybridCard()
    card["url"] = "https://elsewhere.example.com/a2a"
    expect(keys(check(card))).toEqual([["warning", "hybrid.url_not_in_interfaces", "/url"]])
  })
})

describe("validateCard: inputs that are not cards", () => {
  it.each([
    ["null", null],
    ["an array", [{ name: "x" }]],
    ["a string", "{\"name\":\"x\"}"],
    ["a number", 42],
    ["undefined", undefined]
  ])("gives an error issue for %s instead of throwing", (_label, input) => {
    const result = check(input)
    expect(result).toEqual({
      valid: false,
      generation: "unknown",
      capabilities: { streaming: false, pushNotifications: false, extendedAgentCard: false },
      issues: [expect.objectContaining({ code: "card.not_object", severity: "error", path: "" })]
    })
  })

  it("says what is missing when a card has neither generation's markers, and still checks the rest", () => {
    const result = check({ name: "Nameless", description: "No endpoints", version: "1" })
    expect(result.generation).toBe("unknown")
    expect(result.valid).toBe(false)
    expect(keys(result)).toEqual([
      ["error", "card.generation_unknown", ""],
      ["error", "field.required", "/capabilities"],
      ["error", "field.required", "/defaultInputModes"],
      ["error", "field.required", "/defaultOutputModes"],
      ["error", "field.required", "/skills"]
    ])
    expect(result.issues[0]?.message).toContain("supportedInterfaces")
    expect(result.issues[0]?.message).toContain("url")
  })
})

describe("validateCard agrees with the client's choice of interface (issue 17.5)", () => {
  const CARD_URL = "https://agent.example.com/.well-known/agent-card.json"
  /** What A2aClient would talk to: the card decoded as discovery does, then its interface selection. */
  const clientEndpoints = (card: unknown) =>
    Effect.runSync(Effect.either(cardFromWire(card))).pipe(
      Either.match({
        onLeft: () => [],
        onRight: ({ card }) => selectEndpoints(card, CARD_URL, { agentUrl: agentUrlOf("https://agent.example.com") })
      })
    )
  const withInterfaces = (...supportedInterfaces: ReadonlyArray<Card>): Card => ({ ...cleanV1Card(), supportedInterfaces })
  const errorCodes = (result: CardValidation) => result.issues.filter((issue) => issue.severity === "error").map((issue) => issue.code)

  it("an unknown protocol version on every interface is an error, and the client finds nothing to use", () => {
    const card = withInterfaces({ url: "https://a.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "9.9" })
    const result = check(card)
    expect(result.valid).toBe(false)
    expect(keys(result)).toEqual([["error", "card.no_usable_interface", "/supportedInterfaces"]])
    expect(result.issues[0]?.message).toContain("protocol version \"9.9\" is not one relay speaks (1.0, 0.3)")
    expect(clientEndpoints(card)).toEqual([])
  })

  it("no binding relay speaks (a custom binding) is an error", () => {
    for (
      const card of [
        withInterfaces({ url: "https://a.example.com/ws", protocolBinding: "https://bindings.example.com/ws", protocolVersion: "1.0" }),
        (({ additionalInterfaces: _dropped, ...card }) => ({ ...card, preferredTransport: "WEBSOCKET" }))(v03Card())
      ]
    ) {
      const result = check(card)
      expect(errorCodes(result)).toContain("card.no_usable_interface")
      expect(result.issues.find((issue) => issue.code === "card.no_usable_interface")?.message).toContain("is not one relay speaks")
      expect(clientEndpoints(card)).toEqual([])
    }
  })

  it("a non-http(s) URL is an error whatever the binding, and unusable", () => {
    for (const binding of ["JSONRPC", "HTTP+JSON", "SOMETHING", "urn:example:binding"]) {
      const card = withInterfaces({ url: "ftp://a.example.com/x", protocolBinding: binding, protocolVersion: "1.0" })
      const result = check(card)
      expect(keys(result), binding).toContainEqual(["error", "interface.url_invalid", "/supportedInterfaces/0/url"])
      expect(errorCodes(result), binding).toContain("card.no_usable_interface")
      expect(clientEndpoints(card)).toEqual([])
    }
  })

  it("a URL with a query or a fragment is an error with its own code, and the client builds no request from it (issue 27.7)", () => {
    for (
      const url of [
        "https://a.example.com/iam?x=",
        "https://a.example.com/iam?",
        "https://a.example.com/a2a#top",
        "https://a.example.com/a2a?v=1#x"
      ]
    ) {
      for (const binding of ["JSONRPC", "HTTP+JSON"]) {
        const card = withInterfaces({ url, protocolBinding: binding, protocolVersion: "1.0" })
        const result = check(card)
        expect(keys(result), url).toContainEqual(["error", "interface.url_query", "/supportedInterfaces/0/url"])
        expect(errorCodes(result), url).toContain("card.no_usable_interface")
        expect(result.issues.find((issue) => issue.code === "card.no_usable_interface")?.message, url).toContain("has a query or fragment")
        expect(clientEndpoints(card), url).toEqual([])
      }
    }
    expect(keys(check(withInterfaces({ url: "https://a.example.com/a2a/", protocolBinding: "JSONRPC", protocolVersion: "1.0" })))).toEqual(
      []
    )
  })

  it("a gRPC interface is usable at host:port (TLS; plaintext on loopback) or a grpc(s)/http(s) URL with no path (#33)", () => {
    const grpcAt = (url: string) => clientEndpoints(withInterfaces({ url, protocolBinding: "GRPC", protocolVersion: "1.0" }))
    expect(grpcAt("a.example.com:8443")).toEqual([{
      url: "https://a.example.com:8443/",
      binding: "GRPC",
      version: "1.0",
      tenant: undefined
    }])
    expect(grpcAt("a.example.com")[0]?.url).toBe("https://a.example.com/")
    expect(grpcAt("localhost:50051")[0]?.url).toBe("http://localhost:50051/")
    expect(grpcAt("127.0.0.1:443")[0]?.url).toBe("http://127.0.0.1:443/")
    expect(grpcAt("[::1]:50051")[0]?.url).toBe("http://[::1]:50051/")
    expect(grpcAt("grpcs://localhost:50051")[0]?.url).toBe("https://localhost:50051/")
    expect(grpcAt("grpc://a.example.com:50051")[0]?.url).toBe("http://a.example.com:50051/")
    expect(grpcAt("https://a.example.com:443")[0]?.url).toBe("https://a.example.com/")
    for (
      const unusable of [
        "https://a.example.com/a2a/grpc",
        "a.example.com:50051/x",
        "ws://a.example.com:1",
        "a.example.com:1?x",
        "u:p@a.example.com:1"
      ]
    ) {
      const card = withInterfaces({ url: unusable, protocolBinding: "GRPC", protocolVersion: "1.0" })
      expect(clientEndpoints(card), unusable).toEqual([])
      expect(errorCodes(check(card)), unusable).toContain("card.no_usable_interface")
    }
  })

  it("one usable interface among unusable ones is enough, and it is the one the client picks", () => {
    const card = withInterfaces(
      { url: "https://a.example.com/a2a", protocolBinding: "JSONRPC", protocolVersion: "9.9" },
      { url: "https://a.example.com/ws", protocolBinding: "https://bindings.example.com/ws", protocolVersion: "1.0" },
      { url: "https://a.example.com/rest", protocolBinding: "HTTP+JSON", protocolVersion: "0.3" }
    )
    expect(check(card).valid).toBe(true)
    expect(clientEndpoints(card)).toEqual([{ url: "https://a.example.com/rest", binding: "HTTP+JSON", version: "0.3", tenant: undefined }])
  })

  it("a card the client cannot decode is invalid even when no other rule objects", () => {
    // `uri` is only a warning for the validator's own rules, but the client's decoder requires it.
    const card = { ...cleanV1Card(), capabilities: { extensions: [{ description: "no uri" }] } }
    const result = check(card)
    expect(keys(result)).toContainEqual(["error", "card.unreadable", ""])
    expect(result.issues.find((issue) => issue.code === "card.unreadable")?.message).toContain("/capabilities/extensions/0/uri")
    expect(clientEndpoints(card)).toEqual([])
  })

  it("over many combinations, every card called valid is usable by the client and every card called unusable is not", () => {
    const bindings = ["JSONRPC", "HTTP+JSON", "jsonrpc", "REST", "GRPC", "https://bindings.example.com/x", "CARRIER-PIGEON"]
    const versions = ["1.0", "0.3", "1.0.2", "0.3.0", "9.9", "2.0", "1"]
    const urls = [
      "https://a.example.com/a2a",
      "http://127.0.0.1:9/a2a",
      "ftp://a.example.com/x",
      "a.example.com:443",
      "wss://a.example.com/x"
    ]
    let validCount = 0
    let unusableCount = 0
    for (let seed = 0; seed < 400; seed++) {
      const pick = <A>(list: ReadonlyArray<A>, salt: number): A => list[(seed * 7919 + salt * 104729) % list.length]!
      const count = 1 + (seed % 3)
      const card = withInterfaces(...Array.from({ length: count }, (_, index) => ({
        url: pick(urls, index * 3 + 1),
        protocolBinding: pick(bindings, index * 3 + 2),
        protocolVersion: pick(versions, index * 3 + 3)
      })))
      const result = validateCard(card)
      const usable = clientEndpoints(card).length > 0
      if (result.valid) {
        validCount++
        expect(usable, JSON.stringify(card["supportedInterfaces"])).toBe(true)
      }
      if (errorCodes(result).includes("card.no_usable_interface")) {
        unusableCount++
        expect(usable, JSON.stringify(card["supportedInterfaces"])).toBe(false)
      }
      if (!usable) expect(result.valid).toBe(false)
    }
    // Both kinds were exercised.
    expect(validCount).toBeGreaterThan(10)
    expect(unusableCount).toBeGreaterThan(10)
  })
})

describe("validateCard: determinism and the code table", () => {
  it("orders numeric path segments numerically and is stable across runs", () => {
    const card = cleanV1Card()
    card["skills"] = Array.from({ length: 12 }, (_, index) => ({ id: `s${index}`, name: "S", description: "D", tags: [] }))
    const first = check(card)
    expect(first.issues.map((issue) => issue.path)).toEqual(
      Array.from({ length: 12 }, (_, index) => `/skills/${index}/tags`)
    )
    expect(check(card)).toEqual(first)
  })

  it("does not modify the card it validates", () => {
    const card = v03Card()
    const before = structuredClone(card)
    check(card)
    expect(card).toEqual(before)
  })

  it("emits only documented codes, each with its documented severity, a message and a hint", () => {
    // Also covers every result of the tests above (all of them when the whole file runs).
    for (const card of [specSampleCard(), v03Card(), { supportedInterfaces: [{}] }, { protocolVersion: 1 }, null]) check(card)
    const emitted = seen.flatMap((result) => result.issues)
    expect(emitted.length).toBeGreaterThan(10)
    for (const issue of emitted) {
      expect(Object.keys(CARD_ISSUE_CODES)).toContain(issue.code)
      expect(issue.severity).toBe(CARD_ISSUE_SEVERITIES[issue.code as keyof typeof CARD_ISSUE_SEVERITIES])
      expect(issue.message.length).toBeGreaterThan(0)
      expect(issue.hint.length).toBeGreaterThan(0)
      expect(issue.path === "" || issue.path.startsWith("/")).toBe(true)
    }
    for (const description of Object.values(CARD_ISSUE_CODES)) expect(description.length).toBeGreaterThan(0)
  })

  it("marks a card invalid exactly when an error is present", () => {
    for (const result of seen) {
      expect(result.valid).toBe(!result.issues.some((issue) => issue.severity === "error"))
    }
  })
})
