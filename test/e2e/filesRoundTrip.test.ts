/**
 * Files and data, both ways, at every door (issue 29, "Done when"), one matrix:
 * - through relay's own echo agent, on protocol 1.0 and 0.3 × JSON-RPC and HTTP+JSON, at the
 *   terminal (`--json`, saved under the state directory; and as printed, with `--save-dir`) and over
 *   MCP stdio (an SDK client spawning `relay mcp` and declaring the temp folder as its root): a 1 MiB
 *   random file and a data part sent come back identical (sha256 of the saved file, data deep-equal);
 * - against the official SDK peers (1.3.0 and 0.3.14) answering an image, a report by URL and a data
 *   part: the terminal shows and saves the image, shows the URL and the data; `--json` lists the
 *   three parts, and `--download` saves the report; MCP gives the image as image content (and saves
 *   it), the report as a link and the data.
 * One agent per generation serves every binding; the MCP door reaches one interface at a time
 * through a card that lists only that one. Needs `npm run build`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CardServer, startCardServer } from "../helpers/a2aPrograms.js"
import { relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { PEER_DATA, PEER_IMAGE, REPORT, REPORT_PATH, withBehaviour } from "../peers/behaviours.js"
import { startSdkAgent } from "../peers/sdkAgent.js"
import { startV03Agent } from "../peers/v03Agent.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

type Json = Record<string, any>

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const home = tempHome()
/** What the tests send from, declared to `relay mcp` as the client's root. */
const outbox = Path.join(home.parent, "outbox")
const MIB_FILE = Path.join(outbox, "noise.bin")
const MIB = randomBytes(1024 * 1024)
const DATA = { form: { name: "Ada", languages: ["en", "fr"], verified: true, score: null, ratio: 0.5 } }

const INTERFACES = [
  { protocol: "1.0", binding: "jsonrpc" },
  { protocol: "1.0", binding: "rest" },
  { protocol: "0.3", binding: "jsonrpc" },
  { protocol: "0.3", binding: "rest" }
] as const
type Interface = (typeof INTERFACES)[number]
const wireBinding = (binding: Interface["binding"]) => (binding === "jsonrpc" ? "JSONRPC" : "HTTP+JSON")

let echo: AgentHandle
/** One card per interface of the echo agent, listing that interface alone: the MCP door's pin. */
const pinnedCards = new Map<Interface, CardServer>()
const peers = new Map<string, { readonly baseUrl: string; close(): Promise<void> }>()
let mcp: Client

beforeAll(async () => {
  requireBuiltRelay()
  Fs.mkdirSync(outbox)
  Fs.writeFileSync(MIB_FILE, MIB)
  const [agent, v1, v03] = await Promise.all([startAgent({ model: "echo" }), startSdkAgent(), startV03Agent()])
  echo = agent
  peers.set("SDK 1.3.0", v1)
  peers.set("SDK 0.3.14", v03)
  const card = (await (await fetch(`${echo.baseUrl}/.well-known/agent-card.json`, { headers: { "a2a-version": "1.0" } })).json()) as Json
  for (const pin of INTERFACES) {
    const only = (card["supportedInterfaces"] as Array<Json>).filter((candidate) =>
      candidate["protocolVersion"] === pin.protocol && candidate["protocolBinding"] === wireBinding(pin.binding)
    )
    pinnedCards.set(pin, await startCardServer({ ...card, supportedInterfaces: only }))
  }
  mcp = new Client({ name: "files-round-trip", version: "1.0.0" }, { capabilities: { roots: {} } })
  mcp.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(outbox).href, name: "outbox" }] }))
  await mcp.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [relayBin, "mcp"],
      env: { ...(process.env as Record<string, string>), RELAY_HOME: home.stateDir, NO_COLOR: "1" },
      stderr: "ignore"
    })
  )
}, 30_000)

afterAll(async () => {
  await mcp?.close()
  await Promise.allSettled([echo?.close(), ...[...peers.values(), ...pinnedCards.values()].map((server) => server.close())])
  home.cleanup()
})

const relay = async (args: ReadonlyArray<string>) => {
  const result = await runRelay(args, { stateDir: home.stateDir, timeoutMs: 30_000 })
  expect(result.code, result.stderr).toBe(0)
  return result
}

const relayJson = async (args: ReadonlyArray<string>) => JSON.parse((await relay([...args, "--json"])).stdout) as Json

const callTool = async (args: Json): Promise<CallToolResult> => {
  const result = (await mcp.callTool({ name: "send_message", arguments: args }, undefined, { timeout: 30_000 })) as CallToolResult
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true)
  return result
}

const partsOf = (result: Json, kind: "text" | "file" | "data") => (result["parts"] as Array<Json>).filter((part) => part["kind"] === kind)

/** The one file part of an answer, saved: its bytes as saved, checked against its own sha256. */
const savedFile = (part: Json | undefined): Buffer => {
  expect(part).toBeDefined()
  const bytes = Fs.readFileSync(String(part!["path"]))
  expect([bytes.length, sha256(bytes)]).toEqual([part!["size"], part!["sha256"]])
  return bytes
}

const taskFolder = (taskId: unknown) => Path.join(home.stateDir, "files", String(taskId))

