/** What the terminal shows while a task runs: text as it streams (stdout), state changes (stderr). */
import { Effect } from "effect"
import type { TaskUpdate } from "../programs/taskUpdates.js"
import { makeStyle, writeErr } from "./output.js"
import { escapeForTerminal } from "./terminalText.js"

/**
 * `streamText` prints the answer to stdout as it arrives (only when streaming without --json: a
 * plain send prints it once, in the summary); `showStates` prints each new state to stderr (not
 * with --json, so scripts read clean streams).
 */
export const progressPrinter = (options: { readonly streamText: boolean; readonly showStates: boolean }) => {
  let lastState = ""
  let printedText = false
  const onUpdate = (update: TaskUpdate) =>
    Effect.gen(function*() {
      if (options.streamText && update.delta !== "") {
        printedText = true
        yield* Effect.sync(() => process.stdout.write(escapeForTerminal(update.delta, "lines")))
      }
      if (options.showStates && update.view.state !== lastState) {
        lastState = update.view.state
        yield* writeErr(makeStyle(process.stderr).dim(`[${escapeForTerminal(update.view.state)}]`))
      }
    })
  return { onUpdate, printedText: () => printedText }
}
