/**
 * `relay mcp`'s HTTP transports: streamable HTTP at /mcp, and the older HTTP+SSE transport at /sse
 * with posts to /messages (transports.ts loads this module when one is asked for). They bind
 * 127.0.0.1 by default and check Host (DNS rebinding) and Origin on every request. Each session
 * goes at its client's pace, and one whose client stops reading is closed (backpressure.ts).
 *
 * /mcp serves both protocol eras. A request carrying the 2026-07-28 `_meta` is served on its own
 * by the SDK's modern entry (no session; GET and DELETE are 405 there), with a server made for it;
 * everything else is the 2025-11-25 era, served as before: sessions opened by `initialize`,
 * resumable streams, requests from the server to the client. Both run on the v2 SDK's server.
 */
import { hostHeaderValidation } from "@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js"
import { SSEServerTransport } from "@modelcontextprotocol/sdk/server/sse.js"
import type { McpServer, Transport } from "@modelcontextprotocol/server"
import {
  createMcpHandler,
  isInitializeRequest,
  isLegacyRequest,
  type JSONRPCMessage,
  type McpHttpHandler,
  WebStandardStreamableHTTPServerTransport
} from "@modelcontextprotocol/server"
import { Cause, Effect, Runtime } from "effect"
import express, { type Request, type Response } from "express"
import { randomUUID } from "node:crypto"
import type { Server, ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { hostname, networkInterfaces } from "node:os"
import { isAllInterfaces, isLoopbackHost } from "../a2a/hosts.js"
import { ListenFailed } from "../domain/errors.js"
import { MAX_MCP_HTTP_SESSIONS, MAX_MCP_MESSAGE_BYTES, MCP_CLIENT_PACE } from "../domain/limits.js"
import { type Backpressure, makeBackpressure, type Outbox, type PaceLimits } from "./backpressure.js"
import { makeEventStore } from "./eventStore.js"
import { jsonBody, jsonRpcError, jsonRpcFailures, messageGate, notServed, originCheck } from "./httpGuards.js"
import type { ServerFactory } from "./server.js"
import { makeSessionTable, type SessionTable } from "./sessionTable.js"
import { sendWebResponse, webRequestOf } from "./webExchange.js"

const LOOPBACK_NAMES = ["localhost", "127.0.0.1", "[::1]"]

const bracketIpv6 = (host: string) => (host.includes(":") && !host.startsWith("[") ? `[${host}]` : host)

/**
 * A host as a request's Host header names it once parsed (the SDK's check compares parsed names):
 * lower case, an IPv6 literal bracketed and in its shortest form. `--host MyBox` or `fe80::0001`
 * would otherwise refuse every client that names the host as given.
 */
const asHostHeaderNames = (host: string) => {
  try {
    return new URL(`http://${bracketIpv6(host)}`).hostname
  } catch {
    return bracketIpv6(host).toLowerCase()
  }
}

/**
 * Host names a request may carry (DNS-rebinding protection): loopback names, plus the bound
 * host; on a wildcard bind, this machine's name and interface addresses (what other machines
 * can use to reach it).
 */
export const allowedHostNames = (host: string): ReadonlyArray<string> => {
  if (isLoopbackHost(host)) return [...new Set([...LOOPBACK_NAMES, asHostHeaderNames(host)])]
  if (!isAllInterfaces(host)) return [...LOOPBACK_NAMES, asHostHeaderNames(host)]
  const addresses = Object.values(networkInterfaces()).flatMap((entries) =>
    (entries ?? []).map((entry) => asHostHeaderNames(entry.address))
  )
  return [...new Set([...LOOPBACK_NAMES, hostname().toLowerCase(), ...addresses])]
}

/** How long a client waits before reconnecting to a lost stream (the SSE `retry` field). */
const SSE_RETRY_MS = 1000

/** A session's pace, and where a client cut off is logged. */
interface SessionPace extends PaceLimits {
  readonly log: (line: string) => void
}

/**
 * A session's backpressure (backpressure.ts), and `route`, which puts it between a connected
 * transport and its server: requests reach the server at the client's pace, and an answer sent
 * frees its request's place. A client cut off is logged (with its session id once it has one)
 * and its session closed.
 */
const pacedSession = (limits: SessionPace, sessionId: () => string | undefined, close: () => Promise<void>) => {
  let toServer: Transport["onmessage"]
  const pace = makeBackpressure(limits, {
    deliver: (message, extra) => toServer?.(message, extra),
    cutOff: (reason) => {
      limits.log(`MCP session ${sessionId() ?? "(initializing)"}: ${reason.message}`)
      void close()
    }
  })
  const route = (transport: Transport) => {
    toServer = transport.onmessage
    transport.onmessage = (message, extra) => pace.receive(message, extra)
    const send = transport.send.bind(transport)
    transport.send = (message, options) => {
      const sending = send(message, options)
      pace.sent(message)
      return sending
    }
  }
  return { pace, route }
}

/**
 * Closes a session's server and drops what its client left unread: closing alone ends the
 * streams gracefully, and a client that never reads would keep their buffers.
 */
const closeDropping = async (server: McpServer, pace: Backpressure) => {
  pace.stop()
  await server.close().catch(() => undefined)
  pace.dropAll()
}

/**
 * Every place is held by a session being opened (a burst of new clients) or closed: refused rather
 * than queued, so a flood holds no server; those places are soon filled or given back.
 */
const noPlace = (res: Response, sessions: { readonly max: number }) =>
  jsonRpcError(
    res,
    503,
    `Busy: each of the ${sessions.max} MCP session places is held by a session being opened or closed; try again shortly`
  )

interface StreamableSession {
  readonly transport: WebStandardStreamableHTTPServerTransport
  readonly pace: Backpressure
}

const serveStreamable = async (session: StreamableSession, req: Request, res: Response) =>
  sendWebResponse(await session.transport.handleRequest(webRequestOf(req), { parsedBody: req.body }), res, session.pace)

/**
 * A 2026-07-28 exchange: one request, answered by the SDK's modern entry at the client's pace
 * (its own backpressure: a client that stops reading the answer is cut off, its response ended).
 */
const serveModern = async (modern: McpHttpHandler, req: Request, res: Response, limits: SessionPace) => {
  const pace = makeBackpressure(limits, { deliver: () => undefined, cutOff: () => void res.destroy() })
  try {
    await sendWebResponse(await modern.fetch(webRequestOf(req), { parsedBody: req.body }), res, pace)
  } finally {
    pace.stop()
  }
}

/**
 * Streamable HTTP: 2026-07-28 requests go to the modern entry; 2025-11-25 sessions get a
 * transport per Mcp-Session-Id, made on `initialize`. GET and DELETE without a session have no
 * session to act on: the modern entry answers them 405 (2026-07-28 has neither). 2026 requests
 * have no session to bound: at most as many are served at once as the open sessions may have in
 * flight (`maxModern`); past it a request gets 503 and may come again.
 */
const mountStreamableHttp = (
  app: App,
  makeServer: ServerFactory,
  modern: McpHttpHandler,
  sessions: SessionTable<StreamableSession>,
  limits: SessionPace & { readonly maxModern: number }
) => {
  let modernInFlight = 0
  const serveBoundedModern = async (req: Request, res: Response) => {
    if (modernInFlight >= limits.maxModern) {
      return jsonRpcError(res, 503, `Busy: ${limits.maxModern} requests are being served; try again shortly`)
    }
    modernInFlight += 1
    try {
      await serveModern(modern, req, res, limits)
    } finally {
      modernInFlight -= 1
    }
  }
  app.all("/mcp", async (req: Request, res: Response) => {
    const sessionId = req.headers["mcp-session-id"]
    const existing = typeof sessionId === "string" ? sessions.use(sessionId) : undefined
    if (existing) return serveStreamable(existing, req, res)
    if (sessionId !== undefined) return jsonRpcError(res, 404, "Unknown or expired session; initialize again")
    if (req.method !== "POST" || !(await isLegacyRequest(webRequestOf(req), req.body))) return serveBoundedModern(req, res)
    if (!isInitializeRequest(req.body)) {
      return jsonRpcError(res, 400, "No session: start with an initialize request (2025-11-25), or send the 2026-07-28 _meta")
    }
    const opened = await sessions.withPlace(async (place) => {
      // A client gone while room was made would get a session nobody can use, holding a place.
      if (res.closed) return
      const server = makeServer("legacy")
      const close = () => closeDropping(server, pace)
      const transport: WebStandardStreamableHTTPServerTransport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: randomUUID,
        // Resumable streams: event ids, and a `retry` hint for reconnecting clients.
        eventStore: makeEventStore(),
        retryInterval: SSE_RETRY_MS,
        onsessioninitialized: (id) => place.fill(id, { transport: { transport, pace }, close }),
        onsessionclosed: (id) => sessions.release(id)
      })
      const { pace, route } = pacedSession(limits, () => transport.sessionId, close)
      transport.onclose = () => {
        if (transport.sessionId !== undefined) sessions.release(transport.sessionId)
      }
      try {
        await server.connect(transport)
        route(transport)
        await serveStreamable({ transport, pace }, req, res)
      } finally {
        // An initialize the SDK refused (or a failure) opened no session: nothing will close its server.
        if (!place.filled()) await close()
      }
    })
    if (!opened) noPlace(res, sessions)
  })
  return sessions
}