describe.each(INTERFACES)("a 1 MiB file and a data part through relay's echo agent, $protocol $binding", (pin) => {
  const pinned = () => ["--url", echo.baseUrl, "--protocol", pin.protocol, "--binding", pin.binding]

  it("terminal --json: both come back identical, the file saved under the state directory's files/<task-id>/", async () => {
    const result = await relayJson(["message", "send", ...pinned(), "--file", MIB_FILE, "--data", JSON.stringify(DATA), "round trip"])
    expect(result["state"]).toBe("completed")
    const [file] = partsOf(result, "file")
    expect(savedFile(file).equals(MIB)).toBe(true)
    expect(Path.dirname(String(file!["path"]))).toBe(taskFolder(result["task_id"]))
    expect(partsOf(result, "data").map((part) => part["data"])).toEqual([DATA])
  })

  it("terminal, as printed: the file saved under --save-dir, named on its line", async () => {
    const saveDir = Path.join(home.parent, `saved-${pin.protocol}-${pin.binding}`)
    const dataFile = Path.join(outbox, "form.json")
    Fs.writeFileSync(dataFile, JSON.stringify(DATA))
    const { stdout } = await relay([
      "message",
      "send",
      ...pinned(),
      "--file",
      MIB_FILE,
      "--data",
      `@${dataFile}`,
      "--save-dir",
      saveDir,
      "round trip"
    ])
    const saved = Fs.readdirSync(saveDir)
    expect(saved).toHaveLength(1)
    expect(sha256(Fs.readFileSync(Path.join(saveDir, saved[0]!)))).toBe(sha256(MIB))
    expect(stdout).toContain(`(application/octet-stream, ${MIB.length} bytes) → ${Path.join(saveDir, saved[0]!)}`)
    expect(stdout).toContain(JSON.stringify(DATA, null, 2))
  })

  it("MCP stdio: send_message with files [{path}] inside the declared root and data; both come back identical", async () => {
    const agentUrl = pinnedCards.get(pin)!.baseUrl
    const result = await callTool({ agent_url: agentUrl, message: "round trip", files: [{ path: MIB_FILE }], data: DATA })
    const structured = result.structuredContent as Json
    const [file] = partsOf(structured, "file")
    expect(savedFile(file).equals(MIB)).toBe(true)
    expect(Path.dirname(String(file!["path"]))).toBe(taskFolder(structured["task_id"]))
    expect(result.content).toContainEqual(
      expect.objectContaining({ type: "resource_link", uri: pathToFileURL(String(file!["path"])).href })
    )
    expect(partsOf(structured, "data").map((part) => part["data"])).toEqual([DATA])
  })
})

describe.each(["SDK 1.3.0", "SDK 0.3.14"])("an image, a report by URL and a data part from the %s peer", (name) => {
  const message = withBehaviour("files-and-data", "make me a report")
  const peer = () => peers.get(name)!
  const reportUrl = () => `${peer().baseUrl}${REPORT_PATH}`
  const image = Buffer.from(PEER_IMAGE.bytesBase64, "base64")

  it("terminal over JSON-RPC, as printed: the image saved under --save-dir, the report's URL shown, the data whole", async () => {
    const saveDir = Path.join(home.parent, `peer-${name.replace(/\W+/g, "-")}`)
    const { stdout } = await relay(["message", "send", "--url", peer().baseUrl, "--binding", "jsonrpc", "--save-dir", saveDir, message])
    expect(stdout).toContain(`saved ${PEER_IMAGE.name} (image/png, ${image.length} bytes) → ${Path.join(saveDir, PEER_IMAGE.name)}`)
    expect(Fs.readdirSync(saveDir)).toEqual([PEER_IMAGE.name])
    expect(Fs.readFileSync(Path.join(saveDir, PEER_IMAGE.name)).equals(image)).toBe(true)
    expect(stdout).toContain(reportUrl())
    expect(stdout).toContain(JSON.stringify(PEER_DATA, null, 2))
  })

  it("terminal over HTTP+JSON, --json --download: the image and the fetched report saved under the state directory, the data, in order", async () => {
    const result = await relayJson(["message", "send", "--url", peer().baseUrl, "--binding", "rest", "--download", message])
    const [png, report, figures] = result["parts"] as Array<Json>
    expect(png).toMatchObject({ kind: "file", media_type: "image/png", size: image.length, sha256: sha256(image), artifact_id: "chart" })
    expect(savedFile(png).equals(image)).toBe(true)
    expect(Path.dirname(String(png!["path"]))).toBe(taskFolder(result["task_id"]))
    // No name expected: the 0.3 proto of HTTP+JSON has none (the file is saved under one from its media type).
    expect(report).toMatchObject({ kind: "file", media_type: REPORT.mimeType, url: reportUrl(), artifact_id: "report" })
    expect(savedFile(report).equals(REPORT.bytes)).toBe(true)
    expect(figures).toMatchObject({ kind: "data", data: PEER_DATA, artifact_id: "figures" })
  })

  it("MCP stdio: the image as image content and saved, the report as a link to its URL, the data in structuredContent.parts and as JSON text", async () => {
    const result = await callTool({ agent_url: peer().baseUrl, message })
    expect(result.content).toContainEqual({ type: "image", data: PEER_IMAGE.bytesBase64, mimeType: "image/png" })
    const [png, report, figures] = (result.structuredContent as Json)["parts"] as Array<Json>
    expect(png).toMatchObject({ kind: "file", media_type: "image/png", sha256: sha256(image) })
    expect(savedFile(png).equals(image)).toBe(true)
    expect(report).toMatchObject({ kind: "file", url: reportUrl(), media_type: REPORT.mimeType })
    expect(result.content).toContainEqual(expect.objectContaining({ type: "resource_link", uri: reportUrl() }))
    expect(figures).toMatchObject({ kind: "data", data: PEER_DATA })
    expect(result.content).toContainEqual({ type: "text", text: expect.stringContaining(JSON.stringify(PEER_DATA)) })
  })
})
