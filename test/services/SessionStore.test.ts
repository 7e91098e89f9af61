import { describe, expect, it } from "@effect/vitest"
import { Effect, Either, type Layer, Option, Schema } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { canonicalAgentUrl, normalizeAgentUrl } from "../../src/domain/agentUrl.js"
import { maskSecret, redactUrl } from "../../src/domain/secrets.js"
import { STORE_FORMAT_VERSION, StoreFile } from "../../src/domain/session.js"
import { showSession } from "../../src/programs/sessions.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { storeLayer, tempHome } from "../helpers/stateHome.js"

const mode = (path: string) => Fs.statSync(path).mode & 0o777

/** Runs `body` against the real file store in a fresh temp state dir. */
const withFileStore = <A, E>(body: (stateDir: string) => Effect.Effect<A, E, Layer.Layer.Success<ReturnType<typeof storeLayer>>>) => {
  const home = tempHome()
  return body(home.stateDir).pipe(Effect.provide(storeLayer(home.stateDir)), Effect.ensuring(Effect.sync(home.cleanup)))
}

describe("normalizeAgentUrl", () => {
  it.each([
    ["HTTP://Agent.Example:80/a2a/", "http://agent.example/a2a"],
    ["https://agent.example:443", "https://agent.example"],
    ["https://agent.example:8443/", "https://agent.example:8443"],
    ["http://127.0.0.1:8000//", "http://127.0.0.1:8000"],
    ["  http://h/x?y=1#frag ", "http://h/x?y=1"]
  ])("%s → %s", (input, expected) => {
    expect(normalizeAgentUrl(input)).toEqual(Either.right(expected))
  })

  it.each(["agent.example", "ftp://agent.example", "http://user:pw@agent.example", ""])("rejects %j", (input) => {
    const result = normalizeAgentUrl(input)
    expect(Either.isLeft(result) && result.left._tag).toBe("InvalidAgentUrl")
  })
})

describe("redactUrl and maskSecret", () => {
  it.each([
    ["http://127.0.0.1:4000", "http://127.0.0.1:4000"],
    ["https://user:pw@gw.example/v1?key=secret", "https://***@gw.example/v1?***"],
    ["not a url", "(not a URL)"]
  ])("%s → %s", (input, expected) => {
    expect(redactUrl(input)).toBe(expected)
  })

  it("shows at most the last 4 characters of a long secret", () => {
    expect(maskSecret("0123456789abcdefWXYZ")).toBe("…WXYZ")
    expect(maskSecret("short-secret")).toBe("****")
  })
})