/**
 * The older SSE transport, its messages sent at the client's pace: the SDK's own `send` writes
 * each one to the event stream at once, read or not; this one queues it in the session's outbox,
 * framed as the SDK frames it.
 */
class PacedSse extends SSEServerTransport {
  private readonly events: Outbox

  constructor(endpoint: string, res: ServerResponse, pace: Backpressure) {
    super(endpoint, res)
    this.events = pace.outbox(res)
  }

  override send(message: JSONRPCMessage): Promise<void> {
    this.events.send(Buffer.from(`event: message\ndata: ${JSON.stringify(message)}\n\n`))
    return Promise.resolve()
  }
}

/** The older HTTP+SSE transport: GET /sse opens a session, POST /messages?sessionId=… feeds it. */
const mountSse = (app: App, makeServer: ServerFactory, sessions: SessionTable<PacedSse>, limits: SessionPace) => {
  app.get("/sse", async (_req: Request, res: Response) => {
    const opened = await sessions.withPlace(async (place) => {
      // A client gone while room was made: its close came before the listener below, so its
      // session would stay open, holding a place, until evicted.
      if (res.closed) return
      const server = makeServer("legacy")
      const close = () => closeDropping(server, pace)
      const { pace, route } = pacedSession(limits, () => transport.sessionId, close)
      const transport = new PacedSse("/messages", res, pace)
      place.fill(transport.sessionId, { transport, close })
      res.on("close", () => sessions.release(transport.sessionId))
      await server.connect(transport)
      route(transport)
    })
    if (!opened) noPlace(res, sessions)
  })
  app.post("/messages", async (req: Request, res: Response) => {
    const sessionId = typeof req.query["sessionId"] === "string" ? req.query["sessionId"] : ""
    const transport = sessions.use(sessionId)
    if (transport === undefined) return jsonRpcError(res, 404, "Unknown session; open /sse first")
    await transport.handlePostMessage(req, res, req.body)
  })
  return sessions
}

