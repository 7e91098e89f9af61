/**
 * What every room of tools shares (tools.ts composes the rooms): the server's ToolContext, the
 * parameters many tools take, the door for the agent URL, the programs loaded on first use, and
 * `handle`, which runs a tool's program and answers with its result, never echoing a secret.
 */
import type { FileSystem, HttpClient } from "@effect/platform"
import type { CallToolResult, InputRequiredResult, McpServer, ToolAnnotations } from "@modelcontextprotocol/server"
import { Deferred, Duration, Effect, type Layer } from "effect"
import * as z from "zod"
import { type Described, InvalidInput, type ListenFailed } from "../domain/errors.js"
import { withTraceHeaders } from "../domain/traceContext.js"
import { agentUrlOf } from "../programs/agentNames.js"
import type { AgentAccess } from "../programs/agentTarget.js"
import type { A2aClient } from "../services/A2aClient.js"
import type { NotificationLog } from "../services/NotificationLog.js"
import type { PushReceiver } from "../services/PushReceiver.js"
import type { RawGrpc } from "../services/RawGrpc.js"
import type { RawHttp } from "../services/RawHttp.js"
import type { ReceivedFiles } from "../services/ReceivedFiles.js"
import type { SessionStore } from "../services/SessionStore.js"
import type { StateDir } from "../services/StateDir.js"
import { loggingInWhenNeeded } from "./assistantLogin.js"
import { logToClient } from "./clientLog.js"
import { clientRoots } from "./clientRoots.js"
import { HEARTBEAT, type ToolExtra } from "./progress.js"
import { currentUser, legacyToolCall, modernToolCall, type ToolCall } from "./toolCall.js"
import { type ContentOf, forProtocolVersion, toToolResult, withoutSecrets } from "./toolResult.js"
import { STEP_PROGRESS, type ToolTasksOptions } from "./toolTasks.js"

/** The protocol era a server serves: `legacy` opened with `initialize` (2025-11-25 and before), `modern` is 2026-07-28. */
export type ProtocolEra = "legacy" | "modern"

/** The services the tools' programs use. */
export type ToolEnv = SessionStore | A2aClient | NotificationLog | ReceivedFiles | FileSystem.FileSystem | HttpClient.HttpClient | StateDir

/** What the tools need from the server: how to run programs, and the default bounded wait. */
export interface ToolContext {
  /** Runs a program; aborting `signal` (the client cancelled the call) interrupts it. */
  readonly run: <A>(effect: Effect.Effect<A, never, ToolEnv>, signal: AbortSignal) => Promise<A>
  /** How long send_message and wait_for_task wait when the call gives no timeout_seconds. */
  readonly defaultWait: Duration.Duration
  /** How often progress repeats the latest status while a call waits (default 10 s). */
  readonly heartbeat?: Duration.DurationInput | undefined
  /** Interface hosts the user allowed when starting the server (--allow-interface-host); an assistant cannot add any. */
  readonly allowInterfaceHosts?: ReadonlyArray<string> | undefined
  /** Largest whole answer send_message and wait_for_task keep (default MAX_ANSWER_BYTES; relay mcp --max-answer-bytes). */
  readonly maxAnswerBytes?: number | undefined
  /** Directories whose files send_message may read besides the client's roots (relay mcp --allow-read); absolute. */
  readonly allowRead?: ReadonlyArray<string> | undefined
  /** Largest request send_message sends, files and data encoded (default MAX_AGENT_BODY_BYTES; relay mcp --max-request-bytes). */
  readonly maxRequestBytes?: number | undefined
  /** The OAuth client id a login through the client uses when the agent has no saved tokens to take it from (relay mcp --login-client-id). */
  readonly loginClientId?: string | undefined
  /** How long a 2026-07-28 retry waits for a login in progress before the client is asked to retry again (default LOGIN_LEG). */
  readonly loginLeg?: Duration.Duration | undefined
  /**
   * What check_agent runs with besides the client: raw exchanges and a push receiver (the webhook
   * door's, on loopback for the run). Handed over by whoever starts the server, loaded on the first call.
   */
  readonly loadCheckRun: () => Promise<Layer.Layer<RawHttp | RawGrpc | PushReceiver, ListenFailed, HttpClient.HttpClient>>
  /** How calls run as MCP tasks (toolTasks.ts); the defaults unless a test shortens them. */
  readonly toolTasks?: ToolTasksOptions | undefined
}

/** Parameters that carry secrets: they are used, never echoed (see withoutSecrets). */
const SECRET_PARAMETERS = ["bearer_token", "api_key", "push_token", "webhook_token", "token"] as const

const secretsOf = (args: object): ReadonlyArray<string | undefined> =>
  SECRET_PARAMETERS.map((name) => {
    const value: unknown = (args as Record<string, unknown>)[name]
    return typeof value === "string" ? value : undefined
  })

// ---------------------------------------------------------------------------
// Shared parameter shapes

export const agentUrl = z.string().describe("The A2A agent: a name from list_agents, or its base URL, e.g. http://127.0.0.1:8000")
export const secrets = {
  bearer_token: z.string().optional().describe("Bearer token for this call; omit to use credentials saved with set_agent_credentials"),
  api_key: z.string().optional().describe("API key for this call (sent as X-API-Key); omit to use saved credentials")
}
const cardUrl = z.string().optional()
  .describe("Full URL of the agent's card when it is not at the well-known path; saved with the session for later calls")
