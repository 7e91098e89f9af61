// Agent server throughput: SendMessage with relay's `echo` model under 64 concurrent keep-alive
// connections (autocannon), side by side with the official @a2a-js/sdk 1.3.0 server running an
// equivalent echo executor, and a bare node:http server answering a canned Task (the floor); and
// over gRPC, 64 calls in flight, against a relay agent of its own started with --grpc-port (so the
// first one's memory figures stay those of a server that never loaded gRPC). The gRPC load comes
// from h2load (support/h2load.mjs), with JSON-RPC on that same agent under h2load too as its
// reference; without h2load, from support/grpcLoad.mjs against the autocannon JSON-RPC row.
// Each server is its own process on 127.0.0.1, port 0. The scenarios take turns for several
// rounds (each round in a rotated order); each figure is the median of its rounds, and each ratio
// the median of its rounds' ratios: the two rows of a ratio are measured within the same round, a
// few seconds apart, so the drift of a shared machine (its speed changes by tens of per cent from
// one minute to the next) falls on both. Many short rounds spread every row over the whole run. The
// PostgreSQL row runs its rounds after the others' (its ratios pair rounds a minute or more apart). The relay
// agent's resident memory is read once it has started (idle, before any request) and, with the
// SDK server's and the floor's, right after the throughput run (each server took the same load).
// The relay rows run over the memory store, and one row again over the durable file store (every
// change fsynced before the answer); that server is then restarted over the tasks it kept (10 000,
// its retention), and its start-up is timed against a start over an empty store.
//
//   BENCH_DURATION     seconds per scenario and round (default 2), after one 2 s warm-up each
//   BENCH_CONNECTIONS  concurrent connections (default 64)
//   BENCH_ROUNDS       rounds (default 8)
import { Role, TaskState } from "@a2a-js/sdk"
import { ClientFactory, ClientFactoryOptions } from "@a2a-js/sdk/client"
import { GrpcTransportFactory } from "@a2a-js/sdk/client/grpc"
import autocannon from "autocannon"
import { randomUUID } from "node:crypto"
import { join } from "node:path"
import { memoryRow } from "./memory.mjs"
import { framed, grpcCall, grpcLoad, v1SendMessageBytes } from "./support/grpcLoad.mjs"
import { h2load, h2loadInstalled } from "./support/h2load.mjs"
import {
  benchDir,
  exitOf,
  progress,
  residentBytes,
  sleep,
  startRelayAgent,
  startServer,
  tempRelayHome,
  withTimeout
} from "./support/processes.mjs"
import { median } from "./support/stats.mjs"

const duration = Number(process.env.BENCH_DURATION ?? 2)
const connections = Number(process.env.BENCH_CONNECTIONS ?? 64)
const rounds = Number(process.env.BENCH_ROUNDS ?? 8)
const WARM_UP_SECONDS = 2
/** How long the freshly started servers are left alone before their idle memory is read. */
/** How long after its load the agent server's memory is read again (V8 shrinks an idle heap within ~20–30 s). */
const IDLE_AFTER_LOAD_MS = 30_000
const SETTLE_MS = 1_000

const firstLine = (text) => (text.includes("\n") ? text.slice(0, text.indexOf("\n")).trim() : undefined)
const startScript = (label, file) => startServer(label, process.execPath, [join(benchDir, "support", file)], { findUrl: firstLine })

const v1Send = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "SendMessage",
  params: { message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] } }
})
const v03Send = JSON.stringify({
  jsonrpc: "2.0",
  id: 1,
  method: "message/send",
  params: { message: { kind: "message", messageId: randomUUID(), role: "user", parts: [{ kind: "text", text: "hello" }] } }
})
const restSend = JSON.stringify({ message: { messageId: randomUUID(), role: "ROLE_USER", parts: [{ text: "hello" }] } })
const json = { "content-type": "application/json" }
const v1 = { ...json, "a2a-version": "1.0" }

/** The gRPC interface (`host:port`) a relay agent's card lists at 1.0. */
const grpcAddressOf = async (baseUrl) => {
  const response = await fetch(`${baseUrl}/.well-known/agent-card.json`, {
    headers: { "a2a-version": "1.0" },
    signal: AbortSignal.timeout(10_000)
  })
  const card = await response.json()
  const grpc = card.supportedInterfaces.find((i) => i.protocolBinding === "GRPC" && i.protocolVersion === "1.0")
  if (grpc === undefined) throw new Error(`${baseUrl} lists no gRPC interface`)
  return grpc.url
}

