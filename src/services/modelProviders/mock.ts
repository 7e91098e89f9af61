/**
 * The `mock` model (`relay server agent -m mock`): a scriptable test agent for people who test
 * A2A clients, and for relay's own tests. The text of the newest user message picks a scenario
 * (SCENARIOS: input-required, auth-required, fail, reject, a stream of chunks, a large artifact,
 * a data part, a file part, an image); anything else is echoed, as by the echo model (files and
 * data included). It needs no model
 * server. Each scenario is one turn: a follow-up (to an interrupted task, or queued while it
 * works) is read the same way.
 */
import type * as Prompt from "@effect/ai/Prompt"
import { Duration, Effect } from "effect"
import { isTextPart } from "../../a2a/parts.js"
import type * as V1 from "../../a2a/v1.js"
import { answerText, artifactChunk, completed, endTurn, type ModelModes, type TurnIo, type TurnOutcome } from "../../domain/agentTurn.js"
import { randomId } from "../../domain/ids.js"
import { parseByteSize, parseDuration } from "../../domain/units.js"
import * as EchoModel from "./echo.js"

/** Most chunks `stream N` sends. */
export const MAX_STREAM_CHUNKS = 10_000
/** Longest a `stream` scenario may take in all (chunks × pace): a message must not hold a worker for days. */
export const MAX_STREAM_DURATION = Duration.minutes(10)
/** Largest artifact `large SIZE` makes: above relay's own 10 MB read limit, so clients' limits can be tried. */
export const MAX_LARGE_BYTES = 32 * 1024 ** 2
const DEFAULT_STREAM_PACE = Duration.millis(100)
const DEFAULT_LARGE_BYTES = 1024 ** 2

/** Each scenario: a message that triggers it and what the agent then does (the card's examples, `help`). */
export const SCENARIOS: ReadonlyArray<{ readonly send: string; readonly does: string }> = [
  { send: "input-required", does: "asks a question (input-required); the next message with the task's id continues it" },
  { send: "auth-required", does: "asks to authenticate (auth-required, simulated); the next message with the task's id continues it" },
  { send: "fail: disk full", does: "fails the task (failed) with that reason" },
  { send: "reject: not my job", does: "rejects the task (rejected) with that reason" },
  {
    send: "stream 50 every 20ms",
    does: "sends 50 chunks of one artifact, 20 ms apart (default pace 100ms; at most 10000 chunks and 10 minutes)"
  },
  { send: "large 1MB", does: "answers with one text artifact of exactly that size (B, KB, MB; at most 32MB)" },
  { send: "data", does: "answers with an artifact holding a data part (JSON)" },
  { send: "file", does: "answers with an artifact holding a file part (bytes of hello.txt, text/plain)" },
  { send: "image", does: "answers with an artifact holding an image (bytes of relay.png, image/png, 16×16)" },
  { send: "help", does: "lists these scenarios" },
  { send: "Hello!", does: "anything else is echoed back (files and data parts as they came), then the task completes" }
]

const helpText = [
  "relay's mock agent: the message text picks what the task does.",
  ...SCENARIOS.map((scenario) => `- ${scenario.send}: ${scenario.does}`),
  "With --latency, every turn first stays working that long."
].join("\n")

/** What the mock takes (anything, echoed) and gives: text, data, its file and image, and echoes. */
export const mockModes: ModelModes = {
  input: ["text/plain", "application/json", "*/*"],
  output: ["text/plain", "application/json", "image/png", "*/*"]
}

/** The card's skill of the mock model: its scenarios as examples. */
export const mockSkill: V1.AgentSkill = {
  id: "test-scenarios",
  name: "Test scenarios",
  description: "A scriptable test agent: the message text picks the task's course. " +
    SCENARIOS.map((scenario) => `"${scenario.send}" ${scenario.does}.`).join(" "),
  tags: ["testing", "mock", "scenarios"],
  examples: SCENARIOS.map((scenario) => scenario.send),
  inputModes: mockModes.input,
  outputModes: mockModes.output
}

