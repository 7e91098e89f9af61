/**
 * An agent's files and data through the MCP tools, with the SDK client (#29 item 6): what the
 * assistant gets as content beside the structured result, which the client validates against the
 * tool's outputSchema (connectTools lists the tools first, so every structuredContent here is
 * checked).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { CallToolResult, JSONRPCMessage, Tool } from "@modelcontextprotocol/sdk/types.js"
import { Ajv2020 } from "ajv/dist/2020.js"
import { ManagedRuntime } from "effect"
import { createHash, randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { MCP_ANSWER_CONTENT } from "../../src/domain/limits.js"
import { makeMcpServer } from "../../src/mcp/server.js"
import { webhookBaseUrl } from "../../src/servers/webhook/WebhookServer.js"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import { RECEIVED_FILES_DIR } from "../../src/services/ReceivedFiles.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const home = tempHome()
let runtime: AppRuntime
let client: Client
let tools: ReadonlyArray<Tool>
let echo: AgentHandle
let mock: AgentHandle

beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  client = await connectTools(contextFor(runtime))
  tools = (await client.listTools()).tools
  ;[echo, mock] = await Promise.all([startAgent({ model: "echo" }), startAgent({ model: "mock" })])
})

afterAll(async () => {
  await client?.close()
  await Promise.allSettled([runtime?.dispose(), echo?.close(), mock?.close()])
  home.cleanup()
})

const PNG = Buffer.from(IMAGE_PNG_BASE64, "base64")
const PDF = Buffer.from("%PDF-1.7\n1 0 obj <<>> endobj\ntrailer <<>>\n%%EOF\n")
const TEXT = "Hello, files! ✓\n"
const WAV = Buffer.concat([Buffer.from("RIFF"), Buffer.alloc(4), Buffer.from("WAVEfmt "), Buffer.alloc(32)])
const NOT_A_PNG = Buffer.from("<html>this is not a picture</html>")
const DATA = { form: { name: "Ada", languages: ["en", "fr"] } }

const filePart = (bytes: Uint8Array, filename: string, mediaType: string) => ({
  raw: Buffer.from(bytes).toString("base64"),
  filename,
  mediaType
})

/** Sends the parts to relay's echo agent (A2A 1.0 JSON-RPC, not through relay): the id of the task that echoes them. */
const echoTask = async (parts: ReadonlyArray<object>): Promise<string> => {
  const response = await fetch(`${echo.baseUrl}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts } }
    }),
    signal: AbortSignal.timeout(20_000)
  })
  const answer = (await response.json()) as { result: { task: { id: string; status: { state: string } } } }
  expect(answer.result.task.status.state).toBe("TASK_STATE_COMPLETED")
  return answer.result.task.id
}

interface PartView {
  readonly kind: string
  readonly name: string | null
  readonly path: string | null
}

const partsOf = (result: CallToolResult) => (result.structuredContent as { parts: Array<PartView> }).parts

/** The saved copy of the named file, which must lie in the task's folder under the state directory. */
const savedPath = (result: CallToolResult, name: string, taskId: string) => {
  const part = partsOf(result).find((each) => each.name === name)
  expect(part?.path, name).toBeTruthy()
  expect(Path.dirname(part!.path!)).toBe(Path.join(home.stateDir, RECEIVED_FILES_DIR, taskId))
  return part!.path!
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const succeeded = (result: CallToolResult) => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  return result
}

describe("an answer's files and data as MCP content", () => {
  it("send_message: the mock agent's PNG comes back as image content, its copy saved", async () => {
    const result = succeeded(await callTool(client, "send_message", { agent_url: mock.baseUrl, message: "image" }))
    const taskId = (result.structuredContent as { task_id: string }).task_id
    const path = savedPath(result, "relay.png", taskId)
    expect(Fs.readFileSync(path)).toEqual(PNG)
    expect(result.content.slice(1)).toEqual([{ type: "image", data: IMAGE_PNG_BASE64, mimeType: "image/png" }])
  })

  it("get_task and wait_for_task: a PDF as a resource_link, a text file embedded, audio as audio, a lying image/png linked, data as JSON", async () => {
    const taskId = await echoTask([
      filePart(PDF, "report.pdf", "application/pdf"),
      filePart(Buffer.from(TEXT), "hello.txt", "text/plain"),
      filePart(WAV, "hello.wav", "audio/wav"),
      filePart(NOT_A_PNG, "lie.png", "image/png"),
      { data: DATA }
    ])
    for (const tool of ["get_task", "wait_for_task"]) {
      const result = succeeded(await callTool(client, tool, { agent_url: echo.baseUrl, task_id: taskId }))
      const [, pdf, text, audio, lie, data] = result.content
      expect(pdf).toEqual({
        type: "resource_link",
        uri: pathToFileURL(savedPath(result, "report.pdf", taskId)).href,
        name: "report.pdf",
        mimeType: "application/pdf",
        size: PDF.length
      })
      expect(text).toEqual({
        type: "resource",
        resource: { uri: pathToFileURL(savedPath(result, "hello.txt", taskId)).href, text: TEXT, mimeType: "text/plain" }
      })
      expect(audio).toEqual({ type: "audio", data: WAV.toString("base64"), mimeType: "audio/wav" })
      expect(lie).toMatchObject({
        type: "resource_link",
        name: "lie.png",
        mimeType: "image/png",
        description: "its bytes are not image/png"
      })
      expect(data).toEqual({ type: "text", text: JSON.stringify(DATA) })
      expect(result.content).toHaveLength(6)
      expect(partsOf(result).find((part) => part.kind === "data")).toMatchObject({ data: DATA })
    }
  })

  it("an image past 5 MiB is saved and linked, not inlined", async () => {
    const big = Buffer.concat([PNG, Buffer.alloc(MCP_ANSWER_CONTENT.mediaBytes + 1 - PNG.length)])
    const taskId = await echoTask([filePart(big, "big.png", "image/png")])
    // Without the history (which holds the image sent too), the task stays under the client's 10 MiB read limit.
    const result = succeeded(await callTool(client, "get_task", { agent_url: echo.baseUrl, task_id: taskId, history_length: 0 }))
    const path = savedPath(result, "big.png", taskId)
    expect(Fs.statSync(path).size).toBe(big.length)
    expect(result.content.slice(1)).toEqual([{
      type: "resource_link",
      uri: pathToFileURL(path).href,
      name: "big.png",
      mimeType: "image/png",
      size: big.length,
      description: "image over 5 MiB: saved, not shown"
    }])
  })

  it("gives a client that negotiated MCP 2024-11-05 only the content types its version has: links and audio as lines", async () => {
    const taskId = await echoTask([filePart(PDF, "old.pdf", "application/pdf"), filePart(WAV, "old.wav", "audio/wav")])
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await makeMcpServer(contextFor(runtime)).connect(serverSide)
    const replies = new Map<unknown, JSONRPCMessage>()
    clientSide.onmessage = (message) => {
      if ("id" in message) replies.set(message.id, message)
    }
    await clientSide.start()
    const request = async (id: number, method: string, params: Record<string, unknown>) => {
      await clientSide.send({ jsonrpc: "2.0", id, method, params })
      const deadline = Date.now() + 10_000
      while (!replies.has(id)) {
        if (Date.now() > deadline) throw new Error(`no answer to ${method}`)
        await new Promise((resolve) => setTimeout(resolve, 10))
      }
      return (replies.get(id) as { result: Record<string, unknown> }).result
    }
    const initialized = await request(1, "initialize", {
      protocolVersion: "2024-11-05",
      capabilities: {},
      clientInfo: { name: "old-client", version: "1.0.0" }
    })
    expect(initialized["protocolVersion"]).toBe("2024-11-05")
    await clientSide.send({ jsonrpc: "2.0", method: "notifications/initialized" })
    const result = await request(2, "tools/call", { name: "get_task", arguments: { agent_url: echo.baseUrl, task_id: taskId } })
    const content = result["content"] as Array<{ type: string; text?: string }>
    expect(content.map((block) => block.type)).toEqual(["text", "text", "text"])
    expect(content[1]!.text).toMatch(/^\[file old\.pdf: file:\/\/.*old\.pdf \(application\/pdf, \d+ bytes\)\]$/)
    expect(content[2]!.text).toContain("audio (audio/wav): saved")
    await clientSide.close()
  })

  it.each(["send_message", "get_task", "wait_for_task"])(
    "%s: the outputSchema describes parts, and holds the results to them",
    async (name) => {
      const schema = tools.find((tool) => tool.name === name)?.outputSchema as {
        properties: Record<string, unknown>
        required: Array<string>
      }
      expect(schema.required).toContain("parts")
      // The SDK declares its schemas JSON Schema 2020-12, the dialect MCP names its default (2025-11-25 on).
      const validate = new Ajv2020({ strict: false }).compile(schema)
      const sent = succeeded(await callTool(client, "send_message", { agent_url: mock.baseUrl, message: "data" }))
      const taskId = (sent.structuredContent as { task_id: string }).task_id
      const result = name === "send_message" ? sent : succeeded(await callTool(client, name, { agent_url: mock.baseUrl, task_id: taskId }))
      const structured = result.structuredContent as Record<string, unknown> & { parts: Array<Record<string, unknown>> }
      expect(structured.parts.map((part) => part["kind"])).toContain("data")
      expect(validate(structured), JSON.stringify(validate.errors)).toBe(true)
      // What the schema would refuse, so a result that drifted from it fails the SDK client's own check.
      for (const drifted of [{ kind: "image" }, { size: "12" }, { path: 1 }]) {
        expect(validate({ ...structured, parts: [{ ...structured.parts[0], ...drifted }] })).toBe(false)
      }
      const { note: _note, ...withoutNote } = structured.parts[0]!
      expect(validate({ ...structured, parts: [withoutNote] })).toBe(false)
    }
  )
})

describe("get_push_notifications", () => {
  it("gives each saved file, and each file given by an http(s) URL, as a resource_link", async () => {
    const png = Buffer.from(IMAGE_PNG_BASE64, "base64")
    const base = await runtime.runPromise(webhookBaseUrl)
    const parts = [
      { raw: IMAGE_PNG_BASE64, filename: "relay.png", mediaType: "image/png" },
      { url: "https://files.example/report.pdf", filename: "report.pdf", mediaType: "application/pdf" },
      { url: "file:///etc/passwd", filename: "passwd" }
    ]
    const response = await fetch(`${base}/hook`, {
      method: "POST",
      headers: { "content-type": "application/a2a+json" },
      body: JSON.stringify({
        artifactUpdate: { taskId: "t-push-links", contextId: "c", artifact: { artifactId: "a", parts }, lastChunk: true }
      }),
      signal: AbortSignal.timeout(10_000)
    })
    expect(response.status).toBe(200)

    const result = succeeded(await callTool(client, "get_push_notifications", { task_id: "t-push-links" }))
    const path = Path.join(home.stateDir, NotificationLog.NOTIFICATION_FILES_DIR, sha256(png))
    expect(result.content.slice(1)).toEqual([
      { type: "resource_link", uri: pathToFileURL(path).href, name: "relay.png", mimeType: "image/png", size: png.length },
      { type: "resource_link", uri: "https://files.example/report.pdf", name: "report.pdf", mimeType: "application/pdf" }
    ])
  })
})