/** One request first: a scenario only counts if it really answers with the echoed, completed task. */
const checkAnswer = async ({ url, headers, body }) => {
  const response = await fetch(url, { method: "POST", headers, body, signal: AbortSignal.timeout(10_000) })
  const text = await response.text()
  if (!response.ok || !/"(TASK_STATE_COMPLETED|completed)"/.test(text) || !text.includes("hello")) {
    throw new Error(`unexpected answer from ${url}: ${response.status} ${text.slice(0, 300)}`)
  }
}

/** The gRPC scenario's check: the a2a-js gRPC client's send, from the card, answers the completed echo. */
const checkGrpcAnswer = async ({ url }) => {
  const client = await new ClientFactory(ClientFactoryOptions.createFrom(ClientFactoryOptions.default, {
    transports: [new GrpcTransportFactory()],
    preferredTransports: ["GRPC"]
  })).createFromUrl(url)
  const part = { content: { $case: "text", value: "hello" }, mediaType: "", filename: "", metadata: undefined }
  const message = {
    messageId: randomUUID(),
    contextId: "",
    taskId: "",
    role: Role.ROLE_USER,
    parts: [part],
    metadata: undefined,
    extensions: [],
    referenceTaskIds: []
  }
  const task = await withTimeout(
    client.sendMessage({ tenant: "", message, configuration: undefined, metadata: undefined }),
    10_000,
    "gRPC check"
  )
  const text = JSON.stringify(task)
  if (task.status?.state !== TaskState.TASK_STATE_COMPLETED || !text.includes("hello")) {
    throw new Error(`unexpected gRPC answer from ${url}: ${text.slice(0, 300)}`)
  }
}

/**
 * HTTP/2 connections of the gRPC load, the `connections` calls in flight shared among them. The
 * goal's row is one connection, as a gRPC client calls: a channel (grpc-js's, a2a-js's
 * GrpcTransport's) multiplexes its calls over one HTTP/2 connection, where an HTTP/1.1 client
 * needs a connection per request in flight. A second row spreads them over 8 (no goal).
 */
const GRPC_CHANNEL_CONNECTIONS = 1
const GRPC_SPREAD_CONNECTIONS = 8

const load = (scenario, seconds) => {
  const { url, headers, body, grpc, native } = scenario
  const run = native !== undefined
    ? h2load({ ...native, seconds })
    : grpc === undefined
    ? autocannon({ url, method: "POST", headers, body, connections, duration: seconds })
    : grpcLoad({ ...grpc, connections, seconds })
  return withTimeout(
    run,
    (seconds + 30) * 1000,
    `${native !== undefined ? "h2load" : grpc === undefined ? "autocannon" : "gRPC load"} ${url}`
  )
}

/**
 * h2load counts any HTTP 200 as served, and a failed gRPC call is a 200 too, but trailers-only: no
 * DATA. Every served call carries the answer the check saw (its size varies by a few bytes with the
 * timestamps' varints), so the DATA bytes must come to that size for nearly every call.
 */
const failedGrpcCalls = (scenario, result) => {
  const least = scenario.native.answerBytes * 0.99
  return result.dataBytes >= result.requests.total * least ? 0 : Math.ceil(result.requests.total - result.dataBytes / least)
}

const runScenario = async (scenario) => {
  const result = await load(scenario, duration)
  const failures = result.errors + result.timeouts + result.non2xx +
    (scenario.native?.answerBytes === undefined ? 0 : failedGrpcCalls(scenario, result))
  if (failures > 0) throw new Error(`${scenario.label}: ${failures} failed requests`)
  return { rps: result.requests.average, p50: result.latency.p50, p99: result.latency.p99 }
}

/** The answer's size on the wire of one call through `grpcCall`, which must be served (grpc-status 0). */
const grpcAnswerBytes = async (grpc) => {
  const answer = await withTimeout(grpcCall(grpc), 10_000, "gRPC call")
  if (answer.status !== "0") throw new Error(`the gRPC call failed with grpc-status ${answer.status}`)
  return answer.dataBytes
}

/** Time from spawn to the start-up line of `relay server agent` over the store in `relayHome`. */
const timedStart = async (relayHome) => {
  const began = performance.now()
  const started = await startRelayAgent("echo", { store: "file", relayHome })
  return { started, ms: Math.round(performance.now() - began) }
}

