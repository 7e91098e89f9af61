// The interface rule of the client (issue 27, items 6 and 7): a card's interface on another origin is
// used only within the card's class of address, judged at connect time, unless the user allows the
// host; an interface URL with a query or fragment is not used at all. "A public card" is modelled
// by the card-host classes the client is given (every server here is on loopback).
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import type { LookupAddress } from "node:dns"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { AddressClass } from "../../src/domain/ipAddresses.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import { type ResolveHost, systemResolve } from "../../src/services/connectGuard.js"
import { type CardServer, startCardServer } from "../helpers/a2aPrograms.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { INTERNAL_SECRET, type InternalService, startInternalService } from "../peers/internalService.js"
import { sendRequest } from "./a2aClientHarness.js"

let internal: InternalService
const cards: Array<CardServer> = []
/** Host names the fake DNS knows, and every name it was asked for. */
const DNS: Record<string, ReadonlyArray<LookupAddress>> = {
  "internal.test": [{ address: "127.0.0.1", family: 4 }],
  "metadata.test": [{ address: "169.254.169.254", family: 4 }],
  "imds6.test": [{ address: "fd00:ec2::254", family: 6 }],
  "sneaky.test": [{ address: "127.0.0.1", family: 4 }, { address: "169.254.169.254", family: 4 }],
  "zero.test": [{ address: "0.0.0.0", family: 4 }]
}
const asked: Array<string> = []
const fakeResolve: ResolveHost = async (hostname, options) => {
  asked.push(hostname)
  return DNS[hostname] ?? systemResolve(hostname, options)
}

beforeAll(async () => {
  internal = await startInternalService()
})
afterAll(async () => {
  await Promise.all(cards.map((card) => card.close()))
  await internal.close()
})

/** A card at its own loopback origin whose only interface is `interfaceUrl` (JSON-RPC 1.0). */
const cardPointingAt = async (interfaceUrl: (cardBase: string) => string, binding = "JSONRPC") => {
  const card = await startCardServer((base: string) => ({
    ...validV1Card(base),
    supportedInterfaces: [{ url: interfaceUrl(base), protocolBinding: binding, protocolVersion: "1.0" }]
  }))
  cards.push(card)
  return card
}

/** Sends one message through a fresh client that sees the card's host as `cardClasses` (default: as it resolves). */
const send = (
  cardBase: string,
  options: { readonly cardClasses?: ReadonlyArray<AddressClass>; readonly allow?: ReadonlyArray<string> } = {}
) => {
  const addressing: A2aClient.Addressing = {
    resolve: fakeResolve,
    cardHostClasses: options.cardClasses === undefined ? A2aClient.classesOfHost(fakeResolve) : async () => options.cardClasses!
  }
  const client = A2aClient.layer.pipe(
    Layer.provide(NodeHttpClient.layerUndici),
    Layer.provide(Layer.succeed(A2aClient.HostAddressing, addressing))
  )
  const target: A2aClient.Target = { agentUrl: agentUrlOf(cardBase), timeout: "5 seconds", allowInterfaceHosts: options.allow }
  return Effect.runPromise(
    Effect.flatMap(A2aClient.A2aClient, (a2a) => Effect.either(a2a.send(target, sendRequest("hello")))).pipe(Effect.provide(client))
  )
}

const internalPort = () => new URL(internal.baseUrl).port

describe("a public card whose interface points inward", () => {
  it("at a loopback address: refused before anything is sent, naming the host and the fix", async () => {
    const card = await cardPointingAt(() => `${internal.baseUrl}/rpc`)
    const before = internal.requestCount()
    const result = await send(card.baseUrl, { cardClasses: ["public"] })
    expect(result._tag).toBe("Left")
    const error = result._tag === "Left" ? result.left : undefined
    expect(error).toMatchObject({ _tag: "InterfaceHostRefused", code: "interface_host_refused" })
    expect(error?.message).toContain("127.0.0.1 is a loopback address")
    expect(error?.message).toContain("public")
    expect(internal.requestCount()).toBe(before)
  })

  it("at a name that resolves to loopback: judged on the address the connection resolves, nothing sent", async () => {
    const card = await cardPointingAt(() => `http://internal.test:${internalPort()}/rpc`)
    const before = internal.requestCount()
    const result = await send(card.baseUrl, { cardClasses: ["public"] })
    expect(result._tag === "Left" && result.left._tag).toBe("InterfaceHostRefused")
    expect(result._tag === "Left" && result.left.message).toMatch(/internal\.test is a loopback address.*\(it resolves to 127\.0\.0\.1\)/)
    expect(asked).toContain("internal.test")
    expect(internal.requestCount()).toBe(before)
  })

  it.each(
    [
      ["metadata.test", "public"],
      ["metadata.test", "private"],
      ["metadata.test", "link-local"],
      ["imds6.test", "private"],
      ["sneaky.test", "loopback"]
    ] as const
  )("at %s (a metadata address) from a %s card: refused", async (host, cardClass) => {
    const card = await cardPointingAt(() => `http://${host}:${internalPort()}/rpc`)
    const result = await send(card.baseUrl, { cardClasses: [cardClass] })
    expect(result._tag === "Left" && result.left._tag).toBe("InterfaceHostRefused")
    expect(result._tag === "Left" && result.left.message).toContain("is a metadata address")
  })

  it("--allow-interface-host vouches for the host (in any spelling): the request goes there", async () => {
    const card = await cardPointingAt(() => `${internal.baseUrl}/rpc`)
    const before = internal.requestCount()
    const result = await send(card.baseUrl, { cardClasses: ["public"], allow: ["0x7f.1"] })
    expect(internal.requestCount()).toBe(before + 1)
    // Its answer is not A2A, which the error says without quoting it.
    expect(result._tag === "Left" && result.left._tag).toBe("InvalidResponse")
  })
})

