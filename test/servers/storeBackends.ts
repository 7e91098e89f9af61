// The task stores the agent-server suites run against, each as a fresh, empty store. A backend
// joins every parameterised suite (agentServer, agentServerConformance) with one line here.
import type { Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { taskStoreLayer } from "../../src/servers/agent/taskStores.js"
import type { PushSender } from "../../src/services/PushSender.js"
import type { TaskStore } from "../../src/services/TaskStore.js"

export interface StoreBackend {
  readonly name: string
  readonly layer: () => Layer.Layer<TaskStore, unknown, PushSender>
}

const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-store-backend-"))
afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
const freshDir = () => Fs.mkdtempSync(Path.join(root, "store-"))

export const STORE_BACKENDS: ReadonlyArray<StoreBackend> = [
  { name: "memory", layer: () => taskStoreLayer({ _tag: "memory" }) },
  { name: "file", layer: () => taskStoreLayer({ _tag: "file", dir: freshDir() }) }
]
