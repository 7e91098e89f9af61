/**
 * The output schemas of the MCP tools: the result shapes of the programs (src/domain/results.ts and
 * the programs' own result types) in zod, as the SDK announces and validates them. Each must admit
 * exactly what its program returns.
 */
import * as z from "zod"
import type { AnswerPart } from "../domain/answerParts.js"
import { CHECK_GROUPS } from "../domain/conformance.js"

export const nullableString = z.string().nullable()
const stateName = z.string().describe("Task state: submitted, working, input-required, auth-required, completed, failed, canceled, rejected")

/** Present only on an answer cut at relay's limit for a whole answer (then the result is also an error, response_too_large). */
const truncationShape = {
  truncated: z.literal(true).optional().describe("The answer grew past relay's limit: relay stopped reading and kept what it had"),
  kept_bytes: z.number().optional().describe("Bytes of the answer kept"),
  limit_bytes: z.number().optional().describe("relay's limit for a whole answer")
}

/** One part of an answer (domain/answerParts.ts AnswerPart; the check below keeps the two alike). */
export const answerPart = z.object({
  kind: z.enum(["text", "file", "data"]),
  text: nullableString.describe("A text part's text"),
  name: nullableString.describe("A file's name, as the agent gave it"),
  media_type: nullableString,
  size: z.number().nullable().describe("A file's size in bytes"),
  sha256: nullableString,
  path: nullableString.describe("Where relay saved the file's bytes (also in the content: image, audio, resource or resource_link)"),
  url: nullableString.describe("A file given by reference"),
  note: nullableString.describe("What is odd about the file, or why it was not saved"),
  data: z.unknown().describe("A data part's JSON value"),
  artifact_id: nullableString
})

/** Both ways assignable, with the same keys: the outputSchema admits exactly the parts the programs return. */
type Alike<A, B> = [A, keyof A] extends [B, keyof B] ? ([B, keyof B] extends [A, keyof A] ? true : false) : false
const answerPartIsAlike: Alike<z.infer<typeof answerPart>, AnswerPart> = true
void answerPartIsAlike

const answerParts = z.array(answerPart).describe("The answer's parts in order: text, files (saved to path, or by url) and data")

export const taskViewShape = {
  task_id: z.string(),
  context_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.literal("task"),
  updated_at: nullableString,
  ...truncationShape
}
export const nextStep = { next_step: z.string().describe("What to do next") }
export const historyShape = {
  history: z.array(z.object({ role: z.enum(["user", "agent"]), text: z.string() })).optional()
    .describe("The task's messages, when history_length was given")
}

export const messageResultShape = {
  context_id: nullableString,
  task_id: nullableString,
  state: stateName,
  text: z.string(),
  parts: answerParts,
  needs_input: z.boolean(),
  needs_auth: z.boolean(),
  kind: z.enum(["task", "message"]),
  updated_at: nullableString,
  ...truncationShape,
  ...nextStep
}

export const pushConfigShape = {
  task_id: nullableString,
  config_id: nullableString,
  url: z.string(),
  token: nullableString.describe("Masked"),
  auth_scheme: nullableString
}

export const sessionShape = {
  agent_url: z.string(),
  card_url: nullableString,
  context_id: nullableString,
  task_id: nullableString,
  last_state: nullableString,
  has_credentials: z.boolean(),
  updated_at: nullableString
}

export const issueShape = z.object({
  code: z.string(),
  severity: z.enum(["error", "warning", "info"]),
  path: z.string(),
  message: z.string(),
  hint: z.string()
})

const interfaceShape = { protocol: z.enum(["1.0", "0.3"]), binding: z.enum(["jsonrpc", "rest"]) }

/** The report of relay check --json (domain/conformance CHECK_REPORT_SCHEMA). */
export const checkReportShape = {
  schema: z.string(),
  agent_url: z.string(),
  card_url: nullableString,
  dry_run: z.boolean(),
  interfaces: z.array(z.object({ ...interfaceShape, url: z.string() })),
  results: z.array(z.object({
    id: z.string(),
    group: z.enum(CHECK_GROUPS),
    severity: z.enum(["must", "should"]),
    title: z.string(),
    spec: nullableString,
    interface: z.object(interfaceShape).nullable(),
    status: z.enum(["passed", "failed", "warning", "skipped"]),
    detail: z.string(),
    duration_ms: z.number()
  })),
  tasks_created: z.array(z.object({ task_id: z.string(), interface: z.object(interfaceShape), state: z.string() })),
  summary: z.object({ passed: z.number(), failed: z.number(), skipped: z.number(), warnings: z.number() }),
  duration_ms: z.number()
}