type Scenario =
  | { readonly _tag: "Echo" }
  | { readonly _tag: "Help" }
  | { readonly _tag: "End"; readonly outcome: TurnOutcome }
  | { readonly _tag: "Stream"; readonly chunks: number; readonly every: Duration.Duration }
  | { readonly _tag: "Large"; readonly bytes: number }
  | { readonly _tag: "Data" }
  | { readonly _tag: "File" }
  | { readonly _tag: "Image" }

const INPUT_QUESTION = "The mock agent needs more input: send any message with this task's id to continue."
const AUTH_REQUEST = "The mock agent asks you to authenticate (simulated: nothing is checked); " +
  "send any message with this task's id to continue."

/** The agent declines a scenario written wrongly, saying how to write it. */
const refused = (reason: string) => ({ _tag: "End" as const, outcome: endTurn("TASK_STATE_REJECTED", reason) })

// A command is a keyword and numbers; "stream of consciousness" or "large numbers" are echoed.
const STREAM = /^stream\s+(\d+)(?:\s+every\s+(\S+))?$/
const LARGE = /^large(?:\s+(\d\S*))?$/
const ENDING = /^(fail|failed|reject|rejected)(?::\s*(.*))?$/is

const streamScenario = (match: RegExpExecArray): Scenario => {
  const chunks = Number(match[1])
  const every = match[2] === undefined ? DEFAULT_STREAM_PACE : parseDuration(match[2])
  if (!Number.isSafeInteger(chunks) || chunks < 1 || chunks > MAX_STREAM_CHUNKS) {
    return refused(`stream takes 1 to ${MAX_STREAM_CHUNKS} chunks, e.g. "stream 50 every 20ms"`)
  }
  if (every === undefined) return refused(`"${match[2]}" is not a pace; write it like 20ms, 1s or 1.5s`)
  if (Duration.greaterThan(Duration.times(every, chunks), MAX_STREAM_DURATION)) {
    return refused(`stream takes at most ${Duration.format(MAX_STREAM_DURATION)} in all (chunks × pace), e.g. "stream 50 every 20ms"`)
  }
  return { _tag: "Stream", chunks, every }
}

const largeScenario = (size: string | undefined): Scenario => {
  const bytes = size === undefined ? DEFAULT_LARGE_BYTES : parseByteSize(size)
  if (bytes === undefined || bytes < 1 || bytes > MAX_LARGE_BYTES) {
    return refused(`large takes a size from 1B to 32MB, e.g. "large 1MB" or "large 200KB"`)
  }
  return { _tag: "Large", bytes }
}

const endingScenario = (match: RegExpExecArray): Scenario => {
  const fails = match[1]!.toLowerCase().startsWith("fail")
  const reason = match[2]?.trim() || (fails ? "the mock agent was asked to fail" : "the mock agent was asked to reject the task")
  return { _tag: "End", outcome: endTurn(fails ? "TASK_STATE_FAILED" : "TASK_STATE_REJECTED", reason) }
}

/** Reads the scenario a message asks for (case and surrounding blanks do not matter). */
export const parseScenario = (text: string): Scenario => {
  const command = text.trim()
  const lower = command.toLowerCase()
  if (lower === "input-required") return { _tag: "End", outcome: endTurn("TASK_STATE_INPUT_REQUIRED", INPUT_QUESTION) }
  if (lower === "auth-required") return { _tag: "End", outcome: endTurn("TASK_STATE_AUTH_REQUIRED", AUTH_REQUEST) }
  if (lower === "help") return { _tag: "Help" }
  if (lower === "data") return { _tag: "Data" }
  if (lower === "file") return { _tag: "File" }
  if (lower === "image") return { _tag: "Image" }
  const large = LARGE.exec(lower)
  if (large !== null) return largeScenario(large[1])
  const stream = STREAM.exec(lower)
  if (stream !== null) return streamScenario(stream)
  // Matched on the original text: the reason keeps the sender's case.
  const ending = ENDING.exec(command)
  if (ending !== null) return endingScenario(ending)
  return { _tag: "Echo" }
}

const whole = { append: false, lastChunk: true }

const oneArtifact = (io: TurnIo, name: string, part: V1.Part) =>
  Effect.as(io.emit(artifactChunk({ artifactId: randomId(), name, parts: [part] }, whole)), completed)

const FILLER = "relay mock agent: filler of a large artifact.\n"

