/** `relay message send|stream`: talk to an agent, continuing the saved conversation on request. */
import { Args, Command, Options } from "@effect/cli"
import { Duration, Effect, Option, Redacted } from "effect"
import { InvalidInput } from "../domain/errors.js"
import { MAX_AGENT_BODY_BYTES } from "../domain/limits.js"
import type { MessageResult } from "../domain/results.js"
import { outgoingParts, type PartSource } from "../programs/outgoingParts.js"
import { anyFile } from "../programs/readPermission.js"
import { sendMessage } from "../programs/sendMessage.js"
import { optional } from "./optional.js"
import {
  agentOptions,
  type AgentOptionValues,
  answerFileOptions,
  type AnswerFileValues,
  maxAnswerBytes,
  secretOption,
  wholeNumber,
  withAgentAccess,
  withAnswerFiles
} from "./options.js"
import { CommandFailed, EXIT_FAILURE, type OutputFlags, render } from "./output.js"
import { leavesTaskHandle, progressPrinter } from "./progress.js"
import { ClientServices } from "./services.js"
import { readStdin } from "./stdinInput.js"
import { failWhenCut, messageView } from "./views.js"

const text = Args.text({ name: "TEXT" }).pipe(
  Args.withDescription("The message to send; '-' (or none, with stdin not a terminal) reads it from stdin"),
  Args.repeated
)
const contextId = optional(Options.text("context-id"), "Send within this conversation context")
const taskId = optional(Options.text("task-id"), "Continue this task (one waiting for input)")
const continueSession = Options.boolean("continue").pipe(
  Options.withAlias("C"),
  Options.withDescription("Continue the saved conversation with this agent (its context, and its task while it waits for input)")
)
const pushUrl = optional(Options.text("push-url"), "Webhook that receives push notifications for the task")
const pushToken = optional(secretOption("push-token"), "Token the agent sends with each notification")
const stream = Options.boolean("stream").pipe(Options.withDescription("Stream the answer as it is produced"))
const file = Options.text("file").pipe(
  Options.withPseudoName("path"),
  Options.withDescription("Send this file's bytes as a file part, named after it, its media type from its extension; repeatable"),
  Options.repeated
)
const fileUrl = Options.text("file-url").pipe(
  Options.withPseudoName("url"),
  Options.withDescription("Send a file by reference: its URL, for the agent to fetch; repeatable"),
  Options.repeated
)
const data = optional(
  Options.text("data").pipe(Options.withPseudoName("json")),
  "Send a data part: a JSON value, or @FILE to read it from a file"
)
const maxRequestBytes = wholeNumber("max-request-bytes", "bytes", 1).pipe(
  Options.withDescription(
    `Largest request sent, files and data encoded (default ${MAX_AGENT_BODY_BYTES}, 10 MiB, relay's agent server's limit); a file past it is refused, nothing sent`
  ),
  Options.withDefault(MAX_AGENT_BODY_BYTES)
)
const wait = wholeNumber("wait", "seconds", 1, 7 * 24 * 3600).pipe(
  Options.withDescription(
    "Give up waiting after this many seconds in all, leaving the task running (default: until it finishes or needs input)"
  ),
  Options.optional
)

const messageOptions = {
  ...agentOptions,
  maxAnswerBytes,
  contextId,
  taskId,
  continueSession,
  pushUrl,
  pushToken,
  wait,
  file,
  fileUrl,
  data,
  maxRequestBytes,
  ...answerFileOptions,
  text
} as const

interface MessageValues extends AgentOptionValues, OutputFlags, AnswerFileValues {
  readonly contextId: Option.Option<string>
  readonly taskId: Option.Option<string>
  readonly continueSession: boolean
  readonly pushUrl: Option.Option<string>
  readonly pushToken: Option.Option<Redacted.Redacted<string>>
  readonly wait: Option.Option<number>
  readonly maxAnswerBytes: number
  readonly file: ReadonlyArray<string>
  readonly fileUrl: ReadonlyArray<string>
  readonly data: Option.Option<string>
  readonly maxRequestBytes: number
  readonly text: ReadonlyArray<string>
}

/** Options that cannot both be meant: an explicit context, and the saved one. */
const conflicting = (values: MessageValues): InvalidInput | undefined =>
  Option.isSome(values.contextId) && values.continueSession
    ? new InvalidInput({
      reason: "--context-id and --continue do not go together: --continue uses the saved conversation's context",
      suggestion: "Give one of them: --context-id C for that context, or --continue for the saved conversation."
    })
    : undefined

/**
 * The words typed, or stdin when the text is `-`, or absent with stdin not a terminal (`echo hi |
 * relay message send`) and nothing else to send: a file alone does not wait for stdin.
 */
