// A stub A2A 1.0 agent (JSON-RPC) whose answers carry files and data, good and hostile: the
// message's text names the answer (`files`, `hostile`, `many`, `both`, `links`). Tasks are
// answered completed at once, by SendMessage and GetTask alike (GetTask takes the answer's name
// as the task id); SendStreamingMessage streams the same task in three events. A second stub on
// another origin serves files by URL, so a test can tell where credentials went.
import type http from "node:http"
import type * as V1 from "../../src/a2a/v1.js"
import { startStub, type Stub, type StubRequest } from "../services/a2aClientHarness.js"

const base64 = (content: string | Buffer) => Buffer.from(content).toString("base64")

export const HELLO = "Hello, file!\n"
export const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 73, 72, 68, 82])
export const DATA = { city: "Lyon", days: [1, 2, 3], nested: { a: "x".repeat(200) } }
export const REPORT = "A report on the agent's own origin\n"
export const ELSEWHERE = "A file on another origin\n"
export const MANY = 10_000

/** Names an agent may give, each a way to leave the folder, hide a file or confuse a terminal. */
export const HOSTILE_NAMES = ["../../x", ".bashrc", `${"n".repeat(300)}.txt`, "a\u0000b", "CON", "red\u001b[31m.txt", "/etc/passwd", ".."]

type Answer = (links: { readonly own: string; readonly other: string }) => ReadonlyArray<V1.Part>

const ANSWERS: Readonly<Record<string, Answer>> = {
  files: () => [
    { text: "Here are your files" },
    { raw: base64(HELLO), filename: "hello.txt", mediaType: "text/plain" },
    { data: DATA },
    { raw: base64(PNG), mediaType: "image/png" },
    { url: "https://files.example/report.pdf", filename: "report.pdf", mediaType: "application/pdf" }
  ],
  hostile: () => [
    ...HOSTILE_NAMES.map((filename): V1.Part => ({ raw: base64(filename), filename, mediaType: "text/plain" })),
    { raw: base64("<html>not an image</html>"), filename: "cat.png", mediaType: "image/png" },
    { raw: "this is not base64!", filename: "broken.bin", mediaType: "application/octet-stream" }
  ],
  many: () => Array.from({ length: MANY }, (_, i): V1.Part => ({ raw: base64(String(i)), filename: "tiny.txt", mediaType: "text/plain" })),
  links: ({ own, other }) => [
    { url: `${own}/files/report.txt`, filename: "report.txt", mediaType: "text/plain" },
    { url: `${other}/files/elsewhere.txt`, filename: "elsewhere.txt", mediaType: "text/plain" },
    { url: "file:///etc/passwd", filename: "passwd", mediaType: "text/plain" }
  ]
}

const completed = (id: string, parts: ReadonlyArray<V1.Part>): V1.Task => ({
  id,
  contextId: "ctx-files",
  status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-03-01T10:00:00Z" },
  artifacts: [{ artifactId: "art-1", name: "answer", parts: [...parts] }]
})

/** A 1.0 part with both bytes and a URL: malformed (A2A 1.0 §4.1.6: exactly one of them). */
const withBothContents = (id: string) => ({
  ...completed(id, []),
  artifacts: [{ artifactId: "art-1", parts: [{ raw: base64("x"), url: "https://files.example/x", filename: "x" }] }]
})

const textOf = (request: StubRequest): string => {
  const params = (request.body as { params?: { message?: { parts?: ReadonlyArray<{ text?: string }> }; id?: string } }).params
  return params?.message?.parts?.[0]?.text ?? params?.id ?? ""
}

const sse = (res: http.ServerResponse, id: unknown, events: ReadonlyArray<V1.StreamResponse>) => {
  res.writeHead(200, { "content-type": "text/event-stream" })
  for (const result of events) res.write(`data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`)
  res.end()
  return undefined
}

export interface FileAgent {
  readonly agent: Stub
  /** The other origin's file server. */
  readonly files: Stub
  close(): Promise<void>
}

export const startFileAgent = async (): Promise<FileAgent> => {
  const files = await startStub({ "GET /files/elsewhere.txt": () => ({ body: ELSEWHERE }) })
  const agent = await startStub((baseUrl) => {
    const taskFor = (name: string): unknown => {
      if (name === "both") return withBothContents(name)
      const answer = ANSWERS[name]
      return answer === undefined ? undefined : completed(name, answer({ own: baseUrl, other: files.baseUrl }))
    }
    return {
      "GET /.well-known/agent-card.json": () => ({
        body: {
          name: "File agent",
          description: "Answers with files and data",
          version: "1.0.0",
          supportedInterfaces: [{ url: `${baseUrl}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }],
          capabilities: { streaming: true },
          defaultInputModes: ["text/plain"],
          defaultOutputModes: ["text/plain", "application/json", "image/png"],
          skills: [{ id: "files", name: "Files", description: "Returns files", tags: ["files"] }]
        }
      }),
      "GET /files/report.txt": () => ({ body: REPORT }),
      "POST /rpc": (request, res) => {
        const body = request.body as { id?: unknown; method?: string }
        const task = taskFor(textOf(request))
        if (task === undefined) return { body: { jsonrpc: "2.0", id: body.id, error: { code: -32001, message: "Task not found" } } }
        if (body.method === "SendStreamingMessage") {
          const whole = task as V1.Task
          const ids = { taskId: whole.id, contextId: "ctx-files" }
          return sse(res, body.id, [
            { task: { id: whole.id, contextId: ids.contextId, status: { state: "TASK_STATE_WORKING" } } },
            { artifactUpdate: { ...ids, artifact: whole.artifacts![0]!, lastChunk: true } },
            { statusUpdate: { ...ids, status: whole.status } }
          ])
        }
        return { body: { jsonrpc: "2.0", id: body.id, result: body.method === "SendMessage" ? { task } : task } }
      }
    }
  })
  return { agent, files, close: () => Promise.all([agent.close(), files.close()]).then(() => undefined) }
}
