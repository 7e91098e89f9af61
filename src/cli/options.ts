/** Options shared by many commands, defined once so every command spells them the same. */
import { Args, Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Config, Effect, Either, Option, Redacted } from "effect"
import { absurd } from "effect/Function"
import type { Binding } from "../a2a/dialects.js"
import { canonicalHostName } from "../a2a/hosts.js"
import type { AgentUrl } from "../domain/agentUrl.js"
import { InvalidInput } from "../domain/errors.js"
import { MAX_ANSWER_BYTES, MAX_RESPONSE_BYTES } from "../domain/limits.js"
import { resolveAgentUrl } from "../programs/agentNames.js"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { FileHandling } from "../programs/answerFiles.js"
import type { SessionStore } from "../services/SessionStore.js"
import { numberNeeded } from "./commandLine.js"
import { withSuggestions, withValuesFrom } from "./commandTree.js"
import { optional } from "./optional.js"
import { addCallSecret, type CommandFailed, type OutputFlags, render } from "./output.js"

export const json = Options.boolean("json").pipe(Options.withDescription("Print the result as JSON on stdout"))
export const verbose = Options.boolean("verbose").pipe(Options.withDescription("Log details to stderr"))

/** Spread into every command's config: `{ ...outputOptions, url }`. */
export const outputOptions = { json, verbose } as const

/** What completions run to offer the saved agent names (one a line, a tab, its URL). */
export const AGENT_NAMES_COMMAND = "agent list --names"

/**
 * `--url` (or `--agent`): an agent's name or its URL; absent, RELAY_AGENT or the default agent
 * (resolveAgentUrl, where withAgentUrl decodes it).
 */
export const agentUrl = Options.text("url").pipe(
  Options.withAlias("agent"),
  Options.withDescription(
    "The A2A agent: a name (relay agent add) or its base URL. For example local or http://127.0.0.1:8000; " +
      "without it, RELAY_AGENT, else the agent chosen with relay agent use"
  ),
  withValuesFrom(AGENT_NAMES_COMMAND),
  Options.optional
)

/**
 * An option that carries a secret for this call (a token, a key): redacted in Effect's logs, and
 * masked in whatever relay prints for the call (output.ts), should the agent echo it.
 */
export const secretOption = (name: string) =>
  Options.redacted(name).pipe(Options.map((secret) => {
    addCallSecret(Redacted.value(secret))
    return secret
  }))

const bearerToken = optional(secretOption("bearer-token"), "Bearer token for this call (overrides saved credentials)")
const apiKey = optional(secretOption("api-key"), "API key for this call, sent in X-API-Key (overrides saved credentials)")
export const cardUrl = optional(Options.text("card-url"), "Full URL of the agent card, when it is not at the well-known path")
/** `--card-file`: the agent's card from a file, for an agent (a gRPC-only one) whose card is served at no HTTP path relay can find. */
export const cardFile = optional(
  Options.text("card-file").pipe(Options.withPseudoName("FILE")),
  "The agent card in a file, for an agent whose card is not served where relay can fetch it (a gRPC-only agent); " +
    "without --url, the agent is the card's first interface that fits --binding/--protocol"
)
/** The protocol generations and bindings, as completions describe them. */
export const PROTOCOL_VALUES = [["1.0", "A2A 1.0"], ["0.3", "A2A 0.3"]] as const
export const BINDING_VALUES = [["jsonrpc", "JSON-RPC 2.0"], ["rest", "HTTP+JSON (REST)"], ["grpc", "gRPC"]] as const
const protocol = optional(
  Options.choice("protocol", ["1.0", "0.3"]),
  "Pin the A2A protocol version (default: the card's first, falling back to 0.3)"
)
  .pipe(withSuggestions(PROTOCOL_VALUES))
const binding = optional(
  Options.choice("binding", ["jsonrpc", "rest", "grpc"]),
  "Pin the binding: JSON-RPC, HTTP+JSON or gRPC (default: the card's first)"
)
  .pipe(withSuggestions(BINDING_VALUES))
const allowCrossOrigin = Options.boolean("allow-cross-origin-credentials").pipe(
  Options.withDescription("Send credentials to interface URLs on another origin than --url")
)

