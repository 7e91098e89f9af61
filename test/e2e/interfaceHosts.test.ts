/**
 * Hostile cards at every door (issue 27, items 6 and 7): an "agent" whose card routes its interfaces
 * to a stand-in internal service that counts requests and answers a secret, and a card whose
 * interface URL carries a query string. relay check (text, --json, --junit, MCP check_agent) sends
 * nothing to another origin than the card's unless --allow-interface-host names the host, and quotes
 * at most a short escaped excerpt of what a non-A2A service answered; the client doors keep a card's
 * interfaces within its class of address (a public card is modelled by the class the client is
 * given); an interface URL with a query is refused as card data.
 */
import type { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { Layer, ManagedRuntime } from "effect"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { CheckReport } from "../../src/domain/conformance.js"
import { ANSWER_EXCERPT_CHARS } from "../../src/domain/terminalText.js"
import * as A2aClient from "../../src/services/A2aClient.js"
import { type CardServer, startCardServer } from "../helpers/a2aPrograms.js"
import { runRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { validV1Card } from "../helpers/sampleCards.js"
import { tempHome } from "../helpers/stateHome.js"
import { INTERNAL_SECRET, type InternalService, startInternalService } from "../peers/internalService.js"

const home = tempHome()
let internal: InternalService
/** A card at its own origin whose interfaces (both bindings, both generations) all point at the internal service. */
let pointingInward: CardServer
/** A card whose interfaces are on its own origin, but with a query string. */
let withQuery: CardServer
let runtime: AppRuntime
let mcp: Client
let publicRuntime: AppRuntime
let publicMcp: Client

const interfacesAt = (url: string) =>
  (["JSONRPC", "HTTP+JSON"] as const).flatMap((protocolBinding) =>
    (["1.0", "0.3"] as const).map((protocolVersion) => ({ url, protocolBinding, protocolVersion }))
  )

beforeAll(async () => {
  internal = await startInternalService()
  pointingInward = await startCardServer((base: string) => ({
    ...validV1Card(base),
    capabilities: { streaming: true, pushNotifications: true },
    supportedInterfaces: interfacesAt(`${internal.baseUrl}/a2a`)
  }))
  withQuery = await startCardServer((base: string) => ({ ...validV1Card(base), supportedInterfaces: interfacesAt(`${base}/iam?x=`) }))
  runtime = ManagedRuntime.make(appLayer(home.stateDir))
  mcp = await connectTools(contextFor(runtime))
  // The same MCP server, but its client sees every card host as public.
  const publicCards: A2aClient.Addressing = { ...A2aClient.HostAddressing.defaultValue(), cardHostClasses: async () => ["public"] }
  publicRuntime = ManagedRuntime.make(appLayer(home.stateDir).pipe(Layer.provide(Layer.succeed(A2aClient.HostAddressing, publicCards))))
  publicMcp = await connectTools(contextFor(publicRuntime))
})

afterAll(async () => {
  await Promise.allSettled([mcp?.close(), publicMcp?.close()])
  await Promise.allSettled([runtime?.dispose(), publicRuntime?.dispose()])
  await Promise.allSettled([internal?.close(), pointingInward?.close(), withQuery?.close()])
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir, timeoutMs: 60_000 })
const internalHost = () => new URL(internal.baseUrl).host

let checkRequestsToInternal = 0
let outputsScanned = 0
let secretsEchoed = 0

/** An output of a door that sent nothing there must hold neither the secret nor the reply's raw escape sequences. */
const expectNothingEchoed = (what: string, text: string) => {
  outputsScanned++
  secretsEchoed += text.split(INTERNAL_SECRET).length - 1
  expect(text, what).not.toContain(INTERNAL_SECRET)
  expect(text, what).not.toContain("\u001b")
}

describe("relay check against a card whose interfaces point at another origin", () => {
  it("sends it nothing, fails card.interface-hosts naming the host, and echoes nothing: text, --json, --junit", async () => {
    const junit = Path.join(home.parent, "inward.xml")
    const before = internal.requestCount()
    const text = await relay(["check", pointingInward.baseUrl, "--junit", junit])
    const json = await relay(["check", pointingInward.baseUrl, "--json"])
    checkRequestsToInternal += internal.requestCount() - before
    expect(internal.requestCount()).toBe(before)

    expect(text.code, text.stderr).toBe(1)
    expect(text.stdout).toMatch(
      new RegExp(`✘ card\\.interface-hosts .*\\n\\s+the card routes requests to ${internalHost()}, another origin`)
    )
    expect(text.stdout).toContain(`skipped: nothing sent: ${internal.baseUrl}/a2a is on ${internalHost()}`)
    const report = JSON.parse(json.stdout) as CheckReport
    expect(json.code).toBe(1)
    expect(report.results.find((r) => r.id === "card.interface-hosts")).toMatchObject({ status: "failed", severity: "must" })
    // The card group was read; every interface check was skipped with the reason, none sent.
    expect(report.results.filter((r) => r.interface !== null).every((r) => r.status === "skipped")).toBe(true)
    expect(report.tasks_created).toEqual([])
    const xml = Fs.readFileSync(junit, "utf8")
    expect(xml).toMatch(
      /<testcase classname="relay\.check\.card" name="card\.interface-hosts: [^"]*"[^>]*>\n\s+<failure message="the card routes requests to/
    )
    for (const [what, output] of [["text", text.stdout + text.stderr], ["--json", json.stdout + json.stderr], ["--junit", xml]] as const) {
      expectNothingEchoed(what, output)
    }
  }, 120_000)

  it("even with --only on interface groups, the refusal is reported as a failure, not left out", async () => {
    const result = await relay(["check", pointingInward.baseUrl, "--only", "transport", "--json"])
    const report = JSON.parse(result.stdout) as CheckReport
    expect(result.code).toBe(1)
    expect(report.results.filter((r) => r.status === "failed").map((r) => r.id)).toEqual(["card.interface-hosts"])
  }, 60_000)

  it("MCP check_agent: the same refusal, nothing sent, nothing echoed", async () => {
    const before = internal.requestCount()
    const result = await callTool(mcp, "check_agent", { agent_url: pointingInward.baseUrl }, { timeoutMs: 60_000 })
    checkRequestsToInternal += internal.requestCount() - before
    expect(internal.requestCount()).toBe(before)
    expect(textOf(result)).toMatch(/✘ card\.interface-hosts: the card routes requests to/)
    expectNothingEchoed("MCP", JSON.stringify(result))
  }, 60_000)

  it("with --allow-interface-host the checks run there, and quote at most a short escaped excerpt of its answers", async () => {
    const junit = Path.join(home.parent, "allowed.xml")
    const before = internal.requestCount()
    const host = new URL(internal.baseUrl).hostname
    const json = await relay([
      "check",
      pointingInward.baseUrl,
      "--allow-interface-host",
      host,
      "--json",
      "--junit",
      junit,
      "--only",
      "card,transport,messaging"
    ])
    const text = await relay(["check", pointingInward.baseUrl, "--allow-interface-host", host, "--only", "transport"])
    expect(internal.requestCount()).toBeGreaterThan(before)
    const report = JSON.parse(json.stdout) as CheckReport
    expect(report.results.find((r) => r.id === "card.interface-hosts")?.status).toBe("passed")
    const quoted = report.results.filter((r) => r.detail.includes("owned"))
    expect(quoted.length).toBeGreaterThan(0)
    // Escaped in the report itself, not only where a terminal shows it.
    for (const result of report.results) expect(result.detail, result.id).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/)
    const tooLong = new RegExp(`x{${ANSWER_EXCERPT_CHARS}}`)
    for (const output of [json.stdout, text.stdout, Fs.readFileSync(junit, "utf8")]) {
      expect(output).not.toMatch(tooLong)
      expect(output).not.toContain("\u001b")
      expect(output).not.toContain("\u0007")
    }
    // The escape sequences the service sent are shown, not obeyed.
    expect(text.stdout).toContain("\\u001b]0;owned")
  }, 120_000)

  it("relay mcp --allow-interface-host: check_agent checks there too, and its report quotes as little", async () => {
    const allowing = await connectTools(contextFor(runtime, { allowInterfaceHosts: [new URL(internal.baseUrl).hostname] }))
    try {
      const before = internal.requestCount()
      const result = await callTool(allowing, "check_agent", { agent_url: pointingInward.baseUrl, only: ["transport"], protocol: "1.0" }, {
        timeoutMs: 60_000
      })
      expect(internal.requestCount()).toBeGreaterThan(before)
      const report = result.structuredContent as unknown as CheckReport
      expect(report.results.find((r) => r.id === "card.interface-hosts")).toBeUndefined()
      for (const output of [textOf(result), ...report.results.map((r) => r.detail)]) {
        expect(output).not.toMatch(new RegExp(`x{${ANSWER_EXCERPT_CHARS}}`))
        expect(output).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/)
      }
      expect(textOf(result)).toContain("\\u001b]0;owned")
    } finally {
      await allowing.close()
    }
  }, 60_000)
})

