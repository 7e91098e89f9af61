/**
 * An agent's question put to the user directly, when the client can show a form (toolCall.ts):
 * the agent's words as the message and a text field, plus, when the agent's data part gives a
 * JSON Schema of an object, a field for each of its flat properties. The answer goes back to the
 * agent as its next message (the text, then the fields as one data part), and what the agent says
 * then is the call's result, until it no longer asks. A user who declines or cancels leaves the
 * task waiting for input, as if nobody had been asked.
 */
import { Effect } from "effect"
import type { AnswerPart } from "../domain/answerParts.js"
import type { MessageResult } from "../domain/results.js"
import type { FormField, FormRequest, UserPrompt } from "./toolCall.js"

/** Questions asked in one call at most: an agent that keeps asking cannot keep the user forever. */
export const MAX_QUESTIONS = 5

/** Fields taken from an agent's schema at most: a form is for a person to fill. */
export const MAX_SCHEMA_FIELDS = 20

const ANSWER_FIELD = "answer"
const FALLBACK_QUESTION = "The agent needs more input to continue."

/** What the user answered, as the agent receives it. */
export interface UserReply {
  readonly text: string
  /** The form's fields of the agent's schema, as one JSON object; none when the agent gave no schema. */
  readonly data?: Readonly<Record<string, unknown>> | undefined
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null && !Array.isArray(value)
const stringOf = (value: unknown) => (typeof value === "string" ? value : undefined)
const numberOf = (value: unknown) => (typeof value === "number" && Number.isFinite(value) ? value : undefined)
const defined = <T extends object>(fields: T): T =>
  Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined)) as T

const FORMATS = new Set(["email", "uri", "date", "date-time"])

/** A property of the agent's schema as a form field; none for what a flat form cannot hold (objects, arrays). */
const fieldOf = (property: unknown): FormField | undefined => {
  if (!isRecord(property)) return undefined
  const described = { title: stringOf(property["title"]), description: stringOf(property["description"]) }
  const choices = Array.isArray(property["enum"]) && property["enum"].every((choice) => typeof choice === "string")
    ? property["enum"] as ReadonlyArray<string>
    : undefined
  const type = property["type"] ?? (choices === undefined ? undefined : "string")
  switch (type) {
    case "string": {
      const format = stringOf(property["format"])
      return defined({
        type: "string" as const,
        ...described,
        enum: choices,
        format: format !== undefined && FORMATS.has(format) ? format as "email" : undefined,
        minLength: numberOf(property["minLength"]),
        maxLength: numberOf(property["maxLength"])
      })
    }
    case "number":
    case "integer":
      return defined({
        type: type === "integer" ? "integer" as const : "number" as const,
        ...described,
        minimum: numberOf(property["minimum"]),
        maximum: numberOf(property["maximum"])
      })
    case "boolean":
      return defined({ type: "boolean" as const, ...described })
    default:
      return undefined
  }
}

/** The fields of the first data part that is a JSON Schema of an object, with those it requires. */
const schemaFields = (parts: ReadonlyArray<AnswerPart>) => {
  for (const part of parts) {
    const schema = part.kind === "data" ? part.data : undefined
    if (!isRecord(schema) || schema["type"] !== "object" || !isRecord(schema["properties"])) continue
    const fields = Object.entries(schema["properties"]).flatMap(([name, property]) => {
      const field = name === ANSWER_FIELD ? undefined : fieldOf(property)
      return field === undefined ? [] : [[name, field] as const]
    })
    if (fields.length === 0) continue
    const kept = fields.slice(0, MAX_SCHEMA_FIELDS)
    const names = new Set(kept.map(([name]) => name))
    const required = Array.isArray(schema["required"]) ? schema["required"].filter((name) => names.has(name as string)) : []
    return { fields: Object.fromEntries(kept), required: required as ReadonlyArray<string> }
  }
  return undefined
}

