/**
 * Agents by name, the programs: names kept in the session store's file (version 3 only while it
 * names agents, so older relays keep reading a store without names), resolved where each door
 * decodes an agent URL (the name or URL given; else RELAY_AGENT; else the default), added only
 * once their card was read, never overwritten.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { ConfigProvider, Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { addAgent, refreshAgents } from "../../src/programs/agentCards.js"
import { listAgents, removeAgent, resolveAgentUrl, showAgent, useAgent } from "../../src/programs/agentNames.js"
import { closedPortUrl, RealClient } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { storeLayer, tempHome } from "../helpers/stateHome.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const home = tempHome()
let relayAgent: AgentHandle
let sdk: SdkAgentHandle
let closed: string

beforeAll(async () => {
  ;[relayAgent, sdk, closed] = await Promise.all([startAgent({ model: "echo" }), startSdkAgent(), closedPortUrl()])
})

afterAll(async () => {
  await Promise.allSettled([relayAgent?.close(), sdk?.close()])
  home.cleanup()
})

const programs = Layer.mergeAll(RealClient, storeLayer(home.stateDir))
const storeFile = () => JSON.parse(Fs.readFileSync(Path.join(home.stateDir, "sessions.json"), "utf8")) as Record<string, unknown>
const withEnvironment = (variables: Record<string, string>) =>
  Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(variables))))

describe("agents by name in the session store", () => {
  it.live("adds a name once its card is read, lower-cased, with the card's summary; the store is version 3 only while it names agents", () =>
    Effect.gen(function*() {
      const { agent, card_check } = yield* addAgent({ name: "Local", agentUrl: agentUrlOf(relayAgent.baseUrl) })
      expect(agent).toMatchObject({
        name: "local",
        url: relayAgent.baseUrl,
        card_name: "relay agent",
        is_default: false,
        has_credentials: false,
        card_url: null
      })
      expect(agent.skills.map((skill) => skill.id)).toEqual(["chat"])
      expect(card_check).toMatchObject({ valid: true, error_count: 0 })
      expect(storeFile()).toMatchObject({ version: 3, agents: { local: { url: relayAgent.baseUrl } } })

      yield* addAgent({ name: "sdk", agentUrl: agentUrlOf(sdk.baseUrl), description: "The SDK's agent" })
      expect((yield* listAgents()).agents.map((each) => [each.name, each.description])).toEqual([["local", expect.any(String)], [
        "sdk",
        "The SDK's agent"
      ]])
      expect(yield* useAgent("SDK")).toMatchObject({ name: "sdk", is_default: true })
      expect(storeFile()["default_agent"]).toBe("sdk")

      // Removing the default forgets it too; with no names left the file is version 2 again, as older relays read it.
      expect(yield* removeAgent("sdk")).toEqual({ name: "sdk", removed: true, url: sdk.baseUrl })
      expect(yield* removeAgent("sdk")).toEqual({ name: "sdk", removed: false, url: null })
      expect((yield* listAgents()).default_agent).toBeNull()
      yield* removeAgent("local")
      expect(storeFile()).toEqual({ version: 2, sessions: {} })
    }).pipe(Effect.provide(programs)))

  it.live("refuses a name that is taken, or that is no name, before anything is fetched; a card that cannot be read adds nothing", () =>
    Effect.gen(function*() {
      yield* addAgent({ name: "taken", agentUrl: agentUrlOf(sdk.baseUrl) })
      const before = sdk.requests.length
      expect(yield* Effect.flip(addAgent({ name: "taken", agentUrl: agentUrlOf(relayAgent.baseUrl) }))).toMatchObject({
        code: "agent_exists"
      })
      expect(yield* Effect.flip(addAgent({ name: "http://x", agentUrl: agentUrlOf(relayAgent.baseUrl) }))).toMatchObject({
        code: "invalid_agent_name"
      })
      expect(sdk.requests.length).toBe(before)
      expect(yield* Effect.flip(addAgent({ name: "gone", agentUrl: agentUrlOf(closed) }))).toMatchObject({ code: "agent_unreachable" })
      expect((yield* listAgents()).agents.map((agent) => agent.name)).toEqual(["taken"])
      // Reading the cards again: one that cannot be read is reported, the others kept.
      const refreshed = yield* refreshAgents(undefined)
      expect(refreshed).toMatchObject({ count: 1, failed: 0, agents: [{ name: "taken", ok: true, card_name: "SDK Test Agent" }] })
      expect(yield* Effect.flip(refreshAgents("nobody"))).toMatchObject({ code: "unknown_agent" })
      yield* removeAgent("taken")
    }).pipe(Effect.provide(programs)))
})

describe("resolving what a door was given", () => {
  it.live("a bare word is a name, anything else a URL; given nothing: RELAY_AGENT, else the default, else a usage error", () =>
    Effect.gen(function*() {
      yield* addAgent({ name: "one", agentUrl: agentUrlOf(relayAgent.baseUrl) })
      yield* addAgent({ name: "two", agentUrl: agentUrlOf(sdk.baseUrl) })
      expect(yield* resolveAgentUrl("one")).toBe(relayAgent.baseUrl)
      expect(yield* resolveAgentUrl(" TWO ")).toBe(sdk.baseUrl)
      expect(yield* resolveAgentUrl(`${sdk.baseUrl.toUpperCase().replace("HTTP://", "http://")}/`)).toBe(sdk.baseUrl)
      const unknown = yield* Effect.flip(resolveAgentUrl("localhost"))
      expect(unknown).toMatchObject({ code: "unknown_agent", message: "No agent is named \"localhost\"" })
      expect(yield* Effect.flip(resolveAgentUrl("localhost:8000"))).toMatchObject({ code: "invalid_agent_url" })

      expect(yield* Effect.flip(resolveAgentUrl(undefined).pipe(withEnvironment({})))).toMatchObject({
        code: "invalid_input",
        message: "No agent given"
      })
      yield* useAgent("one")
      expect(yield* resolveAgentUrl(undefined).pipe(withEnvironment({}))).toBe(relayAgent.baseUrl)
      // RELAY_AGENT comes before the default, and takes a name or a URL.
      expect(yield* resolveAgentUrl(undefined).pipe(withEnvironment({ RELAY_AGENT: "two" }))).toBe(sdk.baseUrl)
      expect(yield* resolveAgentUrl(undefined).pipe(withEnvironment({ RELAY_AGENT: closed }))).toBe(closed)
      // Given beats both.
      expect(yield* resolveAgentUrl("two").pipe(withEnvironment({ RELAY_AGENT: "one" }))).toBe(sdk.baseUrl)
      expect(yield* showAgent("one")).toMatchObject({ is_default: true })
      yield* Effect.all([removeAgent("one"), removeAgent("two")])
    }).pipe(Effect.provide(programs)))
})
