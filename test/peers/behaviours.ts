// Scripted agent behaviours shared by the v1.0 and v0.3 test peers.
//
// A behaviour is written against a protocol-neutral emitter; each peer adapts the
// emitted events to its SDK's shapes (ts-proto for 1.3.0, `kind` objects for 0.3.14).
// One running peer can serve several tests: a user text starting with
// `behaviour:<name>` selects that behaviour for the message (and for the follow-up
// turns of the task it starts); otherwise the peer's default behaviour is used.

import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"

export const BEHAVIOUR_NAMES = [
  "echo-complete",
  "message-only",
  "input-required",
  "auth-required",
  "slow-cancellable",
  "chunked-artifact",
  "fail",
  "data-and-file",
  "republish-then-answer",
  "ask-twice",
  "chunks-and-parts",
  "chunks-then-whole",
  "files-and-data",
  "echo-secret"
] as const

export type BehaviourName = (typeof BEHAVIOUR_NAMES)[number]

export const isBehaviourName = (value: string): value is BehaviourName => (BEHAVIOUR_NAMES as ReadonlyArray<string>).includes(value)

/** Task states in protocol-neutral (v0.3) spelling; peers map them to their enum. */
export type NeutralTaskState =
  | "submitted"
  | "working"
  | "input-required"
  | "auth-required"
  | "completed"
  | "failed"
  | "canceled"
  | "rejected"

/** Terminal or interrupted: a v0.3 status-update in one of these states carries `final: true`. */
export const endsInteraction = (state: NeutralTaskState): boolean => state !== "submitted" && state !== "working"

export type NeutralPart =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "data"; readonly data: Readonly<Record<string, unknown>> }
  | { readonly kind: "file"; readonly name: string; readonly mimeType: string; readonly bytesBase64: string }
  | { readonly kind: "file-url"; readonly name: string; readonly mimeType: string; readonly url: string }

export interface NeutralArtifact {
  readonly artifactId: string
  readonly name: string
  readonly parts: ReadonlyArray<NeutralPart>
}

export interface ChunkFlags {
  readonly append: boolean
  readonly lastChunk: boolean
}

/** What a behaviour can publish. The first call of every turn must be `task` or `message`. */
export interface BehaviourEmitter {
  /** Publish the task itself: a fresh task on the first turn, the existing one on follow-ups. */
  task(state: NeutralTaskState): void
  /**
   * Publish the existing task exactly as stored, still waiting for input: what the SDKs'
   * sample executors do first when a follow-up turn starts.
   */
  republish(): void
  status(state: NeutralTaskState, agentText?: string): void
  artifact(artifact: NeutralArtifact, flags: ChunkFlags): void
  /** A direct agent reply with no task. */
  message(agentText: string): void
}

/** The user's side of one turn, as the behaviour sees it. */
export interface BehaviourTurn {
  /** User text of this message with any `behaviour:<name>` directive removed. */
  readonly text: string
  /** User texts of the earlier messages of the same task (directives removed), oldest first. */
  readonly earlierUserTexts: ReadonlyArray<string>
  /** True when the message continues an existing task (same taskId). */
  readonly isFollowUp: boolean
  /** True once the client asked to cancel this task (or the peer is shutting down). */
  isCancelled(): boolean
  /** The peer's own base URL (no trailing slash), for the files it serves by URL. */
  readonly agentBaseUrl: string
  /** The bearer token or API key the request carried (the v1.0 peer only). */
  readonly presentedSecret: string | undefined
}

export type Behaviour = (turn: BehaviourTurn, emit: BehaviourEmitter) => Promise<void>

/** How long `slow-cancellable` works before completing, and how often it checks for cancellation. */
export const SLOW_TASK_MS = 3000
export const SLOW_TASK_STEP_MS = 50
/** Delay between the chunks of `chunked-artifact`. */
export const CHUNK_DELAY_MS = 30

export const INPUT_REQUIRED_QUESTION = "What else should I add? Reply on the same task."
export const AUTH_REQUIRED_TEXT = "Authorization required: sign in, then send a follow-up message on this task."
export const CANCELED_TEXT = "Task canceled on request."

export const SECOND_QUESTION = "Which date?"
/** How long a republishing agent "thinks" before it answers a follow-up. */
export const REPUBLISH_THINK_MS = 300