describe("a private card whose interface points at the unspecified address", () => {
  it.each(["0.0.0.0", "0", "[::ffff:0.0.0.0]", "zero.test"])(
    "%s connects to this machine: refused as loopback, nothing sent",
    async (host) => {
      const card = await cardPointingAt(() => `http://${host}:${internalPort()}/rpc`)
      const before = internal.requestCount()
      const result = await send(card.baseUrl, { cardClasses: ["private"] })
      expect(result._tag === "Left" && result.left._tag).toBe("InterfaceHostRefused")
      expect(result._tag === "Left" && result.left.message).toContain("is a loopback address")
      expect(internal.requestCount()).toBe(before)
    }
  )
})

describe("cards whose interfaces stay within their class", () => {
  it("a loopback card may use another loopback origin, by address or by name", async () => {
    for (const url of [`${internal.baseUrl}/rpc`, `http://internal.test:${internalPort()}/rpc`]) {
      const card = await cardPointingAt(() => url)
      const before = internal.requestCount()
      await send(card.baseUrl)
      expect(internal.requestCount(), url).toBe(before + 1)
    }
  })

  it("an interface on the card's own origin is never held to a class", async () => {
    const card = await cardPointingAt((base) => `${base}/rpc`)
    const result = await send(card.baseUrl, { cardClasses: ["public"] })
    // The card server answers 404 to the message: it was sent there.
    expect(result._tag === "Left" && result.left._tag).toBe("HttpError")
    expect(card.requests).toContain("POST /rpc")
  })
})

describe("the card's host, judged by the addresses its card was fetched from", () => {
  /**
   * DNS re-pointed under relay: card.test answers 127.0.0.1 (where its card server listens) to the
   * first lookup, and a public address to every later one. Nothing connects to that one: the
   * interface is on 127.0.0.1, and a rule that looked card.test up again would only judge it.
   * (The attack runs the other way, public first and 127.0.0.1 after; but a card fetched over a
   * connection to a public address cannot be served from loopback, so the test turns it round:
   * what it shows either way is that no later lookup makes the card's class.)
   */
  const repointed = () => {
    const lookups: Array<string> = []
    const resolve: ResolveHost = async (hostname) => {
      if (hostname !== "card.test") throw Object.assign(new Error(`${hostname} is not in this test's DNS`), { code: "ENOTFOUND" })
      lookups.push(hostname)
      return [{ address: lookups.length === 1 ? "127.0.0.1" : "93.184.216.34", family: 4 }]
    }
    return { resolve, lookups }
  }

  it("a later answer neither holds nor frees its interfaces and downloads: the card's connection's address does", async () => {
    const card = await cardPointingAt(() => `${internal.baseUrl}/rpc`)
    const dns = repointed()
    const client = A2aClient.layer.pipe(
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provide(
        Layer.succeed(A2aClient.HostAddressing, { resolve: dns.resolve, cardHostClasses: A2aClient.classesOfHost(dns.resolve) })
      )
    )
    const target: A2aClient.Target = { agentUrl: agentUrlOf(`http://card.test:${new URL(card.baseUrl).port}/`), timeout: "5 seconds" }
    const before = internal.requestCount()
    const [sent, file] = await Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) =>
        Effect.all([
          Effect.either(a2a.send(target, sendRequest("hello"))),
          Effect.either(a2a.download(target, `${internal.baseUrl}/files/x`))
        ])).pipe(Effect.provide(client))
    )
    expect(card.requests).toEqual(["GET /.well-known/agent-card.json"])
    // The card came from 127.0.0.1, so its host is loopback: the loopback interface was used (its
    // answer is not A2A) and the agent's file on another loopback origin fetched.
    expect(sent._tag === "Left" && sent.left._tag).toBe("InvalidResponse")
    expect(file._tag === "Right" ? Buffer.from(file.right).toString() : file.left._tag).toContain(INTERNAL_SECRET)
    expect(internal.requestCount()).toBe(before + 2)
    // card.test was looked up once, by the connection that fetched the card.
    expect(dns.lookups).toEqual(["card.test"])
  })
})

