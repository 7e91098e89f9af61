/**
 * `relay doctor`: checks the things that make relay fail in ways hard to see from an assistant,
 * one line each, with what to do when one fails. It changes nothing but what any command would: the
 * state directory is created when missing, and a probe file is written and removed there.
 */
import { Path } from "@effect/platform"
import { Config, Duration, Effect, Either, Redacted } from "effect"
import { mcpClients } from "../domain/mcpClients.js"
import { MODEL_FORMS } from "../domain/modelErrors.js"
import { MIN_STORE_KEY_CHARS, STORE_KEY_VARIABLE } from "../domain/sealing.js"
import { DEFAULT_FILE_STORE_DIR, parseTaskStoreChoice } from "../domain/taskStoreChoice.js"
import { ModelAccess, selectModel } from "../services/ModelAccess.js"
import { SESSIONS_FILE, storeFileProblem } from "../services/SessionStore.js"
import { defaultStateDir, resolveStateDir } from "../services/StateDir.js"
import { SystemProbes } from "../services/SystemProbes.js"
import { relayEntries, type RelayEntry } from "./mcpClients.js"

export interface Check {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
  /** What to do, when the check failed. */
  readonly fix: string | null
}

export interface DoctorReport {
  readonly ok: boolean
  readonly checks: ReadonlyArray<Check>
}

const passed = (name: string, detail: string): Check => ({ name, ok: true, detail, fix: null })
const failed = (name: string, detail: string, fix: string): Check => ({ name, ok: false, detail, fix })

export const MINIMUM_NODE = [20, 19] as const
/** The ports relay's servers listen on by default: the agent, the webhook receiver, MCP over HTTP. */
export const DEFAULT_PORTS = [
  { port: 8000, user: "relay server agent" },
  { port: 9000, user: "relay server push" },
  { port: 8090, user: "relay mcp --transport streamable-http" }
] as const

const checkNode = (version: string): Check => {
  const [major = 0, minor = 0] = version.split(".").map(Number)
  const [needMajor, needMinor] = MINIMUM_NODE
  const recent = major > needMajor || (major === needMajor && minor >= needMinor)
  return recent
    ? passed("node", `Node ${version}`)
    : failed("node", `Node ${version} is older than ${needMajor}.${needMinor}`, `Install Node ${needMajor}.${needMinor} or newer.`)
}

const octal = (mode: number) => mode.toString(8).padStart(3, "0")

const elsewhere = "RELAY_HOME=$HOME/.local/state/a2a-relay-$(id -un)"

const checkStateDir = Effect.gen(function*() {
  const probes = yield* SystemProbes
  const dir = yield* resolveStateDir
  const [before] = yield* probes.modes(dir)
  if (before !== undefined && before.kind !== "directory") {
    return failed("state directory", `${dir} is not a directory`, `Move ${dir} aside, or point RELAY_HOME at a directory.`)
  }
  if (before !== undefined && probes.uid !== undefined && before.uid !== probes.uid) {
    return failed(
      "state directory",
      `${dir} belongs to another user (uid ${before.uid}; you are ${probes.uid}): relay cannot keep your credentials private there`,
      `Use a directory of your own: export ${elsewhere}`
    )
  }
  const used = yield* Effect.either(probes.useStateDir(dir, (yield* Path.Path).join(dir, SESSIONS_FILE)))
  if (used._tag === "Left") {
    return failed(
      "state directory",
      `${dir}: ${used.left}`,
      `Fix the permissions of ${dir}, or point RELAY_HOME at a writable directory: export ${elsewhere}`
    )
  }
  const [top, ...files] = yield* probes.modes(dir)
  const mode = octal(top!.mode)
  if ((top!.mode & 0o077) !== 0) {
    return failed("state directory", `${dir} has mode ${mode}: other users can read saved credentials`, `chmod 700 ${dir}`)
  }
  const open = files.filter((file) => file.kind === "file" && (file.mode & 0o077) !== 0)
  if (open.length > 0) {
    const paths = open.map((file) => file.path)
    return failed("state directory", `readable by other users: ${paths.join(", ")}`, `chmod 600 ${paths.join(" ")}`)
  }
  const created = before === undefined ? ", created now" : ""
  return passed(
    "state directory",
    `${dir} (mode ${mode}${created}, writable, store lock taken and released; ${files.length} file${
      files.length === 1 ? "" : "s"
    }, none open to others)`
  )
})

