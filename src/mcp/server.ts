/** The MCP server: fixed name, our version, instructions (SPEC §1.3), and the tools. */
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { jsonSchemaValidator } from "@modelcontextprotocol/sdk/validation"
import { AjvJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/ajv"
import { PACKAGE_NAME, VERSION } from "../version.js"
import { serveLegacyTasks } from "./legacyTasks.js"
import { describeSdkFailure, errorResult } from "./toolResult.js"
import { registerTools, type ToolContext } from "./tools.js"
import { makeToolTasks } from "./toolTasks.js"

export const SERVER_NAME = PACKAGE_NAME

export const INSTRUCTIONS = "a2a-relay exposes Agent-to-Agent (A2A) protocol capabilities. Use its tools to interact " +
  "with A2A agents: validate agent cards and discover agent capabilities, send messages and follow, wait for or cancel " +
  "tasks, configure and read push notifications, and keep agents by name and per-agent sessions and credentials (shared " +
  "with the relay CLI). Start with list_agents to choose an agent (its name works as agent_url), get_agent_card or " +
  "send_message; when a result says state 'working', call wait_for_task."

/**
 * The SDK turns failures it detects itself (arguments not matching the input schema, unknown
 * tools) into a bare error result through its `createToolError`. That method is private in the
 * typings, so it is replaced by name; if a later SDK drops it, those results merely lose their
 * code and hint (the tests notice).
 */
const withCodedSdkFailures = (server: McpServer): McpServer => {
  if (typeof Reflect.get(server, "createToolError") === "function") {
    Reflect.set(server, "createToolError", (message: string) => errorResult(describeSdkFailure(message)))
  }
  return server
}

/**
 * The SDK's validator of elicitation answers, built on its first use: relay never elicits, and
 * building the Ajv instance (with its formats) was a cost to every `relay mcp` start (bench/README.md).
 */
const validatorOnFirstUse = (): jsonSchemaValidator => {
  let ajv: AjvJsonSchemaValidator | undefined
  return { getValidator: (schema) => (ajv ??= new AjvJsonSchemaValidator()).getValidator(schema) }
}

/**
 * A new server with every tool; one per MCP connection (an McpServer serves one transport). Its
 * tool tasks (legacyTasks.ts) are its session's own.
 */
export const makeMcpServer = (context: ToolContext): McpServer => {
  const server = new McpServer(
    { name: SERVER_NAME, version: VERSION },
    { instructions: INSTRUCTIONS, capabilities: { logging: {} }, jsonSchemaValidator: validatorOnFirstUse() }
  )
  serveLegacyTasks(server, makeToolTasks(context.toolTasks))
  registerTools(server, context)
  return withCodedSdkFailures(server)
}
