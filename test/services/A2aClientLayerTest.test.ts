/**
 * A2aClient.layerTest: a test stubs only the methods its program uses; any other method dies
 * with a defect naming it, whether it answers with an effect or a stream.
 */
import { describe, expect, it } from "@effect/vitest"
import { Cause, Effect, Exit, Option, Stream } from "effect"
import * as A2aClient from "../../src/services/A2aClient.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const target: A2aClient.Target = { agentUrl: agentUrlOf("http://agent.test") }
const task = { id: "t-1", contextId: "c-1", status: { state: "TASK_STATE_COMPLETED" as const } }

/** The message of the defect an exit died with. */
const defectMessage = (exit: Exit.Exit<unknown, unknown>) =>
  Exit.isFailure(exit) ? Option.getOrUndefined(Option.map(Cause.dieOption(exit.cause), (defect) => (defect as Error).message)) : undefined

describe("A2aClient.layerTest", () => {
  it.effect("answers with the stubbed methods", () =>
    Effect.gen(function*() {
      const client = yield* A2aClient.A2aClient
      expect(yield* client.getTask(target, { id: "t-1" })).toEqual(task)
    }).pipe(Effect.provide(A2aClient.layerTest({ getTask: () => Effect.succeed(task) }))))

  it.effect("an unstubbed method that answers with an effect dies naming itself", () =>
    Effect.gen(function*() {
      const client = yield* A2aClient.A2aClient
      const exit = yield* Effect.exit(client.cancelTask(target, { id: "t-1" }))
      expect(defectMessage(exit)).toBe("not stubbed: A2aClient.cancelTask")
    }).pipe(Effect.provide(A2aClient.layerTest({ getTask: () => Effect.succeed(task) }))))

  it.effect("an unstubbed method that answers with a stream dies naming itself when read", () =>
    Effect.gen(function*() {
      const client = yield* A2aClient.A2aClient
      const request = { message: { messageId: "m-1", role: "ROLE_USER" as const, parts: [{ text: "hi" }] } }
      const exit = yield* Effect.exit(Stream.runCollect(client.subscribe(target, { id: "t-1" })))
      expect(defectMessage(exit)).toBe("not stubbed: A2aClient.subscribe")
      expect(defectMessage(yield* Effect.exit(Stream.runCollect(client.stream(target, request))))).toBe("not stubbed: A2aClient.stream")
    }).pipe(Effect.provide(A2aClient.layerTest({}))))
})
