/**
 * How every command ends, in one place: the exit code (exitCodes.ts), the report of a usage error
 * or a signal on stderr (JSON with --json), and which commands a signal ends normally.
 *
 * Errors a command meets are reported where they happen (output.ts `reportError`) and arrive here
 * as CommandFailed; @effect/cli's usage errors and signals arrive here unreported.
 */
import { HelpDoc, ValidationError } from "@effect/cli"
import { Cause, Data, Effect, Exit } from "effect"
import { EXIT_FAILURE, EXIT_OK, EXIT_ON_SIGNAL, EXIT_USAGE, type StopSignal } from "./exitCodes.js"
import { CommandFailed, errorReport, makeStyle, type TaskLeft, withoutCallSecretsIn } from "./output.js"

/** `--json` anywhere before a `--` (every command spells it the same, options.ts). */
export const jsonRequested = (argv: ReadonlyArray<string>): boolean => {
  const end = argv.indexOf("--")
  return (end === -1 ? argv : argv.slice(0, end)).includes("--json")
}

/**
 * A reader that stops reading (`relay … | head`) closes our stdout: the command ends at once,
 * quietly, exit 0 (the reader had what it wanted; 141 would fail `set -o pipefail` scripts for
 * nothing). Other write errors end it with one line and exit 1; a closed stderr is ignored.
 */
export const endQuietlyOnClosedStdout = () => {
  process.stdout.on("error", (error: NodeJS.ErrnoException) => {
    if (error.code === "EPIPE") process.exit(EXIT_OK)
    process.stderr.write(`error: cannot write the output: ${error.code ?? error.message}\n`)
    process.exit(EXIT_FAILURE)
  })
  process.stderr.on("error", () => {})
}

let stoppedBy: StopSignal | undefined
let servesUntilStopped = false
/** The command has finished and the process waits for its output to go out. */
let flushing = false

/**
 * Remembers which signal stopped the process (runMain interrupts the command on either, without
 * saying which); a second one ends the process at once. The listener stays for the whole run:
 * signal-exit (under proper-lockfile) re-raises a signal it believes nobody else handles, which
 * killed relay when its listener was the last one left (it is loaded after ours, on demand).
 */
export const watchStopSignals = () => {
  for (const signal of Object.keys(EXIT_ON_SIGNAL) as Array<StopSignal>) {
    process.on(signal, () => {
      if (stoppedBy !== undefined || flushing) process.exit(EXIT_ON_SIGNAL[signal])
      stoppedBy = signal
    })
  }
}

/**
 * Marks a command that runs until it is stopped (servers, --follow): for it a signal is the normal
 * end, exit 0 and nothing reported.
 */
export const untilStopped = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.suspend(() => {
    servesUntilStopped = true
    return effect
  })

const ANSI_SEQUENCE = /\u001b\[[0-9;]*m/g

const usageText = (error: ValidationError.ValidationError) =>
  "error" in error ? HelpDoc.toAnsiText(error.error).replace(ANSI_SEQUENCE, "").trim() : "invalid usage"

const USAGE_HINT = "Run the command with --help to see its arguments and options."

/** A command line relay will not run (commandLine.ts): reported like every other error, exit 2. */
export class UsageError extends Data.TaggedError("UsageError")<{ readonly message: string; readonly hint: string }> {
  readonly code = "usage"
}

const writeJsonError = (code: string, message: string, hint: string) =>
  process.stderr.write(`${JSON.stringify({ error: { code, message, hint } }, null, 2)}\n`)

/** The `error:` and `hint:` lines of a usage error, as output.ts writes every other error (a secret given for the call masked). */
const reportUsage = (given: string, hint: string, json: boolean) => {
  const message = withoutCallSecretsIn(given)
  if (json) return writeJsonError("usage", message, hint)
  const style = makeStyle(process.stderr)
  process.stderr.write(`${style.red(`error: ${message}`)}\n${style.dim(`hint: ${hint}`)}\n`)
}

/** @effect/cli prints its usage errors itself, in a shape of its own: `finish` reports them as ours. */
export const quietUsageErrors = <A, E, R>(effect: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
  Effect.flatMap(Effect.console, (console) => Effect.withConsole(effect, { ...console, error: () => Effect.void }))

/** The task an interrupted command was following, if the agent had shown one (progress.ts `leavesTaskHandle`). */
let interruptedTask: TaskLeft | undefined

/** Names the task the command was following when a signal interrupted it: `finish` reports it with the signal. */
export const interruptedWhileFollowing = (task: TaskLeft | undefined) => Effect.sync(() => void (interruptedTask = task))

const reportInterrupted = (signal: StopSignal, json: boolean) => {
  const message = `interrupted by ${signal}`
  if (interruptedTask !== undefined) {
    process.stderr.write(`${errorReport({ code: "interrupted", message, hint: "" }, json, interruptedTask)}\n`)
  } else if (json) writeJsonError("interrupted", message, "Run the command again; a task the agent had started may still be running.")
  else process.stderr.write(`${makeStyle(process.stderr).red(`error: ${message}`)}\n`)
}

const failureOf = (cause: Cause.Cause<unknown>) => {
  const failure = Cause.failureOption(cause)
  return failure._tag === "Some" ? failure.value : undefined
}

/** Failures shown to the user by their command, by @effect/cli, or by `finish` (usage errors with --json). */
export const alreadyReported = (cause: Cause.Cause<unknown>) => {
  const failure = failureOf(cause)
  return failure instanceof CommandFailed || ValidationError.isValidationError(failure)
}

/**
 * Ends the process with a finished command's exit code. A failure waits until stdout and stderr
 * have taken all that was written: process.exit drops what a pipe has not taken yet (a cut answer
 * of many MiB printed before its error). After a signal, or during that wait, it ends at once.
 */
export const exitWhenWritten = (code: number, exit: (code: number) => void) => {
  if (code === EXIT_OK || stoppedBy !== undefined) return exit(code)
  flushing = true
  // A reader that never reads again cannot hold the process forever.
  setTimeout(() => exit(code), FLUSH_LIMIT_MS).unref()
  // Writes go out in order: the callback of an empty write runs once everything before it has.
  const afterStderr = () => process.stderr.write("", () => exit(code))
  if (stdoutAbandoned) return afterStderr()
  process.stdout.write("", afterStderr)
}

const FLUSH_LIMIT_MS = 30_000
let stdoutAbandoned = false

/** stdout's reader is stuck (relay mcp cut off a client that stopped reading): the exit does not wait for it. */
export const abandonStdout = () => {
  stdoutAbandoned = true
}

/** The exit code of a finished command, after reporting what nobody has reported yet. */
export const finish = (exit: Exit.Exit<unknown, unknown>, json: boolean): number => {
  if (Exit.isSuccess(exit)) return EXIT_OK
  if (Cause.isInterruptedOnly(exit.cause)) {
    if (stoppedBy === undefined || servesUntilStopped) return EXIT_OK
    reportInterrupted(stoppedBy, json)
    return EXIT_ON_SIGNAL[stoppedBy]
  }
  const failure = failureOf(exit.cause)
  if (failure instanceof CommandFailed) return failure.exitCode
  if (ValidationError.isValidationError(failure)) {
    reportUsage(usageText(failure), USAGE_HINT, json)
    return EXIT_USAGE
  }
  return EXIT_FAILURE
}