const checkStore = Effect.gen(function*() {
  const probes = yield* SystemProbes
  const file = (yield* Path.Path).join(yield* resolveStateDir, SESSIONS_FILE)
  const text = yield* probes.readText(file)
  if (text === undefined) return passed("session store", "no sessions saved yet")
  const problem = yield* storeFileProblem(text)
  return problem === undefined
    ? passed("session store", `${file} parses`)
    : failed("session store", `${file} cannot be used: ${problem}`, `Move ${file} aside (relay starts a new store), or restore a backup.`)
})

/**
 * The agent server's task store RELAY_STORE names (as `relay server agent --store` reads it): the
 * file store in the state directory by default; a PostgreSQL one is reached, its tables and rights checked.
 */
const checkTaskStore = Effect.gen(function*() {
  const given = yield* Effect.orElseSucceed(Config.string("RELAY_STORE"), () => "file")
  const choice = parseTaskStoreChoice(Redacted.make(given))
  if (Either.isLeft(choice)) {
    return failed("task store", choice.left.reason, "Leave RELAY_STORE out for the file store in the state directory, or set it to memory")
  }
  const store = choice.right
  switch (store._tag) {
    case "memory":
      return passed("task store", "memory (RELAY_STORE=memory: relay server agent's tasks are gone when it stops)")
    case "file": {
      const dir = store.dir ?? (yield* Path.Path).join(yield* resolveStateDir, DEFAULT_FILE_STORE_DIR)
      const where = `file store in ${dir}${store.dir === undefined ? " (the default; RELAY_STORE or --store chooses)" : ""}`
      // The server seals push secrets with RELAY_STORE_KEY when set, and refuses to start on one too short to be a key.
      const key = yield* Effect.orElseSucceed(Config.string(STORE_KEY_VARIABLE), () => "")
      if (key !== "" && key.length < MIN_STORE_KEY_CHARS) {
        return failed(
          "task store",
          `${where}: ${STORE_KEY_VARIABLE} is shorter than ${MIN_STORE_KEY_CHARS} characters`,
          `Set ${STORE_KEY_VARIABLE} to the key the store was written with, or unset it to use the key file relay keeps in ${dir}`
        )
      }
      return passed("task store", `${where}; push secrets sealed with ${key === "" ? "its store.key" : STORE_KEY_VARIABLE}`)
    }
    case "postgres": {
      const postgres = yield* Effect.promise(() => import("../services/PostgresTaskStorage.js"))
      const check = yield* postgres.checkStore(Redacted.value(store.url))
      return check.ok ? passed("task store", check.detail) : failed("task store", check.detail, check.fix ?? "")
    }
  }
})

const checkMcp = Effect.gen(function*() {
  const probes = yield* SystemProbes
  return yield* probes.probeMcp.pipe(Effect.match({
    onFailure: (reason) => failed("mcp", `relay mcp: ${reason}`, "Run `relay mcp --verbose` by hand to see why it does not answer."),
    onSuccess: ({ strayLines, tools }) =>
      strayLines.length === 0
        ? passed("mcp", `relay mcp answered tools/list with ${tools} tools, nothing but MCP on stdout`)
        : failed(
          "mcp",
          `relay mcp printed non-MCP lines on stdout: ${strayLines.slice(0, 2).join(" | ")}`,
          "Something in the environment (NODE_OPTIONS, a preloaded module) writes to stdout; unset it for MCP clients."
        )
  }))
})

