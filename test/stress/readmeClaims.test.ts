/**
 * What README.md says relay does, done with the built CLI (`npm run build` first) against relay's own
 * servers on loopback (issue 28, "the README and the behaviour agree"): the Quick start as written,
 * the examples it gives, the JSON rules it states, the `relay check` sample, the model forms,
 * `relay task list` as a table, and the examples of "Files and data" at the terminal and over MCP. test/cli/namedFlags.test.ts holds the README to the commands and
 * options that exist; this holds it to what they do.
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js"
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js"
import { type CallToolResult, ListRootsRequestSchema } from "@modelcontextprotocol/sdk/types.js"
import { type ChildProcess, spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { pathToFileURL } from "node:url"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CliResult, relayBin, requireBuiltRelay, runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"

const README = Fs.readFileSync(Path.join(import.meta.dirname, "../../README.md"), "utf8")
/** The Quick start's addresses; the tests' servers listen on free ports instead. */
const README_AGENT = "http://127.0.0.1:8000"
const README_PUSH = "http://127.0.0.1:9000"

const home = tempHome()
/** The folder MCP client files go to (HOME and XDG_CONFIG_HOME of the commands that write them). */
const clientHome = Path.join(home.parent, "client-home")
const clientEnv = { HOME: clientHome, XDG_CONFIG_HOME: Path.join(clientHome, ".config"), CODEX_HOME: "" }
const relay = (args: ReadonlyArray<string>, env: Record<string, string> = {}) => runRelay(args, { stateDir: home.stateDir, env })
const json = <A = Record<string, unknown>>(result: CliResult): A => {
  if (result.code !== 0) throw new Error(`exit ${result.code}: ${result.stderr}`)
  return JSON.parse(result.stdout) as A
}

// ---------------------------------------------------------------------------------------------
// The README's code

/** The lines of the fenced block that holds `marker`, or else the first one after it. */
const blockAfter = (marker: string): Array<string> => {
  const from = README.indexOf(marker)
  if (from < 0) throw new Error(`README has no "${marker}"`)
  const block = [...README.matchAll(/^```[^\n]*\n([\s\S]*?)^```/gm)].find((match) => match.index + match[0].length > from)
  return block![1]!.split("\n").filter((line) => line.trim() !== "")
}

