// The mock model's steering: which message picks which scenario, how badly written ones are
// refused, the units they are written in, and its turns through ModelAccess.
import { describe, expect, it } from "@effect/vitest"
import { Duration, Effect, Either } from "effect"
import type { TurnOutput } from "../../src/domain/agentTurn.js"
import { parseByteSize, parseDuration } from "../../src/domain/units.js"
import { mockSpec, ModelAccess, parseModelSpec } from "../../src/services/ModelAccess.js"
import { fillerText, MAX_LARGE_BYTES, parseScenario } from "../../src/services/modelProviders/mock.js"

describe("units", () => {
  it("reads durations in ms, s and m, and a bare 0", () => {
    expect(["20ms", "2s", "1.5s", "1m", "0", " 250 ms "].map((text) => Duration.toMillis(parseDuration(text)!))).toEqual([
      20,
      2000,
      1500,
      60_000,
      0,
      250
    ])
    for (const bad of ["", "soon", "2", "2h", "-1s", "1e3ms"]) expect(parseDuration(bad)).toBeUndefined()
  })

  it("reads sizes in B, KB and MB (1024-based)", () => {
    expect(["512", "512B", "64KB", "1MB", "1.5kb", "2MiB"].map(parseByteSize)).toEqual([512, 512, 65_536, 1_048_576, 1536, 2_097_152])
    for (const bad of ["", "big", "1GB", "-5KB"]) expect(parseByteSize(bad)).toBeUndefined()
  })
})

describe("the mock model's scenarios", () => {
  it("is chosen with --model mock, which takes no name", () => {
    expect(parseModelSpec("mock")).toEqual(Either.right(mockSpec))
    const named = parseModelSpec("mock:big")
    expect(Either.isLeft(named) && named.left.reason).toBe("mock takes no model name")
  })

  it("reads each scenario, whatever the case and surrounding blanks", () => {
    expect(parseScenario(" Input-Required ")).toMatchObject({ _tag: "End", outcome: { state: "TASK_STATE_INPUT_REQUIRED" } })
    expect(parseScenario("auth-required")).toMatchObject({ _tag: "End", outcome: { state: "TASK_STATE_AUTH_REQUIRED" } })
    expect(parseScenario("FAIL: Disk Full")).toEqual({ _tag: "End", outcome: { state: "TASK_STATE_FAILED", message: "Disk Full" } })
    expect(parseScenario("failed")).toMatchObject({
      _tag: "End",
      outcome: { state: "TASK_STATE_FAILED", message: "the mock agent was asked to fail" }
    })
    expect(parseScenario("reject: no")).toEqual({ _tag: "End", outcome: { state: "TASK_STATE_REJECTED", message: "no" } })
    expect(parseScenario("stream 50 every 20ms")).toEqual({ _tag: "Stream", chunks: 50, every: Duration.millis(20) })
    expect(parseScenario("stream 3")).toEqual({ _tag: "Stream", chunks: 3, every: Duration.millis(100) })
    expect(parseScenario("large 2KB")).toEqual({ _tag: "Large", bytes: 2048 })
    expect(parseScenario("large")).toEqual({ _tag: "Large", bytes: 1_048_576 })
    expect(parseScenario("data")).toEqual({ _tag: "Data" })
    expect(parseScenario("FILE")).toEqual({ _tag: "File" })
    expect(parseScenario("help")).toEqual({ _tag: "Help" })
    for (const echoed of ["hello", "failure is not an option", "streams of data", "large numbers"]) {
      expect(parseScenario(echoed)).toEqual({ _tag: "Echo" })
    }
  })

  it("rejects a scenario written wrongly, saying how to write it", () => {
    const refusal = (text: string) => {
      const scenario = parseScenario(text)
      return scenario._tag === "End" && scenario.outcome.state === "TASK_STATE_REJECTED" ? scenario.outcome.message : undefined
    }
    expect(refusal("stream 0")).toContain("stream takes 1 to 10000 chunks")
    expect(refusal("stream 10001")).toContain("stream takes 1 to 10000 chunks")
    expect(refusal("stream 5 every soon")).toContain(`"soon" is not a pace`)
    expect(refusal("stream 10000 every 1m")).toContain("stream takes at most 10m in all")
    expect(refusal("stream 2 every 301s")).toContain("stream takes at most 10m in all")
    expect(refusal("large 33MB")).toContain("large takes a size from 1B to 32MB")
    expect(refusal("large 0")).toContain("large takes a size")
    expect(refusal("large 5GB")).toContain("large takes a size")
  })

  it("makes filler text of exactly the size asked for", () => {
    expect(fillerText(1).length).toBe(1)
    expect(Buffer.byteLength(fillerText(MAX_LARGE_BYTES))).toBe(MAX_LARGE_BYTES)
  })

  it.effect("takes turns through ModelAccess: outputs as they come, then how the turn ends", () =>
    Effect.gen(function*() {
      const model = yield* ModelAccess
      expect(model.skills?.[0]?.examples).toContain("input-required")
      const play = (text: string, streaming: boolean) =>
        Effect.gen(function*() {
          const outputs: Array<TurnOutput> = []
          const emit = (output: TurnOutput) => Effect.sync(() => void outputs.push(output))
          const outcome = yield* model.turn(text, { streaming, parts: [{ text }], emit })
          return { outputs, outcome }
        })
      const echoed = yield* play("two words", true)
      expect(echoed.outputs.map((output) => output._tag === "AnswerText" && [output.text, output.lastChunk])).toEqual([
        ["two ", false],
        ["words", false],
        ["", true]
      ])
      expect(echoed.outcome).toEqual({ state: "TASK_STATE_COMPLETED" })
      const whole = yield* play("two words", false)
      expect(whole.outputs).toEqual([{ _tag: "AnswerText", text: "two words", lastChunk: true }])
      const streamed = yield* play("stream 3 every 0ms", false)
      expect(streamed.outputs.map((output) => output._tag === "ArtifactChunk" && [output.append, output.lastChunk])).toEqual([
        [false, false],
        [true, false],
        [true, true]
      ])
      const asked = yield* play("input-required", false)
      expect([asked.outputs, asked.outcome.state]).toEqual([[], "TASK_STATE_INPUT_REQUIRED"])
      const help = yield* play("help", true)
      expect(help.outputs[0]?._tag === "AnswerText" && help.outputs[0].text).toContain("stream 50 every 20ms")
    }).pipe(Effect.provide(ModelAccess.builtIn("mock", "a test", { echoDelay: 0 }))))
})
