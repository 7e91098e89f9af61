// Files and data at the agent server (#29 items 7-9): accepted at every door (1.0 and 0.3,
// JSON-RPC and HTTP+JSON), stored in the task's history, echoed part for part by the echo model
// (a 1 MiB binary file comes back byte for byte), sent by the official SDK clients; hostile parts
// refused with -32602 / 400; the card's modes say what the model takes and gives.
import { Role } from "@a2a-js/sdk"
import type { Message, Part } from "@a2a-js/sdk"
import type * as V03 from "a2a-sdk-v03"
import { createHash, randomBytes, randomUUID } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"
import { type AgentHandle, startAgent } from "./agentHarness.js"
import { asTask, BINDINGS, collect, sdkClient, send, v03Client, v03Task } from "./sdkClients.js"

type Json = Record<string, any>

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const sha256Of64 = (base64: string) => sha256(Buffer.from(base64, "base64"))

const MIB = randomBytes(1024 * 1024)
const MIB_BASE64 = MIB.toString("base64")
const FILE_URL = "https://files.example/report.pdf?v=2"
const DATA = { form: { name: "Ada", languages: ["en", "fr"], verified: true, score: null } }

const post = async (url: string, body: unknown, headers: Record<string, string> = {}) => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", ...headers },
    body: typeof body === "string" ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(20_000)
  })
  const text = await response.text()
  return { status: response.status, text, json: (text === "" ? {} : JSON.parse(text)) as Json }
}

/** A file or data part in one shape, whatever the door wrote: bytes (base64), url, name, media type or data. */
interface Seen {
  readonly sha256?: string
  readonly url?: string
  readonly name?: string
  readonly mediaType?: string
  readonly data?: unknown
}

const fromV1 = (part: Json): Seen =>
  "raw" in part
    ? { sha256: sha256Of64(part["raw"]), name: part["filename"], mediaType: part["mediaType"] }
    : "url" in part
    ? { url: part["url"], name: part["filename"], mediaType: part["mediaType"] }
    : { data: part["data"] }

const fromV03 = (part: Json): Seen =>
  part["kind"] === "data"
    ? { data: part["data"] }
    : "bytes" in part["file"]
    ? { sha256: sha256Of64(part["file"]["bytes"]), name: part["file"]["name"], mediaType: part["file"]["mimeType"] }
    : { url: part["file"]["uri"], name: part["file"]["name"], mediaType: part["file"]["mimeType"] }

const fromV03Rest = (part: Json): Seen =>
  "data" in part
    ? { data: part["data"]["data"] }
    : "fileWithBytes" in part["file"]
    ? { sha256: sha256Of64(part["file"]["fileWithBytes"]), mediaType: part["file"]["mimeType"] }
    : { url: part["file"]["fileWithUri"], mediaType: part["file"]["mimeType"] }

/** What was sent, as every door but 0.3 HTTP+JSON (whose proto has no file names) gives it back. */
const SENT: ReadonlyArray<Seen> = [
  { sha256: sha256(MIB), name: "noise.bin", mediaType: "application/octet-stream" },
  { url: FILE_URL, name: "report.pdf", mediaType: "application/pdf" },
  { data: DATA }
]
const withoutNames = SENT.map(({ name: _name, ...seen }) => seen)

interface Door {
  readonly name: string
  /** Sends the parts with a caption; the answer's task (artifacts and history) in the door's shape. */
  readonly send: (base: string, body: Json) => Promise<{ status: number; text: string; json: Json }>
  readonly message: (parts: ReadonlyArray<Json>) => Json
  readonly task: (answer: Json) => Json
  readonly parts: (message: Json) => ReadonlyArray<Json>
  readonly artifactParts: (artifact: Json) => ReadonlyArray<Json>
  readonly read: (part: Json) => Seen
  readonly expected: ReadonlyArray<Seen>
  /** The door's spelling of the test's parts: a file's bytes and by URL, a data part. */
  readonly spell: { readonly bytes: Json; readonly url: Json; readonly data: Json; readonly text: (text: string) => Json }
}

