/**
 * The MCP tools in process, for tests: an SDK Client over InMemoryTransport talking to
 * makeMcpServer, whose programs run with the real layers on a temp state directory; or, for the
 * 2026-07-28 era, the v2 SDK's client pinned to it, talking to the SDK's modern entry in process.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Client as ClientV2, StreamableHTTPClientTransport } from "@modelcontextprotocol/client"
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { InMemoryTransport } from "@modelcontextprotocol/sdk/inMemory.js"
import type { CallToolResult, Progress } from "@modelcontextprotocol/sdk/types.js"
import { createMcpHandler } from "@modelcontextprotocol/server"
import { ConfigProvider, Duration, Layer, ManagedRuntime } from "effect"
import { makeMcpServer, type ProtocolEra } from "../../src/mcp/server.js"
import type { ToolContext } from "../../src/mcp/tools.js"
import { webhookServerLayer } from "../../src/servers/webhook/WebhookServer.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import * as ReceivedFiles from "../../src/services/ReceivedFiles.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import * as StateDir from "../../src/services/StateDir.js"

/** The real layers on a state directory; relay's webhook receiver is included on a free port. */
export const appLayer = (stateDir: string) =>
  webhookServerLayer({ host: "127.0.0.1", port: 0 }).pipe(
    Layer.provideMerge(Layer.mergeAll(SessionStore.layer, NotificationLog.layer(), A2aClient.layer, ReceivedFiles.layer)),
    Layer.provideMerge(NodeHttpClient.layerUndici),
    Layer.provideMerge(StateDir.layer),
    Layer.provideMerge(NodeContext.layer),
    Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", stateDir]]))))
  )

export type AppRuntime = ManagedRuntime.ManagedRuntime<Layer.Layer.Success<ReturnType<typeof appLayer>>, unknown>

export const contextFor = (run: AppRuntime, overrides: Partial<ToolContext> = {}): ToolContext => ({
  run: (effect, signal) => run.runPromise(effect, { signal }),
  defaultWait: Duration.seconds(20),
  heartbeat: Duration.millis(100),
  loadCheckRun: () => import("../../src/servers/webhook/checkReceiver.js").then((module) => module.checkRunLayer),
  ...overrides
})

/**
 * A client (by default one declaring no capabilities) connected in memory to a fresh server;
 * listTools primes the client's output validators.
 */
export const connectTools = async (
  context: ToolContext,
  connected: Client = new Client({ name: "tools-test", version: "1.0.0" })
): Promise<Client> => {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
  const server = makeMcpServer(context)
  await server.connect(serverSide)
  await connected.connect(clientSide)
  await connected.listTools()
  return connected
}

/**
 * A 2026-07-28 client in process: the v2 client pinned to that revision, its HTTP requests served
 * by the SDK's modern entry (createMcpHandler) without a socket, as the SDK's migration notes show.
 * It answers to the v1 client's calls that tests make (listTools, callTool, close).
 */
export const connectModernTools = async (context: ToolContext): Promise<Client> => {
  const handler = createMcpHandler(({ era }) => makeMcpServer(context, era), { legacy: "reject" })
  const client = new ClientV2({ name: "tools-test", version: "1.0.0" }, { versionNegotiation: { mode: { pin: "2026-07-28" } } })
  await client.connect(
    new StreamableHTTPClientTransport(new URL("http://relay.test/mcp"), { fetch: (url, init) => handler.fetch(new Request(url, init)) })
  )
  await client.listTools()
  const asV1 = {
    listTools: () => client.listTools(),
    callTool: (params: { name: string; arguments?: Record<string, unknown> }, _schema: unknown, options?: object) =>
      client.callTool(params, options),
    close: () => client.close().finally(() => handler.close())
  }
  return asV1 as unknown as Client
}

/** A client of `era` connected in process to fresh servers (connectTools, connectModernTools). */
export const connectToolsOf = (era: ProtocolEra, context: ToolContext): Promise<Client> =>
  era === "legacy" ? connectTools(context) : connectModernTools(context)

export interface CallOptions {
  readonly onprogress?: (progress: Progress) => void
  readonly signal?: AbortSignal
  readonly timeoutMs?: number
}

export const callTool = async (
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  options: CallOptions = {}
): Promise<CallToolResult> => {
  const result = await client.callTool({ name, arguments: args }, undefined, {
    timeout: options.timeoutMs ?? 15_000,
    ...(options.onprogress === undefined ? {} : { onprogress: options.onprogress }),
    ...(options.signal === undefined ? {} : { signal: options.signal })
  })
  // callTool's declared result also admits the legacy `toolResult` shape; this server never sends it.
  return result as CallToolResult
}

export const textOf = (result: CallToolResult) => result.content.flatMap((block) => (block.type === "text" ? [block.text] : [])).join("\n")

/** A tool call that must succeed: its structured content. */
export const toolOk = async (client: Client, name: string, args: Record<string, unknown>) => {
  const result = await callTool(client, name, args)
  if (result.isError === true) throw new Error(`${name} failed: ${textOf(result)}`)
  return result.structuredContent as Record<string, unknown>
}
