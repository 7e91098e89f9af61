/**
 * `relay message|task|card …` end to end: the built CLI (`npm run build` first) spawned against
 * real A2A peers started here, with RELAY_HOME in a temp dir. Checks human output, --json shapes,
 * exit codes (0 ok, 1 failure, 2 usage), errors on stderr with a hint, and that secrets never
 * reach the terminal.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SessionStore } from "../../src/services/SessionStore.js"
import {
  type CardServer,
  closedPortUrl,
  credentialHeadersOf,
  headerOf,
  rpcMethodOf,
  sentMessages,
  startCardServer,
  startTaskOn
} from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { type CliResult, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { BROKEN_V03_ERRORS, BROKEN_V1_ERRORS, brokenV03Card, brokenV1Card, validV1Card, writeCardFile } from "../helpers/sampleCards.js"
import { storeLayer, tempHome } from "../helpers/stateHome.js"
import {
  CANCELED_TEXT,
  chunkTexts,
  combinedText,
  dataPartFor,
  echoText,
  INPUT_REQUIRED_QUESTION,
  withBehaviour
} from "../peers/behaviours.js"
import type { RecordedRequest } from "../peers/httpUtil.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"

const TOKEN = "cli-bearer-token-0123456789"
const KEY = "cli-api-key-0123456789"
const PUSH_TOKEN = "cli-push-token-0123456789"
const AUTH_HEADERS = ["authorization", "x-api-key", "x-agent-key"]

const home = tempHome()
// Saved credentials live in a home of their own, so they cannot leak into the other tests.
const credsHome = tempHome()

let sdk: SdkAgentHandle
let v03: V03AgentHandle
let secured: SdkAgentHandle
let sink: WebhookSink
let brokenCard: CardServer
let closedUrl: string

beforeAll(async () => {
  requireBuiltRelay()
  ;[sdk, v03, secured, sink, brokenCard, closedUrl] = await Promise.all([
    startSdkAgent(),
    startV03Agent(),
    startSdkAgent({ requireBearer: TOKEN, extendedCard: true, name: "Secured Agent" }),
    startWebhookSink(),
    startCardServer(brokenV1Card()),
    closedPortUrl()
  ])
})

afterAll(async () => {
  await Promise.all([sdk?.close(), v03?.close(), secured?.close(), sink?.close(), brokenCard?.close()])
  home.cleanup()
  credsHome.cleanup()
})

const relay = (args: ReadonlyArray<string>, stateDir = home.stateDir) => runRelay(args, { stateDir })

/** Runs relay and returns its result with the requests it caused at `peer`. */
const relayAt = async (peer: { readonly requests: ReadonlyArray<RecordedRequest> }, args: ReadonlyArray<string>, stateDir?: string) => {
  const before = peer.requests.length
  const result = await relay(args, stateDir)
  return { ...result, sent: peer.requests.slice(before) }
}

const json = <T = Record<string, unknown>>(text: string) => JSON.parse(text) as T

const session = (agentUrl: string, stateDir = home.stateDir) => {
  const file = json<{ sessions: Record<string, Record<string, unknown>> }>(
    Fs.readFileSync(Path.join(stateDir, "sessions.json"), "utf8")
  )
  return file.sessions[agentUrl]
}

/** Exit 1, nothing on stdout, a JSON error with this code and a hint on stderr. */
const expectJsonError = (result: CliResult, code: string, exitCode = 1) => {
  expect(result.code).toBe(exitCode)
  expect(result.stdout).toBe("")
  const { error } = json<{ error: { code: string; message: string; hint: string } }>(result.stderr)
  expect(error.code).toBe(code)
  expect(error.message.length).toBeGreaterThan(0)
  expect(error.hint.length).toBeGreaterThan(0)
  return error
}

/** Exit 1, nothing on stdout, `error: …` then `hint: …` on stderr. */
const expectHumanError = (result: CliResult, message: string | RegExp, exitCode = 1) => {
  expect(result.code).toBe(exitCode)
  expect(result.stdout).toBe("")
  expect(result.stderr).toMatch(/^error: /)
  expect(result.stderr).toMatch(message)
  expect(result.stderr).toMatch(/\nhint: \S/)
}

const expectNoSecret = (result: CliResult, ...secrets: ReadonlyArray<string>) => {
  for (const secret of secrets) expect(result.stdout + result.stderr).not.toContain(secret)
}

