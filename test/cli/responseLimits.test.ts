/**
 * The built CLI and MCP server against an agent that answers 1 GB: each refuses the answer with
 * response_too_large while its peak RSS (VmHWM, sampled from /proc) stays under 300 MB, and
 * `card validate /dev/zero --file` returns at once. Needs `npm run build` first.
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MAX_RESPONSE_BYTES } from "../../src/domain/limits.js"
import { relayBin, requireBuiltRelay } from "../helpers/cli.js"
import { initializeRequest } from "../helpers/mcpMessages.js"
import { measure } from "../helpers/peakMemory.js"
import { tempHome } from "../helpers/stateHome.js"
import { nestedObject, type Progress, streamHugeJson } from "../peers/hugeAnswers.js"
import { reply, startStub, type Stub, type StubRoute, v1Card } from "../services/a2aClientHarness.js"

const GiB = 1024 * 1024 * 1024
const RSS_CEILING_KB = 300 * 1024
const EXIT_WITHIN_MS = 30_000
const measureChild = (child: ChildProcessWithoutNullStreams) => measure(child, EXIT_WITHIN_MS)

const home = tempHome()
const progress: Progress = { written: 0, cutShort: false }
let hugeCard: Stub
let hugeAnswer: Stub
let deepAnswer: Stub

const gigabyte = (head: string, tail: string): StubRoute => (_request, res) => {
  streamHugeJson(res, { head, tail, size: GiB, declareLength: false }, progress)
  return undefined
}

beforeAll(async () => {
  requireBuiltRelay()
  ;[hugeCard, hugeAnswer, deepAnswer] = await Promise.all([
    startStub({ "GET /.well-known/agent-card.json": gigabyte("{\"name\":\"", "\"}") }),
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
      "POST /rpc": gigabyte("{\"jsonrpc\":\"2.0\",\"id\":\"x\",\"result\":{\"message\":{\"messageId\":\"", "\"}}}")
    })),
    startStub((base) => ({
      "GET /.well-known/agent-card.json": reply(v1Card([{ url: `${base}/rpc`, binding: "JSONRPC", version: "1.0" }])),
      // Written as text: JSON.stringify itself cannot write this.
      "POST /rpc": (request, res) => {
        const id = JSON.stringify((request.body as { id: string }).id)
        const message = `{"messageId":"m","role":"ROLE_AGENT","parts":[{"text":"deep"}],"metadata":${nestedObject(50_000)}}`
        res.writeHead(200, { "content-type": "application/json" }).end(`{"jsonrpc":"2.0","id":${id},"result":{"message":${message}}}`)
        return undefined
      }
    }))
  ])
})

afterAll(async () => {
  await Promise.allSettled([hugeCard?.close(), hugeAnswer?.close(), deepAnswer?.close()])
  home.cleanup()
})

const runMeasured = (args: ReadonlyArray<string>) =>
  measureChild(
    spawn(process.execPath, [relayBin, ...args], { env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }, stdio: "pipe" })
  )

/** The code of the JSON error a command printed on stderr with --json. */
const errorCodeOf = (stderr: string) => (JSON.parse(stderr) as { error: { code: string } }).error.code

describe("a 1 GB answer", () => {
  it("relay card get refuses a 1 GB card with response_too_large, under 300 MB of RSS", async () => {
    const result = await runMeasured(["card", "get", "--url", hugeCard.baseUrl, "--json"])
    expect(result.code, result.stderr).toBe(1)
    expect(errorCodeOf(result.stderr)).toBe("response_too_large")
    expect(result.stderr).toContain(`${MAX_RESPONSE_BYTES}-byte limit`)
    expect(result.peakKb).toBeGreaterThan(0)
    expect(result.peakKb).toBeLessThan(RSS_CEILING_KB)
  })

  it("relay message send refuses a 1 GB JSON-RPC answer, under 300 MB of RSS; --max-response-bytes lowers the limit", async () => {
    const result = await runMeasured(["message", "send", "--url", hugeAnswer.baseUrl, "--json", "--max-response-bytes", "1000000", "hi"])
    expect(result.code, result.stderr).toBe(1)
    expect(errorCodeOf(result.stderr)).toBe("response_too_large")
    expect(result.stderr).toContain("1000000-byte limit")
    expect(result.peakKb).toBeLessThan(RSS_CEILING_KB)
  })

  it("relay mcp answers get_agent_card on a 1 GB card with a response_too_large result, under 300 MB of RSS, and keeps serving", async () => {
    const child = spawn(process.execPath, [relayBin, "mcp"], { env: { ...process.env, RELAY_HOME: home.stateDir }, stdio: "pipe" })
    let stdout = ""
    child.stdout.on("data", (chunk) => (stdout += chunk))
    const answered = (id: number) =>
      new Promise<Record<string, unknown>>((resolve, reject) => {
        const deadline = Date.now() + EXIT_WITHIN_MS
        const poll = setInterval(() => {
          const found = stdout.split("\n").filter((line) => line !== "").map((line) => JSON.parse(line) as Record<string, unknown>)
            .find((message) => message["id"] === id)
          if (found !== undefined || Date.now() > deadline) {
            clearInterval(poll)
            if (found === undefined) reject(new Error(`no answer to ${id}: ${stdout}`))
            else resolve(found)
          }
        }, 20)
      })
    const measured = measureChild(child)
    child.stdin.write(
      `${JSON.stringify(initializeRequest("rss", 1))}\n`
    )
    await answered(1)
    const call = { name: "get_agent_card", arguments: { agent_url: hugeCard.baseUrl } }
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call })}\n`)
    const result = (await answered(2))["result"] as { isError: boolean; content: ReadonlyArray<{ text: string }> }
    expect(result.isError).toBe(true)
    expect(result.content[0]!.text).toContain("response_too_large")
    // The hint speaks of what an assistant can do, not of a tool parameter that does not exist.
    expect(result.content[0]!.text).toContain("raise relay's response limit")
    expect(result.content[0]!.text).not.toContain("max_response_bytes")
    child.stdin.write(`${JSON.stringify({ jsonrpc: "2.0", id: 3, method: "ping" })}\n`)
    expect(await answered(3)).toMatchObject({ result: {} })
    child.stdin.end()
    const { code, peakKb } = await measured
    expect(code).toBe(0)
    expect(peakKb).toBeLessThan(RSS_CEILING_KB)
  })

  it("the agent stopped sending long before 1 GB: the client hung up", () => {
    expect(progress.cutShort).toBe(true)
    expect(progress.written).toBeLessThan(GiB / 4)
  })
})

describe("other hostile answers at the terminal", () => {
  it("relay card validate /dev/zero --file returns at once with card_file_refused", async () => {
    const started = Date.now()
    const result = await runMeasured(["card", "validate", "/dev/zero", "--file", "--json"])
    expect(result.code).toBe(1)
    expect(errorCodeOf(result.stderr)).toBe("card_file_refused")
    expect(Date.now() - started).toBeLessThan(10_000)
    expect(result.peakKb).toBeLessThan(RSS_CEILING_KB)
  })

  it("relay message send on an answer nested 50 000 levels fails with invalid_response, no stack trace", async () => {
    const result = await runMeasured(["message", "send", "--url", deepAnswer.baseUrl, "--json", "hi"])
    expect(result.code).toBe(1)
    expect(errorCodeOf(result.stderr)).toBe("invalid_response")
    expect(result.stderr).not.toMatch(/\n\s+at |RangeError/)
  })
})
