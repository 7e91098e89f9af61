/**
 * Tool tasks (toolTasks.ts) on the 2025-11-25 wire, the experimental `tasks` capability, served by
 * the v2 SDK's McpServer in its legacy era: send_message and wait_for_task list `execution.taskSupport: "optional"`;
 * a `tools/call` with `params.task` answers a CreateTaskResult at once; `tasks/get` shows the task,
 * `tasks/result` waits for its end and returns the plain call's result (asking the user the
 * agent's question on the way, by an `elicitation/create` related to the task), `tasks/list` and
 * `tasks/cancel` (which cancels the agent's task) complete the set. Calls without `params.task`
 * run as before, untouched.
 *
 * The v2 SDK has no task layer of its own: the `tasks/*` handlers are plain request handlers, and
 * the tools' list and call handlers are wrapped as McpServer installs them.
 * Looked for in @modelcontextprotocol/server 2.4.0, missing: a public tools/call handler that may answer a task (its result is checked).
 */
import {
  type CallToolResult,
  type ListToolsResult,
  type McpServer,
  ProtocolError,
  ProtocolErrorCode,
  RELATED_TASK_META_KEY,
  type Task
} from "@modelcontextprotocol/server"
import * as z from "zod"
import type { ToolExtra } from "./progress.js"
import {
  type CallTool,
  canElicitForm,
  questionElicitation,
  replyTo,
  STEP_PROGRESS,
  TASK_TOOLS,
  type ToolTask,
  type ToolTasks,
  TooManyTasks
} from "./toolTasks.js"

type CallRequest = { readonly method: "tools/call"; readonly params: Record<string, unknown> & { name: string; task?: unknown } }
type Handler<R, A> = (request: R, extra: ToolExtra) => Promise<A>
export type CallHandler = Handler<CallRequest, CallToolResult | { task: Task }>
type ListHandler = Handler<unknown, ListToolsResult>

/** The capability a 2025-11-25 client reads before it asks for a task. */
export const LEGACY_TASKS_CAPABILITY = { list: {}, cancel: {}, requests: { tools: { call: {} } } }

/** A tool task as a 2025-11-25 Task. */
export const legacyTask = (view: ToolTask): Task => ({
  taskId: view.taskId,
  status: view.status,
  ...(view.statusMessage === undefined ? {} : { statusMessage: view.statusMessage }),
  createdAt: view.createdAt,
  lastUpdatedAt: view.lastUpdatedAt,
  ttl: view.ttlMs,
  pollInterval: view.pollIntervalMs
})

/** The params of tasks/get, tasks/cancel and tasks/result. */
const ABOUT_A_TASK = { params: z.looseObject({ taskId: z.string() }) }