describe("the client doors", () => {
  it("MCP send_message with a public card pointing inward: refused with its code and the user's remedy, nothing sent", async () => {
    const before = internal.requestCount()
    const result = await callTool(publicMcp, "send_message", { agent_url: pointingInward.baseUrl, message: "hello" })
    expect(internal.requestCount()).toBe(before)
    expect(result.isError).toBe(true)
    expect(textOf(result)).toContain("interface_host_refused")
    expect(textOf(result)).toContain("127.0.0.1 is a loopback address")
    expectNothingEchoed("MCP send_message", JSON.stringify(result))
  })

  it("relay message send from a loopback card to another loopback origin: the same class, used", async () => {
    const before = internal.requestCount()
    const result = await relay(["message", "send", "--url", pointingInward.baseUrl, "hello"])
    expect(internal.requestCount()).toBe(before + 1)
    // Its answer is not A2A: said so, never shown.
    expect(result.code).toBe(1)
    expectNothingEchoed("message send", result.stdout + result.stderr)
  })

  it("--allow-interface-host takes a host only", async () => {
    for (const bad of ["127.0.0.1:8080", "http://127.0.0.1", "a/b"]) {
      const result = await relay(["message", "send", "--url", pointingInward.baseUrl, "--allow-interface-host", bad, "hello"])
      expect(result.code, bad).toBe(2)
      expect(result.stderr, bad).toContain("--allow-interface-host takes a host name or an IP address")
    }
  })
})