const MESSAGE_RESULT_KEYS = [
  "binding",
  "context_id",
  "kind",
  "needs_auth",
  "needs_input",
  "parts",
  "protocol_version",
  "state",
  "task_id",
  "text",
  "updated_at"
]

// ---------------------------------------------------------------------------

describe("relay message send / stream", () => {
  it("sends a message, prints ids, state and the answer, and saves the session; no credentials go out", async () => {
    const result = await relayAt(sdk, ["message", "send", "--url", sdk.baseUrl, "hello", "world"])
    expect(result.code).toBe(0)
    expect(result.stdout).toMatch(
      /^Context ID\s+\S+\nTask ID\s+\S+\nState\s+completed\nInterface\s+JSONRPC, A2A 1\.0\n\necho: hello world\n$/
    )
    expect(credentialHeadersOf(result.sent, AUTH_HEADERS).every((headers) => Object.keys(headers).length === 0)).toBe(true)
    const taskId = /Task ID\s+(\S+)/.exec(result.stdout)?.[1]
    expect(session(sdk.baseUrl)).toMatchObject({ task_id: taskId, last_state: "completed" })
  })

  it("a task waiting for input says how to reply; --continue answers on the same task (SPEC §4.1)", async () => {
    const asked = await relay(["message", "send", "--url", sdk.baseUrl, withBehaviour("input-required", "first")])
    expect(asked.code).toBe(0)
    expect(asked.stdout).toMatch(/State\s+input-required/)
    expect(asked.stdout).toContain(INPUT_REQUIRED_QUESTION)
    expect(asked.stdout).toContain(`relay message send --url ${sdk.baseUrl} --continue <text>`)
    const saved = session(sdk.baseUrl)!
    expect(saved["last_state"]).toBe("input-required")

    const answered = await relayAt(sdk, ["message", "send", "--url", sdk.baseUrl, "--continue", "--json", "second"])
    expect(answered.code).toBe(0)
    const result = json(answered.stdout)
    expect(Object.keys(result).sort()).toEqual(MESSAGE_RESULT_KEYS)
    expect(result).toMatchObject({
      context_id: saved["context_id"],
      task_id: saved["task_id"],
      state: "completed",
      text: combinedText(["first", "second"]),
      needs_input: false,
      needs_auth: false
    })
    expect(sentMessages(answered.sent)).toMatchObject([{ contextId: saved["context_id"], taskId: saved["task_id"] }])
    expect(session(sdk.baseUrl)).toMatchObject({ task_id: saved["task_id"], last_state: "completed" })
  })

  it("an explicit --task-id wins over the saved session (--context-id with --continue is refused: commandLine.test.ts)", async () => {
    const waiting = await startTaskOn(sdk.jsonRpcUrl, withBehaviour("input-required", "elsewhere"))
    const result = await relayAt(sdk, [
      "message",
      "send",
      "--url",
      sdk.baseUrl,
      "--continue",
      "--json",
      "--task-id",
      waiting.taskId,
      "reply"
    ])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({
      context_id: waiting.contextId,
      task_id: waiting.taskId,
      state: "completed",
      text: combinedText(["elsewhere", "reply"])
    })
    expect(sentMessages(result.sent)).toMatchObject([{ taskId: waiting.taskId }])
    expect(session(sdk.baseUrl)).toMatchObject({ context_id: waiting.contextId, task_id: waiting.taskId })
  })

  it("message stream prints the text as it arrives, then the summary; state changes go to stderr", async () => {
    const result = await relay(["message", "stream", "--url", sdk.baseUrl, withBehaviour("chunked-artifact", "go")])
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith(chunkTexts("go").join(""))).toBe(true)
    expect(result.stdout).toMatch(/\n\nContext ID\s+\S+\nTask ID\s+\S+\nState\s+completed\nInterface\s+JSONRPC, A2A 1\.0\n$/)
    expect(result.stderr).toContain("[completed]")
    expect(session(sdk.baseUrl)).toMatchObject({ last_state: "completed" })
  })

  it("message send --stream --json prints NDJSON on stdout: the updates, then the final result on the last line", async () => {
    const result = await relay(["message", "send", "--url", v03.baseUrl, "--stream", "--json", withBehaviour("chunked-artifact", "v03")])
    expect(result.code).toBe(0)
    const lines = result.stdout.trimEnd().split("\n").map((line) => json(line))
    expect(lines.slice(0, -1).every((line) => line["kind"] === "update")).toBe(true)
    const parsed = lines.at(-1)!
    expect(Object.keys(parsed).sort()).toEqual(MESSAGE_RESULT_KEYS)
    expect(parsed).toMatchObject({ state: "completed", text: chunkTexts("v03").join(""), kind: "task" })
    expect(session(v03.baseUrl)).toMatchObject({ task_id: parsed["task_id"], last_state: "completed" })
  })

  it("--stream-idle-timeout ends a stream that falls silent, saving the task for a later resubscribe", async () => {
    const result = await relay([
      "message",
      "stream",
      "--url",
      sdk.baseUrl,
      "--stream-idle-timeout",
      "1",
      "--json",
      withBehaviour("slow-cancellable", "quiet")
    ])
    expect(result.code).toBe(1)
    // The slow task runs ~3 s. The timeout error and the state saved below (working) show that the idle limit, not the
    // task's end, stopped the wait; wall time on a busy machine would prove nothing more.
    const saved = session(sdk.baseUrl)
    expect(saved).toMatchObject({ last_state: "working" })
    // The error names the task left running, and how to follow it again.
    const error = json<{ error: Record<string, string> }>(result.stderr).error
    expect(error).toMatchObject({ code: "timeout", task_id: saved!["task_id"], context_id: saved!["context_id"] })
    expect(error["hint"]).toContain(`relay task resubscribe --url ${sdk.baseUrl} ${saved!["task_id"]}`)
  })

  it("data parts are shown whole and file parts saved, one line each, not dropped", async () => {
    const result = await relay(["message", "send", "--url", sdk.baseUrl, withBehaviour("data-and-file", "xyz")])
    expect(result.code).toBe(0)
    expect(result.stdout).toContain(
      `${echoText("xyz")}\n${JSON.stringify(dataPartFor("xyz"), null, 2)}\nsaved echo.txt (text/plain, 3 bytes) → `
    )
    expect(result.stdout).toMatch(/→ .*[/\\]files[/\\][^/\\]+[/\\]echo\.txt\n/)
  })

  it("--push-url registers a webhook that then receives the task's notifications; the push token is never printed", async () => {
    const result = await relay([
      "message",
      "send",
      "--url",
      sdk.baseUrl,
      "--json",
      "--push-url",
      `${sink.url}/cli-hook`,
      "--push-token",
      PUSH_TOKEN,
      "notify me"
    ])
    expect(result.code).toBe(0)
    const taskId = json(result.stdout)["task_id"] as string
    const delivery = await sink.waitFor((d) => d.path === "/cli-hook" && d.rawBody.includes("TASK_STATE_COMPLETED"), 5000)
    expect(delivery.rawBody).toContain(taskId)
    expect(delivery.headers["x-a2a-notification-token"]).toBe(PUSH_TOKEN)
    expectNoSecret(result, PUSH_TOKEN)
  })

  it("an agent that requires auth: exit 3, auth_required, and the relay auth set hint", async () => {
    const result = await relay(["message", "send", "--url", secured.baseUrl, "--json", "hi"])
    const error = expectJsonError(result, "auth_required", 3)
    expect(error.hint).toContain(`relay auth set --url ${secured.baseUrl} --bearer-token <TOKEN>`)
  })

  it("an unreachable agent: exit 4, agent_unreachable", async () => {
    expectJsonError(await relay(["message", "send", "--url", closedUrl, "--json", "hi"]), "agent_unreachable", 4)
  })

  it("no text is a usage error: exit 2 with a hint", async () => {
    const result = await relay(["message", "send", "--url", sdk.baseUrl])
    expect(result.code).toBe(2)
    expect(result.stdout).toBe("")
    expect(result.stderr).toContain("hint:")
  })
})

