/**
 * The cards an AI catalog names are fetched only within the class of address the catalog itself
 * was fetched from (src/programs/agentCards.ts mayFetch, Target.cardReach): the catalog's class is
 * that of the connection it came over, not of a later lookup, and every connection that fetches a
 * card is judged as it is made, whatever the card host's DNS answered before.
 */
import * as NodeContext from "@effect/platform-node/NodeContext"
import * as NodeHttpClient from "@effect/platform-node/NodeHttpClient"
import { Effect, Layer } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { discoverAgents } from "../../src/programs/agentCards.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import type { ResolveHost } from "../../src/services/connectGuard.js"
import * as SessionStore from "../../src/services/SessionStore.js"
import { agentUrlOf } from "../helpers/agentUrl.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { A2A_CARD_TYPE, aiCatalog, CATALOG_PATH, type JsonSite, startJsonSite } from "../peers/catalogSite.js"

let catalog: JsonSite
let cards: JsonSite

beforeAll(async () => {
  cards = await startJsonSite((base) => ({ "/card.json": { ...validV1Card(base), name: "Loopback Agent" } }))
  catalog = await startJsonSite(() => ({
    [CATALOG_PATH]: aiCatalog([{ identifier: "urn:air:test:a2a:near", type: A2A_CARD_TYPE, url: `${cards.baseUrl}/card.json` }])
  }))
})
afterAll(async () => {
  await Promise.allSettled([catalog?.close(), cards?.close()])
})

/** The program's services over a client (and a catalog check) that resolve names with `resolve`. */
const withResolver = (resolve: ResolveHost) => {
  const addressing = Layer.succeed(A2aClient.HostAddressing, { resolve, cardHostClasses: A2aClient.classesOfHost(resolve) })
  const client = A2aClient.layer.pipe(Layer.provide(NodeHttpClient.layerUndici), Layer.provide(addressing))
  return Layer.mergeAll(client, addressing, SessionStore.layerMemory, NodeContext.layer)
}

describe("the cards an AI catalog names", () => {
  it("are judged by the class of the catalog's connection: a later answer of its DNS does not change it", async () => {
    // catalog.test answers 127.0.0.1 (where the catalog is) to the first lookup, a public address to
    // every later one. (The attack runs the other way round, as in A2aClientInterfaceHosts.test.ts:
    // what this shows is that no later lookup makes the catalog's class.)
    const lookups: Array<string> = []
    const resolve: ResolveHost = async (hostname) => {
      if (hostname !== "catalog.test") throw Object.assign(new Error(`${hostname} is not in this test's DNS`), { code: "ENOTFOUND" })
      lookups.push(hostname)
      return [{ address: lookups.length === 1 ? "127.0.0.1" : "93.184.216.34", family: 4 }]
    }
    const url = agentUrlOf(`http://catalog.test:${new URL(catalog.baseUrl).port}/`)
    const found = await Effect.runPromise(discoverAgents({ url, add: false }).pipe(Effect.provide(withResolver(resolve))))
    // A loopback catalog names a loopback card: fetched (a public catalog's class would have refused it).
    expect(found.agents).toEqual([expect.objectContaining({ card_name: "Loopback Agent", error: null })])
    expect(cards.requests).toEqual(["GET /card.json"])
    expect(lookups).toEqual(["catalog.test"])
  })
})

describe("fetchCardJson with a card reach", () => {
  const fetchWithin = (cardReach: ReadonlyArray<"public" | "loopback">) =>
    Effect.runPromise(
      Effect.flatMap(A2aClient.A2aClient, (a2a) =>
        Effect.either(a2a.fetchCardJson({
          agentUrl: agentUrlOf(cards.baseUrl),
          cardUrl: `${cards.baseUrl}/card.json`,
          cardReach,
          timeout: "5 seconds"
        }))).pipe(Effect.provide(A2aClient.layer.pipe(Layer.provide(NodeHttpClient.layerUndici))))
    )

  it("connects only to addresses of those classes, judged as each connection is made", async () => {
    const before = cards.requests.length
    const refused = await fetchWithin(["public"])
    expect(refused._tag).toBe("Left")
    expect(refused._tag === "Left" && refused.left.message).toMatch(
      /127\.0\.0\.1 is a loopback address, and the catalog's host is public: relay fetches a catalog's cards only on its catalog's class of address/
    )
    expect(cards.requests.length).toBe(before)
    const fetched = await fetchWithin(["loopback"])
    expect(fetched._tag === "Right" && fetched.right.reach).toEqual(["loopback"])
    expect(cards.requests.length).toBe(before + 1)
  })
})
