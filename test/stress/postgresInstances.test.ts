// Two `relay server agent` processes sharing one PostgreSQL database (a throwaway cluster, see
// test/helpers/postgres.ts), with the mock model staying working 2 s per turn: a subscriber on B gets
// every event of a task running on A, in order; a cancel on B ends A's task; `kill -9` of A mid-task
// ends its task `failed` on B within the lease time, its webhook told once; pushes an instance was
// retrying when killed are taken over by another, each arriving once; mixed requests (10 000 with
// RELAY_STRESS_PG_REQUESTS=10000) spread over two echo instances lose and duplicate nothing.
import { type ChildProcess, spawn } from "node:child_process"
import http from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { postgresAvailable, type PostgresCluster, startPostgres } from "../helpers/postgres.js"
import { tempHome } from "../helpers/stateHome.js"
import { closeServer, listenOnLoopback, readBodyText } from "../peers/httpUtil.js"
import { type Json, rpc, streamRpc, v1Message } from "../servers/wire.js"

const LEASE_MS = 2000

interface Instance {
  readonly url: string
  readonly child: ChildProcess
}

const homes: Array<ReturnType<typeof tempHome>> = []

/**
 * Mixed requests spread over two instances: the 10 000 with RELAY_STRESS_PG_REQUESTS=10000
 * (README, Reliability suites, has its time); fewer by default, to keep CI's stress tier in its budget.
 */
const MIXED_REQUESTS = Number(process.env["RELAY_STRESS_PG_REQUESTS"] ?? 1000)
/** Clients sending them at once. */
const CLIENTS = 32

