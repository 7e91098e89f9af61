/**
 * `relay server agent -m echo` (dist/main.cjs) over one file store that outlives its processes, for
 * the suites that kill it and start it again on the same store (test/e2e/pushRestart.test.ts,
 * test/stress/fileStoreCrash.test.ts). Call it from the test file: it registers the file's clean-up
 * (every process still running killed, the store and state directory removed).
 */
import type { ChildProcess } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll } from "vitest"
import { startAgentServer } from "./cli.js"
import { tempHome } from "./stateHome.js"

export const fileStoreAgents = (prefix: string) => {
  const home = tempHome()
  const storeDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), prefix))
  const children: Array<ChildProcess> = []
  afterAll(() => {
    for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
    home.cleanup()
    Fs.rmSync(storeDir, { recursive: true, force: true })
  })
  /** Starts one more server on the store; resolves with it and its URL (the --json line) within 20 s. */
  const start = async () => {
    const server = await startAgentServer(["-m", "echo", "--store", `file:${storeDir}`], {
      stateDir: home.stateDir,
      env: { RELAY_ECHO_DELAY_MS: "0" }
    })
    children.push(server.child)
    return { child: server.child, url: server.info.url }
  }
  return { start }
}
