/**
 * Sending files and data over MCP (#29 item 5): send_message `files` ({path}, {url},
 * {content_base64, name}) and `data`, to relay's echo agent, with the SDK client. A path is read
 * only inside the client's declared roots (roots/list, asked again after roots/list_changed) or
 * the directories the user allowed (relay mcp --allow-read), judged on real paths, and never in
 * the state directory; anything else is isError `file_not_allowed` with a hint naming --allow-read.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import { type CallToolResult, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { ManagedRuntime } from "effect"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { makeMcpServer } from "../../src/mcp/server.js"
import { ERROR_META_KEY } from "../../src/mcp/toolResult.js"
import type { ToolContext } from "../../src/mcp/tools.js"
import { relayBin } from "../helpers/cli.js"
import { appLayer, type AppRuntime, callTool, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

type Json = Record<string, any>

const home = tempHome()
const root = Path.join(home.parent, "project")
const allowed = Path.join(home.parent, "allowed")
const outside = Path.join(home.parent, "elsewhere")
const BINARY = Buffer.concat([Buffer.from(Array.from({ length: 256 }, (_, i) => i)), randomBytes(64 * 1024)])
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")
const DATA = { rows: [{ id: 1, ok: true }, { id: 2, ok: null }] }

let runtime: AppRuntime
let agent: AgentHandle
const clients: Array<Client> = []

beforeAll(async () => {
  for (const dir of [root, allowed, outside]) Fs.mkdirSync(dir)
  Fs.mkdirSync(home.stateDir, { mode: 0o700 })
  Fs.writeFileSync(Path.join(root, "noise.bin"), BINARY)
  Fs.writeFileSync(Path.join(allowed, "notes.txt"), "allowed by the user\n")
  Fs.writeFileSync(Path.join(outside, "id_rsa"), "-----BEGIN PRIVATE KEY-----\n")
  Fs.writeFileSync(Path.join(home.stateDir, "credentials-backup.json"), "{\"token\": \"s3cret\"}")
  Fs.symlinkSync(Path.join(outside, "id_rsa"), Path.join(root, "innocent.txt"))
  // A sibling whose name starts with the root's: inside by string prefix, outside by path.
  Fs.mkdirSync(`${root}-secrets`)
  Fs.writeFileSync(Path.join(`${root}-secrets`, "token"), "s3cret")
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  agent = await startAgent({ model: "echo" })
})

afterAll(async () => {
  await Promise.allSettled(clients.map((client) => client.close()))
  await Promise.allSettled([agent?.close(), runtime?.dispose()])
  home.cleanup()
})

/** A client connected in memory that declares `roots` (changeable: `roots.splice`), or none when undefined. */
const connect = async (roots: Array<string> | undefined, overrides: Partial<ToolContext> = {}) => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  await makeMcpServer(contextFor(runtime, overrides)).connect(serverSide)
  const client = new Client(
    { name: "files-test", version: "1.0.0" },
    roots === undefined ? {} : { capabilities: { roots: { listChanged: true } } }
  )
  if (roots !== undefined) {
    client.setRequestHandler(
      ListRootsRequestSchema,
      () => ({ roots: roots.map((dir) => ({ uri: pathToFileURL(dir).href, name: Path.basename(dir) })) })
    )
  }
  await client.connect(clientSide)
  await client.listTools()
  clients.push(client)
  return client
}

const send = (client: Client, args: Json) => callTool(client, "send_message", { agent_url: agent.baseUrl, ...args })

const errorOf = (result: CallToolResult) => {
  expect(result.isError, textOf(result)).toBe(true)
  return (result._meta as Json)[ERROR_META_KEY] as { code: string; message: string; hint: string }
}

