/**
 * What an MCP call passes on besides its arguments (src/mcp/toolCall.ts): an agent's question
 * put to the user through the client's form (elicitation), answered in the same call, declined
 * or not askable; and the call's W3C trace context forwarded to the agent as HTTP headers.
 * In process, against relay's mock agent and the official SDK agent.
 */
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { type ElicitRequest, ElicitRequestSchema, type ElicitResult } from "@modelcontextprotocol/sdk/types.js"
import { createMcpHandler } from "@modelcontextprotocol/server"
import { Effect, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { MessageResult } from "../../src/domain/results.js"
import { askingTheUser, MAX_SCHEMA_FIELDS, questionForm, replyOf, type UserReply } from "../../src/mcp/agentQuestions.js"
import { makeMcpServer } from "../../src/mcp/server.js"
import { elicitationModes, type UserPrompt } from "../../src/mcp/toolCall.js"
import { appLayer, type AppRuntime, callTool, connectModernTools, connectTools, contextFor } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { combinedText, INPUT_REQUIRED_QUESTION, SECOND_QUESTION } from "../peers/behaviours.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

type Json = Record<string, any>

const home = tempHome()
let runtime: AppRuntime
let mock: AgentHandle
let sdkAgent: SdkAgentHandle
/** The elicitation requests the form-capable client received, and how it answers the next one. */
const asked: Array<ElicitRequest["params"]> = []
let answer: (request: ElicitRequest["params"]) => ElicitResult | Promise<ElicitResult> = () => ({ action: "cancel" })
let withForms: Client
let withoutForms: Client

beforeAll(async () => {
  ;[mock, sdkAgent] = await Promise.all([startAgent({ model: "mock" }), startSdkAgent()])
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  const formClient = new Client({ name: "form-client", version: "1.0.0" }, { capabilities: { elicitation: { form: {} } } })
  formClient.setRequestHandler(ElicitRequestSchema, (request) => {
    asked.push(request.params)
    return answer(request.params)
  })
  ;[withForms, withoutForms] = await Promise.all([
    connectTools(contextFor(runtime), formClient),
    connectTools(contextFor(runtime))
  ])
}, 30_000)

afterAll(async () => {
  await Promise.allSettled([withForms?.close(), withoutForms?.close()])
  await Promise.allSettled([mock?.close(), sdkAgent?.close()])
  await runtime?.dispose()
  home.cleanup()
})

const structured = (result: { structuredContent?: unknown }) => result.structuredContent as Json

describe("an agent's question, asked of the user through the client", () => {
  it("the user's answer goes to the agent's task and the agent's next answer is the call's result", async () => {
    asked.length = 0
    answer = () => ({ action: "accept", content: { answer: "blue, please" } })
    const result = await callTool(withForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" })
    expect(result.isError ?? false).toBe(false)
    expect(asked).toHaveLength(1)
    expect(asked[0]!.mode).toBe("form")
    expect(asked[0]!.message).toContain("The mock agent needs more input")
    expect((asked[0] as Json)["requestedSchema"]).toEqual({
      type: "object",
      properties: { answer: { type: "string", title: "Your answer", description: "Sent to the agent as your reply" } },
      required: ["answer"]
    })
    const content = structured(result)
    expect(content["state"]).toBe("completed")
    expect(content["needs_input"]).toBe(false)
    expect(content["text"]).toContain("blue, please")
  })

  it("an agent that asks again is asked again, in the same call, until it answers", async () => {
    asked.length = 0
    let round = 0
    answer = () => ({ action: "accept", content: { answer: `reply ${++round}` } })
    const result = await callTool(withForms, "send_message", { agent_url: sdkAgent.baseUrl, message: "behaviour:ask-twice first" })
    expect(asked.map((params) => params.message)).toEqual([INPUT_REQUIRED_QUESTION, SECOND_QUESTION])
    expect(structured(result)).toMatchObject({ state: "completed", text: combinedText(["first", "reply 1", "reply 2"]) })
  })

  it("progress goes on while the user answers", async () => {
    answer = async () => {
      await new Promise((resolve) => setTimeout(resolve, 400))
      return { action: "accept", content: { answer: "slowly" } }
    }
    const messages: Array<string | undefined> = []
    const result = await callTool(withForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" }, {
      onprogress: (progress) => messages.push(progress.message)
    })
    expect(structured(result)["text"]).toContain("slowly")
    // The heartbeat is 100 ms here: several beats while the user took 400 ms.
    expect(messages.filter((message) => message === "Waiting for the user to answer the agent's question").length)
      .toBeGreaterThanOrEqual(2)
  })

  it("declined: the task still waits for input and the result says the user declined", async () => {
    for (const action of ["decline", "cancel"] as const) {
      asked.length = 0
      answer = () => ({ action })
      const result = await callTool(withForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" })
      expect(asked).toHaveLength(1)
      const content = structured(result)
      expect(content["state"]).toBe("input-required")
      expect(content["needs_input"]).toBe(true)
      expect(content["next_step"]).toContain("The user declined to answer")
    }
  })

  it("wait_for_task on a task waiting for input asks the user too, sends the answer and keeps waiting for the next answer", async () => {
    const waiting = structured(await callTool(withoutForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" }))
    expect(waiting["needs_input"]).toBe(true)
    asked.length = 0
    answer = () => ({ action: "accept", content: { answer: "green, thanks" } })
    const result = await callTool(withForms, "wait_for_task", { agent_url: mock.baseUrl, task_id: waiting["task_id"] })
    expect(result.isError ?? false).toBe(false)
    expect(asked.map((params) => params.message)).toEqual([expect.stringContaining("The mock agent needs more input")])
    expect(structured(result)).toMatchObject({ task_id: waiting["task_id"], kind: "task", state: "completed", needs_input: false })
    expect(structured(result)["text"]).toContain("green, thanks")
  })

  it("a client without elicitation gets today's result: needs_input and how to answer", async () => {
    asked.length = 0
    const result = await callTool(withoutForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" })
    expect(asked).toHaveLength(0)
    const content = structured(result)
    expect(content["needs_input"]).toBe(true)
    expect(content["next_step"]).toBe("The agent is waiting for input: answer with send_message (use_session=true, or the same task_id).")
  })
})

describe("what a client's elicitation capability offers", () => {
  it("an empty capability is form (2025-06-18 clients); url only when declared", () => {
    expect(elicitationModes(undefined)).toEqual({ form: false, url: false })
    expect(elicitationModes({})).toEqual({ form: true, url: false })
    expect(elicitationModes({ url: {} })).toEqual({ form: false, url: true })
    expect(elicitationModes({ form: {}, url: {} })).toEqual({ form: true, url: true })
  })
})

describe("the form of a question", () => {
  const schemaPart = (data: unknown) => ({
    kind: "data" as const,
    text: null,
    name: null,
    media_type: null,
    size: null,
    sha256: null,
    path: null,
    url: null,
    note: null,
    data,
    artifact_id: null
  })
  const textPart = (text: string) => ({ ...schemaPart(null), kind: "text" as const, text })

  it("a data request's JSON Schema adds its flat fields beside the text field; nested ones are left out", () => {
    const schema = {
      type: "object",
      properties: {
        city: { type: "string", title: "City", maxLength: 40 },
        nights: { type: "integer", minimum: 1, description: "How many nights" },
        breakfast: { type: "boolean" },
        room: { enum: ["single", "double"] },
        guests: { type: "array", items: { type: "string" } },
        answer: { type: "string" }
      },
      required: ["city", "guests"]
    }
    const form = questionForm({ text: "ignored", parts: [textPart("Where and how long?"), schemaPart(schema)] })
    expect(form.message).toBe("Where and how long?")
    expect(Object.keys(form.fields)).toEqual(["answer", "city", "nights", "breakfast", "room"])
    expect(form.fields["city"]).toEqual({ type: "string", title: "City", maxLength: 40 })
    expect(form.fields["nights"]).toEqual({ type: "integer", minimum: 1, description: "How many nights" })
    expect(form.fields["room"]).toEqual({ type: "string", enum: ["single", "double"] })
    expect(form.required).toEqual(["city"])
    expect(replyOf(form, { answer: " ok ", city: "Oslo", nights: 2 })).toEqual({ text: "ok", data: { city: "Oslo", nights: 2 } })
    expect(replyOf(form, { answer: "" })).toBeUndefined()
  })

  it("a data request's answer goes to the agent as the text and one data part", async () => {
    const schema = { type: "object", properties: { city: { type: "string" }, nights: { type: "integer" } } }
    const first: MessageResult = {
      task_id: "t1",
      context_id: "c1",
      state: "input-required",
      text: "Where?",
      parts: [textPart("Where?"), schemaPart(schema)],
      needs_input: true,
      needs_auth: false,
      kind: "task",
      updated_at: null
    }
    const sent: Array<UserReply> = []
    const user: UserPrompt = { askForm: () => Effect.succeed({ action: "accept", content: { answer: "", city: "Oslo", nights: 2 } }) }
    const answered = await Effect.runPromise(
      askingTheUser(user, first, (reply) => Effect.sync(() => (sent.push(reply), { ...first, state: "completed", needs_input: false })))
    )
    expect(sent).toEqual([{ text: "", data: { city: "Oslo", nights: 2 } }])
    expect(answered).toMatchObject({ declined: false, result: { state: "completed" } })
  })

  it("a schema of many properties gives a form of at most MAX_SCHEMA_FIELDS of them", () => {
    const properties = Object.fromEntries(Array.from({ length: 500 }, (_, index) => [`field${index}`, { type: "string" }]))
    const form = questionForm({ text: "Fill", parts: [schemaPart({ type: "object", properties, required: ["field499"] })] })
    expect(Object.keys(form.fields)).toHaveLength(MAX_SCHEMA_FIELDS + 1)
    expect(form.required).toEqual([])
  })

  it("a question without words still asks something; an empty answer is none", () => {
    const form = questionForm({ text: "", parts: [] })
    expect(form.message).toBe("The agent needs more input to continue.")
    expect(replyOf(form, { answer: "  " })).toBeUndefined()
  })
})

describe("a 2026-07-28 client: the agent's question as an input_required result", () => {
  /** The v2 client pinned to 2026-07-28, with form elicitation (it answers input_required rounds by retrying). */
  const modernWithForms = async (answerOf: (message: string) => ElicitResult) => {
    const handler = createMcpHandler(({ era }) => makeMcpServer(contextFor(runtime), era), { legacy: "reject" })
    const client = new ClientV2(
      { name: "form-client", version: "1.0.0" },
      { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: { pin: "2026-07-28" } } }
    )
    const questions: Array<string> = []
    client.setRequestHandler("elicitation/create", (request) => {
      questions.push(request.params.message)
      return answerOf(request.params.message)
    })
    await client.connect(
      new StreamableHTTPClientTransport(new URL("http://relay.test/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init)) })
    )
    return { client, questions, close: () => client.close().finally(() => handler.close()) }
  }

  it("the user's answer, sent back with the retried call, goes to the agent's task; the next answer is the result", async () => {
    const { client, questions, close } = await modernWithForms(() => ({ action: "accept", content: { answer: "blue, please" } }))
    try {
      const result = await client.callTool({ name: "send_message", arguments: { agent_url: mock.baseUrl, message: "input-required" } })
      expect(questions).toHaveLength(1)
      expect(questions[0]).toContain("The mock agent needs more input")
      const content = structured(result as { structuredContent?: unknown })
      expect(content["state"]).toBe("completed")
      expect(content["text"]).toContain("blue, please")
    } finally {
      await close()
    }
  })

  it("a declined question leaves the task waiting: needs_input, and the result says the user declined", async () => {
    const { client, questions, close } = await modernWithForms(() => ({ action: "decline" }))
    try {
      const result = await client.callTool({ name: "send_message", arguments: { agent_url: mock.baseUrl, message: "input-required" } })
      expect(questions).toHaveLength(1)
      const content = structured(result as { structuredContent?: unknown })
      expect(content["needs_input"]).toBe(true)
      expect(content["next_step"]).toContain("declined")
    } finally {
      await close()
    }
  })

  it("wait_for_task on a task waiting for input: the same question, answered by the retry; the call keeps waiting", async () => {
    const waiting = structured(await callTool(withoutForms, "send_message", { agent_url: mock.baseUrl, message: "input-required" }))
    const { client, questions, close } = await modernWithForms(() => ({ action: "accept", content: { answer: "green, thanks" } }))
    try {
      const result = await client.callTool({ name: "wait_for_task", arguments: { agent_url: mock.baseUrl, task_id: waiting["task_id"] } })
      expect(questions).toEqual([expect.stringContaining("The mock agent needs more input")])
      const content = structured(result as { structuredContent?: unknown })
      expect(content).toMatchObject({ task_id: waiting["task_id"], kind: "task", state: "completed", needs_input: false })
      expect(content["text"]).toContain("green, thanks")
    } finally {
      await close()
    }
  })
})

describe("trace context", () => {
  const TRACEPARENT = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
  const sentTo = async (meta: Json, client: Client = withoutForms) => {
    const before = sdkAgent.requests.length
    const result = await client.callTool({
      name: "send_message",
      arguments: { agent_url: sdkAgent.baseUrl, message: "hi" },
      _meta: meta
    })
    expect(result.isError ?? false).toBe(false)
    return sdkAgent.requests.slice(before).filter((request) => request.method === "POST")
  }

  it("traceparent and tracestate of the request's _meta reach the agent as headers", async () => {
    const posts = await sentTo({ traceparent: TRACEPARENT, tracestate: "relay=1,vendor=x" })
    expect(posts.length).toBeGreaterThan(0)
    for (const post of posts) {
      expect(post.headers["traceparent"]).toBe(TRACEPARENT)
      expect(post.headers["tracestate"]).toBe("relay=1,vendor=x")
    }
  })

  it("a 2026-07-28 request's _meta trace context reaches the agent too", async () => {
    const modern = await connectModernTools(contextFor(runtime))
    try {
      const posts = await sentTo({ traceparent: TRACEPARENT, tracestate: "relay=2" }, modern)
      expect(posts.length).toBeGreaterThan(0)
      for (const post of posts) expect([post.headers["traceparent"], post.headers["tracestate"]]).toEqual([TRACEPARENT, "relay=2"])
    } finally {
      await modern.close()
    }
  })

  it("a malformed traceparent is not forwarded, nor a tracestate without a valid one", async () => {
    const malformed = [
      `ff-${TRACEPARENT.slice(3)}`,
      `00-${"0".repeat(32)}-b7ad6b7169203331-01`,
      `${TRACEPARENT}\r\nx-injected: 1`,
      TRACEPARENT.toUpperCase()
    ]
    const metas: ReadonlyArray<{ traceparent?: string; tracestate: string }> = [
      ...malformed.map((traceparent) => ({ traceparent, tracestate: "a=b" })),
      { tracestate: "a=b" }
    ]
    for (const meta of metas) {
      for (const post of await sentTo(meta)) {
        // The test's HTTP client may add a span of its own (relay's disables it): never the one given.
        expect(post.headers["traceparent"]).not.toBe(meta.traceparent)
        expect(post.headers["tracestate"]).toBeUndefined()
        expect(post.headers["x-injected"]).toBeUndefined()
      }
    }
  })
})