export const echoText = (text: string): string => `echo: ${text}`
/** Artifact text `input-required` completes with: all user texts of the task, oldest first. */
export const combinedText = (texts: ReadonlyArray<string>): string => `echo: ${texts.join(" + ")}`
/** The texts `chunked-artifact` sends, one per chunk (append after the first, lastChunk on the last). */
export const chunkTexts = (text: string): ReadonlyArray<string> => ["chunk 1: echo", `chunk 2: ${text}`, "chunk 3: done"]
export const failureReason = (text: string): string => `Scripted failure while handling "${text}".`
/** The data part `data-and-file` returns. */
export const dataPartFor = (text: string): Readonly<Record<string, unknown>> => ({ echoed: text, length: text.length })
export const FILE_PART_NAME = "echo.txt"
export const FILE_PART_MIME = "text/plain"

/**
 * What `files-and-data` answers, as an image-generating, report-building agent does: a picture
 * as inline bytes, a report by URL (served by the peer itself at REPORT_PATH) and a data part.
 */
export const PEER_IMAGE = { name: "chart.png", mimeType: "image/png", bytesBase64: IMAGE_PNG_BASE64 } as const
export const REPORT_PATH = "/files/report.pdf"
export const REPORT = { name: "report.pdf", mimeType: "application/pdf", bytes: Buffer.from("%PDF-1.4\n% a test report\n%%EOF\n") } as const
export const PEER_DATA = { region: "north", sales: [1200, 1350.5], complete: true, notes: null } as const
export const FILES_AND_DATA_TEXT = "Here are the chart, the report and the figures."

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

const textArtifact = (artifactId: string, text: string): NeutralArtifact => ({
  artifactId,
  name: artifactId,
  parts: [{ kind: "text", text }]
})

const WHOLE: ChunkFlags = { append: false, lastChunk: true }

/** Open the turn: a fresh task starts SUBMITTED, a continued one goes straight to WORKING. */
const openTask = (turn: BehaviourTurn, emit: BehaviourEmitter): void => {
  if (turn.isFollowUp) {
    emit.task("working")
  } else {
    emit.task("submitted")
    emit.status("working")
  }
}

const completeWithEcho = (text: string, emit: BehaviourEmitter): void => {
  emit.artifact(textArtifact("echo", echoText(text)), WHOLE)
  emit.status("completed")
}

const echoComplete: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  completeWithEcho(turn.text, emit)
}

const messageOnly: Behaviour = async (turn, emit) => {
  emit.message(echoText(turn.text))
}

/** The first turn of a task that needs the user: it parks in `state` with `text`. True when it did. */
const parkFirstTurn = (turn: BehaviourTurn, emit: BehaviourEmitter, state: NeutralTaskState, text: string): boolean => {
  if (turn.isFollowUp) return false
  emit.task("submitted")
  emit.status(state, text)
  return true
}

const inputRequired: Behaviour = async (turn, emit) => {
  if (parkFirstTurn(turn, emit, "input-required", INPUT_REQUIRED_QUESTION)) return
  emit.task("working")
  emit.artifact(textArtifact("combined", combinedText([...turn.earlierUserTexts, turn.text])), WHOLE)
  emit.status("completed")
}

// A follow-up on the parked task stands for "credentials provided" and completes it.
const authRequired: Behaviour = async (turn, emit) => {
  if (parkFirstTurn(turn, emit, "auth-required", AUTH_REQUIRED_TEXT)) return
  emit.task("working")
  completeWithEcho(turn.text, emit)
}

const slowCancellable: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  for (let waited = 0; waited < SLOW_TASK_MS; waited += SLOW_TASK_STEP_MS) {
    if (turn.isCancelled()) {
      emit.status("canceled", CANCELED_TEXT)
      return
    }
    await sleep(SLOW_TASK_STEP_MS)
  }
  if (turn.isCancelled()) {
    emit.status("canceled", CANCELED_TEXT)
    return
  }
  completeWithEcho(turn.text, emit)
}

const chunkedArtifact: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  const chunks = chunkTexts(turn.text)
  for (const [index, chunk] of chunks.entries()) {
    await sleep(CHUNK_DELAY_MS)
    emit.artifact(textArtifact("chunked", chunk), { append: index > 0, lastChunk: index === chunks.length - 1 })
  }
  emit.status("completed")
}

const fail: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  emit.status("failed", failureReason(turn.text))
}