const V1_HEADERS = { "a2a-version": "1.0" }
const v1Spell = {
  bytes: { raw: MIB_BASE64, filename: "noise.bin", mediaType: "application/octet-stream" },
  url: { url: FILE_URL, filename: "report.pdf", mediaType: "application/pdf" },
  data: { data: DATA },
  text: (text: string) => ({ text })
}
const v03Spell = {
  bytes: { kind: "file", file: { bytes: MIB_BASE64, name: "noise.bin", mimeType: "application/octet-stream" } },
  url: { kind: "file", file: { uri: FILE_URL, name: "report.pdf", mimeType: "application/pdf" } },
  data: { kind: "data", data: DATA },
  text: (text: string) => ({ kind: "text", text })
}
const v03RestSpell = {
  bytes: { file: { fileWithBytes: MIB_BASE64, mimeType: "application/octet-stream" } },
  url: { file: { fileWithUri: FILE_URL, mimeType: "application/pdf" } },
  data: { data: { data: DATA } },
  text: (text: string) => ({ text })
}

const rpc = (method: string, headers: Record<string, string> = {}) => (base: string, params: Json) =>
  post(`${base}/`, { jsonrpc: "2.0", id: 1, method, params }, headers)

const DOORS: ReadonlyArray<Door> = [
  {
    name: "1.0 JSON-RPC",
    send: rpc("SendMessage", V1_HEADERS),
    message: (parts) => ({ message: { messageId: randomUUID(), role: "ROLE_USER", parts } }),
    task: (answer) => answer["result"]["task"],
    parts: (message) => message["parts"],
    artifactParts: (artifact) => artifact["parts"],
    read: fromV1,
    expected: SENT,
    spell: v1Spell
  },
  {
    name: "1.0 HTTP+JSON",
    send: (base, body) => post(`${base}/message:send`, body, V1_HEADERS),
    message: (parts) => ({ message: { messageId: randomUUID(), role: "ROLE_USER", parts } }),
    task: (answer) => answer["task"],
    parts: (message) => message["parts"],
    artifactParts: (artifact) => artifact["parts"],
    read: fromV1,
    expected: SENT,
    spell: v1Spell
  },
  {
    name: "0.3 JSON-RPC",
    send: rpc("message/send"),
    message: (parts) => ({ message: { kind: "message", messageId: randomUUID(), role: "user", parts } }),
    task: (answer) => answer["result"],
    parts: (message) => message["parts"],
    artifactParts: (artifact) => artifact["parts"],
    read: fromV03,
    expected: SENT,
    spell: v03Spell
  },
  {
    name: "0.3 HTTP+JSON",
    send: (base, body) => post(`${base}/v1/message:send`, body),
    message: (parts) => ({ message: { messageId: randomUUID(), role: "ROLE_USER", content: parts } }),
    task: (answer) => answer["task"],
    parts: (message) => message["content"],
    artifactParts: (artifact) => artifact["parts"],
    read: fromV03Rest,
    expected: withoutNames,
    spell: v03RestSpell
  }
]

let echo: AgentHandle
let mock: AgentHandle
let llm: AgentHandle

beforeAll(async () => {
  ;[echo, mock, llm] = await Promise.all([startAgent({ model: "echo" }), startAgent({ model: "mock" }), startAgent()])
})

afterAll(async () => {
  await Promise.all([echo?.close(), mock?.close(), llm?.close()])
})

describe.each(DOORS)("the echo agent at the $name door", (door) => {
  const allParts = [door.spell.bytes, door.spell.url, door.spell.data]

  it("echoes a 1 MiB binary file, a file by URL and a data part, and keeps them in the history", async () => {
    const answer = await door.send(echo.baseUrl, door.message(allParts))
    expect(answer.status).toBe(200)
    const task = door.task(answer.json)
    const [artifact] = task["artifacts"] as Array<Json>
    expect(door.artifactParts(artifact!).map(door.read)).toEqual(door.expected)
    const [sent] = task["history"] as Array<Json>
    expect(door.parts(sent!).map(door.read)).toEqual(door.expected)
  })

  it("answers text and files in the order they came", async () => {
    const answer = await door.send(echo.baseUrl, door.message([door.spell.text("here:"), door.spell.data, door.spell.text("done")]))
    const parts = door.artifactParts(door.task(answer.json)["artifacts"][0])
    expect(parts.map((part) => "text" in part ? part["text"] : door.read(part).data)).toEqual(["here:", DATA, "done"])
  })
})