const messageText = (words: ReadonlyArray<string>, hasParts: boolean): Effect.Effect<string, InvalidInput> => {
  const fromStdin = (words.length === 1 && words[0] === "-") || (words.length === 0 && !hasParts && process.stdin.isTTY !== true)
  return fromStdin ? readStdin(MAX_AGENT_BODY_BYTES, "The message") : Effect.succeed(words.join(" "))
}

/** Files, then data, in the order given (they follow the text in the message). */
const partSources = (values: MessageValues): ReadonlyArray<PartSource> => [
  ...values.file.map((path): PartSource => ({ _tag: "FilePath", path })),
  ...values.fileUrl.map((url): PartSource => ({ _tag: "FileUrl", url })),
  ...Option.toArray(
    Option.map(
      values.data,
      (data): PartSource => data.startsWith("@") ? { _tag: "DataFile", path: data.slice(1) } : { _tag: "DataText", text: data }
    )
  )
]

/** The message's text and the parts after it; the terminal reads any file its user names. */
const messageContent = (values: MessageValues) => {
  const sources = partSources(values)
  return Effect.flatMap(
    messageText(values.text, sources.length > 0),
    (text) =>
      Effect.map(outgoingParts({ text, sources, maxRequestBytes: values.maxRequestBytes, mayRead: anyFile }), (parts) => ({ text, parts }))
  )
}

const run = (values: MessageValues, streaming: boolean) =>
  withAgentAccess(values, (access) => {
    // Streaming with --json: NDJSON, one line per event as it arrives, then the result on one line.
    const events = streaming && values.json
    const progress = progressPrinter({ streamText: streaming && !values.json, showStates: !values.json, events })
    const handle = leavesTaskHandle(access.agentUrl)
    const usage = conflicting(values)
    const program = usage !== undefined ?
      Effect.fail(usage) :
      withAnswerFiles(values, (answerFiles) =>
        Effect.flatMap(messageContent(values), ({ text, parts }) =>
          progress.whileWaiting(sendMessage({
            ...access,
            text,
            parts,
            contextId: Option.getOrUndefined(values.contextId),
            taskId: Option.getOrUndefined(values.taskId),
            useSession: values.continueSession,
            stream: streaming,
            pushUrl: Option.getOrUndefined(values.pushUrl),
            pushToken: Option.getOrUndefined(Option.map(values.pushToken, Redacted.value)),
            maxWait: Option.getOrUndefined(Option.map(values.wait, Duration.seconds)),
            maxAnswerBytes: values.maxAnswerBytes,
            onUpdate: (update) => Effect.zipRight(handle.onUpdate(update), progress.onUpdate(update)),
            answerFiles
          }))))
    return render(values, handle.around(values.json)(progress.showingAllOf(program)), (result, style) => {
      // Streamed text is already on screen; end its line and show the summary.
      const streamedText = progress.printedText()
      return `${progress.unprinted()}${streamedText ? "\n\n" : ""}${messageView(access.agentUrl, !streamedText)(result, style)}`
    }, events ? "line" : "indented").pipe(
      Effect.tap(failWhenCut(values.json)),
      Effect.tap(failWhenTaskFailed),
      Effect.flatMap(failWhenWaitRanOut(values))
    )
  })

/**
 * A turn that ends `failed` or `rejected` is shown like any answer, then exits 1, so a script can
 * tell (`relay message send … && next`); the state is in the output already.
 */
const failWhenTaskFailed = (result: MessageResult) =>
  result.state === "failed" || result.state === "rejected" ? Effect.fail(new CommandFailed({ exitCode: EXIT_FAILURE })) : Effect.void

/**
 * A `--wait` that ran out is a failure (exit 1, README: Exit codes), like a stream that fell silent:
 * the task is still running, and the answer printed says how to check on it.
 */
const failWhenWaitRanOut = (values: MessageValues) => (result: MessageResult) =>
  Option.isSome(values.wait) && (result.state === "working" || result.state === "submitted")
    ? Effect.fail(new CommandFailed({ exitCode: EXIT_FAILURE }))
    : Effect.void

const send = Command.make("send", { ...messageOptions, stream }, (values) => run(values, values.stream)).pipe(
  Command.withDescription("Send a message to an agent and print its answer")
)

const streamCommand = Command.make("stream", messageOptions, (values) => run(values, true)).pipe(
  Command.withDescription("Send a message and print the answer as it streams (= send --stream)")
)

export const messageCommand = Command.make("message").pipe(
  Command.withDescription("Send messages to A2A agents"),
  Command.withSubcommands([send, streamCommand]),
  Command.provide(ClientServices)
)