const dataAndFile: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  emit.artifact(
    {
      artifactId: "mixed",
      name: "mixed",
      parts: [
        { kind: "text", text: echoText(turn.text) },
        { kind: "data", data: dataPartFor(turn.text) },
        {
          kind: "file",
          name: FILE_PART_NAME,
          mimeType: FILE_PART_MIME,
          bytesBase64: Buffer.from(turn.text, "utf8").toString("base64")
        }
      ]
    },
    WHOLE
  )
  emit.status("completed")
}

/** What SDK executors do when a follow-up turn starts: publish the task as it was, then work. */
const republishAndThink = async (emit: BehaviourEmitter) => {
  emit.republish()
  await sleep(REPUBLISH_THINK_MS)
}

/** Like input-required, but a follow-up first re-publishes the waiting task, then thinks, then answers. */
const republishThenAnswer: Behaviour = async (turn, emit) => {
  if (parkFirstTurn(turn, emit, "input-required", INPUT_REQUIRED_QUESTION)) return
  await republishAndThink(emit)
  emit.status("working")
  emit.artifact(textArtifact("combined", combinedText([...turn.earlierUserTexts, turn.text])), WHOLE)
  emit.status("completed")
}

/** Needs two inputs; each follow-up re-publishes the waiting task before it answers. */
const askTwice: Behaviour = async (turn, emit) => {
  if (parkFirstTurn(turn, emit, "input-required", INPUT_REQUIRED_QUESTION)) return
  await republishAndThink(emit)
  if (turn.earlierUserTexts.length < 2) {
    emit.status("input-required", SECOND_QUESTION)
    return
  }
  emit.artifact(textArtifact("combined", combinedText([...turn.earlierUserTexts, turn.text])), WHOLE)
  emit.status("completed")
}

// One artifact per part, as generating agents name what they made.
const filesAndData: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  emit.artifact({ artifactId: "chart", name: "chart", parts: [{ kind: "file", ...PEER_IMAGE }] }, WHOLE)
  const report = { kind: "file-url", name: REPORT.name, mimeType: REPORT.mimeType, url: `${turn.agentBaseUrl}${REPORT_PATH}` } as const
  emit.artifact({ artifactId: "report", name: "report", parts: [report] }, WHOLE)
  emit.artifact({ artifactId: "figures", name: "figures", parts: [{ kind: "data", data: PEER_DATA }] }, WHOLE)
  emit.status("completed", FILES_AND_DATA_TEXT)
}

/** What `echo-secret` answers: the secret its request carried, as careless agents echo their headers. */
export const secretEchoText = (secret: string | undefined): string => `you sent ${secret ?? "no secret"}`
export const secretEchoData = (secret: string | undefined): Readonly<Record<string, unknown>> => ({
  received: { credential: secret ?? null }
})

// The secret in the answer's text, a data part and the task's status message.
const echoSecret: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  const parts: ReadonlyArray<NeutralPart> = [
    { kind: "text", text: secretEchoText(turn.presentedSecret) },
    { kind: "data", data: secretEchoData(turn.presentedSecret) }
  ]
  emit.artifact({ artifactId: "echo", name: "echo", parts }, WHOLE)
  emit.status("completed", secretEchoText(turn.presentedSecret))
}

/** A streamed text artifact and a data artifact: the task every door must render alike. */
export const STREAMED_PIECES = ["alpha ", "beta ", "gamma"] as const
export const FACTS_DATA = { total: 3 } as const

const chunksAndParts: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  for (const [index, piece] of STREAMED_PIECES.entries()) {
    await sleep(CHUNK_DELAY_MS)
    emit.artifact(textArtifact("answer", piece), { append: index > 0, lastChunk: index === STREAMED_PIECES.length - 1 })
  }
  emit.artifact({ artifactId: "facts", name: "facts", parts: [{ kind: "data", data: FACTS_DATA }] }, WHOLE)
  emit.status("completed")
}

/**
 * Google ADK's way of streaming: the answer in `append` chunks (the first one too), then the whole
 * text again in one update without `append`, which replaces the artifact (A2A v0.3 §7.2.3). Here
 * the whole text lacks the newline the chunks ended with, so it is not a mere continuation.
 */
export const ADK_PIECES = ["alpha ", "beta ", "gamma\n"] as const
export const ADK_WHOLE = "alpha beta gamma"

const chunksThenWhole: Behaviour = async (turn, emit) => {
  openTask(turn, emit)
  for (const piece of ADK_PIECES) {
    await sleep(CHUNK_DELAY_MS)
    emit.artifact(textArtifact("answer", piece), { append: true, lastChunk: false })
  }
  await sleep(CHUNK_DELAY_MS)
  emit.artifact(textArtifact("answer", ADK_WHOLE), WHOLE)
  emit.status("completed")
}