describe("SessionStore (file)", () => {
  it.effect("round-trips ids, state and credentials under the normalised URL", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.update(agentUrlOf("HTTP://Agent.Example:80/"), { context_id: "c1", task_id: "t1", last_state: "input-required" })
        yield* store.setCredentials(agentUrlOf("http://agent.example"), { kind: "api_key", key: "k-123", header: "X-Key" })
        const record = Option.getOrThrow(yield* store.get(agentUrlOf("http://agent.example/")))
        expect(record).toMatchObject({
          agent_url: "http://agent.example",
          context_id: "c1",
          task_id: "t1",
          last_state: "input-required",
          credentials: { kind: "api_key", key: "k-123", header: "X-Key" }
        })
        // A null in a patch removes the field; undefined keeps it.
        yield* store.update(agentUrlOf("http://agent.example"), { task_id: null })
        const after = Option.getOrThrow(yield* store.get(agentUrlOf("http://agent.example")))
        expect(after.task_id).toBeUndefined()
        expect(after.context_id).toBe("c1")
        const onDisk = Schema.decodeUnknownSync(Schema.parseJson(StoreFile))(
          Fs.readFileSync(Path.join(stateDir, "sessions.json"), "utf8")
        )
        expect(Object.keys(onDisk.sessions)).toEqual(["http://agent.example"])
        // A store that names no agent is written in the oldest version that holds it, for older relays.
        expect(onDisk.version).toBe(2)
        expect(STORE_FORMAT_VERSION).toBe(3)
      })
    ))

  it.effect("reads a version 1 file as it is and writes it back as version 2, OAuth tokens included", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.list // creates the directory
        const file = Path.join(stateDir, "sessions.json")
        const v1 = {
          agent_url: "http://a.test",
          context_id: "c1",
          credentials: { kind: "bearer", token: "tok" },
          updated_at: "2026-01-01T00:00:00.000Z"
        }
        Fs.writeFileSync(file, JSON.stringify({ version: 1, sessions: { "http://a.test": v1 } }))
        expect(Option.getOrThrow(yield* store.getCredentials(agentUrlOf("http://a.test")))).toEqual({ kind: "bearer", token: "tok" })

        const tokens = {
          kind: "oauth" as const,
          flow: "client_credentials" as const,
          access_token: "at-0123456789abcdef",
          expires_at: "2026-01-01T01:00:00.000Z",
          scopes: ["agent:use"],
          issuer: "https://id.example",
          token_endpoint: "https://id.example/token",
          client_id: "relay"
        }
        yield* store.setCredentials(agentUrlOf("http://b.test"), tokens)
        const onDisk = JSON.parse(Fs.readFileSync(file, "utf8")) as { version: number; sessions: Record<string, unknown> }
        expect(onDisk.version).toBe(2)
        expect(onDisk.sessions["http://a.test"]).toEqual(v1)
        expect(Option.getOrThrow(yield* store.getCredentials(agentUrlOf("http://b.test")))).toEqual(tokens)
      })
    ))

  it.effect("lists sessions in code-unit order of their agent URL, whatever the locale", () =>
    withFileStore(() =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        for (const url of ["http://b.test/a", "http://a.test/b", "http://b.test/Z", "http://a-b.test"]) {
          yield* store.update(agentUrlOf(url), { context_id: url })
        }
        // localeCompare would put "/a" before "/Z" (and differ with the locale); code units do not.
        expect((yield* store.list).map((r) => r.agent_url)).toEqual([
          "http://a-b.test",
          "http://a.test/b",
          "http://b.test/Z",
          "http://b.test/a"
        ])
      })
    ))

  it.effect("clearing sessions keeps credentials; clearing credentials keeps the session", () =>
    withFileStore(() =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.update(agentUrlOf("http://a.test"), { context_id: "ca", task_id: "ta" })
        yield* store.setCredentials(agentUrlOf("http://a.test"), { kind: "bearer", token: "tok" })
        yield* store.update(agentUrlOf("http://b.test"), { context_id: "cb" })
        yield* store.update(agentUrlOf("http://c.test"), { context_id: "cc" })
        yield* store.setCredentials(agentUrlOf("http://c.test"), { kind: "bearer", token: "tok-c" })

        expect(yield* store.clear(agentUrlOf("http://a.test"))).toBe(true)
        const a = Option.getOrThrow(yield* store.get(agentUrlOf("http://a.test")))
        expect(a.context_id).toBeUndefined()
        expect(a.credentials).toEqual({ kind: "bearer", token: "tok" })
        expect(yield* store.clear(agentUrlOf("http://a.test"))).toBe(false)

        expect(yield* store.clearAll).toBe(2)
        // b had nothing but ids, so it is gone; c keeps its credentials.
        expect((yield* store.list).map((r) => r.agent_url)).toEqual(["http://a.test", "http://c.test"])
        expect(Option.getOrThrow(yield* store.getCredentials(agentUrlOf("http://c.test")))).toEqual({ kind: "bearer", token: "tok-c" })

        yield* store.update(agentUrlOf("http://c.test"), { context_id: "again" })
        expect(yield* store.clearCredentials(agentUrlOf("http://c.test"))).toBe(true)
        expect(yield* store.clearCredentials(agentUrlOf("http://c.test"))).toBe(false)
        expect(Option.getOrThrow(yield* store.get(agentUrlOf("http://c.test"))).context_id).toBe("again")
      })
    ))

  it.effect("keeps an agent's card URL through clearing sessions and credentials; a file without one reads as before", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const agent = agentUrlOf("http://mastra.test")
        const cardUrl = "http://mastra.test/api/.well-known/weather/agent-card.json"
        yield* store.update(agent, { card_url: cardUrl })
        // A card URL alone is worth keeping: it is how the agent is reached at all.
        expect(Option.getOrThrow(yield* store.get(agent)).card_url).toBe(cardUrl)
        yield* store.update(agent, { context_id: "c", task_id: "t", last_state: "completed" })
        yield* store.setCredentials(agent, { kind: "bearer", token: "tok" })
        expect(yield* store.clear(agent)).toBe(true)
        expect(yield* store.clearCredentials(agent)).toBe(true)
        expect(yield* store.clearAll).toBe(0)
        expect(Option.getOrThrow(yield* store.get(agent))).toMatchObject({ agent_url: "http://mastra.test", card_url: cardUrl })
        expect(Option.getOrThrow(yield* store.get(agent)).context_id).toBeUndefined()

        // A file an earlier relay wrote has no card URL: its sessions read the same.
        const file = Path.join(stateDir, "sessions.json")
        const older = { agent_url: "http://a.test", context_id: "c1", task_id: "t1", updated_at: "2026-01-01T00:00:00.000Z" }
        Fs.writeFileSync(file, JSON.stringify({ version: 2, sessions: { "http://a.test": older } }), { mode: 0o600 })
        expect(Option.getOrThrow(yield* store.get(agentUrlOf("http://a.test")))).toEqual(older)
        expect((yield* showSession(agentUrlOf("http://a.test"))).card_url).toBeNull()
      })
    ))

  it.effect("creates the state dir 0700 and the file 0600, and tightens a loose file", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.setCredentials(agentUrlOf("http://a.test"), { kind: "bearer", token: "secret" })
        const file = Path.join(stateDir, "sessions.json")
        expect(mode(stateDir)).toBe(0o700)
        expect(mode(file)).toBe(0o600)
        Fs.chmodSync(file, 0o644)
        yield* store.list
        expect(mode(file)).toBe(0o600)
      })
    ))

  it.effect("a temp file left behind with a wider mode, or as a link elsewhere, is not where the secrets are written", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const file = Path.join(stateDir, "sessions.json")
        yield* store.list // creates the directory
        Fs.writeFileSync(`${file}.tmp`, "left by a crash", { mode: 0o644 })
        Fs.chmodSync(`${file}.tmp`, 0o644)
        yield* store.setCredentials(agentUrlOf("http://a.test"), { kind: "bearer", token: "secret-token-1" })
        // Looked at before any read of the store could tighten it.
        expect(mode(file)).toBe(0o600)

        const elsewhere = Path.join(stateDir, "..", "elsewhere")
        Fs.writeFileSync(elsewhere, "", { mode: 0o644 })
        Fs.symlinkSync(elsewhere, `${file}.tmp`)
        yield* store.setCredentials(agentUrlOf("http://a.test"), { kind: "bearer", token: "secret-token-2" })
        expect(Fs.readFileSync(elsewhere, "utf8")).toBe("")
        expect(Fs.lstatSync(file).isFile()).toBe(true)
        expect(mode(file)).toBe(0o600)
        expect(Fs.readFileSync(file, "utf8")).toContain("secret-token-2")
      })
    ))

  it.effect("moves a corrupt file aside with a typed error naming it, then starts fresh", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const file = Path.join(stateDir, "sessions.json")
        yield* store.update(agentUrlOf("http://a.test"), { context_id: "c" })
        Fs.writeFileSync(file, "{ this is not json", { mode: 0o600 })

        const error = yield* Effect.flip(store.update(agentUrlOf("http://b.test"), { context_id: "x" }))
        expect(error._tag).toBe("StateFileCorrupt")
        if (error._tag !== "StateFileCorrupt") return
        expect(error.file).toBe(file)
        expect(error.message).toContain(file)
        expect(Fs.readFileSync(error.movedTo, "utf8")).toBe("{ this is not json")
        expect(Fs.existsSync(file)).toBe(false)

        // Nothing was written over the damaged content; the next command starts with an empty store.
        expect(yield* store.list).toEqual([])
        yield* store.update(agentUrlOf("http://b.test"), { context_id: "x" })
        expect((yield* store.list).length).toBe(1)
      })
    ))

  it.effect("a read of a file with the wrong shape also fails and keeps the file", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.list // creates the directory
        Fs.writeFileSync(Path.join(stateDir, "sessions.json"), JSON.stringify({ version: 1, sessions: { x: { nope: 1 } } }))
        const error = yield* Effect.flip(store.list)
        expect(error._tag).toBe("StateFileCorrupt")
        const aside = Fs.readdirSync(stateDir).filter((name) => name.startsWith("sessions.json.corrupt-"))
        expect(aside).toHaveLength(1)
      })
    ))

  it.effect("a file that cannot be read or written fails with a typed error naming it and the operation, and the store is left as it was", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        const file = Path.join(stateDir, "sessions.json")
        yield* store.update(agentUrlOf("http://a.test"), { context_id: "c" })
        const saved = Fs.readFileSync(file, "utf8")
        // The temp file's name is taken by a directory: the write cannot even start.
        Fs.mkdirSync(`${file}.tmp`)
        const writing = yield* Effect.flip(store.update(agentUrlOf("http://a.test"), { context_id: "d" }))
        expect(writing).toMatchObject({ _tag: "StateFileUnavailable", file, operation: "write" })
        expect(Fs.readFileSync(file, "utf8")).toBe(saved)
        Fs.rmdirSync(`${file}.tmp`)
        Fs.rmSync(file)
        Fs.mkdirSync(file)
        const reading = yield* Effect.flip(store.get(agentUrlOf("http://a.test")))
        expect(reading).toMatchObject({ _tag: "StateFileUnavailable", file, operation: "read" })
      })
    ))

  it.effect("refuses a file from a newer relay without touching it", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* store.list
        const file = Path.join(stateDir, "sessions.json")
        Fs.writeFileSync(file, JSON.stringify({ version: 7, sessions: {} }))
        const error = yield* Effect.flip(store.update(agentUrlOf("http://a.test"), { context_id: "c" }))
        expect(error._tag).toBe("StateFileTooNew")
        expect(JSON.parse(Fs.readFileSync(file, "utf8")).version).toBe(7)
      })
    ))

  it.effect("clearing what is not there writes nothing", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        expect(yield* store.clear(agentUrlOf("http://never.test"))).toBe(false)
        expect(yield* store.clearCredentials(agentUrlOf("http://never.test"))).toBe(false)
        expect(Fs.existsSync(Path.join(stateDir, "sessions.json"))).toBe(false)
        yield* store.setCredentials(agentUrlOf("http://kept.test"), { kind: "bearer", token: "t" })
        const written = Fs.statSync(Path.join(stateDir, "sessions.json")).mtimeMs
        yield* Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 20)))
        expect(yield* store.clear(agentUrlOf("http://kept.test"))).toBe(false)
        expect(Fs.statSync(Path.join(stateDir, "sessions.json")).mtimeMs).toBe(written)
      })
    ))

  it.effect("takes only a decoded AgentUrl: an invalid agent URL fails where it is decoded and never reaches the file", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        // @ts-expect-error the store is keyed by an AgentUrl a door decoded, never by a plain string
        const plain: Parameters<typeof store.update>[0] = "http://a.test"
        expect(plain).toBe("http://a.test")
        const error = yield* Effect.flip(Effect.flatMap(canonicalAgentUrl("not a url"), (key) => store.update(key, { context_id: "c" })))
        expect(error._tag).toBe("InvalidAgentUrl")
        expect(Fs.existsSync(Path.join(stateDir, "sessions.json"))).toBe(false)
      })
    ))

  it.effect("serialises concurrent updates inside one process", () =>
    withFileStore(() =>
      Effect.gen(function*() {
        const store = yield* SessionStore.SessionStore
        yield* Effect.forEach(
          Array.from({ length: 40 }, (_, n) => n),
          (n) => store.update(agentUrlOf(`http://agent-${n}.test`), { context_id: `c${n}` }),
          { concurrency: "unbounded" }
        )
        expect((yield* store.list).length).toBe(40)
      })
    ))
})

