/**
 * An agent's files and data through the MCP tools, with the SDK client (#29 item 6): what the
 * assistant gets as content beside the structured result, which the client validates against the
 * tool's outputSchema (connectTools lists the tools first, so every structuredContent here is
 * checked).
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js"
import { ManagedRuntime } from "effect"
import { createHash } from "node:crypto"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { webhookBaseUrl } from "../../src/servers/webhook/WebhookServer.js"
import { IMAGE_PNG_BASE64 } from "../../src/services/modelProviders/mock.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import { type AppRuntime, appLayer, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
let runtime: AppRuntime
let client: Client

beforeAll(async () => {
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  client = await connectTools(contextFor(runtime))
})

afterAll(async () => {
  await client?.close()
  await runtime?.dispose()
  home.cleanup()
})

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

const succeeded = (result: CallToolResult) => {
  expect(result.isError ?? false, textOf(result)).toBe(false)
  return result
}

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
      body: JSON.stringify({ artifactUpdate: { taskId: "t-push-links", contextId: "c", artifact: { artifactId: "a", parts }, lastChunk: true } }),
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
