// Secrets never leak (issue 15, item 6). With known test secrets (the agent's API key, a bearer
// token, a push token, a wrong key), relay's real processes and its MCP tools are driven through
// a full loop; every channel is then scanned for any of them: stdout, stderr and --json of each
// command (errors and --verbose included), MCP results and progress messages, the servers'
// output and log lines, notifications.ndjson, the agent card and the servers' process titles.
// A masked secret shows its last 4 characters: a scan looks for everything before those.
import { ManagedRuntime } from "effect"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import { relayBin, runRelay } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { appLayer, type AppRuntime, callTool, connectTools, contextFor, textOf } from "../helpers/mcpTools.js"
import { tempHome } from "../helpers/stateHome.js"

const SECRETS = {
  agentKey: "agent-key-SECRET-4a1f9b2c7d",
  bearer: "bearer-token-SECRET-93ac51e0",
  pushToken: "push-token-SECRET-77d2c0aa",
  wrongKey: "wrong-key-SECRET-0b8e66f1"
}
const needles = Object.values(SECRETS).map((secret) => secret.slice(0, secret.length - 4))

const home = tempHome()
const children: Array<ChildProcess> = []
/** Every channel's text, by name. */
const channels: Array<{ readonly name: string; text: string }> = []
const channel = (name: string) => {
  const entry = { name, text: "" }
  channels.push(entry)
  return entry
}

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  home.cleanup()
})

/** A long-running relay server; resolves with its URL once it prints it (everything it prints is kept). */
const startServer = (args: ReadonlyArray<string>, env: Record<string, string>, name: string) =>
  new Promise<{ child: ChildProcess; url: string }>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", ...env },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const out = channel(`${name} stdout`)
    const err = channel(`${name} stderr`)
    const timer = setTimeout(() => reject(new Error(`${name} printed no URL within 20 s: ${out.text}${err.text}`)), 20_000)
    const look = () => {
      const found = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out.text + err.text)
      if (found === null) return
      clearTimeout(timer)
      resolve({ child, url: found[1]! })
    }
    child.stdout!.on("data", (chunk) => {
      out.text += String(chunk)
      look()
    })
    child.stderr!.on("data", (chunk) => {
      err.text += String(chunk)
      look()
    })
  })

const relay = async (name: string, args: ReadonlyArray<string>) => {
  const result = await runRelay(args, { stateDir: home.stateDir, timeoutMs: 30_000 })
  channel(`relay ${name}: stdout`).text = result.stdout
  channel(`relay ${name}: stderr`).text = result.stderr
  return result
}

const processTitle = (child: ChildProcess) => Fs.readFileSync(`/proc/${child.pid}/cmdline`, "utf8").replaceAll("\u0000", " ")

