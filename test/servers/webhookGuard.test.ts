// The push-webhook SSRF guard (issue 18.5): refused where the agent server accepts a push config
// (JSON-RPC, REST, inline in SendMessage, v0.3) and where relay posts to a webhook, whatever the
// spelling of the address; host names are judged on the addresses they resolve to when connecting.
import { Effect, Logger, ManagedRuntime, Stream } from "effect"
import { randomUUID } from "node:crypto"
import type { LookupAddress } from "node:dns"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type * as V1 from "../../src/a2a/v1.js"
import * as PushSender from "../../src/services/PushSender.js"
import { pendingDeliveries } from "../../src/services/TaskStorage.js"
import { LOOPBACK_SPELLINGS, METADATA_SPELLINGS, OTHER_PRIVATE_HOSTS } from "../helpers/addresses.js"
import { closeServer, listenOnLoopback } from "../peers/httpUtil.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"
import { type AgentHandle, eventually, startAgent } from "./agentHarness.js"

type Json = Record<string, any>

const PRIVATE_URLS = [...METADATA_SPELLINGS, ...OTHER_PRIVATE_HOSTS].map((host) => `http://${host}/latest/meta-data`)
const DEFAULT_POLICY = { allowLoopback: true, allowPrivate: false }

const post = async (url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; json: Json }> => {
  const response = await fetch(url, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0", ...headers },
    body: JSON.stringify(body)
  })
  return { status: response.status, json: (await response.json()) as Json }
}

const rpc = (base: string, method: string, params: unknown, headers: Record<string, string> = {}) =>
  post(`${base}/`, { jsonrpc: "2.0", id: 1, method, params }, headers)

const userMessage = (text: string) => ({ messageId: randomUUID(), role: "ROLE_USER", parts: [{ text }] })

describe("webhookUrlProblem", () => {
  it("refuses the metadata address and every other non-public host in every spelling", () => {
    for (const url of PRIVATE_URLS) expect(PushSender.webhookUrlProblem(url, DEFAULT_POLICY), url).toContain("not allowed")
  })

  it("refuses loopback spellings only when loopback is switched off, and allows private hosts when asked", () => {
    for (const host of LOOPBACK_SPELLINGS) {
      expect(PushSender.webhookUrlProblem(`http://${host}:9/x`, DEFAULT_POLICY), host).toBeUndefined()
      expect(PushSender.webhookUrlProblem(`http://${host}:9/x`, { allowLoopback: false, allowPrivate: true }), host).toContain("loopback")
    }
    for (const url of PRIVATE_URLS) {
      expect(PushSender.webhookUrlProblem(url, { allowLoopback: true, allowPrivate: true }), url).toBeUndefined()
    }
  })

  it("lets public literals and host names through (names are judged when resolved)", () => {
    for (
      const url of [
        "https://93.184.216.34/x",
        "http://[2606:4700:4700::1111]/x",
        "http://[::ffff:1.1.1.1]/x",
        "https://hooks.example.com/x"
      ]
    ) {
      expect(PushSender.webhookUrlProblem(url, DEFAULT_POLICY), url).toBeUndefined()
    }
  })
})