/** Every value a bare host (a name or an IP address), in its canonical spelling; else a usage error. */
const hostNames = (values: ReadonlyArray<string>) => {
  const hosts = values.map(canonicalHostName)
  return hosts.every((host) => host !== undefined) ? Option.some(hosts as ReadonlyArray<string>) : Option.none()
}

/** `--allow-interface-host HOST` (repeatable): interface hosts the user vouches for, wherever they point. */
export const allowInterfaceHost = Options.text("allow-interface-host").pipe(
  Options.withDescription(
    "Use the card's interfaces on this host even when it is on another origin than the card and reaches " +
      "another class of address (a public card pointing at loopback, private, link-local or metadata addresses); repeatable"
  ),
  Options.repeated,
  Options.filterMap(hostNames, "--allow-interface-host takes a host name or an IP address, without a scheme, port or path")
)

/** `--insecure HOST` (repeatable): hosts relay may speak plaintext gRPC (h2c) to, besides this machine. */
const insecure = Options.text("insecure").pipe(
  Options.withPseudoName("HOST"),
  Options.withDescription(
    "Speak gRPC in plaintext (h2c) to this host where the card offers it so; without it, plaintext gRPC goes to this machine only; repeatable"
  ),
  Options.repeated,
  Options.filterMap(hostNames, "--insecure takes a host name or an IP address, without a scheme, port or path")
)

/** A whole number in [low, high], else a usage error naming the option. */
export const within = (low: number, high: number) => (value: number) =>
  Number.isInteger(value) && value >= low && value <= high ? Option.some(value) : Option.none()

const rangeText = (low: number, high: number) => high === Number.MAX_SAFE_INTEGER ? `at least ${low}` : `between ${low} and ${high}`

/**
 * A whole-number option, checked at the door: `unit` names what it counts ("seconds", "bytes"), in
 * help (`--timeout seconds`) and in the usage error for a value outside [low, high] or not a number.
 */
export const wholeNumber = (name: string, unit: string, low: number, high = Number.MAX_SAFE_INTEGER, note = "") =>
  Options.integer(name).pipe(
    Options.withPseudoName(unit),
    Options.filterMap(within(low, high), `--${name} needs ${numberNeeded(unit)}, ${rangeText(low, high)}${note}`)
  )

const DAY_SECONDS = 24 * 3600

const timeout = optional(
  wholeNumber("timeout", "seconds", 1, DAY_SECONDS),
  "Seconds to wait for each HTTP request to the agent (default 30)"
)

const streamIdle = optional(
  wholeNumber("stream-idle-timeout", "seconds", 1, DAY_SECONDS),
  "End a stream after this many seconds without an event (default: wait as long as it takes)"
)

/** `--max-response-bytes`: the client reads no card, JSON answer or stream event larger than this. */
export const maxResponseBytes = wholeNumber("max-response-bytes", "bytes", 1).pipe(
  Options.withDescription(
    `Largest card, JSON answer or stream event read from the agent (default ${MAX_RESPONSE_BYTES}, 10 MiB); larger ones fail`
  ),
  Options.withDefault(MAX_RESPONSE_BYTES)
)

/**
 * `--max-answer-bytes` (env RELAY_MAX_ANSWER_BYTES), on every command that gathers an answer from
 * many events (message send and stream, task resubscribe, relay mcp): the whole answer kept.
 */
export const maxAnswerBytes = Options.integer("max-answer-bytes").pipe(
  Options.withPseudoName("bytes"),
  Options.withDescription(
    `Largest whole answer kept from an agent, all its events together (default ${MAX_ANSWER_BYTES}, 32 MiB; env RELAY_MAX_ANSWER_BYTES); ` +
      "past it relay stops reading, shows what it kept and fails with response_too_large"
  ),
  Options.withFallbackConfig(Config.integer("RELAY_MAX_ANSWER_BYTES")),
  Options.withDefault(MAX_ANSWER_BYTES),
  Options.filterMap(
    within(1, Number.MAX_SAFE_INTEGER),
    "--max-answer-bytes (or RELAY_MAX_ANSWER_BYTES) needs a whole number of bytes, at least 1"
  )
)

