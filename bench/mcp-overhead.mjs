// MCP overhead: the same SendMessage to the same `relay server agent -m echo`, once as the MCP
// tool send_message through a spawned `relay mcp` (stdio, the official MCP SDK client), once as
// direct JSON-RPC over a keep-alive connection. The two take turns; the overhead is the
// difference of their medians.
//
//   BENCH_MCP_CALLS  calls of each kind (default 200, after 20 of each to warm up)
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { randomUUID } from "node:crypto"
import { adopt, progress, relayBin, relayEnv, release, startRelayAgent, tempRelayHome, withTimeout } from "./support/processes.mjs"
import { elapsedMs, median } from "./support/stats.mjs"

const calls = Number(process.env.BENCH_MCP_CALLS ?? 200)
const WARM_UP_CALLS = 20
const TIMEOUT_MS = 30_000

const timed = async (call) => {
  const start = process.hrtime.bigint()
  await withTimeout(call(), TIMEOUT_MS, "a SendMessage")
  return elapsedMs(start)
}

const directSend = (agentUrl) => async () => {
  const response = await fetch(`${agentUrl}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] } }
    })
  })
  const answer = await response.json()
  if (answer.result?.task?.status?.state !== "TASK_STATE_COMPLETED") throw new Error(`direct SendMessage: ${JSON.stringify(answer)}`)
}

const toolSend = (client, agentUrl) => async () => {
  const result = await client.callTool({ name: "send_message", arguments: { agent_url: agentUrl, text: "hello" } }, undefined, {
    timeout: TIMEOUT_MS
  })
  if (result.isError || result.structuredContent?.state !== "completed") throw new Error(`send_message: ${JSON.stringify(result)}`)
}

export const measure = async () => {
  progress("MCP overhead: starting relay (echo) and relay mcp")
  const agent = await startRelayAgent("echo")
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [relayBin, "mcp"],
    env: relayEnv(tempRelayHome()),
    stderr: "ignore"
  })
  const client = new Client({ name: "relay-bench", version: "1.0.0" })
  try {
    await withTimeout(client.connect(transport), TIMEOUT_MS, "connecting to relay mcp")
    adopt(transport.pid)
    const kinds = { direct: directSend(agent.url), mcp: toolSend(client, agent.url) }
    for (let call = 0; call < WARM_UP_CALLS; call++) for (const send of Object.values(kinds)) await send()
    const samples = { direct: [], mcp: [] }
    for (let call = 0; call < calls; call++) {
      if (call % 50 === 0) progress(`MCP overhead: call ${call + 1}/${calls}`)
      const order = call % 2 === 0 ? ["direct", "mcp"] : ["mcp", "direct"]
      for (const kind of order) samples[kind].push(await timed(kinds[kind]))
    }
    const direct = median(samples.direct)
    const mcp = median(samples.mcp)
    const row = (id, label, value, detail, goal) => ({ id, group: "MCP overhead", label, value, unit: "ms", detail, goal })
    return [
      row("mcp.direct", "direct JSON-RPC SendMessage", direct, `median of ${calls}`),
      row("mcp.send_message", "send_message via relay mcp (stdio)", mcp, `median of ${calls}`),
      row("mcp.added", "added by relay mcp", mcp - direct, "difference of the medians", { op: "<", limit: 2 })
    ]
  } finally {
    const pid = transport.pid
    await withTimeout(client.close(), 5_000, "closing relay mcp").catch(() => {})
    if (pid !== null) release(pid)
  }
}

export const settings = { calls, warmUpCalls: WARM_UP_CALLS }
