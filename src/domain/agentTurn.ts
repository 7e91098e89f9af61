/**
 * One turn of a task of the local agent, as its model takes it: the model emits outputs (pieces
 * of the answer, other artifacts) as they are ready and returns how the turn ends. The task
 * runner (programs/agent/turns) turns outputs into artifact updates and the outcome into the
 * task's state. Text models only emit the answer and complete; the built-in models answer
 * files and data with parts of their own, and the test model (`-m mock`) uses the rest.
 */
import { Effect, Stream } from "effect"
import type * as V1 from "../a2a/v1.js"

/** A piece of the answer (the "answer" artifact); `lastChunk` closes it. */
export interface AnswerText {
  readonly _tag: "AnswerText"
  readonly text: string
  readonly lastChunk: boolean
}

/** Parts of the answer that are not text deltas (files, data, whole texts), in order; `lastChunk` closes it. */
export interface AnswerParts {
  readonly _tag: "AnswerParts"
  readonly parts: ReadonlyArray<V1.Part>
  readonly lastChunk: boolean
}

/** A chunk of an artifact of the model's own, as an artifact update carries it. */
export interface ArtifactChunk {
  readonly _tag: "ArtifactChunk"
  readonly artifact: V1.Artifact
  readonly append: boolean
  readonly lastChunk: boolean
}

export type TurnOutput = AnswerText | AnswerParts | ArtifactChunk

/** The states a model can end a turn in (canceling is the client's doing). */
export type TurnEndState = Extract<
  V1.TaskState,
  "TASK_STATE_COMPLETED" | "TASK_STATE_INPUT_REQUIRED" | "TASK_STATE_AUTH_REQUIRED" | "TASK_STATE_FAILED" | "TASK_STATE_REJECTED"
>

/** How a turn ends, with the agent's words for the status message (a question, a reason), if any. */
export interface TurnOutcome {
  readonly state: TurnEndState
  readonly message?: string | undefined
}

/** What a turn is given besides its prompt. */
export interface TurnIo {
  /** The caller streams: emit the answer as deltas rather than whole. */
  readonly streaming: boolean
  /** The parts of the message the turn answers, as the user sent them (the prompt has them as the model reads them). */
  readonly parts: ReadonlyArray<V1.Part>
  /** Publishes one output at once (subscribers see it before the turn ends); what it returns is of no use to the model. */
  readonly emit: (output: TurnOutput) => Effect.Effect<unknown>
}

export const answerText = (text: string, lastChunk: boolean): AnswerText => ({ _tag: "AnswerText", text, lastChunk })

export const answerParts = (parts: ReadonlyArray<V1.Part>, lastChunk: boolean): AnswerParts => ({
  _tag: "AnswerParts",
  parts,
  lastChunk
})

export const artifactChunk = (
  artifact: V1.Artifact,
  flags: { readonly append: boolean; readonly lastChunk: boolean }
): ArtifactChunk => ({ _tag: "ArtifactChunk", artifact, ...flags })

export const completed: TurnOutcome = { state: "TASK_STATE_COMPLETED" }

export const endTurn = (state: TurnEndState, message?: string): TurnOutcome => message === undefined ? { state } : { state, message }

/**
 * The media types a model takes and gives (the card's defaultInputModes and defaultOutputModes).
 * The wildcard type (any/any, written with stars) stands for every other type, which the
 * built-in models take as it is.
 */
export interface ModelModes {
  readonly input: ReadonlyArray<string>
  readonly output: ReadonlyArray<string>
}

/** What a text model offers: the whole answer, or its deltas in order. */
export interface TextAnswers<E, Prompt> {
  readonly generate: (prompt: Prompt) => Effect.Effect<string, E>
  readonly stream: (prompt: Prompt) => Stream.Stream<string, E>
}

/**
 * The turn of a text model: the answer whole (one closing chunk), or as deltas followed by an
 * empty closing chunk when streaming (its length is unknown until then); then it completes.
 */
export const textTurn = <E, Prompt>(model: TextAnswers<E, Prompt>) => (prompt: Prompt, io: TurnIo): Effect.Effect<TurnOutcome, E> =>
  io.streaming
    ? Stream.runForEach(model.stream(prompt), (delta) => io.emit(answerText(delta, false))).pipe(
      Effect.zipRight(io.emit(answerText("", true))),
      Effect.as(completed)
    )
    : Effect.flatMap(model.generate(prompt), (text) => Effect.as(io.emit(answerText(text, true)), completed))
