/**
 * What the terminal shows while a task runs: the answer as it streams (stdout), state changes and
 * the agent's status text on their own lines (stderr); with --json, NDJSON events on stdout. And,
 * should the command be cut short, which task it leaves running.
 */
import { Duration, Effect, Exit, Schedule } from "effect"
import { RequestTimeout } from "../domain/clientErrors.js"
import type { TaskUpdate } from "../programs/taskUpdates.js"
import { interruptedWhileFollowing } from "./ending.js"
import {
  type CommandFailed,
  makeStyle,
  reportError,
  secretSafeText,
  type TaskLeft,
  withoutCallSecretsIn,
  writeErr,
  writeOut
} from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

/**
 * One NDJSON line per update: `kind` "update" tells it from the final result ("task" or "message").
 * The `text` pieces add up to the answer; `replaced: true` (only then present) marks a piece that
 * replaces an artifact's text instead (see TaskUpdate). `parts` are the file and data parts the
 * update added, as the result shows them, files not saved yet: the result line, last, has the
 * whole answer's parts with where each file was saved.
 */
const updateEvent = (update: TaskUpdate, text = update.delta) =>
  JSON.stringify({
    kind: "update",
    task_id: update.view.task_id,
    context_id: update.view.context_id,
    state: update.view.state,
    text,
    ...(update.replaced ? { replaced: true } : {}),
    status: update.status === "" ? null : update.status,
    parts: update.parts
  })

/**
 * The update's event line, its text through `streamed` as the terminal's is: a secret the pieces
 * cut is masked too. What was held for a replaced artifact ends the text before it, on a line of
 * its own; what is held when the task settles ends that update's text.
 */
const eventLines = (update: TaskUpdate, streamed: ReturnType<typeof secretSafeText>) => {
  const before = update.replaced ? streamed.rest() : ""
  const text = streamed.take(update.delta) + (stillAtWork(update) ? "" : streamed.rest())
  const held = before === "" ? "" : `${updateEvent({ ...update, replaced: false, parts: [] }, before)}\n`
  return `${held}${updateEvent(update, text)}`
}

/** While the agent is still at work its status message is news ("thinking…"); once settled it is the answer, shown in the summary. */
const stillAtWork = (update: TaskUpdate) => update.view.state === "working" || update.view.state === "submitted"

const statusWorthShowing = (update: TaskUpdate) => update.status !== "" && stillAtWork(update)

const shownText = (text: string) => escapeForTerminal(text, "lines")

/**
 * `streamText` prints the answer to stdout as it arrives (only when streaming without --json: a
 * plain send prints it once, in the summary); `showStates` prints each new state, with the agent's
 * status text while it works, to stderr (not with --json, so scripts read clean streams);
 * `events` prints every update as an NDJSON line on stdout (streaming with --json).
 */
