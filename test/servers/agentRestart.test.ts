// The agent server over the file store, stopped and started again on the same directory: what
// clients got answers for is still there, a task that was working ends failed saying the server
// restarted, and its push config delivers that update (so does a waiting task's config, later).
import { Effect, Layer } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { RESTARTED_MESSAGE } from "../../src/programs/agent/recovery.js"
import { taskStoreLayer } from "../../src/servers/agent/taskStores.js"
import * as TaskStorage from "../../src/services/TaskStorage.js"
import * as TaskStore from "../../src/services/TaskStore.js"
import { startWebhookSink, type WebhookSink } from "../peers/webhookSink.js"
import { type AgentHandle, eventually, startAgent } from "./agentHarness.js"
import { type Json, rpc, sendV1 } from "./wire.js"

let dir: string
let sink: WebhookSink
const running: Array<AgentHandle> = []

beforeAll(async () => {
  dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-restart-"))
  sink = await startWebhookSink()
})

afterAll(async () => {
  await Promise.all(running.map((agent) => agent.close()))
  await sink?.close()
  Fs.rmSync(dir, { recursive: true, force: true })
})

const startOnDir = async () => {
  const agent = await startAgent({ storeLayer: taskStoreLayer({ _tag: "file", dir }), model: "mock" })
  running.push(agent)
  return agent
}

const stop = async (agent: AgentHandle) => {
  running.splice(running.indexOf(agent), 1)
  await agent.close()
}

const getTask = async (base: string, id: string) => (await rpc(base, "GetTask", { id })).json["result"] as Json

const stateOf = (delivery: { readonly body: unknown }) => (delivery.body as Json)["statusUpdate"]?.["status"]?.["state"]

describe("the agent server restarted over its file store", () => {
  it("keeps finished and waiting tasks, fails the working ones with a push of that update, and goes on delivering", async () => {
    const first = await startOnDir()
    const done = await sendV1(first.baseUrl, "hello")
    expect(done["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    const asks = await sendV1(first.baseUrl, "input-required", {
      configuration: { taskPushNotificationConfig: { url: `${sink.url}/asks` } }
    })
    expect(asks["status"]["state"]).toBe("TASK_STATE_INPUT_REQUIRED")
    const working = await sendV1(first.baseUrl, "stream 100 every 1s", {
      configuration: { returnImmediately: true, taskPushNotificationConfig: { url: `${sink.url}/working` } }
    })
    await eventually(
      "the task working",
      async () => (await getTask(first.baseUrl, working["id"]))["status"]["state"] === "TASK_STATE_WORKING"
    )
    await stop(first)

    const second = await startOnDir()
    expect(await getTask(second.baseUrl, done["id"])).toEqual(done)
    expect((await getTask(second.baseUrl, asks["id"]))["status"]["state"]).toBe("TASK_STATE_INPUT_REQUIRED")
    const failed = await getTask(second.baseUrl, working["id"])
    expect(failed["status"]["state"]).toBe("TASK_STATE_FAILED")
    expect(failed["status"]["message"]["parts"]).toEqual([{ text: RESTARTED_MESSAGE }])
    const pushed = await sink.waitFor((delivery) => delivery.path === "/working" && stateOf(delivery) === "TASK_STATE_FAILED")
    expect((pushed.body as Json)["statusUpdate"]["taskId"]).toBe(working["id"])

    // The waiting task's config still gets its updates: answering it completes the task.
    const answered = await sendV1(second.baseUrl, "yes", { message: { taskId: asks["id"], contextId: asks["contextId"] } })
    expect(answered["status"]["state"]).toBe("TASK_STATE_COMPLETED")
    await sink.waitFor((delivery) => delivery.path === "/asks" && stateOf(delivery) === "TASK_STATE_COMPLETED")
    await stop(second)

    // A third start finds nothing working: the failure was delivered once.
    const third = await startOnDir()
    expect((await getTask(third.baseUrl, working["id"]))["status"]["state"]).toBe("TASK_STATE_FAILED")
    expect(sink.deliveries.filter((delivery) => delivery.path === "/working" && stateOf(delivery) === "TASK_STATE_FAILED").length).toBe(1)
  })
})

describe("the agent server stopping", () => {
  it("stops its push deliveries before it closes its store: none writes to the store once it closes", async () => {
    const failing = await startWebhookSink({ status: 503 })
    let rescheduled = 0
    let afterClose = 0
    let closing = false
    // The memory store, its deliveries counted, and the time its scope closes marked (then held a while,
    // for a delivery still running to show itself).
    const counted = (storage: TaskStorage.TaskStorage["Type"]): TaskStorage.TaskStorage["Type"] => ({
      ...storage,
      deliveries: {
        ...storage.deliveries,
        reschedule: (delivery) =>
          Effect.zipRight(
            Effect.sync(() => {
              rescheduled++
              if (closing) afterClose++
            }),
            storage.deliveries.reschedule(delivery)
          )
      }
    })
    const storeLayer = Layer.scoped(
      TaskStore.TaskStore,
      Effect.zipLeft(
        TaskStore.makeWithRetention((retention) => Effect.map(TaskStorage.make({}, retention), counted)),
        Effect.addFinalizer(() => Effect.zipRight(Effect.sync(() => (closing = true)), Effect.sleep("150 millis")))
      )
    )
    const agent = await startAgent({ storeLayer, model: "echo", push: { backoff: "1 millis", retries: 1_000_000 } })
    try {
      await sendV1(agent.baseUrl, "hello", { configuration: { taskPushNotificationConfig: { url: `${failing.url}/down` } } })
      await eventually("a delivery being retried", () => rescheduled >= 5)
    } finally {
      await agent.close()
      await failing.close()
    }
    expect(closing).toBe(true)
    expect(afterClose).toBe(0)
  })
})
