// A small A2A agent (v1.0 JSON-RPC only) that does everything relay check looks at, except for the
// faults it is started with: every planted fault must be reported by the checks named next to it,
// and nothing else may fail. It takes file and data parts, and echoes file parts in its answer. Tasks sent with returnImmediately work for WORK_MS, in two artifact
// chunks, so the checks that need a working task run too.
import { randomUUID } from "node:crypto"
import http from "node:http"
import { closeServer, listenOnLoopback, readBodyText, sendJson, tryParseJson } from "../peers/httpUtil.js"

/** Planted fault → the checks meant to report it. */
export const FAULTS = {
  "no Cache-Control or ETag on the card": ["card.caching"],
  "malformed JSON answered with -32600": ["transport.parse-error"],
  "unknown method answered without the request's id": ["transport.method-not-found"],
  "GetTask errors sent as text/plain": ["transport.json-content-type"],
  "A2A-Version 99.0 accepted": ["transport.version-refused"],
  "a message to an unknown task starts a new one": ["messaging.unknown-task"],
  "GetTask of an unknown id answered with -32603": ["tasks.get-unknown"],
  "ListTasks without nextPageToken": ["tasks.list", "tasks.list-pages"],
  "a finished task cancels again": ["tasks.cancel-terminal"],
  "the stream's last event has no closing blank line": ["streaming.framing"],
  "a follow-up to a task waiting for input is refused": ["messaging.follow-up-input-required"],
  "a message to a working task is refused": ["messaging.follow-up-working"],
  "ListTasks ignores contextId, status and statusTimestampAfter": ["tasks.list-filters"],
  "ListTasks ignores pageSize": ["tasks.list-pages"],
  "ListTasks keeps the history for historyLength 0": ["tasks.list-history-length"],
  "ListTasks sends artifacts without includeArtifacts": ["tasks.list-artifacts"],
  "a negative historyLength is taken": ["tasks.negative-history-length"],
  "a statusTimestampAfter that is no timestamp is taken": ["tasks.list-invalid-timestamp"],
  "a subscription sends the last artifact chunk twice": ["streaming.subscribe-live"],
  "GetTask with historyLength 0 answers something that is not a task": ["tasks.history-length"],
  "tasks are answered in state TASK_STATE_WEIRD": ["messaging.task-shape"],
  "a streaming message is answered with plain JSON": ["streaming.content-type"],
  "a file part is refused with ContentTypeNotSupported": ["messaging.file-part"],
  "a data part is refused as invalid params": ["messaging.data-part"],
  "answered file parts carry both bytes and a URL": ["messaging.answer-file-parts"],
  // A SHOULD the check only warns about: not in the planted sets, whose checks fail.
  "answered file parts have no media type": ["messaging.answer-file-parts"]
} as const satisfies Record<string, ReadonlyArray<string>>

export type Fault = keyof typeof FAULTS

/** The faults of the first broken agent, planted together. */
export const PLANTED_FAULTS: ReadonlyArray<Fault> = [
  "no Cache-Control or ETag on the card",
  "malformed JSON answered with -32600",
  "unknown method answered without the request's id",
  "GetTask errors sent as text/plain",
  "A2A-Version 99.0 accepted",
  "a message to an unknown task starts a new one",
  "GetTask of an unknown id answered with -32603",
  "ListTasks without nextPageToken",
  "a finished task cancels again",
  "the stream's last event has no closing blank line"
]

/** What the follow-up, ListTasks and subscription checks look at, planted together too. */
export const TASK_FAULTS: ReadonlyArray<Fault> = [
  "a follow-up to a task waiting for input is refused",
  "a message to a working task is refused",
  "ListTasks ignores contextId, status and statusTimestampAfter",
  "ListTasks ignores pageSize",
  "ListTasks keeps the history for historyLength 0",
  "ListTasks sends artifacts without includeArtifacts",
  "a negative historyLength is taken",
  "a statusTimestampAfter that is no timestamp is taken",
  "a subscription sends the last artifact chunk twice"
]

/** What the part checks look at, planted together (a refused file leaves no answer to judge: planted alone). */
export const PART_FAULTS: ReadonlyArray<Fault> = [
  "a data part is refused as invalid params",
  "answered file parts carry both bytes and a URL"
]

