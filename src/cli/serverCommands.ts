/**
 * `relay server …`: the local servers. `push` receives A2A push notifications.
 *
 * Servers print their results (each notification) on stdout and everything else — the
 * address, warnings, rejected requests — on stderr; with --json the address is also a JSON line
 * on stdout. Ctrl+C closes the port and exits 0.
 */
import { Command, Options } from "@effect/cli"
import { Config, Effect, Layer, Option, Redacted } from "effect"
import { isLoopbackHost } from "../a2a/hosts.js"
import { InvalidInput } from "../domain/errors.js"
import {
  DEFAULT_MAX_BODY_BYTES,
  DEFAULT_WEBHOOK_HOST,
  DEFAULT_WEBHOOK_PORT,
  webhookBaseUrl,
  type WebhookHooks,
  webhookServerLayer
} from "../servers/webhook/WebhookServer.js"
import * as HttpClient from "../services/HttpClient.js"
import * as NotificationLog from "../services/NotificationLog.js"
import { agentCommand } from "./agentServerCommand.js"
import { untilStopped } from "./ending.js"
import { formatNotification } from "./notificationCommands.js"
import { bodyLimitOption, outputOptions, portOption } from "./options.js"
import { makeStyle, type OutputFlags, reportError, withLogLevel, writeErr, writeOut } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

/** Path printed in the suggested push URL; the receiver accepts any path. */
const PUSH_PATH = "/notifications"

// ---------------------------------------------------------------------------
// relay server push

const pushHost = Options.text("host").pipe(
  Options.withDescription("Address to listen on; keep the loopback default unless senders run elsewhere"),
  Options.withDefault(DEFAULT_WEBHOOK_HOST)
)
const pushPort = portOption(DEFAULT_WEBHOOK_PORT, "Port to listen on; 0 picks a free one")
const pushToken = Options.redacted("token").pipe(
  Options.withDescription(
    "Require this token in X-A2A-Notification-Token, A2A-Notification-Token or Authorization: Bearer (401 otherwise); " +
      "RELAY_PUSH_TOKEN keeps it out of the process list"
  ),
  Options.withFallbackConfig(Config.redacted("RELAY_PUSH_TOKEN")),
  Options.optional
)
const maxBodyBytes = bodyLimitOption(DEFAULT_MAX_BODY_BYTES, "Largest notification body accepted; bigger ones get 413")
const quiet = Options.boolean("quiet").pipe(
  Options.withAlias("q"),
  Options.withDescription(
    "Print no start-up lines and no notifications (they are still logged: relay notifications list), only refused requests " +
      "and errors; for running it with & in a terminal you keep using"
  )
)

interface PushConfig extends OutputFlags {
  readonly host: string
  readonly port: number
  readonly token: Option.Option<Redacted.Redacted<string>>
  readonly maxBodyBytes: number
  readonly quiet: boolean
}

const startupLines = (config: PushConfig, baseUrl: string, logFile: string) => {
  const style = makeStyle(process.stderr)
  const tokenLine = Option.isSome(config.token)
    ? "Token required in X-A2A-Notification-Token, A2A-Notification-Token or Authorization: Bearer"
    : style.yellow("No --token: accepting every notification (development use only)")
  const exposure = isLoopbackHost(config.host)
    ? []
    : [style.yellow(`Listening on ${config.host}: other machines can post notifications here`)]
  return [
    `${style.bold("Push notification receiver")} listening on ${style.cyan(baseUrl)}`,
    `Push URL (--push-url / push_url): ${baseUrl}${PUSH_PATH}`,
    tokenLine,
    ...exposure,
    `Notifications are logged to ${logFile}`,
    style.dim("Press Ctrl+C to stop.")
  ].join("\n")
}

/** With --json, the address as one JSON line on stdout, before any notification (README, JSON output). */
const startupJson = (config: PushConfig, baseUrl: string, logFile: string) =>
  JSON.stringify({ url: baseUrl, push_url: `${baseUrl}${PUSH_PATH}`, token_required: Option.isSome(config.token), log_file: logFile })

const printingHooks = (config: PushConfig): WebhookHooks => {
  const out = makeStyle(process.stdout)
  const err = makeStyle(process.stderr)
  return {
    onNotification: (record) =>
      config.quiet ? Effect.void : writeOut(config.json ? JSON.stringify(record) : `${formatNotification(record, out)}\n`),
    onRejected: (rejection) =>
      writeErr(
        err.yellow(escapeForTerminal(`Rejected POST ${rejection.path}: ${rejection.status} ${rejection.code}: ${rejection.message}`))
      )
  }
}

/** A blank token (`RELAY_PUSH_TOKEN=` left empty, say) would make a receiver that refuses every notification. */
const blankToken = (config: PushConfig) =>
  Option.isSome(config.token) && Redacted.value(config.token.value).trim() === ""
    ? Effect.fail(
      new InvalidInput({
        reason: "The push token (--token or RELAY_PUSH_TOKEN) is empty: no sender could ever show it",
        suggestion: "Give a token, or unset RELAY_PUSH_TOKEN and leave out --token to accept every notification"
      })
    )
    : Effect.void

const runPushServer = (config: PushConfig) =>
  untilStopped(Effect.gen(function*() {
    yield* blankToken(config)
    const log = yield* NotificationLog.NotificationLog
    const server = webhookServerLayer({
      host: config.host,
      port: config.port,
      token: Option.getOrUndefined(config.token),
      maxBodyBytes: config.maxBodyBytes,
      hooks: printingHooks(config)
    })
    const announce = Effect.flatMap(webhookBaseUrl, (baseUrl) =>
      Effect.zipRight(
        config.quiet ? Effect.void : writeErr(startupLines(config, baseUrl, log.file)),
        config.json ? writeOut(startupJson(config, baseUrl, log.file)) : Effect.void
      ))
    return yield* Layer.launch(Layer.effectDiscard(announce).pipe(Layer.provide(server)))
  })).pipe(
    Effect.catchAll((error) => reportError(error, config.json)),
    withLogLevel(config)
  )

const push = Command.make(
  "push",
  { ...outputOptions, host: pushHost, port: pushPort, token: pushToken, maxBodyBytes, quiet },
  runPushServer
).pipe(Command.withDescription("Receive A2A push notifications: print each one and log it (POST any path; GET /health)"))

// ---------------------------------------------------------------------------

export const serverCommand = Command.make("server").pipe(
  Command.withDescription("Local servers for development: A2A agent and push notification receiver"),
  Command.withSubcommands([agentCommand, push]),
  Command.provide(Layer.merge(NotificationLog.layer(), HttpClient.layer))
)