/**
 * The file store as the throughput run left it (its retention keeps 10 000 tasks): the server is
 * stopped and started again on it, against a start over an empty store.
 */
const reopenFileStore = async (relayFile, fileHome) => {
  progress("agent server: restarting relay over its file store")
  relayFile.child.kill("SIGTERM")
  await exitOf(relayFile.child, 10_000, "relay server agent (file store)")
  const full = await timedStart(fileHome)
  const listed = await fetch(`${full.started.url}/tasks?pageSize=1`, { headers: { "a2a-version": "1.0" } }).then((response) =>
    response.json()
  )
  full.started.child.kill("SIGTERM")
  const empty = await timedStart(tempRelayHome())
  empty.started.child.kill("SIGTERM")
  return { tasks: listed.totalSize, fullMs: full.ms, emptyMs: empty.ms, openMs: Math.max(0, full.ms - empty.ms) }
}

/**
 * A throwaway PostgreSQL cluster (the tests' helper, test/helpers/postgres.ts) for the PostgreSQL
 * store's row; undefined when its binaries are missing (the row is left out).
 */
const startPostgresCluster = async () => {
  const { tsImport } = await import("tsx/esm/api")
  const helper = await tsImport("../test/helpers/postgres.ts", import.meta.url)
  if (!helper.postgresAvailable()) return undefined
  return helper.startPostgres()
}

/** Warms each scenario up, then runs them in turns, `rounds` times (each round in a rotated order), into `samples`. */
const measureRounds = async (scenarios, samples) => {
  for (const scenario of scenarios) {
    await (scenario.grpc === undefined ? checkAnswer : checkGrpcAnswer)(scenario)
    progress(`agent server: warm-up ${scenario.label}`)
    await load(scenario, WARM_UP_SECONDS)
  }
  for (let round = 0; round < rounds; round++) {
    for (let turn = 0; turn < scenarios.length; turn++) {
      const scenario = scenarios[(round + turn) % scenarios.length]
      const run = await runScenario(scenario)
      progress(`agent server: round ${round + 1}/${rounds}, ${scenario.label}: ${Math.round(run.rps)} req/s`)
      samples.get(scenario.id).push(run)
    }
  }
}

/** What a row's detail says of its load generator, where it is not autocannon. */
const loadGeneratorOf = (scenario) =>
  scenario.native !== undefined
    ? `; h2load${scenario.native.h1 ? " --h1" : ""}, ${scenario.native.clients} × ${scenario.native.streams}`
    : scenario.grpc !== undefined
    ? "; support/grpcLoad.mjs (h2load not installed)"
    : ""

export const measure = async () => {
  progress("agent server: starting relay (echo; memory, file and PostgreSQL stores; gRPC), the SDK server and the floor")
  const cluster = await startPostgresCluster()
  try {
    return await measureWith(cluster === undefined ? undefined : await cluster.createDatabase())
  } finally {
    await cluster?.stop()
  }
}

