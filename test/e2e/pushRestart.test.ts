/**
 * Push retries outlive the process (issue 34): `relay server agent` (dist/main.cjs) over the file
 * store posts a task's notifications to a webhook that answers 503; it is killed with SIGKILL while
 * they are being retried, started again on the same store, and the webhook (answering now) gets
 * each notification once.
 */
import type { ChildProcess } from "node:child_process"
import http from "node:http"
import { describe, expect, it } from "vitest"
import { fileStoreAgents } from "../helpers/fileStoreAgents.js"
import { closeServer, listenOnLoopback, readBodyText } from "../peers/httpUtil.js"
import { rpc } from "../servers/wire.js"

const { start: startServer } = fileStoreAgents("relay-push-restart-")

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
      const answer = await rpc(first.url, "SendMessage", {
        message: { messageId: "m-1", role: "ROLE_USER", parts: [{ text: "hello" }] },
        configuration: { taskPushNotificationConfig: { url: hook.url } }
      })
      const task = answer.json["result"]["task"]
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
