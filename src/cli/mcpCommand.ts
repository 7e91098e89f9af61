/** `relay mcp`: the MCP server for AI assistants, on stdio (default), streamable HTTP or SSE. */
import { Command, Options } from "@effect/cli"
import type { FileSystem } from "@effect/platform"
import { Config, Duration, Effect, Layer, LogLevel, Option, Runtime } from "effect"
import { Console } from "node:console"
import * as Path from "node:path"
import { isLoopbackHost } from "../a2a/hosts.js"
import { MAX_AGENT_BODY_BYTES } from "../domain/limits.js"
import { parseOrigin } from "../mcp/origins.js"
import { makeMcpServer, type ServerFactory } from "../mcp/server.js"
import type { ToolContext } from "../mcp/tools.js"
import { serveHttp, serveStdio, TRANSPORTS } from "../mcp/transports.js"
import type { StateDir } from "../services/StateDir.js"
import { withSuggestions } from "./commandTree.js"
import { abandonStdout, untilStopped } from "./ending.js"
import { mcpClientCommands } from "./mcpClientCommands.js"
import { optional } from "./optional.js"
import { allowInterfaceHost, maxAnswerBytes, outputOptions, portOption, wholeNumber, within } from "./options.js"
import { reportError, withLogLevel, writeErr, writeOut } from "./output.js"

const transport = Options.choice("transport", TRANSPORTS).pipe(
  Options.withAlias("t"),
  Options.withDescription(
    "stdio (default; for MCP clients that spawn relay), streamable-http, or sse (deprecated: the old HTTP+SSE transport, for old clients only)"
  ),
  Options.withDefault("stdio" as const),
  withSuggestions([
    ["stdio", "For MCP clients that start relay (the default)"],
    ["streamable-http", "An HTTP endpoint at /mcp"],
    ["sse", "Deprecated: the old HTTP+SSE transport, at /sse"]
  ])
)
const host = Options.text("host").pipe(
  Options.withDescription("Address for the HTTP transports (default 127.0.0.1: this machine only)"),
  Options.withDefault("127.0.0.1")
)
const port = portOption(8090, "Port for the HTTP transports (default 8090; 0 picks a free one and prints it)")
const waitSeconds = Options.integer("wait-seconds").pipe(
  Options.withPseudoName("seconds"),
  Options.withDescription(
    "How long send_message and wait_for_task wait before answering 'working' (default 45; env RELAY_MCP_WAIT_SECONDS)"
  ),
  Options.withFallbackConfig(Config.integer("RELAY_MCP_WAIT_SECONDS")),
  Options.withDefault(45),
  Options.filterMap(within(1, 3600), "--wait-seconds (or RELAY_MCP_WAIT_SECONDS) needs a whole number of seconds, between 1 and 3600")
)

/** Every value an origin, else a usage error. */
const origins = (values: ReadonlyArray<string>) => {
  const parsed = values.map(parseOrigin)
  return parsed.every((origin) => origin !== undefined) ? Option.some(parsed as ReadonlyArray<string>) : Option.none()
}
const allowOrigin = Options.text("allow-origin").pipe(
  Options.withDescription(
    "Let browser pages from this origin, e.g. http://localhost:6274, use the HTTP transports (repeatable). " +
      "Without it only the origin relay itself serves is allowed; requests without an Origin header always are"
  ),
  Options.repeated,
  Options.filterMap(origins, "--allow-origin takes an origin: http(s)://host[:port], with no path")
)

const allowRead = Options.directory("allow-read", { exists: "yes" }).pipe(
  Options.withDescription(
    "Let send_message read files in this directory, besides the roots the MCP client declares (repeatable); never the state directory"
  ),
  Options.repeated
)
const maxRequestBytes = wholeNumber("max-request-bytes", "bytes", 1).pipe(
  Options.withDescription(`Largest request send_message sends, files and data encoded (default ${MAX_AGENT_BODY_BYTES}, 10 MiB)`),
  Options.withDefault(MAX_AGENT_BODY_BYTES)
)

