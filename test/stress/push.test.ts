// Push under faults (issue 15, item 4). The sender: a webhook that is unreachable, hangs, fails or
// redirects gets a bounded number of posts with growing pauses, and neither the task nor the
// server waits for it. The receiver (`relay server push`, a real process): 5000 concurrent posts
// are each recorded exactly once; killed with SIGKILL mid-burst and restarted, it leaves a log
// that parses line by line and holds every notification it acknowledged. Issue 27, items 16-17:
// two receivers on one log under load, with a follower that reads each acknowledged notification
// exactly once across rotations; and a receiver on a full disk (a 64 KiB tmpfs) that answers 5xx
// for what it could not write whole and leaves no partial line behind.
import * as NodeContext from "@effect/platform-node/NodeContext"
import { ConfigProvider, Layer, ManagedRuntime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import http from "node:http"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { webhookBaseUrl, webhookServerLayer } from "../../src/servers/webhook/WebhookServer.js"
import * as NotificationLog from "../../src/services/NotificationLog.js"
import * as StateDir from "../../src/services/StateDir.js"
import { relayBin } from "../helpers/cli.js"
import { reportFigures, runPool } from "../helpers/figures.js"
import { mountTmpfs, simulatedDisk } from "../helpers/fullDisk.js"
import { tempHome } from "../helpers/stateHome.js"
import { closeServer, listenOnLoopback } from "../peers/httpUtil.js"
import { startAgent } from "../servers/agentHarness.js"
import { rpc, sendV1 } from "../servers/wire.js"

const homes: Array<ReturnType<typeof tempHome>> = []
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  for (const home of homes) home.cleanup()
})

// ---------------------------------------------------------------------------
// The sender

/** A webhook that answers each post with `behave` and notes when each came. */
const startWebhook = async (behave: (res: http.ServerResponse, otherUrl: string) => void) => {
  const posts: Array<number> = []
  const held: Array<http.ServerResponse> = []
  const server = http.createServer((req, res) => {
    req.resume()
    posts.push(Date.now())
    held.push(res)
    behave(res, url)
  })
  const url = await listenOnLoopback(server)
  return {
    url: `${url}/hook`,
    posts,
    close: () => {
      for (const res of held) res.destroy()
      return closeServer(server)
    }
  }
}

/** Resolves once nothing was added to `posts` for `quietMs`; rejects after `timeoutMs`. */
const untilQuiet = async (posts: ReadonlyArray<number>, quietMs: number, timeoutMs: number) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const count = posts.length
    await new Promise((resolve) => setTimeout(resolve, quietMs))
    if (posts.length === count) return
    if (Date.now() > deadline) throw new Error(`posts still coming after ${timeoutMs} ms`)
  }
}

const RETRIES = 3
const BACKOFF_MS = 100
const POST_TIMEOUT_MS = 500