describe("hostile parts at every door: refused with -32602 / 400, and the server serves on", () => {
  const hostile: ReadonlyArray<{ readonly door: string; readonly part: Json; readonly says: string }> = [
    { door: "1.0 JSON-RPC", part: { raw: "AAAA", url: FILE_URL }, says: "message.parts[0] needs exactly one of text, raw, url or data" },
    { door: "1.0 HTTP+JSON", part: { raw: "AAAA", url: FILE_URL }, says: "message.parts[0] needs exactly one of text, raw, url or data" },
    {
      door: "0.3 JSON-RPC",
      part: { kind: "file", file: { bytes: "AAAA", uri: FILE_URL } },
      says: "message.parts[0].file needs exactly one of bytes or uri, but has both"
    },
    {
      door: "0.3 HTTP+JSON",
      part: { file: { fileWithBytes: "AAAA", fileWithUri: FILE_URL } },
      says: "message.content[0].file needs exactly one of fileWithBytes or fileWithUri, but has both"
    },
    {
      door: "1.0 JSON-RPC",
      part: { raw: "not base64!", filename: "x.bin" },
      says: "message.parts[0] is a file whose bytes are not base64"
    },
    { door: "1.0 HTTP+JSON", part: { raw: "QUJD=QUJD" }, says: "message.parts[0] is a file whose bytes are not base64" },
    { door: "0.3 JSON-RPC", part: { kind: "file", file: { bytes: "A" } }, says: "message.parts[0] is a file whose bytes are not base64" },
    { door: "0.3 HTTP+JSON", part: { file: { fileWithBytes: "ab+_" } }, says: "message.parts[0] is a file whose bytes are not base64" }
  ]

  it.each(hostile)("$door: $says", async ({ door: name, part, says }) => {
    const door = DOORS.find((candidate) => candidate.name === name)!
    const answer = await door.send(echo.baseUrl, door.message([part]))
    const error = name.endsWith("JSON-RPC") ? answer.json["error"] : answer.json
    expect(answer.status).toBe(name.endsWith("JSON-RPC") ? 200 : 400)
    expect(error["code"] ?? error["error"]?.["code"]).toBe(name.startsWith("1.0 HTTP") ? 400 : -32602)
    expect(error["message"] ?? error["error"]?.["message"]).toContain(says)
    const fine = await door.send(echo.baseUrl, door.message([door.spell.data]))
    expect(fine.status).toBe(200)
  })

  it("10 000 tiny file parts: refused at every door, naming the limit", async () => {
    for (const door of DOORS) {
      const tiny = JSON.parse(JSON.stringify(door.spell.bytes).replace(MIB_BASE64, "AA==")) as Json
      const started = Date.now()
      const answer = await door.send(echo.baseUrl, door.message(Array.from({ length: 10_000 }, () => tiny)))
      expect(answer.text, door.name).toContain("message.parts has 10000 parts; a message takes at most 1000")
      expect(Date.now() - started, door.name).toBeLessThan(5000)
    }
  })

  it("a media type that lies comes back as it was sent (echo judges no content)", async () => {
    const liar = { raw: Buffer.from("no picture here").toString("base64"), filename: "liar.png", mediaType: "image/png" }
    const answer = await DOORS[0]!.send(echo.baseUrl, DOORS[0]!.message([liar]))
    expect(answer.json["result"]["task"]["artifacts"][0]["parts"]).toEqual([liar])
  })

  it("URL-safe or unpadded base64 is taken, and stored and answered as standard base64 of the same bytes", async () => {
    const bytes = Buffer.from([0xfb, 0xff, 0xfe, 0x01])
    const answer = await DOORS[0]!.send(echo.baseUrl, DOORS[0]!.message([{ raw: bytes.toString("base64url") }]))
    const task = answer.json["result"]["task"]
    expect(task["artifacts"][0]["parts"]).toEqual([{ raw: bytes.toString("base64") }])
    expect(task["history"][0]["parts"]).toEqual([{ raw: bytes.toString("base64") }])
  })
})