const loginClientId = optional(
  Options.text("login-client-id"),
  "OAuth client id for logins a user does through an MCP client that opens pages (URL elicitation), " +
    "for agents with no saved tokens to take it from"
)

/**
 * The tools' services (A2A client, HTTP client, session store, notification log) are built on the
 * first tool call, for the rest of the command: `relay mcp` answers initialize and tools/list
 * without loading the A2A client. The build is uninterruptible, so a first call cancelled half-way
 * leaves no interrupted build behind for the next.
 */
const toolServicesOnFirstCall = Effect.flatMap(Effect.scope, (scope) =>
  Effect.cached(Effect.uninterruptible(
    Effect.flatMap(Effect.promise(() => import("./services.js")), ({ McpServices }) => Layer.buildWithScope(McpServices, scope))
  )))

/** check_agent's push receiver: the webhook door's, loaded on the first check (this command composes the doors). */
const loadCheckRun = () => import("../servers/webhook/checkReceiver.js").then((module) => module.checkRunLayer)

const mcpOptions = {
  ...outputOptions,
  transport,
  host,
  port,
  waitSeconds,
  allowOrigin,
  allowInterfaceHost,
  maxAnswerBytes,
  allowRead,
  maxRequestBytes,
  loginClientId
} as const

export const mcpCommand = Command.make("mcp", mcpOptions, (options) =>
  untilStopped(Effect.scoped(Effect.gen(function*() {
    // stdout carries MCP messages only: anything a library prints goes to stderr instead.
    globalThis.console = new Console({ stdout: process.stderr, stderr: process.stderr })
    const runtime = yield* Effect.runtime<FileSystem.FileSystem | StateDir>()
    const toolServices = yield* toolServicesOnFirstCall
    const context: ToolContext = {
      run: (effect, signal) =>
        Runtime.runPromise(runtime)(Effect.flatMap(toolServices, (services) => Effect.provide(effect, services)), { signal }),
      defaultWait: Duration.seconds(options.waitSeconds),
      allowInterfaceHosts: options.allowInterfaceHost,
      maxAnswerBytes: options.maxAnswerBytes,
      allowRead: options.allowRead.map((directory) => Path.resolve(directory)),
      maxRequestBytes: options.maxRequestBytes,
      loginClientId: Option.getOrUndefined(options.loginClientId),
      loadCheckRun
    }
    const make: ServerFactory = (era) => makeMcpServer(context, era)
    const kind = options.transport
    if (kind === "stdio") return yield* Effect.scoped(serveStdio(make))
    return yield* Effect.scoped(Effect.gen(function*() {
      const url = yield* serveHttp({ kind, host: options.host, port: options.port, allowedOrigins: options.allowOrigin }, make)
      // Like relay server agent: the address for people on stderr; with --json also the result for
      // scripts that start relay, on stdout (free here: MCP travels over HTTP).
      yield* writeErr(`a2a-relay MCP server (${options.transport}) listening at ${url}`)
      if (options.json) yield* writeOut(JSON.stringify({ transport: kind, url }))
      if (!isLoopbackHost(options.host)) {
        yield* Effect.logWarning(`Listening on ${options.host}: other machines can reach this MCP server. It has no authentication.`)
      }
      return yield* Effect.never
    }))
  }))).pipe(
    Effect.catchTags({
      ListenFailed: (error) => reportError(error, options.json),
      // The client reads nothing more: the exit does not wait for stdout (ending.ts).
      McpClientNotReading: (error) => Effect.zipRight(Effect.sync(abandonStdout), reportError(error, options.json))
    }),
    withLogLevel(options, LogLevel.Info)
  )).pipe(
    Command.withDescription("Run the MCP server that lets AI assistants use A2A agents"),
    Command.withSubcommands(mcpClientCommands)
  )
