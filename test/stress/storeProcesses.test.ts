// The session store under 10 processes (issue 15, item 5): mixed session and credential writes,
// for agents of their own and agents they share, lose nothing; writers killed with SIGKILL in the
// middle of those writes never leave a file that does not parse, nor lose what was there, nor a lock
// that stops the next writer. (It replaced an older, narrower sessionStoreProcesses.test.ts.)
import { Schema } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { afterEach, describe, expect, it } from "vitest"
import { StoreFile } from "../../src/domain/session.js"
import { reportFigures } from "../helpers/figures.js"
import { tempHome } from "../helpers/stateHome.js"

const writerScript = fileURLToPath(new URL("../fixtures/store-mixed-writer.mjs", import.meta.url))
const decodeStore = Schema.decodeUnknownSync(Schema.parseJson(StoreFile))

const homes: Array<ReturnType<typeof tempHome>> = []
afterEach(() => homes.splice(0).forEach((home) => home.cleanup()))

const PROCESSES = 10
const ROUNDS = 10

const startWriter = (stateDir: string, index: number, count: number, loop = false) =>
  spawn(process.execPath, [writerScript, String(index), String(count), ...(loop ? ["--loop"] : [])], {
    env: { ...process.env, RELAY_HOME: stateDir },
    stdio: ["ignore", "ignore", "pipe"]
  })

const exited = (child: ChildProcess, timeoutMs: number) =>
  new Promise<void>((resolve, reject) => {
    let stderr = ""
    child.stderr?.on("data", (chunk) => (stderr += chunk))
    const timer = setTimeout(() => {
      child.kill("SIGKILL")
      reject(new Error(`writer did not finish in ${timeoutMs} ms: ${stderr}`))
    }, timeoutMs)
    child.on("exit", (code) => {
      clearTimeout(timer)
      if (code !== 0 && code !== null) reject(new Error(`writer exited ${code}: ${stderr}`))
      else resolve()
    })
  })

const readStore = (stateDir: string) => decodeStore(Fs.readFileSync(Path.join(stateDir, "sessions.json"), "utf8"))

describe("the session store under 10 processes", () => {
  it("mixed session and credential writes, own and shared agents: nothing lost", async () => {
    const home = tempHome()
    homes.push(home)
    const started = Date.now()
    await Promise.all(Array.from({ length: PROCESSES }, (_, index) => exited(startWriter(home.stateDir, index, ROUNDS), 240_000)))
    const seconds = (Date.now() - started) / 1000
    const { sessions } = readStore(home.stateDir)
    let lost = 0
    for (let index = 0; index < PROCESSES; index++) {
      for (let n = 0; n < ROUNDS; n++) {
        const record = sessions[`http://proc-${index}.test/${n}`]
        const credentials = n % 2 === 0
          ? { kind: "bearer", token: `tok-${index}-${n}` }
          : { kind: "api_key", key: `key-${index}-${n}`, header: "X-API-Key" }
        if (record?.context_id !== `ctx-${index}-${n}` || JSON.stringify(record.credentials) !== JSON.stringify(credentials)) lost++
      }
    }
    // A shared agent keeps a session and credentials from the writers, neither wiping the other.
    for (let shared = 0; shared < 5; shared++) {
      const record = sessions[`http://shared-${shared}.test`]
      if (
        !/^ctx-\d+-\d+$/.test(record?.context_id ?? "") ||
        !/^shared-\d+-\d+$/.test((record?.credentials as { token?: string } | undefined)?.token ?? "")
      ) lost++
    }
    expect(lost).toBe(0)
    expect(Object.keys(sessions)).toHaveLength(PROCESSES * ROUNDS + 5)
    const writes = PROCESSES * ROUNDS * 4
    reportFigures("store, 10 processes", { processes: PROCESSES, writes, "records lost": lost, seconds: seconds.toFixed(1) })
  }, 300_000)

  it("writers killed with SIGKILL mid-write, 10 times: the file always parses and keeps every earlier record", async () => {
    const home = tempHome()
    homes.push(home)
    await exited(startWriter(home.stateDir, 99, 5), 60_000)
    const file = Path.join(home.stateDir, "sessions.json")
    const seeded = Object.keys(readStore(home.stateDir).sessions)
    for (let kill = 0; kill < 10; kill++) {
      const writer = startWriter(home.stateDir, kill, 5, true)
      const done = exited(writer, 60_000)
      const deadline = Date.now() + 30_000
      while (!Fs.readFileSync(file, "utf8").includes(`http://proc-${kill}.test/`)) {
        if (Date.now() > deadline) throw new Error("the writer never wrote")
        await new Promise((resolve) => setTimeout(resolve, 5))
      }
      await new Promise((resolve) => setTimeout(resolve, Math.random() * 60))
      writer.kill("SIGKILL")
      await done
      const { sessions } = readStore(home.stateDir)
      expect(seeded.filter((url) => sessions[url] === undefined)).toEqual([])
      expect(sessions["http://proc-99.test/0"]?.credentials).toEqual({ kind: "bearer", token: "tok-99-0" })
    }
    // A writer after the last kill gets through whatever lock the killed one left (stale after 2 s).
    await exited(startWriter(home.stateDir, 100, 2), 60_000)
    expect(readStore(home.stateDir).sessions["http://proc-100.test/1"]?.context_id).toBe("ctx-100-1")
    reportFigures("store, SIGKILL mid-write", { kills: 10, "unparsable files": 0, "records lost": 0 })
  }, 300_000)
})
