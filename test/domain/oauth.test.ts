/** Reading OAuth schemes from cards of every shape, and where secrets may go. */
import { describe, expect, it } from "vitest"
import { chooseScheme, insecureReason, loginOffered, oauthSchemesOf, scopesFor } from "../../src/domain/oauth.js"

const TOKEN_URL = "https://id.example/token"

describe("oauthSchemesOf", () => {
  it("reads v1.0 ProtoJSON oneofs and securityRequirements (card and skills)", () => {
    const schemes = oauthSchemesOf({
      securitySchemes: {
        key: { apiKeySecurityScheme: { location: "header", name: "X-Key" } },
        machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: TOKEN_URL, scopes: { "a:read": "read" } } } } },
        people: {
          oauth2SecurityScheme: {
            oauth2MetadataUrl: "https://id.example/.well-known/oauth-authorization-server",
            flows: { deviceCode: { deviceAuthorizationUrl: "https://id.example/device", tokenUrl: TOKEN_URL, scopes: {} } }
          }
        },
        oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: "https://id.example/.well-known/openid-configuration" } }
      },
      securityRequirements: [{ schemes: { machines: { list: ["a:read"] } } }, { schemes: { oidc: { list: ["openid"] } } }],
      skills: [{ id: "s", securityRequirements: [{ schemes: { machines: { list: ["a:write"] } } }] }]
    })
    expect(schemes.map((scheme) => scheme.name)).toEqual(["machines", "people", "oidc"])
    expect(schemes[0]).toMatchObject({
      type: "oauth2",
      requiredScopes: ["a:read", "a:write"],
      flows: { client_credentials: { tokenUrl: TOKEN_URL, scopes: ["a:read"] } }
    })
    expect(schemes[1]).toMatchObject({
      metadataUrl: "https://id.example/.well-known/oauth-authorization-server",
      flows: { device_code: { deviceAuthorizationUrl: "https://id.example/device" } }
    })
    expect(schemes[2]).toMatchObject({ type: "openIdConnect", requiredScopes: ["openid"] })
  })

  it("reads v0.3 OpenAPI-style schemes with several flows and `security`", () => {
    const schemes = oauthSchemesOf({
      securitySchemes: {
        both: {
          type: "oauth2",
          flows: {
            authorizationCode: { authorizationUrl: "https://id.example/auth", tokenUrl: TOKEN_URL, scopes: {} },
            clientCredentials: { tokenUrl: TOKEN_URL, scopes: {} }
          }
        },
        oidc: { type: "openIdConnect", openIdConnectUrl: "https://id.example" },
        bearer: { type: "http", scheme: "bearer" }
      },
      security: [{ both: ["x"] }]
    })
    expect(schemes.map((scheme) => [scheme.name, Object.keys(scheme.flows)])).toEqual([
      ["both", ["client_credentials", "authorization_code"]],
      ["oidc", []]
    ])
    expect(schemes[0]!.requiredScopes).toEqual(["x"])
  })

  it("reads the SDK's {scheme: {$case, value}} form with a oneof flow", () => {
    const schemes = oauthSchemesOf({
      securitySchemes: {
        m: {
          scheme: {
            $case: "oauth2SecurityScheme",
            value: { flows: { flow: { $case: "clientCredentials", value: { tokenUrl: TOKEN_URL, scopes: {} } } } }
          }
        }
      }
    })
    expect(schemes[0]).toMatchObject({ name: "m", flows: { client_credentials: { tokenUrl: TOKEN_URL } } })
  })

  it("ignores cards without schemes or with junk", () => {
    expect(oauthSchemesOf(undefined)).toEqual([])
    expect(oauthSchemesOf({ securitySchemes: { x: 3, y: { type: "oauth2", flows: "no" } } })).toMatchObject([{ name: "y", flows: {} }])
  })
})

describe("chooseScheme and scopesFor", () => {
  const schemes = oauthSchemesOf({
    securitySchemes: {
      people: {
        type: "oauth2",
        flows: { authorizationCode: { authorizationUrl: "https://id.example/a", tokenUrl: TOKEN_URL, scopes: {} } }
      },
      oidc: { type: "openIdConnect", openIdConnectUrl: "https://id.example" }
    },
    security: [{ oidc: ["s1"] }]
  })
  it("prefers a scheme that declares the flow, else an OpenID Connect one; a name wins", () => {
    expect(chooseScheme(schemes, "authorization_code")?.name).toBe("people")
    expect(chooseScheme(schemes, "client_credentials")?.name).toBe("oidc")
    expect(chooseScheme(schemes, "client_credentials", "people")?.name).toBe("people")
    expect(chooseScheme(schemes, "client_credentials", "nope")).toBeUndefined()
  })
  it("asks for the requirement's scopes unless overridden", () => {
    expect(scopesFor(schemes[1], undefined)).toEqual(["s1"])
    expect(scopesFor(schemes[1], ["mine"])).toEqual(["mine"])
  })
})

describe("loginOffered (what a 401 advises)", () => {
  it("the first usable scheme's flow; none for OpenID Connect; nothing without a scheme relay can log in with", () => {
    expect(
      loginOffered({
        securitySchemes: {
          people: {
            type: "oauth2",
            flows: { deviceCode: { deviceAuthorizationUrl: "https://id.example/d", tokenUrl: TOKEN_URL, scopes: {} } }
          }
        }
      })
    )
      .toEqual({ flow: "device_code" })
    expect(loginOffered({ securitySchemes: { oidc: { openIdConnectSecurityScheme: { openIdConnectUrl: "https://id.example" } } } }))
      .toEqual({})
    // Only flows relay does not speak (implicit), then one it does.
    expect(loginOffered({
      securitySchemes: {
        old: { type: "oauth2", flows: { implicit: { authorizationUrl: "https://id.example/auth", scopes: {} } } },
        machines: { oauth2SecurityScheme: { flows: { clientCredentials: { tokenUrl: TOKEN_URL, scopes: {} } } } }
      }
    })).toEqual({ flow: "client_credentials" })
    expect(loginOffered({ securitySchemes: { key: { apiKeySecurityScheme: { location: "header", name: "X-Key" } } } })).toBeUndefined()
    expect(
      loginOffered({
        securitySchemes: { old: { type: "oauth2", flows: { implicit: { authorizationUrl: "https://id.example/auth", scopes: {} } } } }
      })
    ).toBeUndefined()
    expect(loginOffered(undefined)).toBeUndefined()
  })
})

describe("insecureReason", () => {
  it.each([
    ["https://id.example/token", false],
    ["http://127.0.0.1:4000/token", false],
    ["http://localhost/token", false],
    ["http://[::1]:8/token", false],
    ["http://id.example/token", true],
    ["ftp://id.example", true],
    ["not a url", true]
  ])("%s refused: %s", (url, refused) => {
    expect(insecureReason(url) !== undefined).toBe(refused)
  })
})