export const progressPrinter = (options: { readonly streamText: boolean; readonly showStates: boolean; readonly events?: boolean }) => {
  let shown = ""
  let printedText = false
  let answerLineOpen = false
  let textEndsLine = true
  const waiting = waitingLine(options.showStates && process.stderr.isTTY === true, () => !printedText)
  // The answer's text with this call's secrets masked, however the pieces cut them (output.ts).
  const streamed = secretSafeText()
  const unprinted = () => shownText(streamed.rest())
  let latest: TaskUpdate | undefined
  const onUpdate = (update: TaskUpdate) =>
    Effect.gen(function*() {
      latest = update
      if (options.events === true) return yield* writeOut(eventLines(update, streamed))
      waiting.clear()
      // Drawn straight to stderr, not through writeErr: masked here.
      waiting.latest = withoutCallSecretsIn(
        statusWorthShowing(update) ? `${update.view.state}: ${escapeForTerminal(update.status)}` : update.view.state
      )
      if (options.streamText && update.delta !== "") {
        // What is printed cannot be taken back: a replaced artifact is printed afresh, on a line of its own.
        const freshLine = update.replaced && !textEndsLine ? "\n" : ""
        const before = update.replaced ? streamed.rest() : ""
        printedText = true
        textEndsLine = update.delta.endsWith("\n")
        answerLineOpen = !textEndsLine
        const now = streamed.take(update.delta)
        yield* Effect.sync(() => process.stdout.write(`${shownText(before)}${freshLine}${shownText(now)}`))
      }
      if (options.streamText && !stillAtWork(update)) yield* Effect.sync(() => process.stdout.write(unprinted()))
      const status = statusWorthShowing(update) ? ` ${escapeForTerminal(update.status)}` : ""
      const line = `[${escapeForTerminal(update.view.state)}]${status}`
      if (options.showStates && line !== shown) {
        shown = line
        // On a terminal both streams share the screen: end the answer's open line so the status
        // stands on its own (the answer itself, on stdout, is left as the agent sent it).
        const breakLine = answerLineOpen && process.stdout.isTTY === true && process.stderr.isTTY === true ? "\n" : ""
        answerLineOpen = answerLineOpen && breakLine === ""
        yield* writeErr(`${breakLine}${makeStyle(process.stderr).dim(line)}`)
      }
    })
  /**
   * What is still held back when the command fails or is cut short (no settled update, no summary
   * will print it): the agent's text as it stands, the last event's line repeated for it with --json.
   * Only a whole secret is masked, as in every other view (and at a settled end): what may begin one
   * is the agent's text until a piece completes it.
   */
  const printHeld: Effect.Effect<void> = Effect.suspend(() => {
    const held = streamed.rest()
    if (held === "") return Effect.void
    if (options.events === true) {
      return latest === undefined ? Effect.void : writeOut(updateEvent({ ...latest, replaced: false, status: "", parts: [] }, held))
    }
    return Effect.sync(() => process.stdout.write(shownText(held)))
  })
  /** `program`, the text still held back printed should it fail or be cut short (see printHeld). */
  const showingAllOf = <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> =>
    Effect.onExit(program, (exit) => Exit.isSuccess(exit) ? Effect.void : printHeld)
  /** `unprinted`: the end of the streamed text still held back (the stream ended before the task settled), to print before the summary. */
  return { onUpdate, printedText: () => printedText, unprinted, printHeld, showingAllOf, whileWaiting: waiting.around }
}

/**
 * Keeps the latest task a command follows (give it `onUpdate`), so that a command cut short names
 * that task and how to get back to it: interrupted by a signal (ending.ts reports it), or its
 * stream silent past --stream-idle-timeout. Before the agent showed a task there is none to name.
 */
export const leavesTaskHandle = (agentUrl: string) => {
  let latest: TaskLeft | undefined
  const silentStream = (error: unknown) => latest !== undefined && error instanceof RequestTimeout && error.limit === "stream-idle"
  return {
    onUpdate: (update: TaskUpdate) =>
      Effect.sync(() => void (latest = { agentUrl, taskId: update.view.task_id, contextId: update.view.context_id })),
    around: (json: boolean) => <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E | CommandFailed, R> =>
      program.pipe(
        Effect.onInterrupt(() => interruptedWhileFollowing(latest)),
        Effect.catchIf(silentStream, (error) => reportError(error, json, latest))
      )
  }
}

const CLEAR_LINE = "\r\u001b[K"
const WAITING_SHOWN_AFTER = Duration.millis(300)

/**
 * On a terminal, while the agent is silent: one line on stderr with its latest state and status
 * text and the time waited, redrawn each second and erased before anything else is printed. Not
 * while the answer streams (the text is the feedback, and erasing would take it off the screen).
 */
const waitingLine = (enabled: boolean, mayDraw: () => boolean) => {
  const line = {
    latest: "waiting for the agent",
    drawn: false,
    clear: () => {
      if (!line.drawn) return
      line.drawn = false
      process.stderr.write(CLEAR_LINE)
    },
    around: <A, E, R>(program: Effect.Effect<A, E, R>): Effect.Effect<A, E, R> => {
      if (!enabled) return program
      const started = Date.now()
      const draw = Effect.sync(() => {
        if (!mayDraw()) return
        const seconds = Math.floor((Date.now() - started) / 1000)
        process.stderr.write(`${CLEAR_LINE}${makeStyle(process.stderr).dim(`${line.latest} · ${seconds}s`)}`)
        line.drawn = true
      })
      const redraw = Effect.delay(Effect.repeat(draw, Schedule.spaced("1 second")), WAITING_SHOWN_AFTER)
      return Effect.raceFirst(program, Effect.zipRight(redraw, Effect.never)).pipe(Effect.ensuring(Effect.sync(line.clear)))
    }
  }
  return line
}
