// A2aClient.download (`--download`): a file an answer gives by URL is fetched under the rules of
// every request to the agent. "A public agent" is modelled by the classes the client is told the
// agent's host reaches (every server here is on loopback), as in A2aClientInterfaceHosts.test.ts.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AddressClass } from "../../src/domain/ipAddresses.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import { systemResolve } from "../../src/services/connectGuard.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { INTERNAL_SECRET, type InternalService, startInternalService } from "../peers/internalService.js"
import { startStub, type Stub } from "./a2aClientHarness.js"

let internal: InternalService
let agent: Stub

beforeAll(async () => {
  internal = await startInternalService()
  agent = await startStub({
    "GET /files/a.txt": () => ({ body: "agent file" }),
    "GET /files/big.bin": () => ({ body: "x".repeat(4096) }),
    "GET /files/moved": () => ({ status: 302, headers: { location: `${internal.baseUrl}/x` } })
  })
})
afterAll(async () => {
  await Promise.all([internal?.close(), agent?.close()])
})

const download = (
  url: string,
  options: { readonly agentClasses?: ReadonlyArray<AddressClass>; readonly target?: Partial<A2aClient.Target> } = {}
) => {
  const addressing: A2aClient.Addressing = {
    resolve: systemResolve,
    cardHostClasses: options.agentClasses === undefined ? A2aClient.classesOfHost(systemResolve) : async () => options.agentClasses!
  }
  const client = A2aClient.layer.pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(Layer.succeed(A2aClient.HostAddressing, addressing))
  )
  const target: A2aClient.Target = { agentUrl: agentUrlOf(agent.baseUrl), timeout: "5 seconds", ...options.target }
  return Effect.runPromise(
    Effect.flatMap(A2aClient.A2aClient, (a2a) => Effect.either(a2a.download(target, url))).pipe(Effect.provide(client))
  )
}

const text = (result: Awaited<ReturnType<typeof download>>) => (result._tag === "Right" ? Buffer.from(result.right).toString() : undefined)

describe("A2aClient.download", () => {
  it("fetches a file on the agent's origin with the caller's credentials", async () => {
    const before = agent.requests.length
    const result = await download(`${agent.baseUrl}/files/a.txt`, { target: { credentials: { kind: "bearer", token: "t0ken" } } })
    expect(text(result)).toBe("agent file")
    expect(agent.requests.slice(before).map((request) => request.headers["authorization"])).toEqual(["Bearer t0ken"])
  })

  it("refuses a URL on another origin that reaches another class of address than the agent's, sending nothing", async () => {
    const before = internal.requestCount()
    const result = await download(`${internal.baseUrl}/files/x`, { agentClasses: ["public"] })
    expect(result._tag).toBe("Left")
    expect(result._tag === "Left" ? result.left : undefined).toMatchObject({ code: "interface_host_refused" })
    expect(internal.requestCount()).toBe(before)
  })

  it("fetches from another origin of the agent's class, without the credentials; a host the user allowed, wherever it points", async () => {
    const withheld = await download(`${internal.baseUrl}/files/x`, { target: { credentials: { kind: "bearer", token: "t0ken" } } })
    expect(text(withheld)).toContain(INTERNAL_SECRET)
    const allowed = await download(`${internal.baseUrl}/files/x`, {
      agentClasses: ["public"],
      target: { allowInterfaceHosts: ["127.0.0.1"] }
    })
    expect(text(allowed)).toContain(INTERNAL_SECRET)
  })

  it("stops at --max-response-bytes, follows no redirect, and takes only http and https", async () => {
    const big = await download(`${agent.baseUrl}/files/big.bin`, { target: { maxResponseBytes: 1024 } })
    expect(big._tag === "Left" ? big.left : undefined).toMatchObject({ code: "response_too_large" })
    const before = internal.requestCount()
    const moved = await download(`${agent.baseUrl}/files/moved`)
    expect(moved._tag === "Left" ? moved.left : undefined).toMatchObject({ _tag: "HttpError", status: 302 })
    expect(internal.requestCount()).toBe(before)
    for (const url of ["file:///etc/passwd", "data:text/plain,hi", "not a url"]) {
      const refused = await download(url)
      expect(refused._tag === "Left" ? refused.left.message : undefined).toContain("not http or https")
    }
  })
})