describe("the agent server refuses private webhooks wherever it accepts a push config", () => {
  let agent: AgentHandle
  let taskId: string
  beforeAll(async () => {
    agent = await startAgent()
    const sent = await rpc(agent.baseUrl, "SendMessage", { message: userMessage("guarded") })
    taskId = sent.json["result"]["task"]["id"]
  })
  afterAll(() => agent.close())

  it("JSON-RPC CreateTaskPushNotificationConfig answers -32602 for every spelling", async () => {
    for (const url of PRIVATE_URLS) {
      const answer = await rpc(agent.baseUrl, "CreateTaskPushNotificationConfig", { taskId, url })
      expect(answer.json["error"]?.["code"], url).toBe(-32602)
      expect(answer.json["error"]["message"]).toContain("refused")
    }
  })

  it("REST POST /tasks/{id}/pushNotificationConfigs answers 400 for every spelling", async () => {
    for (const url of PRIVATE_URLS) {
      const answer = await post(`${agent.baseUrl}/tasks/${taskId}/pushNotificationConfigs`, { taskId, url })
      expect(answer.status, url).toBe(400)
    }
  })

  it("an inline push config in SendMessage is refused before a task is created", async () => {
    for (const url of PRIVATE_URLS) {
      const answer = await rpc(agent.baseUrl, "SendMessage", {
        message: userMessage("inline"),
        configuration: { taskPushNotificationConfig: { url } }
      })
      expect(answer.json["error"]?.["code"], url).toBe(-32602)
    }
  })

  it("v0.3 tasks/pushNotificationConfig/set is refused too", async () => {
    for (const url of PRIVATE_URLS) {
      const answer = await rpc(agent.baseUrl, "tasks/pushNotificationConfig/set", { taskId, pushNotificationConfig: { url } }, {
        "a2a-version": "0.3"
      })
      expect(answer.json["error"]?.["code"], url).toBe(-32602)
    }
  })

  it("still accepts a loopback webhook in another spelling", async () => {
    const answer = await rpc(agent.baseUrl, "CreateTaskPushNotificationConfig", { taskId, url: "http://[::ffff:127.0.0.1]:9/hook" })
    expect(answer.json["result"]?.["url"]).toBe("http://[::ffff:127.0.0.1]:9/hook")
  })
})

// ---------------------------------------------------------------------------
// Delivery: the sender checks again where it posts, and resolves names through the guard.

const task: V1.Task = { id: "t-guard", contextId: "c", status: { state: "TASK_STATE_COMPLETED", timestamp: "2026-01-01T00:00:00Z" } }

interface Delivery {
  readonly warnings: ReadonlyArray<string>
  readonly lookups: ReadonlyArray<string>
}

/** Starts a sender on `url`, posts one update, waits for the post or its refusal, then shuts down. */
const deliver = async (
  url: string,
  options: PushSender.PushSenderOptions,
  settled: (warnings: ReadonlyArray<string>) => boolean
): Promise<Delivery> => {
  const warnings: Array<string> = []
  const lookups: Array<string> = []
  const logger = Logger.replace(Logger.defaultLogger, Logger.make(({ message }) => void warnings.push(String(message))))
  const resolveHost = options.resolveHost
  const runtime = ManagedRuntime.make(PushSender.layer({
    backoff: "10 millis",
    timeout: "2 seconds",
    ...options,
    ...(resolveHost === undefined ? {} : {
      resolveHost: (hostname, lookupOptions) => {
        lookups.push(hostname)
        return resolveHost(hostname, lookupOptions)
      }
    })
  }))
  try {
    const update = { event: { task }, task, version: 1 }
    await runtime.runPromise(
      Effect.flatMap(
        PushSender.PushSender,
        (sender) =>
          sender.start({ config: { id: "cfg", taskId: task.id, url }, generation: "1.0" }, Stream.make(update), pendingDeliveries())
      ).pipe(Effect.provide(logger))
    )
    await eventually(`the delivery to ${url}`, () => settled(warnings))
    return { warnings, lookups }
  } finally {
    await runtime.dispose()
  }
}

/** A resolver that knows a few test names, so nothing leaves the machine. */
const fakeDns = (table: Record<string, ReadonlyArray<string>>): PushSender.ResolveHost => async (hostname) => {
  const addresses = table[hostname]
  if (addresses === undefined) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: "ENOTFOUND" })
  return addresses.map((address): LookupAddress => ({ address, family: address.includes(":") ? 6 : 4 }))
}

const refused = (warnings: ReadonlyArray<string>) => warnings.some((warning) => warning.includes("not allowed"))