/** The user's message of a task as the agent keeps it (A2A 1.0 JSON-RPC GetTask). */
const receivedParts = async (result: CallToolResult): Promise<ReadonlyArray<Json>> => {
  expect(result.isError, textOf(result)).not.toBe(true)
  const taskId = (result.structuredContent as Json)["task_id"]
  const response = await fetch(`${agent.baseUrl}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: taskId, historyLength: 10 } }),
    signal: AbortSignal.timeout(10_000)
  })
  const task = ((await response.json()) as Json)["result"]
  return task["history"].find((message: Json) => message["role"] === "ROLE_USER")["parts"]
}

describe("send_message with files and data", () => {
  it("sends a file inside a root the client declares, its exact bytes, without any text", async () => {
    const client = await connect([root])
    const [file, ...more] = await receivedParts(await send(client, { files: [{ path: Path.join(root, "noise.bin") }] }))
    expect(more).toEqual([])
    expect(sha256(Buffer.from(file!["raw"], "base64"))).toBe(sha256(BINARY))
    expect(file).toMatchObject({ filename: "noise.bin", mediaType: "application/octet-stream" })
  })

  it("sends content_base64, a URL and data after the text, in that order", async () => {
    const client = await connect(undefined)
    const parts = await receivedParts(
      await send(client, {
        message: "see attached",
        files: [
          { content_base64: Buffer.from("a,b\n1,2\n").toString("base64url").replace(/=+$/, ""), name: "table.csv" },
          { url: "https://files.example/chart.png", media_type: "image/png" }
        ],
        data: DATA
      })
    )
    expect(parts).toEqual([
      { text: "see attached" },
      { raw: Buffer.from("a,b\n1,2\n").toString("base64"), filename: "table.csv", mediaType: "text/csv" },
      { url: "https://files.example/chart.png", filename: "chart.png", mediaType: "image/png" },
      { data: DATA }
    ])
  })

  it("data alone, even null, is a message", async () => {
    const client = await connect(undefined)
    expect(await receivedParts(await send(client, { data: null }))).toEqual([{ data: null }])
  })

  it("refuses content_base64 that is not base64, a file with two contents, and a message with nothing in it", async () => {
    const client = await connect(undefined)
    expect(errorOf(await send(client, { files: [{ content_base64: "not base64!", name: "x.bin" }] })).message).toBe(
      "The content of x.bin is not base64"
    )
    expect(errorOf(await send(client, { files: [{ url: "https://x.example/a", path: "/etc/hosts" }] })).message)
      .toBe("files[0] needs exactly one of path, url and content_base64")
    expect(errorOf(await send(client, {})).code).toBe("invalid_input")
  })

  it("refuses files past the server's request limit before anything is sent", async () => {
    const client = await connect([root], { maxRequestBytes: 50_000 })
    const error = errorOf(await send(client, { message: "big", files: [{ path: Path.join(root, "noise.bin") }] }))
    expect(error.code).toBe("request_too_large")
    expect(error.message).toContain(`The file ${Path.join(root, "noise.bin")} (${BINARY.length} bytes)`)
    expect(error.message).toContain("past the 50000-byte limit")
    expect(error.hint).toContain("send_message (files with a url")
  })
})

describe("which files send_message may read", () => {
  const refusal = async (client: Client, path: string) => {
    const error = errorOf(await send(client, { message: "here", files: [{ path }] }))
    expect(error.code).toBe("file_not_allowed")
    expect(error.hint).toContain("--allow-read")
    return error.message
  }

  it("nothing outside the declared roots, nor through a symlink in a root that leads out", async () => {
    const client = await connect([root])
    expect(await refusal(client, Path.join(outside, "id_rsa"))).toContain("outside the MCP client's roots")
    expect(await refusal(client, Path.join(root, "innocent.txt"))).toContain("outside the MCP client's roots")
    expect(await refusal(client, Path.join(`${root}-secrets`, "token"))).toContain("outside the MCP client's roots")
    expect(await refusal(client, `${root}/../elsewhere/id_rsa`)).toContain("outside the MCP client's roots")
    // Whether a file exists outside the roots is not told either.
    expect(await refusal(client, Path.join(outside, "no-such-file"))).toContain("outside the MCP client's roots")
  })

  it("nothing in the state directory, even inside a root", async () => {
    const client = await connect([home.parent])
    expect(await refusal(client, Path.join(home.stateDir, "credentials-backup.json"))).toContain("relay's state directory")
  })

  it("no relative path, and no file at all from a client without roots when the user allowed none", async () => {
    expect(await refusal(await connect([root]), "noise.bin")).toContain("relative path")
    expect(await refusal(await connect(undefined), Path.join(root, "noise.bin"))).toContain("declared no roots")
  })

  it("a directory the user allowed with --allow-read is readable, and its neighbours are not", async () => {
    const client = await connect(undefined, { allowRead: [allowed] })
    const [text, file] = await receivedParts(await send(client, { message: "n", files: [{ path: Path.join(allowed, "notes.txt") }] }))
    expect(text).toEqual({ text: "n" })
    expect(Buffer.from(file!["raw"], "base64").toString()).toBe("allowed by the user\n")
    await refusal(client, Path.join(root, "noise.bin"))
  })

  it("follows the client's roots as they change (roots/list_changed)", async () => {
    const roots = [outside]
    const client = await connect(roots)
    await refusal(client, Path.join(root, "noise.bin"))
    roots.splice(0, 1, root)
    await client.sendRootsListChanged()
    await expect.poll(async () => (await send(client, { files: [{ path: Path.join(root, "noise.bin") }] })).isError, { timeout: 5_000 }).not
      .toBe(true)
  })

  it("a missing file inside a root is named as missing", async () => {
    const error = errorOf(await send(await connect([root]), { files: [{ path: Path.join(root, "gone.pdf") }] }))
    expect(error.code).toBe("file_unreadable")
    expect(error.message).toContain("no such file")
  })
})

describe("relay mcp --allow-read over stdio", () => {
  it("lets send_message read files there and only there", async () => {
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [relayBin, "mcp", "--allow-read", allowed],
      env: { ...process.env, RELAY_HOME: home.stateDir } as Record<string, string>,
      stderr: "pipe"
    })
    const client = new Client({ name: "stdio-files-test", version: "1.0.0" })
    await client.connect(transport)
    clients.push(client)
    const [file] = await receivedParts(await send(client, { files: [{ path: Path.join(allowed, "notes.txt") }] }))
    expect(file).toMatchObject({ filename: "notes.txt", mediaType: "text/plain" })
    expect(errorOf(await send(client, { files: [{ path: Path.join(root, "noise.bin") }] })).code).toBe("file_not_allowed")
  })
})
