/**
 * Tool tasks without a protocol era (toolTasks.ts) and in the words of the 2026 tasks extension
 * (tasksExtension.ts), over a scripted CallTool: what each A2A state becomes, the steps a task
 * runs (the same tool calls as plain calls), the user's answer and refusal, cancellation, bounds.
 */
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { describe, expect, it } from "vitest"
import { questionForm } from "../../src/mcp/agentQuestions.js"
import {
  answerTaskRequest,
  callAsTask,
  createTaskResult,
  declaresTasks,
  detailedTask,
  TasksWireError
} from "../../src/mcp/tasksExtension.js"
import {
  type CallTool,
  makeToolTasks,
  outcomeOf,
  questionElicitation,
  type TaskStart,
  type ToolTask,
  TooManyTasks
} from "../../src/mcp/toolTasks.js"

/** A plain result as send_message / wait_for_task answer it. */
const turn = (state: string, text = "", taskId: string | null = "agent-task-1"): CallToolResult => ({
  content: [{ type: "text", text: `${state}: ${text}` }],
  structuredContent: { task_id: taskId, state, text, needs_input: state === "input-required", needs_auth: state === "auth-required" }
})

const toolError: CallToolResult = { isError: true, content: [{ type: "text", text: "Error [unreachable]: no agent there" }] }

/** A CallTool whose answers the test gives, one call at a time, in the order they were made. */
const scripted = () => {
  const calls: Array<
    {
      name: string
      args: Record<string, unknown>
      signal: AbortSignal
      say: (message: string) => void
      answer: (result: CallToolResult) => void
    }
  > = []
  const waiters: Array<() => void> = []
  const callTool: CallTool = (name, args, signal, say) =>
    new Promise((answer) => {
      calls.push({ name, args, signal, say, answer })
      for (const wake of waiters.splice(0)) wake()
    })
  /** The `index`th call, once made. */
  const call = async (index: number) => {
    while (calls.length <= index) await new Promise<void>((resolve) => waiters.push(resolve))
    return calls[index]!
  }
  const taken = new Set<number>()
  /** The first call (of the tool `name`, when given) not taken yet, once made. */
  const next = async (name?: string) => {
    for (;;) {
      const index = calls.findIndex((made, i) => !taken.has(i) && (name === undefined || made.name === name))
      if (index !== -1) {
        taken.add(index)
        return calls[index]!
      }
      await new Promise<void>((resolve) => waiters.push(resolve))
    }
  }
  return { calls, call, next, callTool }
}

const startOf = (callTool: CallTool, overrides: Partial<TaskStart> = {}): TaskStart => ({
  tool: "send_message",
  args: { agent_url: "http://agent.test", bearer_token: "token-123456", message: "Hello", timeout_seconds: 30 },
  callTool,
  canAsk: true,
  owner: undefined,
  always: false,
  signal: new AbortController().signal,
  ...overrides
})

const settledOf = (tasks: ReturnType<typeof makeToolTasks>, taskId: string) =>
  tasks.settled(taskId, undefined, new AbortController().signal)

describe("outcomeOf: an A2A state as an MCP task status", () => {
  it.each([
    ["submitted", "Running"],
    ["working", "Running"],
    ["completed", "completed"],
    ["failed", "failed"],
    ["rejected", "failed"],
    ["canceled", "cancelled"],
    ["auth-required", "completed"]
  ])("%s → %s", (state, expected) => {
    const outcome = outcomeOf(turn(state), true)
    expect(outcome._tag === "Ended" ? outcome.status : outcome._tag).toBe(expected)
  })

  it("input-required asks the user the agent's question only when the client can ask; else the task ends with it", () => {
    expect(outcomeOf(turn("input-required", "Which colour?"), true)).toMatchObject({
      _tag: "Asking",
      agentTaskId: "agent-task-1",
      form: { message: "Which colour?", required: ["answer"] }
    })
    expect(outcomeOf(turn("input-required", "Which colour?"), false)).toMatchObject({ _tag: "Ended", status: "completed" })
  })

  it("a tool error fails the task with the error's summary; a direct reply (no task) completes it", () => {
    expect(outcomeOf(toolError, true)).toEqual({ _tag: "Ended", status: "failed", statusMessage: "Error [unreachable]: no agent there" })
    expect(outcomeOf(turn("completed", "Hi", null), true)).toMatchObject({ _tag: "Ended", status: "completed" })
  })
})

