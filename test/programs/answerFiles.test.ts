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
