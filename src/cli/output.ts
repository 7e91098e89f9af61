/**
 * The terminal door's rendering: results to stdout (human or --json), errors and logs to stderr.
 */
import { Data, Effect, Logger, LogLevel } from "effect"
import { type Described, isDescribed } from "../domain/errors.js"
import { act, type Hint } from "../domain/hints.js"
import { maskSecretsIn, MIN_MASKED_LENGTH, scrubSecrets } from "../domain/secrets.js"
import { exitCodeForError } from "./exitCodes.js"
import { checkOnTask, terminalHint } from "./hints.js"
import { escapeForTerminal } from "./terminalText.js"

/** Flags every command accepts after its name (`relay session list --json`). */
export interface OutputFlags {
  readonly json: boolean
  readonly verbose: boolean
}

const LEVEL_NAMES = new Map(LogLevel.allLevels.map((level) => [level._tag.toLowerCase(), level] as const))

/**
 * Takes `--log-level X` / `--log-level=X` (a valid X, before any `--`) out of the arguments: relay
 * applies it itself, with --verbose, because @effect/cli's built-in accepts it only in some places
 * (`card get --url U --log-level debug` was an unknown argument). An invalid X is left in for
 * @effect/cli to refuse as a usage error.
 */
export const takeLogLevel = (argv: ReadonlyArray<string>): { readonly level?: LogLevel.LogLevel; readonly rest: Array<string> } => {
  const end = argv.indexOf("--") === -1 ? argv.length : argv.indexOf("--")
  const rest: Array<string> = []
  let level: LogLevel.LogLevel | undefined
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!
    const inline = arg.startsWith("--log-level=")
    const value = index >= end ? undefined : inline ? arg.slice("--log-level=".length) : arg === "--log-level" ? argv[index + 1] : undefined
    const known = value === undefined ? undefined : LEVEL_NAMES.get(value.toLowerCase())
    if (known === undefined) {
      rest.push(arg)
      continue
    }
    level = known
    if (!inline) index++
  }
  return level === undefined ? { rest } : { level, rest }
}

const requestedLevel = takeLogLevel(process.argv).level

/**
 * One logging setting for every command: `--verbose` means `--log-level debug`; given both, the
 * more detailed wins (so neither hides what the other shows); given neither, `quiet` (warnings;
 * relay mcp also shows info). Logs always go to stderr.
 */
export const withLogLevel = (flags: { readonly verbose: boolean }, quiet: LogLevel.LogLevel = LogLevel.Warning) => {
  const chosen = requestedLevel === undefined
    ? (flags.verbose ? LogLevel.Debug : quiet)
    : flags.verbose && LogLevel.greaterThan(requestedLevel, LogLevel.Debug)
    ? LogLevel.Debug
    : requestedLevel
  return <A, E, R>(effect: Effect.Effect<A, E, R>) => Logger.withMinimumLogLevel(effect, chosen)
}

/** A failure already reported on stderr; main turns it into the process exit code. */
export class CommandFailed extends Data.TaggedError("CommandFailed")<{ readonly exitCode: number }> {}

export { EXIT_FAILURE, EXIT_USAGE } from "./exitCodes.js"

const colorEnabled = (stream: NodeJS.WriteStream) =>
  stream.isTTY === true && process.env["NO_COLOR"] === undefined && process.env["TERM"] !== "dumb"

const paint = (enabled: boolean, open: number, close: number) => (text: string) => enabled ? `\u001b[${open}m${text}\u001b[${close}m` : text

/** ANSI styles that collapse to plain text off a TTY or with NO_COLOR. */
export const makeStyle = (stream: NodeJS.WriteStream) => {
  const on = colorEnabled(stream)
  return {
    bold: paint(on, 1, 22),
    dim: paint(on, 2, 22),
    red: paint(on, 31, 39),
    green: paint(on, 32, 39),
    yellow: paint(on, 33, 39),
    cyan: paint(on, 36, 39)
  }
}
export type Style = ReturnType<typeof makeStyle>

