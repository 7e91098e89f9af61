/**
 * The MCP tools of agents by name: `list_agents`, what an assistant picks an agent from (names,
 * URLs, descriptions, skills with their descriptions, tags and modes), and `add_agent` /
 * `remove_agent`, which change the names every door shares (`relay agent add|remove`). Each runs
 * the program of its terminal command. Every tool's `agent_url` takes these names (toolKit.ts, atAgent).
 */
import type { ToolAnnotations } from "@modelcontextprotocol/server"
import { Effect } from "effect"
import * as z from "zod"
import { canonicalAgentUrl } from "../domain/agentUrl.js"
import { escapeForTerminal } from "../domain/terminalText.js"
import type { AddedAgent } from "../programs/agentCards.js"
import { type AgentList, type AgentView, listAgents, removeAgent, type RemoveResult } from "../programs/agentNames.js"
import { nullableString, shapeOf } from "./resultShapes.js"
import { READ_ONLY_LOCAL, type ToolKit } from "./toolKit.js"

const skillShape = z.object(
  shapeOf<AgentView["skills"][number]>()({
    id: z.string(),
    name: z.string(),
    description: z.string(),
    tags: z.array(z.string()),
    input_modes: z.array(z.string()).describe("Media types the skill takes (the agent's defaults when it names none)"),
    output_modes: z.array(z.string())
  })
)

const agentShape = z.object(
  shapeOf<AgentView>()({
    name: z.string().describe("Pass it as agent_url to any tool"),
    url: z.string(),
    is_default: z.boolean().describe("The default of the relay terminal commands"),
    description: nullableString.describe("The user's description, else the card's"),
    card_name: nullableString,
    skills: z.array(skillShape),
    skills_omitted: z.number().describe("Skills the card listed past the 64 relay keeps"),
    default_input_modes: z.array(z.string()),
    default_output_modes: z.array(z.string()),
    card_url: nullableString.describe("Where the card is, when off the well-known path"),
    has_credentials: z.boolean(),
    card_read_at: nullableString,
    added_at: z.string()
  })
)

const listShape = shapeOf<AgentList>()({ count: z.number(), default_agent: nullableString, agents: z.array(agentShape) })

const cardCheckShape = z.object({
  valid: z.boolean(),
  error_count: z.number(),
  warning_count: z.number(),
  issues: z.array(z.object({ code: z.string(), severity: z.string(), path: z.string(), message: z.string() })).describe(
    "The first few; validate_agent_card lists all"
  )
})
const addedShape = shapeOf<AddedAgent>()({ agent: agentShape, card_check: cardCheckShape })

const removeShape = shapeOf<RemoveResult>()({
  name: z.string(),
  removed: z.boolean(),
  url: nullableString.describe("The URL the name stood for")
})

/** Foreign text in a summary: escaped (control characters shown, never obeyed) and cut. */
const excerpt = (text: string, max = 160) => escapeForTerminal(text.length > max ? `${text.slice(0, max - 1)}…` : text)

const SKILLS_SUMMARIZED = 8

const summarizeAgent = (agent: AgentView) => {
  const skills = agent.skills.slice(0, SKILLS_SUMMARIZED).map((skill) => excerpt(skill.name || skill.id, 60))
  const more = agent.skills.length - skills.length + agent.skills_omitted
  return `${agent.name}${agent.is_default ? " (default)" : ""}: ${excerpt(agent.url)}` +
    (agent.card_name === null ? "" : ` — ${excerpt(agent.card_name, 80)}`) +
    (agent.description === null ? "" : `: ${excerpt(agent.description)}`) +
    (skills.length === 0 ? "" : ` [skills: ${skills.join(", ")}${more > 0 ? ` and ${more} more` : ""}]`)
}

/** The card programs, with the A2A client and the validator, load on the first add_agent call. */
const cardPrograms = Effect.promise(() => import("../programs/agentCards.js"))

const LOCAL_CHANGE: ToolAnnotations = { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false }

export const registerAgentTools = ({ server, context, handle }: ToolKit) => {
  server.registerTool(
    "list_agents",
    {
      title: "List the agents saved by name",
      description: "List the A2A agents saved by name (shared with the relay terminal): each one's name, URL, description, " +
        "skills with their descriptions, tags and input/output modes, and whether credentials are saved. Use to pick the " +
        "agent for a job, then pass its name as agent_url to send_message (or any tool). Next: send_message; add_agent to save another.",
      inputSchema: {},
      outputSchema: listShape,
      annotations: READ_ONLY_LOCAL
    },
    (args, extra) =>
      handle(
        extra,
        args,
        listAgents(),
        (list) => list.count === 0 ? "No agents saved by name (add_agent saves one)" : list.agents.map(summarizeAgent).join("\n")
      )
  )

  server.registerTool("add_agent", {
    title: "Save an agent under a name",
    description: "Save an A2A agent under a short name, for every later call (from here and the relay terminal): its card " +
      "is fetched and validated first (issues are reported in card_check, not refused) and its skills kept. Use when the " +
      "user names an agent to keep, or a URL will be used again. Next: send_message with agent_url set to the name; list_agents.",
    inputSchema: {
      name: z.string().describe("A bare word: letters, digits, '.', '_' or '-' (lower-cased), e.g. research-bot"),
      url: z.string().describe("The agent's base URL, or its card file's URL (….json)"),
      card_url: z.string().optional().describe("Full URL of the card when it is not at the well-known path"),
      description: z.string().optional().describe("Words to show instead of the card's description")
    },
    outputSchema: addedShape,
    // It reads the card over the network and changes relay's local state; adding a taken name fails.
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true }
  }, (args, extra) =>
    handle(
      extra,
      args,
      Effect.flatMap(canonicalAgentUrl(args.url), (agentUrl) =>
        Effect.flatMap(cardPrograms, ({ addAgent }) =>
          addAgent({
            name: args.name,
            agentUrl,
            cardUrl: args.card_url,
            description: args.description,
            allowInterfaceHosts: context.allowInterfaceHosts
          }))),
      ({ agent, card_check }) =>
        `Added ${summarizeAgent(agent)}` +
        (card_check.error_count + card_check.warning_count === 0
          ? ""
          : `\nThe card has ${card_check.error_count} error(s) and ${card_check.warning_count} warning(s); validate_agent_card lists them`)
    ))

  server.registerTool(
    "remove_agent",
    {
      title: "Forget an agent's name",
      description: "Remove a name saved with add_agent (the URL's session and saved credentials stay). Use when the user " +
        "no longer wants the name. Removing a name that is not saved changes nothing. Next: list_agents.",
      inputSchema: { name: z.string().describe("The name, as list_agents shows it") },
      outputSchema: removeShape,
      annotations: LOCAL_CHANGE
    },
    (args, extra) =>
      handle(
        extra,
        args,
        removeAgent(args.name),
        (result) => result.removed ? `Removed ${result.name} (${excerpt(result.url ?? "")})` : `No agent is named ${excerpt(result.name)}`
      )
  )
}
