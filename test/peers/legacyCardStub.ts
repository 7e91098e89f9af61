// A v0.2/v0.3-era agent stub on plain node:http: it serves its card only at the old
// `/.well-known/agent.json` path (404 on agent-card.json) and answers JSON-RPC
// `message/send` at the card's `url` with a completed v0.3 Task echoing the text.
import { randomUUID } from "node:crypto"
import http from "node:http"
import { echoText } from "./behaviours.js"
import { closeServer, listenOnLoopback, readBodyText, recordRequest, sendJson, tryParseJson } from "./httpUtil.js"
import type { RecordedRequest } from "./httpUtil.js"

export type { RecordedRequest } from "./httpUtil.js"

export const LEGACY_CARD_PATH = "/.well-known/agent.json"
/** The stub answers JSON-RPC here; the card's `url` is `${baseUrl}${LEGACY_RPC_PATH}`. */
export const LEGACY_RPC_PATH = "/"

export interface LegacyAgentOptions {
  /** Card-level protocolVersion. Default `0.2.5`. */
  readonly protocolVersion?: string
  readonly name?: string
}

export interface LegacyAgentHandle {
  readonly baseUrl: string
  readonly cardUrl: string
  /** The card's `url` (JSON-RPC endpoint). */
  readonly rpcUrl: string
  readonly card: Readonly<Record<string, unknown>>
  readonly requests: RecordedRequest[]
  close(): Promise<void>
}

const buildCard = (rpcUrl: string, options: LegacyAgentOptions): Record<string, unknown> => ({
  name: options.name ?? "Legacy Test Agent",
  description: "A pre-0.3 A2A agent stub serving /.well-known/agent.json.",
  url: rpcUrl,
  version: "0.2.0",
  protocolVersion: options.protocolVersion ?? "0.2.5",
  capabilities: { streaming: false, pushNotifications: false, stateTransitionHistory: false },
  defaultInputModes: ["text"],
  defaultOutputModes: ["text"],
  skills: [{ id: "echo", name: "Echo", description: "Echoes the user text.", tags: ["test"] }]
})

type JsonRpcId = string | number | null

const rpcError = (id: JsonRpcId, code: number, message: string) => ({ jsonrpc: "2.0", id, error: { code, message } })

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)

const idOf = (request: Record<string, unknown>): JsonRpcId => {
  const id = request["id"]
  return typeof id === "string" || typeof id === "number" ? id : null
}

const textOfParts = (parts: unknown): string =>
  (Array.isArray(parts) ? parts : [])
    .flatMap((part: unknown) => (isRecord(part) && typeof part["text"] === "string" ? [part["text"]] : []))
    .join("\n")

/** A completed v0.3 Task (kind shapes) echoing the message text. */
const completedTaskFor = (message: Record<string, unknown>) => {
  const taskId = randomUUID()
  const contextId = typeof message["contextId"] === "string" ? message["contextId"] : randomUUID()
  return {
    kind: "task",
    id: taskId,
    contextId,
    status: { state: "completed", timestamp: new Date().toISOString() },
    artifacts: [{ artifactId: "echo", name: "echo", parts: [{ kind: "text", text: echoText(textOfParts(message["parts"])) }] }],
    history: [{ ...message, kind: "message", taskId, contextId }]
  }
}

const answerRpc = (parsed: unknown) => {
  if (parsed === undefined) return rpcError(null, -32700, "Parse error")
  if (!isRecord(parsed) || parsed["jsonrpc"] !== "2.0" || typeof parsed["method"] !== "string") {
    return rpcError(isRecord(parsed) ? idOf(parsed) : null, -32600, "Invalid Request")
  }
  const id = idOf(parsed)
  if (parsed["method"] !== "message/send") return rpcError(id, -32601, `Method not found: ${parsed["method"]}`)
  const params = parsed["params"]
  const message = isRecord(params) ? params["message"] : undefined
  if (!isRecord(message)) return rpcError(id, -32602, "Invalid params: message is required")
  return { jsonrpc: "2.0", id, result: completedTaskFor(message) }
}

/** Start the legacy stub on 127.0.0.1:0. */
export const startLegacyAgent = async (options: LegacyAgentOptions = {}): Promise<LegacyAgentHandle> => {
  const requests: RecordedRequest[] = []
  let card: Record<string, unknown> = {}

  const server = http.createServer((req, res) => {
    let parsedBody: unknown
    recordRequest(requests, req, res, () => parsedBody)
    const path = (req.url ?? "/").split("?")[0]
    if (req.method === "GET" && path === LEGACY_CARD_PATH) {
      sendJson(res, 200, card)
      return
    }
    if (req.method === "POST" && path === LEGACY_RPC_PATH) {
      readBodyText(req)
        .then((text) => {
          parsedBody = tryParseJson(text)
          sendJson(res, 200, answerRpc(parsedBody))
        })
        .catch(() => sendJson(res, 400, { error: "unreadable body" }))
      return
    }
    sendJson(res, 404, { error: "not found" })
  })
  const baseUrl = await listenOnLoopback(server)
  const rpcUrl = `${baseUrl}${LEGACY_RPC_PATH}`
  card = buildCard(rpcUrl, options)

  return {
    baseUrl,
    cardUrl: `${baseUrl}${LEGACY_CARD_PATH}`,
    rpcUrl,
    card,
    requests,
    close: () => closeServer(server)
  }
}
