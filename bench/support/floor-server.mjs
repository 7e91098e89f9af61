// The floor for the agent server benchmarks: bare node:http, no framework, no task store.
// POST / reads the JSON-RPC request and answers a canned completed Task with its id; POST /stream
// answers an SSE stream shaped like relay's (task, working, STREAM_CHUNKS artifact chunks,
// completed), one write per event. Binds 127.0.0.1:0 and prints its base URL on stdout.
import { createServer } from "node:http"

const STREAM_CHUNKS = Number(process.env.FLOOR_STREAM_CHUNKS ?? 200)
const taskId = "3f0c6a2e-6f55-4f1b-9a55-2f7bb1f2a001"
const contextId = "3f0c6a2e-6f55-4f1b-9a55-2f7bb1f2a002"
const artifactId = "3f0c6a2e-6f55-4f1b-9a55-2f7bb1f2a003"
const message = { messageId: "m", role: "ROLE_USER", parts: [{ text: "hello" }], taskId, contextId }
const task = (state) => ({ id: taskId, contextId, status: { state, timestamp: new Date().toISOString() }, history: [message] })
const completedTask = JSON.stringify({
  ...task("TASK_STATE_COMPLETED"),
  artifacts: [{ artifactId, name: "answer", parts: [{ text: "hello" }] }]
})

const event = (id, result) => `data: ${JSON.stringify({ jsonrpc: "2.0", id, result })}\n\n`
const chunk = (index) => ({
  artifactUpdate: {
    taskId,
    contextId,
    artifact: { artifactId, name: "stream", parts: [{ text: `chunk ${index} of ${STREAM_CHUNKS}\n` }] },
    ...(index > 1 ? { append: true } : {}),
    lastChunk: index === STREAM_CHUNKS
  }
})
const nextTurn = () => new Promise((resolve) => setImmediate(resolve))

const stream = async (id, response) => {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  response.write(event(id, { task: task("TASK_STATE_SUBMITTED") }))
  response.write(event(id, { statusUpdate: { taskId, contextId, status: task("TASK_STATE_WORKING").status } }))
  // One event per turn of the event loop, as a producer that awaits between chunks writes them.
  for (let index = 1; index <= STREAM_CHUNKS; index++) {
    await nextTurn()
    response.write(event(id, chunk(index)))
  }
  response.end(event(id, { statusUpdate: { taskId, contextId, status: task("TASK_STATE_COMPLETED").status } }))
}

const server = createServer((request, response) => {
  const parts = []
  request.on("data", (part) => parts.push(part))
  request.on("end", () => {
    const { id } = JSON.parse(Buffer.concat(parts).toString("utf8"))
    if (request.url === "/stream") return void stream(id, response)
    response.writeHead(200, { "content-type": "application/json" })
    response.end(`{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":{"task":${completedTask}}}`)
  })
})
server.listen(0, "127.0.0.1", () => process.stdout.write(`http://127.0.0.1:${server.address().port}\n`))
// Keep-alive connections would hold a graceful close open: this server has nothing to finish.
process.on("SIGTERM", () => process.exit(0))
