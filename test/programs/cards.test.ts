/**
 * programs/cards against real peers and files: fetch a card (public or extended), validate one
 * from a URL or a file, in either generation, reporting every issue.
 */
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { terminalHint } from "../../src/cli/hints.js"
import { MAX_AGENT_JSON_DEPTH, MAX_CARD_FILE_BYTES } from "../../src/domain/limits.js"
import { getCard, validateCard } from "../../src/programs/cards.js"
import { anyFile } from "../../src/programs/readPermission.js"
import { A2aClient } from "../../src/services/A2aClient.js"
import { type CardServer, closedPortUrl, headerOf, ProgramLayer, startCardServer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import {
  BROKEN_V03_ERRORS,
  BROKEN_V1_ERRORS,
  brokenV03Card,
  brokenV1Card,
  validV03Card,
  validV1Card,
  writeCardFile
} from "../helpers/sampleCards.js"
import { tempHome } from "../helpers/stateHome.js"
import { type LegacyAgentHandle, startLegacyAgent } from "../peers/legacyCardStub.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent, type V03AgentHandle } from "../peers/v03Agent.js"

const TOKEN = "card-bearer-token-123456"

let sdk: SdkAgentHandle
let secured: SdkAgentHandle
let v03: V03AgentHandle
let legacy: LegacyAgentHandle
let brokenServer: CardServer
const home = tempHome()

beforeAll(async () => {
  ;[sdk, secured, v03, legacy, brokenServer] = await Promise.all([
    startSdkAgent(),
    startSdkAgent({ requireBearer: TOKEN, extendedCard: true, name: "Secured Agent" }),
    startV03Agent(),
    startLegacyAgent(),
    startCardServer(brokenV1Card())
  ])
})

afterAll(async () => {
  await Promise.all([sdk?.close(), secured?.close(), v03?.close(), legacy?.close(), brokenServer?.close()])
  home.cleanup()
})

const hasNull = (value: unknown): boolean => value === null || (typeof value === "object" && Object.values(value as object).some(hasNull))

const skillIds = (card: unknown) => (card as { skills: Array<{ id: string }> }).skills.map((skill) => skill.id)

describe("getCard", () => {
  it.live("returns the card as served, null fields omitted, with where it was found and its generation", () =>
    Effect.gen(function*() {
      const v1 = yield* getCard({ agentUrl: agentUrlOf(sdk.baseUrl) })
      expect(v1).toMatchObject({ agent_url: sdk.baseUrl, card_url: sdk.cardUrl, generation: "1.0" })
      expect(v1.card).toMatchObject({ name: "SDK Test Agent", capabilities: { streaming: true, pushNotifications: true } })
      expect(hasNull(v1.card)).toBe(false)

      const old = yield* getCard({ agentUrl: agentUrlOf(v03.baseUrl) })
      expect(old).toMatchObject({ generation: "0.3", card: { protocolVersion: "0.3.0", name: "v0.3 Test Agent" } })
      // A pre-0.3 agent only serves /.well-known/agent.json.
      const legacyCard = yield* getCard({ agentUrl: agentUrlOf(legacy.baseUrl) })
      expect(legacyCard).toMatchObject({ card_url: legacy.cardUrl, card: { name: "Legacy Test Agent" } })
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("with authenticated, fetches the extended card using the bearer token", () =>
    Effect.gen(function*() {
      const publicCard = yield* getCard({ agentUrl: agentUrlOf(secured.baseUrl) })
      expect(skillIds(publicCard.card)).toEqual(["scripted"])
      const before = secured.requests.length
      const extended = yield* getCard({ agentUrl: agentUrlOf(secured.baseUrl), authenticated: true, bearerToken: TOKEN })
      expect(skillIds(extended.card)).toEqual(["scripted", "extended-only"])
      const sent = secured.requests.slice(before)
      expect(sent.length).toBeGreaterThan(0)
      expect(sent.every((request) => headerOf(request, "authorization") === `Bearer ${TOKEN}`)).toBe(true)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("without credentials the extended card is auth_required, with the relay auth set hint", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(getCard({ agentUrl: agentUrlOf(secured.baseUrl), authenticated: true }))
      expect(error).toMatchObject({ _tag: "AuthRequired", code: "auth_required", status: 401 })
      expect(terminalHint(error.hint)).toContain(`relay auth set --url ${secured.baseUrl}`)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("an unreachable agent and an agent without a card are typed errors", () =>
    Effect.gen(function*() {
      const closed = yield* Effect.promise(closedPortUrl)
      const unreachable = yield* Effect.flip(getCard({ agentUrl: agentUrlOf(closed) }))
      expect(unreachable).toMatchObject({ _tag: "AgentUnreachable", code: "agent_unreachable" })
      const missing = yield* Effect.flip(getCard({ agentUrl: agentUrlOf(`${legacy.baseUrl}/nowhere/card.json`) }))
      expect(missing).toMatchObject({ _tag: "CardNotFound", code: "card_not_found" })
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("validateCard", () => {
  const pairs = (issues: ReadonlyArray<{ severity: string; code: string; path: string }>) =>
    issues.filter((issue) => issue.severity === "error").map((issue) => [issue.code, issue.path])

  it.live("validates agents' cards by URL: v1.0 and v0.3", () =>
    Effect.gen(function*() {
      const v1 = yield* validateCard({ source: sdk.baseUrl }, anyFile)
      expect(v1).toEqual({
        valid: true,
        source: sdk.baseUrl,
        agent_name: "SDK Test Agent",
        protocol_version: "1.0",
        generation: "1.0",
        capabilities: { streaming: true, push_notifications: true },
        issues: [],
        error_count: 0,
        warning_count: 0
      })
      const old = yield* validateCard({ source: v03.baseUrl }, anyFile)
      expect(old).toMatchObject({
        valid: true,
        agent_name: "v0.3 Test Agent",
        protocol_version: "0.3.0",
        generation: "0.3",
        error_count: 0
      })
      expect(old.issues.map((issue) => issue.code)).toEqual(["card.legacy_generation"])
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("reports every issue of a broken card served at a URL", () =>
    Effect.gen(function*() {
      const result = yield* validateCard({ source: brokenServer.baseUrl }, anyFile)
      expect(result).toMatchObject({ valid: false, agent_name: null, error_count: BROKEN_V1_ERRORS.length })
      expect(pairs(result.issues)).toEqual(BROKEN_V1_ERRORS)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("validates card files of both generations, valid and broken, with or without from_file", () =>
    Effect.gen(function*() {
      const v1File = writeCardFile(home.parent, "v1.json", validV1Card())
      const v03File = writeCardFile(home.parent, "v03.json", validV03Card())
      const brokenV1File = writeCardFile(home.parent, "broken-v1.json", brokenV1Card())
      const brokenV03File = writeCardFile(home.parent, "broken-v03.json", brokenV03Card())

      expect(yield* validateCard({ source: v1File, fromFile: true }, anyFile)).toMatchObject({
        valid: true,
        source: v1File,
        agent_name: "Weather Agent",
        protocol_version: "1.0",
        generation: "1.0",
        capabilities: { streaming: true, push_notifications: false },
        issues: []
      })
      // A source that is not a URL is read as a file even without from_file.
      expect(yield* validateCard({ source: v03File }, anyFile)).toMatchObject({
        valid: true,
        protocol_version: "0.3.0",
        generation: "0.3",
        capabilities: { streaming: false, push_notifications: true }
      })
      const broken1 = yield* validateCard({ source: brokenV1File, fromFile: true }, anyFile)
      expect(broken1.valid).toBe(false)
      expect(pairs(broken1.issues)).toEqual(BROKEN_V1_ERRORS)
      const broken03 = yield* validateCard({ source: brokenV03File, fromFile: true }, anyFile)
      expect(broken03).toMatchObject({ valid: false, generation: "0.3", error_count: BROKEN_V03_ERRORS.length })
      expect(pairs(broken03.issues)).toEqual(BROKEN_V03_ERRORS)
      for (const issue of [...broken1.issues, ...broken03.issues]) {
        expect(issue.message.length).toBeGreaterThan(0)
        expect(issue.hint.length).toBeGreaterThan(0)
      }
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("a file that is not JSON, or is missing, is a typed error", () =>
    Effect.gen(function*() {
      const notJson = writeCardFile(home.parent, "not-json.json", "{ name: oops")
      expect(yield* Effect.flip(validateCard({ source: notJson, fromFile: true }, anyFile))).toMatchObject({
        _tag: "InvalidCard",
        code: "invalid_card"
      })
      const missing = yield* Effect.flip(validateCard({ source: `${home.parent}/absent.json`, fromFile: true }, anyFile))
      expect(missing).toMatchObject({ _tag: "CardFileRefused", code: "card_file_refused" })
      expect(missing.message).toBe(`Cannot use ${home.parent}/absent.json as a card file: no such file`)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("refuses devices, FIFOs, directories and /proc entries without opening them, and files over the limit", () =>
    Effect.gen(function*() {
      const fifo = Path.join(home.parent, "card.fifo")
      execFileSync("mkfifo", [fifo])
      const big = writeCardFile(home.parent, "big.json", "")
      Fs.truncateSync(big, MAX_CARD_FILE_BYTES + 1)
      const refusals = [
        ["/dev/zero", "it is not a regular file (CharacterDevice)"],
        [fifo, "it is not a regular file (FIFO)"],
        [home.parent, "it is not a regular file (Directory)"],
        ["/proc/self/status", "it is a special file of /proc"],
        [big, `it is ${MAX_CARD_FILE_BYTES + 1} bytes, over the ${MAX_CARD_FILE_BYTES}-byte limit`]
      ] as const
      for (const [source, reason] of refusals) {
        const error = yield* Effect.flip(validateCard({ source, fromFile: true }, anyFile))
        expect(error, source).toMatchObject({ _tag: "CardFileRefused", reason })
      }
    }).pipe(Effect.provide(ProgramLayer), Effect.timeout("10 seconds")))

  it.live("shows nothing of a file that is not a card", () =>
    Effect.gen(function*() {
      const secret = writeCardFile(home.parent, "passwd", "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1::/usr/sbin:/usr/sbin/nologin\n")
      const error = yield* Effect.flip(validateCard({ source: secret, fromFile: true }, anyFile))
      expect(error).toMatchObject({ _tag: "InvalidCard" })
      expect(`${error.message} ${"hint" in error ? error.hint : ""}`).not.toMatch(/root|daemon|nologin|bash/)
    }).pipe(Effect.provide(ProgramLayer)))

  it.live("a card file nested 100 000 levels is InvalidCard, not a stack overflow", () =>
    Effect.gen(function*() {
      const deep = writeCardFile(home.parent, "deep.json", `{"name":${"[".repeat(100_000)}${"]".repeat(100_000)}}`)
      const error = yield* Effect.flip(validateCard({ source: deep, fromFile: true }, anyFile))
      expect(error).toMatchObject({ _tag: "InvalidCard" })
      expect(error.message).toContain(`deeper than ${MAX_AGENT_JSON_DEPTH} levels`)
    }).pipe(Effect.provide(ProgramLayer)))
})

describe("validateCard and the client agree on a served card (issue 17.5)", () => {
  const unusableCards = {
    "only interface speaks 9.9": (base: string) => ({
      ...validV1Card(),
      supportedInterfaces: [{ url: `${base}/a2a`, protocolBinding: "JSONRPC", protocolVersion: "9.9" }]
    }),
    "ftp URL with an unknown binding": () => ({
      ...validV1Card(),
      supportedInterfaces: [{ url: "ftp://127.0.0.1/a2a", protocolBinding: "SOMETHING", protocolVersion: "1.0" }]
    })
  }

  for (const [name, card] of Object.entries(unusableCards)) {
    it.live(`${name}: the validator says invalid, and the client finds no interface to use`, () =>
      Effect.acquireUseRelease(
        Effect.promise(() => startCardServer(card)),
        (server) =>
          Effect.gen(function*() {
            const result = yield* validateCard({ source: server.baseUrl }, anyFile)
            expect(result.valid).toBe(false)
            expect(result.issues.map((issue) => issue.code)).toContain("card.no_usable_interface")
            const client = yield* A2aClient
            const failure = yield* Effect.flip(client.endpoint({ agentUrl: agentUrlOf(server.baseUrl) }))
            expect(failure.message).toContain("no interface relay can use")
          }),
        (server) => Effect.promise(() => server.close())
      ).pipe(Effect.provide(ProgramLayer)))
  }
})
