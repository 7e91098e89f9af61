/**
 * The tools of messages and tasks: send_message (text, files and data), get_task, wait_for_task,
 * cancel_task and list_tasks, each result with the next step an assistant can take.
 */
import {
  acceptedContent,
  type CallToolResult,
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  inputRequired,
  type InputRequiredResult,
  isInputRequiredResult
} from "@modelcontextprotocol/server"
import { type Duration, Effect } from "effect"
import * as z from "zod"
import type { AnswerPart } from "../domain/answerParts.js"
import { type Described, InvalidInput } from "../domain/errors.js"
import { MAX_AGENT_BODY_BYTES } from "../domain/limits.js"
import type { MessageResult, TaskView } from "../domain/results.js"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { PartSource } from "../programs/outgoingParts.js"
import type { SendMessageInput } from "../programs/sendMessage.js"
import type { TaskDetails, TaskList } from "../programs/tasks.js"
import {
  type Answered,
  type AskedState,
  askedStateOf,
  askingTheUser,
  MAX_QUESTIONS,
  questionForm,
  replyOfFields,
  type UserReply
} from "./agentQuestions.js"
import { answerContent } from "./answerContent.js"
import { type ToolExtra, withProgress, withProgressMessages } from "./progress.js"
import {
  historyShape,
  interfaceUsedShape,
  messageResultShape,
  type NextStep,
  nextStep,
  nullableString,
  shapeOf,
  taskViewShape
} from "./resultShapes.js"
import { elicitationModes, type UserPrompt } from "./toolCall.js"
import { contacting, isTaskStep, oneOf, READ_ONLY_REMOTE, taskId, type ToolEnv, type ToolKit, withPrograms } from "./toolKit.js"

/** The arguments that name an agent and how to reach it (toolKit.ts atAgent). */
type Contacting = Parameters<ToolKit["atAgent"]>[0]

const timeoutSeconds = z.number().int().min(1).max(3600).optional()
  .describe("How long to wait for the task before returning state 'working' (default 45, or the server's --wait-seconds)")

// ---------------------------------------------------------------------------
// What to do next, so an assistant can act on a result

const nextStepFor = (view: Pick<TaskView, "state" | "task_id" | "needs_input" | "needs_auth">): string => {
  if (view.needs_auth) {
    return "The agent needs authentication: save credentials with set_agent_credentials, then send_message with use_session=true."
  }
  if (view.needs_input) return "The agent is waiting for input: answer with send_message (use_session=true, or the same task_id)."
  if (view.state === "working" || view.state === "submitted") {
    return `The task is still running: call wait_for_task with task_id ${view.task_id} to keep waiting, or cancel_task to stop it.`
  }
  return "Done. send_message with use_session=true continues the conversation."
}

const DECLINED = "The user declined to answer the agent's question (relay asked through your client); the task still waits " +
  "for input: answer with send_message (use_session=true, or the same task_id) if the user wants to go on."

const withNextStep = <T extends MessageResult>({ result, declined }: Answered<T>): T & NextStep => ({
  ...result,
  next_step: result.task_id === null
    ? "Done. send_message with use_session=true continues the conversation."
    : declined
    ? DECLINED
    : nextStepFor({ ...result, task_id: result.task_id })
})

// ---------------------------------------------------------------------------
// 2026-07-28: the agent's question as an input_required result the client answers by retrying (MRTR)

const QUESTION_KEY = "agent_question"

