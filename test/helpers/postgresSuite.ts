/**
 * The throwaway PostgreSQL cluster of one test file (apart from postgres.ts, which the bench loads
 * outside vitest: see test/docs/benchImports.test.ts).
 */
import { afterAll, beforeAll } from "vitest"
import { type PostgresCluster, startPostgres } from "./postgres.js"

/**
 * A throwaway cluster for the calling test file, inside its `describe.runIf(postgresAvailable())`:
 * started before its tests (within 60 s), stopped after them.
 */
export const postgresForSuite = (): Omit<PostgresCluster, "stop"> => {
  let cluster: PostgresCluster | undefined
  beforeAll(async () => {
    cluster = await startPostgres()
  }, 60_000)
  afterAll(async () => {
    await cluster?.stop()
  })
  const started = (): PostgresCluster => {
    if (cluster === undefined) throw new Error("the suite's PostgreSQL cluster has not started")
    return cluster
  }
  return {
    get url() {
      return started().url
    },
    get port() {
      return started().port
    },
    createDatabase: (name) => started().createDatabase(name)
  }
}
