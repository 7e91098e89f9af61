/**
 * The card tools: validate_agent_card and get_agent_card, running the card programs (loaded on
 * the first call, with the card validator and its JSON Schema engine).
 */
import { Effect } from "effect"
import * as z from "zod"
import type { CardResult, ValidationResult } from "../programs/cards.js"
import { issueShape, nullableString, shapeOf } from "./resultShapes.js"
import { contacting, loadedOnFirstUse, READ_ONLY_REMOTE, secrets, type ToolKit, withPrograms } from "./toolKit.js"

/** The card programs, with the card validator and its JSON Schema engine, load on the first card tool call. */
const cardPrograms = loadedOnFirstUse(() => import("../programs/cards.js"))

/** A few lines about an agent: who it is, what it can do, where it listens. */
const summarizeCard = (result: { agent_url: string; generation: string; card: unknown }) => {
  const card = (typeof result.card === "object" && result.card !== null ? result.card : {}) as Record<string, unknown>
  const text = (value: unknown) => (typeof value === "string" ? value : "")
  const skills = Array.isArray(card["skills"]) ? (card["skills"] as ReadonlyArray<Record<string, unknown>>) : []
  const capabilities = (card["capabilities"] ?? {}) as Record<string, unknown>
  return [
    `${text(card["name"]) || "Unnamed agent"} (A2A ${result.generation}) at ${result.agent_url}`,
    text(card["description"]),
    `Skills: ${skills.map((skill) => `${text(skill["id"])} (${text(skill["name"])})`).join(", ") || "none listed"}`,
    `Streaming: ${capabilities["streaming"] === true ? "yes" : "no"}; push notifications: ${
      capabilities["pushNotifications"] === true ? "yes" : "no"
    }`,
    "The full card is in the structured result. Next: send_message."
  ].filter((line) => line !== "").join("\n")
}

export const registerCardTools = ({ server, handle, atAgent, readableDirectories }: ToolKit) => {
  server.registerTool("validate_agent_card", {
    title: "Validate an agent card",
    description: "Check an A2A agent card (v1.0 or v0.3) from a URL or a file and list every problem with a stable code, " +
      "severity, JSON path and fix hint. Use before relying on an unknown agent or when another tool reports an invalid " +
      "card. Next: get_agent_card to read the card, or send_message to talk to the agent.",
    inputSchema: {
      source: z.string().describe("An agent's saved name (list_agents), base URL, card URL, or card file path"),
      from_file: z.boolean().optional().describe("Treat source as a file path"),
      ...secrets
    },
    outputSchema: shapeOf<ValidationResult>()({
      valid: z.boolean(),
      source: z.string(),
      agent_name: nullableString,
      protocol_version: nullableString,
      generation: z.string(),
      capabilities: z.object({ streaming: z.boolean(), push_notifications: z.boolean() }),
      issues: z.array(issueShape),
      error_count: z.number(),
      warning_count: z.number()
    }),
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(
      extra,
      args,
      withPrograms(({ insideDirectories }) =>
        Effect.flatMap(cardPrograms, ({ validateCard }) =>
          validateCard({
            source: args.source,
            fromFile: args.from_file,
            bearerToken: args.bearer_token,
            apiKey: args.api_key
          }, insideDirectories(readableDirectories)))
      ),
      (r) =>
        `${r.valid ? "Valid" : "Invalid"} agent card${r.agent_name ? ` "${r.agent_name}"` : ""} (${r.generation}): ` +
        `${r.error_count} error(s), ${r.warning_count} warning(s)` +
        r.issues.slice(0, 5).map((issue) => `\n- ${issue.severity} ${issue.code} at ${issue.path}: ${issue.message}`).join("")
    ))

  server.registerTool("get_agent_card", {
    title: "Get an agent's card",
    description: "Fetch an A2A agent's card: its name, skills, capabilities and interfaces. Use to learn what an agent " +
      "can do before talking to it; authenticated=true fetches the extended card (needs credentials). " +
      "Next: send_message; validate_agent_card if the card looks wrong.",
    inputSchema: { ...contacting, authenticated: z.boolean().optional().describe("Fetch the extended card for authenticated clients") },
    outputSchema: shapeOf<CardResult>()({
      agent_url: z.string(),
      card_url: z.string(),
      generation: z.string(),
      card: z.record(z.string(), z.unknown())
    }),
    annotations: READ_ONLY_REMOTE
  }, (args, extra) =>
    handle(
      extra,
      args,
      atAgent(args, (access) => Effect.flatMap(cardPrograms, ({ getCard }) => getCard({ ...access, authenticated: args.authenticated }))),
      summarizeCard
    ))
}