const notFound = (taskId: string) =>
  new ProtocolError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${taskId})`)

/** Runs a plain tool call through McpServer's own handler (validation, coded failures), with its progress heard. */
export const callThrough = (call: CallHandler, extra: ToolExtra): CallTool => (name, args, signal, say) => {
  const meta = { ...extra.mcpReq._meta, progressToken: STEP_PROGRESS }
  // A step outlives the request that started it, and asks the user nothing itself: the task's
  // questions are asked through tasks/result.
  const noRequests = () => Promise.reject(new ProtocolError(ProtocolErrorCode.InvalidRequest, "A task step sends no requests"))
  const step: ToolExtra = {
    ...extra,
    mcpReq: {
      ...extra.mcpReq,
      signal,
      _meta: meta,
      notify: (notification) => {
        if (notification.method === "notifications/progress") say(String(notification.params?.["message"] ?? ""))
        return Promise.resolve()
      },
      send: noRequests as ToolExtra["mcpReq"]["send"],
      elicitInput: noRequests,
      requestSampling: noRequests
    }
  }
  return call({ method: "tools/call", params: { name, arguments: args, _meta: meta } }, step)
    .then((result) => ("task" in result ? Promise.reject(new Error("A task step made a task")) : result))
}

const withTaskListed = (list: ListHandler): ListHandler => async (request, extra) => {
  const listed = await list(request, extra)
  return {
    ...listed,
    tools: listed.tools.map((tool) => (TASK_TOOLS.includes(tool.name) ? { ...tool, execution: { taskSupport: "optional" } } : tool))
  }
}

const withTaskCalls = (server: McpServer, tasks: ToolTasks, call: CallHandler): CallHandler => async (request, extra) => {
  if (request.params.task === undefined) return call(request, extra)
  const name = request.params.name
  if (!TASK_TOOLS.includes(name)) throw new ProtocolError(ProtocolErrorCode.MethodNotFound, `Tool ${name} does not run as a task`)
  const args = request.params.arguments
  try {
    const started = await tasks.start({
      tool: name,
      args: typeof args === "object" && args !== null ? args as Record<string, unknown> : {},
      callTool: callThrough(call, extra),
      canAsk: canElicitForm(server.server.getClientCapabilities()),
      owner: extra.sessionId,
      always: true,
      signal: extra.mcpReq.signal
    })
    if (started._tag === "Plain") throw new Error("A task call settled without its task")
    return { task: legacyTask(started.task) }
  } catch (error) {
    if (error instanceof TooManyTasks) throw new ProtocolError(ProtocolErrorCode.InvalidRequest, error.message)
    throw error
  }
}

/**
 * The SDK checks a `tools/call` handler's result against CallToolResult, which a task handle
 * (CreateTaskResult) is not: the checked handler it installed is wrapped where it is kept, so
 * plain calls still go through the check and task calls answer their handle. That map is not in
 * the typings; if a later SDK moves it, task calls fail the check (the tests notice).
 */
export const answerTasksBesideValidation = (protocol: object, withTasks: (call: CallHandler) => CallHandler) => {
  const handlers: unknown = Reflect.get(protocol, "_requestHandlers")
  const checked = handlers instanceof Map ? handlers.get("tools/call") as CallHandler | undefined : undefined
  if (checked !== undefined) (handlers as Map<string, CallHandler>).set("tools/call", withTasks(checked))
}

/**
 * Makes `server` serve tool tasks from `tasks`. Call it before the tools are registered (it
 * wraps the handlers McpServer installs then) and before the server connects.
 */
export const serveLegacyTasks = (server: McpServer, tasks: ToolTasks) => {
  const protocol = server.server
  protocol.registerCapabilities({ tasks: LEGACY_TASKS_CAPABILITY })
  const install = protocol.setRequestHandler.bind(protocol) as (method: string, ...rest: ReadonlyArray<unknown>) => void
  protocol.setRequestHandler = ((method: string, ...rest: ReadonlyArray<never>) => {
    if (method === "tools/list" && rest.length === 1) return install(method, withTaskListed(rest[0]!))
    if (method === "tools/call" && rest.length === 1) {
      install(method, rest[0]!)
      return answerTasksBesideValidation(protocol, withTaskCalls.bind(null, server, tasks))
    }
    return install(method, ...rest)
  }) as typeof protocol.setRequestHandler

  const owned = (taskId: string, extra: ToolExtra) => {
    const view = tasks.get(taskId, extra.sessionId)
    if (view === undefined) throw notFound(taskId)
    return view
  }

  // The 2025-11-25 codec knows the tasks/* methods; the SDK keeps no handlers of its own for them.
  protocol.setRequestHandler("tasks/get", ABOUT_A_TASK, (params, extra) => Promise.resolve(legacyTask(owned(params.taskId, extra))))

  protocol.setRequestHandler(
    "tasks/list",
    { params: z.looseObject({}) },
    (_params, extra) => Promise.resolve({ tasks: tasks.list(extra.sessionId).map(legacyTask) })
  )

  protocol.setRequestHandler("tasks/cancel", ABOUT_A_TASK, async (params, extra) => {
    const { taskId } = params
    const view = owned(taskId, extra)
    if (view.status !== "working" && view.status !== "input_required") {
      throw new ProtocolError(ProtocolErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${view.status}`)
    }
    const cancelled = await tasks.cancel(taskId, extra.sessionId, extra.mcpReq.signal)
    return legacyTask(cancelled ?? view)
  })

  // Waits for the end; the agent's questions are asked of the user on the way (related to the task).
  protocol.setRequestHandler("tasks/result", ABOUT_A_TASK, async (params, extra) => {
    const { taskId } = params
    const signal = extra.mcpReq.signal
    for (;;) {
      const view = await tasks.settled(taskId, extra.sessionId, signal)
      if (view === undefined) throw signal.aborted ? new ProtocolError(ProtocolErrorCode.InternalError, "Cancelled") : notFound(taskId)
      if (view.status === "input_required" && view.question !== undefined) {
        const answer = replyTo(
          view.question,
          await extra.mcpReq.elicitInput({ ...questionElicitation(view.question), _meta: { [RELATED_TASK_META_KEY]: { taskId } } })
        )
        if (answer === undefined) tasks.decline(taskId, extra.sessionId, view.question.key)
        else tasks.answer(taskId, extra.sessionId, view.question.key, answer)
        continue
      }
      const result = view.result ?? { content: [{ type: "text", text: view.statusMessage ?? view.status }] }
      return { ...result, _meta: { ...result._meta, [RELATED_TASK_META_KEY]: { taskId } } }
    }
  })

  // A closed session's tasks can be reached no more: their follows stop (the agents' tasks go on),
  // however it closed (stdin's end, an HTTP DELETE, eviction, the server stopping).
  const connect = server.connect.bind(server)
  server.connect = async (transport) => {
    await connect(transport)
    const closed = transport.onclose
    transport.onclose = () => {
      tasks.close()
      closed?.()
    }
  }
}