describe("an interface URL with a query string", () => {
  it("is refused as card data at every door: no request is built from it", async () => {
    const send = await relay(["message", "send", "--url", withQuery.baseUrl, "hello"])
    expect(send.code).toBe(1)
    expect(send.stderr).toMatch(/offers no interface relay can use/)
    const validation = await relay(["card", "validate", withQuery.baseUrl, "--json"])
    const issues = (JSON.parse(validation.stdout) as { issues: Array<{ code: string }> }).issues.map((issue) => issue.code)
    expect(issues).toContain("interface.url_query")
    const tool = await callTool(mcp, "send_message", { agent_url: withQuery.baseUrl, message: "hello" })
    expect(tool.isError).toBe(true)
    expect(textOf(tool)).toContain("no_usable_interface")
    const check = await relay(["check", withQuery.baseUrl, "--json"])
    expect((JSON.parse(check.stdout) as CheckReport).results.find((r) => r.id === "card.valid")?.detail).toContain("interface.url_query")
    const built = withQuery.requests.filter((request) => !request.startsWith("GET /.well-known/"))
    expect(built).toEqual([])
    expect(secretsEchoed).toBe(0)
    reportFigures("card interfaces pointing elsewhere", {
      "requests from relay check to the internal service": checkRequestsToInternal,
      "outputs scanned": outputsScanned,
      "secrets echoed": secretsEchoed,
      "requests built from a query-string interface": built.length
    })
  }, 60_000)
})