/** The checks the faults are meant for. */
export const checksFor = (faults: ReadonlyArray<Fault>): ReadonlyArray<string> =>
  [...new Set(faults.flatMap((fault) => FAULTS[fault]))].sort()

/** How long a task sent with returnImmediately works before it completes. */
export const WORK_MS = 300

export interface BrokenAgentOptions {
  /** Default PLANTED_FAULTS. */
  readonly faults?: ReadonlyArray<Fault>
  /** The card declares no interface at all. */
  readonly withInterfaces?: boolean
  /** Serve the card only here, not at the well-known path. */
  readonly cardPath?: string
  /** No card anywhere. */
  readonly noCard?: boolean
  /** Write the card in v0.3's shape (url, preferredTransport, protocolVersion 0.3.0). */
  readonly v03Card?: boolean
  /** The card's defaultInputModes (default: text, JSON and PNG, all of which it takes and echoes). */
  readonly inputModes?: ReadonlyArray<string>
}

export interface BrokenAgent {
  readonly baseUrl: string
  /** How many requests reached it (the dry run must send none). */
  readonly requestCount: () => number
  close(): Promise<void>
}

export const WELL_KNOWN_CARD = "/.well-known/agent-card.json"

export const DEFAULT_INPUT_MODES = ["text/plain", "application/json", "image/png"]

