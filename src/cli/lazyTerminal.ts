/**
 * The Terminal @effect/cli asks every command for, made on its first use. NodeTerminal opens
 * process.stdin (a stream and a readline over it) as soon as its layer is built, and its module
 * loads node:readline: every command paid for both at start-up (bench/README.md), though only
 * an interactive prompt reads the terminal, and no relay command
 * prompts today. A command that does gets the very same NodeTerminal, in the layer's scope.
 */
import { Terminal } from "@effect/platform/Terminal"
import { Effect, Layer, Scope } from "effect"

export const layer = Layer.scoped(
  Terminal,
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const terminal = yield* Effect.cached(
      Effect.promise(() => import("@effect/platform-node/NodeTerminal")).pipe(
        Effect.flatMap((NodeTerminal) => NodeTerminal.make()),
        Scope.extend(scope)
      )
    )
    return Terminal.of({
      columns: Effect.flatMap(terminal, (t) => t.columns),
      rows: Effect.flatMap(terminal, (t) => t.rows),
      isTTY: Effect.flatMap(terminal, (t) => t.isTTY),
      readInput: Effect.flatMap(terminal, (t) => t.readInput),
      readLine: Effect.flatMap(terminal, (t) => t.readLine),
      display: (text) => Effect.flatMap(terminal, (t) => t.display(text))
    })
  })
)
