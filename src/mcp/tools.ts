/**
 * The MCP tools: names and parameters of SPEC §4.1 (primary names, with the alternates accepted),
 * each running the same program as its terminal command and answering with structured content,
 * a short summary, or an error result with a stable code and a hint.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { CallToolResult, ToolAnnotations } from "@modelcontextprotocol/sdk/types.js"
import type { FileSystem, HttpClient } from "@effect/platform"
import { Duration, Effect, type Layer } from "effect"
import * as z from "zod"
import { type Described, InvalidInput, type ListenFailed } from "../domain/errors.js"
import { MAX_AGENT_BODY_BYTES } from "../domain/limits.js"
import { fileSummaries } from "../domain/fileParts.js"
import type { AnswerPart } from "../domain/answerParts.js"
import type { MessageResult, PushConfigView, TaskView } from "../domain/results.js"
import { agentUrlOf } from "../programs/agentNames.js"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { PartSource } from "../programs/outgoingParts.js"
import { CHECK_GROUPS, type CheckReport, summaryLine } from "../domain/conformance.js"
import type { A2aClient } from "../services/A2aClient.js"
import type { NotificationLog } from "../services/NotificationLog.js"
import type { PushReceiver } from "../services/PushReceiver.js"
import type { RawHttp } from "../services/RawHttp.js"
import type { ReceivedFiles } from "../services/ReceivedFiles.js"
import type { SessionStore } from "../services/SessionStore.js"
import type { StateDir } from "../services/StateDir.js"
import { registerAgentTools } from "./agentTools.js"
import { clientRoots } from "./clientRoots.js"
import { logToClient } from "./clientLog.js"
import { HEARTBEAT, type ToolExtra, withProgress, withProgressMessages } from "./progress.js"
import { answerContent, fileLinks } from "./answerContent.js"
import { type ContentOf, toToolResult, withoutSecrets } from "./toolResult.js"

/** The services the tools' programs use. */
export type ToolEnv = SessionStore | A2aClient | NotificationLog | ReceivedFiles | FileSystem.FileSystem | HttpClient.HttpClient | StateDir

/** What the tools need from the server: how to run programs, and the default bounded wait. */
export interface ToolContext {
  /** Runs a program; aborting `signal` (the client cancelled the call) interrupts it. */
  readonly run: <A>(effect: Effect.Effect<A, never, ToolEnv>, signal: AbortSignal) => Promise<A>
  /** How long send_message and wait_for_task wait when the call gives no timeout_seconds. */
  readonly defaultWait: Duration.Duration
  /** How often progress repeats the latest status while a call waits (default 10 s). */
  readonly heartbeat?: Duration.DurationInput | undefined
  /** Interface hosts the user allowed when starting the server (--allow-interface-host); an assistant cannot add any. */
  readonly allowInterfaceHosts?: ReadonlyArray<string> | undefined
  /** Largest whole answer send_message and wait_for_task keep (default MAX_ANSWER_BYTES; relay mcp --max-answer-bytes). */
  readonly maxAnswerBytes?: number | undefined
  /** Directories whose files send_message may read besides the client's roots (relay mcp --allow-read); absolute. */
  readonly allowRead?: ReadonlyArray<string> | undefined
  /** Largest request send_message sends, files and data encoded (default MAX_AGENT_BODY_BYTES; relay mcp --max-request-bytes). */
  readonly maxRequestBytes?: number | undefined
  /**
   * What check_agent runs with besides the client: raw exchanges and a push receiver (the webhook
   * door's, on loopback for the run). Handed over by whoever starts the server, loaded on the first call.
   */
  readonly loadCheckRun: () => Promise<Layer.Layer<RawHttp | PushReceiver, ListenFailed, HttpClient.HttpClient>>
}

/** Parameters that carry secrets: they are used, never echoed (see withoutSecrets). */
const SECRET_PARAMETERS = ["bearer_token", "api_key", "push_token", "webhook_token", "token"] as const

const secretsOf = (args: object): ReadonlyArray<string | undefined> =>
  SECRET_PARAMETERS.map((name) => {
    const value: unknown = (args as Record<string, unknown>)[name]
    return typeof value === "string" ? value : undefined
  })

// ---------------------------------------------------------------------------
// Shared parameter shapes

const agentUrl = z.string().describe("The A2A agent: a name from list_agents, or its base URL, e.g. http://127.0.0.1:8000")
const secrets = {
  bearer_token: z.string().optional().describe("Bearer token for this call; omit to use credentials saved with set_agent_credentials"),
  api_key: z.string().optional().describe("API key for this call (sent as X-API-Key); omit to use saved credentials")
}
const cardUrl = z.string().optional()
  .describe("Full URL of the agent's card when it is not at the well-known path; saved with the session for later calls")
const contacting = { agent_url: agentUrl, ...secrets, card_url: cardUrl }
const taskId = z.string().describe("The agent's task id (from send_message or list_tasks)")
const timeoutSeconds = z.number().int().min(1).max(3600).optional()
  .describe("How long to wait for the task before returning state 'working' (default 45, or the server's --wait-seconds)")

