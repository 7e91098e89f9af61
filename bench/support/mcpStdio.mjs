// Just enough of an MCP client over stdio to time a spawned `relay mcp` from the first byte:
// initialize, then tools/list, as newline-delimited JSON-RPC (the MCP stdio framing).
import { withTimeout } from "./processes.mjs"

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "relay-bench", version: "1.0.0" } }
}
const INITIALIZED = { jsonrpc: "2.0", method: "notifications/initialized" }
const TOOLS_LIST = { jsonrpc: "2.0", id: 2, method: "tools/list", params: {} }

/** Resolves with the answer to request `id` read from `child`'s stdout. */
const answerTo = (child, id) =>
  new Promise((resolve, reject) => {
    let buffered = ""
    const onData = (chunk) => {
      buffered += chunk
      let newline
      while ((newline = buffered.indexOf("\n")) >= 0) {
        const line = buffered.slice(0, newline)
        buffered = buffered.slice(newline + 1)
        const message = JSON.parse(line)
        if (message.id !== id) continue
        child.stdout.off("data", onData)
        child.off("exit", onExit)
        return message.error === undefined ? resolve(message.result) : reject(new Error(JSON.stringify(message.error)))
      }
    }
    const onExit = (code) => reject(new Error(`relay mcp exited (${code}) before answering request ${id}`))
    child.stdout.setEncoding("utf8")
    child.stdout.on("data", onData)
    child.once("exit", onExit)
  })

const send = (child, message) => child.stdin.write(`${JSON.stringify(message)}\n`)

/** Initializes `relay mcp` on `child`'s stdio and resolves with the tools it lists. */
export const initializeAndListTools = async (child, timeoutMs = 30_000) => {
  const initialized = answerTo(child, 1)
  send(child, INITIALIZE)
  await withTimeout(initialized, timeoutMs, "relay mcp initialize")
  const listed = answerTo(child, 2)
  send(child, INITIALIZED)
  send(child, TOOLS_LIST)
  const { tools } = await withTimeout(listed, timeoutMs, "relay mcp tools/list")
  if (!Array.isArray(tools) || tools.length === 0) throw new Error("relay mcp listed no tools")
  return tools
}
