/**
 * A hostile agent that never stops answering: after its task it streams 1 MiB `append` chunks of
 * one artifact for as long as the client reads (each far under the 10 MiB per-event limit). At
 * every door that gathers an answer (message stream, message send following the task, relay mcp
 * send_message) relay stops at its 32 MiB limit for a whole answer, shows what it kept as a cut
 * result (truncated, with its size) and fails with response_too_large, while its peak RSS stays
 * bounded (before the limit: 1.5 GB, 500 MB and a 147 MB JSON-RPC line). Needs `npm run build`.
 */
import { spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_ANSWER_BYTES } from "../../src/domain/limits.js"
import { relayBin, requireBuiltRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { initializeRequest } from "../helpers/mcpMessages.js"
import { measure, type Measured } from "../helpers/peakMemory.js"
import { tempHome } from "../helpers/stateHome.js"
import { type Progress, startEndlessAgent } from "../peers/hugeAnswers.js"
import type { Stub } from "../services/a2aClientHarness.js"

const MiB = 1024 * 1024
const RSS_CEILING_KB = 512 * 1024
const EXIT_WITHIN_MS = 60_000

const home = tempHome()
const progress: Progress = { written: 0, cutShort: false }
const peaks: Record<string, number> = {}
let agent: Stub

beforeAll(async () => {
  requireBuiltRelay()
  agent = await startEndlessAgent(MiB, progress)
})

afterAll(async () => {
  await agent?.close()
  home.cleanup()
  reportFigures("endless append stream", {
    limit_mib: MAX_ANSWER_BYTES / MiB,
    ...Object.fromEntries(Object.entries(peaks).map(([door, kb]) => [`${door}_peak_rss_mb`, Math.round(kb / 1024)]))
  })
})

const env = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }

const runMeasured = (args: ReadonlyArray<string>) =>
  measure(spawn(process.execPath, [relayBin, ...args], { env, stdio: "pipe" }), EXIT_WITHIN_MS)

/** What the agent wrote to one door: reading stopped soon after the limit. */
const streamedTo = async (door: () => Promise<Measured>) => {
  const before = progress.written
  const result = await door()
  return { result, written: progress.written - before }
}

const expectCutAnswer = (answer: Record<string, unknown>) => {
  expect(answer).toMatchObject({ task_id: "endless", state: "working", truncated: true, limit_bytes: MAX_ANSWER_BYTES })
  expect(answer["kept_bytes"]).toBeGreaterThan(MAX_ANSWER_BYTES - 2 * MiB)
  expect(answer["kept_bytes"]).toBeLessThanOrEqual(MAX_ANSWER_BYTES)
  expect(String(answer["text"]).length).toBeGreaterThan(MAX_ANSWER_BYTES - 2 * MiB)
}

describe("an agent streaming 1 MiB append chunks without end", () => {
  it.each([
    ["message stream", ["message", "stream"]],
    ["message send", ["message", "send"]]
  ])("relay %s stops at the limit for a whole answer: a cut result, response_too_large, bounded RSS", async (door, command) => {
    const { result, written } = await streamedTo(() => runMeasured([...command, "--url", agent.baseUrl, "--json", "hi"]))
    expect(result.code, result.stderr).toBe(1)
    expect(JSON.parse(result.stderr)).toMatchObject({ error: { code: "response_too_large" } })
    // A stream prints NDJSON (the result last), a send its result alone.
    const printed = command.includes("stream") ? result.stdout.trimEnd().split("\n").at(-1)! : result.stdout
    expectCutAnswer(JSON.parse(printed) as Record<string, unknown>)
    expect(written).toBeLessThan(MAX_ANSWER_BYTES + 16 * MiB)
    peaks[door.replace(" ", "_")] = result.peakKb
    expect(result.peakKb).toBeLessThan(RSS_CEILING_KB)
  })

  it("relay mcp answers send_message with an isError result carrying the cut answer, keeps serving, bounded RSS", async () => {
    const child = spawn(process.execPath, [relayBin, "mcp"], { env, stdio: "pipe" })
    // Lines as they end: a 60 MB line arrives in many chunks, joined once.
    const lines: Array<string> = []
    let pending: Array<Buffer> = []
    child.stdout.on("data", (chunk: Buffer) => {
      for (let end = chunk.indexOf(10); end !== -1; end = chunk.indexOf(10)) {
        lines.push(Buffer.concat([...pending, chunk.subarray(0, end)]).toString())
        pending = []
        chunk = chunk.subarray(end + 1)
      }
      pending.push(chunk)
    })
    const answered = (id: number) =>
      new Promise<{ line: string; message: Record<string, unknown> }>((resolve, reject) => {
        const deadline = Date.now() + EXIT_WITHIN_MS
        const poll = setInterval(() => {
          const line = lines.find((text) => text.endsWith(`"id":${id}}`) && (JSON.parse(text) as { id?: unknown }).id === id)
          if (line !== undefined || Date.now() > deadline) {
            clearInterval(poll)
            if (line === undefined) reject(new Error(`no answer to ${id}`))
            else resolve({ line, message: JSON.parse(line) as Record<string, unknown> })
          }
        }, 20)
      })
    const measured = measure(child, EXIT_WITHIN_MS)
    const send = (message: object) => child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", ...message })}\n`)
    send(initializeRequest("endless", 1))
    await answered(1)
    const before = progress.written
    send({
      id: 2,
      method: "tools/call",
      params: { name: "send_message", arguments: { agent_url: agent.baseUrl, message: "hi", timeout_seconds: 50 } }
    })
    const { line, message } = await answered(2)
    const result = message["result"] as {
      isError: boolean
      content: ReadonlyArray<{ text: string }>
      structuredContent: Record<string, unknown>
    }
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toContain("response_too_large")
    expectCutAnswer(result.structuredContent)
    // One line: the kept answer in the structured result and in the summary, nothing more.
    expect(line.length).toBeLessThan(2 * MAX_ANSWER_BYTES + MiB)
    expect(progress.written - before).toBeLessThan(MAX_ANSWER_BYTES + 16 * MiB)
    send({ id: 3, method: "ping" })
    expect((await answered(3)).message).toMatchObject({ result: {} })
    child.stdin.end()
    const { code, peakKb } = await measured
    expect(code).toBe(0)
    peaks["mcp"] = peakKb
    expect(peakKb).toBeLessThan(RSS_CEILING_KB)
  })
})