/** A shell line without its comment, split into words (the README's examples quote with "…" only). */
const wordsOf = (line: string) => [...line.replace(/\s+#\s.*$/, "").matchAll(/"([^"]*)"|(\S+)/g)].map((match) => match[1] ?? match[2]!)

/** The README line of a block that starts with `start`, as words after `relay`. */
const relayLine = (lines: ReadonlyArray<string>, start: string) => {
  const line = lines.find((candidate) => candidate.startsWith(start))
  if (line === undefined) throw new Error(`README has no line starting "${start}"`)
  return wordsOf(line).slice(1)
}

/** The Quick start's addresses replaced by the servers these tests started. */
const onOurServers = (words: ReadonlyArray<string>) =>
  words.map((word) => word.replaceAll(README_AGENT, agentUrl).replaceAll(README_PUSH, pushBase))

// ---------------------------------------------------------------------------------------------
// relay's own servers, started as the Quick start starts them (on free ports, with --json for the address)

const children: Array<ChildProcess> = []

interface Server {
  readonly child: ChildProcess
  readonly started: Record<string, unknown>
  readonly output: { stdout: string; stderr: string }
}

const serve = (args: ReadonlyArray<string>) =>
  new Promise<Server>((resolve, reject) => {
    const child = spawn(process.execPath, [relayBin, ...args], {
      env: { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1", OLLAMA_HOST: "127.0.0.1:9" },
      stdio: ["ignore", "pipe", "pipe"]
    })
    children.push(child)
    const output = { stdout: "", stderr: "" }
    const timer = setTimeout(() => reject(new Error(`relay ${args.join(" ")} did not start: ${JSON.stringify(output)}`)), 15_000)
    child.stderr.on("data", (chunk) => (output.stderr += chunk))
    child.stdout.on("data", (chunk) => {
      output.stdout += chunk
      const line = /^(\{.*\})\n/.exec(output.stdout)
      if (line !== null) {
        clearTimeout(timer)
        resolve({ child, started: JSON.parse(line[1]!) as Record<string, unknown>, output })
      }
    })
    child.on("exit", (code) => reject(new Error(`relay ${args.join(" ")} exited ${code}: ${JSON.stringify(output)}`)))
  })

let agentUrl = ""
let pushBase = ""
let receiver: Server

beforeAll(async () => {
  requireBuiltRelay()
  // The Quick start's agent (first block) and receiver (second block), each as the README writes it.
  const agentLine = wordsOf(blockAfter("## Quick start").find((line) => line.includes(" server agent "))!)
  expect(agentLine.slice(0, 2)).toEqual(["node", "dist/main.cjs"])
  const pushLine = relayLine(blockAfter("Then, in a second terminal"), "relay server push")
  expect(pushLine.at(-1)).toBe("&")
  const [agent, push] = await Promise.all([
    serve([...agentLine.slice(2), "--port", "0", "--json"]),
    serve([...pushLine.slice(0, -1), "--port", "0", "--json"])
  ])
  agentUrl = agent.started["url"] as string
  receiver = push
  pushBase = new URL(push.started["url"] as string).origin
}, 30_000)

afterAll(() => {
  for (const child of children) child.kill("SIGINT")
  home.cleanup()
})

describe("the Quick start, as written", () => {
  it("runs the agent in the foreground, says how long the tests take, and puts relay on PATH before the second terminal", () => {
    const quickStart = README.slice(README.indexOf("## Quick start"), README.indexOf("## Connect an AI assistant"))
    expect(quickStart).toMatch(/server agent --host 127\.0\.0\.1 .*in the foreground/)
    expect(quickStart).toMatch(/`npm ci && npm test`[^.]*about \d+ minutes/)
    expect(blockAfter("Then, in a second terminal")[0]).toMatch(/^npm link\s/)
  })

  it("every relay line of the second terminal works against the agent and the receiver the Quick start started", async () => {
    const lines = blockAfter("Then, in a second terminal").filter((line) =>
      line.startsWith("relay ") && !line.startsWith("relay server push")
    )
    expect(lines.length).toBeGreaterThan(5)
    for (const line of lines) {
      const result = await relay(onOurServers(wordsOf(line).slice(1)), clientEnv)
      expect(result.code, `${line}\n${result.stderr}`).toBe(0)
    }
    const listed = json<{ count: number }>(await relay(["notifications", "list", "--json"]))
    expect(listed.count).toBeGreaterThan(0)
  }, 60_000)

  it("relay server push --quiet & prints nothing into the terminal it shares, not even for each notification", async () => {
    expect(receiver.output.stderr).toBe("")
    // With --json only its address, the first line; the notifications the test above sent printed nothing.
    expect(receiver.output.stdout.trim().split("\n")).toHaveLength(1)
    expect(receiver.started).toEqual({
      url: expect.stringMatching(/^http:\/\/127\.0\.0\.1:\d+$/),
      push_url: `${receiver.started["url"]}/notifications`,
      token_required: false,
      log_file: Path.join(home.stateDir, "notifications.ndjson")
    })
  })
})

describe("relay server push --json", () => {
  it("prints its address as one JSON line on stdout first, as the README says", async () => {
    expect(README.replace(/\s+/g, " ")).toContain("Servers started with `--json` print their address as one JSON line on stdout first")
    const loud = await serve(["server", "push", "--port", "0", "--json"])
    expect(Object.keys(loud.started)).toEqual(["url", "push_url", "token_required", "log_file"])
    expect(loud.output.stderr).toContain(`Push URL (--push-url / push_url): ${loud.started["push_url"]}`)
    loud.child.kill("SIGINT")
  })
})

describe("examples of the README", () => {
  const examples = () => blockAfter("A=http://127.0.0.1:8000")

  it("relay card get --url $A > agent-card.json saves a card that relay card validate --file finds valid", async () => {
    const save = examples().find((line) => line.startsWith("relay card get") && line.includes("> agent-card.json"))!
    const words = wordsOf(save).slice(1).map((word) => word.replace("$A", agentUrl))
    const saved = await relay(words.slice(0, words.indexOf(">")))
    expect(saved.code).toBe(0)
    const file = Path.join(home.parent, "agent-card.json")
    Fs.writeFileSync(file, saved.stdout)
    expect(examples()).toContain("relay card validate ./agent-card.json --file")
    const validated = await relay(["card", "validate", file, "--file"])
    expect(validated.stdout).toMatch(/^Valid agent card\n/)
    expect(validated.code).toBe(0)
  })

  it("uses no shell variable before it is set ($A is; $KEY was not)", () => {
    const code = [...README.matchAll(/```(?:sh|bash)?\n([\s\S]*?)```/g)].flatMap((block) => block[1]!.split("\n"))
    const set = new Set(["HOME", "PATH", "RELAY_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "CODEX_HOME"])
    const unset: Array<string> = []
    for (const line of code.map((text) => text.replace(/\s+#\s.*$/, ""))) {
      for (const [, name] of line.matchAll(/\$\{?([A-Za-z_]\w*)/g)) if (!set.has(name!)) unset.push(`$${name} in: ${line}`)
      for (const [, name] of line.matchAll(/(?:^|\s)([A-Za-z_]\w*)=/g)) set.add(name!)
    }
    expect(unset).toEqual([])
  })

  it("relay mcp uninstall after --name a2a removes that entry", async () => {
    const lines = blockAfter("relay mcp install --client cursor --scope project")
    const install = relayLine(lines, "relay mcp install --client vscode --name a2a")
    const uninstall = relayLine(lines, "relay mcp uninstall --client vscode")
    expect(json(await relay([...install, "--json"], clientEnv))).toMatchObject({ name: "a2a", action: "added" })
    expect(json(await relay([...uninstall, "--json"], clientEnv))).toMatchObject({ name: "a2a", action: "removed" })
  })
})

describe("push configs, as the command table says", () => {
  const newTask = async () => json<{ task_id: string }>(await relay(["message", "send", "--url", agentUrl, "a task", "--json"])).task_id
  const setConfig = async (taskId: string, hook: string) =>
    json<{ config_id: string }>(
      await relay(["task", "notification", "set", "--url", agentUrl, taskId, "--webhook-url", `${pushBase}/${hook}`, "--json"])
    ).config_id

  it("task notification get without --config-id shows the newest config", async () => {
    expect(README).toContain("One push config (the newest without `--config-id`)")
    const taskId = await newTask()
    await setConfig(taskId, "older")
    const newest = await setConfig(taskId, "newer")
    const shown = json(await relay(["task", "notification", "get", "--url", agentUrl, taskId, "--json"]))
    expect(shown).toMatchObject({ config_id: newest, url: `${pushBase}/newer` })
  })

  it("deleting a config that does not exist is not_found, exit 1 (relay's agent answers TaskNotFound), not Deleted", async () => {
    expect(README).toContain("A missing config answers TaskNotFoundError")
    const taskId = await newTask()
    const configId = await setConfig(taskId, "gone")
    const deleted = await relay(["task", "notification", "delete", "--url", agentUrl, taskId, "--config-id", configId])
    expect(deleted.stdout).toMatch(/^Deleted\n/)
    const again = await relay(["task", "notification", "delete", "--url", agentUrl, taskId, "--config-id", configId, "--json"])
    expect(again.code).toBe(1)
    expect(again.stdout).toBe("")
    expect(JSON.parse(again.stderr)).toMatchObject({ error: { code: "not_found", message: expect.stringContaining(configId) } })
  })
})

describe("--json, as the README states it", () => {
  /** Every path of a JSON value whose value is "", except `text` (always a string, "" when there is none). */
  const emptyStrings = (value: unknown, path = ""): Array<string> =>
    typeof value === "string"
      ? (value === "" && !path.endsWith(".text") ? [path] : [])
      : typeof value === "object" && value !== null
      ? Object.entries(value).flatMap(([key, inner]) => emptyStrings(inner, `${path}.${key}`))
      : []

  it("writes null, never \"\", for a value that is absent", async () => {
    const sent = json<{ task_id: string }>(await relay(["message", "send", "--url", agentUrl, "configured", "--json"]))
    await relay(["task", "notification", "set", "--url", agentUrl, sent.task_id, "--webhook-url", `${pushBase}/hook`])
    const commands = [
      ["message", "send", "--url", agentUrl, "hello"],
      ["task", "get", "--url", agentUrl, sent.task_id],
      ["task", "list", "--url", agentUrl],
      ["task", "notification", "get", "--url", agentUrl, sent.task_id],
      ["task", "notification", "list", "--url", agentUrl, sent.task_id],
      ["session", "list"],
      ["session", "show", "--url", "http://never.test"],
      ["auth", "show", "--url", agentUrl],
      ["notifications", "list", "--limit", "3"],
      ["card", "get", "--url", agentUrl],
      ["card", "validate", agentUrl],
      ["mcp", "config", "--client", "codex"]
    ]
    for (const command of commands) {
      const output = json(await relay([...command, "--json"], clientEnv))
      expect(emptyStrings(output), command.join(" ")).toEqual([])
    }
    // A stream's NDJSON: every update and the result.
    const streamed = await relay(["message", "stream", "--url", agentUrl, "streamed", "--json"], clientEnv)
    const lines = streamed.stdout.trim().split("\n").map((line) => JSON.parse(line) as unknown)
    expect(lines.length).toBeGreaterThan(1)
    for (const line of lines) expect(emptyStrings(line), "message stream").toEqual([])
    // Fifteen runs of the CLI: about 15 s on a quiet machine, twice that when it is busy.
  }, 90_000)

  it("message send --json and task get --json have the same keys, in the same order", async () => {
    expect(README).toContain("`message send --json` and `task get --json` have the same keys")
    const sent = json(await relay(["message", "send", "--url", agentUrl, "same keys", "--json"]))
    const got = json(await relay(["task", "get", "--url", agentUrl, sent["task_id"] as string, "--json"]))
    expect(Object.keys(sent)).toEqual(Object.keys(got))
    expect(Object.keys(got)).toEqual([
      "task_id",
      "context_id",
      "state",
      "text",
      "parts",
      "needs_input",
      "needs_auth",
      "kind",
      "updated_at",
      "binding",
      "protocol_version"
    ])
    expect(got).toEqual({ ...sent, updated_at: got["updated_at"] })
  })

  it("session clear reports kept credentials only when there were some", async () => {
    const fresh = tempHome()
    const inFresh = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: fresh.stateDir })
    try {
      const none = await inFresh(["session", "clear", "--all"])
      expect(none.code).toBe(0)
      expect(none.stdout).toBe("Cleared 0 session(s)\n")
      expect(json(await inFresh(["session", "clear", "--url", agentUrl, "--json"]))).toMatchObject({ credentials_kept: false })

      const saved = await runRelay(["auth", "set", "--url", agentUrl, "--bearer-token", "-"], {
        stateDir: fresh.stateDir,
        input: "a-saved-token-0123456789\n"
      })
      expect(saved.code).toBe(0)
      const kept = await inFresh(["session", "clear", "--url", agentUrl])
      expect(kept.stdout).toContain("Saved credentials were kept; remove them with relay auth clear.")
      expect(json(await inFresh(["session", "clear", "--all", "--json"]))).toMatchObject({ credentials_kept: true })
    } finally {
      fresh.cleanup()
    }
  })
})

describe("the relay check sample", () => {
  it("is what relay check prints for the Quick start's agent: its lines, in order, and its summary", async () => {
    const sample = blockAfter("```\n$ relay check")
    const command = wordsOf(sample[0]!.replace(/^\$ /, "")).slice(1)
    const result = await relay(onOurServers(command))
    expect(result.code, result.stderr).toBe(0)
    const printed = result.stdout.split("\n")
    let at = 0
    for (const line of sample.slice(1).filter((line) => line !== "…").map((line) => line.replaceAll(README_AGENT, agentUrl))) {
      const found = printed.indexOf(line, at)
      expect(found, `README sample line not printed (in order): ${line}\n${result.stdout}`).toBeGreaterThanOrEqual(0)
      at = found + 1
    }
    expect(sample.at(-1)).toBe(printed.filter((line) => line !== "").at(-1))
  }, 60_000)
})

describe("model forms", () => {
  const FORMS = ["echo", "mock", "ollama:<name>", "openai:<name>", "gateway:<name>"]

  it("an invalid RELAY_MODEL's hint, and doctor's fix, name every form --model takes, mock included", async () => {
    const agent = await runRelay(["server", "agent", "--port", "0", "--json"], { stateDir: home.stateDir, env: { RELAY_MODEL: "bogus" } })
    expect(agent.code).toBe(1)
    const { error } = JSON.parse(agent.stderr) as { error: { code: string; hint: string } }
    expect(error.code).toBe("invalid_model_spec")
    for (const form of FORMS) expect(error.hint).toContain(form)

    const doctor = await runRelay(["doctor", "--json"], {
      stateDir: home.stateDir,
      env: { RELAY_MODEL: "bogus", ...clientEnv },
      timeoutMs: 60_000
    })
    const model = (JSON.parse(doctor.stdout) as { checks: Array<{ name: string; ok: boolean; fix: string | null }> }).checks
      .find((check) => check.name === "model")!
    expect(model.ok).toBe(false)
    for (const form of FORMS) expect(model.fix).toContain(form)
  }, 60_000)
})

describe("relay task list", () => {
  it("prints one row per task: id, state, updated, the first line of its text; --json is unchanged", async () => {
    const one = json<{ task_id: string }>(await relay(["message", "send", "--url", agentUrl, "one line", "--json"]))
    const done = json<{ task_id: string }>(await relay(["message", "send", "--url", agentUrl, "first line\nsecond line", "--json"]))
    const human = await relay(["task", "list", "--url", agentUrl], { COLUMNS: "120" })
    expect(human.code).toBe(0)
    const [header, ...rows] = human.stdout.trimEnd().split("\n")
    expect(header).toMatch(/^TASK ID {2,}STATE {2,}UPDATED {2,}TEXT$/)
    const rowOf = (taskId: string) => rows.find((row) => row.startsWith(`${taskId}  `))
    expect(rowOf(done.task_id)).toMatch(/^\S+ {2,}completed {2,}\d+[smhd] ago {2,}first line$/)
    expect(rowOf(one.task_id)).toMatch(/^\S+ {2,}completed {2,}\d+[smhd] ago {2,}one line$/)
    // The columns line up, and every row stays within the terminal's width.
    expect(new Set(rows.map((row) => row.search(/(completed|input-required|working|submitted) /))).size).toBe(1)
    expect(rows.every((row) => row.length <= 120)).toBe(true)

    const listed = json<{ count: number; tasks: Array<Record<string, unknown>>; next_page_token: string | null }>(
      await relay(["task", "list", "--url", agentUrl, "--json"])
    )
    expect(listed.count).toBe(rows.length)
    expect(listed.tasks.find((task) => task["task_id"] === done.task_id)).toMatchObject({
      text: "first line\nsecond line",
      state: "completed"
    })

    const paged = await relay(["task", "list", "--url", agentUrl, "--page-size", "1"])
    expect(paged.stdout).toMatch(/^TASK ID .*\n\S+ .*\n\n1 of \d+ tasks\. More: --page-token \S+\n$/)
  })
})

describe("Files and data, as the README shows them", () => {
  /** The folder the examples run in, holding the files they name. */
  const folder = Path.join(home.parent, "files-and-data")
  const inFolder = (args: ReadonlyArray<string>) => runRelay(args, { stateDir: home.stateDir, cwd: folder })
  const taskFiles = (taskId: string) => Path.join(home.stateDir, "files", taskId)

  beforeAll(() => {
    Fs.mkdirSync(folder, { recursive: true })
    Fs.writeFileSync(Path.join(folder, "report.pdf"), "%PDF-1.4\n% demo\n%%EOF\n")
    Fs.writeFileSync(Path.join(folder, "form.json"), JSON.stringify({ name: "Ada", languages: ["en", "fr"] }))
  })

  it("every terminal example works against the Quick start's echo agent, each doing what its comment says", async () => {
    const lines = blockAfter("## Files and data").filter((line) => line.startsWith("relay "))
    const [first] = lines
    const sent = json<{ task_id: string; parts: Array<Record<string, unknown>> }>(
      await inFolder([...wordsOf(first!).slice(1).map((word) => word.replaceAll("$A", agentUrl)), "--json"])
    )
    const said = /# (saved .*)$/.exec(first!)![1]!
    expect(said.replace("~/.local/state/a2a-relay", home.stateDir).replace("<task id>", sent.task_id))
      .toBe(`saved report.pdf (application/pdf, 22 bytes) → ${Path.join(taskFiles(sent.task_id), "report.pdf")}`)
    expect(sent.parts.find((part) => part["kind"] === "file")).toMatchObject({
      size: 22,
      path: Path.join(taskFiles(sent.task_id), "report.pdf")
    })

    const outputs = new Map<string, string>()
    for (const line of lines) {
      const words = wordsOf(line).slice(1).map((word) => (word === "T" ? sent.task_id : word.replaceAll("$A", agentUrl)))
      const result = await inFolder(words)
      expect(result.code, `${line}\n${result.stderr}`).toBe(0)
      outputs.set(line, result.stdout)
    }
    const output = (start: string) => [...outputs].find(([line]) => line.includes(start))![1]
    expect(output("--file report.pdf \"Summarise")).toMatch(
      /^saved report\.pdf \(application\/pdf, 22 bytes\) → .*\/files\/[^/]+\/report\.pdf$/m
    )
    expect(output("--data @form.json")).toContain("q3.csv (text/csv) at https://example.com/q3.csv")
    expect(output("--data @form.json")).toContain(JSON.stringify({ name: "Ada", languages: ["en", "fr"] }, null, 2))
    expect(output("--data \"[1, 2, 3]\"")).toContain(JSON.stringify([1, 2, 3], null, 2))
    expect(Fs.readdirSync(Path.join(folder, "answers"))).toEqual(["report.pdf"])
    expect(output("--no-save")).not.toContain("saved ")
    expect(output("--download")).toMatch(/^saved agent-card\.json \(application\/json, \d+ bytes\) → /m)
    expect(Fs.readdirSync(Path.join(folder, "later"))).toEqual(["report.pdf"])
    const parts = (JSON.parse(output("--json")) as { parts: Array<{ kind: string }> }).parts
    expect(parts.map((part) => part.kind)).toEqual(["text", "file"])
  }, 60_000)

  it(
    "the MCP example: send_message with the files and data shown, a path inside the client's root, comes back as the section says",
    async () => {
      const example = JSON.parse(blockAfter("**Over MCP**").join("\n")) as { agent_url: string; files: Array<{ path?: string }> }
      const reports = Path.join(home.parent, "reports")
      Fs.mkdirSync(reports, { recursive: true })
      const pdf = Path.join(reports, Path.basename(example.files[0]!.path!))
      Fs.copyFileSync(Path.join(folder, "report.pdf"), pdf)
      const client = new Client({ name: "readme", version: "1.0.0" }, { capabilities: { roots: {} } })
      client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: [{ uri: pathToFileURL(reports).href }] }))
      await client.connect(
        new StdioClientTransport({
          command: process.execPath,
          args: [relayBin, "mcp"],
          env: { ...(process.env as Record<string, string>), RELAY_HOME: home.stateDir },
          stderr: "ignore"
        })
      )
      try {
        const args = {
          ...example,
          agent_url: agentUrl,
          files: example.files.map((file) => (file.path === undefined ? file : { path: pdf }))
        }
        const result = (await client.callTool({ name: "send_message", arguments: args }, undefined, { timeout: 20_000 })) as CallToolResult
        expect(result.isError, JSON.stringify(result.content)).not.toBe(true)
        const parts = (result.structuredContent as { parts: Array<Record<string, unknown>> }).parts
        expect(parts.map((part) => part["kind"])).toEqual(["text", "file", "file", "file", "data"])
        expect(result.content).toEqual(expect.arrayContaining([
          expect.objectContaining({
            type: "resource_link",
            uri: pathToFileURL(String(parts[1]!["path"])).href,
            mimeType: "application/pdf"
          }),
          expect.objectContaining({ type: "resource_link", uri: "https://example.com/q3.csv" }),
          expect.objectContaining({ type: "resource", resource: expect.objectContaining({ text: "hello\n", mimeType: "text/plain" }) }),
          { type: "text", text: JSON.stringify({ quarter: 3 }) }
        ]))
      } finally {
        await client.close()
      }
    },
    60_000
  )
})