describe("credentials (SPEC §5) as the agent receives them", () => {
  const headersOfRun = (sent: ReadonlyArray<RecordedRequest>) =>
    new Set(credentialHeadersOf(sent, AUTH_HEADERS).map((h) => JSON.stringify(h)))

  it("--bearer-token is sent as Authorization: Bearer on every request and never printed", async () => {
    const result = await relayAt(secured, ["message", "send", "--url", secured.baseUrl, "--bearer-token", TOKEN, "hi"])
    expect(result.code).toBe(0)
    expect(headersOfRun(result.sent)).toEqual(new Set([JSON.stringify({ authorization: `Bearer ${TOKEN}` })]))
    expectNoSecret(result, TOKEN)
  })

  it("--api-key is sent as X-API-Key and nothing else", async () => {
    const result = await relayAt(sdk, ["message", "send", "--url", sdk.baseUrl, "--api-key", KEY, "hi"])
    expect(result.code).toBe(0)
    expect(headersOfRun(result.sent)).toEqual(new Set([JSON.stringify({ "x-api-key": KEY })]))
    expectNoSecret(result, KEY)
  })

  it("saved credentials are used when none are given: bearer, and an API key under its saved header", async () => {
    const dir = credsHome.stateDir
    // Saved the way any other door saves them: through the shared store.
    await Effect.runPromise(
      Effect.gen(function*() {
        const store = yield* SessionStore
        yield* store.setCredentials(agentUrlOf(secured.baseUrl), { kind: "bearer", token: TOKEN })
        yield* store.setCredentials(agentUrlOf(sdk.baseUrl), { kind: "api_key", key: KEY, header: "X-Agent-Key" })
      }).pipe(Effect.provide(storeLayer(dir)))
    )

    const bearerRun = await relayAt(secured, ["message", "send", "--url", secured.baseUrl, "hi"], dir)
    expect(bearerRun.code).toBe(0)
    expect(headersOfRun(bearerRun.sent)).toEqual(new Set([JSON.stringify({ authorization: `Bearer ${TOKEN}` })]))
    expectNoSecret(bearerRun, TOKEN)

    const keyRun = await relayAt(sdk, ["message", "send", "--url", sdk.baseUrl, "hi"], dir)
    expect(keyRun.code).toBe(0)
    expect(headersOfRun(keyRun.sent)).toEqual(new Set([JSON.stringify({ "x-agent-key": KEY })]))
    expectNoSecret(keyRun, KEY)
  })
})