/** Options of every command that contacts an agent; `withAgentAccess` turns them into program input. */
export const agentOptions = {
  ...outputOptions,
  url: agentUrl,
  bearerToken,
  apiKey,
  cardUrl,
  cardFile,
  protocol,
  binding,
  allowCrossOrigin,
  allowInterfaceHost,
  insecure,
  timeout,
  streamIdle,
  maxResponseBytes
} as const

export interface AgentOptionValues {
  readonly url: Option.Option<string>
  readonly bearerToken: Option.Option<Redacted.Redacted<string>>
  readonly apiKey: Option.Option<Redacted.Redacted<string>>
  readonly cardUrl: Option.Option<string>
  readonly cardFile: Option.Option<string>
  readonly protocol: Option.Option<"1.0" | "0.3">
  readonly binding: Option.Option<"jsonrpc" | "rest" | "grpc">
  readonly allowCrossOrigin: boolean
  readonly allowInterfaceHost: ReadonlyArray<string>
  readonly insecure: ReadonlyArray<string>
  readonly timeout: Option.Option<number>
  readonly streamIdle: Option.Option<number>
  readonly maxResponseBytes: number
}

/** `--binding`'s word → the binding's name in cards. */
export const bindingOfChoice = (choice: "jsonrpc" | "rest" | "grpc"): Binding =>
  choice === "rest" ? "HTTP+JSON" : choice === "grpc" ? "GRPC" : "JSONRPC"

/** The program input of the agent options, with `--url` already decoded (see withAgentUrl). */
const toAccess = (agentUrl: AgentUrl, values: AgentOptionValues): AgentAccess => ({
  agentUrl,
  bearerToken: Option.getOrUndefined(Option.map(values.bearerToken, Redacted.value)),
  apiKey: Option.getOrUndefined(Option.map(values.apiKey, Redacted.value)),
  cardUrl: Option.getOrUndefined(values.cardUrl),
  protocol: Option.getOrUndefined(values.protocol),
  binding: Option.getOrUndefined(Option.map(values.binding, bindingOfChoice)),
  allowCrossOriginCredentials: values.allowCrossOrigin,
  allowInterfaceHosts: values.allowInterfaceHost,
  insecureHosts: values.insecure,
  timeoutSeconds: Option.getOrUndefined(values.timeout),
  streamIdleSeconds: Option.getOrUndefined(values.streamIdle),
  maxResponseBytes: values.maxResponseBytes
})

/** `--port` of a local server: 0 picks a free one. */
export const portOption = (defaultPort: number, description: string) =>
  wholeNumber("port", "port", 0, 65535, " (0 picks a free port)").pipe(
    Options.withDescription(description),
    Options.withDefault(defaultPort)
  )

/** `--max-body-bytes` of a local server. */
export const bodyLimitOption = (defaultBytes: number, description: string) =>
  wholeNumber("max-body-bytes", "bytes", 1).pipe(Options.withDescription(description), Options.withDefault(defaultBytes))

/**
 * The CLI's door for the agent URL: `--url` (a name or a URL; absent, the default agent) is
 * resolved and decoded here, once, and the command gets the canonical AgentUrl; a bad or unknown
 * one is reported like any failure of the command (invalid_agent_url, unknown_agent: exit 1).
 */
export const withAgentUrl = <A, R>(
  flags: OutputFlags,
  url: Option.Option<string>,
  command: (agentUrl: AgentUrl) => Effect.Effect<A, CommandFailed, R>
): Effect.Effect<A, CommandFailed, R | SessionStore> =>
  resolveAgentUrl(Option.getOrUndefined(url)).pipe(
    Effect.catchAll((error) => render(flags, Effect.fail(error), absurd)),
    Effect.flatMap(command)
  )

/** The agent of `--url` (a name or a URL; absent, the default agent), canonical: for commands that only name it. */
export const agentOf = (url: Option.Option<string>) => resolveAgentUrl(Option.getOrUndefined(url))