describe("known secrets through every channel", () => {
  it("appear in none of them", async () => {
    // The servers take their secrets from the environment, out of the process list.
    const agent = await startServer(["server", "agent", "--host", "127.0.0.1", "--port", "0", "--auth", "-m", "echo"], {
      RELAY_AGENT_KEY: SECRETS.agentKey
    }, "agent server")
    const push = await startServer(["server", "push", "--port", "0"], { RELAY_PUSH_TOKEN: SECRETS.pushToken }, "push receiver")
    const pushUrl = `${push.url}/notifications`

    // Terminal commands: send with a push token, read configs, errors, --verbose, --json.
    const sent = await relay("send --json", [
      "message",
      "send",
      "--url",
      agent.url,
      "--api-key",
      SECRETS.agentKey,
      "--push-url",
      pushUrl,
      "--push-token",
      SECRETS.pushToken,
      "--json",
      "hello"
    ])
    expect(sent.code, sent.stderr).toBe(0)
    const taskId = (JSON.parse(sent.stdout) as { task_id: string }).task_id
    await relay("send --verbose", ["message", "send", "--url", agent.url, "--api-key", SECRETS.agentKey, "--verbose", "hello again"])
    await relay("stream", ["message", "stream", "--url", agent.url, "--api-key", SECRETS.agentKey, "streamed"])
    await relay("auth set", ["auth", "set", "--url", agent.url, "--api-key", SECRETS.agentKey])
    await relay("auth show", ["auth", "show", "--url", agent.url])
    await relay("auth show --json", ["auth", "show", "--url", agent.url, "--json"])
    await relay("session list --json", ["session", "list", "--json"])
    await relay("notification set", [
      "task",
      "notification",
      "set",
      "--url",
      agent.url,
      taskId,
      "--webhook-url",
      pushUrl,
      "--webhook-token",
      SECRETS.pushToken
    ])
    await relay("notification list --json", ["task", "notification", "list", "--url", agent.url, taskId, "--json"])
    await relay("card get --authenticated", ["card", "get", "--url", agent.url, "--authenticated"])
    const refused = await relay("wrong key", [
      "message",
      "send",
      "--url",
      agent.url,
      "--api-key",
      SECRETS.wrongKey,
      "--verbose",
      "who am I"
    ])
    expect(refused.code).toBe(3) // authentication needed: the key was refused
    await relay("wrong bearer --json", ["task", "get", "--url", agent.url, "--bearer-token", SECRETS.bearer, "--json", taskId])
    await relay("unreachable bearer", [
      "message",
      "send",
      "--url",
      "http://127.0.0.1:9",
      "--bearer-token",
      SECRETS.bearer,
      "--verbose",
      "x"
    ])
    await relay("notifications list --json", ["notifications", "list", "--json"])

    // MCP tools, with progress.
    const runtime: AppRuntime = ManagedRuntime.make(appLayer(home.stateDir))
    try {
      const mcp = await connectTools(contextFor(runtime))
      const progress = channel("MCP progress")
      const results = channel("MCP results")
      const onprogress = (update: { message?: string | undefined }) => {
        progress.text += `${update.message ?? ""}\n`
      }
      const calls: Array<[string, Record<string, unknown>]> = [
        ["set_agent_credentials", { agent_url: agent.url, api_key: SECRETS.agentKey }],
        ["send_message", { agent_url: agent.url, message: "via mcp", stream: true, push_url: pushUrl, push_token: SECRETS.pushToken }],
        ["send_message", { agent_url: agent.url, message: "bearer", bearer_token: SECRETS.bearer }],
        ["send_message", { agent_url: agent.url, message: "wrong", api_key: SECRETS.wrongKey }],
        ["list_task_notifications", { agent_url: agent.url, task_id: taskId }],
        ["get_session_info", { agent_url: agent.url }],
        ["list_sessions", {}],
        ["get_push_notifications", {}],
        ["get_agent_card", { agent_url: agent.url }]
      ]
      for (const [tool, args] of calls) {
        const result = await callTool(mcp, tool, args, { onprogress, timeoutMs: 30_000 })
        results.text += `${textOf(result)}\n${JSON.stringify(result.structuredContent ?? {})}\n`
      }
      await mcp.close()
    } finally {
      await runtime.dispose()
    }

    // Files, the card, and the process titles.
    channel("notifications.ndjson").text = Fs.readFileSync(Path.join(home.stateDir, "notifications.ndjson"), "utf8")
    channel("agent card").text = await (await fetch(`${agent.url}/.well-known/agent-card.json`)).text()
    channel("agent server process title").text = processTitle(agent.child)
    channel("push receiver process title").text = processTitle(push.child)
    // The log did receive the pushes (with a token present), so it was worth scanning.
    expect(channels.find((entry) => entry.name === "notifications.ndjson")!.text).toContain("\"token_present\":true")
    agent.child.kill("SIGTERM")
    push.child.kill("SIGTERM")

    const leaks = channels.flatMap((entry) =>
      needles.filter((needle) => entry.text.includes(needle)).map((needle) => `${entry.name}: ${needle}`)
    )
    expect(leaks).toEqual([])
    reportFigures("secrets", {
      secrets: needles.length,
      "channels scanned": channels.length,
      "bytes scanned": channels.reduce((sum, entry) => sum + entry.text.length, 0),
      "secrets leaked": leaks.length
    })
  }, 240_000)
})