describe("a webhook that misbehaves", () => {
  it.each(
    [
      ["fails (503)", (res: http.ServerResponse) => res.writeHead(503).end()],
      ["hangs", () => undefined],
      ["redirects elsewhere", (res: http.ServerResponse, other: string) => res.writeHead(307, { location: `${other}/elsewhere` }).end()]
    ] as const
  )("%s: bounded retries with growing pauses, and neither the task nor the server waits for it", async (name, behave) => {
    const webhook = await startWebhook(behave)
    const agent = await startAgent({ push: { retries: RETRIES, backoff: `${BACKOFF_MS} millis`, timeout: `${POST_TIMEOUT_MS} millis` } })
    try {
      const started = Date.now()
      const task = await sendV1(agent.baseUrl, "hello", { configuration: { taskPushNotificationConfig: { url: webhook.url } } })
      const answeredMs = Date.now() - started
      expect(task["status"]["state"]).toBe("TASK_STATE_COMPLETED")
      expect(answeredMs).toBeLessThan(POST_TIMEOUT_MS)
      // Meanwhile the server answers at once.
      const healthStarted = Date.now()
      expect((await fetch(`${agent.baseUrl}/health`)).status).toBe(200)
      expect(Date.now() - healthStarted).toBeLessThan(POST_TIMEOUT_MS)
      // Every update is posted at most 1 + RETRIES times (a redirect is an answer: it is not followed, nor retried).
      const maxPosts = name === "redirects elsewhere" ? 4 : 4 * (1 + RETRIES)
      // The task's updates go one after the other, each with its retries: wait until the posts stop.
      await untilQuiet(webhook.posts, 1500, 20_000)
      const seen = webhook.posts.length
      expect(seen).toBeGreaterThan(0)
      expect(seen).toBeLessThanOrEqual(maxPosts)
      if (name === "fails (503)") {
        // The pauses grow: the last gap of one update's retries is longer than its first.
        const gaps = webhook.posts.slice(1).map((at, index) => at - webhook.posts[index]!)
        expect(Math.max(...gaps)).toBeGreaterThanOrEqual(BACKOFF_MS * 2 - 20)
      }
      reportFigures(`push sender, webhook ${name}`, { posts: seen, "bounded at": maxPosts, "task answered ms": answeredMs })
    } finally {
      await agent.close()
      await webhook.close()
    }
  })

  it("unreachable: the task completes at once and the server stays responsive", async () => {
    const closed = await startWebhook(() => undefined)
    const url = closed.url
    await closed.close()
    const agent = await startAgent({ push: { retries: RETRIES, backoff: `${BACKOFF_MS} millis`, timeout: `${POST_TIMEOUT_MS} millis` } })
    try {
      const started = Date.now()
      const tasks = await Promise.all(
        Array.from({ length: 50 }, () => sendV1(agent.baseUrl, "hello", { configuration: { taskPushNotificationConfig: { url } } }))
      )
      expect(tasks.every((task) => task["status"]["state"] === "TASK_STATE_COMPLETED")).toBe(true)
      expect(Date.now() - started).toBeLessThan(5000)
      expect((await rpc(agent.baseUrl, "ListTasks", { pageSize: 1 })).json["result"]["totalSize"]).toBe(50)
    } finally {
      await agent.close()
    }
  })
})

// ---------------------------------------------------------------------------
// The receiver, as a process

const startReceiver = (stateDir: string) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, "server", "push", "--port", "0"], {
      env: { ...process.env, RELAY_HOME: stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let output = ""
    const timer = setTimeout(() => reject(new Error(`no receiver URL within 20 s: ${output}`)), 20_000)
    const onData = (chunk: Buffer) => {
      output += String(chunk)
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(output)
      if (found === null) return
      clearTimeout(timer)
      // What it prints next (a line per notification) is read and dropped, so it never blocks on a full pipe.
      child.stderr!.off("data", onData)
      child.stderr!.resume()
      resolve({ child, url: found[1]! })
    }
    // The banner goes to stderr (stdout is for results).
    child.stderr!.on("data", onData)
    child.stdout!.resume()
    child.on("error", reject)
  })

/** Notification `index` about task `burst-<index>`; `padding` characters of text make it larger. */
const notification = (index: number, padding = 0) =>
  JSON.stringify({
    statusUpdate: {
      taskId: `burst-${index}`,
      contextId: "ctx",
      status: {
        state: "TASK_STATE_WORKING",
        message: {
          messageId: `m-${index}`,
          role: "ROLE_AGENT",
          parts: [{ text: `marker-${index}` }, ...(padding > 0 ? [{ text: "p".repeat(padding) }] : [])]
        }
      }
    }
  })

/** Posts notification `index`; its status, or 0 when the receiver was gone. */
const deliver = async (url: string, index: number, padding = 0) => {
  try {
    const response = await fetch(`${url}/notifications`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: notification(index, padding),
      signal: AbortSignal.timeout(60_000)
    })
    await response.arrayBuffer()
    return response.status
  } catch {
    return 0
  }
}

