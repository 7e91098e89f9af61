/**
 * Push notification configs of a task: set, get, list, delete. Secrets never come back
 * unmasked (see pushConfigView).
 */
import { Effect } from "effect"
import type { ProtocolError } from "../domain/clientErrors.js"
import { InvalidInput, NotFound } from "../domain/errors.js"
import { act } from "../domain/hints.js"
import { pushConfigView } from "../domain/results.js"
import { A2aClient } from "../services/A2aClient.js"
import { type AgentAccess, resolveTarget, retryWithRenewedToken, withAgentTarget } from "./agentTarget.js"
import { isTaskNotFound, reportMissingTask } from "./tasks.js"

export interface PushConfigInput extends AgentAccess {
  readonly taskId: string
}

/** The webhook URL, normalised, or a typed error saying it is not one. */
export const webhookUrl = (url: string) => {
  try {
    const parsed = new URL(url)
    if (parsed.protocol === "http:" || parsed.protocol === "https:") return Effect.succeed(parsed.toString())
  } catch {
    // reported below
  }
  return Effect.fail(
    new InvalidInput({
      reason: `The webhook URL "${url}" is not an absolute http(s) URL`,
      suggestion: "Start relay server push and use the URL it prints, e.g. http://127.0.0.1:9000/"
    })
  )
}

export const setPushConfig = Effect.fn("setPushConfig")(function*(
  input: PushConfigInput & { readonly webhookUrl: string; readonly webhookToken?: string | undefined }
) {
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  const url = yield* webhookUrl(input.webhookUrl)
  const config = yield* client.createPushConfig(target, {
    taskId: input.taskId,
    url,
    ...(input.webhookToken === undefined ? {} : { token: input.webhookToken })
  }).pipe(reportMissingTask(target, input.taskId))
  return pushConfigView(config)
})

export const getPushConfig = Effect.fn("getPushConfig")(function*(
  input: PushConfigInput & { readonly configId?: string | undefined }
) {
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  if (input.configId !== undefined) {
    const { result: config } = yield* retryWithRenewedToken(
      target,
      (target) => client.getPushConfig(target, { taskId: input.taskId, id: input.configId! })
    ).pipe(
      Effect.catchTag("ProtocolError", configNotFound(target.agentUrl, input.taskId, input.configId))
    )
    return pushConfigView(config)
  }
  // Without an id, the task's newest config: agents list them in the order they were set.
  const { result: configs } = yield* retryWithRenewedToken(
    target,
    (target) => client.listPushConfigs(target, { taskId: input.taskId }).pipe(reportMissingTask(target, input.taskId))
  )
  const newest = configs.at(-1)
  if (newest === undefined) {
    return yield* new NotFound({
      what: `A push notification config of task ${input.taskId}`,
      suggestion: "Set a push notification config for the task first, or send the message with a push URL"
    })
  }
  return pushConfigView(newest)
})

export const listPushConfigs = Effect.fn("listPushConfigs")(function*(input: PushConfigInput) {
  const client = yield* A2aClient
  const { result: configs } = yield* withAgentTarget(
    input,
    (target) => client.listPushConfigs(target, { taskId: input.taskId }).pipe(reportMissingTask(target, input.taskId))
  )
  return { count: configs.length, configs: configs.map(pushConfigView) }
})

export const deletePushConfig = Effect.fn("deletePushConfig")(function*(
  input: PushConfigInput & { readonly configId: string }
) {
  const client = yield* A2aClient
  const target = yield* resolveTarget(input)
  yield* client.deletePushConfig(target, { taskId: input.taskId, id: input.configId }).pipe(
    Effect.catchTag("ProtocolError", configNotFound(target.agentUrl, input.taskId, input.configId))
  )
  return { task_id: input.taskId, config_id: input.configId, deleted: true }
})

/**
 * Agents answer a missing config with TaskNotFound too (the task exists, its config does not),
 * so the error names both and points at the configs the task has.
 */
const configNotFound =
  (agentUrl: string, taskId: string, configId: string) => (error: ProtocolError): Effect.Effect<never, ProtocolError | NotFound> =>
    isTaskNotFound(error)
      ? Effect.fail(
        new NotFound({
          what: `Push notification config ${configId} of task ${taskId}`,
          suggestion: [
            "The config (or the task) does not exist; ",
            act("ListPushConfigs", { agentUrl, taskId }),
            " lists the task's configs."
          ]
        })
      )
      : Effect.fail(error)