export const behaviours: Readonly<Record<BehaviourName, Behaviour>> = {
  "echo-complete": echoComplete,
  "message-only": messageOnly,
  "input-required": inputRequired,
  "auth-required": authRequired,
  "slow-cancellable": slowCancellable,
  "chunked-artifact": chunkedArtifact,
  fail,
  "data-and-file": dataAndFile,
  "republish-then-answer": republishThenAnswer,
  "ask-twice": askTwice,
  "chunks-and-parts": chunksAndParts,
  "chunks-then-whole": chunksThenWhole,
  "files-and-data": filesAndData,
  "echo-secret": echoSecret
}

const DIRECTIVE = /^\s*behaviour:(\S+)\s*/

export interface ParsedDirective {
  /** The name after `behaviour:` (may be unknown), or undefined when there is no directive. */
  readonly name: string | undefined
  /** The text with the directive removed. */
  readonly rest: string
}

/** Split a leading `behaviour:<name>` directive off a user text. */
export const parseDirective = (text: string): ParsedDirective => {
  const match = DIRECTIVE.exec(text)
  return match === null ? { name: undefined, rest: text } : { name: match[1], rest: text.slice(match[0].length) }
}

/** Prefix a text with a directive, for tests: `withBehaviour("fail", "hi")` → `behaviour:fail hi`. */
export const withBehaviour = (name: BehaviourName, text: string): string => `behaviour:${name} ${text}`

// An unknown directive fails loudly instead of silently running the default behaviour.
const unknownBehaviour = (name: string): Behaviour => async (turn, emit) => {
  emit.task(turn.isFollowUp ? "working" : "submitted")
  emit.status("failed", `Unknown test behaviour "${name}". Known: ${BEHAVIOUR_NAMES.join(", ")}.`)
}

/**
 * Choose the behaviour for a turn: a directive on this message wins, then one on the first
 * user message of the task (so follow-ups keep the behaviour), then the peer's default.
 */
export const selectBehaviour = (
  currentText: string,
  firstTaskText: string | undefined,
  fallback: BehaviourName
): Behaviour => {
  const name = parseDirective(currentText).name ?? (firstTaskText === undefined ? undefined : parseDirective(firstTaskText).name)
  if (name === undefined) return behaviours[fallback]
  return isBehaviourName(name) ? behaviours[name] : unknownBehaviour(name)
}

/** The raw input a peer adapter extracts from its SDK's request context. */
export interface TurnInput {
  readonly taskId: string
  readonly text: string
  /** Raw texts of the task's earlier user messages (directives still in), oldest first. */
  readonly earlierUserTexts: ReadonlyArray<string>
  readonly isFollowUp: boolean
  readonly presentedSecret?: string | undefined
}

/**
 * Runs behaviours and tracks which tasks are running, so a cancel request can reach the
 * loop of a running `slow-cancellable` turn, and close() can stop every loop at once.
 */
export class BehaviourRunner {
  private readonly cancelled = new Set<string>()
  private readonly running = new Set<string>()
  private stopping = false

  constructor(
    private readonly fallback: BehaviourName,
    private readonly agentBaseUrl: string
  ) {}

  async run(input: TurnInput, emit: BehaviourEmitter): Promise<void> {
    const behaviour = selectBehaviour(input.text, input.earlierUserTexts[0], this.fallback)
    const turn: BehaviourTurn = {
      text: parseDirective(input.text).rest,
      earlierUserTexts: input.earlierUserTexts.map((text) => parseDirective(text).rest),
      isFollowUp: input.isFollowUp,
      isCancelled: () => this.stopping || this.cancelled.has(input.taskId),
      agentBaseUrl: this.agentBaseUrl,
      presentedSecret: input.presentedSecret
    }
    this.running.add(input.taskId)
    try {
      await behaviour(turn, emit)
    } finally {
      this.running.delete(input.taskId)
      this.cancelled.delete(input.taskId)
    }
  }

  /** Ask a running turn to cancel. False when nothing runs for the task (the caller must cancel it). */
  requestCancel(taskId: string): boolean {
    if (!this.running.has(taskId)) return false
    this.cancelled.add(taskId)
    return true
  }

  /** Make every running loop wind down (used by close()). */
  stopAll(): void {
    this.stopping = true
  }
}
