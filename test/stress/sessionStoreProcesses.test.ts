/**
 * The store across real processes: the lock keeps every write, the atomic rename keeps the
 * file whole even when a writer dies mid-write. Uses the built dist (npm test builds first).
 */
import { Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { StoreFile } from "../../src/domain/session.js"
import { tempHome } from "../helpers/stateHome.js"

const writerScript = fileURLToPath(new URL("../fixtures/store-writer.mjs", import.meta.url))
const decodeStore = Schema.decodeUnknownSync(Schema.parseJson(StoreFile))

const homes: Array<ReturnType<typeof tempHome>> = []
afterEach(() => homes.splice(0).forEach((home) => home.cleanup()))

const startWriter = (stateDir: string, prefix: string, count: number, loop = false) =>
  spawn(process.execPath, [writerScript, prefix, String(count), ...(loop ? ["--loop"] : [])], {
    env: { ...process.env, RELAY_HOME: stateDir },
    stdio: ["ignore", "ignore", "pipe"]
  })

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<number | null>((resolve, reject) => {
    let stderr = ""
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`writer did not finish in ${timeoutMs} ms: ${stderr}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (code !== 0 && code !== null) reject(new Error(`writer exited ${code}: ${stderr}`))
      else resolve(code)
    })
  })

const waitUntil = async (condition: () => boolean, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 5))
  }
}

const readStore = (stateDir: string) => decodeStore(Fs.readFileSync(Path.join(stateDir, "sessions.json"), "utf8"))

describe("SessionStore across processes", () => {
  it("8 processes × 50 interleaved updates: all 400 records are there", async () => {
    const home = tempHome()
    homes.push(home)
    const writers = Array.from({ length: 8 }, (_, p) => startWriter(home.stateDir, `http://proc-${p}.test`, 50))
    await Promise.all(writers.map((child) => exited(child, 60_000)))

    const store = readStore(home.stateDir)
    expect(Object.keys(store.sessions)).toHaveLength(400)
    for (let p = 0; p < 8; p++) {
      for (let n = 0; n < 50; n++) {
        expect(store.sessions[`http://proc-${p}.test/${n}`]?.context_id).toBe(`ctx-0-${n}`)
      }
    }
  }, 90_000)

  it("a writer killed with SIGKILL at random moments never leaves an unparsable file", async () => {
    const home = tempHome()
    homes.push(home)
    // Seed the file so every kill lands on a writer that rewrites an existing store.
    await exited(startWriter(home.stateDir, "http://seed.test", 20), 30_000)

    const file = Path.join(home.stateDir, "sessions.json")
    let kills = 0
    for (let round = 0; round < 12; round++) {
      const writer = startWriter(home.stateDir, `http://crash-${round}.test`, 30, true)
      const done = exited(writer, 30_000)
      // Kill only once this writer is inside its write loop (it has saved a record), at a random moment.
      await waitUntil(() => Fs.readFileSync(file, "utf8").includes(`http://crash-${round}.test/`), 15_000)
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 40))
      writer.kill("SIGKILL")
      await done
      kills++
      const store = readStore(home.stateDir)
      expect(Object.keys(store.sessions).length).toBeGreaterThanOrEqual(20)
    }
    expect(kills).toBe(12)
    // A later writer gets through the lock a killed one left behind (stale after 2 s).
    await exited(startWriter(home.stateDir, "http://after.test", 5), 30_000)
    expect(readStore(home.stateDir).sessions["http://after.test/4"]?.task_id).toBe("task-4")
  }, 180_000)
})
