/**
 * Plumbing for tests of the A2A programs and commands: the real client and an in-memory store
 * as one layer, a static card server, a way to start a task on a peer without waiting for it,
 * and readers for what a peer recorded.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { randomUUID } from "node:crypto"
import * as Fs from "node:fs"
import http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import * as A2aClient from "../../src/services/A2aClient.js"
import * as ReceivedFiles from "../../src/services/ReceivedFiles.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { closeServer, listenOnLoopback, type RecordedRequest, sendJson } from "../peers/httpUtil.js"

/** The real A2aClient over undici (fresh card cache per provide). */
export const RealClient = A2aClient.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))

/** Where programs save answers' files in a test: a temporary state directory, removed with the layer. */
export const ScratchFiles = Layer.unwrapScoped(
  Effect.acquireRelease(
    Effect.sync(() => Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-files-"))),
    (dir) => Effect.sync(() => Fs.rmSync(dir, { recursive: true, force: true }))
  ).pipe(Effect.map(ReceivedFiles.layerTest))
)

/** What a program needs: the real client, an in-memory session store, the platform (files), and where answers' files go. */
export const ProgramLayer = Layer.mergeAll(RealClient, SessionStore.layerMemory, NodeContext.layer, ScratchFiles)

export const headerOf = (request: RecordedRequest, name: string): string | undefined => {
  const value = request.headers[name.toLowerCase()]
  return Array.isArray(value) ? value.join(", ") : value
}

/** The credential-bearing headers of each request (lower-case names; only those present). */
export const credentialHeadersOf = (requests: ReadonlyArray<RecordedRequest>, names: ReadonlyArray<string>) =>
  requests.map((request) =>
    Object.fromEntries(names.flatMap((name) => {
      const value = headerOf(request, name)
      return value === undefined ? [] : [[name.toLowerCase(), value]]
    }))
  )

/** The JSON-RPC method of a recorded request, if it was one. */
export const rpcMethodOf = (request: RecordedRequest): string | undefined => {
  const body = request.body
  return typeof body === "object" && body !== null && "method" in body && typeof body.method === "string" ? body.method : undefined
}

/** The `params.message` of a recorded JSON-RPC SendMessage / SendStreamingMessage request. */
export const sentMessageOf = (request: RecordedRequest): { contextId?: string; taskId?: string } | undefined => {
  const body = request.body as { params?: { message?: { contextId?: string; taskId?: string } } } | undefined
  return body?.params?.message
}

/** The messages a peer received (SendMessage or SendStreamingMessage), in arrival order. */
export const sentMessages = (requests: ReadonlyArray<RecordedRequest>) =>
  requests.filter((request) => /^SendMessage|^SendStreamingMessage|^message\//.test(rpcMethodOf(request) ?? ""))
    .map((request) => sentMessageOf(request) ?? {})

/**
 * Starts a task on a v1.0 SDK peer over JSON-RPC with `returnImmediately`, so the test holds the
 * id of a task that is still running (e.g. `behaviour:slow-cancellable …`).
 */
export const startTaskOn = async (jsonRpcUrl: string, text: string): Promise<{ taskId: string; contextId: string }> => {
  const response = await fetch(jsonRpcUrl, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "SendMessage",
      params: {
        message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] },
        configuration: { returnImmediately: true }
      }
    }),
    signal: AbortSignal.timeout(5000)
  })
  const json = (await response.json()) as { result?: { task?: { id: string; contextId: string } } }
  const task = json.result?.task
  if (task === undefined) throw new Error(`the peer started no task: ${JSON.stringify(json)}`)
  return { taskId: task.id, contextId: task.contextId }
}

export interface CardServer {
  readonly baseUrl: string
  readonly requests: Array<string>
  close(): Promise<void>
}

/** Serves `card` (JSON, may depend on the base URL) at /.well-known/agent-card.json; 404 elsewhere. */
export const startCardServer = async (card: unknown | ((baseUrl: string) => unknown)): Promise<CardServer> => {
  const requests: Array<string> = []
  let body: unknown = undefined
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    if (req.method === "GET" && req.url === "/.well-known/agent-card.json" && body !== undefined) sendJson(res, 200, body)
    else sendJson(res, 404, { error: "not found" })
  })
  const baseUrl = await listenOnLoopback(server)
  body = typeof card === "function" ? (card as (baseUrl: string) => unknown)(baseUrl) : card
  return { baseUrl, requests, close: () => closeServer(server) }
}

/** A loopback URL where nothing listens: a port bound and released again. */
export const closedPortUrl = async (): Promise<string> => {
  const server = http.createServer()
  const url = await listenOnLoopback(server)
  await closeServer(server)
  return url
}

/** Polls `check` every 25 ms until it holds; rejects after `timeoutMs`. */
export const waitUntil = async (what: string, check: () => boolean, timeoutMs = 5000): Promise<void> => {
  const deadline = Date.now() + timeoutMs
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 25))
  }
}
