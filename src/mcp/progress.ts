/**
 * Progress for long tool calls: when the client sent a progress token, every change of the
 * agent's task is reported at once, and a heartbeat repeats the latest status at least every
 * 10 s so clients that time out idle calls keep waiting.
 */
import type { ServerContext } from "@modelcontextprotocol/server"
import { Duration, Effect, Ref, Schedule } from "effect"
import type { OnUpdate, TaskUpdate } from "../programs/taskUpdates.js"

/** What a tool call knows of its request: its signal, its `_meta`, and how to notify the client (either era). */
export type ToolExtra = ServerContext

export const HEARTBEAT: Duration.DurationInput = "10 seconds"
const MESSAGE_LIMIT = 200
/** How much of the answer's end is kept to find its last line. */
const TAIL_LIMIT = 4 * MESSAGE_LIMIT

const lastLine = (text: string) => text.trim().split("\n").at(-1) ?? ""

/**
 * "working: the last line of what the agent said so far" (its answer, else its status message),
 * for each update in turn. Only the answer's end is kept, from the updates' pieces, so a long
 * answer costs no more per update than a short one.
 */
export const makeProgressMessages = (): (update: TaskUpdate) => string => {
  let tail = ""
  return (update) => {
    tail = `${update.replaced ? "" : tail}${update.delta.slice(-TAIL_LIMIT)}`.slice(-TAIL_LIMIT)
    const line = lastLine(tail) || lastLine(update.status.slice(-TAIL_LIMIT))
    const text = line.length > MESSAGE_LIMIT ? `…${line.slice(-MESSAGE_LIMIT)}` : line
    return text === "" ? update.view.state : `${update.view.state}: ${text}`
  }
}

/**
 * Runs `program` with an `onUpdate` that reports progress to the client (nothing is sent when
 * the client did not ask for progress). The heartbeat stops when the program ends.
 */
export const withProgress = <A, E, R>(
  extra: ToolExtra,
  initialMessage: string,
  program: (onUpdate: OnUpdate) => Effect.Effect<A, E, R>,
  heartbeat: Duration.DurationInput = HEARTBEAT
): Effect.Effect<A, E, R> =>
  withProgressMessages(extra, initialMessage, (say) => {
    const messageOf = makeProgressMessages()
    return program((update) => say(messageOf(update)))
  }, heartbeat)

/** Like withProgress, for programs that report their progress as plain messages. */
export const withProgressMessages = <A, E, R>(
  extra: ToolExtra,
  initialMessage: string,
  program: (say: (message: string) => Effect.Effect<void>) => Effect.Effect<A, E, R>,
  heartbeat: Duration.DurationInput = HEARTBEAT
): Effect.Effect<A, E, R> => {
  const token = extra.mcpReq._meta?.progressToken
  if (token === undefined) return program(() => Effect.void)
  return Effect.gen(function*() {
    const latest = yield* Ref.make(initialMessage)
    const count = yield* Ref.make(0)
    const send = Effect.gen(function*() {
      const progress = yield* Ref.updateAndGet(count, (n) => n + 1)
      const message = yield* Ref.get(latest)
      yield* Effect.tryPromise(() =>
        extra.mcpReq.notify({ method: "notifications/progress", params: { progressToken: token, progress, message } })
      ).pipe(Effect.ignore)
    })
    const say = (message: string) => Effect.zipRight(Ref.set(latest, message), send)
    yield* send
    return yield* program(say).pipe(
      Effect.raceFirst(Effect.repeat(Effect.delay(send, heartbeat), Schedule.forever).pipe(Effect.zipRight(Effect.never)))
    )
  })
}