describe("files count in the body limit", () => {
  it("a file past --max-body-bytes is 413 at every door, nothing stored", async () => {
    const small = await startAgent({ model: "echo", maxBodyBytes: 64 * 1024 })
    try {
      for (const door of DOORS) {
        const answer = await door.send(small.baseUrl, door.message([door.spell.bytes]))
        expect(answer.status, door.name).toBe(413)
      }
      const listed = await post(`${small.baseUrl}/`, { jsonrpc: "2.0", id: 1, method: "ListTasks", params: {} }, V1_HEADERS)
      expect(listed.json["result"]["tasks"] ?? []).toEqual([])
    } finally {
      await small.close()
    }
  })
})

describe("streamed echo of files and data", () => {
  it("1.0: text word by word, then each file and data part as a chunk of the answer artifact", async () => {
    const response = await fetch(`${echo.baseUrl}/message:stream`, {
      method: "POST",
      headers: { "content-type": "application/json", accept: "text/event-stream", ...V1_HEADERS },
      body: JSON.stringify({
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "two words" }, v1Spell.bytes, v1Spell.data] }
      }),
      signal: AbortSignal.timeout(20_000)
    })
    const events = (await response.text()).split("\n\n").flatMap((frame) => {
      const data = frame.split("\n").filter((line) => line.startsWith("data:")).map((line) => line.slice(5)).join("")
      return data === "" ? [] : [JSON.parse(data) as Json]
    })
    const chunks = events.flatMap((event) =>
      event["artifactUpdate"] === undefined ? [] : [event["artifactUpdate"]["artifact"]["parts"] as Array<Json>]
    )
    const parts = chunks.flat()
    expect(parts.filter((part) => "text" in part).map((part) => part["text"]).join("")).toBe("two words")
    expect(parts.filter((part) => !("text" in part)).map(fromV1)).toEqual([SENT[0], SENT[2]])
    expect(events.at(-1)?.["statusUpdate"]?.["status"]?.["state"]).toBe("TASK_STATE_COMPLETED")
  })
})

// ---------------------------------------------------------------------------
// The official SDK clients

const sdkFile = (content: Part["content"], filename: string, mediaType: string): Part => ({
  content,
  filename,
  mediaType,
  metadata: undefined
})

const sdkMessage = (parts: Array<Part>): Message => ({
  messageId: randomUUID(),
  contextId: "",
  taskId: "",
  role: Role.ROLE_USER,
  parts,
  metadata: undefined,
  extensions: [],
  referenceTaskIds: []
})

const fromSdk = (part: Part): Seen => {
  const content = part.content
  if (content?.$case === "raw") return { sha256: sha256(content.value), name: part.filename, mediaType: part.mediaType }
  if (content?.$case === "url") return { url: content.value, name: part.filename, mediaType: part.mediaType }
  return { data: content?.$case === "data" ? content.value : undefined }
}

const fromV03Sdk = (part: V03.Part): Seen => {
  if (part.kind === "data") return { data: part.data }
  if (part.kind === "text") return { data: part.text }
  const file = part.file
  const common = {
    ...(file.name === undefined ? {} : { name: file.name }),
    ...(file.mimeType === undefined ? {} : { mediaType: file.mimeType })
  }
  return "bytes" in file ? { sha256: sha256Of64(file.bytes), ...common } : { url: file.uri, ...common }
}

describe.each(BINDINGS)("@a2a-js/sdk 1.3.0 over %s sending files and data to relay's echo agent", (binding) => {
  it("gets each part echoed: inline bytes (sha256 equal), a file by URL and a data part", async () => {
    const client = await sdkClient(echo.baseUrl, binding)
    const parts = [
      sdkFile({ $case: "raw", value: MIB }, "noise.bin", "application/octet-stream"),
      sdkFile({ $case: "url", value: FILE_URL }, "report.pdf", "application/pdf"),
      sdkFile({ $case: "data", value: DATA }, "", "")
    ]
    const task = asTask(await client.sendMessage(send(sdkMessage(parts))))
    expect(task.artifacts[0]!.parts.map(fromSdk)).toEqual(SENT)
  })

  it("streams them back too", async () => {
    const client = await sdkClient(echo.baseUrl, binding)
    const image = sdkFile({ $case: "raw", value: Buffer.from(IMAGE_PNG_BASE64, "base64") }, "relay.png", "image/png")
    const events = await collect(client.sendMessageStream(send(sdkMessage([image]))))
    const parts = events.flatMap((event) => event.payload?.$case === "artifactUpdate" ? event.payload.value.artifact?.parts ?? [] : [])
    expect(parts.filter((part) => part.content?.$case === "raw").map(fromSdk)).toEqual([
      { sha256: sha256Of64(IMAGE_PNG_BASE64), name: "relay.png", mediaType: "image/png" }
    ])
  })
})

