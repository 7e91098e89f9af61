import * as NodePath from "@effect/platform-node/NodePath"
import { describe, expect, it } from "@effect/vitest"
import { Cause, ConfigError, ConfigProvider, Effect, HashSet, Layer, Logger } from "effect"
import * as PathPatch from "effect/ConfigProviderPathPatch"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { vi } from "vitest"
import * as StateDir from "../../src/services/StateDir.js"
import { tempHome } from "../helpers/stateHome.js"

/** Runs `body` with the StateDir of RELAY_HOME = `dir`, collecting the warnings it logs. */
const withStateDir = <A, E>(dir: string, body: (stateDir: StateDir.StateDir["Type"]) => Effect.Effect<A, E>) => {
  const warnings: Array<string> = []
  const layer = StateDir.layer.pipe(
    Layer.provide(NodePath.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", dir]]))))
  )
  const collect = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => warnings.push(String(message))))
  return Effect.flatMap(StateDir.StateDir, body).pipe(
    Effect.provide(layer),
    Effect.provide(collect),
    Effect.map((a) => [a, warnings] as const)
  )
}

describe("StateDir.ensure", () => {
  it.effect("creates a missing directory (and its parents) 0700 whatever the umask, once", () => {
    const home = tempHome()
    const dir = Path.join(home.stateDir, "nested")
    const umask = process.umask(0o022)
    return withStateDir(dir, (stateDir) => Effect.zipRight(stateDir.ensure, stateDir.ensure)).pipe(
      Effect.map(([, warnings]) => {
        expect(Fs.statSync(dir).mode & 0o777).toBe(0o700)
        expect(warnings).toEqual([])
      }),
      Effect.ensuring(Effect.sync(() => {
        process.umask(umask)
        home.cleanup()
      }))
    )
  })

  it.effect("warns of a directory others can read, and refuses a file in its place", () => {
    const home = tempHome()
    Fs.mkdirSync(home.stateDir, { mode: 0o755 })
    Fs.chmodSync(home.stateDir, 0o755)
    const file = Path.join(home.parent, "a-file")
    Fs.writeFileSync(file, "")
    return Effect.gen(function*() {
      const [, warnings] = yield* withStateDir(home.stateDir, (stateDir) => stateDir.ensure)
      expect(warnings.join("\n")).toContain(`State directory ${home.stateDir} is readable by other users (mode 755)`)
      const refused = yield* Effect.flip(withStateDir(file, (stateDir) => stateDir.ensure))
      expect(refused).toMatchObject({ _tag: "StateFileUnavailable", file, operation: "use", reason: "it is not a directory" })
    }).pipe(Effect.ensuring(Effect.sync(home.cleanup)))
  })

  it.effect("a directory that cannot be made fails with a typed error naming it", () => {
    const home = tempHome()
    const blocker = Path.join(home.parent, "blocker")
    Fs.writeFileSync(blocker, "")
    const dir = Path.join(blocker, "state")
    return Effect.flip(withStateDir(dir, (stateDir) => stateDir.ensure)).pipe(
      Effect.map((error) => expect(error).toMatchObject({ _tag: "StateFileUnavailable", file: dir, operation: "create" })),
      Effect.ensuring(Effect.sync(home.cleanup))
    )
  })
})

describe("resolveStateDir", () => {
  it.effect("turns an environment it cannot read into invalid_environment, with a hint, not an internal error", () => {
    // The process environment never fails to load; a provider that does stands for any ConfigError.
    const unreadable = ConfigProvider.fromFlat(ConfigProvider.makeFlat({
      load: (path) => Effect.fail(ConfigError.SourceUnavailable([...path], "the environment is unreadable", Cause.empty)),
      enumerateChildren: () => Effect.succeed(HashSet.empty()),
      patch: PathPatch.empty
    }))
    return StateDir.resolveStateDir.pipe(
      Effect.provide(NodePath.layer),
      Effect.withConfigProvider(unreadable),
      Effect.flip,
      Effect.map((error) => {
        expect(error.code).toBe("invalid_environment")
        expect(error.message).toContain("RELAY_HOME")
        expect(error.hint).toContain("RELAY_HOME")
      })
    )
  })
})

describe("the file lock", () => {
  it.live("takes a lock left with a time in the future (the clock set back after a crash) as stale", () => {
    const home = tempHome()
    Fs.mkdirSync(home.stateDir, { recursive: true })
    const file = Path.join(home.stateDir, "store.json")
    // A lock directory as a killed holder leaves it, its time an hour ahead of this clock.
    Fs.mkdirSync(`${file}.lock`)
    const anHourAhead = new Date(Date.now() + 3_600_000)
    Fs.utimesSync(`${file}.lock`, anHourAhead, anHourAhead)
    // It is taken once seen unchanged for the stale time (2 s): scopedFileLock gives up after ~3 s
    // of a lock it takes as held; withFileLock would retry ~36 s.
    return Effect.scoped(StateDir.scopedFileLock(file)).pipe(Effect.ensuring(Effect.sync(() => home.cleanup())))
  })

  it.live("stays with a live holder when the clock is set back: its lock is not stale, nor taken from it", () => {
    const home = tempHome()
    Fs.mkdirSync(home.stateDir, { recursive: true })
    const file = Path.join(home.stateDir, "store.json")
    const written: Array<string> = []
    const realNow = Date.now.bind(Date)
    return Effect.gen(function*() {
      const stderr = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => written.push(String(chunk)) > 0)
      yield* Effect.addFinalizer(() => Effect.sync(() => stderr.mockRestore()))
      yield* StateDir.scopedFileLock(file)
      // The clock set back an hour under the holder (as NTP may): the lock's time is then ahead.
      const clock = vi.spyOn(Date, "now").mockImplementation(() => realNow() - 3_600_000)
      yield* Effect.addFinalizer(() => Effect.sync(() => clock.mockRestore()))
      // scopedFileLock waits ~3 s for a lock it takes as held, while the holder refreshes its lock every second.
      const second = yield* Effect.either(Effect.scoped(StateDir.scopedFileLock(file)))
      expect(second._tag).toBe("Left")
      expect(written.join("")).not.toMatch(/compromised/)
    }).pipe(Effect.scoped, Effect.ensuring(Effect.sync(() => home.cleanup())))
  }, 15_000)
})