/**
 * The MCP door for the agent URL: `agent_url` (a name from list_agents, or a URL) is resolved and
 * decoded here, once (a bad one fails the call with invalid_agent_url, an unknown name with unknown_agent), and the program gets the canonical AgentUrl with the call's secrets and card URL and
 * the interface hosts the server's user allowed.
 */
const atAgentOf = (context: ToolContext) => <A, E, R>(
  args: { agent_url: string; bearer_token?: string | undefined; api_key?: string | undefined; card_url?: string | undefined },
  use: (access: AgentAccess) => Effect.Effect<A, E, R>
) =>
  Effect.flatMap(agentUrlOf(args.agent_url), (agentUrl) =>
    use({
      agentUrl,
      bearerToken: args.bearer_token,
      apiKey: args.api_key,
      cardUrl: args.card_url,
      allowInterfaceHosts: context.allowInterfaceHosts
    }))

// ---------------------------------------------------------------------------
// Output shapes (must admit exactly what the programs return)

const nullableString = z.string().nullable()
const stateName = z.string().describe("Task state: submitted, working, input-required, auth-required, completed, failed, canceled, rejected")

/** Present only on an answer cut at relay's limit for a whole answer (then the result is also an error, response_too_large). */
const truncationShape = {
  truncated: z.literal(true).optional().describe("The answer grew past relay's limit: relay stopped reading and kept what it had"),
  kept_bytes: z.number().optional().describe("Bytes of the answer kept"),
  limit_bytes: z.number().optional().describe("relay's limit for a whole answer")
}

/** One part of an answer (domain/answerParts.ts AnswerPart; the check below keeps the two alike). */
const answerPart = z.object({
  kind: z.enum(["text", "file", "data"]),
  text: nullableString.describe("A text part's text"),
  name: nullableString.describe("A file's name, as the agent gave it"),
  media_type: nullableString,
  size: z.number().nullable().describe("A file's size in bytes"),
  sha256: nullableString,
  path: nullableString.describe("Where relay saved the file's bytes (also in the content: image, audio, resource or resource_link)"),
  url: nullableString.describe("A file given by reference"),
  note: nullableString.describe("What is odd about the file, or why it was not saved"),
  data: z.unknown().describe("A data part's JSON value"),
  artifact_id: nullableString
})

/** Both ways assignable, with the same keys: the outputSchema admits exactly the parts the programs return. */
type Alike<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false
const answerPartIsAlike: Alike<z.infer<typeof answerPart>, AnswerPart> = true
void answerPartIsAlike

const answerParts = z.array(answerPart).describe("The answer's parts in order: text, files (saved to path, or by url) and data")

const taskViewShape = {
  task_id: z.string(),
  context_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.literal("task"),
  updated_at: nullableString,
  ...truncationShape
}
const nextStep = { next_step: z.string().describe("What to do next") }
const historyShape = {
  history: z.array(z.object({ role: z.enum(["user", "agent"]), text: z.string() })).optional()
    .describe("The task's messages, when history_length was given")
}

const messageResultShape = {
  context_id: nullableString,
  task_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.enum(["task", "message"]),
  updated_at: nullableString,
  ...truncationShape,
  ...nextStep
}

const pushConfigShape = {
  task_id: nullableString,
  config_id: nullableString,
  url: z.string(),
  token: nullableString.describe("Masked"),
  auth_scheme: nullableString
}

const sessionShape = {
  agent_url: z.string(),
  card_url: nullableString,
  context_id: nullableString,
  task_id: nullableString,
  last_state: nullableString,
  has_credentials: z.boolean(),
  updated_at: nullableString
}

const issueShape = z.object({
  code: z.string(),
  severity: z.enum(["error", "warning", "info"]),
  path: z.string(),
  message: z.string(),
  hint: z.string()
})

const interfaceShape = { protocol: z.enum(["1.0", "0.3"]), binding: z.enum(["jsonrpc", "rest"]) }

/** The report of relay check --json (domain/conformance CHECK_REPORT_SCHEMA). */
const checkReportShape = {
  schema: z.string(),
  agent_url: z.string(),
  card_url: nullableString,
  dry_run: z.boolean(),
  interfaces: z.array(z.object({ ...interfaceShape, url: z.string() })),
  results: z.array(z.object({
    id: z.string(),
    group: z.enum(CHECK_GROUPS),
    severity: z.enum(["must", "should"]),
    title: z.string(),
    spec: nullableString,
    interface: z.object(interfaceShape).nullable(),
    status: z.enum(["passed", "failed", "warning", "skipped"]),
    detail: z.string(),
    duration_ms: z.number()
  })),
  tasks_created: z.array(z.object({ task_id: z.string(), interface: z.object(interfaceShape), state: z.string() })),
  summary: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), warnings: z.number() }),
  duration_ms: z.number()
}

/** The whole check_agent call waits at most this long. */
const CHECK_WAIT_LIMIT = Duration.minutes(3)