describe.each(BINDINGS)("a2a-sdk-v03 (0.3.14) over %s sending files and data to relay's echo agent", (binding) => {
  it("gets each part echoed: inline bytes (sha256 equal), a file by URL and a data part", async () => {
    const client = await v03Client(echo.baseUrl, binding)
    const message: V03.Message = {
      kind: "message",
      messageId: randomUUID(),
      role: "user",
      parts: [
        { kind: "file", file: { bytes: MIB_BASE64, name: "noise.bin", mimeType: "application/octet-stream" } },
        { kind: "file", file: { uri: FILE_URL, name: "report.pdf", mimeType: "application/pdf" } },
        { kind: "data", data: DATA }
      ]
    }
    const task = v03Task(await client.sendMessage({ message }))
    // The 0.3 proto of HTTP+JSON has no file names.
    expect(task.artifacts?.[0]?.parts.map(fromV03Sdk)).toEqual(binding === "JSONRPC" ? SENT : withoutNames)
  })
})

// ---------------------------------------------------------------------------
// The mock's image, and the card's modes

describe("the mock model's image", () => {
  it("`image` answers with a PNG artifact, 16×16, in both generations", async () => {
    const answer = await DOORS[0]!.send(mock.baseUrl, DOORS[0]!.message([{ text: "image" }]))
    const [artifact] = answer.json["result"]["task"]["artifacts"] as Array<Json>
    expect(artifact).toMatchObject({ name: "image", parts: [{ filename: "relay.png", mediaType: "image/png" }] })
    const png = Buffer.from(artifact!["parts"][0]["raw"], "base64")
    expect(png.subarray(0, 8)).toEqual(Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]))
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([16, 16])
    const old = await DOORS[2]!.send(mock.baseUrl, DOORS[2]!.message([{ kind: "text", text: "image" }]))
    expect(old.json["result"]["artifacts"][0]["parts"][0]).toMatchObject({
      kind: "file",
      file: { name: "relay.png", mimeType: "image/png" }
    })
  })

  it("echoes a file and a data part sent with other words", async () => {
    const answer = await DOORS[0]!.send(mock.baseUrl, DOORS[0]!.message([{ text: "look" }, v1Spell.data]))
    expect(answer.json["result"]["task"]["artifacts"][0]["parts"]).toEqual([{ text: "look" }, { data: DATA }])
  })
})

describe("the card's input and output modes follow the model", () => {
  const card = async (agent: AgentHandle, headers: Record<string, string> = {}) => {
    const response = await fetch(`${agent.baseUrl}/.well-known/agent-card.json`, { headers, signal: AbortSignal.timeout(5000) })
    return (await response.json()) as Json
  }

  it.each(
    [
      ["echo", () => echo, ["text/plain", "application/json", "*/*"], ["text/plain", "application/json", "*/*"]],
      ["mock", () => mock, ["text/plain", "application/json", "*/*"], ["text/plain", "application/json", "image/png", "*/*"]],
      [
        "a language model",
        () => llm,
        ["text/plain", "text/markdown", "text/csv", "application/json", "image/png", "image/jpeg", "image/gif", "image/webp"],
        ["text/plain"]
      ]
    ] as const
  )("%s, on the 1.0 and the hybrid card, and on its skills", async (_, agent, input, output) => {
    for (const headers of [V1_HEADERS, {}]) {
      const served = await card(agent(), headers)
      expect([served["defaultInputModes"], served["defaultOutputModes"]]).toEqual([input, output])
      for (const skill of served["skills"] as Array<Json>) {
        expect([skill["inputModes"], skill["outputModes"]]).toEqual([input, output])
      }
    }
  })
})
