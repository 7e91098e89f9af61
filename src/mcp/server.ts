/**
 * The MCP server: fixed name, our version, instructions (SPEC §1.3), and the tools. One factory
 * serves both protocol eras (the v2 SDK, `@modelcontextprotocol/server`): a server is made per
 * legacy (2025-11-25) connection or session, and per modern (2026-07-28) request; the tools and
 * their programs are the same in both.
 */
import { McpServer } from "@modelcontextprotocol/server"
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/server/validators/cf-worker"
import { PACKAGE_NAME, VERSION } from "../version.js"
import { serveLegacyTasks } from "./legacyTasks.js"
import { serveTasksExtension } from "./tasksExtension.js"
import type { ProtocolEra } from "./toolKit.js"
import { describeSdkFailure, errorResult } from "./toolResult.js"
import { registerTools, type ToolContext } from "./tools.js"
import { makeToolTasks, type ToolTasks } from "./toolTasks.js"

export type { ProtocolEra } from "./toolKit.js"

export const SERVER_NAME = PACKAGE_NAME

export const INSTRUCTIONS = "a2a-relay exposes Agent-to-Agent (A2A) protocol capabilities. Use its tools to interact " +
  "with A2A agents: validate agent cards and discover agent capabilities, send messages and follow, wait for or cancel " +
  "tasks, configure and read push notifications, and keep agents by name and per-agent sessions and credentials (shared " +
  "with the relay CLI). Start with list_agents to choose an agent (its name works as agent_url), get_agent_card or " +
  "send_message; when a result says state 'working', call wait_for_task."

/**
 * The SDK turns arguments that do not match the input schema into a bare error result through
 * its `createToolError` (unknown tools are a JSON-RPC error, as both eras' specifications say).
 * That method is not in the typings, so it is replaced by name; if a later SDK drops it, those
 * results merely lose their code and hint (the tests notice).
 */
const withCodedSdkFailures = (server: McpServer): McpServer => {
  if (typeof Reflect.get(server, "createToolError") === "function") {
    Reflect.set(server, "createToolError", (message: string) => errorResult(describeSdkFailure(message)))
  }
  return server
}

/**
 * The SDK validates elicitation answers with a JSON Schema engine. Its own Node default is Ajv with
 * its formats, a 295 KB module that every `relay mcp` start would load (scripts/bundle.mjs keeps
 * that default out of the bundle); the SDK's other engine, @cfworker/json-schema (42 KB, the
 * default it picks for browsers and workers), validates the same flat form schemas. bench/README.md
 * has the start-up figures.
 */
const answerValidator = () => new CfWorkerJsonSchemaValidator()

/** The tool tasks of the 2026-07-28 era: one registry per running server (its requests' servers share it). */
const extensionTasks = new WeakMap<ToolContext, ToolTasks>()
const extensionTasksOf = (context: ToolContext): ToolTasks => {
  const known = extensionTasks.get(context)
  if (known !== undefined) return known
  const made = makeToolTasks(context.toolTasks)
  extensionTasks.set(context, made)
  return made
}

/** Makes the server for one legacy connection or session, or one modern request (transports.ts). */
export type ServerFactory = (era: ProtocolEra) => McpServer

/**
 * A new server with every tool, for one legacy connection or session, or one modern request. A
 * legacy server's tool tasks (legacyTasks.ts) are its session's own; modern ones
 * (tasksExtension.ts) are the process's.
 */
export const makeMcpServer = (context: ToolContext, era: ProtocolEra = "legacy"): McpServer => {
  const server = new McpServer(
    { name: SERVER_NAME, version: VERSION },
    { instructions: INSTRUCTIONS, capabilities: { logging: {} }, jsonSchemaValidator: answerValidator() }
  )
  if (era === "legacy") serveLegacyTasks(server, makeToolTasks(context.toolTasks))
  else serveTasksExtension(server, extensionTasksOf(context))
  registerTools(server, context, era)
  return withCodedSdkFailures(server)
}
