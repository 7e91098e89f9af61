// Fake model servers on 127.0.0.1:0 that record what they were asked: OpenAI's Responses and
// Chat Completions wire formats, as the model tests (ModelAccess, what the agent's models receive) serve them.
import { Effect } from "effect"
import * as Http from "node:http"
import type { AddressInfo } from "node:net"

export interface Recorded {
  readonly method: string
  readonly path: string
  readonly authorization: string | undefined
  readonly body: any // parsed JSON request body; tests read fields they know
}

export type Handler = (request: Recorded, response: Http.ServerResponse) => void

export interface FakeServer {
  readonly url: string
  readonly requests: Array<Recorded>
  readonly paths: () => Array<string>
}

export const startServer = (handler: Handler) =>
  Effect.acquireRelease(
    Effect.async<{ server: Http.Server; fake: FakeServer }>((resume) => {
      const requests: Array<Recorded> = []
      const server = Http.createServer((req, res) => {
        let text = ""
        req.setEncoding("utf8")
        req.on("data", (chunk: string) => (text += chunk))
        req.on("end", () => {
          const recorded: Recorded = {
            method: req.method ?? "",
            path: req.url ?? "",
            authorization: req.headers.authorization,
            body: text === "" ? undefined : JSON.parse(text)
          }
          requests.push(recorded)
          handler(recorded, res)
        })
      })
      server.listen(0, "127.0.0.1", () => {
        const { port } = server.address() as AddressInfo
        resume(Effect.succeed({
          server,
          fake: { url: `http://127.0.0.1:${port}`, requests, paths: () => requests.map((r) => `${r.method} ${r.path}`) }
        }))
      })
    }),
    ({ server }) =>
      Effect.async<void>((resume) => {
        server.closeAllConnections()
        server.close(() => resume(Effect.void))
      })
  ).pipe(Effect.map(({ fake }) => fake))

/** A loopback port with nothing listening on it. */
export const closedPort = Effect.async<number>((resume) => {
  const server = Http.createServer()
  server.listen(0, "127.0.0.1", () => {
    const { port } = server.address() as AddressInfo
    server.close(() => resume(Effect.succeed(port)))
  })
})

export const sendJson = (res: Http.ServerResponse, status: number, body: unknown) => {
  res.writeHead(status, { "content-type": "application/json" })
  res.end(JSON.stringify(body))
}

export const notFound = (res: Http.ServerResponse) => sendJson(res, 404, { error: { message: "404 page not found" } })

export const sendSse = (res: Http.ServerResponse, events: ReadonlyArray<{ readonly event?: string; readonly data: string }>) => {
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const { event, data } of events) res.write(`${event ? `event: ${event}\n` : ""}data: ${data}\n\n`)
  res.end()
}

// ---------------------------------------------------------------------------------------------
// OpenAI wire formats served by the fakes
// ---------------------------------------------------------------------------------------------

export const messageItem = (status: "in_progress" | "completed", text: string | undefined) => ({
  type: "message",
  id: "msg_1",
  role: "assistant",
  status,
  content: text === undefined ? [] : [{ type: "output_text", text, annotations: [] }]
})

/** The fields the Responses decoder of @effect/ai-openai requires, and no more. */
export const responseObject = (status: "in_progress" | "completed", text: string | undefined) => ({
  id: "resp_1",
  object: "response",
  created_at: 1_700_000_000,
  status,
  error: null,
  incomplete_details: null,
  instructions: null,
  model: "fake-model",
  output: text === undefined ? [] : [messageItem("completed", text)],
  parallel_tool_calls: true,
  tools: [],
  tool_choice: "auto",
  metadata: null,
  temperature: null,
  top_p: null
})

export const responseEvents = (deltas: ReadonlyArray<string>) => {
  const text = deltas.join("")
  const events: Array<{ readonly type: string; readonly [field: string]: unknown }> = [
    { type: "response.created", response: responseObject("in_progress", undefined) },
    { type: "response.output_item.added", output_index: 0, item: messageItem("in_progress", undefined) },
    ...deltas.map((delta) => ({
      type: "response.output_text.delta",
      output_index: 0,
      content_index: 0,
      item_id: "msg_1",
      delta
    })),
    { type: "response.output_item.done", output_index: 0, item: messageItem("completed", text) },
    { type: "response.completed", response: responseObject("completed", text) }
  ]
  return events.map((event, sequence_number) => ({ ...event, sequence_number }))
}

/** Serves `/v1/responses` only (the Chat Completions path is a 404). */
export const responsesServer = (answer: string, deltas: ReadonlyArray<string>): Handler => (request, res) => {
  if (request.method !== "POST" || request.path !== "/v1/responses") return notFound(res)
  if (request.body.stream === true) {
    return sendSse(res, responseEvents(deltas).map((event) => ({ event: String(event.type), data: JSON.stringify(event) })))
  }
  sendJson(res, 200, responseObject("completed", answer))
}

export const chatChunk = (content: string | undefined, finish: string | null) => ({
  id: "chatcmpl-1",
  object: "chat.completion.chunk",
  model: "fake-model",
  choices: [{ index: 0, delta: content === undefined ? {} : { role: "assistant", content }, finish_reason: finish }]
})

/** Serves only `/v1/chat/completions`, like an Ollama older than 0.13.3; `/v1/responses` is a 404. */
export const chatOnlyServer = (answer: string, deltas: ReadonlyArray<string>): Handler => (request, res) => {
  if (request.method !== "POST" || request.path !== "/v1/chat/completions") return notFound(res)
  if (request.body.stream === true) {
    return sendSse(res, [
      ...deltas.map((delta) => ({ data: JSON.stringify(chatChunk(delta, null)) })),
      { data: JSON.stringify(chatChunk(undefined, "stop")) },
      { data: "[DONE]" }
    ])
  }
  sendJson(res, 200, {
    id: "chatcmpl-1",
    object: "chat.completion",
    model: "fake-model",
    choices: [{ index: 0, message: { role: "assistant", content: answer }, finish_reason: "stop" }],
    usage: { prompt_tokens: 3, completion_tokens: 4, total_tokens: 7 }
  })
}

/** Serves Ollama's own `/api/chat`: the answer whole, or streamed as one JSON object per line ending with `done`. */
export const ollamaChatServer = (answer: string, deltas: ReadonlyArray<string>): Handler => (request, res) => {
  if (request.method !== "POST" || request.path !== "/api/chat") return notFound(res)
  const line = (content: string, done: boolean) => ({
    model: request.body.model,
    created_at: "2025-01-01T00:00:00Z",
    message: { role: "assistant", content },
    done,
    ...(done ? { done_reason: "stop", prompt_eval_count: 5, eval_count: 3 } : {})
  })
  if (request.body.stream === false) return sendJson(res, 200, line(answer, true))
  res.writeHead(200, { "content-type": "application/x-ndjson" })
  for (const delta of deltas) res.write(`${JSON.stringify(line(delta, false))}\n`)
  res.end(`${JSON.stringify(line("", true))}\n`)
}