const summarizeCheck = (report: CheckReport) =>
  [
    ...report.results.filter((r) => r.status === "failed" || r.status === "warning").slice(0, 10).map((r) =>
      `${r.status === "failed" ? "✘" : "!"} ${r.id}${r.interface ? ` (${r.interface.protocol} ${r.interface.binding})` : ""}: ${r.detail}`),
    summaryLine(report.summary)
  ].join("\n")

// ---------------------------------------------------------------------------
// What to do next, so an assistant can act on a result

const nextStepFor = (view: Pick<TaskView, "state" | "task_id" | "needs_input" | "needs_auth">): string => {
  if (view.needs_auth) return "The agent needs authentication: save credentials with set_agent_credentials, then send_message with use_session=true."
  if (view.needs_input) return "The agent is waiting for input: answer with send_message (use_session=true, or the same task_id)."
  if (view.state === "working" || view.state === "submitted") {
    return `The task is still running: call wait_for_task with task_id ${view.task_id} to keep waiting, or cancel_task to stop it.`
  }
  return "Done. send_message with use_session=true continues the conversation."
}

const withNextStep = (result: MessageResult) =>
  ({ ...result, next_step: result.task_id === null ? "Done. send_message with use_session=true continues the conversation." : nextStepFor({ ...result, task_id: result.task_id }) })

const viewWithNextStep = (view: TaskView) => ({ ...view, next_step: nextStepFor(view) })

/** An answer's files and data as content after the summary (answerContent.ts). */
const partsContent = (result: { readonly parts: ReadonlyArray<AnswerPart> }) => answerContent(result.parts)

const summarizeMessage = (result: MessageResult & { next_step: string }) =>
  `${result.state}${result.task_id ? ` (task ${result.task_id})` : ""}: ${result.text || "(no text)"}\n${result.next_step}`

const summarizeTask = (view: TaskView & { next_step?: string }) =>
  `Task ${view.task_id} is ${view.state}${view.text ? `: ${view.text}` : ""}${view.next_step ? `\n${view.next_step}` : ""}`

/** A few lines about an agent: who it is, what it can do, where it listens. */
const summarizeCard = (result: { agent_url: string; generation: string; card: unknown }) => {
  const card = (typeof result.card === "object" && result.card !== null ? result.card : {}) as Record<string, unknown>
  const text = (value: unknown) => (typeof value === "string" ? value : "")
  const skills = Array.isArray(card["skills"]) ? (card["skills"] as ReadonlyArray<Record<string, unknown>>) : []
  const capabilities = (card["capabilities"] ?? {}) as Record<string, unknown>
  return [
    `${text(card["name"]) || "Unnamed agent"} (A2A ${result.generation}) at ${result.agent_url}`,
    text(card["description"]),
    `Skills: ${skills.map((skill) => `${text(skill["id"])} (${text(skill["name"])})`).join(", ") || "none listed"}`,
    `Streaming: ${capabilities["streaming"] === true ? "yes" : "no"}; push notifications: ${capabilities["pushNotifications"] === true ? "yes" : "no"}`,
    "The full card is in the structured result. Next: send_message."
  ].filter((line) => line !== "").join("\n")
}

const summarizePush = (config: PushConfigView) =>
  `Push notifications for task ${config.task_id ?? "?"} go to ${config.url}${config.config_id ? ` (config ${config.config_id})` : ""}`

/** Either of two spellings of one parameter (SPEC §4.1 alternate names). */
const oneOf = (name: string, primary: string | undefined, alternate: string | undefined, alternateName: string) => {
  const value = primary ?? alternate
  return value === undefined
    ? Effect.fail(new InvalidInput({ reason: `${name} is required`, suggestion: `Pass ${name} (or ${alternateName})` }))
    : Effect.succeed(value)
}

/** A file send_message sends: exactly one of path, url and content_base64. */
const fileToSend = z.object({
  path: z.string().optional().describe(
    "Absolute path of a file to send by its bytes; it must lie inside one of your roots or a directory the user allowed (relay mcp --allow-read)"
  ),
  url: z.string().optional().describe("URL of a file the agent fetches itself"),
  content_base64: z.string().optional().describe("The file's bytes in base64 (needs name)"),
  name: z.string().optional().describe("The file's name (default: the last part of the path or URL)"),
  media_type: z.string().optional().describe("The file's media type, e.g. application/pdf (default: from the name's extension)")
})
type FileToSend = z.infer<typeof fileToSend>

/** A file of send_message's `files` as a part source, or why it is none. */
const sourceOfFile = (file: FileToSend, index: number): Effect.Effect<PartSource, InvalidInput> => {
  const where = `files[${index}]`
  const contents = [file.path, file.url, file.content_base64].filter((content) => content !== undefined)
  if (contents.length !== 1) {
    return Effect.fail(new InvalidInput({ reason: `${where} needs exactly one of path, url and content_base64`, suggestion: "Give each file as {path}, {url} or {content_base64, name}" }))
  }
  const given = { name: file.name, mediaType: file.media_type }
  if (file.path !== undefined) return Effect.succeed({ _tag: "FilePath", path: file.path, ...given })
  if (file.url !== undefined) return Effect.succeed({ _tag: "FileUrl", url: file.url, ...given })
  return file.name === undefined
    ? Effect.fail(new InvalidInput({ reason: `${where} has content_base64 but no name`, suggestion: "Give the file's name with its content" }))
    : Effect.succeed({ _tag: "FileContent", base64: file.content_base64!, name: file.name, mediaType: file.media_type })
}