describe("makeToolTasks", () => {
  it("returns a settled first step plain, without a task; it waits the first wait, not the call's", async () => {
    const script = scripted()
    const tasks = makeToolTasks({ firstWaitSeconds: 2 })
    const started = tasks.start(startOf(script.callTool))
    const first = await script.call(0)
    expect(first.args).toMatchObject({ message: "Hello", timeout_seconds: 2 })
    first.answer(turn("completed", "Hi"))
    expect(await started).toEqual({ _tag: "Plain", result: turn("completed", "Hi") })
    expect(tasks.list(undefined)).toEqual([])
  })

  it("follows a running agent task with wait_for_task on the same agent, its progress as the status message", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool))
    ;(await script.call(0)).answer(turn("working"))
    const { task } = (await started) as { task: { taskId: string; status: string } }
    expect(task.status).toBe("working")
    const follow = await script.call(1)
    expect(follow.name).toBe("wait_for_task")
    expect(follow.args).toEqual({
      agent_url: "http://agent.test",
      bearer_token: "token-123456",
      task_id: "agent-task-1",
      timeout_seconds: 3600
    })
    follow.say("working: step 2 of 3")
    expect(tasks.get(task.taskId, undefined)?.statusMessage).toBe("working: step 2 of 3")
    follow.answer(turn("completed", "Done"))
    expect(await settledOf(tasks, task.taskId)).toMatchObject({ status: "completed", result: turn("completed", "Done") })
  })

  it("follows again when a follow step's wait runs out while the agent still works", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool, { always: true }))
    ;(await script.call(0)).answer(turn("working"))
    const { task } = (await started) as { task: { taskId: string } }
    ;(await script.call(1)).answer(turn("working"))
    ;(await script.call(2)).answer(turn("failed", "disk full"))
    expect(await settledOf(tasks, task.taskId)).toMatchObject({ status: "failed", statusMessage: "failed: disk full" })
  })

  it("asks, sends the answer to the agent's task as send_message, follows, and ignores answers to other questions", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool, { always: true }))
    ;(await script.call(0)).answer(turn("input-required", "Which colour?"))
    const { task } = (await started) as { task: ToolTask }
    expect(task).toMatchObject({ status: "input_required", question: { form: { message: "Which colour?" } } })
    const key = task.question!.key
    expect(tasks.answer(task.taskId, undefined, "another-key", { text: "red" })).toBe(false)
    expect(tasks.answer(task.taskId, "someone else", key, { text: "red" })).toBe(false)
    expect(tasks.answer(task.taskId, undefined, key, { text: "blue" })).toBe(true)
    expect(tasks.get(task.taskId, undefined)?.status).toBe("working")
    const sent = await script.call(1)
    expect([sent.name, sent.args]).toEqual([
      "send_message",
      { agent_url: "http://agent.test", bearer_token: "token-123456", message: "blue", task_id: "agent-task-1", timeout_seconds: 3 }
    ])
    expect(tasks.answer(task.taskId, undefined, key, { text: "again" })).toBe(false)
    sent.answer(turn("input-required", "And the size?"))
    const asked = await settledOf(tasks, task.taskId)
    // Each question has its own key.
    expect(asked?.question).toMatchObject({ form: { message: "And the size?" } })
    expect(asked?.question?.key).not.toBe(key)
    expect(tasks.decline(task.taskId, undefined, asked!.question!.key)).toBe(true)
    // Declined: the plain result, which says the agent waits for input.
    expect(tasks.get(task.taskId, undefined)).toMatchObject({ status: "completed", result: turn("input-required", "And the size?") })
  })

  it("cancels: stops the follow, cancels the agent's task, keeps cancel_task's result; ended tasks stay as they are", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool))
    ;(await script.call(0)).answer(turn("working"))
    const { task } = (await started) as { task: { taskId: string } }
    const follow = await script.call(1)
    const cancelling = tasks.cancel(task.taskId, undefined, new AbortController().signal)
    expect(follow.signal.aborted).toBe(true)
    const cancel = await script.call(2)
    expect([cancel.name, cancel.args]).toEqual([
      "cancel_task",
      { agent_url: "http://agent.test", bearer_token: "token-123456", task_id: "agent-task-1" }
    ])
    cancel.answer(turn("canceled"))
    expect(await cancelling).toMatchObject({ status: "cancelled", result: turn("canceled") })
    // The follow's late answer changes nothing.
    follow.answer(turn("completed", "too late"))
    expect(tasks.get(task.taskId, undefined)?.status).toBe("cancelled")
    expect(await tasks.cancel(task.taskId, undefined, new AbortController().signal)).toMatchObject({ status: "cancelled" })
    expect(script.calls).toHaveLength(3)
  })

  it("cancels the agent's task its first step starts when the task is cancelled (found by tasks/list) before that step returns", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool, { owner: "session-a", always: true }))
    const first = await script.next("send_message")
    const [listed] = tasks.list("session-a")
    const cancelling = tasks.cancel(listed!.taskId, "session-a", new AbortController().signal)
    first.answer(turn("working"))
    await started
    const cancel = await Promise.race([
      script.next("cancel_task"),
      new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), 2000))
    ])
    expect(cancel?.args).toEqual({ agent_url: "http://agent.test", bearer_token: "token-123456", task_id: "agent-task-1" })
    cancel?.answer(turn("canceled"))
    expect(await cancelling).toMatchObject({ status: "cancelled", result: turn("canceled") })
    // Cancelled: nothing follows the agent's task.
    expect(script.calls.map((made) => made.name)).toEqual(["send_message", "cancel_task"])
  })

  it("keeps tasks to their owner, at most maxTasks at once (ended ones give way), each for its time to live", async () => {
    const script = scripted()
    const tasks = makeToolTasks({ maxTasks: 2, ttlMs: 200 })
    const start = async (owner: string) => {
      const started = tasks.start(startOf(script.callTool, { owner, always: true }))
      ;(await script.next("send_message")).answer(turn("working"))
      return ((await started) as { task: { taskId: string } }).task.taskId
    }
    const first = await start("session-a")
    await start("session-b")
    expect(tasks.get(first, "session-b")).toBeUndefined()
    expect(tasks.list("session-a").map((task) => task.taskId)).toEqual([first])
    await expect(tasks.start(startOf(script.callTool, { always: true }))).rejects.toBeInstanceOf(TooManyTasks)
    await new Promise((resolve) => setTimeout(resolve, 300))
    expect(tasks.get(first, "session-a")).toBeUndefined()
    expect(script.calls.every((call) => call.signal.aborted || call.name !== "wait_for_task")).toBe(true)
  })

  it("forgets every task on close, stopping their follows", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const started = tasks.start(startOf(script.callTool))
    ;(await script.next("send_message")).answer(turn("working"))
    const { task } = (await started) as { task: { taskId: string } }
    const follow = await script.next("wait_for_task")
    tasks.close()
    expect(follow.signal.aborted).toBe(true)
    expect(tasks.get(task.taskId, undefined)).toBeUndefined()
  })
  it("ends a result's wait with the task unknown when the task is forgotten (its time to live ran out) while it waits", async () => {
    const script = scripted()
    const tasks = makeToolTasks({ ttlMs: 100 })
    const started = tasks.start(startOf(script.callTool, { always: true }))
    ;(await script.next("send_message")).answer(turn("working"))
    const { task } = (await started) as { task: { taskId: string } }
    const waited = await Promise.race([
      settledOf(tasks, task.taskId).then((view) => ({ view })),
      new Promise((resolve) => setTimeout(() => resolve("still waiting"), 2000))
    ])
    expect(waited).toEqual({ view: undefined })
  })
})

