/** `relay auth set|show|clear|login|logout`: credentials relay sends to an agent. Secrets are never printed unmasked. */
import { Command, Options } from "@effect/cli"
import { Config, Duration, Effect, Either, Option, Redacted } from "effect"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import { InvalidAgentUrl, InvalidInput } from "../domain/errors.js"
import { DEFAULT_API_KEY_HEADER, type MaskedCredentials } from "../domain/session.js"
import { clearCredentials, setCredentials, showCredentials } from "../programs/credentials.js"
import { login, logout } from "../programs/oauth.js"
import type { LoginPrompt } from "../services/OAuth.js"
import { withSuggestions } from "./commandTree.js"
import { optional } from "./optional.js"
import { agentOf, agentUrl, cardUrl, outputOptions, wholeNumber } from "./options.js"
import { fields, render, type Style, writeErr } from "./output.js"
import { readSecretInput } from "./secretInput.js"
import { ClientServices } from "./services.js"
import { escapeForTerminal } from "./terminalText.js"

const bearerToken = optional(
  Options.redacted("bearer-token"),
  "Bearer token to send as Authorization: Bearer …; '-' asks for it (not echoed) or reads it from stdin"
)
const apiKey = optional(
  Options.redacted("api-key"),
  "API key to send in the API key header; '-' asks for it (not echoed) or reads it from stdin"
)
const apiKeyHeader = optional(Options.text("api-key-header"), `Header that carries the API key (default ${DEFAULT_API_KEY_HEADER})`)

/** A secret from its option; "-" reads it from a prompt or stdin (secretInput.ts), out of shell history and `ps`. */
const readSecret = (option: Option.Option<Redacted.Redacted<string>>, label: string) =>
  Option.match(option, {
    onNone: () => Effect.succeed(undefined),
    onSome: (secret) => Redacted.value(secret) === "-" ? readSecretInput(label) : Effect.succeed(Redacted.value(secret))
  })

const fromStdin = (option: Option.Option<Redacted.Redacted<string>>) => Option.exists(option, (secret) => Redacted.value(secret) === "-")

/** Bearer wins when both are given (SPEC §4.1 rule 4), so only the secret that is used is read. */
const secretsOf = (
  bearerToken: Option.Option<Redacted.Redacted<string>>,
  apiKey: Option.Option<Redacted.Redacted<string>>
): Effect.Effect<{ readonly bearerToken: string | undefined; readonly apiKey: string | undefined }, InvalidInput> =>
  fromStdin(bearerToken) && fromStdin(apiKey)
    ? Effect.fail(
      new InvalidInput({
        reason: "Only one secret can be read from stdin",
        suggestion: "Pass --bearer-token - or --api-key -, not both"
      })
    )
    : Option.isSome(bearerToken)
    ? Effect.map(readSecret(bearerToken, "Bearer token"), (token) => ({ bearerToken: token, apiKey: undefined }))
    : Effect.map(readSecret(apiKey, "API key"), (key) => ({ bearerToken: undefined, apiKey: key }))

/** A gRPC interface's address as a card gives it: `host:port`, or a grpc:// or grpcs:// URL. */
const isGrpcAddress = (text: string) => /^(grpcs?:\/\/|\[[0-9a-f:.]+\]:\d+$|[a-z0-9.-]+:\d+$)/i.test(text.trim())

/**
 * `--url` of set, show and clear: an agent (a name or a URL), or a gRPC interface's address, which
 * stands for its origin as the client reaches it (credentials are kept by origin for a card's
 * interface on another origin than the agent's: a2aClient/endpoints.ts).
 */
const credentialsAgentOf = (url: Option.Option<string>) =>
  Option.match(Option.filter(url, isGrpcAddress), {
    onNone: () => agentOf(url),
    onSome: (address) =>
      Effect.flatMap(
        Effect.promise(() => import("../a2a/usableInterfaces.js")),
        ({ grpcUrl }) =>
          Either.match(grpcUrl(address), {
            onLeft: (reason) => Effect.fail(new InvalidAgentUrl({ url: address, reason })),
            onRight: (reached) => canonicalAgentUrl(reached.origin)
          })
      )
  })