const measureWith = async (postgresStore) => {
  const fileHome = tempRelayHome()
  const [relay, relayFile, relayGrpc, sdk, floor, relayPostgres] = await Promise.all([
    startRelayAgent("echo"),
    startRelayAgent("echo", { store: "file", relayHome: fileHome }),
    startRelayAgent("echo", { extraArgs: ["--grpc-port", "0"] }),
    startScript("SDK echo server", "sdk-echo-server.mjs"),
    startScript("floor server", "floor-server.mjs"),
    postgresStore === undefined ? undefined : startRelayAgent("echo", { store: postgresStore })
  ])
  const grpcAddress = await grpcAddressOf(relayGrpc.url)
  const grpcSend = {
    address: grpcAddress,
    path: "/lf.a2a.v1.A2AService/SendMessage",
    request: v1SendMessageBytes(randomUUID(), "hello"),
    metadata: { "a2a-version": "1.0" }
  }
  const native = h2loadInstalled()
  if (!native) progress("agent server: h2load is not installed (Debian: nghttp2-client): gRPC load from support/grpcLoad.mjs")
  const grpcAnswer = native ? await grpcAnswerBytes(grpcSend) : undefined
  /** SendMessage over gRPC, the calls in flight spread over `clients` HTTP/2 connections (h2load). */
  const grpcScenario = (id, label, clients) => ({
    id,
    label,
    url: relayGrpc.url,
    grpc: grpcSend,
    native: native
      ? {
        url: `http://${grpcAddress}${grpcSend.path}`,
        headers: { "content-type": "application/grpc", te: "trailers", ...grpcSend.metadata },
        body: framed(grpcSend.request),
        clients,
        streams: Math.max(1, Math.round(connections / clients)),
        answerBytes: grpcAnswer
      }
      : undefined
  })
  const scenarios = [
    { id: "agent.floor", label: "node:http canned Task (floor)", url: `${floor.url}/`, headers: v1, body: v1Send },
    { id: "agent.sdk", label: "@a2a-js/sdk 1.3.0 JSON-RPC SendMessage", url: `${sdk.url}/`, headers: v1, body: v1Send },
    { id: "agent.jsonrpc_v1", label: "relay JSON-RPC SendMessage (1.0)", url: `${relay.url}/`, headers: v1, body: v1Send },
    {
      id: "agent.rest_v1",
      label: "relay HTTP+JSON POST /message:send (1.0)",
      url: `${relay.url}/message:send`,
      headers: v1,
      body: restSend
    },
    { id: "agent.jsonrpc_v03", label: "relay JSON-RPC message/send (0.3)", url: `${relay.url}/`, headers: json, body: v03Send },
    {
      id: "agent.jsonrpc_v1_file",
      label: "relay JSON-RPC SendMessage (1.0), file store (fsynced)",
      url: `${relayFile.url}/`,
      headers: v1,
      body: v1Send
    },
    grpcScenario("agent.grpc_v1", "relay SendMessage over gRPC (1.0), one channel", GRPC_CHANNEL_CONNECTIONS),
    ...(native
      ? [grpcScenario("agent.grpc_v1_spread", "relay SendMessage over gRPC (1.0), 8 connections", GRPC_SPREAD_CONNECTIONS)]
      : []),
    ...(native
      ? [{
        id: "agent.jsonrpc_v1_h2load",
        label: "relay JSON-RPC SendMessage (1.0), gRPC's agent and load generator",
        url: `${relayGrpc.url}/`,
        headers: v1,
        body: v1Send,
        native: { url: `${relayGrpc.url}/`, headers: v1, body: v1Send, h1: true, clients: connections, streams: 1 }
      }]
      : []),
    ...(relayPostgres === undefined ? [] : [{
      id: "agent.jsonrpc_v1_postgres",
      label: "relay JSON-RPC SendMessage (1.0), PostgreSQL store",
      url: `${relayPostgres.url}/`,
      headers: v1,
      body: v1Send,
      apart: true
    }])
  ]
  await sleep(SETTLE_MS)
  const relayIdleRss = residentBytes(relay.child.pid)
  const samples = new Map(scenarios.map((scenario) => [scenario.id, []]))
  const together = scenarios.filter((scenario) => scenario.apart !== true)
  await measureRounds(together, samples)
  const afterLoad = { relay: residentBytes(relay.child.pid), sdk: residentBytes(sdk.child.pid), floor: residentBytes(floor.child.pid) }
  const loadEnded = performance.now()
  // After the others: PostgreSQL keeps the disk busy after its load (its WAL, then checkpoints), which slowed
  // the file store's fsyncs in the rounds that followed it (bench/README.md).
  await measureRounds(scenarios.filter((scenario) => scenario.apart === true), samples)
  // The memory store's server has been idle since: what it holds once V8's memory reducer had its time.
  await sleep(Math.max(0, IDLE_AFTER_LOAD_MS - (performance.now() - loadEnded)))
  const afterIdle = residentBytes(relay.child.pid)

  const figures = new Map(scenarios.map((scenario) => {
    const runs = samples.get(scenario.id)
    return [scenario.id, {
      rps: median(runs.map((run) => run.rps)),
      p50: median(runs.map((run) => run.p50)),
      p99: median(runs.map((run) => run.p99))
    }]
  }))
  /** The median of the rounds' ratios of `id` to `to` (each round measured both). */
  const ratio = (id, to, label, goal) => {
    const of = samples.get(id)
    const reference = samples.get(to)
    return { to: label, value: median(of.map((run, round) => run.rps / reference[round].rps)), goal }
  }
  const ratiosOf = {
    "agent.floor": [],
    "agent.sdk": [ratio("agent.sdk", "agent.floor", "floor")],
    "agent.jsonrpc_v1": [
      ratio("agent.jsonrpc_v1", "agent.sdk", "SDK", { op: ">=", limit: 4 }),
      ratio("agent.jsonrpc_v1", "agent.floor", "floor", { op: ">=", limit: 0.4 })
    ],
    "agent.rest_v1": [ratio("agent.rest_v1", "agent.jsonrpc_v1", "JSON-RPC 1.0", { op: ">=", limit: 0.85 })],
    "agent.jsonrpc_v03": [ratio("agent.jsonrpc_v03", "agent.jsonrpc_v1", "JSON-RPC 1.0", { op: ">=", limit: 0.85 })],
    // Against JSON-RPC under the same load generator (h2load) when there is one.
    "agent.grpc_v1": native
      ? [
        ratio("agent.grpc_v1", "agent.jsonrpc_v1_h2load", "JSON-RPC 1.0, h2load", { op: ">=", limit: 0.85 }),
        ratio("agent.grpc_v1", "agent.jsonrpc_v1", "JSON-RPC 1.0, autocannon")
      ]
      : [ratio("agent.grpc_v1", "agent.jsonrpc_v1", "JSON-RPC 1.0", { op: ">=", limit: 0.85 })],
    // Rows measured only under h2load.
    "agent.grpc_v1_spread": native ? [ratio("agent.grpc_v1_spread", "agent.jsonrpc_v1_h2load", "JSON-RPC 1.0, h2load")] : [],
    "agent.jsonrpc_v1_h2load": native ? [ratio("agent.jsonrpc_v1_h2load", "agent.jsonrpc_v1", "JSON-RPC 1.0, autocannon")] : [],
    "agent.jsonrpc_v1_file": [
      ratio("agent.jsonrpc_v1_file", "agent.sdk", "SDK", { op: ">=", limit: 4 }),
      ratio("agent.jsonrpc_v1_file", "agent.jsonrpc_v1", "memory store")
    ],
    // Each send is a few database round trips: compared with the SDK's in-memory server, no goal yet.
    "agent.jsonrpc_v1_postgres": relayPostgres === undefined
      ? []
      : [ratio("agent.jsonrpc_v1_postgres", "agent.sdk", "SDK"), ratio("agent.jsonrpc_v1_postgres", "agent.jsonrpc_v1", "memory store")]
  }
  const reopened = await reopenFileStore(relayFile, fileHome)
  return [
    ...scenarios.map((scenario) => {
      const figure = figures.get(scenario.id)
      return {
        id: scenario.id,
        group: "Agent server",
        label: scenario.label,
        value: figure.rps,
        unit: "req/s",
        detail: `p50 ${figure.p50} ms, p99 ${figure.p99} ms${loadGeneratorOf(scenario)}`,
        p50_ms: figure.p50,
        p99_ms: figure.p99,
        ratios: ratiosOf[scenario.id]
      }
    }),
    {
      id: "agent.file_store_open",
      group: "Agent server",
      label: `relay server agent start-up over a file store of ${reopened.tasks} tasks, less an empty store's`,
      value: reopened.openMs,
      unit: "ms",
      detail: `${reopened.fullMs} ms with the tasks, ${reopened.emptyMs} ms empty`,
      goal: { op: "<=", limit: 1000 }
    },
    memoryRow("memory.agent_idle", "relay server agent, idle (before any request)", relayIdleRss, "VmRSS", { goal: false }),
    memoryRow("memory.agent_after_load", "relay server agent, after the throughput run", afterLoad.relay, "VmRSS", {
      ratios: [
        { to: "SDK server", value: afterLoad.relay / afterLoad.sdk },
        { to: "floor server", value: afterLoad.relay / afterLoad.floor }
      ]
    }),
    memoryRow(
      "memory.agent_after_idle",
      `relay server agent, ${IDLE_AFTER_LOAD_MS / 1000} s after the throughput run`,
      afterIdle,
      "VmRSS, idle since",
      { goal: false }
    ),
    memoryRow("memory.sdk_after_load", "@a2a-js/sdk server, after the same run (reference)", afterLoad.sdk, "VmRSS", { goal: false }),
    memoryRow("memory.floor_after_load", "node:http floor server, after the same run (reference)", afterLoad.floor, "VmRSS", {
      goal: false
    })
  ]
}

export const settings = { duration, connections, rounds, warmUpSeconds: WARM_UP_SECONDS, settleMs: SETTLE_MS }
