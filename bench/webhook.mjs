// Webhook receiver: `relay server push` takes notifications (an A2A 1.0 StreamResponse status
// update, as `relay server agent` posts them) from concurrent senders as fast as it answers
// them (autocannon). The rate counts only notifications that were answered 200 and found in
// notifications.ndjson afterwards: every line is counted, and a single one missing fails the
// measurement. The log rotates at 5 MiB keeping one older file, so each round sends what fits in
// 9 MiB (after a warm-up), to a fresh receiver with its own state directory; the figure is the
// median of the rounds.
//
// The floor takes the same load in the same rounds (turns alternate): a bare node:http server
// appending each body as a line to a file (support/webhook-floor-server.mjs). It shows what the
// platform and the sender allow on this machine.
//
//   BENCH_PUSH_CONNECTIONS  concurrent senders (default 32)
//   BENCH_PUSH_ROUNDS       rounds (default 3)
import autocannon from "autocannon"
import { existsSync, readFileSync, statSync } from "node:fs"
import { join } from "node:path"
import {
  benchDir,
  listeningUrl,
  progress,
  relayBin,
  relayEnv,
  startServer,
  stop,
  tempRelayHome,
  withTimeout
} from "./support/processes.mjs"
import { median } from "./support/stats.mjs"

const connections = Number(process.env.BENCH_PUSH_CONNECTIONS ?? 32)
const rounds = Number(process.env.BENCH_PUSH_ROUNDS ?? 3)
const LOG_BUDGET_BYTES = 9 * 1024 ** 2
const MAX_NOTIFICATIONS = 20_000
const TIMEOUT_MS = 120_000
/** Sent (and counted) before the measured run, so both receivers are measured warmed up. */
const WARM_UP_NOTIFICATIONS = 1_000

const notification = JSON.stringify({
  statusUpdate: {
    taskId: "5b0d9f6e-0a51-4c1e-9d57-0c1b2f3a4d01",
    contextId: "5b0d9f6e-0a51-4c1e-9d57-0c1b2f3a4d02",
    status: {
      state: "TASK_STATE_WORKING",
      timestamp: "2026-01-01T00:00:00.000Z",
      message: { messageId: "m1", role: "ROLE_AGENT", parts: [{ text: "Working on it: 3 of 10 steps done." }] }
    }
  }
})
const headers = { "content-type": "application/a2a+json" }

const linesIn = (file) => (existsSync(file) ? readFileSync(file, "utf8").split("\n").filter((line) => line !== "").length : 0)

const firstLine = (text) => (text.includes("\n") ? text.slice(0, text.indexOf("\n")).trim() : undefined)

/** The receivers measured: how each starts in a fresh directory, and the files its lines land in. */
const SUBJECTS = [
  {
    id: "webhook.notifications_per_second",
    label: "relay server push, none lost",
    goal: { op: ">=", limit: 5000 },
    start: (dir) =>
      startServer("relay server push", process.execPath, [relayBin, "server", "push", "--host", "127.0.0.1", "--port", "0"], {
        env: relayEnv(dir),
        stream: "stderr",
        stdout: "ignore",
        findUrl: listeningUrl
      }),
    logged: (dir) => linesIn(join(dir, "notifications.ndjson")) + linesIn(join(dir, "notifications.ndjson.1"))
  },
  {
    id: "webhook.floor",
    label: "node:http appending lines to a file (floor)",
    start: (dir) =>
      startServer("webhook floor server", process.execPath, [
        join(benchDir, "support", "webhook-floor-server.mjs"),
        join(dir, "floor.ndjson")
      ], {
        findUrl: firstLine
      }),
    logged: (dir) => linesIn(join(dir, "floor.ndjson"))
  }
]

/**
 * Posts `amount` notifications from the concurrent senders; resolves with autocannon's result and
 * the seconds from the start to the last answer. (autocannon's own duration only ends on its
 * one-second tick, which would round a 2.2 s run up to 3 s.)
 */
const send = async (url, amount) => {
  let lastAnswerAt
  const start = performance.now()
  const run = autocannon({ url, method: "POST", headers, body: notification, connections, amount })
  run.on("response", () => (lastAnswerAt = performance.now()))
  const result = await withTimeout(run, TIMEOUT_MS, "autocannon")
  return { result, seconds: ((lastAnswerAt ?? performance.now()) - start) / 1000 }
}

/** Notifications per round: set by relay's first line (what fits in the log budget), the same for every subject. */
let amount

const round = async (subject, label) => {
  const dir = tempRelayHome()
  const receiver = await subject.start(dir)
  try {
    const url = `${receiver.url}/notifications`
    const first = await fetch(url, { method: "POST", headers, body: notification, signal: AbortSignal.timeout(10_000) })
    if (first.status !== 200 || subject.logged(dir) !== 1) {
      throw new Error(`${subject.label}: first notification ${first.status}, ${subject.logged(dir)} logged`)
    }
    amount ??= Math.min(
      MAX_NOTIFICATIONS,
      Math.floor(LOG_BUDGET_BYTES / statSync(join(dir, "notifications.ndjson")).size) - WARM_UP_NOTIFICATIONS
    )
    progress(`webhook: ${label}, ${subject.label}: ${amount} notifications from ${connections} senders`)
    await send(url, WARM_UP_NOTIFICATIONS)
    const { result, seconds } = await send(url, amount)
    const answered = result["2xx"]
    const logged = subject.logged(dir) - 1 - WARM_UP_NOTIFICATIONS
    if (answered !== amount || result.errors + result.timeouts + result.non2xx > 0 || logged !== answered) {
      throw new Error(
        `${subject.label}: ${amount} sent, ${answered} answered 200, ${logged} logged, ${result.errors} errors, ${result.non2xx} non-2xx`
      )
    }
    return logged / seconds
  } finally {
    await stop(receiver.child)
  }
}

export const measure = async () => {
  const rates = new Map(SUBJECTS.map((subject) => [subject.id, []]))
  for (let index = 0; index < rounds; index++) {
    for (let turn = 0; turn < SUBJECTS.length; turn++) {
      // Relay first in the first round: its first line sets the amount.
      const subject = SUBJECTS[(index + turn) % SUBJECTS.length]
      rates.get(subject.id).push(await round(subject, `round ${index + 1}/${rounds}`))
    }
  }
  const floor = median(rates.get("webhook.floor"))
  return SUBJECTS.map((subject) => {
    const value = median(rates.get(subject.id))
    return {
      id: subject.id,
      group: "Webhook receiver",
      label: subject.label,
      value,
      unit: "notifications/s",
      detail: `median of ${rounds} rounds, ${connections} senders`,
      ...(subject.goal === undefined ? {} : { goal: subject.goal }),
      ratios: subject.id === "webhook.floor" ? [] : [{ to: "floor", value: value / floor }]
    }
  })
}

export const settings = { connections, rounds, warmUpNotifications: WARM_UP_NOTIFICATIONS }
