/**
 * The tools of relay's local state per agent, shared with the terminal commands: sessions (list,
 * show, clear) and saved credentials (set, clear).
 */
import { Effect } from "effect"
import * as z from "zod"
import { agentUrlOf } from "../programs/agentNames.js"
import type { clearCredentials, SetCredentialsResult } from "../programs/credentials.js"
import type { ClearResult, SessionList } from "../programs/sessions.js"
import { type ResultOf, sessionShape, shapeOf } from "./resultShapes.js"
import { agentUrl, READ_ONLY_LOCAL, type ToolKit, withPrograms } from "./toolKit.js"

/** What set_agent_credentials answers when given no secret: the `{error}` object (SPEC §4.1 rule 4, §7.1). */
interface MissingSecret {
  readonly error: string
}

export const registerSessionTools = ({ server, handle, atAgent }: ToolKit) => {
  server.registerTool(
    "list_sessions",
    {
      title: "List saved sessions",
      description: "List the agents relay has talked to, with their saved context id, task id, last state and whether " +
        "credentials are saved (shared with the relay terminal commands). Use to find an agent or task from earlier. " +
        "Next: get_session_info for one agent, send_message with use_session=true to continue.",
      inputSchema: {},
      outputSchema: shapeOf<SessionList>()({ count: z.number(), sessions: z.array(z.object(sessionShape)) }),
      annotations: READ_ONLY_LOCAL
    },
    (args, extra) =>
      handle(
        extra,
        args,
        withPrograms(({ listSessions }) => listSessions()),
        (r) =>
          r.count === 0
            ? "No saved sessions"
            : r.sessions.map((s) => `${s.agent_url}: task ${s.task_id ?? "none"} (${s.last_state ?? "no state"})`).join("\n")
      )
  )

  server.registerTool(
    "get_session_info",
    {
      title: "Get an agent's session",
      description: "Show the saved context id, task id, last state and whether credentials are saved for one agent. " +
        "Use before continuing a conversation. Next: send_message with use_session=true, or wait_for_task with the task id.",
      inputSchema: { agent_url: agentUrl },
      outputSchema: sessionShape,
      annotations: READ_ONLY_LOCAL
    },
    (args, extra) =>
      handle(
        extra,
        args,
        withPrograms(({ showSession }) => Effect.flatMap(agentUrlOf(args.agent_url), showSession)),
        (s) =>
          `${s.agent_url}: context ${s.context_id ?? "none"}, task ${s.task_id ?? "none"}, credentials ${
            s.has_credentials ? "saved" : "none"
          }`
      )
  )

  server.registerTool(
    "clear_session_data",
    {
      title: "Clear saved sessions",
      description: "Forget the saved context and task of one agent, or of all agents when agent_url is omitted. Use to " +
        "start a new conversation instead of continuing the saved one. Saved credentials are kept " +
        "(clear_agent_credentials removes them). Next: send_message.",
      inputSchema: { agent_url: agentUrl.optional().describe("The agent; omit to clear every session") },
      outputSchema: shapeOf<ClearResult>()({
        all: z.boolean(),
        agent_url: z.string().optional(),
        cleared: z.number(),
        credentials_kept: z.boolean()
      }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
    },
    (args, extra) =>
      handle(
        extra,
        args,
        withPrograms(({ clearSessions }) =>
          args.agent_url === undefined ? clearSessions(undefined) : Effect.flatMap(agentUrlOf(args.agent_url), clearSessions)
        ),
        (r) => `Cleared ${r.cleared} session(s)${r.all ? "" : ` for ${r.agent_url}`}; credentials kept`
      )
  )

  server.registerTool("set_agent_credentials", {
    title: "Save credentials for an agent",
    description: "Save a bearer token or an API key for an agent; every later call to it uses them (also from the " +
      "relay terminal commands). Use when a result says needs_auth or auth_required. Bearer wins when both are given. " +
      "Next: repeat the call that needed authentication (e.g. send_message).",
    inputSchema: {
      agent_url: agentUrl,
      bearer_token: z.string().optional().describe("Bearer token"),
      api_key: z.string().optional().describe("API key"),
      api_key_header: z.string().optional().describe("Header for the API key (default X-API-Key)")
    },
    // Optional fields: the `{error}` object of SPEC §7.1 must validate too.
    outputSchema: shapeOf<SetCredentialsResult | MissingSecret>()({
      agent_url: z.string().optional(),
      auth_type: z.enum(["bearer", "api_key"]).optional(),
      error: z.string().optional()
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false }
  }, async (args, extra) => {
    const result = await handle(
      extra,
      args,
      atAgent(args, (access) => withPrograms(({ setCredentials }) => setCredentials({ ...access, apiKeyHeader: args.api_key_header }))),
      (r) => `Saved ${r.auth_type === "bearer" ? "a bearer token" : "an API key"} for ${r.agent_url}`
    )
    // SPEC §4.1 rule 4: no secret given answers an object with an `error` field.
    const missingSecret = args.bearer_token === undefined && args.api_key === undefined
    return result.isError && missingSecret
      ? { ...result, structuredContent: { error: "Either bearer_token or api_key must be provided" } satisfies MissingSecret }
      : result
  })

  server.registerTool(
    "clear_agent_credentials",
    {
      title: "Remove an agent's credentials",
      description: "Remove the credentials saved for an agent (also for the relay terminal commands). Use when a token " +
        "was revoked or should no longer be used. Next: set_agent_credentials to save new ones.",
      inputSchema: { agent_url: agentUrl },
      outputSchema: shapeOf<ResultOf<typeof clearCredentials>>()({ agent_url: z.string(), cleared: z.boolean() }),
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }
    },
    (args, extra) =>
      handle(
        extra,
        args,
        withPrograms(({ clearCredentials }) => Effect.flatMap(agentUrlOf(args.agent_url), clearCredentials)),
        (r) => r.cleared ? `Removed the credentials of ${r.agent_url}` : `No credentials were saved for ${r.agent_url}`
      )
  )
}