/** Exactly `bytes` bytes of ASCII text. */
export const fillerText = (bytes: number) => FILLER.repeat(Math.ceil(bytes / FILLER.length)).slice(0, bytes)

export const FILE_TEXT = "Hello from relay's mock agent.\n"

/** The `image` scenario's picture: a 16×16 PNG gradient, small enough to keep in the source. */
export const IMAGE_PNG_BASE64 =
  "iVBORw0KGgoAAAANSUhEUgAAABAAAAAQCAIAAACQkWg2AAABmklEQVR42g3R0QBAIQxA0SEMIYQhhBDCEIYQwhBCCKHP+xnCEEJ47ygcEUGFJpjQhSG4EMIUUljCFo5whRKeIKKo0hRTujIUV0KZSipL2cpRrlLKU0Qa2mgNa/TGaHgjGrORjdXYjdO4jWq8hoihRjPM6MYw3AhjGmksYxvHuEYZzxDpaKd1rNM7o+Od6MxOdlZnd07ndqrzOiIDHbSBDfpgDHwQgznIwRrswRncQQ3eQMRRpznmdGc47oQznXSWs53jXKec54gEGrTAgh6MwIMIZpDBCnZwghtU8AKRiU7axCZ9MiY+icmc5GRN9uRM7qQmb/4PiSYtsaQnI/EkkplkspKdnOQmlbz8Hxa6aAtb9MVY+CIWc5GLtdiLs7iLWrz1P2x00za26Zux8U1s5iY3a7M3Z3M3tXn7fzjooR3s0A/j4Ic4zEMe1mEfzuEe6vDO/3DRS7vYpV/GxS9xmZe8rMu+nMu91OXd/6HQohVW9GIUXkQxiyxWsYtT3KKKV//DQx/tYY/+GA9/xGM+8rEe+3Ee91GP9/gAhnS4EJKCaJ4AAAAASUVORK5CYII="

const streamChunks = (io: TurnIo, chunks: number, every: Duration.Duration) =>
  Effect.gen(function*() {
    const artifactId = randomId()
    const pause = Duration.toMillis(every) > 0 ? Effect.sleep(every) : Effect.void
    for (let index = 1; index <= chunks; index++) {
      if (index > 1) yield* pause
      const chunk = { artifactId, name: "stream", parts: [{ text: `chunk ${index} of ${chunks}\n` }] }
      yield* io.emit(artifactChunk(chunk, { append: index > 1, lastChunk: index === chunks }))
    }
    return completed
  })

export interface MockOptions extends EchoModel.EchoOptions {}

/** The text of the message a turn answers: what picks its scenario. */
const messageText = (parts: ReadonlyArray<V1.Part>) => parts.flatMap((part) => isTextPart(part) ? [part.text] : []).join("\n")

/** The mock model: echo's answers, and turns steered by the message. */
export const make = (options: MockOptions = {}) => {
  const echo = EchoModel.make(options)
  const turn = (prompt: Prompt.RawInput, io: TurnIo): Effect.Effect<TurnOutcome> => {
    const scenario = parseScenario(messageText(io.parts))
    switch (scenario._tag) {
      case "Echo":
        return echo.turn(prompt, io)
      case "Help":
        return Effect.as(io.emit(answerText(helpText, true)), completed)
      case "End":
        return Effect.succeed(scenario.outcome)
      case "Stream":
        return streamChunks(io, scenario.chunks, scenario.every)
      case "Large":
        return oneArtifact(io, "large", { text: fillerText(scenario.bytes), mediaType: "text/plain" })
      case "Data":
        return oneArtifact(io, "data", {
          data: { scenario: "data", from: "relay mock agent", numbers: [1, 2, 3], nested: { ok: true, nothing: null } },
          mediaType: "application/json"
        })
      case "File":
        return oneArtifact(io, "file", {
          raw: Buffer.from(FILE_TEXT, "utf8").toString("base64"),
          filename: "hello.txt",
          mediaType: "text/plain"
        })
      case "Image":
        return oneArtifact(io, "image", { raw: IMAGE_PNG_BASE64, filename: "relay.png", mediaType: "image/png" })
    }
  }
  return { ...echo, turn, modes: mockModes, skills: [mockSkill] }
}
