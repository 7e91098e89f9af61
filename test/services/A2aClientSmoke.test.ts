import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Stream } from "effect"
import { describe, expect, it } from "vitest"
import { A2aClient, A2aClientLive } from "../../src/services/A2aClient.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"
import { startLegacyAgent } from "../peers/legacyCardStub.js"

const run = <A, E>(effect: Effect.Effect<A, E, A2aClient>) =>
  Effect.runPromise(effect.pipe(Effect.provide(A2aClientLive), Effect.provide(NodeHttpClient.layerUndici)))

const message = (text: string) => ({ message: { messageId: crypto.randomUUID(), role: "ROLE_USER" as const, parts: [{ text }] } })

describe("smoke", () => {
  it("v1 jsonrpc, rest, v0.3, legacy", async () => {
    const v1 = await startSdkAgent()
    const rest = await startSdkAgent({ bindings: ["HTTP+JSON"] })
    const v03 = await startV03Agent()
    const legacy = await startLegacyAgent()
    try {
      for (const agent of [v1, rest, v03, legacy]) {
        const result = await run(Effect.gen(function*() {
          const client = yield* A2aClient
          return yield* client.send({ agentUrl: agent.baseUrl }, message("hello"))
        }))
        expect(JSON.stringify(result)).toContain("echo: hello")
      }
      for (const agent of [v1, rest, v03]) {
        const events = await run(Effect.gen(function*() {
          const client = yield* A2aClient
          return yield* Stream.runCollect(client.stream({ agentUrl: agent.baseUrl }, message("behaviour:chunked-artifact hi there")))
        }))
        expect(events.length).toBeGreaterThan(2)
      }
    } finally {
      await Promise.all([v1.close(), rest.close(), v03.close(), legacy.close()])
    }
  })
})