describe("a card host whose DNS answers several classes of address", () => {
  it("has the class of the address its card came from, not of every address the lookup listed", async () => {
    // mixed.test lists 127.0.0.1 (where both servers listen, so nothing connects further) and the
    // metadata address: a public host could list 127.0.0.1 after its own address the same way.
    const resolve: ResolveHost = async (hostname) => {
      if (hostname !== "card.test" && hostname !== "mixed.test") {
        throw Object.assign(new Error(`${hostname} is not in this test's DNS`), { code: "ENOTFOUND" })
      }
      return [{ address: "127.0.0.1", family: 4 }, { address: "169.254.169.254", family: 4 }]
    }
    const card = await cardPointingAt(() => `http://mixed.test:${internalPort()}/rpc`)
    const client = A2aClient.layer.pipe(
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provide(Layer.succeed(A2aClient.HostAddressing, { resolve, cardHostClasses: A2aClient.classesOfHost(resolve) }))
    )
    const target: A2aClient.Target = { agentUrl: agentUrlOf(`http://card.test:${new URL(card.baseUrl).port}/`), timeout: "5 seconds" }
    const before = internal.requestCount()
    const sent = await Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) => Effect.either(a2a.send(target, sendRequest("hello")))).pipe(Effect.provide(client))
    )
    expect(card.requests).toEqual(["GET /.well-known/agent-card.json"])
    // The card came over a connection to 127.0.0.1: its host is loopback, and mixed.test reaches metadata too.
    expect(sent._tag === "Left" && sent.left).toMatchObject({ _tag: "InterfaceHostRefused" })
    expect(sent._tag === "Left" && sent.left.message).toMatch(/metadata address, and the card's own host is loopback/)
    expect(internal.requestCount()).toBe(before)
  })
})

describe("a cached card, once its host's record has made room for others", () => {
  it("keeps the class of the addresses it was fetched from: no later lookup judges its host", async () => {
    const card = await cardPointingAt(() => `${internal.baseUrl}/rpc`)
    const port = new URL(card.baseUrl).port
    // card.test answers 127.0.0.1 first and a public address after (turned round, as above); the
    // other.N.test names, all 127.0.0.1, fill the client's record of card hosts past its bound.
    const lookups: Array<string> = []
    const resolve: ResolveHost = async (hostname) => {
      lookups.push(hostname)
      if (/^other\.\d+\.test$/.test(hostname)) return [{ address: "127.0.0.1", family: 4 }]
      if (hostname !== "card.test") throw Object.assign(new Error(`${hostname} is not in this test's DNS`), { code: "ENOTFOUND" })
      return [{ address: lookups.filter((name) => name === "card.test").length === 1 ? "127.0.0.1" : "93.184.216.34", family: 4 }]
    }
    const client = A2aClient.layer.pipe(
      Layer.provide(NodeHttpClient.layerUndici),
      Layer.provide(Layer.succeed(A2aClient.HostAddressing, { resolve, cardHostClasses: A2aClient.classesOfHost(resolve) }))
    )
    const target: A2aClient.Target = { agentUrl: agentUrlOf(`http://card.test:${port}/`), timeout: "5 seconds" }
    const before = internal.requestCount()
    const [first, second] = await Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) =>
        Effect.gen(function*() {
          const first = yield* Effect.either(a2a.send(target, sendRequest("hello")))
          for (let index = 0; index < 101; index++) {
            yield* a2a.fetchCardJson({ agentUrl: agentUrlOf(`http://other.${index}.test:${port}/`), timeout: "5 seconds" })
          }
          // The card comes from the cache (its max-age has not run out): no fetch, no lookup.
          const second = yield* Effect.either(a2a.send(target, sendRequest("hello")))
          return [first, second] as const
        })).pipe(Effect.provide(client))
    )
    expect(card.requests.filter((request) => request === "GET /.well-known/agent-card.json")).toHaveLength(102)
    expect(first._tag === "Left" && first.left._tag).toBe("InvalidResponse")
    expect(second._tag === "Left" && second.left._tag).toBe("InvalidResponse")
    expect(internal.requestCount()).toBe(before + 2)
    expect(lookups.filter((name) => name === "card.test")).toEqual(["card.test"])
  })
})

describe("an interface URL with a query or a fragment", () => {
  it.each(["/iam?x=", "/iam?", "/iam#frag"])("%s is not used: no request is built from it", async (suffix) => {
    for (const binding of ["JSONRPC", "HTTP+JSON"]) {
      const card = await cardPointingAt((base) => `${base}${suffix}`, binding)
      const result = await send(card.baseUrl)
      expect(result._tag === "Left" && result.left._tag, `${binding} ${suffix}`).toBe("NoUsableInterface")
      expect(card.requests, `${binding} ${suffix}`).toEqual(["GET /.well-known/agent-card.json"])
    }
  })
})