// ---------------------------------------------------------------------------

describe("relay task", () => {
  let finished: { taskId: string; contextId: string }

  beforeAll(async () => {
    const first = await startTaskOn(sdk.jsonRpcUrl, withBehaviour("input-required", "one"))
    const reply = await relay(["message", "send", "--url", sdk.baseUrl, "--task-id", first.taskId, "--json", "two"])
    expect(json(reply.stdout)["state"]).toBe("completed")
    finished = first
  })

  it("task get prints the task, and with --history-length that many history messages", async () => {
    const [human, asJson] = await Promise.all([
      relay(["task", "get", "--url", sdk.baseUrl, finished.taskId, "--history-length", "10"]),
      relay(["task", "get", "--url", sdk.baseUrl, finished.taskId, "--history-length", "1", "--json"])
    ])
    expect(human.code).toBe(0)
    expect(human.stdout).toContain(`Task ID     ${finished.taskId}\nContext ID  ${finished.contextId}\nState       completed`)
    expect(human.stdout).toContain(combinedText(["one", "two"]))
    expect(human.stdout).toContain(
      `History (3):\n  user: ${withBehaviour("input-required", "one")}\n  agent: ${INPUT_REQUIRED_QUESTION}\n  user: two`
    )
    expect(asJson.code).toBe(0)
    expect(json(asJson.stdout)).toEqual({
      task_id: finished.taskId,
      context_id: finished.contextId,
      state: "completed",
      text: combinedText(["one", "two"]),
      parts: [expect.objectContaining({ kind: "text", text: null })],
      needs_input: false,
      needs_auth: false,
      kind: "task",
      updated_at: expect.any(String),
      binding: "JSONRPC",
      protocol_version: "1.0",
      history: [{ role: "user", text: "two" }]
    })
  })

  it("task get of an unknown task: exit 1 with the agent's error and a hint", async () => {
    expectHumanError(await relay(["task", "get", "--url", sdk.baseUrl, "no-such-task"]), /does not have task no-such-task/)
  })

  it("task list pages with --page-size and prints the next page token", async () => {
    const [asJson, human] = await Promise.all([
      relay(["task", "list", "--url", sdk.baseUrl, "--page-size", "1", "--json"]),
      relay(["task", "list", "--url", sdk.baseUrl, "--page-size", "1"])
    ])
    expect(asJson.code).toBe(0)
    const page = json<{ count: number; tasks: Array<Record<string, unknown>>; next_page_token: string | null; total_size: number }>(
      asJson.stdout
    )
    expect(page.count).toBe(1)
    expect(page.tasks).toHaveLength(1)
    expect(page.total_size).toBeGreaterThan(1)
    expect(page.next_page_token).toEqual(expect.any(String))
    expect(human.code).toBe(0)
    expect(human.stdout).toMatch(/^TASK ID +STATE +UPDATED +TEXT\n\S+ /)
    expect(human.stdout).toContain(`1 of ${page.total_size} tasks. More: --page-token ${page.next_page_token}`)
  })

  it("task list on a v0.3 agent: exit 1, unsupported_operation", async () => {
    expectJsonError(await relay(["task", "list", "--url", v03.baseUrl, "--json"]), "unsupported_operation")
  })

  it("task cancel stops a running task and shows the state after cancellation", async () => {
    const running = await startTaskOn(sdk.jsonRpcUrl, withBehaviour("slow-cancellable", "stop me"))
    const result = await relay(["task", "cancel", "--url", sdk.baseUrl, running.taskId, "--json"])
    expect(result.code).toBe(0)
    expect(json(result.stdout)).toMatchObject({ task_id: running.taskId, state: "canceled", text: CANCELED_TEXT })
  })

  it("task cancel of a finished task: exit 1, TaskNotCancelable with a hint", async () => {
    const result = await relay(["task", "cancel", "--url", sdk.baseUrl, finished.taskId])
    expectHumanError(result, /TaskNotCancelable/)
    expect(result.stderr).toContain("relay task get")
  })

  it("task resubscribe follows a running task's stream to its end", async () => {
    const running = await startTaskOn(sdk.jsonRpcUrl, withBehaviour("slow-cancellable", "later"))
    const result = await relay(["task", "resubscribe", "--url", sdk.baseUrl, running.taskId])
    expect(result.code).toBe(0)
    expect(result.stdout.startsWith(echoText("later"))).toBe(true)
    expect(result.stdout).toMatch(
      new RegExp(
        `Task ID\\s+${running.taskId}\\nContext ID\\s+${running.contextId}\\nState\\s+completed\\nInterface\\s+JSONRPC, A2A 1\\.0\\n$`
      )
    )
    expect(result.stderr).toContain("[working]")
    expect(result.stderr).toContain("[completed]")
  })

  describe("task notification", () => {
    const WEBHOOK_TOKEN = "cli-webhook-token-abcdef"
    const masked = `…${WEBHOOK_TOKEN.slice(-4)}`
    const base = () => ["--url", sdk.baseUrl, finished.taskId]

    it("set, get, list and delete a task's push configs; the token is masked everywhere", async () => {
      const set = await relayAt(sdk, [
        "task",
        "notification",
        "set",
        ...base(),
        "--webhook-url",
        `${sink.url}/task-hook`,
        "--webhook-token",
        WEBHOOK_TOKEN
      ])
      expect(set.code).toBe(0)
      expect(set.stdout).toMatch(
        /^Push notifications configured\nTask ID\s+\S+\nConfig ID\s+\S+\nURL\s+http:\/\/127\.0\.0\.1:\d+\/task-hook\nToken\s+(\S+)/
      )
      expect(set.stdout).toContain(`Token        ${masked}`)
      // The agent got the real token.
      const created = set.sent.find((request) => rpcMethodOf(request) === "CreateTaskPushNotificationConfig")
      expect(JSON.stringify(created?.body)).toContain(WEBHOOK_TOKEN)
      const configId = /Config ID\s+(\S+)/.exec(set.stdout)![1]!

      const [byId, first, list] = await Promise.all([
        relay(["task", "notification", "get", ...base(), "--config-id", configId, "--json"]),
        relay(["task", "notification", "get", ...base()]),
        relay(["task", "notification", "list", ...base(), "--json"])
      ])
      const expected = { task_id: finished.taskId, config_id: configId, url: `${sink.url}/task-hook`, token: masked, auth_scheme: null }
      expect(json(byId.stdout)).toEqual(expected)
      expect(first.code).toBe(0)
      expect(first.stdout).toContain(`Config ID    ${configId}`)
      expect(json(list.stdout)).toEqual({ count: 1, configs: [expected] })
      for (const result of [set, byId, first, list]) expectNoSecret(result, WEBHOOK_TOKEN)

      const deleted = await relay(["task", "notification", "delete", ...base(), "--config-id", configId])
      expect(deleted.code).toBe(0)
      expect(deleted.stdout).toMatch(/^Deleted\nTask ID\s+\S+\nConfig ID\s+\S+\n$/)
      const after = await relay(["task", "notification", "list", ...base(), "--json"])
      expect(json(after.stdout)).toEqual({ count: 0, configs: [] })
    })
  })
})