const MODEL_CHECK_TIMEOUT = Duration.seconds(20)
const modelFix = `Set the model with RELAY_MODEL (${MODEL_FORMS}) and its settings ` +
  "(OLLAMA_HOST, OPENAI_API_KEY, RELAY_GATEWAY_URL), or start the server with --model echo."

/** The model `relay server agent` would choose now, and whether it answers a one-word request. */
const checkModel = Effect.gen(function*() {
  const selection = yield* selectModel()
  const chosen = `server agent would use ${selection.spec.text} (${selection.reason})`
  const answers = Effect.flatMap(ModelAccess, (model) =>
    model.generate("Reply with one word: ok").pipe(Effect.match({
      onFailure: (error) => failed("model", `${chosen}, but it did not answer: ${error.message}`, modelFix),
      onSuccess: () => passed("model", `${chosen}; it answered`)
    })))
  return yield* Effect.provide(answers, ModelAccess.layer(selection, { requestTimeout: MODEL_CHECK_TIMEOUT }))
}).pipe(Effect.catchAll((error) => Effect.succeed(failed("model", error.message, modelFix))))

const checkPorts = Effect.gen(function*() {
  const probes = yield* SystemProbes
  return yield* Effect.forEach(DEFAULT_PORTS, ({ port, user }) =>
    Effect.map(probes.portFree(port), (free) =>
      free
        ? passed(`port ${port}`, `free (${user})`)
        : failed(`port ${port}`, `in use on 127.0.0.1 (default of ${user})`, `Stop what listens there, or give ${user} another --port.`)))
})

/** The store a client's relay would use: the RELAY_HOME its entry sets, else the default (its env has no RELAY_HOME). */
const storeOf = (entry: RelayEntry) =>
  Effect.flatMap(Path.Path, (path) => entry.relayHome === null ? defaultStateDir : Effect.succeed(path.resolve(entry.relayHome)))

const checkClient = (entry: RelayEntry, terminalStore: string) =>
  Effect.map(storeOf(entry), (clientStore): Check => {
    const name = `mcp client ${entry.client}`
    const where = `${mcpClients[entry.client].title} (${entry.scope}) "${entry.name}" in ${entry.file}`
    const reinstall = `relay mcp install --client ${entry.client}${
      entry.scope === "project" ? " --scope project" : ""
    } --name ${entry.name}`
    if (entry.missing.length > 0) return failed(name, `${where} names missing ${entry.missing.join(", ")}`, reinstall)
    if (clientStore !== terminalStore) {
      return failed(
        name,
        `${where} uses the store ${clientStore}, this shell ${terminalStore}: sessions and credentials are not shared`,
        `Run \`${reinstall}\` from a shell with the RELAY_HOME you want both to use.`
      )
    }
    return passed(name, `${where} starts a relay that exists, with this shell's store`)
  })

const checkClients = Effect.gen(function*() {
  const entries = yield* relayEntries
  if (entries.length === 0) {
    return [passed("mcp clients", "no MCP client configuration starts relay yet (relay mcp install --client …)")]
  }
  const terminalStore = yield* resolveStateDir
  return yield* Effect.forEach(entries, (entry) => checkClient(entry, terminalStore))
})

export const runDoctor = Effect.gen(function*() {
  const probes = yield* SystemProbes
  const [stateDir, store, mcp, model, ports, clients, taskStore] = yield* Effect.all(
    [checkStateDir, checkStore, checkMcp, checkModel, checkPorts, checkClients, checkTaskStore],
    { concurrency: "unbounded" }
  )
  const checks = [checkNode(probes.nodeVersion), stateDir, store, taskStore, mcp, model, ...ports, ...clients]
  return { ok: checks.every((check) => check.ok), checks } satisfies DoctorReport
}).pipe(Effect.withSpan("runDoctor"))