const card = (baseUrl: string, options: BrokenAgentOptions) => {
  const common = {
    name: "Broken agent",
    description: "Planted faults for relay check",
    version: "1.0.0",
    capabilities: { streaming: true, pushNotifications: false },
    defaultInputModes: options.inputModes ?? DEFAULT_INPUT_MODES,
    defaultOutputModes: ["text/plain", "image/png"],
    skills: [{ id: "echo", name: "Echo", description: "Echoes", tags: ["echo"] }]
  }
  if (options.v03Card === true) return { ...common, url: `${baseUrl}/rpc`, preferredTransport: "JSONRPC", protocolVersion: "0.3.0" }
  const supportedInterfaces = options.withInterfaces === false
    ? []
    : [{ url: `${baseUrl}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]
  return { ...common, supportedInterfaces }
}

type Json = Record<string, unknown>

interface StoredTask {
  id: string
  contextId: string
  status: { state: string; timestamp: string }
  history: Array<Json>
  artifacts?: Array<Json>
}

type Params = Json & {
  message?: Json & { taskId?: string; contextId?: string; parts?: Array<unknown> }
  configuration?: { returnImmediately?: boolean }
}

const TERMINAL = ["TASK_STATE_COMPLETED", "TASK_STATE_CANCELED", "TASK_STATE_FAILED", "TASK_STATE_REJECTED"]

const textOf = (message: Params["message"]) =>
  (message?.parts ?? []).map((part) => (typeof part === "object" && part !== null && "text" in part ? String(part.text) : "")).join("")

const partsWith = (message: Params["message"], key: "raw" | "url" | "data") =>
  (message?.parts ?? []).filter((part): part is Json => typeof part === "object" && part !== null && key in part)

/** The message's file parts, as its answer echoes them. */
const filesOf = (message: Params["message"]) => [...partsWith(message, "raw"), ...partsWith(message, "url")]

const artifactEvent = (task: StoredTask, text: string, append: boolean) => ({
  artifactUpdate: {
    taskId: task.id,
    contextId: task.contextId,
    artifact: { artifactId: "answer", parts: [{ text }] },
    append,
    lastChunk: append
  }
})

const statusEvent = (task: StoredTask) => ({ statusUpdate: { taskId: task.id, contextId: task.contextId, status: task.status } })

/** The task as GetTask / ListTasks present it. */
const presented = (task: StoredTask, historyLength: number | undefined, withArtifacts: boolean): Json => {
  const { history, artifacts, ...rest } = task
  const kept = historyLength === undefined ? history : historyLength === 0 ? [] : history.slice(-historyLength)
  return { ...rest, ...(kept.length === 0 ? {} : { history: kept }), ...(withArtifacts && artifacts !== undefined ? { artifacts } : {}) }
}

export const startBrokenAgent = async (options: BrokenAgentOptions = {}): Promise<BrokenAgent> => {
  const faults = new Set<Fault>(options.faults ?? PLANTED_FAULTS)
  const has = (fault: Fault) => faults.has(fault)
  const tasks = new Map<string, StoredTask>()
  const listeners = new Map<string, Set<(event: Json) => void>>()
  const timers = new Set<NodeJS.Timeout>()
  let count = 0
  let baseUrl = ""
  let clock = Date.now()
  // Every change gets its own millisecond, so time order is strict and the filters can tell tasks apart.
  const stamp = () => new Date(clock = Math.max(clock + 1, Date.now())).toISOString()
  const shownState = (state: string) => (has("tasks are answered in state TASK_STATE_WEIRD") ? "TASK_STATE_WEIRD" : state)

  const publish = (task: StoredTask, event: Json) => {
    for (const listener of listeners.get(task.id) ?? []) listener(event)
  }
  const setState = (task: StoredTask, state: string) => {
    task.status = { state, timestamp: stamp() }
    publish(task, statusEvent(task))
  }
  const addChunk = (task: StoredTask, text: string, append: boolean) => {
    const previous = append ? String((task.artifacts?.[0]?.["parts"] as Array<Json> | undefined)?.[0]?.["text"] ?? "") : ""
    task.artifacts = [{ artifactId: "answer", parts: [{ text: `${previous}${text}` }] }]
    publish(task, artifactEvent(task, text, append))
  }
  const later = (ms: number, run: () => void) => {
    const timer = setTimeout(() => {
      timers.delete(timer)
      run()
    }, ms)
    timers.add(timer)
  }
  // A working task: one chunk half way, the last chunk and completion at WORK_MS.
  const work = (task: StoredTask) => {
    later(WORK_MS / 2, () => task.status.state === "TASK_STATE_WORKING" && addChunk(task, "echo: ", false))
    later(WORK_MS, () => {
      if (task.status.state !== "TASK_STATE_WORKING") return
      addChunk(task, "done", true)
      setState(task, "TASK_STATE_COMPLETED")
    })
  }
  const echoedFile = (file: Json): Json => {
    const { mediaType: _mediaType, ...untyped } = file
    const shaped = has("answered file parts have no media type") ? untyped : file
    return has("answered file parts carry both bytes and a URL") ? { ...shaped, url: "https://files.example/relay-check" } : shaped
  }
  const complete = (task: StoredTask, text: string, files: ReadonlyArray<Json> = []) => {
    task.artifacts = [{ artifactId: "answer", parts: [{ text: `echo: ${text}` }, ...files.map(echoedFile)] }]
    task.status = { state: "TASK_STATE_COMPLETED", timestamp: stamp() }
  }
  const newTask = (message: Json, contextId: string | undefined): StoredTask => {
    const task: StoredTask = {
      id: randomUUID(),
      contextId: contextId ?? randomUUID(),
      status: { state: "TASK_STATE_SUBMITTED", timestamp: stamp() },
      history: []
    }
    task.history.push({ ...message, taskId: task.id, contextId: task.contextId })
    tasks.set(task.id, task)
    return task
  }

  const rpcError = (res: http.ServerResponse, id: unknown, code: number, message: string, contentType = "application/json") => {
    res.writeHead(200, { "content-type": contentType })
    res.end(JSON.stringify({ jsonrpc: "2.0", id, error: { code, message } }))
  }
  const result = (res: http.ServerResponse, id: unknown, value: unknown) => sendJson(res, 200, { jsonrpc: "2.0", id, result: value })
  const invalid = (
    res: http.ServerResponse,
    id: unknown,
    fault: Fault
  ) => (has(fault) ? false : (rpcError(res, id, -32602, "Invalid params"), true))
  const taskAnswer = (task: StoredTask) => ({
    ...presented(task, undefined, true),
    status: { ...task.status, state: shownState(task.status.state) }
  })

  const sendMessage = (res: http.ServerResponse, id: unknown, params: Params) => {
    const message = params.message ?? {}
    const parts = message.parts ?? []
    if (parts.length === 0) return rpcError(res, id, -32602, "Invalid params")
    if (filesOf(message).length > 0 && has("a file part is refused with ContentTypeNotSupported")) {
      return rpcError(res, id, -32005, "Incompatible content types")
    }
    if (partsWith(message, "data").length > 0 && has("a data part is refused as invalid params")) {
      return rpcError(res, id, -32602, "Invalid params")
    }
    const known = message.taskId === undefined ? undefined : tasks.get(message.taskId)
    if (message.taskId !== undefined && known === undefined && !has("a message to an unknown task starts a new one")) {
      return rpcError(res, id, -32001, "Task not found")
    }
    if (known !== undefined) {
      const state = known.status.state
      if (TERMINAL.includes(state)) return rpcError(res, id, -32004, "Task is finished")
      const refused = state === "TASK_STATE_INPUT_REQUIRED"
        ? "a follow-up to a task waiting for input is refused"
        : "a message to a working task is refused"
      if (has(refused)) return rpcError(res, id, -32004, "Not now")
      known.history.push({ ...message, taskId: known.id, contextId: known.contextId })
      // Waiting for input: the follow-up completes it; working: it is read when the turn ends.
      if (state === "TASK_STATE_INPUT_REQUIRED") complete(known, textOf(message))
      return result(res, id, { task: taskAnswer(known) })
    }
    const task = newTask(message, message.contextId)
    if (textOf(message) === "input-required") task.status = { state: "TASK_STATE_INPUT_REQUIRED", timestamp: stamp() }
    else if (params.configuration?.returnImmediately === true) {
      task.status = { state: "TASK_STATE_WORKING", timestamp: stamp() }
      work(task)
    } else complete(task, textOf(message), filesOf(message))
    return result(res, id, { task: taskAnswer(task) })
  }

  const getTask = (res: http.ServerResponse, id: unknown, params: Params) => {
    const task = tasks.get(String(params["id"]))
    if (task === undefined) {
      const code = has("GetTask of an unknown id answered with -32603") ? -32603 : -32001
      return rpcError(res, id, code, "No such task", has("GetTask errors sent as text/plain") ? "text/plain" : "application/json")
    }
    const historyLength = typeof params["historyLength"] === "number" ? params["historyLength"] : undefined
    if (historyLength !== undefined && historyLength < 0 && invalid(res, id, "a negative historyLength is taken")) return
    if (historyLength === 0 && has("GetTask with historyLength 0 answers something that is not a task")) {
      return result(res, id, { ok: true })
    }
    return result(res, id, presented(task, historyLength, true))
  }

  const listTasks = (res: http.ServerResponse, id: unknown, params: Params) => {
    const historyLength = typeof params["historyLength"] === "number" ? params["historyLength"] : undefined
    if (historyLength !== undefined && historyLength < 0 && invalid(res, id, "a negative historyLength is taken")) return
    const after = typeof params["statusTimestampAfter"] === "string" ? Date.parse(params["statusTimestampAfter"]) : undefined
    if (after !== undefined && Number.isNaN(after) && invalid(res, id, "a statusTimestampAfter that is no timestamp is taken")) return
    const filtered = !has("ListTasks ignores contextId, status and statusTimestampAfter")
    const matching = [...tasks.values()]
      .filter((task) => !filtered || params["contextId"] === undefined || task.contextId === params["contextId"])
      .filter((task) => !filtered || params["status"] === undefined || task.status.state === params["status"])
      .filter((task) => !filtered || after === undefined || Number.isNaN(after) || Date.parse(task.status.timestamp) >= after)
      .sort((a, b) => b.status.timestamp.localeCompare(a.status.timestamp))
    const pageSize = has("ListTasks ignores pageSize") ? 50 : typeof params["pageSize"] === "number" ? params["pageSize"] : 50
    const offset = typeof params["pageToken"] === "string" && params["pageToken"] !== ""
      ? Number(params["pageToken"].slice("o:".length))
      : 0
    const page = matching.slice(offset, offset + pageSize)
    const next = offset + pageSize < matching.length ? `o:${offset + pageSize}` : ""
    const withArtifacts = params["includeArtifacts"] === true || has("ListTasks sends artifacts without includeArtifacts")
    const kept = has("ListTasks keeps the history for historyLength 0") ? undefined : historyLength
    return result(res, id, {
      tasks: page.map((task) => presented(task, kept, withArtifacts)),
      ...(has("ListTasks without nextPageToken") ? {} : { nextPageToken: next }),
      pageSize,
      totalSize: matching.length
    })
  }

  const stream = (res: http.ServerResponse, id: unknown, params: Params) => {
    const task = newTask(params.message ?? {}, params.message?.contextId)
    complete(task, textOf(params.message))
    const working = { ...task, status: { state: "TASK_STATE_WORKING", timestamp: task.status.timestamp } }
    if (has("a streaming message is answered with plain JSON")) return result(res, id, { task: working })
    const event = (value: unknown) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result: value })}\n`
    res.writeHead(200, { "content-type": "text/event-stream" })
    const end = has("the stream's last event has no closing blank line") ? "" : "\n"
    res.end(`${event({ task: working })}\n${event(statusEvent(task))}${end}`)
  }

  // The task now, then its updates as they happen, until it finishes.
  const subscribe = (res: http.ServerResponse, id: unknown, params: Params) => {
    const task = tasks.get(String(params["id"]))
    if (task === undefined) return rpcError(res, id, -32001, "Task not found")
    if (TERMINAL.includes(task.status.state)) return rpcError(res, id, -32004, "Task is finished")
    res.writeHead(200, { "content-type": "text/event-stream" })
    const send = (value: unknown) => res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result: value })}\n\n`)
    send({ task: presented(task, undefined, true) })
    const listener = (event: Json) => {
      send(event)
      const update = event["artifactUpdate"] as Json | undefined
      if (update?.["append"] === true && has("a subscription sends the last artifact chunk twice")) send(event)
      if ("statusUpdate" in event && TERMINAL.includes(task.status.state)) {
        listeners.get(task.id)?.delete(listener)
        res.end()
      }
    }
    listeners.set(task.id, new Set([...(listeners.get(task.id) ?? []), listener]))
  }

  const cancel = (res: http.ServerResponse, id: unknown, params: Params) => {
    const task = tasks.get(String(params["id"]))
    if (task === undefined) return rpcError(res, id, -32001, "Task not found")
    if (TERMINAL.includes(task.status.state) && !has("a finished task cancels again")) {
      return rpcError(res, id, -32002, "Task cannot be canceled")
    }
    setState(task, "TASK_STATE_CANCELED")
    return result(res, id, presented(task, undefined, true))
  }

  const server = http.createServer(async (req, res) => {
    count++
    const cardPath = options.cardPath ?? WELL_KNOWN_CARD
    if (req.method === "GET" && req.url === cardPath && options.noCard !== true) {
      const caching = has("no Cache-Control or ETag on the card") ? {} : { "cache-control": "max-age=60" }
      res.writeHead(200, { "content-type": "application/json", ...caching })
      res.end(JSON.stringify(card(baseUrl, options)))
      return
    }
    if (req.method !== "POST" || req.url !== "/rpc") return sendJson(res, 404, { error: "not found" })
    const body = tryParseJson(await readBodyText(req)) as { id?: unknown; method?: unknown; params?: Params } | undefined
    if (body === undefined) return rpcError(res, null, has("malformed JSON answered with -32600") ? -32600 : -32700, "bad")
    if (typeof body.method !== "string") return rpcError(res, body.id ?? null, -32600, "Invalid Request")
    const version = req.headers["a2a-version"]
    if (version !== undefined && version !== "1.0" && !has("A2A-Version 99.0 accepted")) {
      return rpcError(res, body.id, -32009, "Version not supported")
    }
    const params: Params = body.params ?? {}
    switch (body.method) {
      case "SendMessage":
        return sendMessage(res, body.id, params)
      case "GetTask":
        return getTask(res, body.id, params)
      case "ListTasks":
        return listTasks(res, body.id, params)
      case "SendStreamingMessage":
        return stream(res, body.id, params)
      case "SubscribeToTask":
        return subscribe(res, body.id, params)
      case "CancelTask":
        return cancel(res, body.id, params)
      default:
        return rpcError(res, has("unknown method answered without the request's id") ? null : body.id, -32601, "Method not found")
    }
  })
  baseUrl = await listenOnLoopback(server)
  return {
    baseUrl,
    requestCount: () => count,
    close: () => {
      for (const timer of timers) clearTimeout(timer)
      return closeServer(server)
    }
  }
}