/** The form asking the agent's question: its text parts as the message (the whole answer's text when it has none). */
export const questionForm = (result: Pick<MessageResult, "text" | "parts">): FormRequest => {
  const words = result.parts.flatMap((part) => (part.kind === "text" && part.text ? [part.text] : [])).join("\n").trim()
  const message = words || result.text.trim() || FALLBACK_QUESTION
  const data = schemaFields(result.parts)
  const answer: FormField = {
    type: "string",
    title: "Your answer",
    description: data === undefined ? "Sent to the agent as your reply" : "Anything to say with the fields below (optional)"
  }
  return data === undefined
    ? { message, fields: { [ANSWER_FIELD]: answer }, required: [ANSWER_FIELD] }
    : { message, fields: { [ANSWER_FIELD]: answer, ...data.fields }, required: data.required }
}

/** The form as the params of an `elicitation/create` in form mode (both eras). */
export const formElicitation = (form: FormRequest) => ({
  mode: "form" as const,
  message: form.message,
  requestedSchema: { type: "object" as const, properties: form.fields, required: [...form.required] }
})

/** The reply the form's content makes; none when the user filled in nothing. */
export const replyOf = (form: FormRequest, content: Readonly<Record<string, unknown>>): UserReply | undefined => {
  const text = typeof content[ANSWER_FIELD] === "string" ? content[ANSWER_FIELD].trim() : ""
  const names = Object.keys(form.fields).filter((name) => name !== ANSWER_FIELD)
  const data = Object.fromEntries(names.flatMap((name) => (content[name] === undefined ? [] : [[name, content[name]]])))
  if (names.length === 0) return text === "" ? undefined : { text }
  return text === "" && Object.keys(data).length === 0 ? undefined : { text, data }
}

/** How a call that asked the user ended: the agent's last answer, and whether the user left its question open. */
export interface Answered<T extends MessageResult = MessageResult> {
  readonly result: T
  readonly declined: boolean
}

/**
 * While the agent's answer asks for input and the client can show a form, asks the user and sends
 * the reply with `send` (to the same task); the last answer is the call's. Without a form, the
 * answer stays as it is.
 */
export const askingTheUser = <T extends MessageResult, E, R>(
  user: UserPrompt,
  first: T,
  send: (reply: UserReply, to: T) => Effect.Effect<T, E, R>
): Effect.Effect<Answered<T>, E, R> => {
  const askForm = user.askForm
  const round = (result: T, asked: number): Effect.Effect<Answered<T>, E, R> => {
    if (askForm === undefined || !result.needs_input || result.task_id === null || asked >= MAX_QUESTIONS) {
      return Effect.succeed({ result, declined: false })
    }
    const form = questionForm(result)
    return Effect.flatMap(askForm(form), (reply) => {
      const answer = reply.action === "accept" ? replyOf(form, reply.content) : undefined
      return answer === undefined
        ? Effect.succeed({ result, declined: true })
        : Effect.flatMap(send(answer, result), (next) => round(next, asked + 1))
    })
  }
  return round(first, 0)
}

/**
 * What a 2026-07-28 question (an `input_required` result) carries through the client and back in
 * its requestState: the task that asked, the form's field names, how many questions were asked.
 * It comes back as untrusted input, and holds only what a client may pass as arguments anyway.
 */
export interface AskedState {
  readonly task_id: string
  readonly context_id: string | null
  readonly fields: ReadonlyArray<string>
  readonly asked: number
}

/** The state a retry brought back, when it is one relay made. */
export const askedStateOf = (raw: unknown): AskedState | undefined => {
  try {
    const state: unknown = typeof raw === "string" ? JSON.parse(raw) : undefined
    if (!isRecord(state)) return undefined
    const { task_id, context_id, fields, asked } = state
    const valid = typeof task_id === "string" && (context_id === null || typeof context_id === "string") &&
      Array.isArray(fields) && fields.every((field) => typeof field === "string") && fields.length <= MAX_SCHEMA_FIELDS + 1 &&
      typeof asked === "number" && Number.isInteger(asked) && asked >= 0
    return valid ? { task_id, context_id, fields: fields as ReadonlyArray<string>, asked } : undefined
  } catch {
    return undefined
  }
}

/** The reply a retry's form content makes (replyOf, by the fields the question had); none when declined or empty. */
export const replyOfFields = (fields: ReadonlyArray<string>, content: Readonly<Record<string, unknown>> | undefined) =>
  content === undefined
    ? undefined
    : replyOf({ message: "", fields: Object.fromEntries(fields.map((name) => [name, { type: "string" as const }])), required: [] }, content)
