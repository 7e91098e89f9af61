// The task stores the agent-server suites run against, each as a fresh, empty store. A backend
// joins every parameterised suite (agentServer, agentServerConformance) with one line here.
import { Effect, Layer, Redacted } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { taskStoreLayer } from "../../src/servers/agent/taskStores.js"
import type { PushSender } from "../../src/services/PushSender.js"
import type { TaskStore } from "../../src/services/TaskStore.js"
import { postgresAvailable, type PostgresCluster, startPostgres } from "../helpers/postgres.js"

export interface StoreBackend {
  readonly name: string
  readonly layer: () => Layer.Layer<TaskStore, unknown, PushSender>
}

/**
 * The backends, each making fresh stores for the calling test file: its folders and its cluster
 * are its own, and go when its tests end (the hooks are the file's: test files may share one
 * module cache, vitest.config.ts).
 */
export const storeBackends = (): ReadonlyArray<StoreBackend> => {
  const root = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-store-backend-"))
  afterAll(() => Fs.rmSync(root, { recursive: true, force: true }))
  const freshDir = () => Fs.mkdtempSync(Path.join(root, "store-"))

  /** One throwaway cluster per test file, started by the first suite that asks; a database per store. */
  let cluster: Promise<PostgresCluster> | undefined
  afterAll(async () => (await cluster)?.stop())
  const freshDatabase = () =>
    Effect.promise(async () => {
      // The store seals push secrets with this key (any 16 characters or more).
      process.env["RELAY_STORE_KEY"] ??= "a test key, not a secret"
      return (await (cluster ??= startPostgres())).createDatabase()
    })

  return [
    { name: "memory", layer: () => taskStoreLayer({ _tag: "memory" }) },
    { name: "file", layer: () => taskStoreLayer({ _tag: "file", dir: freshDir() }) },
    ...(postgresAvailable()
      ? [{
        name: "PostgreSQL",
        layer: () => Layer.unwrapEffect(Effect.map(freshDatabase(), (url) => taskStoreLayer({ _tag: "postgres", url: Redacted.make(url) })))
      }]
      : [])
  ]
}