const set = Command.make(
  "set",
  { ...outputOptions, url: agentUrl, bearerToken, apiKey, apiKeyHeader },
  ({ url, bearerToken, apiKey, apiKeyHeader, ...flags }) =>
    render(
      flags,
      Effect.flatMap(secretsOf(bearerToken, apiKey), (secrets) =>
        Effect.flatMap(credentialsAgentOf(url), (agentUrl) =>
          setCredentials({ agentUrl, ...secrets, apiKeyHeader: Option.getOrUndefined(apiKeyHeader) }))),
      (result, style) =>
        style.green(`Saved ${result.auth_type === "bearer" ? "bearer token" : "API key"} for ${result.agent_url}`)
    )
).pipe(Command.withDescription("Save a bearer token or API key for an agent (bearer wins when both are given)"))

const oauthFields = (credentials: MaskedCredentials): ReadonlyArray<readonly [string, string]> =>
  credentials.auth_type !== "oauth" ? [] : [
    ["Flow", credentials.flow ?? ""],
    ["Scopes", credentials.scopes?.length ? credentials.scopes.join(" ") : "(the server's default)"],
    ["Expires", credentials.expires_at ?? "(not said)"],
    ["Renews", credentials.refreshable === true ? "yes, without you" : "no: log in again when it expires"],
    ["Client", credentials.client_id ?? ""],
    ["Issuer", credentials.issuer ?? ""]
  ]

const show = Command.make(
  "show",
  { ...outputOptions, url: agentUrl },
  ({ url, ...flags }) =>
    render(
      flags,
      Effect.flatMap(credentialsAgentOf(url), showCredentials),
      ({ agent_url, credentials }, style) =>
        `${style.bold("Credentials for")} ${style.cyan(agent_url)}\n` +
        (credentials === null
          ? style.dim("No credentials saved")
          : fields(style, [
            ["Type", credentials.auth_type],
            ["Header", credentials.header],
            ["Value", credentials.masked],
            ...oauthFields(credentials)
          ]))
    )
).pipe(Command.withDescription("Show the saved credentials of an agent, masked (OAuth: flow, scopes, expiry)"))

// ---------------------------------------------------------------------------
// OAuth login and logout

const clientId = Options.text("client-id").pipe(Options.withDescription("The client id registered with the authorization server"))
const clientSecret = optional(
  Options.redacted("client-secret"),
  "'-' asks for the client secret (not echoed) or reads it from stdin (or set RELAY_CLIENT_SECRET); a value on the command line is refused"
)
const flow = optional(
  Options.choice("flow", ["client_credentials", "authorization_code", "device_code"]),
  "The OAuth flow (default: client_credentials with a client secret, else authorization_code in a browser)"
).pipe(withSuggestions([
  ["client_credentials", "relay itself, with a client id and secret"],
  ["authorization_code", "You, signing in in a browser"],
  ["device_code", "You, entering a code on another device"]
]))
const noBrowser = Options.boolean("no-browser").pipe(
  Options.withDescription("Print the login URL without opening a browser (authorization_code)")
)
const loginTimeout = wholeNumber("login-timeout", "seconds", 1, 24 * 3600).pipe(
  Options.withDescription("Seconds to wait for the browser or the device approval (default 300)"),
  Options.withDefault(300)
)

/**
 * On stderr, so stdout keeps only the result; the URL carries no secret (PKCE keeps the verifier
 * here). The URL and code come from the authorization server: escaped, like all foreign text.
 */
const showPrompt = (prompt: LoginPrompt) => {
  const url = escapeForTerminal(prompt.url)
  return writeErr(
    prompt.userCode === undefined
      ? `Open this URL in a browser to log in:\n  ${url}\nWaiting for the browser to come back…`
      : `On any device, open ${url}\nand enter the code ${escapeForTerminal(prompt.userCode)}\nWaiting for approval…`
  )
}
const scope = optional(Options.text("scope"), "Scopes to ask for, space separated (default: the scopes the card's requirements name)")
const scheme = optional(Options.text("scheme"), "The card's security scheme to use, by name")
const issuer = optional(Options.text("issuer"), "The authorization server's issuer or metadata URL, instead of what the card declares")
// Accepted so that older scripts still run: the secret is now always kept.
const saveClientSecret = Options.boolean("save-client-secret").pipe(
  Options.withDescription("No longer needed: a client secret is always kept with the tokens (0600 store), so they renew without you")
)

/**
 * The secret from stdin (--client-secret -), else RELAY_CLIENT_SECRET. A value on the command
 * line is refused before anything is sent: every user of the machine would see it in `ps`.
 */