/** withAgentUrl for the commands with the agent options: the command gets them as program input. */
export const withAgentAccess = <A, R>(
  values: AgentOptionValues & OutputFlags,
  command: (access: AgentAccess) => Effect.Effect<A, CommandFailed, R>
): Effect.Effect<A, CommandFailed, R | SessionStore | FileSystem.FileSystem> =>
  Option.match(values.cardFile, {
    onNone: () => withAgentUrl(values, values.url, (agentUrl) => command(toAccess(agentUrl, values))),
    onSome: (path) => withCardFile(values, path, command)
  })

/**
 * The door of `--card-file`: the card is read and decoded here, once, and the agent is the one
 * --url names, else the card's own (cardFileAccess); a file that cannot serve is a usage error.
 */
const withCardFile = <A, R>(
  values: AgentOptionValues & OutputFlags,
  path: string,
  command: (access: AgentAccess) => Effect.Effect<A, CommandFailed, R>
) =>
  Effect.gen(function*() {
    if (Option.isSome(values.cardUrl)) {
      return yield* new InvalidInput({
        reason: "--card-file and --card-url do not go together: each says where the card is",
        suggestion: "Give one of them: --card-file for a card in a file, --card-url for one served at a URL."
      })
    }
    const named = Option.isNone(values.url) ? undefined : yield* resolveAgentUrl(values.url.value)
    const pins = {
      binding: Option.getOrUndefined(Option.map(values.binding, bindingOfChoice)),
      protocol: Option.getOrUndefined(values.protocol)
    }
    // Loaded here, not with this module: the quick commands that share it reach no agent (test/cli/lazyLoading.test.ts).
    const { cardFileAccess } = yield* Effect.promise(() => import("../programs/agentTarget.js"))
    return yield* cardFileAccess(path, pins, named)
  }).pipe(
    Effect.catchAll((error) => render(values, Effect.fail(error), absurd)),
    Effect.flatMap(({ agentUrl, card }) => command({ ...toAccess(agentUrl, values), card }))
  )

/** `--save-dir`, `--no-save`, `--download`: what becomes of the files an answer carries (README: Files and data). */
export const answerFileOptions = {
  saveDir: optional(
    Options.text("save-dir").pipe(Options.withPseudoName("DIR")),
    "Save the files the answer carries in DIR (default: the state directory's files/<task id>/)"
  ),
  noSave: Options.boolean("no-save").pipe(
    Options.withDescription("Do not save the files the answer carries (they are listed, not written)")
  ),
  download: Options.boolean("download").pipe(
    Options.withDescription(
      "Also fetch the files the answer gives by URL, with the limits, address rule and credential rule of every request to the agent, and save them"
    )
  )
} as const

export interface AnswerFileValues {
  readonly saveDir: Option.Option<string>
  readonly noSave: boolean
  readonly download: boolean
}

/** The program input of the answer file options, or the usage error of two that contradict each other. */
const answerFilesOf = (values: AnswerFileValues): Either.Either<FileHandling, InvalidInput> => {
  const contradicting = values.noSave
    ? (Option.isSome(values.saveDir) ? "--save-dir" : values.download ? "--download" : undefined)
    : undefined
  if (contradicting !== undefined) {
    return Either.left(
      new InvalidInput({
        reason: `--no-save and ${contradicting} do not go together: ${contradicting} saves the answer's files`,
        suggestion: `Give one of them: --no-save to only list the files, or ${contradicting}.`
      })
    )
  }
  return Either.right({ save: !values.noSave, saveDir: Option.getOrUndefined(values.saveDir), download: values.download })
}

/** Runs `program` with the answer file options as its input; two that contradict each other are its usage error instead. */
export const withAnswerFiles = <A, E, R>(values: AnswerFileValues, program: (answerFiles: FileHandling) => Effect.Effect<A, E, R>) =>
  Either.match(answerFilesOf(values), { onLeft: (usage) => Effect.fail<E | InvalidInput>(usage), onRight: program })

export const taskIdArg = Args.text({ name: "TASK_ID" }).pipe(Args.withDescription("The agent's task id"))

export const historyLength = optional(wholeNumber("history-length", "messages", 0), "How many history messages to include (0 for none)")