/** The log's lines (the current file and its older generation), and how many of them do not parse. */
const logLines = (stateDir: string) => {
  const file = Path.join(stateDir, "notifications.ndjson")
  const text = [`${file}.1`, file].filter((name) => Fs.existsSync(name)).map((name) => Fs.readFileSync(name, "utf8")).join("")
  const lines = text.split("\n").filter((line) => line !== "")
  const parsed = lines.flatMap((line) => {
    try {
      return [JSON.parse(line) as { task_id: string }]
    } catch {
      return []
    }
  })
  return { lines, parsed }
}

describe("relay server push under a flood", () => {
  it("records 5000 concurrent posts each exactly once", async () => {
    const home = tempHome()
    homes.push(home)
    const { child, url } = await startReceiver(home.stateDir)
    const started = Date.now()
    const statuses = await runPool(5000, 200, (index) => deliver(url, index))
    const seconds = (Date.now() - started) / 1000
    child.kill("SIGTERM")
    expect(statuses.filter((status) => status !== 200)).toEqual([])
    const { lines, parsed } = logLines(home.stateDir)
    expect(parsed.length).toBe(lines.length)
    expect(parsed.length).toBe(5000)
    expect(new Set(parsed.map((record) => record.task_id)).size).toBe(5000)
    reportFigures("push receiver flood", {
      posts: 5000,
      concurrency: 200,
      recorded: parsed.length,
      duplicates: 0,
      lost: 0,
      "posts/s": Math.round(5000 / seconds)
    })
  }, 300_000)

  it("killed with SIGKILL mid-burst and restarted: the log parses and holds every acknowledged notification", async () => {
    const home = tempHome()
    homes.push(home)
    const first = await startReceiver(home.stateDir)
    let acknowledged = 0
    const burst = runPool(3000, 200, async (index) => {
      const status = await deliver(first.url, index)
      if (status === 200 && ++acknowledged === 500) first.child.kill("SIGKILL")
      return status
    })
    const statuses = await burst
    const accepted = statuses.flatMap((status, index) => (status === 200 ? [`burst-${index}`] : []))
    expect(accepted.length).toBeGreaterThanOrEqual(500)
    expect(accepted.length).toBeLessThan(3000)
    // Restarted on the same state directory, it takes the rest.
    const second = await startReceiver(home.stateDir)
    const rest = statuses.flatMap((status, index) => (status === 200 ? [] : [index]))
    const resent = await runPool(rest.length, 200, (index) => deliver(second.url, rest[index]!))
    second.child.kill("SIGTERM")
    expect(resent.filter((status) => status !== 200)).toEqual([])
    const { lines, parsed } = logLines(home.stateDir)
    // A line cut by the kill is the only one allowed not to parse.
    expect(lines.length - parsed.length).toBeLessThanOrEqual(1)
    const logged = new Set(parsed.map((record) => record.task_id))
    expect(accepted.filter((taskId) => !logged.has(taskId))).toEqual([])
    expect(Array.from({ length: 3000 }, (_, index) => `burst-${index}`).filter((taskId) => !logged.has(taskId))).toEqual([])
    reportFigures("push receiver killed mid-burst", {
      "acknowledged before the kill": accepted.length,
      "acknowledged and lost": 0,
      "unparsable lines": lines.length - parsed.length,
      "after restart": `${parsed.length} of 3000 recorded`
    })
  }, 300_000)
})

// ---------------------------------------------------------------------------
// Two receivers on one log, and a follower (issue 27, item 16)

/** `relay notifications list --follow --json` on `stateDir`: how many times it printed each task id. */
const startFollower = (stateDir: string) =>
  new Promise<{ child: ChildProcess; seen: Map<string, number>; unreadable: () => number }>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, "notifications", "list", "--follow", "--json"], {
      env: { ...process.env, RELAY_HOME: stateDir, NO_COLOR: "1" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const seen = new Map<string, number>()
    let unreadable = 0
    let pending = ""
    child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
      const lines = (pending + chunk).split("\n")
      pending = lines.pop()!
      for (const line of lines) {
        try {
          const taskId = (JSON.parse(line) as { task_id: string }).task_id
          seen.set(taskId, (seen.get(taskId) ?? 0) + 1)
        } catch {
          unreadable++
        }
      }
    })
    let errors = ""
    const timer = setTimeout(() => reject(new Error(`the follower did not start within 20 s: ${errors}`)), 20_000)
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      errors += chunk
      if (errors.includes("Following notifications")) {
        clearTimeout(timer)
        resolve({ child, seen, unreadable: () => unreadable })
      }
    })
    child.on("error", reject)
  })