const clientSecretOf = (option: Option.Option<Redacted.Redacted<string>>) =>
  Option.isSome(option) && !fromStdin(option)
    ? Effect.fail(
      new InvalidInput({
        reason: "--client-secret takes no value on the command line: any user of this machine could read it in `ps` while the login runs",
        suggestion: "Pass --client-secret - and type the secret on stdin, or set it in the RELAY_CLIENT_SECRET environment variable"
      })
    )
    : Effect.flatMap(readSecret(option, "Client secret"), (secret) =>
      secret !== undefined
        ? Effect.succeed(secret)
        : Config.string("RELAY_CLIENT_SECRET").pipe(
          Config.option,
          Effect.map(Option.getOrUndefined),
          Effect.orElseSucceed(() => undefined)
        ))

const loginView = (
  result: {
    readonly agent_url: string
    readonly flow: string
    readonly scopes: ReadonlyArray<string>
    readonly expires_at: string | null
    readonly refreshable: boolean
  },
  style: Style
) =>
  style.green(`Logged in to ${result.agent_url} (${result.flow})`) + "\n" +
  fields(style, [
    ["Scopes", result.scopes.length === 0 ? "(the server's default)" : result.scopes.join(" ")],
    ["Expires", result.expires_at ?? "(not said)"],
    ["Renews", result.refreshable ? "yes, without you" : "no: log in again when it expires"]
  ])

const loginCommand = Command.make(
  "login",
  {
    ...outputOptions,
    url: agentUrl,
    clientId,
    clientSecret,
    flow,
    scope,
    scheme,
    issuer,
    saveClientSecret,
    cardUrl,
    noBrowser,
    loginTimeout
  },
  (
    { url, clientId, clientSecret, flow, scope, scheme, issuer, saveClientSecret: _alwaysKept, cardUrl, noBrowser, loginTimeout, ...flags }
  ) =>
    render(
      flags,
      Effect.gen(function*() {
        const secret = yield* clientSecretOf(clientSecret)
        const chosen = Option.getOrElse(flow, () => secret === undefined ? "authorization_code" as const : "client_credentials" as const)
        if (chosen === "client_credentials" && secret === undefined) {
          return yield* new InvalidInput({
            reason: "Client credentials need the client secret",
            suggestion: "Pass --client-secret - and type it on stdin, or set RELAY_CLIENT_SECRET"
          })
        }
        return yield* login({
          agentUrl: yield* agentOf(url),
          cardUrl: Option.getOrUndefined(cardUrl),
          flow: chosen,
          clientId,
          clientSecret: secret,
          scopes: Option.getOrUndefined(Option.map(scope, (text) => text.split(/[\s,]+/).filter((word) => word !== ""))),
          scheme: Option.getOrUndefined(scheme),
          issuer: Option.getOrUndefined(issuer),
          interaction: { prompt: showPrompt, openBrowser: !noBrowser, timeout: Duration.seconds(loginTimeout) }
        })
      }),
      loginView
    )
).pipe(Command.withDescription("Log in to an agent with OAuth 2.0 / OpenID Connect as its card declares, and save the tokens"))

const logoutCommand = Command.make(
  "logout",
  { ...outputOptions, url: agentUrl },
  ({ url, ...flags }) =>
    render(flags, Effect.flatMap(agentOf(url), logout), ({ agent_url, removed, revoked }, style) =>
      !removed
        ? style.dim(`No credentials were saved for ${agent_url}`)
        : style.green(`Logged out of ${agent_url}${revoked ? " (tokens revoked at the server)" : ""}`))
)
  .pipe(Command.withDescription("Forget the saved credentials of an agent, revoking OAuth tokens when the server offers it"))

const clear = Command.make(
  "clear",
  { ...outputOptions, url: agentUrl },
  ({ url, ...flags }) =>
    render(
      flags,
      Effect.flatMap(credentialsAgentOf(url), clearCredentials),
      ({ agent_url, cleared }, style) =>
        cleared ? style.green(`Cleared credentials for ${agent_url}`) : style.dim(`No credentials were saved for ${agent_url}`)
    )
)
  .pipe(Command.withDescription("Remove the saved credentials of an agent"))

export const authCommand = Command.make("auth").pipe(
  Command.withDescription("Credentials per agent, shared with relay mcp"),
  Command.withSubcommands([set, show, clear, loginCommand, logoutCommand]),
  Command.provide(ClientServices)
)
