// A deliberately broken A2A agent (v1.0 JSON-RPC only) with one planted fault per check: every
// fault in PLANTED_FAULTS must be reported by the check named next to it, and nothing else may fail.
import http from "node:http"
import { randomUUID } from "node:crypto"
import { closeServer, listenOnLoopback, readBodyText, sendJson, tryParseJson } from "../peers/httpUtil.js"

/** Planted fault → the check meant to report it. */
export const PLANTED_FAULTS = {
  "no Cache-Control or ETag on the card": "card.caching",
  "malformed JSON answered with -32600": "transport.parse-error",
  "unknown method answered without the request's id": "transport.method-not-found",
  "GetTask errors sent as text/plain": "transport.json-content-type",
  "A2A-Version 99.0 accepted": "transport.version-refused",
  "a message to an unknown task starts a new one": "messaging.unknown-task",
  "GetTask of an unknown id answered with -32603": "tasks.get-unknown",
  "ListTasks without nextPageToken": "tasks.list",
  "a finished task cancels again": "tasks.cancel-terminal",
  "the stream's last event has no closing blank line": "streaming.framing"
} as const

/** The card of the second stub: no interface at all. */
export const CARD_WITHOUT_INTERFACES_FAULT = "card.interfaces"

export interface BrokenAgent {
  readonly baseUrl: string
  /** How many requests reached it (the dry run must send none). */
  readonly requestCount: () => number
  close(): Promise<void>
}

const card = (baseUrl: string, withInterfaces: boolean) => ({
  name: "Broken agent",
  description: "Planted faults for relay check",
  version: "1.0.0",
  supportedInterfaces: withInterfaces ? [{ url: `${baseUrl}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }] : [],
  capabilities: { streaming: true, pushNotifications: false },
  defaultInputModes: ["text/plain"],
  defaultOutputModes: ["text/plain"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }]
})

const completedTask = (id: string, contextId: string) => ({
  id,
  contextId,
  status: { state: "TASK_STATE_COMPLETED", timestamp: new Date().toISOString() },
  history: [{ messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hi" }], taskId: id, contextId }]
})

type Params = Record<string, unknown> & { message?: { taskId?: string; contextId?: string; parts?: Array<unknown> }; id?: string }

export const startBrokenAgent = async (options: { readonly withInterfaces?: boolean } = {}): Promise<BrokenAgent> => {
  const tasks = new Map<string, ReturnType<typeof completedTask>>()
  let count = 0
  let baseUrl = ""
  const rpcError = (res: http.ServerResponse, id: unknown, code: number, message: string, contentType = "application/json") => {
    res.writeHead(200, { "content-type": contentType })
    res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }))
  }
  const result = (res: http.ServerResponse, id: unknown, value: unknown) => sendJson(res, 200, { jsonrpc: "2.0", id, result: value })

  const server = http.createServer(async (req, res) => {
    count++
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json") {
      res.writeHead(200, { "content-type": "application/json" })
      res.end(JSON.stringify(card(baseUrl, options.withInterfaces ?? true)))
      return
    }
    if (req.method !== "POST" || req.url !== "/rpc") return sendJson(res, 404, { error: "not found" })
    const body = tryParseJson(await readBodyText(req)) as { id?: unknown; method?: unknown; params?: Params } | undefined
    if (body === undefined) return rpcError(res, null, -32600, "bad")
    if (typeof body.method !== "string") return rpcError(res, body.id ?? null, -32600, "Invalid Request")
    const params: Params = body.params ?? {}
    switch (body.method) {
      case "SendMessage": {
        if ((params.message?.parts ?? []).length === 0) return rpcError(res, body.id, -32602, "Invalid params")
        const known = params.message?.taskId === undefined ? undefined : tasks.get(params.message.taskId)
        const task = completedTask(known?.id ?? randomUUID(), params.message?.contextId ?? randomUUID())
        tasks.set(task.id, task)
        return result(res, body.id, { task })
      }
      case "GetTask": {
        const task = tasks.get(String(params.id))
        if (task === undefined) return rpcError(res, body.id, -32603, "Internal error", "text/plain")
        const history = params["historyLength"] === 0 ? {} : { history: task.history }
        return result(res, body.id, { ...task, history: undefined, ...history })
      }
      case "SendStreamingMessage": {
        const task = completedTask(randomUUID(), randomUUID())
        tasks.set(task.id, task)
        const event = (value: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id: body.id, result: value })}\n`
        res.writeHead(200, { "content-type": "text/event-stream" })
        // The fault: the last event is not ended by a blank line.
        res.end(`${event({ task: { ...task, status: { state: "TASK_STATE_WORKING" } } })}\n${event({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } })}`)
        return
      }
      case "SubscribeToTask":
        return rpcError(res, body.id, -32001, "Task not found")
      case "ListTasks":
        return result(res, body.id, { tasks: [...tasks.values()] })
      case "CancelTask": {
        const task = tasks.get(String(params.id))
        if (task === undefined) return rpcError(res, body.id, -32001, "Task not found")
        return result(res, body.id, { ...task, status: { state: "TASK_STATE_CANCELED" } })
      }
      default:
        return rpcError(res, null, -32601, "Method not found")
    }
  })
  baseUrl = await listenOnLoopback(server)
  return { baseUrl, requestCount: () => count, close: () => closeServer(server) }
}