// ---------------------------------------------------------------------------

describe("relay card", () => {
  it("card get prints the card as JSON", async () => {
    const result = await relay(["card", "get", "--url", sdk.baseUrl])
    expect(result.code).toBe(0)
    const card = json(result.stdout)
    expect(card).toMatchObject({ name: "SDK Test Agent", capabilities: { streaming: true, pushNotifications: true } })
    expect(result.stdout).not.toContain("null")
  })

  it("card get --authenticated fetches the extended card with the bearer token", async () => {
    const result = await relayAt(secured, ["card", "get", "--url", secured.baseUrl, "--authenticated", "--bearer-token", TOKEN, "--json"])
    expect(result.code).toBe(0)
    const parsed = json<{ card: { skills: Array<{ id: string }> }; generation: string }>(result.stdout)
    expect(parsed.card.skills.map((skill) => skill.id)).toEqual(["scripted", "extended-only"])
    expect(result.sent.every((request) => headerOf(request, "authorization") === `Bearer ${TOKEN}`)).toBe(true)
    expectNoSecret(result, TOKEN)
  })

  it("card get --authenticated without credentials: auth required (exit 3), with the relay auth set hint", async () => {
    const result = await relay(["card", "get", "--url", secured.baseUrl, "--authenticated"])
    expectHumanError(result, /requires authentication/, 3)
    expect(result.stderr).toContain(`hint: Save credentials with relay auth set --url ${secured.baseUrl}`)
  })

  it("card get where no card is served: exit 1, card_not_found", async () => {
    expectJsonError(await relay(["card", "get", "--url", `${brokenCard.baseUrl}/missing/card.json`, "--json"]), "card_not_found")
  })

  it("card validate accepts the cards of v1.0 and v0.3 agents", async () => {
    const [v1, old] = await Promise.all([
      relay(["card", "validate", sdk.baseUrl]),
      relay(["card", "validate", v03.baseUrl, "--json"])
    ])
    expect(v1.code).toBe(0)
    expect(v1.stdout).toMatch(
      /^Valid agent card\nAgent\s+SDK Test Agent\nProtocol\s+1\.0\nGeneration\s+1\.0\nStreaming\s+true\nPush\s+true\nSource\s+http/
    )
    expect(old.code).toBe(0)
    expect(json(old.stdout)).toMatchObject({
      valid: true,
      source: v03.baseUrl,
      agent_name: "v0.3 Test Agent",
      protocol_version: "0.3.0",
      generation: "0.3",
      capabilities: { streaming: true, push_notifications: true },
      error_count: 0
    })
  })

  it("card validate of files: a valid v1.0 card exits 0; broken cards exit 1 and list every issue", async () => {
    const good = writeCardFile(home.parent, "good-v1.json", validV1Card())
    const brokenV1 = writeCardFile(home.parent, "broken-v1.json", brokenV1Card())
    const brokenV03 = writeCardFile(home.parent, "broken-v03.json", brokenV03Card())
    const [valid, human, asJson] = await Promise.all([
      relay(["card", "validate", good]),
      relay(["card", "validate", brokenV1, "--file"]),
      relay(["card", "validate", brokenV03, "--file", "--json"])
    ])
    expect(valid.code).toBe(0)
    expect(valid.stdout).toMatch(/^Valid agent card\nAgent\s+Weather Agent/)
    expect(valid.stdout).not.toContain("Issues")

    expect(human.code).toBe(1)
    expect(human.stdout).toMatch(/^Invalid agent card\n/)
    expect(human.stdout).toContain(`Issues (${BROKEN_V1_ERRORS.length}):`)
    for (const [code, path] of BROKEN_V1_ERRORS) expect(human.stdout).toContain(`✗ ${code} ${path}: `)

    expect(asJson.code).toBe(1)
    const result = json<
      {
        valid: boolean
        generation: string
        error_count: number
        issues: Array<{ code: string; path: string; severity: string; hint: string }>
      }
    >(asJson.stdout)
    expect(result).toMatchObject({ valid: false, generation: "0.3", error_count: BROKEN_V03_ERRORS.length })
    expect(result.issues.filter((i) => i.severity === "error").map((i) => [i.code, i.path])).toEqual(BROKEN_V03_ERRORS)
    expect(result.issues.every((i) => i.hint.length > 0)).toBe(true)
  })
})