/** Resolves once `done()` holds; rejects after `timeoutMs`. */
const until = async (done: () => boolean, timeoutMs: number, what: string) => {
  const deadline = Date.now() + timeoutMs
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what} within ${timeoutMs} ms`)
    await new Promise((resolve) => setTimeout(resolve, 100))
  }
}

describe("two relay server push processes on one log, and a follower", () => {
  it("every acknowledged notification is read exactly once across many rotations", async () => {
    const home = tempHome()
    homes.push(home)
    const receivers = [await startReceiver(home.stateDir), await startReceiver(home.stateDir)]
    const follower = await startFollower(home.stateDir)
    // ~6.6 KB a line: the 5 MiB log rotates every ~800 notifications, about 15 times in this run.
    const posts = 12_000
    const padding = 6000
    const started = Date.now()
    const statuses = await runPool(posts, 64, (index) => deliver(receivers[index % 2]!.url, index, padding))
    const seconds = (Date.now() - started) / 1000
    const acknowledged = statuses.flatMap((status, index) => (status === 200 ? [`burst-${index}`] : []))
    await until(
      () => acknowledged.every((taskId) => follower.seen.has(taskId)),
      30_000,
      "the follower did not read every acknowledged notification"
    )
      .catch(() => undefined)
    // Late duplicates would show up within a few polls.
    await new Promise((resolve) => setTimeout(resolve, 1000))
    follower.child.kill("SIGTERM")
    for (const receiver of receivers) receiver.child.kill("SIGTERM")
    const missed = acknowledged.filter((taskId) => !follower.seen.has(taskId))
    const duplicated = [...follower.seen].filter(([, count]) => count > 1).map(([taskId]) => taskId)
    const failed = statuses.filter((status) => status !== 200)
    const logged = [`${home.stateDir}/notifications.ndjson.1`, `${home.stateDir}/notifications.ndjson`]
      .reduce((bytes, file) => bytes + (Fs.existsSync(file) ? Fs.statSync(file).size : 0), 0)
    reportFigures("two push receivers on one log, one follower", {
      posts,
      acknowledged: acknowledged.length,
      "not acknowledged": failed.length,
      "follower read": follower.seen.size,
      missed: missed.length,
      duplicated: duplicated.length,
      unreadable: follower.unreadable(),
      "posts/s": Math.round(posts / seconds),
      "MiB kept": (logged / 1024 / 1024).toFixed(1)
    })
    expect(failed).toEqual([])
    expect(missed).toEqual([])
    expect(duplicated).toEqual([])
    expect(follower.unreadable()).toBe(0)
  }, 300_000)
})

// ---------------------------------------------------------------------------
// A full disk (issue 27, item 17)

/** Stops a child and resolves once it has exited (SIGKILL after 5 s). */
const stopped = (child: ChildProcess) =>
  new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve()
    const timer = setTimeout(() => child.kill("SIGKILL"), 5000)
    child.once("exit", () => {
      clearTimeout(timer)
      resolve()
    })
    child.kill("SIGTERM")
  })

const FILLER_BYTES = 16 * 1024

/**
 * `relay server push` on a disk that fills up: a real 64 KiB tmpfs holding the state directory
 * beside a filler file the user deletes to make room; or, where this cannot mount one (not root),
 * the receiver in this process with the log's write on a simulated 64 KiB disk.
 */
const receiverOnSmallDisk = async () => {
  const tmpfs = mountTmpfs("64k")
  if (tmpfs !== undefined) {
    const filler = Path.join(tmpfs.dir, "filler")
    Fs.writeFileSync(filler, Buffer.alloc(FILLER_BYTES))
    const stateDir = Path.join(tmpfs.dir, "state")
    const { child, url } = await startReceiver(stateDir)
    return {
      disk: "tmpfs 64 KiB",
      stateDir,
      url,
      makeRoom: () => Fs.rmSync(filler),
      close: async () => {
        await stopped(child)
        tmpfs.unmount()
      }
    }
  }
  const home = tempHome()
  homes.push(home)
  const disk = simulatedDisk(64 * 1024 - FILLER_BYTES)
  const runtime = ManagedRuntime.make(
    webhookServerLayer({ host: "127.0.0.1", port: 0 }).pipe(
      Layer.provideMerge(NotificationLog.layer({ write: disk.write })),
      Layer.provideMerge(StateDir.layer),
      Layer.provideMerge(NodeContext.layer),
      Layer.provide(Layer.setConfigProvider(ConfigProvider.fromMap(new Map([["RELAY_HOME", home.stateDir]]))))
    )
  )
  return {
    disk: "simulated at the write (cannot mount a tmpfs here)",
    stateDir: home.stateDir,
    url: await runtime.runPromise(webhookBaseUrl),
    makeRoom: () => {
      disk.room = (disk.room ?? 0) + FILLER_BYTES
    },
    close: () => runtime.dispose()
  }
}

describe("relay server push on a full disk", () => {
  it("answers 5xx for what it could not write whole and loses nothing it acknowledged", async () => {
    const receiver = await receiverOnSmallDisk()
    const follower = await startFollower(receiver.stateDir)
    try {
      const statuses: Array<number> = []
      const refusedCount = () => statuses.filter((status) => status !== 200).length
      // One sender, so each post meets the disk as the one before left it; ~1.7 KB a line.
      while (refusedCount() < 3 && statuses.length < 300) statuses.push(await deliver(receiver.url, statuses.length, 1200))
      const filledAfter = statuses.length
      receiver.makeRoom()
      for (let n = 0; n < 5; n++) statuses.push(await deliver(receiver.url, statuses.length, 1200))

      const acknowledged = statuses.flatMap((status, index) => (status === 200 ? [`burst-${index}`] : []))
      const refused = statuses.flatMap((status, index) => (status === 200 ? [] : [{ index, status }]))
      await until(
        () => acknowledged.every((taskId) => follower.seen.has(taskId)),
        10_000,
        "the follower did not read every acknowledged notification"
      )
        .catch(() => undefined)
      await new Promise((resolve) => setTimeout(resolve, 500))
      const { lines, parsed } = logLines(receiver.stateDir)
      const logged = parsed.map((record) => record.task_id)
      reportFigures("push receiver on a full disk", {
        disk: receiver.disk,
        posts: statuses.length,
        acknowledged: acknowledged.length,
        "refused with 5xx": refused.filter(({ status }) => status >= 500).length,
        "acknowledged after room was made": statuses.slice(filledAfter).filter((status) => status === 200).length,
        "unparsable lines": lines.length - parsed.length,
        "acknowledged and lost": acknowledged.filter((taskId) => !logged.includes(taskId)).length,
        "follower missed": acknowledged.filter((taskId) => !follower.seen.has(taskId)).length
      })
      expect(refused.length).toBeGreaterThanOrEqual(3)
      expect(refused.filter(({ status }) => status < 500)).toEqual([])
      expect(statuses.slice(filledAfter)).toEqual([200, 200, 200, 200, 200])
      expect(lines.length - parsed.length).toBe(0)
      // Every acknowledged notification once, and none of those refused.
      expect(logged).toEqual(acknowledged)
      expect(acknowledged.filter((taskId) => follower.seen.get(taskId) !== 1)).toEqual([])
      expect(refused.filter(({ index }) => follower.seen.has(`burst-${index}`))).toEqual([])
      expect(follower.unreadable()).toBe(0)
    } finally {
      await stopped(follower.child)
      await receiver.close()
    }
  }, 120_000)
})
