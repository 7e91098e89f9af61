/**
 * A2A tasks as MCP tasks, in no protocol era's words: a long send_message or wait_for_task call
 * becomes a task handle the client polls, answers and cancels, while relay follows the agent's
 * task in the background. Every step runs the plain tool call itself (`CallTool`: the same
 * program, result and error shapes, secrets cut), so a finished task carries exactly what a plain
 * call returns. The wires (legacyTasks.ts for 2025-11-25, tasksExtension.ts for the 2026
 * `io.modelcontextprotocol/tasks` extension) only translate these views.
 *
 * - The first step waits briefly (FIRST_WAIT_SECONDS): an answer by then needs no task, and a
 *   task by then has the agent's task id, which its follow and cancellation use.
 * - While the agent works, its progress is the task's status message.
 * - An agent's question is `input_required` when the client can ask its user (elicitation), the
 *   answer is sent to the agent's task as send_message sends it; otherwise, or when the user
 *   declines, the task ends with the plain result (`needs_input: true`).
 * - Cancelling stops the follow and cancels the agent's task (cancel_task).
 * - Bounded: at most MAX_TOOL_TASKS at once; each lives TOOL_TASK_TTL_MS from its creation.
 */
import type { CallToolResult } from "@modelcontextprotocol/server"
import type { AnswerPart } from "../domain/answerParts.js"
import { formElicitation, questionForm, replyOf, type UserReply } from "./agentQuestions.js"
import { elicitationModes, type FormRequest } from "./toolCall.js"

/** An MCP task's status (the same five words in both eras). */
export type TaskStatus = "working" | "input_required" | "completed" | "failed" | "cancelled"

/** Runs one plain tool call; `say` hears its progress messages. Never rejects for the tool's own failures. */
export type CallTool = (
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
  say: (message: string) => void
) => Promise<CallToolResult>

/**
 * The progress token of a task's own steps (legacyTasks.ts): their progress becomes the task's
 * status message, and they ask the user nothing themselves (toolKit.ts).
 */
export const STEP_PROGRESS = "a2a-relay/task-step"

/** The tools whose calls may become tasks. */
export const TASK_TOOLS: ReadonlyArray<string> = ["send_message", "wait_for_task"]

/**
 * What the user is asked, under a key unique in the task's life: the agent's question as the form
 * a plain call asks it with (agentQuestions.ts: its words, an answer field, and the fields of the
 * JSON Schema its data part gives).
 */
export interface TaskQuestion {
  readonly key: string
  readonly form: FormRequest
}

/** A task as the wires show it. */
export interface ToolTask {
  readonly taskId: string
  readonly status: TaskStatus
  readonly statusMessage: string | undefined
  readonly createdAt: string
  readonly lastUpdatedAt: string
  readonly ttlMs: number
  readonly pollIntervalMs: number
  /** The plain call's result, once the task ended. */
  readonly result: CallToolResult | undefined
  /** The agent's question, while the task is input_required. */
  readonly question: TaskQuestion | undefined
}

export const MAX_TOOL_TASKS = 64
export const TOOL_TASK_TTL_MS = 60 * 60 * 1000
export const TOOL_TASK_POLL_MS = 1000
/**
 * How long the first step (and the sending of an answer) waits before the call becomes a task; in
 * whole seconds, as the tools take it. It bounds the agent's discovery too, so not shorter.
 */
export const FIRST_WAIT_SECONDS = 3
/** How long one follow step waits (the tools' largest timeout_seconds); steps repeat until the task's life ends. */
const FOLLOW_WAIT_SECONDS = 3600
const STATUS_MESSAGE_CHARS = 200

// ---------------------------------------------------------------------------
// What a plain result means for the task

/** The plain result's structured content, when it is a task view or message result. */
interface AgentTurn {
  readonly task_id?: string | null
  readonly state?: string
  readonly text?: string
  readonly parts?: ReadonlyArray<AnswerPart>
  readonly needs_input?: boolean
}

const turnOf = (result: CallToolResult): AgentTurn => (result.structuredContent ?? {}) as AgentTurn

const firstLine = (text: string) => {
  const line = text.trim().split("\n")[0] ?? ""
  return line.length > STATUS_MESSAGE_CHARS ? `${line.slice(0, STATUS_MESSAGE_CHARS - 1)}…` : line
}

const summaryOf = (result: CallToolResult) => {
  const first = result.content[0]
  return first?.type === "text" ? firstLine(first.text) : ""
}

/** Where a plain result leaves the task: still running, waiting for the user, or ended in a status. */
export type Outcome =
  | { readonly _tag: "Running"; readonly agentTaskId: string }
  | { readonly _tag: "Asking"; readonly agentTaskId: string; readonly form: FormRequest }
  | { readonly _tag: "Ended"; readonly status: Exclude<TaskStatus, "working" | "input_required">; readonly statusMessage: string }

