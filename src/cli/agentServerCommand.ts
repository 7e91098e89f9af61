/**
 * `relay server agent`: the local A2A agent server backed by a language model.
 *
 * Start-up lines (address, model and why, auth) go to stderr; with --json one JSON object with
 * the same facts goes to stdout, for scripts. Ctrl+C closes the port, ends open streams and exits 0.
 */
import { Command, Options } from "@effect/cli"
import { Config, Duration, Effect, Either, Option, Redacted } from "effect"
import { isAllInterfaces } from "../a2a/hosts.js"
import { InvalidInput } from "../domain/errors.js"
import { describeTaskStore, parseTaskStoreChoice } from "../domain/taskStoreChoice.js"
import { parseDuration } from "../domain/units.js"
import { DEFAULT_AGENT_HOST, DEFAULT_AGENT_PORT, DEFAULT_MAX_BODY_BYTES } from "../servers/agent/defaults.js"
import type { AgentServerConfig, AgentServerStarted } from "../servers/agent/layer.js"
import type { ModelProvider } from "../services/ModelAccess.js"
import { withSuggestions } from "./commandTree.js"
import { untilStopped } from "./ending.js"
import { optional } from "./optional.js"
import { bodyLimitOption, outputOptions, portOption } from "./options.js"
import { makeStyle, type OutputFlags, reportError, withLogLevel, writeErr, writeOut } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

const host = Options.text("host").pipe(
  Options.withDescription("Address to listen on (0.0.0.0: every interface)"),
  Options.withDefault(DEFAULT_AGENT_HOST)
)
const port = portOption(DEFAULT_AGENT_PORT, "Port to listen on; 0 picks a free one")
const auth = Options.boolean("auth", { negationNames: ["no-auth"] }).pipe(
  Options.withDescription("Require an API key (X-API-Key or Authorization: Bearer) on everything but the card and /health")
)
const key = optional(Options.redacted("key"), "The API key to require with --auth (else RELAY_AGENT_KEY, else a generated one)")
/** Each kind of model, as completions offer it: the built-in ones whole, the others up to their name. */
const MODEL_KINDS: Record<ModelProvider, readonly [value: string, description: string]> = {
  echo: ["echo", "Built in: answers with your message, streamed word by word"],
  mock: ["mock", "Built in: the scriptable test agent (send \"help\" to it)"],
  ollama: ["ollama:", "A model of a running Ollama, e.g. ollama:llama3.2:1b"],
  openai: ["openai:", "An OpenAI model (OPENAI_API_KEY), e.g. openai:gpt-4o-mini"],
  gateway: ["gateway:", "A model of an OpenAI-compatible gateway at RELAY_GATEWAY_URL"]
}
const model = Options.text("model").pipe(
  Options.withAlias("m"),
  Options.withDescription(
    "echo, mock (the scriptable test agent: send \"help\" to it), ollama:<name>, openai:<name> or gateway:<name> " +
      "(default: RELAY_MODEL, a running Ollama, a gateway, else echo)"
  ),
  Options.optional,
  withSuggestions(Object.values(MODEL_KINDS))
)
const latency = Options.text("latency").pipe(
  Options.withDescription("Keep each turn working this long before the model answers, e.g. 500ms or 2s (default 0)"),
  Options.withDefault("0"),
  Options.filterMap((text) => Option.fromNullable(parseDuration(text)), "--latency must be a duration such as 500ms, 2s or 1m")
)
const maxBodyBytes = bodyLimitOption(DEFAULT_MAX_BODY_BYTES, "Largest request body accepted; bigger ones get 413")
const allowPrivateWebhooks = Options.boolean("allow-private-webhooks").pipe(
  Options.withDescription(
    "Also post push notifications to private, link-local and other non-public addresses, in any spelling (loopback is always allowed)"
  )
)

const store = Options.redacted("store").pipe(
  Options.withDescription(
    "Where tasks are kept: file (the default: agent-store in the state directory, durable across restarts), file:DIR, " +
      "memory (gone when the server stops) or postgres://… (env RELAY_STORE)"
  ),
  Options.withFallbackConfig(Config.redacted("RELAY_STORE")),
  Options.withDefault(Redacted.make("file")),
  Options.filterMap(
    (value) => Either.getRight(parseTaskStoreChoice(value)),
    "--store (or RELAY_STORE) must be memory, file, file:DIR or postgres://USER:PASSWORD@HOST/DATABASE"
  ),
  withSuggestions([
    ["file", "Durable, in the state directory (the default)"],
    ["file:", "Durable, in a directory of your choice, e.g. file:./tasks"],
    ["memory", "Kept in memory only: gone when the server stops"],
    ["postgres://", "A PostgreSQL database several servers share"]
  ])
)