/** A 2026-07-28 call from a client that can fill a form: the question its retry answers, if any. */
const modernAsking = (extra: ToolExtra) => {
  const envelope = extra.mcpReq.envelope as Readonly<Record<string, unknown>> | undefined
  const capabilities = envelope?.[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined
  if (!elicitationModes(capabilities?.elicitation).form) return undefined
  const state = askedStateOf(extra.mcpReq.requestState())
  return { state, content: state === undefined ? undefined : acceptedContent(extra.mcpReq.inputResponses, QUESTION_KEY) }
}

/** The call's result, or, when the agent asks for input, its question for the client to put to the user. */
const asQuestion = (result: CallToolResult | InputRequiredResult, asked: number): CallToolResult | InputRequiredResult => {
  // A call that already ends asking (a login page: assistantLogin.ts) stays so.
  if (isInputRequiredResult(result)) return result
  const answer = result.structuredContent as (MessageResult & NextStep) | undefined
  if (result.isError === true || answer === undefined || !answer.needs_input || answer.task_id === null) return result
  if (asked >= MAX_QUESTIONS || answer.next_step === DECLINED) return result
  const form = questionForm(answer)
  const state: AskedState = { task_id: answer.task_id, context_id: answer.context_id, fields: Object.keys(form.fields), asked: asked + 1 }
  return inputRequired({
    inputRequests: {
      [QUESTION_KEY]: {
        method: "elicitation/create",
        params: {
          mode: "form",
          message: form.message,
          requestedSchema: { type: "object", properties: form.fields, required: [...form.required] }
        }
      } as never
    },
    requestState: JSON.stringify(state)
  })
}

const viewWithNextStep = <V extends TaskView>(view: V): V & NextStep => ({ ...view, next_step: nextStepFor(view) })

/** An answer's files and data as content after the summary (answerContent.ts). */
const partsContent = (result: { readonly parts: ReadonlyArray<AnswerPart> }) => answerContent(result.parts)

const summarizeMessage = (result: MessageResult & NextStep) =>
  `${result.state}${result.task_id ? ` (task ${result.task_id})` : ""}: ${result.text || "(no text)"}\n${result.next_step}`

const summarizeTask = (view: TaskView & Partial<NextStep>) =>
  `Task ${view.task_id} is ${view.state}${view.text ? `: ${view.text}` : ""}${view.next_step ? `\n${view.next_step}` : ""}`

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
    return Effect.fail(
      new InvalidInput({
        reason: `${where} needs exactly one of path, url and content_base64`,
        suggestion: "Give each file as {path}, {url} or {content_base64, name}"
      })
    )
  }
  const given = { name: file.name, mediaType: file.media_type }
  if (file.path !== undefined) return Effect.succeed({ _tag: "FilePath", path: file.path, ...given })
  if (file.url !== undefined) return Effect.succeed({ _tag: "FileUrl", url: file.url, ...given })
  return file.name === undefined
    ? Effect.fail(
      new InvalidInput({ reason: `${where} has content_base64 but no name`, suggestion: "Give the file's name with its content" })
    )
    : Effect.succeed({ _tag: "FileContent", base64: file.content_base64!, name: file.name, mediaType: file.media_type })
}

/** send_message's files, then its data (they follow the text in the message). */
const partSourcesOf = (args: { files?: ReadonlyArray<FileToSend> | undefined; data?: unknown }) =>
  Effect.map(
    Effect.forEach(args.files ?? [], sourceOfFile),
    (files): ReadonlyArray<PartSource> => args.data === undefined ? files : [...files, { _tag: "Data", value: args.data }]
  )

