// A2aClient.download (`--download`): a file an answer gives by URL is fetched under the rules of
// every request to the agent. "A public agent" is modelled by the classes the client is told the
// agent's host reaches (every server here is on loopback), as in A2aClientInterfaceHosts.test.ts.
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AddressClass } from "../../src/domain/ipAddresses.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import { type ResolveHost, systemResolve } from "../../src/services/connectGuard.js"
import { type CardServer, startCardServer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { INTERNAL_SECRET, type InternalService, startInternalService } from "../peers/internalService.js"
import { sendRequest, startStub, type Stub } from "./a2aClientHarness.js"

let internal: InternalService
let agent: Stub
let card: CardServer | undefined

beforeAll(async () => {
  internal = await startInternalService()
  agent = await startStub({
    "GET /files/a.txt": () => ({ body: "agent file" }),
    "GET /files/big.bin": () => ({ body: "x".repeat(4096) }),
    "GET /files/moved": () => ({ status: 302, headers: { location: `${internal.baseUrl}/x` } })
  })
})
afterAll(async () => {
  await Promise.all([internal?.close(), agent?.close(), card?.close()])
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
    expect(result._tag === "Left" ? result.left.message : "").toMatch(/loopback address, and the agent's host is public: relay fetches/)
    expect(result._tag === "Left" ? result.left.message : "").not.toMatch(/card/)
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

describe("the agent's host, when its card is not fetched from it", () => {
  /**
   * agent.test answers 127.0.0.1 (where the agent listens) to its first `loopbackLookups` lookups and
   * a public address to every later one. As in A2aClientInterfaceHosts.test.ts the attack is turned
   * round (public first, 127.0.0.1 after, cannot be served on loopback): what it shows is that no
   * lookup made at download time gives the agent's host its class.
   */
  const repointed = (loopbackLookups = 1) => {
    const lookups: Array<string> = []
    const resolve: ResolveHost = async (hostname) => {
      if (hostname !== "agent.test") throw Object.assign(new Error(`${hostname} is not in this test's DNS`), { code: "ENOTFOUND" })
      lookups.push(hostname)
      return [{ address: lookups.length <= loopbackLookups ? "127.0.0.1" : "93.184.216.34", family: 4 }]
    }
    return { resolve, lookups }
  }

  const clientWith = (resolve: ResolveHost) =>
    A2aClient.layer.pipe(
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provide(Layer.succeed(A2aClient.HostAddressing, { resolve, cardHostClasses: A2aClient.classesOfHost(resolve) }))
    )

  const agentPort = () => new URL(agent.baseUrl).port

  /** A send to the agent, then the download of a file on the internal service's origin, each as it ended. */
  const sendThenDownload = (target: A2aClient.Target, resolve: ResolveHost) =>
    Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) =>
        Effect.gen(function*() {
          const sent = yield* Effect.either(a2a.send(target, sendRequest("hello")))
          const file = yield* Effect.either(a2a.download(target, `${internal.baseUrl}/files/x`))
          return [sent, file] as const
        })).pipe(Effect.provide(clientWith(resolve)))
    )

  it("has the class of the address relay's own calls to it connected at (--card-url on another host)", async () => {
    card = await startCardServer((base: string) => ({
      ...validV1Card(base),
      supportedInterfaces: [{ url: `http://agent.test:${agentPort()}/rpc`, protocolBinding: "JSONRPC", protocolVersion: "1.0" }]
    }))
    const dns = repointed()
    const target: A2aClient.Target = {
      agentUrl: agentUrlOf(`http://agent.test:${agentPort()}/`),
      cardUrl: `${card.baseUrl}/.well-known/agent-card.json`,
      timeout: "5 seconds"
    }
    const before = internal.requestCount()
    const calls = agent.requests.length
    const [sent, file] = await sendThenDownload(target, dns.resolve)
    // The call reached the agent over a connection to 127.0.0.1 (its answer is not A2A): the
    // agent's host is loopback, and its file on another loopback origin is fetched.
    expect(sent._tag === "Left" && sent.left._tag).not.toBe("InterfaceHostRefused")
    expect(agent.requests.slice(calls).map((request) => `${request.method} ${request.url}`)).toEqual(["POST /rpc"])
    expect(file._tag === "Right" ? Buffer.from(file.right).toString() : file.left.message).toContain(INTERNAL_SECRET)
    expect(internal.requestCount()).toBe(before + 1)
    // agent.test was looked up once, by the connection of the call.
    expect(dns.lookups).toEqual(["agent.test"])
  })

  it("has the class of the address its discovery connected to, though it served no card (binding and version pinned)", async () => {
    // 127.0.0.1 to the discovery's lookup and the call's, a public address after.
    const dns = repointed(2)
    const target: A2aClient.Target = {
      agentUrl: agentUrlOf(`http://agent.test:${agentPort()}/`),
      binding: "JSONRPC",
      protocol: "1.0",
      timeout: "5 seconds"
    }
    const before = internal.requestCount()
    const [sent, file] = await sendThenDownload(target, dns.resolve)
    expect(sent._tag === "Left" && sent.left._tag).not.toBe("CardNotFound")
    expect(file._tag === "Right" ? Buffer.from(file.right).toString() : file.left.message).toContain(INTERNAL_SECRET)
    expect(internal.requestCount()).toBe(before + 1)
    // Nothing was looked up for the download.
    expect(dns.lookups.length).toBeLessThanOrEqual(2)
  })

  it("is refused a file on another origin when relay has not connected to it, and is not looked up", async () => {
    const dns = repointed()
    const target: A2aClient.Target = { agentUrl: agentUrlOf(`http://agent.test:${agentPort()}/`), timeout: "5 seconds" }
    const before = internal.requestCount()
    const file = await Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) => Effect.either(a2a.download(target, `${internal.baseUrl}/files/x`))).pipe(
        Effect.provide(clientWith(dns.resolve))
      )
    )
    expect(file._tag === "Left" ? file.left : undefined).toMatchObject({ code: "interface_host_refused" })
    expect(file._tag === "Left" ? file.left.message : "").toContain("agent.test")
    expect(internal.requestCount()).toBe(before)
    expect(dns.lookups).toEqual([])
  })
})
