/**
 * A request naming a protocol version relay does not serve (src/mcp/servedVersions.ts): the
 * UnsupportedProtocolVersion error (-32022) lists every version served on that transport, the
 * 2026-07-28 era and the 2025-11-25 one (basic/versioning: `{ supported, requested }`), on stdio
 * and on streamable HTTP. In process, over relay's transports and the SDK's entries.
 */
import { McpServer } from "@modelcontextprotocol/server"
import { serveStdio } from "@modelcontextprotocol/server/stdio"
import { Effect, Exit, Scope } from "effect"
import { once } from "node:events"
import { PassThrough } from "node:stream"
import { afterAll, describe, expect, it } from "vitest"
import { serveHttp } from "../../src/mcp/httpTransports.js"
import { BoundedStdioTransport } from "../../src/mcp/stdio.js"

const makeServer = () => new McpServer({ name: "versions-test", version: "1.0.0" })

/** tools/list as a 2026-07-28 client would send it, naming a version nobody serves. */
const REQUESTED = "2099-01-01"
const listing = {
  jsonrpc: "2.0",
  id: 7,
  method: "tools/list",
  params: { _meta: { "io.modelcontextprotocol/protocolVersion": REQUESTED, "io.modelcontextprotocol/clientCapabilities": {} } }
}

const expectBothEras = (answer: unknown) => {
  expect(answer).toMatchObject({ id: 7, error: { code: -32022, data: { requested: REQUESTED } } })
  const supported = (answer as { error: { data: { supported: ReadonlyArray<string> } } }).error.data.supported
  expect(supported.slice(0, 2)).toEqual(["2026-07-28", "2025-11-25"])
  expect(new Set(supported).size).toBe(supported.length)
}

const scope = Effect.runSync(Scope.make())
afterAll(() => Effect.runPromise(Scope.close(scope, Exit.void)))

describe("the versions a -32022 error names", () => {
  it("stdio: 2026-07-28 and 2025-11-25", async () => {
    const stdin = new PassThrough()
    const stdout = new PassThrough()
    const transport = new BoundedStdioTransport({ input: stdin, output: stdout, log: () => {} })
    const handle = serveStdio(() => makeServer(), { legacy: "serve", transport })
    try {
      const line = once(stdout, "data")
      stdin.write(`${JSON.stringify(listing)}\n`)
      const [chunk] = await line
      expectBothEras(JSON.parse(String(chunk)))
    } finally {
      await handle.close()
    }
  })

  it("streamable HTTP: 2026-07-28 and 2025-11-25, with status 400", async () => {
    const url = await Effect.runPromise(
      serveHttp({ kind: "streamable-http", host: "127.0.0.1", port: 0 }, () => makeServer()).pipe(Scope.extend(scope))
    )
    const response = await fetch(url, {
      method: "POST",
      headers: {
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
        "mcp-protocol-version": REQUESTED,
        "mcp-method": "tools/list"
      },
      body: JSON.stringify(listing)
    })
    expect(response.status).toBe(400)
    expectBothEras(await response.json())
  })
})