const ENDED_STATUS: Record<string, "completed" | "failed" | "cancelled"> = {
  completed: "completed",
  failed: "failed",
  rejected: "failed",
  canceled: "cancelled"
}

/**
 * The outcome of a plain send_message / wait_for_task result: A2A submitted/working → running;
 * input-required → asking (when the client can ask its user); completed → completed; failed and
 * rejected → failed; canceled → cancelled; a tool error → failed. Anything else (auth-required,
 * an unknown state, a question nobody can be asked) ends the task as completed: its result says
 * what to do next, as the plain call's does.
 */
export const outcomeOf = (result: CallToolResult, canAsk: boolean): Outcome => {
  const turn = turnOf(result)
  const agentTaskId = typeof turn.task_id === "string" && turn.task_id !== "" ? turn.task_id : undefined
  const statusMessage = summaryOf(result)
  if (result.isError === true) return { _tag: "Ended", status: "failed", statusMessage }
  if (agentTaskId !== undefined && (turn.state === "working" || turn.state === "submitted")) return { _tag: "Running", agentTaskId }
  if (agentTaskId !== undefined && turn.needs_input === true && canAsk) {
    return { _tag: "Asking", agentTaskId, form: questionForm({ text: turn.text?.trim() || statusMessage, parts: turn.parts ?? [] }) }
  }
  return { _tag: "Ended", status: ENDED_STATUS[turn.state ?? ""] ?? "completed", statusMessage }
}

/** The agent's task a plain result leaves running or asking; none when it ended. */
const agentTaskOf = (result: CallToolResult) => {
  const outcome = outcomeOf(result, true)
  return outcome._tag === "Ended" ? undefined : outcome.agentTaskId
}

// ---------------------------------------------------------------------------
// The tasks

/** How the calls of one task reach the agent: its agent arguments, the client's server. */
interface TaskCall {
  /** agent_url, secrets and card_url of the first call: every later step contacts the same agent the same way. */
  readonly contact: Record<string, unknown>
  readonly callTool: CallTool
  readonly canAsk: boolean
  /** Who may see the task (the 2025 session); undefined when its id alone is the key. */
  readonly owner: string | undefined
}

interface Entry {
  readonly call: TaskCall
  view: ToolTask
  agentTaskId: string | undefined
  /** The agent's task the first step reports (when it starts one), while that step may still run. */
  firstAgentTask: Promise<string | undefined>
  step: AbortController
  questions: number
  waiters: Array<() => void>
  readonly expiry: NodeJS.Timeout
}

const CONTACT_ARGUMENTS = ["agent_url", "bearer_token", "api_key", "card_url"] as const

const contactOf = (args: Record<string, unknown>) =>
  Object.fromEntries(CONTACT_ARGUMENTS.flatMap((name) => (args[name] === undefined ? [] : [[name, args[name]]])))

/** What a new task call starts from. */
export interface TaskStart {
  readonly tool: string
  readonly args: Record<string, unknown>
  readonly callTool: CallTool
  readonly canAsk: boolean
  readonly owner: string | undefined
  /** Make a task even when the first step settles (the 2025 client asked for one); else that step's result is returned plain. */
  readonly always: boolean
  readonly signal: AbortSignal
}

/** A started call: its plain result (settled at once), or the task that carries it on. */
export type Started = { readonly _tag: "Plain"; readonly result: CallToolResult } | { readonly _tag: "Task"; readonly task: ToolTask }

/** Refused: as many tasks as relay keeps are running. */
export class TooManyTasks extends Error {
  constructor() {
    super(`a2a-relay runs at most ${MAX_TOOL_TASKS} tasks at once; wait for one to end or cancel one, or call without a task`)
  }
}

export interface ToolTasksOptions {
  readonly ttlMs?: number
  readonly pollIntervalMs?: number
  readonly maxTasks?: number
  readonly firstWaitSeconds?: number
}

