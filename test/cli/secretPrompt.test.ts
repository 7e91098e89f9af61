/**
 * Secrets given as "-" (issue 28 items 7 and 16), with the built CLI on a real pseudo-terminal
 * (test/helpers/terminal.ts): on a terminal relay asks for the secret with echo off and takes it
 * at Enter; piped, it reads stdin as before. `relay server agent --auth` prints a ready
 * `relay auth set … --api-key -` line that puts the key on no command line, and pasting the key at
 * that command's prompt saves it for relay.
 */
import { type ChildProcess, spawn } from "node:child_process"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { onTerminal } from "../helpers/terminal.js"

const SECRET = "typed-secret-0123456789abcdef"
const home = tempHome()
const relay = (args: ReadonlyArray<string>, input?: string) =>
  runRelay(args, { stateDir: home.stateDir, ...(input === undefined ? {} : { input }) })
const savedFor = async (url: string) =>
  (JSON.parse((await relay(["auth", "show", "--url", url, "--json"])).stdout) as {
    credentials: { auth_type: string; masked: string } | null
  }).credentials

const children: Array<ChildProcess> = []

beforeAll(() => {
  requireBuiltRelay()
})

afterAll(() => {
  for (const child of children) child.kill("SIGKILL")
  home.cleanup()
})

describe("a secret typed on a terminal", () => {
  it("auth set --bearer-token - asks \"Bearer token: \", echoes nothing and ends at Enter", async () => {
    const terminal = onTerminal(["auth", "set", "--url", "http://typed.test", "--bearer-token", "-"], { stateDir: home.stateDir })
    await terminal.waitFor(/Bearer token: $/)
    // Typed one key at a time, as a person does; stdin stays open: Enter alone ends it.
    for (const key of SECRET) terminal.type(key)
    terminal.type("\r")
    expect(await terminal.exited).toBe(0)
    expect(terminal.screen()).toBe("Bearer token: \r\nSaved bearer token for http://typed.test\r\n")
    expect(await savedFor("http://typed.test")).toMatchObject({ auth_type: "bearer", masked: `…${SECRET.slice(-4)}` })
  })

  it("auth set --api-key - asks \"API key: \"; Ctrl-C there stops with 130 and saves nothing", async () => {
    const terminal = onTerminal(["auth", "set", "--url", "http://stopped.test", "--api-key", "-"], { stateDir: home.stateDir })
    await terminal.waitFor(/API key: $/)
    terminal.type("half-typed\u0003")
    expect(await terminal.exited).toBe(130)
    expect(terminal.screen()).not.toContain("half-typed")
    expect(terminal.screen()).toContain("error: interrupted by SIGINT")
    expect(await savedFor("http://stopped.test")).toBeNull()
  })

  it("piped into stdin it is read as before, with no prompt", async () => {
    const result = await relay(["auth", "set", "--url", "http://piped.test", "--bearer-token", "-"], `${SECRET}\n`)
    expect(result.code).toBe(0)
    expect(result.stderr).toBe("")
    expect(await savedFor("http://piped.test")).toMatchObject({ masked: `…${SECRET.slice(-4)}` })
  })
})

describe("relay server agent --auth", () => {
  it("prints a ready relay auth set line without the key, whose prompt takes the pasted key", async () => {
    const agent = spawn(process.execPath, [relayBin, "server", "agent", "--host", "127.0.0.1", "--port", "0", "-m", "echo", "--auth"], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", OLLAMA_HOST: "127.0.0.1:9" },
      stdio: ["ignore", "ignore", "pipe"]
    })
    children.push(agent)
    let stderr = ""
    agent.stderr.on("data", (chunk) => (stderr += chunk))
    const deadline = Date.now() + 15_000
    while (!/Press Ctrl\+C/.test(stderr)) {
      if (Date.now() > deadline) throw new Error(`the agent did not start: ${stderr}`)
      await new Promise((resolve) => setTimeout(resolve, 25))
    }
    const key = /Generated key: (\S+)/.exec(stderr)![1]!
    const ready = /^Save it for relay: relay (auth set --url (\S+) --api-key -)$/m.exec(stderr)
    expect(ready, stderr).not.toBeNull()
    expect(stderr).toMatch(/paste the key at its "API key:" prompt/)
    // The key is shown once, on its own line, and never as part of a command to run.
    expect(stderr.split("\n").filter((line) => line.includes(key))).toEqual([expect.stringMatching(/^API key required .*Generated key: /)])

    const agentUrl = ready![2]!
    const terminal = onTerminal(ready![1]!.split(" "), { stateDir: home.stateDir })
    await terminal.waitFor(/API key: $/)
    terminal.type(`${key}\r`)
    expect(await terminal.exited).toBe(0)
    expect(terminal.screen()).not.toContain(key)
    // The saved key opens what the agent keeps for clients with the key: its extended card.
    const card = await relay(["card", "get", "--url", agentUrl, "--authenticated"])
    expect(card.code, card.stderr).toBe(0)
    expect(card.stdout).toContain("Model chosen because")
  })
})