interface AgentConfig extends OutputFlags, AgentServerConfig {}

const validate = (config: AgentConfig) => {
  if (!config.auth && Option.isSome(config.key)) {
    return Effect.fail(new InvalidInput({ reason: "--key is only used with --auth", suggestion: "Add --auth to require the key" }))
  }
  return Effect.void
}

const startupLines = (config: AgentConfig, started: AgentServerStarted) => {
  const style = makeStyle(process.stderr)
  const lines = [
    `${style.bold("relay agent")} listening on ${style.cyan(started.baseUrl)}` +
    (isAllInterfaces(config.host) ? style.dim(` (all interfaces, port ${new URL(started.baseUrl).port})`) : ""),
    `Model: ${style.bold(started.model.spec.text)} ${style.dim(`(${started.model.reason})`)}`
  ]
  if (Duration.toMillis(started.latency) > 0) lines.push(`Latency: each turn stays working ${Duration.format(started.latency)}`)
  lines.push(
    started.store._tag === "memory"
      ? `Tasks: in memory ${style.dim("(gone when the server stops; --store file keeps them)")}`
      : `Tasks: kept in ${escapeForTerminal(describeTaskStore(started.store))}`
  )
  const agentKey = started.key
  if (agentKey === undefined) {
    lines.push(style.dim("No --auth: every request is accepted"))
    if (isAllInterfaces(config.host)) {
      lines.push(style.yellow(
        `Warning: listening on ${config.host} without --auth; anyone who can reach this machine can use the agent, ` +
          "including having it post push notifications to services on this machine (loopback webhooks); " +
          "use --auth, or --host 127.0.0.1 to serve this machine only"
      ))
    }
  } else if (agentKey.source === "generated") {
    const value = Redacted.value(agentKey.key)
    // The key goes on no command line (shell history, `ps`): `--api-key -` asks for it.
    lines.push(
      `API key required (X-API-Key or Authorization: Bearer). Generated key: ${style.bold(value)}`,
      `Save it for relay: relay auth set --url ${started.baseUrl} --api-key -`,
      `  and paste the key at its "API key:" prompt (not echoed), or pipe it in`
    )
  } else {
    lines.push(`API key required (X-API-Key or Authorization: Bearer), from ${agentKey.source}`)
  }
  lines.push(`Agent card: ${started.baseUrl}/.well-known/agent-card.json`, style.dim("Press Ctrl+C to stop."))
  return lines.join("\n")
}

const startupJson = (started: AgentServerStarted) =>
  JSON.stringify({
    url: started.baseUrl,
    model: started.model.spec.text,
    model_reason: started.model.reason,
    latency_ms: Duration.toMillis(started.latency),
    store: started.store._tag,
    ...(started.store._tag === "file" ? { store_dir: started.store.dir } : {}),
    auth: started.key !== undefined,
    ...(started.key?.source === "generated" ? { api_key: Redacted.value(started.key.key) } : {})
  })

const serveAgent = (config: AgentConfig) =>
  untilStopped(Effect.gen(function*() {
    yield* validate(config)
    // The server, its model layer and the model SDKs load only when an agent server starts.
    const { runAgentServer } = yield* Effect.promise(() => import("../servers/agent/layer.js"))
    return yield* runAgentServer(config, (started) =>
      Effect.zipRight(writeErr(startupLines(config, started)), config.json ? writeOut(startupJson(started)) : Effect.void))
  })).pipe(
    Effect.catchAll((error) =>
      reportError(error, config.json)
    ),
    withLogLevel(config)
  )

export const agentCommand = Command.make(
  "agent",
  { ...outputOptions, host, port, auth, key, model, latency, maxBodyBytes, allowPrivateWebhooks, store },
  serveAgent
).pipe(Command.withDescription(
  "Run a local A2A agent backed by a language model (JSON-RPC and HTTP+JSON, A2A 1.0 and 0.3, streaming, push)"
))