describe("SessionStore reads", () => {
  it.effect("every read sees what another store (another process) wrote since, the same text read twice or not", () =>
    withFileStore(() =>
      Effect.gen(function*() {
        const mine = yield* SessionStore.make
        const theirs = yield* SessionStore.make
        const key = agentUrlOf("http://a.test")
        yield* theirs.update(key, { context_id: "c1" })
        expect(Option.getOrThrow(yield* mine.get(key)).context_id).toBe("c1")
        expect(Option.getOrThrow(yield* mine.get(key)).context_id).toBe("c1")
        yield* theirs.update(key, { context_id: "c2", task_id: "t2" })
        expect(Option.getOrThrow(yield* mine.get(key))).toMatchObject({ context_id: "c2", task_id: "t2" })
        yield* mine.update(key, { last_state: "completed" })
        expect(Option.getOrThrow(yield* theirs.get(key))).toMatchObject({ context_id: "c2", task_id: "t2", last_state: "completed" })
      })
    ))
})

describe("SessionStore lock", () => {
  const lockOf = (stateDir: string) => Path.join(stateDir, "sessions.json.lock")
  const read = (stateDir: string) => JSON.parse(Fs.readFileSync(Path.join(stateDir, "sessions.json"), "utf8"))
  /** A store with one saved session, and its lock held as another process would hold it. */
  const storeWithLockHeld = (stateDir: string) =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      const key = agentUrlOf("http://a.test")
      yield* store.update(key, { context_id: "c1" })
      Fs.mkdirSync(lockOf(stateDir))
      return { store, key }
    })

  it.live("an update waits for a lock another process holds, writes once it is released, and releases its own", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const { key, store } = yield* storeWithLockHeld(stateDir)
        const update = yield* Effect.fork(store.update(key, { context_id: "c2" }))
        yield* Effect.sleep("300 millis")
        expect(read(stateDir).sessions[key].context_id).toBe("c1")
        Fs.rmdirSync(lockOf(stateDir))
        yield* Effect.timeout(update.await, "5 seconds")
        expect(read(stateDir).sessions[key].context_id).toBe("c2")
        expect(Fs.existsSync(lockOf(stateDir))).toBe(false)
      })
    ))

  it.live("a lock left behind by a process that died (stale) is taken over", () =>
    withFileStore((stateDir) =>
      Effect.gen(function*() {
        const { key, store } = yield* storeWithLockHeld(stateDir)
        const longAgo = new Date(Date.now() - 60_000)
        Fs.utimesSync(lockOf(stateDir), longAgo, longAgo)
        yield* Effect.timeout(store.update(key, { context_id: "c2" }), "5 seconds")
        expect(read(stateDir).sessions[key].context_id).toBe("c2")
        expect(Fs.existsSync(lockOf(stateDir))).toBe(false)
      })
    ))
})

describe("SessionStore (memory)", () => {
  it.effect("behaves like the file store", () =>
    Effect.gen(function*() {
      const store = yield* SessionStore.SessionStore
      yield* store.update(agentUrlOf("http://a.test/"), { context_id: "c" })
      yield* store.setCredentials(agentUrlOf("http://a.test"), { kind: "bearer", token: "t" })
      expect(yield* store.clear(agentUrlOf("http://A.test"))).toBe(true)
      expect(Option.getOrThrow(yield* store.getCredentials(agentUrlOf("http://a.test")))).toEqual({ kind: "bearer", token: "t" })
    }).pipe(Effect.provide(SessionStore.layerMemory)))
})
