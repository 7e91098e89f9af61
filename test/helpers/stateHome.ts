/** Temp state directories and the real store layers pointed at them. */
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ConfigProvider, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import * as SessionStore from "../../src/services/SessionStore.js"
import * as StateDir from "../../src/services/StateDir.js"

/** A fresh parent directory; the state dir itself (`<parent>/state`) is created by relay. */
export const tempHome = () => {
  const parent = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-test-"))
  return { parent, stateDir: Path.join(parent, "state"), cleanup: () => Fs.rmSync(parent, { recursive: true, force: true }) }
}

/**
 * A maker of fresh state directories for a test file, each removed after all its tests:
 * `const freshStateDir = stateDirsFor(afterAll)`.
 */
export const stateDirsFor = (afterAll: (cleanup: () => void) => void) => {
  const homes: Array<ReturnType<typeof tempHome>> = []
  afterAll(() => homes.forEach((home) => home.cleanup()))
  return (): string => {
    const home = tempHome()
    homes.push(home)
    return home.stateDir
  }
}

/** StateDir + SessionStore + platform services, reading RELAY_HOME = `stateDir`. */
export const storeLayer = (stateDir: string) =>
  SessionStore.layer.pipe(
    Layer.provideMerge(StateDir.layer),
    Layer.provideMerge(NodeContext.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", stateDir]]))))
  )
