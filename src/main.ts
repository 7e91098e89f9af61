#!/usr/bin/env node
/**
 * Composes the layers and runs the CLI. The only place that calls runMain.
 *
 * stdout carries results only (and MCP messages under `relay mcp`): the logger writes to
 * stderr and runMain's own error report is disabled in favour of ours.
 */
import { ValidationError } from "@effect/cli"
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Exit, Layer, Logger } from "effect"
import { CommandFailed, EXIT_FAILURE, EXIT_USAGE, plainWhenNotColored } from "./cli/output.js"
import { runCli } from "./cli/root.js"
import { A2aClientLive } from "./services/A2aClient.js"
import { NotificationLogLive } from "./services/NotificationLog.js"
import { SessionStoreLive } from "./services/SessionStore.js"
import { StateDirLive } from "./services/StateDir.js"

const StderrLogger = Logger.replace(Logger.defaultLogger, Logger.prettyLogger({ stderr: true, colors: "auto" }))

const AppLayer = Layer.mergeAll(SessionStoreLive, NotificationLogLive, A2aClientLive).pipe(
  Layer.provideMerge(NodeHttpClient.layerUndici),
  Layer.provideMerge(StateDirLive),
  Layer.provideMerge(NodeContext.layer),
  Layer.provideMerge(StderrLogger)
)

const exitCodeOf = (exit: Exit.Exit<unknown, unknown>): number => {
  if (Exit.isSuccess(exit) || Cause.isInterruptedOnly(exit.cause)) return 0
  const failure = Cause.failureOption(exit.cause)
  if (failure._tag === "Some") {
    if (failure.value instanceof CommandFailed) return failure.value.exitCode
    if (ValidationError.isValidationError(failure.value)) return EXIT_USAGE
  }
  return EXIT_FAILURE
}

plainWhenNotColored(process.stdout)
plainWhenNotColored(process.stderr)

runCli(process.argv).pipe(
  // Usage errors were already printed by @effect/cli; anything unexpected is logged to stderr.
  Effect.tapErrorCause((cause) =>
    Cause.failureOption(cause)._tag === "Some" ? Effect.void : Effect.logError("Unexpected failure", cause)),
  Effect.provide(AppLayer),
  NodeRuntime.runMain({
    disableErrorReporting: true,
    disablePrettyLogger: true,
    teardown: (exit, onExit) => onExit(exitCodeOf(exit))
  })
)
