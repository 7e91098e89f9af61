// Plain-fetch helpers for the agent server suites: JSON requests, JSON-RPC calls and SSE
// responses read frame by frame.
import { randomUUID } from "node:crypto"

export type Json = Record<string, any>

export interface Answer {
  readonly status: number
  readonly headers: Headers
  readonly json: Json
}

export const V1_HEADERS = { "a2a-version": "1.0" }

export const request = async (url: string, init: RequestInit = {}): Promise<Answer> => {
  const response = await fetch(url, init)
  const text = await response.text()
  return { status: response.status, headers: response.headers, json: text === "" ? {} : (JSON.parse(text) as Json) }
}

export const post = (url: string, body: unknown, headers: Record<string, string> = {}) =>
  request(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body)
  })

export const rpc = (base: string, method: string, params: unknown, headers: Record<string, string> = V1_HEADERS, id: unknown = 1) =>
  post(`${base}/`, { jsonrpc: "2.0", id, method, ...(params === undefined ? {} : { params }) }, headers)

export const v1Message = (text: string, extra: Json = {}) => ({ messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }], ...extra })
export const v03Message = (text: string, extra: Json = {}) => ({
  kind: "message",
  messageId: randomUUID(),
  role: "user",
  parts: [{ kind: "text", text }],
  ...extra
})

export const sendV1 = async (base: string, text: string, extra: { message?: Json; configuration?: Json } = {}) => {
  const answer = await rpc(base, "SendMessage", { message: v1Message(text, extra.message), configuration: extra.configuration })
  if (answer.json["result"] === undefined) throw new Error(`send failed: ${JSON.stringify(answer.json)}`)
  return answer.json["result"]["task"] as Json
}

export interface SseEvent {
  readonly event: string | undefined
  readonly data: Json
  /** Milliseconds since the request was sent. */
  readonly at: number
}

/** Reads an SSE response frame by frame as the bytes arrive. */
export const readSse = async (response: Response, started: number): Promise<SseEvent[]> => {
  const events: SseEvent[] = []
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let buffer = ""
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    buffer += value
    let end: number
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end)
      buffer = buffer.slice(end + 2)
      const lines = frame.split("\n")
      const event = lines.find((line) => line.startsWith("event:"))?.slice(6).trim()
      const data = lines.filter((line) => line.startsWith("data:")).map((line) => line.slice(5).trim()).join("\n")
      events.push({ event, data: JSON.parse(data) as Json, at: Date.now() - started })
    }
  }
  return events
}

export const openStream = async (url: string, init: RequestInit) => {
  const started = Date.now()
  const response = await fetch(url, init)
  return { response, events: () => readSse(response, started) }
}

export const streamRpc = (base: string, method: string, params: unknown, headers: Record<string, string> = V1_HEADERS) =>
  openStream(`${base}/`, {
    method: "POST",
    headers: { "content-type": "application/json", accept: "text/event-stream", ...headers },
    body: JSON.stringify({ jsonrpc: "2.0", id: "s-1", method, params })
  })
