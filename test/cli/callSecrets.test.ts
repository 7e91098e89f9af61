/**
 * A secret given for a call (--bearer-token, --api-key, …) is never printed back, whoever echoes
 * it: the built CLI (`npm run build` first) against a peer that echoes the credential it received
 * in its answer's text, a data part and its status. Every view (human, --json, streamed, NDJSON)
 * shows the secret masked, as the MCP door does.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { maskSecret } from "../../src/domain/secrets.js"
import { headerOf, rpcMethodOf } from "../helpers/a2aPrograms.js"
import { requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { secretEchoData, secretEchoText } from "../peers/behaviours.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

// Long enough to be unmistakable, so "not printed" means something.
const BEARER = "bearer-secret-0123456789abcdef"
const API_KEY = "apikey-secret-9876543210fedcba"

const home = tempHome()
let agent: SdkAgentHandle

beforeAll(async () => {
  requireBuiltRelay()
  agent = await startSdkAgent({ behaviour: "echo-secret" })
})

afterAll(async () => {
  await agent?.close()
  home.cleanup()
})

const relay = (...args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir })

const HEADERS = { "bearer-token": "authorization", "api-key": "x-api-key" } as const

/** `relay message <command>` with `secret` as --<option>; the agent did receive it, so the echo it answered held it. */
const sendWith = async (option: keyof typeof HEADERS, secret: string, command: "send" | "stream", ...rest: ReadonlyArray<string>) => {
  const before = agent.requests.length
  const result = await relay("message", command, "--url", agent.baseUrl, `--${option}`, secret, ...rest, "hi")
  const sends = agent.requests.slice(before).filter((request) => /^Send(Streaming)?Message$/.test(rpcMethodOf(request) ?? ""))
  expect(sends.length).toBeGreaterThan(0)
  for (const request of sends) expect(headerOf(request, HEADERS[option])).toContain(secret)
  expect(result.code, result.stderr).toBe(0)
  return result
}

const expectMasked = (result: { readonly stdout: string; readonly stderr: string }, secret: string) => {
  expect(`${result.stdout}${result.stderr}`).not.toContain(secret)
  expect(result.stdout).toContain(secretEchoText(maskSecret(secret)))
}

describe("a secret given for the call, echoed by the agent", () => {
  it("message send --json shows it masked in the answer's text and its data part", async () => {
    const result = await sendWith("bearer-token", BEARER, "send", "--json")
    expectMasked(result, BEARER)
    const answer = JSON.parse(result.stdout) as { readonly text: string; readonly parts: ReadonlyArray<unknown> }
    expect(answer.text).toContain(secretEchoText(maskSecret(BEARER)))
    expect(answer.parts).toContainEqual(expect.objectContaining({ kind: "data", data: secretEchoData(maskSecret(BEARER)) }))
  })

  it("message send shows it masked in the human view, the data part's JSON too", async () => {
    const result = await sendWith("api-key", API_KEY, "send")
    expectMasked(result, API_KEY)
    expect(result.stdout).toContain(`"credential": "${maskSecret(API_KEY)}"`)
  })

  it("message stream shows it masked as the text streams, and in the NDJSON events with --json", async () => {
    expectMasked(await sendWith("bearer-token", BEARER, "stream"), BEARER)
    const events = await sendWith("bearer-token", BEARER, "stream", "--json")
    expectMasked(events, BEARER)
    expect(events.stdout.trim().split("\n").length).toBeGreaterThan(1)
  })

  it("an error that quotes it shows it masked, with --json and without", async () => {
    // The token typed where the agent's name goes: the error names what it could not find.
    for (const json of [["--json"], []]) {
      const result = await relay("message", "send", "--url", BEARER, "--bearer-token", BEARER, ...json, "hi")
      expect(result.code).toBe(1)
      expect(`${result.stdout}${result.stderr}`).not.toContain(BEARER)
      const shown = json.length === 0 ? result.stderr : (JSON.parse(result.stderr) as { error: { message: string } }).error.message
      expect(shown).toContain(`No agent is named "${maskSecret(BEARER)}"`)
    }
  })
})

describe("a saved credential, echoed by the agent", () => {
  const SAVED = "saved-bearer-0123456789abcdefgh"

  it("is shown masked by message send, --json and human, and by task get", async () => {
    const savedHome = tempHome()
    try {
      const inHome = (...args: ReadonlyArray<string>) => runRelay(args, { stateDir: savedHome.stateDir })
      expect((await inHome("auth", "set", "--url", agent.baseUrl, "--bearer-token", SAVED)).code).toBe(0)
      const before = agent.requests.length
      const json = await inHome("message", "send", "--url", agent.baseUrl, "--json", "hi")
      expect(json.code, json.stderr).toBe(0)
      const sends = agent.requests.slice(before).filter((request) => rpcMethodOf(request) === "SendMessage")
      expect(sends.length).toBeGreaterThan(0)
      for (const request of sends) expect(headerOf(request, "authorization")).toContain(SAVED)
      expect(`${json.stdout}${json.stderr}`).not.toContain(SAVED)
      const answer = JSON.parse(json.stdout) as { readonly text: string; readonly task_id: string }
      expect(answer.text).toContain(secretEchoText(maskSecret(SAVED)))
      const human = await inHome("message", "send", "--url", agent.baseUrl, "hi")
      expect(`${human.stdout}${human.stderr}`).not.toContain(SAVED)
      expect(human.stdout).toContain(secretEchoText(maskSecret(SAVED)))
      const task = await inHome("task", "get", "--url", agent.baseUrl, "--json", answer.task_id)
      expect(task.code, task.stderr).toBe(0)
      expect(`${task.stdout}${task.stderr}`).not.toContain(SAVED)
    } finally {
      savedHome.cleanup()
    }
  })
})
