/**
 * Tool tasks (toolTasks.ts) in the words of the 2026-07-28 `io.modelcontextprotocol/tasks`
 * extension (SEP-2663): a client that lists the extension in a request's per-request
 * capabilities may get a CreateTaskResult (`resultType: "task"`) for send_message or
 * wait_for_task, polls `tasks/get` (the result, or the agent's question as an `elicitation/create`
 * input request, inlined), answers with `tasks/update` and cancels with `tasks/cancel`.
 *
 * The functions below `serveTasksExtension` are free of any SDK: they take a request's method,
 * params and `_meta` (with the per-request envelope), and return a result or throw the JSON-RPC
 * error to answer. `serveTasksExtension` plugs them into a 2026-07-28 server of the v2 SDK.
 */
import { type CallToolResult, type McpServer, ProtocolError } from "@modelcontextprotocol/server"
import * as z from "zod"
import { answerTasksBesideValidation, type CallHandler, callThrough } from "./legacyTasks.js"
import type { ToolExtra } from "./progress.js"
import {
  type CallTool,
  canElicitForm,
  questionElicitation,
  replyTo,
  TASK_TOOLS,
  type ToolTask,
  type ToolTasks,
  TooManyTasks
} from "./toolTasks.js"

export const TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
const CLIENT_CAPABILITIES_META = "io.modelcontextprotocol/clientCapabilities"

/** JSON-RPC error codes this wire answers with. */
const INVALID_PARAMS = -32602
const MISSING_REQUIRED_CLIENT_CAPABILITY = -32021

/** A JSON-RPC error for the server to answer the request with. */
export class TasksWireError extends Error {
  constructor(readonly code: number, message: string, readonly data?: unknown) {
    super(message)
  }
}

/** The capabilities a 2026 client sends with a request (in its `_meta`). */
interface ClientCapabilities {
  readonly extensions?: Record<string, unknown> | undefined
  readonly elicitation?: { readonly form?: unknown; readonly url?: unknown } | undefined
}

const capabilitiesOf = (meta: Record<string, unknown> | undefined): ClientCapabilities | undefined => {
  const capabilities = meta?.[CLIENT_CAPABILITIES_META]
  return typeof capabilities === "object" && capabilities !== null ? capabilities as ClientCapabilities : undefined
}

/** Whether the request's client declared the tasks extension (only then may it get a task). */
export const declaresTasks = (meta: Record<string, unknown> | undefined) => {
  const extensions = capabilitiesOf(meta)?.extensions
  return typeof extensions === "object" && extensions !== null && TASKS_EXTENSION in extensions
}

/** What `server/discover` adds to the server's capabilities. */
export const TASKS_CAPABILITY = { extensions: { [TASKS_EXTENSION]: {} } }

/** The task fields every answer about a task carries. */
const taskFields = (view: ToolTask) => ({
  taskId: view.taskId,
  // Relay's tool calls answer failures as results, never as JSON-RPC errors, and this extension
  // keeps `failed` for those: a failed or rejected agent task ends `completed` with the plain
  // result (its `state` and statusMessage say how it ended), as an isError result does.
  status: view.status === "failed" ? "completed" as const : view.status,
  ...(view.statusMessage === undefined ? {} : { statusMessage: view.statusMessage }),
  createdAt: view.createdAt,
  lastUpdatedAt: view.lastUpdatedAt,
  ttlMs: view.ttlMs,
  pollIntervalMs: view.pollIntervalMs
})

export const createTaskResult = (view: ToolTask) => ({ resultType: "task" as const, ...taskFields(view) })

/** `tasks/get`'s answer: the task with its result when ended, or its question as an input request. */
export const detailedTask = (view: ToolTask) => {
  const fields = { resultType: "complete" as const, ...taskFields(view) }
  if (view.status === "input_required" && view.question !== undefined) {
    return {
      ...fields,
      inputRequests: { [view.question.key]: { method: "elicitation/create", params: questionElicitation(view.question) } }
    }
  }
  if ((view.status === "completed" || view.status === "failed") && view.result !== undefined) {
    // The result as the call would have answered it on this era's wire: with its resultType
    // (the extension's own client refuses it without).
    return { ...fields, result: { resultType: "complete" as const, ...view.result } }
  }
  return fields
}

const ACKNOWLEDGED = { resultType: "complete" as const }

/** A `tools/call` the server may answer with a task: its name, arguments and `_meta`, and how to run it plain. */
export interface TaskableCall {
  readonly name: string
  readonly args: Record<string, unknown>
  readonly meta: Record<string, unknown> | undefined
  readonly callTool: CallTool
  readonly signal: AbortSignal
}

/**
 * A `tools/call` from a client that declared the extension: send_message and wait_for_task wait
 * briefly, then answer a CreateTaskResult if the agent still works; undefined for every other
 * call (the server runs it as always).
 */
