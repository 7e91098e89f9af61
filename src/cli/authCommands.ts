/** `relay auth set|show|clear`: credentials relay sends to an agent. Secrets are never printed unmasked. */
import { Command, Options } from "@effect/cli"
import { Effect, Option, Redacted } from "effect"
import { text } from "node:stream/consumers"
import { InvalidInput } from "../domain/errors.js"
import { DEFAULT_API_KEY_HEADER } from "../domain/session.js"
import { clearCredentials, setCredentials, showCredentials } from "../programs/credentials.js"
import { agentUrl, outputOptions } from "./options.js"
import { fields, render } from "./output.js"

const bearerToken = Options.redacted("bearer-token").pipe(
  Options.withDescription("Bearer token to send as Authorization: Bearer …; '-' reads it from stdin"),
  Options.optional
)
const apiKey = Options.redacted("api-key").pipe(
  Options.withDescription("API key to send in the API key header; '-' reads it from stdin"),
  Options.optional
)
const apiKeyHeader = Options.text("api-key-header").pipe(
  Options.withDescription(`Header that carries the API key (default ${DEFAULT_API_KEY_HEADER})`),
  Options.optional
)

/** A secret from its option; "-" reads it from stdin so it stays out of shell history and `ps`. */
const readSecret = (option: Option.Option<Redacted.Redacted<string>>) =>
  Option.match(option, {
    onNone: () => Effect.succeed(undefined),
    onSome: (secret) =>
      Redacted.value(secret) === "-"
        ? Effect.promise(() => text(process.stdin)).pipe(Effect.map((input) => input.trim()))
        : Effect.succeed(Redacted.value(secret))
  })

const fromStdin = (option: Option.Option<Redacted.Redacted<string>>) =>
  Option.exists(option, (secret) => Redacted.value(secret) === "-")

/** Bearer wins when both are given (SPEC §4.1 rule 4), so only the secret that is used is read. */
const secretsOf = (
  bearerToken: Option.Option<Redacted.Redacted<string>>,
  apiKey: Option.Option<Redacted.Redacted<string>>
): Effect.Effect<{ readonly bearerToken: string | undefined; readonly apiKey: string | undefined }, InvalidInput> =>
  fromStdin(bearerToken) && fromStdin(apiKey)
    ? Effect.fail(new InvalidInput({
      reason: "Only one secret can be read from stdin",
      suggestion: "Pass --bearer-token - or --api-key -, not both"
    }))
    : Option.isSome(bearerToken)
    ? Effect.map(readSecret(bearerToken), (token) => ({ bearerToken: token, apiKey: undefined }))
    : Effect.map(readSecret(apiKey), (key) => ({ bearerToken: undefined, apiKey: key }))

const set = Command.make(
  "set",
  { ...outputOptions, url: agentUrl, bearerToken, apiKey, apiKeyHeader },
  ({ url, bearerToken, apiKey, apiKeyHeader, ...flags }) =>
    render(
      flags,
      Effect.flatMap(secretsOf(bearerToken, apiKey), (secrets) =>
        setCredentials({ agentUrl: url, ...secrets, apiKeyHeader: Option.getOrUndefined(apiKeyHeader) })),
      (result, style) =>
        style.green(`Saved ${result.auth_type === "bearer" ? "bearer token" : "API key"} for ${result.agent_url}`)
    )
).pipe(Command.withDescription("Save a bearer token or API key for an agent (bearer wins when both are given)"))

const show = Command.make("show", { ...outputOptions, url: agentUrl }, ({ url, ...flags }) =>
  render(flags, showCredentials(url), ({ agent_url, credentials }, style) =>
    `${style.bold("Credentials for")} ${style.cyan(agent_url)}\n` +
    (credentials === null
      ? style.dim("No credentials saved")
      : fields(style, [
        ["Type", credentials.auth_type],
        ["Header", credentials.header],
        ["Value", credentials.masked]
      ])))).pipe(Command.withDescription("Show the saved credentials of an agent, masked"))

const clear = Command.make("clear", { ...outputOptions, url: agentUrl }, ({ url, ...flags }) =>
  render(flags, clearCredentials(url), ({ agent_url, cleared }, style) =>
    cleared ? style.green(`Cleared credentials for ${agent_url}`) : style.dim(`No credentials were saved for ${agent_url}`)))
  .pipe(Command.withDescription("Remove the saved credentials of an agent"))

export const authCommand = Command.make("auth").pipe(
  Command.withDescription("Credentials per agent, shared with relay mcp"),
  Command.withSubcommands([set, show, clear])
)
