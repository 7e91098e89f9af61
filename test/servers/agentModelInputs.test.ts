// What the agent server's language models receive of a message's files and data (#29 item 8):
// the real providers (Responses, the Chat Completions fallback) against fake model servers on
// loopback, driven through the agent server's JSON-RPC door.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { ConfigProvider, Effect, Exit, Layer, Scope } from "effect"
import { afterEach, describe, expect, it } from "vitest"
import { ModelAccess, selectModel } from "../../src/services/ModelAccess.js"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"
import {
  chatOnlyServer,
  type FakeServer,
  type Handler,
  ollamaChatServer,
  responsesServer,
  startServer
} from "../helpers/fakeModelServer.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"

const base64 = (text: string | Buffer) => (typeof text === "string" ? Buffer.from(text, "utf8") : text).toString("base64")

const PDF = "%PDF-1.4\n%âãÏÓ\n1 0 obj <<>> endobj\n"

/** One of each: what a model takes as it is, what it reads as text, and what it only hears named. */
const PARTS = [
  { text: "What is in these?" },
  { raw: IMAGE_PNG_BASE64, filename: "relay.png", mediaType: "image/png" },
  { url: "https://images.example/cat.jpg", filename: "cat.jpg", mediaType: "image/jpeg" },
  { raw: base64("# Notes\nhello from a file\n"), filename: "notes.md", mediaType: "text/markdown; charset=utf-8" },
  { raw: base64(PDF), filename: "report.pdf", mediaType: "application/pdf" },
  { raw: base64("this is no picture"), filename: "liar.png", mediaType: "image/png" },
  { raw: base64(Buffer.from([0xff, 0xfe, 0x00, 0xc3])), filename: "latin1.txt", mediaType: "text/plain" },
  { data: { form: { name: "Ada", age: 36 } } }
]

/** What the model reads in place of each part that is text to it, in order. */
const TEXT_SEEN = [
  "What is in these?",
  "[file: notes.md (text/markdown; charset=utf-8), 26 bytes]:\n# Notes\nhello from a file\n",
  `[file: report.pdf (application/pdf), ${Buffer.byteLength(PDF)} bytes]`,
  "[file: liar.png (image/png), 18 bytes] (its bytes are not image/png)",
  "[file: latin1.txt (text/plain), 4 bytes] (its bytes are not UTF-8 text)",
  `[data: {"form":{"name":"Ada","age":36}}]`
]

const PNG_DATA_URL = `data:image/png;base64,${IMAGE_PNG_BASE64}`

let fake: { readonly server: FakeServer; readonly close: () => Promise<void> } | undefined
let agent: AgentHandle | undefined

afterEach(async () => {
  await agent?.close()
  await fake?.close()
  agent = undefined
  fake = undefined
})

/** A fake model server until the test ends. */
const startFake = async (handler: Handler) => {
  const scope = Effect.runSync(Scope.make())
  const server = await Effect.runPromise(Scope.extend(startServer(handler), scope))
  fake = { server, close: () => Effect.runPromise(Scope.close(scope, Exit.void)) }
  return server
}

/** The agent server over `openai:fake-model` (or another model) served by `server`. */
const agentOver = async (
  server: FakeServer,
  spec = "openai:fake-model",
  settings: Record<string, string> = { OPENAI_API_KEY: "sk-test", OPENAI_BASE_URL: `${server.url}/v1` }
) => {
  const env = ConfigProvider.fromMap(new Map(Object.entries(settings)))
  const model = Layer.unwrapEffect(Effect.map(selectModel(spec), (selection) => ModelAccess.layer(selection))).pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(Layer.setConfigProvider(env)),
    Layer.orDie
  )
  agent = await startAgent({ modelLayer: model })
  return agent
}

