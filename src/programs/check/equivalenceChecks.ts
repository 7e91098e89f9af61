/** The equivalence group: the interfaces of one agent are one agent (the same tasks behind each). */
import { Effect } from "effect"
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

export const equivalenceChecks = { "equivalence.task-visible": taskVisible } as const
