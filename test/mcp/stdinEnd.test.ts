/**
 * `relay mcp` on stdio once stdin ends (src/mcp/stdio.ts): the requests read before the end are
 * answered first, so a script that pipes its requests in and closes stdin gets every answer; the
 * transport then closes (the server exits). Requests still unanswered after the grace time are
 * given up, with a logged reason.
 */
import { McpServer } from "@modelcontextprotocol/server"
import { PassThrough } from "node:stream"
import { describe, expect, it } from "vitest"
import * as z from "zod"
import { BoundedStdioTransport } from "../../src/mcp/stdio.js"
import { INITIALIZED, initializeRequest } from "../helpers/mcpMessages.js"

const PACE = { maxInFlight: 4, maxBytes: 1024 * 1024, stallMs: 5_000 }

const INITIALIZE = initializeRequest("script")
const call = (id: number, name: string, args: Record<string, unknown> = {}) => ({
  jsonrpc: "2.0",
  id,
  method: "tools/call",
  params: { name, arguments: args }
})

/** A server over an in-memory stdin and stdout; the script's lines are written, then stdin ends. */
const runScript = async (lines: ReadonlyArray<unknown>, endGraceMs: number) => {
  const stdin = new PassThrough()
  const stdout = new PassThrough()
  let written = ""
  stdout.on("data", (chunk: Buffer) => (written += chunk.toString("utf8")))
  const logged: Array<string> = []
  const transport = new BoundedStdioTransport({ input: stdin, output: stdout, pace: PACE, endGraceMs, log: (line) => logged.push(line) })
  const server = new McpServer({ name: "stdin-end-test", version: "1.0.0" })
  server.registerTool("slow", { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    await new Promise((resolve) => setTimeout(resolve, ms))
    return { content: [{ type: "text", text: `after ${ms} ms` }] }
  })
  server.registerTool("hang", {}, () => new Promise(() => {}))
  await server.connect(transport)
  const started = Date.now()
  // The last line without its newline, as `printf` or an editor may leave it.
  stdin.end(lines.map((line) => JSON.stringify(line)).join("\n"))
  await Promise.race([
    transport.closed,
    new Promise((_, reject) => setTimeout(() => reject(new Error("the transport did not close within 5 s")), 5_000))
  ])
  const answers = written.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as { id?: number; result?: unknown })
  return { answers, logged, took: Date.now() - started }
}

describe("relay mcp on stdio, once stdin ends", () => {
  it("answers the requests read before the end, then closes", async () => {
    const { answers, logged } = await runScript(
      [INITIALIZE, INITIALIZED, call(1, "slow", { ms: 300 }), call(2, "slow", { ms: 100 })],
      5_000
    )
    expect(answers.map((answer) => answer.id).sort()).toEqual([0, 1, 2])
    expect(JSON.stringify(answers.find((answer) => answer.id === 1)?.result)).toContain("after 300 ms")
    expect(logged).toEqual([])
  })

  it("closes at once when nothing is left to answer", async () => {
    const { answers, took } = await runScript([INITIALIZE, INITIALIZED], 5_000)
    expect(answers.map((answer) => answer.id)).toEqual([0])
    expect(took).toBeLessThan(1_000)
  })

  it("gives up what is still unanswered after the grace time, saying so", async () => {
    const { answers, logged } = await runScript([INITIALIZE, INITIALIZED, call(1, "hang"), call(2, "slow", { ms: 10 })], 300)
    expect(answers.map((answer) => answer.id).sort()).toEqual([0, 2])
    expect(logged).toEqual([expect.stringMatching(/stdin ended 300 ms ago and requests read before it are still unanswered/)])
  })
})