const send = async (handle: AgentHandle, parts: ReadonlyArray<unknown>) => {
  const response = await fetch(`${handle.baseUrl}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: { message: { messageId: crypto.randomUUID(), role: "ROLE_USER", parts } }
    }),
    signal: AbortSignal.timeout(10_000)
  })
  return (await response.json()) as { result?: { task: { status: { state: string } } }; error?: unknown }
}

describe("what a language model receives of files and data", () => {
  it("Responses: images as input_image (bytes as a data URL, a URL as it is), text files as text, other files named", async () => {
    const server = await startFake(responsesServer("seen", ["seen"]))
    const answer = await send(await agentOver(server), PARTS)
    expect(answer.result?.task.status.state).toBe("TASK_STATE_COMPLETED")
    const input = server.requests.at(-1)?.body.input as Array<{ role: string; content: unknown }>
    const user = input.at(-1)!
    expect(user.role).toBe("user")
    const content = user.content as Array<Record<string, string>>
    expect(content.filter((piece) => piece["type"] === "input_image").map((piece) => piece["image_url"])).toEqual([
      PNG_DATA_URL,
      "https://images.example/cat.jpg"
    ])
    expect(content.filter((piece) => piece["type"] === "input_text").map((piece) => piece["text"])).toEqual(TEXT_SEEN)
    expect(content.map((piece) => piece["type"])).toEqual([
      "input_text",
      "input_image",
      "input_image",
      "input_text",
      "input_text",
      "input_text",
      "input_text",
      "input_text"
    ])
  })

  it("Chat Completions: images as image_url pieces, the rest as text pieces, in order", async () => {
    const server = await startFake(chatOnlyServer("seen", ["seen"]))
    const answer = await send(await agentOver(server), PARTS)
    expect(answer.result?.task.status.state).toBe("TASK_STATE_COMPLETED")
    const chat = server.requests.find((request) => request.path === "/v1/chat/completions")
    const user = (chat?.body.messages as Array<{ role: string; content: unknown }>).at(-1)!
    const content = user.content as Array<{ type: string; text?: string; image_url?: { url: string } }>
    expect(content.flatMap((piece) => piece.image_url === undefined ? [] : [piece.image_url.url])).toEqual([
      PNG_DATA_URL,
      "https://images.example/cat.jpg"
    ])
    expect(content.flatMap((piece) => piece.type === "text" ? [piece.text] : [])).toEqual(TEXT_SEEN)
  })

  it("Chat Completions: a message of text and text files stays one string, a line for each piece", async () => {
    const server = await startFake(chatOnlyServer("seen", ["seen"]))
    await send(await agentOver(server), [PARTS[0], PARTS[3], PARTS[7]])
    const chat = server.requests.find((request) => request.path === "/v1/chat/completions")
    const user = (chat?.body.messages as Array<{ role: string; content: unknown }>).at(-1)!
    expect(user.content).toBe([TEXT_SEEN[0], TEXT_SEEN[1], TEXT_SEEN[5]].join("\n"))
  })

  it("Ollama: images' bytes in the message's images field, an image URL named (Ollama fetches none), the rest as lines", async () => {
    const server = await startFake(ollamaChatServer("seen", ["seen"]))
    const answer = await send(await agentOver(server, "ollama:llava", { OLLAMA_HOST: server.url }), PARTS)
    expect(answer.result?.task.status.state).toBe("TASK_STATE_COMPLETED")
    const chat = server.requests.find((request) => request.path === "/api/chat")
    const user = (chat?.body.messages as Array<{ role: string; content: string; images?: Array<string> }>).at(-1)!
    expect(user.images).toEqual([IMAGE_PNG_BASE64])
    expect(user.content).toBe([
      TEXT_SEEN[0],
      "[image: cat.jpg (image/jpeg), https://images.example/cat.jpg] (an image by URL, which Ollama does not fetch)",
      ...TEXT_SEEN.slice(1)
    ].join("\n"))
  })

  it("a message of text alone reaches the model as plain text, as before", async () => {
    const server = await startFake(responsesServer("seen", ["seen"]))
    await send(await agentOver(server), [{ text: "just words" }])
    const input = server.requests.at(-1)?.body.input as Array<{ role: string; content: unknown }>
    expect(input.at(-1)).toMatchObject({ role: "user", content: [{ type: "input_text", text: "just words" }] })
  })
})