describe("PushSender guards every post", () => {
  let sink: WebhookSink
  let port: string
  beforeAll(async () => {
    sink = await startWebhookSink()
    port = new URL(sink.url).port
  })
  afterAll(() => sink.close())

  it("connects to a host name only through the guard: its resolved address is the one used and the one judged", async () => {
    const resolveHost = fakeDns({ "hook.test": ["127.0.0.1"] })
    const allowed = await deliver(`http://hook.test:${port}/named`, { resolveHost }, () => sink.deliveries.some((d) => d.path === "/named"))
    expect(allowed.lookups).toContain("hook.test")

    const before = sink.deliveries.length
    const blocked = await deliver(`http://hook.test:${port}/named-blocked`, { resolveHost, allowLoopback: false }, refused)
    expect(blocked.warnings.join("\n")).toContain("resolves to 127.0.0.1")
    // Refused, not retried: one lookup, and nothing reached the sink.
    expect(blocked.lookups).toEqual(["hook.test"])
    expect(sink.deliveries.length).toBe(before)
  })

  it("refuses a host name that resolves to the metadata address, or to any private address among public ones", async () => {
    const resolveHost = fakeDns({
      "metadata.test": ["169.254.169.254"],
      "mixed.test": ["93.184.216.34", "::ffff:a9fe:a9fe"],
      "nat64.test": ["64:ff9b::a9fe:a9fe"]
    })
    for (const name of ["metadata.test", "mixed.test", "nat64.test"]) {
      const { warnings, lookups } = await deliver(`http://${name}/x`, { resolveHost }, refused)
      expect(warnings.join("\n"), name).toMatch(/resolves to (169\.254\.169\.254|::ffff:a9fe:a9fe|64:ff9b::a9fe:a9fe)/)
      expect(lookups).toEqual([name])
    }
  })

  it("checks a literal again where it posts (a config stored under another policy is not posted to)", async () => {
    for (const url of PRIVATE_URLS) {
      const { warnings } = await deliver(url, {}, refused)
      expect(warnings.join("\n"), url).toContain("not allowed")
    }
    const before = sink.deliveries.length
    for (const host of LOOPBACK_SPELLINGS.filter((spelling) => !spelling.startsWith("[64:"))) {
      await deliver(`http://${host}:${port}/literal`, { allowLoopback: false }, refused)
    }
    expect(sink.deliveries.length).toBe(before)
  })

  it("posts to an IPv4-mapped loopback literal when loopback is allowed (it does reach 127.0.0.1)", async () => {
    await deliver(`http://[::ffff:127.0.0.1]:${port}/mapped`, {}, () => sink.deliveries.some((d) => d.path === "/mapped"))
    const delivery = sink.deliveries.find((d) => d.path === "/mapped")
    expect(delivery?.headers["content-type"]).toContain("application/a2a+json")
  })

  it("logs a failed post without the token its URL holds (user info, query)", async () => {
    // A port nobody listens on any more: the post fails in transport, whose error names the URL.
    const gone = http.createServer()
    const port = new URL(await listenOnLoopback(gone)).port
    await closeServer(gone)
    const url = `http://user:PASSWORD@127.0.0.1:${port}/hook?token=QUERYSECRET`
    const { warnings } = await deliver(url, { retries: 0 }, (logged) => logged.some((warning) => warning.includes("failed")))
    const logged = warnings.join("\n")
    expect(logged).toContain(`http://***@127.0.0.1:${port}/hook?***`)
    expect(logged).not.toMatch(/PASSWORD|QUERYSECRET/)
  })

  it("does not follow a redirect (a public webhook cannot bounce the post elsewhere)", async () => {
    const redirector = http.createServer((_request, response) => {
      response.writeHead(307, { location: `${sink.url}/redirected` }).end()
    })
    const base = await listenOnLoopback(redirector)
    try {
      const { warnings } = await deliver(`${base}/hook`, {}, (logged) => logged.some((warning) => warning.includes("HTTP 307")))
      expect(warnings.join("\n")).toContain("HTTP 307")
      expect(sink.deliveries.some((d) => d.path === "/redirected")).toBe(false)
    } finally {
      await closeServer(redirector)
    }
  })
})