describe("the 2026 tasks extension", () => {
  const declaring = (elicitation?: object) => ({
    "io.modelcontextprotocol/clientCapabilities": {
      extensions: { "io.modelcontextprotocol/tasks": {} },
      ...(elicitation === undefined ? {} : { elicitation })
    }
  })
  const signal = new AbortController().signal

  /** A send_message task of a client that answers forms, created as the agent's turn is working. */
  const startedSend = async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const meta = declaring({ form: {} })
    const creating = callAsTask(tasks, {
      name: "send_message",
      args: { agent_url: "http://agent.test", message: "go" },
      meta,
      callTool: script.callTool,
      signal
    })
    ;(await script.call(0)).answer(turn("working"))
    return { script, tasks, meta, created: (await creating) as ReturnType<typeof createTaskResult> }
  }

  it("gives tasks only to clients that declare the extension, and only for send_message and wait_for_task", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    expect(declaresTasks(declaring())).toBe(true)
    expect(declaresTasks({ "io.modelcontextprotocol/clientCapabilities": { extensions: {} } })).toBe(false)
    const call = { args: {}, callTool: script.callTool, signal }
    expect(await callAsTask(tasks, { ...call, name: "send_message", meta: undefined })).toBeUndefined()
    expect(await callAsTask(tasks, { ...call, name: "list_agents", meta: declaring() })).toBeUndefined()
    expect(script.calls).toHaveLength(0)
    await expect(answerTaskRequest(tasks, { method: "tasks/get", params: { taskId: "x" }, meta: undefined }, signal)).rejects
      .toMatchObject({ code: -32021, data: { requiredCapabilities: { extensions: { "io.modelcontextprotocol/tasks": {} } } } })
    await expect(answerTaskRequest(tasks, { method: "tasks/get", params: { taskId: "x" }, meta: declaring() }, signal)).rejects
      .toMatchObject({ code: -32602 })
    await expect(answerTaskRequest(tasks, { method: "tasks/get", params: {}, meta: declaring() }, signal)).rejects.toBeInstanceOf(
      TasksWireError
    )
  })

  it("creates, polls, asks by inputRequests, takes the answer by tasks/update, and inlines the result", async () => {
    const { script, tasks, meta, created } = await startedSend()
    expect(created).toMatchObject({ resultType: "task", status: "working", ttlMs: 3_600_000, pollIntervalMs: 1000 })
    const get = () => answerTaskRequest(tasks, { method: "tasks/get", params: { taskId: created.taskId }, meta }, signal)
    expect(await get()).toMatchObject({ resultType: "complete", taskId: created.taskId, status: "working" })
    ;(await script.call(1)).answer(turn("input-required", "Which colour?"))
    await settledOf(tasks, created.taskId)
    const asking = await get() as ReturnType<typeof detailedTask> & { inputRequests: Record<string, unknown> }
    const [key] = Object.keys(asking.inputRequests)
    expect(asking).toMatchObject({ status: "input_required", statusMessage: "Which colour?" })
    expect(asking.inputRequests[key!]).toEqual({
      method: "elicitation/create",
      params: {
        mode: "form",
        message: "Which colour?",
        requestedSchema: {
          type: "object",
          properties: { answer: { type: "string", title: "Your answer", description: "Sent to the agent as your reply" } },
          required: ["answer"]
        }
      }
    })
    const update = (inputResponses: object) =>
      answerTaskRequest(tasks, { method: "tasks/update", params: { taskId: created.taskId, inputResponses }, meta }, signal)
    expect(await update({ unknown: { action: "accept", content: { answer: "red" } } })).toEqual({ resultType: "complete" })
    expect(await get()).toMatchObject({ status: "input_required" })
    expect(await update({ [key!]: { action: "accept", content: { answer: "blue" } } })).toEqual({ resultType: "complete" })
    expect((await script.call(2)).args).toMatchObject({ message: "blue", task_id: "agent-task-1" })
    script.calls[2]!.answer(turn("completed", "blue"))
    await settledOf(tasks, created.taskId)
    // The result as the call would answer it on the 2026 wire, with its resultType.
    expect(await get()).toMatchObject({ status: "completed", result: { resultType: "complete", ...turn("completed", "blue") } })
  })

  it("asks a question whose data part gives a JSON Schema with the same form as elicitation, and sends its fields as data", async () => {
    const part = (kind: "text" | "data", text: string | null, data: unknown = null) => ({
      kind,
      text,
      data,
      name: null,
      media_type: null,
      size: null,
      sha256: null,
      path: null,
      url: null,
      note: null,
      artifact_id: null
    })
    const schema = {
      type: "object",
      properties: { colour: { type: "string", enum: ["red", "blue"] }, size: { type: "integer", minimum: 1 } },
      required: ["colour"]
    }
    const asking: CallToolResult = {
      content: [{ type: "text", text: "input-required: Pick a colour and a size" }],
      structuredContent: {
        task_id: "agent-task-1",
        state: "input-required",
        text: "Pick a colour and a size",
        parts: [part("text", "Pick a colour and a size"), part("data", null, schema)],
        needs_input: true,
        needs_auth: false
      }
    }
    const { script, tasks, meta, created: { taskId } } = await startedSend()
    ;(await script.call(1)).answer(asking)
    await settledOf(tasks, taskId)
    const shown = await answerTaskRequest(tasks, { method: "tasks/get", params: { taskId }, meta }, signal)
    if (!("inputRequests" in shown)) throw new Error("the task asks nothing")
    const [key, request] = Object.entries(shown.inputRequests as Record<string, any>)[0]!
    // The elicitation path's form (agentQuestions.questionForm) for the same answer.
    const form = questionForm(asking.structuredContent as never)
    expect(request.params).toEqual({
      mode: "form",
      message: "Pick a colour and a size",
      requestedSchema: { type: "object", properties: form.fields, required: form.required }
    })
    expect(request.params.requestedSchema.properties).toMatchObject({
      colour: { enum: ["red", "blue"] },
      size: { type: "integer", minimum: 1 }
    })
    expect(request.params.requestedSchema.required).toEqual(["colour"])
    // The 2025 wire asks with the same params.
    expect(questionElicitation(tasks.get(taskId, undefined)!.question!)).toEqual(request.params)
    await answerTaskRequest(
      tasks,
      {
        method: "tasks/update",
        params: { taskId, inputResponses: { [key]: { action: "accept", content: { colour: "blue", size: 3 } } } },
        meta
      },
      signal
    )
    const sent = await script.call(2)
    expect(sent.args).toMatchObject({ message: "", data: { colour: "blue", size: 3 }, task_id: "agent-task-1" })
  })

  it("shows a failed agent task as completed with the plain result (failed is for JSON-RPC errors); cancels by tasks/cancel", async () => {
    const script = scripted()
    const tasks = makeToolTasks()
    const meta = declaring()
    const start = async () => {
      const creating = callAsTask(tasks, {
        name: "wait_for_task",
        args: { agent_url: "http://agent.test", task_id: "t" },
        meta,
        callTool: script.callTool,
        signal
      })
      ;(await script.next("wait_for_task")).answer(turn("working"))
      return ((await creating) as { taskId: string }).taskId
    }
    const failing = await start()
    ;(await script.next("wait_for_task")).answer(turn("rejected", "not my job"))
    await settledOf(tasks, failing)
    expect(detailedTask(tasks.get(failing, undefined)!)).toMatchObject({
      status: "completed",
      statusMessage: "rejected: not my job",
      result: turn("rejected", "not my job")
    })
    const cancelled = await start()
    const cancelling = answerTaskRequest(tasks, { method: "tasks/cancel", params: { taskId: cancelled }, meta }, signal)
    ;(await script.next("cancel_task")).answer(turn("canceled"))
    expect(await cancelling).toEqual({ resultType: "complete" })
    const shown = detailedTask(tasks.get(cancelled, undefined)!)
    expect(shown).toMatchObject({ status: "cancelled" })
    expect(shown).not.toHaveProperty("result")
  })

  it("never sends a message twice when more calls start at once than there is room for tasks", async () => {
    const script = scripted()
    const tasks = makeToolTasks({ maxTasks: 1 })
    const start = (message: string) =>
      callAsTask(tasks, {
        name: "send_message",
        args: { agent_url: "http://agent.test", message },
        meta: declaring(),
        callTool: script.callTool,
        signal
      })
    const answers = [start("one"), start("two")]
    // A first step that was made answers as the agent left it: still working.
    const stepsMade = await Promise.race([
      script.call(1).then(() => 2),
      new Promise<number>((resolve) => setTimeout(() => resolve(script.calls.length), 500))
    ])
    for (const made of script.calls.slice(0, stepsMade)) made.answer(turn("working"))
    const results = await Promise.all(answers)
    // An undefined answer is a call the server then runs plain, sending its message again.
    const plainReruns = results.filter((result) => result === undefined).length
    const sends = script.calls.filter((made) => made.name === "send_message").length
    expect(sends + plainReruns).toBe(2)
  })
})
