/**
 * Push retries outlive the process (issue 34): `relay server agent` (dist/main.cjs) over the file
 * store posts a task's notifications to a webhook that answers 503; it is killed with SIGKILL while
 * they are being retried, started again on the same store, and the webhook (answering now) gets
 * each notification once.
 */
import type { ChildProcess } from "node:child_process"
import * as Fs from "node:fs"
import http from "node:http"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { startAgentServer } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { closeServer, listenOnLoopback, readBodyText } from "../peers/httpUtil.js"

const home = tempHome()
const storeDir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-push-restart-"))
const children: Array<ChildProcess> = []
afterAll(() => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL")
  home.cleanup()
  Fs.rmSync(storeDir, { recursive: true, force: true })
})

/** Starts the server on the store; resolves with it and its URL (the --json line) within 20 s. */
const startServer = async () => {
  const server = await startAgentServer(["-m", "echo", "--store", `file:${storeDir}`], {
    stateDir: home.stateDir,
    env: { RELAY_ECHO_DELAY_MS: "0" }
  })
  children.push(server.child)
  return { child: server.child, url: server.info.url }
}

/** A webhook answering 503 while `failing`; it keeps the bodies it answered 200, and calls `onFailure` at each 503. */
const startWebhook = async () => {
  const hook = {
    failing: true,
    failures: 0,
    delivered: [] as Array<string>,
    onFailure: (_count: number) => {},
    url: "",
    server: http.createServer((request, response) => {
      void readBodyText(request).then((body) => {
        if (hook.failing) {
          hook.failures++
          response.writeHead(503).end()
          hook.onFailure(hook.failures)
          return
        }
        hook.delivered.push(body)
        response.writeHead(200).end()
      })
    })
  }
  hook.url = `${await listenOnLoopback(hook.server)}/hook`
  return hook
}

const within = <A>(what: string, promise: Promise<A>, ms = 15_000) =>
  Promise.race([promise, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`timed out: ${what}`)), ms).unref())])

const exited = (child: ChildProcess) =>
  new Promise<void>((resolve) => child.exitCode !== null ? resolve() : child.once("exit", () => resolve()))

const stateOf = (body: string): string | undefined => {
  const parsed = JSON.parse(body) as { statusUpdate?: { status: { state: string } }; task?: { status: { state: string } } }
  return parsed.statusUpdate?.status.state ?? parsed.task?.status.state
}

describe("push deliveries of the file store across a kill -9", () => {
  it("are retried by the restarted server and arrive once each", async () => {
    const hook = await startWebhook()
    try {
      const first = await startServer()
      // The second failed attempt (the first retry): every update is recorded by then, the retries go on.
      const retried = new Promise<void>((resolve) => (hook.onFailure = (count) => count === 2 && resolve()))
      const response = await fetch(`${first.url}/`, {
        method: "POST",
        headers: { "content-type": "application/json", "a2a-version": "1.0" },
        body: JSON.stringify({
          jsonrpc: "2.0",
          id: 1,
          method: "SendMessage",
          params: {
            message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] },
            configuration: { taskPushNotificationConfig: { url: hook.url } }
          }
        }),
        signal: AbortSignal.timeout(10_000)
      })
      const task = ((await response.json()) as { result: { task: { id: string; status: { state: string } } } }).result.task
      expect(task.status.state).toBe("TASK_STATE_COMPLETED")
      await within("the first retry", retried)
      first.child.kill("SIGKILL")
      await exited(first.child)
      expect(hook.delivered).toEqual([])

      hook.failing = false
      const second = await startServer()
      await within(
        "the completed task's notification",
        (async () => {
          while (!hook.delivered.some((body) => stateOf(body) === "TASK_STATE_COMPLETED")) {
            await new Promise((resolve) => setTimeout(resolve, 50))
          }
        })()
      )
      second.child.kill("SIGTERM")
      await exited(second.child)

      // The snapshot the config got first, then the task's updates, each once and in order.
      const states = hook.delivered.map(stateOf)
      expect(JSON.parse(hook.delivered[0]!)).toHaveProperty("task")
      expect(new Set(hook.delivered).size).toBe(hook.delivered.length)
      expect(states.at(-1)).toBe("TASK_STATE_COMPLETED")
      expect(states.filter((state) => state === "TASK_STATE_COMPLETED")).toHaveLength(1)
      expect(hook.delivered.every((body) => JSON.stringify(JSON.parse(body)).includes(task.id))).toBe(true)
    } finally {
      await closeServer(hook.server)
    }
  }, 60_000)
})