/** send_message's files, then its data (they follow the text in the message). */
const partSourcesOf = (args: { files?: ReadonlyArray<FileToSend> | undefined; data?: unknown }) =>
  Effect.map(Effect.forEach(args.files ?? [], sourceOfFile), (files): ReadonlyArray<PartSource> =>
    args.data === undefined ? files : [...files, { _tag: "Data", value: args.data }])

// ---------------------------------------------------------------------------

const READ_ONLY_REMOTE: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: true }
const READ_ONLY_LOCAL: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false }

/**
 * Modules loaded on first use, then kept: later calls take them at once, without the promise (and
 * the bundle's copy of a chunk's exports) a dynamic import costs each time (~0.1 ms per call).
 */
const loadedOnFirstUse = <M>(load: () => Promise<M>): Effect.Effect<M> => {
  let loaded: M | undefined
  return Effect.suspend(() =>
    loaded === undefined ? Effect.map(Effect.promise(load), (module) => (loaded = module)) : Effect.succeed(loaded)
  )
}

/** The other programs, with the A2A model and client, load on the first call of a tool that runs one. */
const programs = loadedOnFirstUse(() => import("./toolPrograms.js"))
const withPrograms = <A, E, R>(use: (programs: typeof import("./toolPrograms.js")) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(programs, use)

/** The card programs, with the card validator and its JSON Schema engine, load on the first card tool call. */
const cardPrograms = loadedOnFirstUse(() => import("../programs/cards.js"))


/** Registers every tool on `server`; handlers run programs through `context.run`. */
export const registerTools = (server: McpServer, context: ToolContext) => {
  // The checks and their push receiver load on the first check_agent call, not with the server.
  const checkModules = loadedOnFirstUse(() => Promise.all([import("../programs/check/checkAgent.js"), context.loadCheckRun()]))
  const handle = <A extends object, E extends Described>(
    extra: ToolExtra,
    args: object,
    program: Effect.Effect<A, E, ToolEnv>,
    summarize: (result: A) => string,
    contentOf?: ContentOf<A, ToolEnv>
  ): Promise<CallToolResult> =>
    context.run(toToolResult(program, summarize, contentOf).pipe(logToClient(server, extra.sessionId)), extra.signal)
      .then((result) => withoutSecrets(result, secretsOf(args)))

  const atAgent = atAgentOf(context)
  // Files send_message may read: inside the client's roots or the directories the user allowed.
  const roots = clientRoots(server)
  const readableDirectories = Effect.map(roots, (directories) => [...directories, ...(context.allowRead ?? [])])
  const waitFor = (seconds: number | undefined) => (seconds === undefined ? context.defaultWait : Duration.seconds(seconds))
  const heartbeat = context.heartbeat ?? HEARTBEAT

  server.registerTool("validate_agent_card", {
    title: "Validate an agent card",
    description: "Check an A2A agent card (v1.0 or v0.3) from a URL or a file and list every problem with a stable code, " +
      "severity, JSON path and fix hint. Use before relying on an unknown agent or when another tool reports an invalid " +
      "card. Next: get_agent_card to read the card, or send_message to talk to the agent.",
    inputSchema: {
      source: z.string().describe("Agent base URL, card URL, or card file path"),
      from_file: z.boolean().optional().describe("Treat source as a file path"),
      ...secrets
    },
    outputSchema: {
      valid: z.boolean(),
      source: z.string(),
      agent_name: nullableString,
      protocol_version: nullableString,
      generation: z.string(),
      capabilities: z.object({ streaming: z.boolean(), push_notifications: z.boolean() }),
      issues: z.array(issueShape),
      error_count: z.number(),
      warning_count: z.number()
    },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(extra, args, Effect.flatMap(cardPrograms, ({ validateCard }) => validateCard({
      source: args.source,
      fromFile: args.from_file,
      bearerToken: args.bearer_token,
      apiKey: args.api_key
    })), (r) =>
      `${r.valid ? "Valid" : "Invalid"} agent card${r.agent_name ? ` "${r.agent_name}"` : ""} (${r.generation}): ` +
      `${r.error_count} error(s), ${r.warning_count} warning(s)` +
      r.issues.slice(0, 5).map((issue) => `\n- ${issue.severity} ${issue.code} at ${issue.path}: ${issue.message}`).join("")))

  server.registerTool("get_agent_card", {
    title: "Get an agent's card",
    description: "Fetch an A2A agent's card: its name, skills, capabilities and interfaces. Use to learn what an agent " +
      "can do before talking to it; authenticated=true fetches the extended card (needs credentials). " +
      "Next: send_message; validate_agent_card if the card looks wrong.",
    inputSchema: { ...contacting, authenticated: z.boolean().optional().describe("Fetch the extended card for authenticated clients") },
    outputSchema: {
      agent_url: z.string(),
      card_url: z.string(),
      generation: z.string(),
      card: z.record(z.string(), z.unknown())
    },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(
      extra,
      args,
      atAgent(args, (access) => Effect.flatMap(cardPrograms, ({ getCard }) => getCard({ ...access, authenticated: args.authenticated }))),
      summarizeCard
    ))

  server.registerTool("send_message", {
    title: "Send a message to an agent",
    description: "Send a message to an A2A agent (text, files and data) and return its answer. Use to ask an agent to do " +
      "something or to answer its question; use_session=true continues the saved conversation with that agent (and the task " +
      "waiting for input). Waits at most timeout_seconds; if the task is still running the result says state 'working': then " +
      "call wait_for_task with its task_id. needs_input means answer with send_message; needs_auth means " +
      "set_agent_credentials first.",
    inputSchema: {
      ...contacting,
      message: z.string().optional().describe("The text to send (required unless files or data are given; 'text' is accepted too)"),
      text: z.string().optional().describe("Alternate name of message"),
      files: z.array(fileToSend).optional().describe("Files to send after the text: each {path}, {url} or {content_base64, name}"),
      data: z.unknown().optional().describe("Any JSON value to send as a data part, after the files"),
      context_id: z.string().optional().describe("Conversation context to send in"),
      task_id: z.string().optional().describe("Task to continue (one waiting for input)"),
      use_session: z.boolean().optional().describe("Continue the saved conversation with this agent"),
      stream: z.boolean().optional().describe("Use the agent's stream; progress is reported as it arrives"),
      push_url: z.string().optional().describe("Webhook URL for push notifications (e.g. from relay server push)"),
      push_token: z.string().optional().describe("Token the agent sends with each notification"),
      timeout_seconds: timeoutSeconds
    },
    outputSchema: messageResultShape,
    annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true }
  }, (args, extra) => {
    const wait = waitFor(args.timeout_seconds)
    const content = Effect.flatMap(partSourcesOf(args), (sources) =>
      sources.length === 0
        ? Effect.map(oneOf("message", args.message, args.text, "text"), (text) => ({ text, sources }))
        : Effect.succeed({ text: args.message ?? args.text ?? "", sources }))
    const send = Effect.flatMap(content, ({ text, sources }) =>
      atAgent(args, (access) =>
        withPrograms(({ insideDirectories, outgoingParts, sendMessage }) =>
          Effect.flatMap(
            outgoingParts({
              text,
              sources,
              maxRequestBytes: context.maxRequestBytes ?? MAX_AGENT_BODY_BYTES,
              mayRead: insideDirectories(readableDirectories)
            }),
            (parts) =>
              withProgress(extra, "Sending the message", (onUpdate) =>
                sendMessage({
                  ...access,
                  text,
                  parts,
                  contextId: args.context_id,
                  taskId: args.task_id,
                  useSession: args.use_session,
                  stream: args.stream,
                  pushUrl: args.push_url,
                  pushToken: args.push_token,
                  maxWait: wait,
                  maxAnswerBytes: context.maxAnswerBytes,
                  onUpdate
                }), heartbeat)
          ))))
    return handle(extra, args, send.pipe(Effect.map(withNextStep)), summarizeMessage, partsContent)
  })

  server.registerTool("get_task", {
    title: "Get a task",
    description: "Get the current state and answer of an agent's task, without waiting. Use to check on a task " +
      "(history_length adds its messages). Next: wait_for_task to wait for it to finish, cancel_task to stop it, " +
      "send_message to answer it when it needs input.",
    inputSchema: { ...contacting, task_id: taskId, history_length: z.number().int().min(0).optional().describe("How many history messages the agent includes") },
    outputSchema: { ...taskViewShape, ...nextStep, ...historyShape },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(extra, args, atAgent(args, (access) =>
      withPrograms(({ getTask }) => Effect.map(getTask({ ...access, taskId: args.task_id, historyLength: args.history_length }), viewWithNextStep))), summarizeTask, partsContent))

  server.registerTool("wait_for_task", {
    title: "Wait for a task",
    description: "Wait until an agent's task finishes or needs input, at most timeout_seconds (progress with the agent's " +
      "latest status is reported meanwhile). Use after send_message returned state 'working'. Next: call it again " +
      "while the state is still 'working'; send_message when it needs input.",
    inputSchema: { ...contacting, task_id: taskId, timeout_seconds: timeoutSeconds },
    outputSchema: { ...taskViewShape, ...nextStep },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) => {
    const wait = waitFor(args.timeout_seconds)
    const waiting = atAgent(args, (access) => withProgress(extra, "Waiting for the task", (onUpdate) =>
      withPrograms(({ waitForTask }) =>
        waitForTask({ ...access, taskId: args.task_id, maxWait: wait, maxAnswerBytes: context.maxAnswerBytes, onUpdate })), heartbeat))
    return handle(extra, args, waiting.pipe(Effect.map(viewWithNextStep)), summarizeTask, partsContent)
  })

  server.registerTool("cancel_task", {
    title: "Cancel a task",
    description: "Cancel a running task of an agent; returns the task's state after cancellation. Use when a task is no " +
      "longer wanted or runs too long. Next: get_task to confirm, or send_message to start over.",
    inputSchema: { ...contacting, task_id: taskId },
    outputSchema: taskViewShape,
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
  }, (args, extra) => handle(extra, args, atAgent(args, (access) => withPrograms(({ cancelTask }) => cancelTask({ ...access, taskId: args.task_id }))), summarizeTask))

  server.registerTool("list_tasks", {
    title: "List an agent's tasks",
    description: "List an agent's tasks, newest first (A2A 1.0 agents). Use to find a task id you lost; filter by " +
      "context or state, page with page_token. Next: get_task or wait_for_task with a task_id from the list.",
    inputSchema: {
      ...contacting,
      context_id: z.string().optional(),
      status: z.string().optional().describe("Only tasks in this state, e.g. working"),
      page_size: z.number().int().min(1).max(100).optional(),
      page_token: z.string().optional().describe("next_page_token of the previous page")
    },
    outputSchema: {
      count: z.number(),
      tasks: z.array(z.object(taskViewShape)),
      next_page_token: nullableString,
      total_size: z.number().nullable()
    },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(extra, args, atAgent(args, (access) => withPrograms(({ listTasks }) => listTasks({
      ...access,
      contextId: args.context_id,
      status: args.status,
      pageSize: args.page_size,
      pageToken: args.page_token
    }))), (r) => r.count === 0 ? "No tasks" : r.tasks.map((t) => `${t.task_id}: ${t.state}`).join("\n")))

  server.registerTool("set_task_notification", {
    title: "Set a task's push notifications",
    description: "Ask the agent to POST the task's updates to a webhook (e.g. the URL printed by relay server push). " +
      "Use for long tasks you do not want to poll. Next: get_push_notifications reads what arrived; " +
      "get_task_notification shows the config.",
    inputSchema: {
      ...contacting,
      task_id: taskId,
      webhook_url: z.string().optional().describe("The webhook URL (required; 'url' is accepted too)"),
      url: z.string().optional().describe("Alternate name of webhook_url"),
      webhook_token: z.string().optional().describe("Token the agent sends with each notification"),
      token: z.string().optional().describe("Alternate name of webhook_token")
    },
    outputSchema: pushConfigShape,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: true }
  }, (args, extra) =>
    handle(extra, args, Effect.flatMap(oneOf("webhook_url", args.webhook_url, args.url, "url"), (webhookUrl) =>
      atAgent(args, (access) =>
        withPrograms(({ setPushConfig }) => setPushConfig({ ...access, taskId: args.task_id, webhookUrl, webhookToken: args.webhook_token ?? args.token })))), summarizePush))

  server.registerTool("get_task_notification", {
    title: "Get a task's push notification config",
    description: "Show where an agent sends a task's push notifications (secrets masked). Use to check a webhook set " +
      "with set_task_notification or send_message push_url. Next: get_push_notifications for what arrived.",
    inputSchema: { ...contacting, task_id: taskId, config_id: z.string().optional().describe("Config id; omit for the newest one") },
    outputSchema: pushConfigShape,
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(extra, args, atAgent(args, (access) => withPrograms(({ getPushConfig }) => getPushConfig({ ...access, taskId: args.task_id, configId: args.config_id }))), summarizePush))

  server.registerTool("list_task_notifications", {
    title: "List a task's push notification configs",
    description: "List every webhook an agent sends a task's updates to (secrets masked). Use to find a config_id. " +
      "Next: delete_task_notification to stop one, get_push_notifications for what arrived.",
    inputSchema: { ...contacting, task_id: taskId },
    outputSchema: { count: z.number(), configs: z.array(z.object(pushConfigShape)) },
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(extra, args, atAgent(args, (access) => withPrograms(({ listPushConfigs }) => listPushConfigs({ ...access, taskId: args.task_id }))), (r) =>
      r.count === 0 ? "No push configs" : r.configs.map(summarizePush).join("\n")))

  server.registerTool("delete_task_notification", {
    title: "Delete a task's push notification config",
    description: "Stop an agent sending a task's updates to one webhook. Use when notifications are no longer wanted; " +
      "config_id comes from list_task_notifications. Next: list_task_notifications to confirm.",
    inputSchema: { ...contacting, task_id: taskId, config_id: z.string().describe("The config id (from list_task_notifications)") },
    outputSchema: { task_id: z.string(), config_id: z.string(), deleted: z.boolean() },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
  }, (args, extra) =>
    handle(extra, args, atAgent(args, (access) => withPrograms(({ deletePushConfig }) => deletePushConfig({ ...access, taskId: args.task_id, configId: args.config_id }))), (r) =>
      `Deleted push config ${r.config_id} of task ${r.task_id}`))

  server.registerTool("check_agent", {
    title: "Check an agent's A2A conformance",
    description: "Run relay's conformance checks against an A2A agent (card, transport, messaging, tasks, streaming, push, " +
      "auth, equivalence; both protocol generations and both HTTP bindings the card declares) and return every check's " +
      "verdict with its spec section. Creates a few tasks on the agent (listed in tasks_created). Use when building or " +
      "debugging an agent, or before relying on one. Next: send_message, or fix the failed checks and run it again.",
    inputSchema: {
      ...contacting,
      protocol: z.enum(["1.0", "0.3", "all"]).optional().describe("Protocol generations to check (default all)"),
      binding: z.enum(["jsonrpc", "rest", "all"]).optional().describe("HTTP bindings to check (default all)"),
      only: z.array(z.string()).optional().describe(`Only these groups (${CHECK_GROUPS.join(", ")}) or check ids`),
      skip: z.array(z.string()).optional().describe("Leave out these groups or check ids"),
      timeout_seconds: z.number().int().min(1).max(60).optional().describe("Seconds each request may take (default 10)"),
      dry_run: z.boolean().optional().describe("List the checks only; send nothing")
    },
    outputSchema: checkReportShape,
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  }, (args, extra) =>
    handle(
      extra,
      args,
      // The checks and their push receiver load on the first check_agent call, not with the server.
      withPrograms(({ RequestTimeout }) => Effect.flatMap(checkModules, ([{ checkAgent, planChecks }, checkRunLayer]) =>
      withProgressMessages(extra, "Checking the agent", (say) => {
        const plan = { agentUrl: args.agent_url, only: args.only ?? [], skip: args.skip ?? [] }
        // A dry run names the URL as given and sends nothing; a real run decodes it here, once.
        return args.dry_run === true ? planChecks(plan) : atAgent(args, (access) =>
          checkAgent({
            ...plan,
            ...access,
            protocols: args.protocol === undefined || args.protocol === "all" ? ["1.0", "0.3"] : [args.protocol],
            bindings: args.binding === undefined || args.binding === "all"
              ? ["JSONRPC", "HTTP+JSON"]
              : [args.binding === "rest" ? "HTTP+JSON" : "JSONRPC"],
            timeoutSeconds: args.timeout_seconds,
            onGroupDone: (group, results) =>
              say(`${group}${results[0]?.interface ? ` (${results[0].interface.protocol} ${results[0].interface.binding})` : ""}: ` +
                `${results.filter((r) => r.status === "passed").length}/${results.length} passed`)
          }))
      }, heartbeat).pipe(
        // As in relay check: push.delivery's receiver listens on loopback for the length of the run.
        Effect.provide(checkRunLayer))).pipe(
        Effect.timeoutFail({
          duration: CHECK_WAIT_LIMIT,
          onTimeout: () => new RequestTimeout({ url: args.agent_url, after: Duration.format(CHECK_WAIT_LIMIT), limit: "wait" })
        })
      )),
      summarizeCheck
    ))

  server.registerTool("get_push_notifications", {
    title: "Read received push notifications",
    description: "Read the push notifications received by relay server push (oldest first, newest last), with the " +
      "files each carried (files[].path: where their bytes were saved; each also as a resource_link). Use after send_message with push_url or " +
      "set_task_notification; filter by task, time or count. Next: get_task for the task's full answer.",
    inputSchema: {
      task_id: z.string().optional(),
      since: z.string().optional().describe("ISO time, or a duration such as 10m or 2h"),
      limit: z.number().int().min(1).max(1000).optional().describe("Keep only the newest N")
    },
    outputSchema: {
      count: z.number(),
      notifications: z.array(z.object({
        id: z.string(),
        received_at: z.string(),
        task_id: nullableString,
        context_id: nullableString,
        kind: z.string(),
        state: nullableString,
        text: nullableString,
        protocol: z.string(),
        files: z.array(answerPart).optional().describe("The file parts it carried, shaped as an answer's parts (absent when none)"),
        files_omitted: z.number().optional()
      }))
    },
    annotations: READ_ONLY_LOCAL
  }, (args, extra) =>
    handle(extra, args, withPrograms(({ listNotifications }) => Effect.map(listNotifications({ taskId: args.task_id, since: args.since, limit: args.limit }), (records) => ({
      count: records.length,
      notifications: records.map((r) => ({
        id: r.id,
        received_at: r.received_at,
        task_id: r.task_id,
        context_id: r.context_id,
        kind: r.kind,
        state: r.state,
        text: r.text,
        protocol: r.protocol,
        ...(r.files === undefined ? {} : { files: r.files }),
        ...(r.files_omitted === undefined ? {} : { files_omitted: r.files_omitted })
      }))
    }))), (r) => r.count === 0
      ? "No push notifications received (is relay server push running, and was push_url given?)"
      : r.notifications.map((n) =>
        [`${n.received_at} task ${n.task_id ?? "?"}: ${n.state ?? n.kind}${n.text ? ` — ${n.text}` : ""}`, ...fileSummaries(n).map((line) => `  ${line}`)].join("\n")
      ).join("\n"), (r) => Effect.succeed(fileLinks(r.notifications.flatMap((n) => n.files ?? [])))))

  server.registerTool("list_sessions", {
    title: "List saved sessions",
    description: "List the agents relay has talked to, with their saved context id, task id, last state and whether " +
      "credentials are saved (shared with the relay terminal commands). Use to find an agent or task from earlier. " +
      "Next: get_session_info for one agent, send_message with use_session=true to continue.",
    inputSchema: {},
    outputSchema: { count: z.number(), sessions: z.array(z.object(sessionShape)) },
    annotations: READ_ONLY_LOCAL
  }, (args, extra) =>
    handle(extra, args, withPrograms(({ listSessions }) => listSessions()), (r) =>
      r.count === 0 ? "No saved sessions" : r.sessions.map((s) => `${s.agent_url}: task ${s.task_id ?? "none"} (${s.last_state ?? "no state"})`).join("\n")))

  server.registerTool("get_session_info", {
    title: "Get an agent's session",
    description: "Show the saved context id, task id, last state and whether credentials are saved for one agent. " +
      "Use before continuing a conversation. Next: send_message with use_session=true, or wait_for_task with the task id.",
    inputSchema: { agent_url: agentUrl },
    outputSchema: sessionShape,
    annotations: READ_ONLY_LOCAL
  }, (args, extra) =>
    handle(extra, args, withPrograms(({ showSession }) => Effect.flatMap(agentUrlOf(args.agent_url), showSession)), (s) =>
      `${s.agent_url}: context ${s.context_id ?? "none"}, task ${s.task_id ?? "none"}, credentials ${s.has_credentials ? "saved" : "none"}`))

  server.registerTool("clear_session_data", {
    title: "Clear saved sessions",
    description: "Forget the saved context and task of one agent, or of all agents when agent_url is omitted. Use to " +
      "start a new conversation instead of continuing the saved one. Saved credentials are kept " +
      "(clear_agent_credentials removes them). Next: send_message.",
    inputSchema: { agent_url: agentUrl.optional().describe("The agent; omit to clear every session") },
    outputSchema: { all: z.boolean(), agent_url: z.string().optional(), cleared: z.number(), credentials_kept: z.boolean() },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
  }, (args, extra) =>
    handle(extra, args, withPrograms(({ clearSessions }) => args.agent_url === undefined ? clearSessions(undefined) : Effect.flatMap(agentUrlOf(args.agent_url), clearSessions)), (r) =>
      `Cleared ${r.cleared} session(s)${r.all ? "" : ` for ${r.agent_url}`}; credentials kept`))

  server.registerTool("set_agent_credentials", {
    title: "Save credentials for an agent",
    description: "Save a bearer token or an API key for an agent; every later call to it uses them (also from the " +
      "relay terminal commands). Use when a result says needs_auth or auth_required. Bearer wins when both are given. " +
      "Next: repeat the call that needed authentication (e.g. send_message).",
    inputSchema: {
      agent_url: agentUrl,
      bearer_token: z.string().optional().describe("Bearer token"),
      api_key: z.string().optional().describe("API key"),
      api_key_header: z.string().optional().describe("Header for the API key (default X-API-Key)")
    },
    // Optional fields: the `{error}` object of SPEC §7.1 must validate too.
    outputSchema: { agent_url: z.string().optional(), auth_type: z.enum(["bearer", "api_key"]).optional(), error: z.string().optional() },
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }, async (args, extra) => {
    const result = await handle(extra, args, atAgent(args, (access) => withPrograms(({ setCredentials }) => setCredentials({ ...access, apiKeyHeader: args.api_key_header }))), (r) => `Saved ${r.auth_type === "bearer" ? "a bearer token" : "an API key"} for ${r.agent_url}`)
    // SPEC §4.1 rule 4: no secret given answers an object with an `error` field.
    const missingSecret = args.bearer_token === undefined && args.api_key === undefined
    return result.isError && missingSecret
      ? { ...result, structuredContent: { error: "Either bearer_token or api_key must be provided" } }
      : result
  })

  server.registerTool("clear_agent_credentials", {
    title: "Remove an agent's credentials",
    description: "Remove the credentials saved for an agent (also for the relay terminal commands). Use when a token " +
      "was revoked or should no longer be used. Next: set_agent_credentials to save new ones.",
    inputSchema: { agent_url: agentUrl },
    outputSchema: { agent_url: z.string(), cleared: z.boolean() },
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
  }, (args, extra) =>
    handle(extra, args, withPrograms(({ clearCredentials }) => Effect.flatMap(agentUrlOf(args.agent_url), clearCredentials)), (r) =>
      r.cleared ? `Removed the credentials of ${r.agent_url}` : `No credentials were saved for ${r.agent_url}`))

  registerAgentTools(server, context)
}
