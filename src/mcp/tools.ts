/**
 * The MCP tools: names and parameters of SPEC §4.1 (primary names, with the alternates accepted),
 * each running the same program as its terminal command and answering with structured content,
 * a short summary, or an error result with a stable code and a hint. The tools live in rooms, one
 * per group; this module only composes them, in the order tools/list shows them.
 */
import type { McpServer } from "@modelcontextprotocol/server"
import { registerAgentTools } from "./agentTools.js"
import { registerCardTools } from "./cardTools.js"
import { registerCheckTools } from "./checkTools.js"
import { registerMessageTools } from "./messageTools.js"
import { registerNotificationTools } from "./notificationTools.js"
import { registerPushTools } from "./pushTools.js"
import { registerSessionTools } from "./sessionTools.js"
import { type ProtocolEra, type ToolContext, toolKit } from "./toolKit.js"

export type { ToolContext } from "./toolKit.js"

/** Registers every tool on `server`, in a fixed order (tools/list keeps it); handlers run programs through `context.run`. */
export const registerTools = (server: McpServer, context: ToolContext, era: ProtocolEra) => {
  const kit = toolKit(server, context, era)
  registerCardTools(kit)
  registerMessageTools(kit)
  registerPushTools(kit)
  registerCheckTools(kit)
  registerNotificationTools(kit)
  registerSessionTools(kit)
  registerAgentTools(kit)
}