export const registerMessageTools = (
  { server, context, era, handle, atAgent, waitFor, heartbeat, callOf, readableDirectories }: ToolKit
) => {
  /** One message to the agent, and its answer within `to.wait`. */
  const sendOne = (
    extra: ToolExtra,
    access: AgentAccess,
    text: string,
    sources: ReadonlyArray<PartSource>,
    to: Pick<SendMessageInput, "contextId" | "taskId" | "useSession" | "pushUrl" | "pushToken" | "stream"> & {
      readonly wait: Duration.Duration
    }
  ) =>
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
              contextId: to.contextId,
              taskId: to.taskId,
              useSession: to.useSession,
              pushUrl: to.pushUrl,
              pushToken: to.pushToken,
              text,
              parts,
              stream: to.stream,
              maxWait: to.wait,
              maxAnswerBytes: context.maxAnswerBytes,
              onUpdate
            }), heartbeat)
      )
    )

  /** The user's answer to the agent's question, sent to the task that asked (the text, then the fields as one data part). */
  const sendReply = (
    extra: ToolExtra,
    args: Contacting,
    reply: UserReply,
    to: Pick<MessageResult, "task_id" | "context_id">,
    wait: Duration.Duration
  ) =>
    atAgent(args, (access) =>
      sendOne(extra, access, reply.text, reply.data === undefined ? [] : [{ _tag: "Data", value: reply.data }], {
        taskId: to.task_id ?? undefined,
        contextId: to.context_id ?? undefined,
        wait
      }))

  /**
   * A tool's turn with the agent (send_message, wait_for_task), its question put to the user when
   * the client can show a form (agentQuestions.ts): 2025-11-25 inside the call, as many times as the
   * agent asks; 2026-07-28 as an `input_required` result whose retry brings the answer (`reply`
   * sends it) or a decline (the task as it `waiting`); `task`, when the call names one, is the only
   * task such a retry may answer. A task's step asks nothing: its task does (tasksExtension.ts).
   */
  const askingAbout = <T extends MessageResult, E extends Described>(
    extra: ToolExtra,
    args: Contacting,
    turn: Effect.Effect<T, E, ToolEnv>,
    followUp: {
      readonly reply: (answer: UserReply, to: Pick<MessageResult, "task_id" | "context_id">) => Effect.Effect<T, E, ToolEnv>
      readonly waiting: (taskId: string) => Effect.Effect<T, E, ToolEnv>
      readonly summarize: (result: T & NextStep) => string
      readonly task?: string | undefined
    }
  ) => {
    const modern = era === "modern" && !isTaskStep(extra) ? modernAsking(extra) : undefined
    const asked = followUp.task === undefined || modern?.state?.task_id === followUp.task ? modern?.state : undefined
    const answered = (state: AskedState): Effect.Effect<Answered<T>, E, ToolEnv> => {
      const reply = replyOfFields(state.fields, modern?.content)
      return reply === undefined
        ? Effect.map(followUp.waiting(state.task_id), (result) => ({ result, declined: true }))
        : Effect.map(followUp.reply(reply, state), (result) => ({ result, declined: false }))
    }
    // Progress goes on while the user thinks, so a client that times out idle calls keeps waiting.
    const { user } = callOf(extra)
    const askForm = user.askForm
    const patient: UserPrompt = askForm === undefined ? user : {
      ...user,
      askForm: (form) => withProgressMessages(extra, "Waiting for the user to answer the agent's question", () => askForm(form), heartbeat)
    }
    const asking = asked === undefined
      ? Effect.flatMap(turn, (first) => askingTheUser(patient, first, followUp.reply))
      : answered(asked)
    const result = handle(extra, args, Effect.map(asking, withNextStep), followUp.summarize, partsContent)
    return modern === undefined ? result : result.then((plain) => asQuestion(plain, asked?.asked ?? 0))
  }

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
    // Each message reaches the agent on its own: one refused for want of a login is sent again
    // after it (atAgent), never one the agent already took.
    const send = Effect.flatMap(content, ({ text, sources }) =>
      atAgent(args, (access) =>
        sendOne(extra, access, text, sources, {
          contextId: args.context_id,
          taskId: args.task_id,
          useSession: args.use_session,
          pushUrl: args.push_url,
          pushToken: args.push_token,
          stream: args.stream,
          wait
        })))
    return askingAbout(extra, args, send, {
      reply: (answer, to) => sendReply(extra, args, answer, to, wait),
      waiting: (taskId) => atAgent(args, (access) => withPrograms(({ getTask }) => getTask({ ...access, taskId }))),
      summarize: summarizeMessage
    })
  })

  server.registerTool(
    "get_task",
    {
      title: "Get a task",
      description: "Get the current state and answer of an agent's task, without waiting. Use to check on a task " +
        "(history_length adds its messages). Next: wait_for_task to wait for it to finish, cancel_task to stop it, " +
        "send_message to answer it when it needs input.",
      inputSchema: {
        ...contacting,
        task_id: taskId,
        history_length: z.number().int().min(0).optional().describe("How many history messages the agent includes")
      },
      outputSchema: shapeOf<TaskDetails & NextStep>()({ ...taskViewShape, ...nextStep, ...historyShape }),
      annotations: READ_ONLY_REMOTE
    },
    (args, extra) =>
      handle(
        extra,
        args,
        atAgent(
          args,
          (access) =>
            withPrograms(({ getTask }) =>
              Effect.map(getTask({ ...access, taskId: args.task_id, historyLength: args.history_length }), viewWithNextStep)
            )
        ),
        summarizeTask,
        partsContent
      )
  )

  server.registerTool("wait_for_task", {
    title: "Wait for a task",
    description: "Wait until an agent's task finishes or needs input, at most timeout_seconds (progress with the agent's " +
      "latest status is reported meanwhile). Use after send_message returned state 'working'. Next: call it again " +
      "while the state is still 'working'; send_message when it needs input.",
    inputSchema: { ...contacting, task_id: taskId, timeout_seconds: timeoutSeconds },
    outputSchema: shapeOf<TaskView & NextStep>()({ ...taskViewShape, ...nextStep }),
    annotations: READ_ONLY_REMOTE
  }, (args, extra) => {
    const wait = waitFor(args.timeout_seconds)
    const waiting = atAgent(
      args,
      (access) =>
        withProgress(
          extra,
          "Waiting for the task",
          (onUpdate) =>
            withPrograms(({ waitForTask }) =>
              waitForTask({ ...access, taskId: args.task_id, maxWait: wait, maxAnswerBytes: context.maxAnswerBytes, onUpdate })
            ),
          heartbeat
        )
    )
    // The agent's question is asked as send_message asks it; the answer goes to the task, whose
    // next answer this call keeps waiting for.
    const asView = (result: MessageResult) =>
      result.task_id === args.task_id
        ? Effect.succeed<TaskView>({ ...result, task_id: result.task_id, kind: "task" })
        : atAgent(args, (access) => withPrograms(({ getTask }) => getTask({ ...access, taskId: args.task_id })))
    return askingAbout(extra, args, waiting, {
      reply: (answer, to) => Effect.flatMap(sendReply(extra, args, answer, to, wait), asView),
      waiting: (taskId) => atAgent(args, (access) => withPrograms(({ getTask }) => getTask({ ...access, taskId }))),
      summarize: summarizeTask,
      task: args.task_id
    })
  })

  server.registerTool(
    "cancel_task",
    {
      title: "Cancel a task",
      description: "Cancel a running task of an agent; returns the task's state after cancellation. Use when a task is no " +
        "longer wanted or runs too long. Next: get_task to confirm, or send_message to start over.",
      inputSchema: { ...contacting, task_id: taskId },
      outputSchema: taskViewShape,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: true }
    },
    (args, extra) =>
      handle(
        extra,
        args,
        atAgent(args, (access) => withPrograms(({ cancelTask }) => cancelTask({ ...access, taskId: args.task_id }))),
        summarizeTask
      )
  )

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
    outputSchema: shapeOf<TaskList>()({
      count: z.number(),
      tasks: z.array(z.object(taskViewShape)),
      next_page_token: nullableString,
      total_size: z.number().nullable(),
      ...interfaceUsedShape
    }),
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(
      extra,
      args,
      atAgent(args, (access) =>
        withPrograms(({ listTasks }) =>
          listTasks({
            ...access,
            contextId: args.context_id,
            status: args.status,
            pageSize: args.page_size,
            pageToken: args.page_token
          })
        )),
      (r) => r.count === 0 ? "No tasks" : r.tasks.map((t) => `${t.task_id}: ${t.state}`).join("\n")
    ))
}
