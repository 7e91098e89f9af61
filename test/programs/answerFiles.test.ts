// The files of an answer kept on disk: at most MAX_SAVED_FILES_PER_ANSWER of one answer, the rest
// listed with a note, so an answer of many tiny files neither holds the process nor fills a folder.
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import { answerParts } from "../../src/domain/answerParts.js"
import { MAX_SAVED_FILES_PER_ANSWER } from "../../src/domain/limits.js"
import { keepAnswerFiles } from "../../src/programs/answerFiles.js"
import { A2aClient } from "../../src/services/A2aClient.js"
import * as ReceivedFiles from "../../src/services/ReceivedFiles.js"
import { agentUrlOf } from "../helpers/agentUrl.js"

const stateDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-answer-files-"))
afterAll(() => Fs.rmSync(stateDir, { recursive: true, force: true }))

const taskWithFiles = (count: number): V1.Task => ({
  id: "many-files",
  contextId: "ctx",
  status: { state: "TASK_STATE_COMPLETED" },
  artifacts: [{
    artifactId: "a",
    parts: Array.from({ length: count }, (_, n) => ({ raw: Buffer.from([n % 256]).toString("base64"), filename: `f${n}.bin` }))
  }]
})

// Nothing is downloaded here: the client is never asked.
const noClient = Layer.succeed(A2aClient, {} as A2aClient["Type"])

describe("an answer's files kept on disk", () => {
  it(`saves at most ${MAX_SAVED_FILES_PER_ANSWER} files of one answer and notes the rest as not saved`, async () => {
    const count = MAX_SAVED_FILES_PER_ANSWER + 100
    const task = taskWithFiles(count)
    const kept = await Effect.runPromise(
      keepAnswerFiles({ agentUrl: agentUrlOf("http://agent.test") }, task, answerParts(task)).pipe(
        Effect.provide(Layer.merge(ReceivedFiles.layerTest(stateDir), noClient))
      )
    )
    expect(kept).toHaveLength(count)
    expect(kept.slice(0, MAX_SAVED_FILES_PER_ANSWER).every((part) => part.path !== null)).toBe(true)
    const rest = kept.slice(MAX_SAVED_FILES_PER_ANSWER)
    expect(rest.every((part) => part.path === null && part.note?.includes(`more than ${MAX_SAVED_FILES_PER_ANSWER} files`))).toBe(true)
    const folder = Path.join(stateDir, ReceivedFiles.RECEIVED_FILES_DIR, "many-files")
    expect(Fs.readdirSync(folder)).toHaveLength(MAX_SAVED_FILES_PER_ANSWER)
  })
})

describe("files given by URL, downloaded (--download)", () => {
  const FILE_BYTES = 256 * 1024
  const COUNT = 40

  const taskWithLinks = (id: string): V1.Task => ({
    id,
    contextId: "ctx",
    status: { state: "TASK_STATE_COMPLETED" },
    artifacts: [{
      artifactId: "a",
      parts: Array.from({ length: COUNT }, (_, n) => ({ url: `http://agent.test/files/${n}.bin`, filename: `f${n}.bin` }))
    }]
  })

  it("holds only a few downloaded files at a time: each is saved before many more are fetched", async () => {
    const folder = Path.join(stateDir, ReceivedFiles.RECEIVED_FILES_DIR, "linked-files")
    const onDisk = () => (Fs.existsSync(folder) ? Fs.readdirSync(folder).length : 0)
    let downloaded = 0
    let mostHeld = 0
    const client = Layer.succeed(
      A2aClient,
      {
        download: (_target: unknown, url: string) =>
          Effect.sync(() => {
            downloaded++
            mostHeld = Math.max(mostHeld, downloaded - onDisk())
            return Buffer.alloc(FILE_BYTES, Number(/(\d+)\.bin$/.exec(url)![1]))
          })
      } as unknown as A2aClient["Type"]
    )
    const task = taskWithLinks("linked-files")
    const kept = await Effect.runPromise(
      keepAnswerFiles({ agentUrl: agentUrlOf("http://agent.test") }, task, answerParts(task), { download: true }).pipe(
        Effect.provide(Layer.merge(ReceivedFiles.layerTest(stateDir), client)),
        Effect.timeout("10 seconds")
      )
    )
    expect(kept.map((part) => part.path === null ? null : Path.basename(part.path))).toEqual(
      Array.from({ length: COUNT }, (_, n) => `f${n}.bin`)
    )
    expect(Fs.readFileSync(Path.join(folder, "f7.bin"))).toEqual(Buffer.alloc(FILE_BYTES, 7))
    expect(mostHeld).toBeLessThanOrEqual(8)
  })
})