export interface HttpOptions {
  readonly kind: "sse" | "streamable-http"
  readonly host: string
  readonly port: number
  /** Browser origins allowed besides the one this server serves (as parseOrigin returns them). */
  readonly allowedOrigins?: ReadonlyArray<string> | undefined
  /** Most sessions open at once (default MAX_MCP_HTTP_SESSIONS). */
  readonly maxSessions?: number | undefined
  /** Each session's pace (default MCP_CLIENT_PACE). */
  readonly pace?: PaceLimits | undefined
}

type App = ReturnType<typeof express>

/** Host, then Origin, before any body is read; then the body, within the same limit as stdio. */
const guardedApp = (options: HttpOptions, log: (line: string, error?: unknown) => void): App => {
  const allowedHosts = [...allowedHostNames(options.host)]
  const app = express()
  app.use(hostHeaderValidation(allowedHosts))
  app.use(originCheck(allowedHosts, options.allowedOrigins ?? []))
  app.use(jsonBody(MAX_MCP_MESSAGE_BYTES))
  app.use(messageGate(log))
  return app
}

/** Serves MCP over HTTP until interrupted; yields the bound address (port 0 picks a free one). */
export const serveHttp = (options: HttpOptions, makeServer: ServerFactory) =>
  Effect.gen(function*() {
    const runtime = yield* Effect.runtime<never>()
    const log = (line: string, error?: unknown) =>
      Runtime.runSync(runtime)(error === undefined ? Effect.logWarning(line) : Effect.logError(line, Cause.die(error)))
    const app = guardedApp(options, log)
    const maxSessions = options.maxSessions ?? MAX_MCP_HTTP_SESSIONS
    const evicted = (id: string) => log(`MCP session ${id} closed to make room for a new one (at most ${maxSessions} open)`)
    const pace: SessionPace = { ...(options.pace ?? MCP_CLIENT_PACE), log }
    const modern = yield* Effect.acquireRelease(
      Effect.sync(() =>
        createMcpHandler(({ era }) => makeServer(era), {
          legacy: "reject",
          maxRequestBodySize: MAX_MCP_MESSAGE_BYTES,
          onerror: (error) => log(`MCP request refused: ${error.message}`)
        })
      ),
      (handler) => Effect.promise(() => handler.close())
    )
    const sessions = options.kind === "streamable-http"
      ? mountStreamableHttp(app, makeServer, modern, makeSessionTable<StreamableSession>(maxSessions, evicted), {
        ...pace,
        maxModern: maxSessions * pace.maxInFlight
      })
      : mountSse(app, makeServer, makeSessionTable<PacedSse>(maxSessions, evicted), pace)
    app.get("/health", (_req: Request, res: Response) => void res.json({ status: "ok" }))
    app.use(notServed(options.kind === "streamable-http" ? "/mcp" : "/sse and /messages"))
    app.use(jsonRpcFailures(MAX_MCP_MESSAGE_BYTES, log))

    const server = yield* Effect.acquireRelease(
      Effect.async<Server, ListenFailed>((resume) => {
        const listener = app.listen(options.port, options.host)
        listener.once("listening", () => resume(Effect.succeed(listener)))
        listener.once("error", (error) =>
          resume(Effect.fail(new ListenFailed({ host: options.host, port: options.port, reason: error.message }))))
      }),
      (listener) =>
        Effect.promise(async () => {
          await sessions.closeAll()
          listener.closeAllConnections()
          await new Promise<void>((resolve) =>
            listener.close(() => resolve())
          )
        })
    )
    const address = server.address() as AddressInfo
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address
    return `http://${host}:${address.port}${options.kind === "streamable-http" ? "/mcp" : "/sse"}`
  })
