/**
 * Composes the layers and runs the CLI: the only place that calls runMain. main.ts loads it for
 * every command line but a bare `--version`.
 *
 * stdout carries results only (and MCP messages under `relay mcp`): the logger writes to
 * stderr and runMain's own error report is disabled in favour of ours.
 */
import * as NodeFileSystem from "@effect/platform-node/NodeFileSystem"
import * as NodePath from "@effect/platform-node/NodePath"
import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { Cause, Effect, Layer, Logger, RuntimeFlags, RuntimeFlagsPatch } from "effect"
import {
  alreadyReported,
  endQuietlyOnClosedStdout,
  exitWhenWritten,
  finish,
  jsonRequested,
  quietUsageErrors,
  watchStopSignals
} from "./cli/ending.js"
import * as LazyTerminal from "./cli/lazyTerminal.js"
import { plainWhenNotColored, takeLogLevel } from "./cli/output.js"
import { runCli } from "./cli/root.js"
import { escapeForTerminal } from "./cli/terminalText.js"
import * as StateDir from "./services/StateDir.js"

/**
 * Logs go to stderr, with what agents put into messages escaped like every human view
 * (cli/terminalText.ts), so a log line can never rewrite the terminal or forge another line.
 */
const StderrLogger = Logger.replace(
  Logger.defaultLogger,
  Logger.prettyLogger({ stderr: true, colors: "auto" }).pipe(
    Logger.mapInput((message: unknown) =>
      typeof message === "string"
        ? escapeForTerminal(message, "line")
        : Array.isArray(message)
        ? message.map((part) => (typeof part === "string" ? escapeForTerminal(part, "line") : part))
        : message
    )
  )
)

/**
 * What every command gets; each command group provides the rest itself (cli/root.ts). Not
 * NodeContext: its command executor and worker manager, which relay never uses, cost every
 * command's start-up (bench/README.md); and a terminal made on first use (cli/lazyTerminal.ts).
 */
const BaseLayer = StateDir.layer.pipe(
  Layer.provideMerge(Layer.mergeAll(NodeFileSystem.layer, NodePath.layer, LazyTerminal.layer)),
  Layer.provideMerge(StderrLogger)
)

/**
 * Effect counts every fiber's start and end in metrics (RuntimeMetrics, on by default), which
 * nothing in relay reads; the agent server starts two fibers per SendMessage (bench/README.md).
 */
const withoutFiberMetrics = Effect.withRuntimeFlagsPatch(RuntimeFlagsPatch.disable(RuntimeFlags.RuntimeMetrics))

/** Runs the command line `argv` (as process.argv: node, the script, then the arguments). */
export const run = (argv: ReadonlyArray<string>) => {
  plainWhenNotColored(process.stdout)
  plainWhenNotColored(process.stderr)
  watchStopSignals()
  endQuietlyOnClosedStdout()

  const json = jsonRequested(argv.slice(2))

  quietUsageErrors(runCli(takeLogLevel(argv).rest)).pipe(
    Effect.provide(BaseLayer),
    // Anything else (a layer that failed to build, a defect) is logged to stderr, never lost.
    Effect.tapErrorCause((cause) =>
      alreadyReported(cause) || Cause.isInterruptedOnly(cause) ? Effect.void : Effect.logError("Unexpected failure", cause)
    ),
    Effect.provide(StderrLogger),
    withoutFiberMetrics,
    NodeRuntime.runMain({
      disableErrorReporting: true,
      disablePrettyLogger: true,
      teardown: (exit, onExit) => exitWhenWritten(finish(exit, json), onExit)
    })
  )
}