/** The registry of tool tasks: one per server process (or per 2025 session, which owns its tasks anyway). */
export const makeToolTasks = (options: ToolTasksOptions = {}) => {
  const ttlMs = options.ttlMs ?? TOOL_TASK_TTL_MS
  const pollIntervalMs = options.pollIntervalMs ?? TOOL_TASK_POLL_MS
  const maxTasks = options.maxTasks ?? MAX_TOOL_TASKS
  const firstWait = options.firstWaitSeconds ?? FIRST_WAIT_SECONDS
  const entries = new Map<string, Entry>()

  const now = () => new Date().toISOString()

  const change = (entry: Entry, patch: Partial<ToolTask>) => {
    entry.view = { ...entry.view, ...patch, lastUpdatedAt: now() }
    const waiters = entry.waiters
    entry.waiters = []
    for (const wake of waiters) wake()
  }

  const isLive = (entry: Entry) => entry.view.status === "working" || entry.view.status === "input_required"

  /** The result of `step` applied to its task: ended, asking, or followed by the next step. */
  const settle = (entry: Entry, step: AbortController, result: CallToolResult) => {
    if (step !== entry.step || step.signal.aborted || !isLive(entry)) return
    const outcome = outcomeOf(result, entry.call.canAsk)
    if (outcome._tag === "Ended") {
      change(entry, { status: outcome.status, statusMessage: outcome.statusMessage, result, question: undefined })
      return
    }
    entry.agentTaskId = outcome.agentTaskId
    if (outcome._tag === "Asking") {
      entry.questions += 1
      const question = { key: `question-${entry.questions}`, form: outcome.form }
      // The plain result (needs_input) is kept for a user who declines.
      change(entry, { status: "input_required", statusMessage: firstLine(outcome.form.message), question, result })
      return
    }
    if (entry.view.status !== "working") change(entry, { status: "working", question: undefined, result: undefined })
    runStep(entry, "wait_for_task", { task_id: outcome.agentTaskId, timeout_seconds: FOLLOW_WAIT_SECONDS })
  }

  const runStep = (entry: Entry, tool: string, args: Record<string, unknown>) => {
    const step = new AbortController()
    entry.step = step
    const say = (message: string) => {
      if (!step.signal.aborted && entry.view.status === "working") change(entry, { statusMessage: firstLine(message) })
    }
    entry.call.callTool(tool, { ...entry.call.contact, ...args }, step.signal, say).then(
      (result) => settle(entry, step, result),
      (error: unknown) => settle(entry, step, failure(error))
    )
  }

  const remove = (taskId: string) => {
    const entry = entries.get(taskId)
    if (entry === undefined) return
    entry.step.abort()
    clearTimeout(entry.expiry)
    entries.delete(taskId)
    // Whoever waits on it (tasks/result) hears it is gone, rather than waiting on forever.
    for (const wake of entry.waiters.splice(0)) wake()
  }

  /**
   * Places promised to first steps still running (`start` without `always`): their task is made
   * only once that step returns, after the message was sent, when it is too late to refuse.
   */
  let promised = 0

  /** Room for one more: ended tasks give way first, oldest first. */
  const makeRoom = () => {
    if (entries.size + promised < maxTasks) return
    const ended = [...entries.entries()].find(([, entry]) => !isLive(entry))
    if (ended === undefined) throw new TooManyTasks()
    remove(ended[0])
  }

  const create = (call: TaskCall): Entry => {
    makeRoom()
    const taskId = crypto.randomUUID()
    const created = now()
    const entry: Entry = {
      call,
      view: {
        taskId,
        status: "working",
        statusMessage: undefined,
        createdAt: created,
        lastUpdatedAt: created,
        ttlMs,
        pollIntervalMs,
        result: undefined,
        question: undefined
      },
      agentTaskId: undefined,
      firstAgentTask: Promise.resolve(undefined),
      step: new AbortController(),
      questions: 0,
      waiters: [],
      expiry: setTimeout(() => remove(taskId), ttlMs).unref()
    }
    entries.set(taskId, entry)
    return entry
  }

  const find = (taskId: string, owner: string | undefined) => {
    const entry = entries.get(taskId)
    return entry !== undefined && entry.call.owner === owner ? entry : undefined
  }

  return {
    /**
     * Runs the call's first step (a short wait); what is still running by then, or every call
     * when `always`, goes on as a task. A refusal (TooManyTasks) comes before anything is sent.
     */
    start: async (start: TaskStart): Promise<Started> => {
      const call: TaskCall = {
        contact: contactOf(start.args),
        callTool: start.callTool,
        canAsk: start.canAsk,
        owner: start.owner
      }
      const entry = start.always ? create(call) : undefined
      if (entry === undefined) {
        makeRoom()
        promised += 1
      }
      const firstStep = start.callTool(
        start.tool,
        { ...start.args, timeout_seconds: firstWait },
        start.signal,
        () => undefined
      ).finally(() => {
        if (entry === undefined) promised -= 1
      })
      if (entry !== undefined) entry.firstAgentTask = firstStep.then(agentTaskOf, () => undefined)
      const first = await firstStep
      const outcome = outcomeOf(first, start.canAsk)
      if (entry === undefined && outcome._tag !== "Running") return { _tag: "Plain", result: first }
      const task = entry ?? create(call)
      settle(task, task.step, first)
      return { _tag: "Task", task: task.view }
    },

    get: (taskId: string, owner: string | undefined): ToolTask | undefined => find(taskId, owner)?.view,

    /** The task once it is no longer working (ended or asking); undefined for an unknown task or an aborted wait. */
    settled: (taskId: string, owner: string | undefined, signal: AbortSignal): Promise<ToolTask | undefined> =>
      new Promise((resolve) => {
        const done = (view: ToolTask | undefined) => {
          signal.removeEventListener("abort", aborted)
          resolve(view)
        }
        const aborted = () => done(undefined)
        const check = () => {
          const entry = find(taskId, owner)
          if (entry === undefined || signal.aborted) return done(undefined)
          if (entry.view.status !== "working") return done(entry.view)
          entry.waiters.push(check)
        }
        signal.addEventListener("abort", aborted, { once: true })
        check()
      }),

    /**
     * The user's answer to the question `key`: sent to the agent's task as send_message sends it,
     * then followed. Answers to no outstanding question are ignored (false).
     */
    answer: (taskId: string, owner: string | undefined, key: string, reply: UserReply): boolean => {
      const entry = find(taskId, owner)
      if (entry === undefined || entry.view.status !== "input_required" || entry.view.question?.key !== key) return false
      change(entry, { status: "working", statusMessage: "Sending the answer", question: undefined, result: undefined })
      const data = reply.data === undefined ? {} : { data: reply.data }
      runStep(entry, "send_message", { message: reply.text, ...data, task_id: entry.agentTaskId, timeout_seconds: firstWait })
      return true
    },

    /** The user declined or dismissed the question: the task ends with the plain result, which says the agent waits for input. */
    decline: (taskId: string, owner: string | undefined, key: string): boolean => {
      const entry = find(taskId, owner)
      if (entry === undefined || entry.view.status !== "input_required" || entry.view.question?.key !== key) return false
      change(entry, { status: "completed", question: undefined })
      return true
    },

    /**
     * Stops following and cancels the agent's task (cancel_task); the task is then cancelled, its
     * result cancel_task's. Undefined for an unknown task; an ended task stays as it is.
     */
    cancel: async (taskId: string, owner: string | undefined, signal: AbortSignal): Promise<ToolTask | undefined> => {
      const entry = find(taskId, owner)
      if (entry === undefined || !isLive(entry)) return entry?.view
      // The follow's late result, if any, is dropped (settle): the task is cancelled.
      entry.step.abort()
      // A task seen (tasks/list) while its first step still runs has no agent task yet: the one
      // that step starts is cancelled once known, else the agent would go on unseen.
      const agentTaskId = entry.agentTaskId ?? await entry.firstAgentTask
      const result = agentTaskId === undefined
        ? undefined
        : await entry.call.callTool("cancel_task", { ...entry.call.contact, task_id: agentTaskId }, signal, () => undefined)
          .catch(failure)
      change(entry, {
        status: "cancelled",
        statusMessage: result === undefined ? "Cancelled" : summaryOf(result),
        question: undefined,
        result
      })
      return entry.view
    },

    list: (owner: string | undefined): ReadonlyArray<ToolTask> =>
      [...entries.values()].filter((entry) => entry.call.owner === owner).map((entry) => entry.view),

    /** Forgets every task, stopping their follows (the agents' tasks go on): the session or server closed. */
    close: () => {
      for (const taskId of [...entries.keys()]) remove(taskId)
    }
  }
}

export type ToolTasks = ReturnType<typeof makeToolTasks>

/** A step that threw instead of answering (CallTool should not): a failed task with the reason. */
const failure = (error: unknown): CallToolResult => ({
  isError: true,
  content: [{ type: "text", text: `Error [internal_error]: ${error instanceof Error ? error.message : String(error)}` }]
})

// ---------------------------------------------------------------------------
// Asking the user (an elicitation in form mode, in both eras)

/** The elicitation (form mode) that asks the user a task's question. */
export const questionElicitation = (question: TaskQuestion) => formElicitation(question.form)

/** The reply the user's answer to a task's question makes; none when they declined, cancelled or filled in nothing. */
export const replyTo = (
  question: TaskQuestion,
  answer: { readonly action?: unknown; readonly content?: unknown }
): UserReply | undefined =>
  answer.action === "accept" && typeof answer.content === "object" && answer.content !== null
    ? replyOf(question.form, answer.content as Record<string, unknown>)
    : undefined

/** Whether a client's capabilities admit a form elicitation (toolCall.ts elicitationModes). */
export const canElicitForm = (capabilities: { readonly elicitation?: object | undefined } | undefined) =>
  elicitationModes(capabilities?.elicitation).form
