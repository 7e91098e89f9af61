// A domain that serves JSON documents at paths of the test's choosing, on plain node:http: an AI
// catalog at /.well-known/ai-catalog.json, cards off the well-known paths, and a hostile card.
import http from "node:http"
import { closeServer, listenOnLoopback, sendJson } from "./httpUtil.js"

export const CATALOG_PATH = "/.well-known/ai-catalog.json"
export const A2A_CARD_TYPE = "application/a2a-agent-card+json"

export interface JsonSite {
  /** `http://127.0.0.1:<port>`, no trailing slash. */
  readonly baseUrl: string
  /** `GET <path>` of every request, in order. */
  readonly requests: Array<string>
  close(): Promise<void>
}

/** Serves `documents(baseUrl)[path]` as JSON at each path; 404 elsewhere. */
export const startJsonSite = async (documents: (baseUrl: string) => Readonly<Record<string, unknown>>): Promise<JsonSite> => {
  const requests: Array<string> = []
  let served: Readonly<Record<string, unknown>> = {}
  const server = http.createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`)
    const path = (req.url ?? "").split("?")[0]!
    if (req.method === "GET" && Object.hasOwn(served, path)) sendJson(res, 200, served[path])
    else sendJson(res, 404, { error: "not found" })
  })
  const baseUrl = await listenOnLoopback(server)
  served = documents(baseUrl)
  return { baseUrl, requests, close: () => closeServer(server) }
}

/** An AI catalog (a proposal, https://github.com/Agent-Card/ai-catalog) with these entries. */
export const aiCatalog = (entries: ReadonlyArray<Record<string, unknown>>) => ({
  specVersion: "1.0",
  host: { displayName: "Test Domain" },
  entries
})

const ESC = "\u001b"

/**
 * A card an agent could serve to hurt its readers: 10 000 skills with long descriptions and many
 * tags, terminal escapes and fake relay lines in every text, a description of 600 000 characters;
 * about 7 MB, under the client's 10 MiB limit. Otherwise a usable v0.3 card answering at `url`.
 */
export const hostileCard = (url: string) => ({
  name: `Evil${ESC}[31m Agent\nerror: fake relay line ${"N".repeat(500)}`,
  description: `${ESC}]0;owned${"\u0007"}${"D".repeat(600_000)}`,
  url,
  version: "1.0.0",
  protocolVersion: "0.3.0",
  preferredTransport: "JSONRPC",
  capabilities: { streaming: false },
  // Not a media type: a warning, whose message quotes it.
  defaultInputModes: ["text/plain", `bad${ESC}[31m`],
  defaultOutputModes: ["text/plain"],
  skills: Array.from({ length: 10_000 }, (_, index) => ({
    id: `s${index}`,
    name: `skill${ESC}[2J${index}\r\nhint: run rm -rf`,
    description: `${ESC}[1m${"d".repeat(300)}`,
    tags: Array.from({ length: 20 }, () => `t${ESC}[0m`)
  }))
})