const ANSI_SEQUENCE = /\u001b\[[0-9;]*m/g

/**
 * @effect/cli paints help and usage errors with ANSI codes whatever the stream; this keeps them
 * off pipes, files and NO_COLOR terminals like the rest of our output.
 */
export const plainWhenNotColored = (stream: NodeJS.WriteStream) => {
  if (colorEnabled(stream)) return
  const write = stream.write.bind(stream) as (chunk: unknown, ...rest: Array<unknown>) => boolean
  stream.write =
    ((chunk: unknown, ...rest: Array<unknown>) =>
      write(typeof chunk === "string" ? chunk.replace(ANSI_SEQUENCE, "") : chunk, ...rest)) as typeof stream.write
}

/**
 * The secrets given on this command line (options.ts `secretOption`): whatever relay prints for the
 * call shows them masked, as the MCP door does, since an agent may echo what it was sent. A process
 * runs one command, so they are kept for the process.
 */
const callSecrets: Array<string> = []

export const addCallSecret = (secret: string) => void callSecrets.push(secret)

/** `value` fit to print: this call's secrets masked in every string it holds. */
const withoutCallSecrets = <A>(value: A): A => scrubSecrets(value, callSecrets) as A

/** `text` fit to print: this call's secrets masked, as typed and as JSON spells them (the printed form of a value not scrubbed before). */
export const withoutCallSecretsIn = (text: string): string =>
  maskSecretsIn(text, callSecrets.flatMap((secret) => [secret, JSON.stringify(secret).slice(1, -1)]))

/**
 * Text streamed to the terminal piece by piece with this call's secrets masked across pieces: the
 * end of a piece that may begin a secret waits for the next piece (at most a secret's length), and
 * `rest` gives back what still waits when the stream ends.
 */
export const secretSafeText = () => {
  let held = ""
  return {
    take: (piece: string): string => {
      const text = withoutCallSecretsIn(held + piece)
      const waiting = secretStartAtEnd(text)
      held = text.slice(text.length - waiting)
      return text.slice(0, text.length - waiting)
    },
    rest: (): string => {
      const rest = held
      held = ""
      return rest
    }
  }
}

/** Length of the longest end of `text` that a secret of this call begins with (and goes on past). */
const secretStartAtEnd = (text: string): number => {
  let longest = 0
  for (const secret of callSecrets) {
    if (secret.length < MIN_MASKED_LENGTH) continue
    for (let length = Math.min(secret.length - 1, text.length); length > longest; length--) {
      if (secret.startsWith(text.slice(text.length - length))) {
        longest = length
        break
      }
    }
  }
  return longest
}

export const writeOut = (text: string) =>
  Effect.sync(() => void process.stdout.write(withoutCallSecretsIn(text.endsWith("\n") ? text : `${text}\n`)))
export const writeErr = (text: string) =>
  Effect.sync(() => void process.stderr.write(withoutCallSecretsIn(text.endsWith("\n") ? text : `${text}\n`)))

/** A field: its label, its raw value (null: "none"), and how to paint the value once escaped. */
export type Field = readonly [label: string, value: string | null, paint?: (text: string) => string]

/**
 * `label  value` lines with aligned values; rows with a null value are shown as "none". Values are
 * escaped (one line each, see terminalText) before they are painted.
 */
export const fields = (style: Style, rows: ReadonlyArray<Field>, indent = "") => {
  const width = Math.max(...rows.map(([label]) => label.length))
  return rows.map(([label, value, paint = (text: string) => text]) =>
    `${indent}${style.bold(label.padEnd(width))}  ${value === null ? style.dim("none") : paint(escapeForTerminal(value))}`
  ).join("\n")
}

const describe = (error: unknown): Described =>
  isDescribed(error)
    ? error
    : {
      code: "internal_error",
      message: error instanceof Error ? error.message : String(error),
      hint: ["Run again with ", act("ShowDetails"), " for details."]
    }

/**
 * An error's text for people: escaped, and every line after the first indented, so text an agent
 * put into a message can never print a line that looks like relay's own `error:` or `hint:`.
 */
const indentedText = (text: string) => escapeForTerminal(text, "lines").split("\n").join("\n  ")

/** A task a command stopped following while it may still run (a signal, a silent stream): where to find it again. */
export interface TaskLeft {
  readonly agentUrl: string
  readonly taskId: string
  readonly contextId: string | null
}

/** The hint, then which task was left and how to get back to it. */
const hintWithTask = (hint: Hint, task: TaskLeft): Hint => [
  ...(hint === "" ? [] : typeof hint === "string" ? [hint, "\n"] : [...hint, "\n"]),
  `The task ${task.taskId} may still be running. `,
  ...checkOnTask(task)
]

/**
 * An error as stderr shows it: `error:` and `hint:` lines, or one JSON object. With a task left
 * running, the hint says how to get back to it and the JSON carries its `task_id` and `context_id`.
 */
export const errorReport = (described: Described, json: boolean, task?: TaskLeft) => {
  const code = described.code
  // Masked before escaping and indenting, which could split a secret the text holds.
  const message = withoutCallSecretsIn(described.message)
  const hint = withoutCallSecretsIn(terminalHint(task === undefined ? described.hint : hintWithTask(described.hint, task)))
  const style = makeStyle(process.stderr)
  const ids = task === undefined ? {} : { task_id: task.taskId, context_id: task.contextId }
  return json
    ? JSON.stringify({ error: { code, message, hint, ...ids } }, null, 2)
    : `${style.red(`error: ${indentedText(message)}`)}\n${style.dim(`hint: ${indentedText(hint)}`)}`
}

export const reportError = (error: unknown, json: boolean, task?: TaskLeft) =>
  Effect.zipRight(writeErr(errorReport(describe(error), json, task)), Effect.fail(new CommandFailed({ exitCode: exitCodeForError(error) })))

/**
 * Runs a program for a command and renders its result: JSON on --json (one line when it ends an
 * NDJSON stream of events, else indented), else the human view, this call's secrets masked in
 * either. Failures are reported on stderr and become a non-zero exit code. Returns the result.
 */
export const render = <A, E extends Described | CommandFailed, R>(
  flags: OutputFlags,
  program: Effect.Effect<A, E, R>,
  human: (result: A, style: Style) => string,
  json: "indented" | "line" = "indented"
): Effect.Effect<A, CommandFailed, R> =>
  program.pipe(
    Effect.matchEffect({
      onSuccess: (result) => {
        // Masked in the value, before a view cuts, wraps or escapes what it shows.
        const shown = withoutCallSecrets(result)
        return Effect.as(
          writeOut(flags.json ? JSON.stringify(shown, null, json === "line" ? undefined : 2) : human(shown, makeStyle(process.stdout))),
          result
        )
      },
      // A CommandFailed was reported where it happened.
      onFailure: (error) => (error instanceof CommandFailed ? Effect.fail(error) : reportError(error, flags.json))
    }),
    withLogLevel(flags)
  )
