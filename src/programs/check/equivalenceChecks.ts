/** The equivalence group: the interfaces of one agent are one agent (the same tasks behind each, answered alike). */
import { Effect, Either } from "effect"
import { partsText } from "../../a2a/text.js"
import type * as V1 from "../../a2a/v1.js"
import { type CheckOutcome, failed, passed, skipped } from "../../domain/conformance.js"
import { A2aClient } from "../../services/A2aClient.js"
import { firstTask, type InterfaceContext, stateSent } from "./context.js"

/** A task made over the first interface, looked up over each of the others. */
const taskVisible = (contexts: ReadonlyArray<InterfaceContext>): Effect.Effect<CheckOutcome, string, A2aClient> =>
  Effect.gen(function*() {
    const [first, ...others] = contexts
    if (first === undefined || others.length === 0) return skipped("the agent has only one interface to compare")
    const task = yield* firstTask(first)
    const client = yield* A2aClient
    const seen = yield* Effect.forEach(others, (other) =>
      client.getTask(other.target, { id: task.id }).pipe(
        Effect.match({
          onSuccess: (found) => ({ where: other.id, state: stateSent(found.status), error: undefined }),
          onFailure: (error) => ({ where: other.id, state: undefined, error: error.message })
        })
      ))
    const label = (id: InterfaceContext["id"]) => `${id.protocol} ${id.binding}`
    const missing = seen.filter((s) => s.error !== undefined)
    if (missing.length > 0) {
      return failed(
        `task ${task.id} from ${label(first.id)} is not found over ${missing.map((m) => `${label(m.where)} (${m.error})`).join(", ")}`
      )
    }
    // The first answer may have been taken while the task was still going; compare what the others see.
    const states = new Set(seen.map((s) => s.state))
    return states.size === 1
      ? passed(`task ${task.id} seen over ${seen.length + 1} interfaces`)
      : failed(`the interfaces disagree on the task's state: ${seen.map((s) => `${label(s.where)} ${s.state}`).join(", ")}`)
  })

const label = (id: InterfaceContext["id"]) => `${id.protocol} ${id.binding}`

/** What every binding and generation must answer alike about a task: its context, state and artifacts' text. */
const answerOf = (task: V1.Task) =>
  JSON.stringify({
    context: task.contextId ?? null,
    state: stateSent(task.status),
    artifacts: (task.artifacts ?? []).map((artifact) => [artifact.artifactId, partsText(artifact.parts)])
  })

/** The task made over the first interface, asked for over every interface: the answers must be one. */
const sameAnswers = (contexts: ReadonlyArray<InterfaceContext>): Effect.Effect<CheckOutcome, string, A2aClient> =>
  Effect.gen(function*() {
    const [first] = contexts
    if (first === undefined || contexts.length < 2) return skipped("the agent has only one interface to compare")
    const task = yield* firstTask(first)
    const client = yield* A2aClient
    const answers = yield* Effect.forEach(contexts, (ctx) => Effect.either(client.getTask(ctx.target, { id: task.id })))
    if (answers.some(Either.isLeft)) return skipped(`task ${task.id} is not found over every interface (see equivalence.task-visible)`)
    const seen = answers.flatMap((
      answer,
      index
    ) => (Either.isRight(answer) ? [{ where: contexts[index]!.id, answer: answerOf(answer.right) }] : []))
    const distinct = new Set(seen.map((s) => s.answer))
    return distinct.size === 1
      ? passed(`task ${task.id} answered alike over ${seen.length} interfaces`)
      : failed(`the interfaces answer task ${task.id} differently: ${seen.map((s) => `${label(s.where)} ${s.answer}`).join("; ")}`)
  })

export const equivalenceChecks = { "equivalence.task-visible": taskVisible, "equivalence.same-answers": sameAnswers } as const