export const callAsTask = async (
  tasks: ToolTasks,
  call: TaskableCall
): Promise<CallToolResult | ReturnType<typeof createTaskResult> | undefined> => {
  if (!declaresTasks(call.meta) || !TASK_TOOLS.includes(call.name)) return undefined
  try {
    const started = await tasks.start({
      tool: call.name,
      args: call.args,
      callTool: call.callTool,
      canAsk: canElicitForm(capabilitiesOf(call.meta)),
      owner: undefined,
      always: false,
      signal: call.signal
    })
    return started._tag === "Plain" ? started.result : createTaskResult(started.task)
  } catch (error) {
    // Full: the call runs plain, with its bounded wait, as for a client without the extension.
    if (error instanceof TooManyTasks) return undefined
    throw error
  }
}

const taskIdOf = (params: unknown) => {
  const taskId = typeof params === "object" && params !== null ? (params as { taskId?: unknown }).taskId : undefined
  if (typeof taskId !== "string") throw new TasksWireError(INVALID_PARAMS, "taskId is required")
  return taskId
}

const found = (tasks: ToolTasks, taskId: string) => {
  const view = tasks.get(taskId, undefined)
  if (view === undefined) throw new TasksWireError(INVALID_PARAMS, "Failed to retrieve task: Task not found")
  return view
}

export const TASK_METHODS = ["tasks/get", "tasks/update", "tasks/cancel"] as const
export type TaskMethod = (typeof TASK_METHODS)[number]

/**
 * Answers `tasks/get`, `tasks/update` or `tasks/cancel` (TaskMethod), or throws the
 * TasksWireError to answer instead. Task ids are unguessable and the only key: the era has no sessions.
 */
export const answerTaskRequest = async (
  tasks: ToolTasks,
  request: { readonly method: TaskMethod; readonly params: unknown; readonly meta: Record<string, unknown> | undefined },
  signal: AbortSignal
) => {
  if (!declaresTasks(request.meta)) {
    throw new TasksWireError(MISSING_REQUIRED_CLIENT_CAPABILITY, "Missing required client capability", {
      requiredCapabilities: TASKS_CAPABILITY
    })
  }
  const taskId = taskIdOf(request.params)
  const view = found(tasks, taskId)
  switch (request.method) {
    case "tasks/get":
      return detailedTask(view)
    case "tasks/update": {
      const responses = (request.params as { inputResponses?: unknown }).inputResponses
      if (typeof responses !== "object" || responses === null) throw new TasksWireError(INVALID_PARAMS, "inputResponses is required")
      for (const [key, response] of Object.entries(responses)) {
        // Answers to keys not outstanding are ignored, as the extension asks.
        const question = view.question?.key === key ? view.question : undefined
        if (question === undefined) continue
        const reply = typeof response === "object" && response !== null ? replyTo(question, response) : undefined
        if (reply === undefined) tasks.decline(taskId, undefined, key)
        else tasks.answer(taskId, undefined, key, reply)
      }
      return ACKNOWLEDGED
    }
    case "tasks/cancel":
      await tasks.cancel(taskId, undefined, signal)
      return ACKNOWLEDGED
  }
}

/** A request's `_meta` with its 2026-07-28 envelope (the SDK lifts the envelope's keys out of `_meta`). */
const metaOf = (extra: ToolExtra): Record<string, unknown> => ({ ...extra.mcpReq._meta, ...extra.mcpReq.envelope })

const withExtensionCalls = (tasks: ToolTasks, call: CallHandler): CallHandler => async (request, extra) => {
  const args = request.params["arguments"]
  const answered = await callAsTask(tasks, {
    name: request.params.name,
    args: typeof args === "object" && args !== null ? args as Record<string, unknown> : {},
    meta: metaOf(extra),
    callTool: callThrough(call, extra),
    signal: extra.mcpReq.signal
  })
  return (answered ?? await call(request, extra)) as CallToolResult
}

/**
 * Makes a 2026-07-28 `server` serve the tasks extension from `tasks` (shared by every request's
 * server: the era has no sessions). Call it before the tools are registered and before it connects.
 */
export const serveTasksExtension = (server: McpServer, tasks: ToolTasks) => {
  const protocol = server.server
  protocol.registerCapabilities(TASKS_CAPABILITY)
  const install = protocol.setRequestHandler.bind(protocol) as (method: string, ...rest: ReadonlyArray<unknown>) => void
  protocol.setRequestHandler = ((method: string, ...rest: ReadonlyArray<never>) => {
    install(method, ...rest)
    if (method === "tools/call" && rest.length === 1) answerTasksBesideValidation(protocol, (call) => withExtensionCalls(tasks, call))
  }) as typeof protocol.setRequestHandler
  for (const method of TASK_METHODS) {
    install(
      method,
      { params: z.looseObject({}) },
      // The SDK lifts a request's inputResponses (tasks/update's answers) out of its params.
      (params: object, extra: ToolExtra) =>
        answerTaskRequest(
          tasks,
          { method, params: { inputResponses: extra.mcpReq.inputResponses, ...params }, meta: metaOf(extra) },
          extra.mcpReq.signal
        ).catch((error: unknown) => {
          throw error instanceof TasksWireError ? new ProtocolError(error.code, error.message, error.data) : error
        })
    )
  }
}