export const contacting = { agent_url: agentUrl, ...secrets, card_url: cardUrl }
export const taskId = z.string().describe("The agent's task id (from send_message or list_tasks)")

export const READ_ONLY_REMOTE: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: true }
export const READ_ONLY_LOCAL: ToolAnnotations = { readOnlyHint: true, idempotentHint: true, openWorldHint: false }

/** Either of two spellings of one parameter (SPEC §4.1 alternate names). */
export const oneOf = (name: string, primary: string | undefined, alternate: string | undefined, alternateName: string) => {
  const value = primary ?? alternate
  return value === undefined
    ? Effect.fail(new InvalidInput({ reason: `${name} is required`, suggestion: `Pass ${name} (or ${alternateName})` }))
    : Effect.succeed(value)
}

// ---------------------------------------------------------------------------
// Programs loaded on first use

/**
 * Modules loaded on first use, then kept: later calls take them at once, without the promise (and
 * the bundle's copy of a chunk's exports) a dynamic import costs each time (bench/README.md).
 */
export const loadedOnFirstUse = <M>(load: () => Promise<M>): Effect.Effect<M> => {
  let loaded: M | undefined
  return Effect.suspend(() =>
    loaded === undefined ? Effect.map(Effect.promise(load), (module) => (loaded = module)) : Effect.succeed(loaded)
  )
}

/** The other programs, with the A2A model and client, load on the first call of a tool that runs one. */
const programs = loadedOnFirstUse(() => import("./toolPrograms.js"))
export const withPrograms = <A, E, R>(use: (programs: typeof import("./toolPrograms.js")) => Effect.Effect<A, E, R>) =>
  Effect.flatMap(programs, use)

// ---------------------------------------------------------------------------
// The kit each room registers its tools with

/**
 * The MCP door for the agent URL: `agent_url` (a name from list_agents, or a URL) is resolved and
 * decoded here, once (a bad one fails the call with invalid_agent_url, an unknown name with
 * unknown_agent), and the program gets the canonical AgentUrl with the call's secrets and card URL
 * and the interface hosts the server's user allowed. Refused for want of a login the user can do
 * through the client, `use` runs again once they did (assistantLogin.ts).
 */
const atAgentOf = (context: ToolContext) =>
<A, E, R>(
  args: { agent_url: string; bearer_token?: string | undefined; api_key?: string | undefined; card_url?: string | undefined },
  use: (access: AgentAccess) => Effect.Effect<A, E, R>
) =>
  Effect.flatMap(agentUrlOf(args.agent_url), (agentUrl) => {
    const access: AgentAccess = {
      agentUrl,
      bearerToken: args.bearer_token,
      apiKey: args.api_key,
      cardUrl: args.card_url,
      allowInterfaceHosts: context.allowInterfaceHosts
    }
    return use(access).pipe(loggingInWhenNeeded(access, context.loginClientId, context.loginLeg))
  })

/** A step of a tool task (legacyTasks.ts) outlives its request: the task asks the user, not the step. */
export const isTaskStep = (extra: ToolExtra) => extra.mcpReq._meta?.progressToken === STEP_PROGRESS

/**
 * What a room needs to register its tools on one server. `callOf` tells a tool what it may do
 * with the call it answers (ask the user, the trace to forward: toolCall.ts), in its era's way.
 */
export const toolKit = (
  server: McpServer,
  context: ToolContext,
  era: ProtocolEra,
  callOf: (extra: ToolExtra) => ToolCall = (extra) =>
    isTaskStep(extra) ? modernToolCall(extra, false) : era === "legacy" ? legacyToolCall(server, extra) : modernToolCall(extra)
) => ({
  server,
  context,
  /** The protocol era this server serves (server.ts). */
  era,
  callOf,
  /**
   * Runs a tool's program: its result as structured content and a summary, or an error result;
   * secrets of `args` never echoed. The agents it contacts receive the call's trace context. A
   * 2026-07-28 call that offers the user a page ends with that `input_required` result instead.
   */
  handle: <A extends object, E extends Described>(
    extra: ToolExtra,
    args: object,
    program: Effect.Effect<A, E, ToolEnv>,
    summarize: (result: A) => string,
    contentOf?: ContentOf<A, ToolEnv>
  ): Promise<CallToolResult | InputRequiredResult> =>
    context.run(
      Effect.suspend(() => {
        const call = callOf(extra)
        const result = toToolResult(program, summarize, contentOf).pipe(
          Effect.map((result) => forProtocolVersion(withoutSecrets(result, secretsOf(args)), server.server.getNegotiatedProtocolVersion())),
          withTraceHeaders(call.trace),
          Effect.locally(currentUser, call.user),
          logToClient(extra)
        )
        return call.endedAsking === undefined ? result : Effect.raceFirst(result, Deferred.await(call.endedAsking))
      }),
      extra.mcpReq.signal
    ),
  atAgent: atAgentOf(context),
  /**
   * The directories files may be read from at this door (send_message's files, validate_agent_card's
   * file): the client's roots and those the user allowed (`--allow-read`).
   */
  readableDirectories: Effect.map(clientRoots(server, era === "legacy"), (directories) => [...directories, ...(context.allowRead ?? [])]),
  /** How long a call waits: its timeout_seconds, else the server's default. */
  waitFor: (seconds: number | undefined) => (seconds === undefined ? context.defaultWait : Duration.seconds(seconds)),
  heartbeat: context.heartbeat ?? HEARTBEAT
})

export type ToolKit = ReturnType<typeof toolKit>
