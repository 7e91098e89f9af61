/**
 * `npm run bench` loads a test helper (test/helpers/postgres.ts, for the PostgreSQL store's row)
 * outside vitest, as bench/agent-server.mjs does: a helper that imports vitest fails there ("Vitest
 * failed to access its internal state"), which once broke the whole agent-server group.
 */
import { execFileSync } from "node:child_process"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

describe("the bench's test helpers", () => {
  it("load in plain Node, through tsx as the bench loads them", () => {
    const script = `
      const { tsImport } = await import("tsx/esm/api")
      const helper = await tsImport("./test/helpers/postgres.ts", import.meta.url)
      console.log(typeof helper.startPostgres, typeof helper.postgresAvailable)
    `
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      cwd: root,
      encoding: "utf8",
      timeout: 30_000,
      env: { ...process.env, CI: "" }
    })
    expect(out.trim()).toBe("function function")
  }, 40_000)
})
