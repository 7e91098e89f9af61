/**
 * The MCP `logging` capability: relay's own log lines of a tool call (the agent contacted and its
 * answer's status, a fallback to another protocol version, warnings, failures) also go to the
 * client as `notifications/message`, at or above the level it set with `logging/setLevel` (the SDK
 * filters). Lines below relay's own level (--log-level, --verbose) are never made.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js"
import type { LoggingLevel } from "@modelcontextprotocol/sdk/types.js"
import { Effect, FiberRef, HashSet, Logger, type LogLevel } from "effect"

const MCP_LEVELS: Record<LogLevel.LogLevel["_tag"], LoggingLevel | undefined> = {
  All: "debug",
  Trace: "debug",
  Debug: "debug",
  Info: "info",
  Warning: "warning",
  Error: "error",
  Fatal: "critical",
  None: undefined
}

const textOf = (message: unknown) => (Array.isArray(message) ? message.map(String).join(" ") : String(message))

/** Runs `effect` with its log lines also sent to the MCP client of `sessionId`. */
export const logToClient = (server: McpServer, sessionId: string | undefined) => <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const toClient = Logger.make(({ logLevel, message }) => {
    const level = MCP_LEVELS[logLevel._tag]
    if (level === undefined || !server.isConnected()) return
    server.server.sendLoggingMessage({ level, logger: "a2a-relay", data: textOf(message) }, sessionId).catch(() => undefined)
  })
  // What Logger.add does, without building a layer on every call.
  return Effect.locallyWith(effect, FiberRef.currentLoggers, HashSet.add(toClient))
}
