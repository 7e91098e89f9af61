/**
 * The whole push loop through real processes, as the README walks it: `relay server push`,
 * `relay server agent`, `relay message send --push-url`, then the notifications read back with
 * `relay notifications list` and with the MCP tool `get_push_notifications` of a spawned `relay mcp`.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const home = tempHome()
const children: Array<ChildProcess> = []

/** Starts a long-running relay command and resolves with the first line of its output that matches. */
const startServer = (args: ReadonlyArray<string>, pattern: RegExp, stream: "stdout" | "stderr") =>
  new Promise<RegExpMatchArray>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", RELAY_ECHO_DELAY_MS: "0" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    let seen = ""
    const timer = setTimeout(() => reject(new Error(`relay ${args.join(" ")} did not start: ${seen}`)), 15_000)
    child[stream].on("data", (chunk) => {
      seen += chunk
      const match = seen.match(pattern)
      if (match) {
        clearTimeout(timer)
        resolve(match)
      }
    })
    child.on("exit", (code) => reject(new Error(`relay ${args.join(" ")} exited ${code}: ${seen}`)))
  })

const relay = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir })

const waitFor = async <A>(what: string, probe: () => Promise<A | undefined>, timeoutMs = 15_000): Promise<A> => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const found = await probe()
    if (found !== undefined) return found
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await new Promise((resolve) => setTimeout(resolve, 200))
  }
}

interface Listed {
  readonly task_id: string | null
  readonly state: string | null
  readonly text: string | null
  readonly protocol: string
}

let agentUrl = ""
let pushUrl = ""

beforeAll(async () => {
  const [, receiver] = await startServer(["server", "push", "--port", "0"], /Push URL[^:]*: (http:\/\/\S+)/, "stderr")
  const [, agent] = await startServer(
    ["server", "agent", "--host", "127.0.0.1", "--port", "0", "-m", "echo", "--json"],
    /"url":"(http:\/\/[^"]+)"/,
    "stdout"
  )
  pushUrl = receiver!
  agentUrl = agent!
}, 30_000)

afterAll(() => {
  for (const child of children) child.kill("SIGINT")
  home.cleanup()
})

describe("push loop: our agent server → our receiver → CLI and MCP", () => {
  it("delivers every task event and both doors read them", async () => {
    const sent = await relay(["message", "send", "--url", agentUrl, "--push-url", pushUrl, "--json", "hello push loop"])
    expect(sent.code).toBe(0)
    const result = JSON.parse(sent.stdout) as { task_id: string; state: string }
    expect(result.state).toBe("completed")

    // The agent posts each event of the task: the task, working, the answer, completed.
    const listed = await waitFor("the completed notification", async () => {
      const out = await relay(["notifications", "list", "--task-id", result.task_id, "--json"])
      const records = (JSON.parse(out.stdout) as { notifications: ReadonlyArray<Listed> }).notifications
      return records.some((r) => r.state === "completed") ? records : undefined
    })
    expect(listed.every((r) => r.task_id === result.task_id && r.protocol === "1.0")).toBe(true)
    expect(listed.map((r) => r.state)).toContain("working")
    expect(listed.some((r) => r.text?.includes("hello push loop"))).toBe(true)

    const client = new Client({ name: "push-loop-test", version: "1.0.0" })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [relayBin, "mcp"],
        env: { ...process.env as Record<string, string>, RELAY_HOME: home.stateDir },
        stderr: "ignore"
      })
    )
    try {
      const tool = await client.callTool({ name: "get_push_notifications", arguments: { task_id: result.task_id } })
      expect(tool.isError).not.toBe(true)
      const structured = tool.structuredContent as { count: number; notifications: ReadonlyArray<Listed> }
      expect(structured.count).toBe(listed.length)
      expect(structured.notifications.map((n) => n.state)).toEqual(listed.map((r) => r.state))
    } finally {
      await client.close()
    }
  }, 60_000)
})
