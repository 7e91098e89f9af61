/**
 * Tool tasks (toolTasks.ts) on the 2025-11-25 wire, the experimental `tasks` capability, served by
 * the 1.x SDK's McpServer: send_message and wait_for_task list `execution.taskSupport: "optional"`;
 * a `tools/call` with `params.task` answers a CreateTaskResult at once; `tasks/get` shows the task,
 * `tasks/result` waits for its end and returns the plain call's result (asking the user the
 * agent's question on the way, by an `elicitation/create` related to the task), `tasks/list` and
 * `tasks/cancel` (which cancels the agent's task) complete the set. Calls without `params.task`
 * run as before, untouched.
 *
 * The SDK's own task layer (a TaskStore, automatic polling) is left off: it would reroute plain
 * calls. Instead the tools' list and call handlers are wrapped as McpServer installs them.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import {
  CallToolRequestSchema,
  type CallToolResult,
  CancelTaskRequestSchema,
  ElicitResultSchema,
  ErrorCode,
  GetTaskPayloadRequestSchema,
  GetTaskRequestSchema,
  ListTasksRequestSchema,
  ListToolsRequestSchema,
  type ListToolsResult,
  McpError,
  RELATED_TASK_META_KEY,
  type Task
} from "@modelcontextprotocol/sdk/types.js"
import type { ToolExtra } from "./progress.js"
import {
  answerOf,
  type CallTool,
  canElicitForm,
  questionForm,
  TASK_TOOLS,
  type ToolTask,
  type ToolTasks,
  TooManyTasks
} from "./toolTasks.js"

type CallRequest = { readonly method: "tools/call"; readonly params: Record<string, unknown> & { name: string; task?: unknown } }
type Handler<R, A> = (request: R, extra: ToolExtra) => Promise<A>
type CallHandler = Handler<CallRequest, CallToolResult | { task: Task }>
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

const notFound = (taskId: string) => new McpError(ErrorCode.InvalidParams, `Failed to retrieve task: Task not found (${taskId})`)

/** The progress token of a task's own steps: their progress becomes the task's status message. */
const STEP_PROGRESS = "a2a-relay/task-step"

/** Runs a plain tool call through McpServer's own handler (validation, coded failures), with its progress heard. */
const callThrough = (call: CallHandler, extra: ToolExtra): CallTool => (name, args, signal, say) =>
  call(
    { method: "tools/call", params: { name, arguments: args, _meta: { progressToken: STEP_PROGRESS } } },
    {
      ...extra,
      signal,
      _meta: { progressToken: STEP_PROGRESS },
      sendNotification: (notification) => {
        if (notification.method === "notifications/progress") say(notification.params.message ?? "")
        return Promise.resolve()
      },
      // A step outlives the request that started it, and asks the user nothing itself: the task's
      // questions are asked through tasks/result.
      sendRequest: () => Promise.reject(new McpError(ErrorCode.InvalidRequest, "A task step sends no requests"))
    }
  ).then((result) => ("task" in result ? Promise.reject(new Error("A task step made a task")) : result))

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
  if (!TASK_TOOLS.includes(name)) throw new McpError(ErrorCode.MethodNotFound, `Tool ${name} does not run as a task`)
  const args = request.params.arguments
  try {
    const started = await tasks.start({
      tool: name,
      args: typeof args === "object" && args !== null ? args as Record<string, unknown> : {},
      callTool: callThrough(call, extra),
      canAsk: canElicitForm(server.server.getClientCapabilities()),
      owner: extra.sessionId,
      always: true,
      signal: extra.signal
    })
    if (started._tag === "Plain") throw new Error("A task call settled without its task")
    return { task: legacyTask(started.task) }
  } catch (error) {
    if (error instanceof TooManyTasks) throw new McpError(ErrorCode.InvalidRequest, error.message)
    throw error
  }
}

/**
 * Makes `server` serve tool tasks from `tasks`. Call it before the tools are registered (it
 * wraps the handlers McpServer installs then) and before the server connects.
 */
export const serveLegacyTasks = (server: McpServer, tasks: ToolTasks) => {
  const protocol = server.server
  protocol.registerCapabilities({ tasks: LEGACY_TASKS_CAPABILITY })
  const install = protocol.setRequestHandler.bind(protocol)
  protocol.setRequestHandler = ((schema: unknown, handler: never) => {
    if (schema === ListToolsRequestSchema) return install(ListToolsRequestSchema, withTaskListed(handler) as never)
    if (schema === CallToolRequestSchema) return install(CallToolRequestSchema, withTaskCalls(server, tasks, handler) as never)
    return install(schema as typeof ListToolsRequestSchema, handler)
  }) as typeof protocol.setRequestHandler

  const owned = (taskId: string, extra: ToolExtra) => {
    const view = tasks.get(taskId, extra.sessionId)
    if (view === undefined) throw notFound(taskId)
    return view
  }

  install(GetTaskRequestSchema, (request, extra) => Promise.resolve(legacyTask(owned(request.params.taskId, extra))))

  install(ListTasksRequestSchema, (_request, extra) => Promise.resolve({ tasks: tasks.list(extra.sessionId).map(legacyTask) }))

  install(CancelTaskRequestSchema, async (request, extra) => {
    const { taskId } = request.params
    const view = owned(taskId, extra)
    if (view.status !== "working" && view.status !== "input_required") {
      throw new McpError(ErrorCode.InvalidParams, `Cannot cancel task in terminal status: ${view.status}`)
    }
    const cancelled = await tasks.cancel(taskId, extra.sessionId, extra.signal)
    return legacyTask(cancelled ?? view)
  })

  // Waits for the end; the agent's questions are asked of the user on the way (related to the task).
  install(GetTaskPayloadRequestSchema, async (request, extra) => {
    const { taskId } = request.params
    for (;;) {
      const view = await tasks.settled(taskId, extra.sessionId, extra.signal)
      if (view === undefined) throw extra.signal.aborted ? new McpError(ErrorCode.RequestTimeout, "Cancelled") : notFound(taskId)
      if (view.status === "input_required" && view.question !== undefined) {
        const reply = await extra.sendRequest(
          { method: "elicitation/create", params: { ...questionForm(view.question), _meta: { [RELATED_TASK_META_KEY]: { taskId } } } },
          ElicitResultSchema
        )
        const answer = answerOf(reply)
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
