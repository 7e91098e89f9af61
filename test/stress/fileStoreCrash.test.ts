// The file task store under `kill -9` (issue 34): `relay server agent` (dist/main.cjs) takes a burst
// of 1000 SendMessage requests and is killed with SIGKILL in the middle of it; started again on the
// same directory, it has every task a client got an answer for, as that answer showed it.
import { describe, expect, it } from "vitest"
import { reportFigures, runPool } from "../helpers/figures.js"
import { fileStoreAgents } from "../helpers/fileStoreAgents.js"

const SENDS = 1000
const CONCURRENCY = 32
/** Acknowledged sends after which the server is killed. */
const KILL_AFTER = 400

const { start: startServer } = fileStoreAgents("relay-crash-store-")

const rpc = async (url: string, method: string, params: unknown) => {
  const response = await fetch(`${url}/`, {
    method: "POST",
    headers: { "content-type": "application/json", "a2a-version": "1.0" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
    signal: AbortSignal.timeout(10_000)
  })
  return (await response.json()) as { result?: Record<string, any> }
}

describe("the file task store killed with SIGKILL", () => {
  it("has every acknowledged task of a burst of 1000 sends after a restart", async () => {
    const first = await startServer()
    const acknowledged = new Map<string, string>()
    let refused = 0
    await runPool(SENDS, CONCURRENCY, async (index) => {
      try {
        const answer = await rpc(first.url, "SendMessage", {
          message: { messageId: `m-${index}`, role: "ROLE_USER", parts: [{ text: `burst ${index}` }] }
        })
        const task = answer.result?.["task"]
        if (task !== undefined) acknowledged.set(task["id"], task["status"]["state"])
      } catch {
        refused++
      }
      if (acknowledged.size === KILL_AFTER) first.child.kill("SIGKILL")
    })
    expect(acknowledged.size).toBeGreaterThanOrEqual(KILL_AFTER)
    expect(refused).toBeGreaterThan(0)

    const startedAt = Date.now()
    const second = await startServer()
    const restartMs = Date.now() - startedAt
    let lost = 0
    let changed = 0
    await runPool([...acknowledged.keys()].length, CONCURRENCY, async (index) => {
      const id = [...acknowledged.keys()][index]!
      const task = (await rpc(second.url, "GetTask", { id })).result
      if (task === undefined) lost++
      // Acknowledged completed stays completed; one acknowledged while working ends failed (the restart).
      else if (task["status"]["state"] !== acknowledged.get(id) && task["status"]["state"] !== "TASK_STATE_FAILED") changed++
    })
    second.child.kill("SIGTERM")
    reportFigures("file store, kill -9 mid-burst", {
      sends: SENDS,
      acknowledged: acknowledged.size,
      lost,
      "restart ms": restartMs
    })
    expect([lost, changed]).toEqual([0, 0])
  }, 120_000)
})
