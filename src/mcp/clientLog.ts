/**
 * The MCP `logging` capability: relay's own log lines of a tool call (the agent contacted and its
 * answer's status, a fallback to another protocol version, warnings, failures) also go to the
 * client as `notifications/message`, at or above the level it asked for (the SDK filters): set with
 * `logging/setLevel` in the 2025-11-25 era, in each request's `_meta` in 2026-07-28 (none when the
 * request names no level). Lines below relay's own level (--log-level, --verbose) are never made.
 */
import type { LoggingLevel } from "@modelcontextprotocol/server"
import { Effect, FiberRef, HashSet, Logger, type LogLevel } from "effect"
import type { ToolExtra } from "./progress.js"

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

/** Runs `effect` with its log lines also sent to the MCP client, on the stream of the request `extra` is of. */
export const logToClient = (extra: ToolExtra) => <A, E, R>(effect: Effect.Effect<A, E, R>) => {
  const toClient = Logger.make(({ logLevel, message }) => {
    const level = MCP_LEVELS[logLevel._tag]
    if (level === undefined || extra.mcpReq.signal.aborted) return
    extra.mcpReq.log(level, textOf(message), "a2a-relay").catch(() => undefined)
  })
  // What Logger.add does, without building a layer on every call.
  return Effect.locallyWith(effect, FiberRef.currentLoggers, HashSet.add(toClient))
}