const startInstance = (store: string, model: ReadonlyArray<string> = ["-m", "mock", "--latency", "2s"]): Promise<Instance> => {
  const home = tempHome()
  homes.push(home)
  const child = spawn(process.execPath, [
    relayBin,
    "server",
    "agent",
    "--host",
    "127.0.0.1",
    "--port",
    "0",
    ...model,
    "--store",
    store,
    "--json"
  ], {
    env: {
      ...process.env,
      RELAY_HOME: home.stateDir,
      NO_COLOR: "1",
      RELAY_STORE_KEY: "stress test store key",
      RELAY_STORE_LEASE: `${LEASE_MS}ms`
    },
    stdio: ["ignore", "pipe", "pipe"]
  })
  let stdout = ""
  let stderr = ""
  child.stderr!.on("data", (chunk) => (stderr += chunk))
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the agent did not start: ${stderr}`)), 20_000)
    child.stdout!.on("data", (chunk) => {
      stdout += chunk
      const line = stdout.split("\n")[0]
      if (stdout.includes("\n") && line !== undefined) {
        clearTimeout(timer)
        resolve({ url: (JSON.parse(line) as Json)["url"] as string, child })
      }
    })
    child.on("exit", (code) => reject(new Error(`the agent exited ${code}: ${stderr}`)))
  })
}

const stop = (instance: Instance) => {
  if (instance.child.exitCode === null) instance.child.kill("SIGKILL")
}

const sendAsync = async (base: string, text: string, configuration: Json = {}) => {
  const answer = await rpc(base, "SendMessage", { message: v1Message(text), configuration: { returnImmediately: true, ...configuration } })
  if (answer.json["result"] === undefined) throw new Error(`send failed: ${JSON.stringify(answer.json)}`)
  return answer.json["result"]["task"] as Json
}

const getTask = async (base: string, id: string) => (await rpc(base, "GetTask", { id })).json["result"] as Json

const waitFor = async <A>(probe: () => Promise<A | undefined>, timeoutMs: number): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe.runIf(postgresAvailable())("two agent instances over one PostgreSQL database", () => {
  let cluster: PostgresCluster
  let store: string
  let a: Instance
  let b: Instance
  beforeAll(async () => {
    cluster = await startPostgres()
    store = await cluster.createDatabase()
    a = await startInstance(store)
    b = await startInstance(store)
  }, 60_000)
  afterAll(async () => {
    for (const instance of [a, b]) if (instance !== undefined) stop(instance)
    await cluster?.stop()
    for (const home of homes) home.cleanup()
  })

  it("SubscribeToTask on B gets the task running on A, then every event once and in order", async () => {
    const task = await sendAsync(a.url, "hello from A")
    const { events } = await streamRpc(b.url, "SubscribeToTask", { id: task["id"] })
    const received = (await events()).map((event) => event.data["result"] as Json)
    expect(received[0]?.["task"]?.["id"]).toBe(task["id"])
    const states = received.slice(1).flatMap((event) =>
      event["statusUpdate"] === undefined ? [] : [event["statusUpdate"]["status"]["state"]]
    )
    expect(states.at(-1)).toBe("TASK_STATE_COMPLETED")
    // Every event once: no status repeats itself, and A's own view ends the same.
    expect(new Set(received.map((event) => JSON.stringify(event))).size).toBe(received.length)
    expect((await getTask(a.url, task["id"]))["status"]["state"]).toBe("TASK_STATE_COMPLETED")
  })

  it("CancelTask on B ends the task A is working on, and A's worker writes nothing after", async () => {
    const task = await sendAsync(a.url, "cancel me from B")
    const canceled = (await rpc(b.url, "CancelTask", { id: task["id"] })).json["result"] as Json
    expect(canceled["status"]["state"]).toBe("TASK_STATE_CANCELED")
    // Past the 2 s turn A would have finished: the task stays canceled on both.
    await new Promise((resolve) => setTimeout(resolve, 2500))
    for (const instance of [a, b]) expect((await getTask(instance.url, task["id"]))["status"]["state"]).toBe("TASK_STATE_CANCELED")
  })

  it("kill -9 of A mid-task: B ends the task failed within the lease time, its webhook told once", async () => {
    const posted: Array<Json> = []
    const receiver = http.createServer(async (req, res) => {
      posted.push(JSON.parse(await readBodyText(req)) as Json)
      res.writeHead(200).end()
    })
    const webhook = await listenOnLoopback(receiver)
    const victim = await startInstance(store)
    try {
      const task = await sendAsync(victim.url, "A dies under me", { taskPushNotificationConfig: { url: `${webhook}/hook`, token: "t" } })
      await waitFor(async () => posted.length > 0 ? true : undefined, 5000)
      victim.child.kill("SIGKILL")
      const killedAt = Date.now()
      const failed = await waitFor(async () => {
        const now = await getTask(b.url, task["id"])
        return now["status"]["state"] === "TASK_STATE_FAILED" ? now : undefined
      }, 4 * LEASE_MS)
      expect(Date.now() - killedAt).toBeLessThan(2 * LEASE_MS + 1000)
      expect(failed["status"]["message"]["parts"][0]["text"]).toMatch(/lease ran out/)
      // Another lease time: no second delivery of the end.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 500))
      const ends = posted.filter((body) => body["statusUpdate"]?.["status"]?.["state"] === "TASK_STATE_FAILED")
      expect(ends.length).toBe(1)
    } finally {
      stop(victim)
      await closeServer(receiver)
    }
  })

  it("kill -9 of an instance retrying pushes to a webhook that answers 503: another takes them over, each arrives once", async () => {
    let failing = true
    let failures = 0
    const delivered: Array<string> = []
    const receiver = http.createServer(async (req, res) => {
      const body = await readBodyText(req)
      if (failing) failures++
      else delivered.push(body)
      res.writeHead(failing ? 503 : 200).end()
    })
    const webhook = await listenOnLoopback(receiver)
    const victim = await startInstance(store)
    try {
      const task = await sendAsync(victim.url, "my pushes outlive me", { taskPushNotificationConfig: { url: `${webhook}/hook` } })
      // The first retry of the first notification (the task as it was sent): it is in the store, and retried.
      await waitFor(async () => failures >= 2 ? true : undefined, 5000)
      victim.child.kill("SIGKILL")
      failing = false
      const stateOf = (body: string) => {
        const event = JSON.parse(body) as Json
        return event["task"]?.["status"]?.["state"] ?? event["statusUpdate"]?.["status"]?.["state"]
      }
      await waitFor(async () => delivered.some((body) => stateOf(body) === "TASK_STATE_FAILED") ? true : undefined, 6 * LEASE_MS)
      await waitFor(async () => delivered.some((body) => (JSON.parse(body) as Json)["task"] !== undefined) ? true : undefined, 6 * LEASE_MS)
      // Another lease time: no instance posts any of them again.
      await new Promise((resolve) => setTimeout(resolve, LEASE_MS + 500))
      expect(new Set(delivered).size).toBe(delivered.length)
      expect(delivered.filter((body) => (JSON.parse(body) as Json)["task"] !== undefined)).toHaveLength(1)
      expect(delivered.filter((body) => stateOf(body) === "TASK_STATE_FAILED")).toHaveLength(1)
      expect(delivered.every((body) => body.includes(task["id"]))).toBe(true)
    } finally {
      stop(victim)
      await closeServer(receiver)
    }
  })

  it(
    `${MIXED_REQUESTS} mixed requests over both instances, ${CLIENTS} clients at once: every task found on both, listed once`,
    async () => {
      // A pair of its own over a database of its own, on the echo model: the count is exactly what was sent.
      const echoStore = await cluster.createDatabase()
      const [c, d] = await Promise.all([startInstance(echoStore, ["-m", "echo"]), startInstance(echoStore, ["-m", "echo"])])
      try {
        const began = Date.now()
        const sent: Array<string> = []
        let requests = 0
        // Each round is four requests: a send on one instance, a GetTask of it on the other, a ListTasks,
        // and a GetTask of an earlier task.
        const client = async (n: number) => {
          for (let round = n; round < MIXED_REQUESTS / 4; round += CLIENTS) {
            const [here, there] = round % 2 === 0 ? [c, d] : [d, c]
            const answer = await rpc(here.url, "SendMessage", { message: v1Message(`mixed ${round}`) })
            const task = answer.json["result"]?.["task"] as Json | undefined
            if (task?.["status"]?.["state"] !== "TASK_STATE_COMPLETED") throw new Error(`send failed: ${JSON.stringify(answer.json)}`)
            sent.push(task["id"])
            expect((await getTask(there.url, task["id"]))["id"]).toBe(task["id"])
            await rpc(there.url, "ListTasks", { pageSize: 5 })
            expect((await getTask(here.url, sent[Math.floor(sent.length / 2)]!))["id"]).toBeTypeOf("string")
            requests += 4
          }
        }
        await Promise.all(Array.from({ length: CLIENTS }, (_, n) => client(n)))
        console.log(`${requests} mixed requests over two PostgreSQL instances in ${Date.now() - began} ms`)
        expect(requests).toBe(MIXED_REQUESTS)
        // 0 lost, 0 duplicated: both count exactly the tasks sent, and the pages list each once.
        for (const instance of [c, d]) {
          expect(((await rpc(instance.url, "ListTasks", { pageSize: 1 })).json["result"] as Json)["totalSize"]).toBe(sent.length)
        }
        const listed: Array<string> = []
        let pageToken = ""
        for (let pages = 0; pages < sent.length / 100 + 2; pages++) {
          const page = (await rpc([c, d][pages % 2]!.url, "ListTasks", { pageSize: 100, pageToken })).json["result"] as Json
          listed.push(...(page["tasks"] as Array<Json>).map((task) => task["id"] as string))
          pageToken = page["nextPageToken"] as string
          if (pageToken === "") break
        }
        expect(listed.length).toBe(sent.length)
        expect(new Set(listed)).toEqual(new Set(sent))
      } finally {
        stop(c)
        stop(d)
      }
    },
    120_000
  )
})
