/**
 * The terminal door does what was typed (#28): an unknown option or command is a usage error with a
 * suggestion, never message text; a flag never swallows the word after it; numbers are checked at
 * the door. The built CLI against the official SDK agent, which records what reached it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { sentMessages } from "../helpers/a2aPrograms.js"
import { runRelay } from "../helpers/cli.js"
import { tempHome } from "../helpers/stateHome.js"
import { type SdkAgentHandle, startSdkAgent } from "../peers/sdkAgent.js"

const home = tempHome()
let agent: SdkAgentHandle

beforeAll(async () => {
  agent = await startSdkAgent()
})
afterAll(async () => {
  await agent.close()
  home.cleanup()
})

const relay = (args: ReadonlyArray<string>, input?: string) =>
  runRelay(args, { stateDir: home.stateDir, ...(input === undefined ? {} : { input }) })

/** The texts of the messages the agent received during `run`. */
const textsSentBy = async (run: () => Promise<unknown>) => {
  const before = sentMessages(agent.requests).length
  await run()
  return sentMessages(agent.requests).slice(before).map((message) =>
    ((message as { parts?: ReadonlyArray<{ text?: string }> }).parts ?? []).map((part) => part.text ?? "").join("")
  )
}

describe("an option the command does not have", () => {
  it.each([
    [["--contineu", "yes"], "--contineu", "Did you mean --continue?"],
    [["--wiat", "5", "job"], "--wiat", "Did you mean --wait?"],
    [["--bogus", "hi"], "--bogus", "Run 'relay message send --help'"],
    [["hi", "--bogus"], "--bogus", "goes after '--'"]
  ])("message send %j is a usage error naming it, and nothing is sent", async (words, named, hint) => {
    let result: Awaited<ReturnType<typeof relay>> | undefined
    const sent = await textsSentBy(async () => (result = await relay(["message", "send", "--url", agent.baseUrl, ...words])))
    expect(sent).toEqual([])
    expect(result!.code).toBe(2)
    expect(result!.stdout).toBe("")
    expect(result!.stderr).toMatch(new RegExp(`^error: unknown option ${named}\\nhint: .*`))
    expect(result!.stderr).toContain(hint)
  })

  it("text that starts with '-' is sent when it comes after --", async () => {
    const sent = await textsSentBy(() => relay(["message", "send", "--url", agent.baseUrl, "--", "--not-an-option", "really"]))
    expect(sent).toEqual(["--not-an-option really"])
  })

  it("names the right word, at the right level, with --json carrying the hint", async () => {
    const get = await relay(["task", "get", "--bogus", "X"])
    expect(get.code).toBe(2)
    expect(get.stderr.split("\n")[0]).toBe("error: unknown option --bogus")
    const version = await relay(["-v"])
    expect(version.stderr.split("\n")[0]).toBe("error: unknown option -v for relay")
    const group = await relay(["mesage", "send"])
    expect(group.stderr).toBe("error: unknown command 'mesage' for relay\nhint: Did you mean message?\n")
    const json = await relay(["session", "list", "--json", "--jsno"])
    expect(JSON.parse(json.stderr)).toEqual({ error: { code: "usage", message: "unknown option --jsno", hint: "Did you mean --json?" } })
  })

  it("@effect/cli's own built-ins are not options of relay's commands", async () => {
    for (const builtIn of ["--wizard", "--completions"]) {
      const result = await relay(["session", "list", builtIn, ...(builtIn === "--completions" ? ["bash"] : [])])
      expect(result.code, builtIn).toBe(2)
      expect(result.stderr, builtIn).toContain(`error: unknown option ${builtIn}`)
    }
  })
})

describe("a flag never swallows the next word", () => {
  it.each([["-C", "yes"], ["--continue", "no"], ["--stream", "true"], ["--json", "1"]])(
    "%s %s sends '%s' as the message",
    async (flag, word) => {
      const sent = await textsSentBy(() => relay(["message", "send", "--url", agent.baseUrl, flag, word]))
      expect(sent).toEqual([word])
    }
  )

  it("--flag=false stays the explicit form", async () => {
    const result = await relay(["session", "list", "--json=false"])
    expect(result.code).toBe(0)
    expect(() => JSON.parse(result.stdout)).toThrow()
  })
})

describe("numbers are checked at the door", () => {
  it.each([
    [["--timeout", "abc"], "--timeout needs a whole number of seconds, not 'abc'"],
    [["--timeout", "0"], "--timeout needs a whole number of seconds, between 1 and 86400"],
    [["--timeout", "-5"], "--timeout needs a whole number of seconds, between 1 and 86400"],
    [["--wait", "1.5"], "--wait needs a whole number of seconds, not '1.5'"],
    [["--max-response-bytes", "0"], "--max-response-bytes needs a whole number of bytes, at least 1"],
    [["--stream-idle-timeout=-1"], "--stream-idle-timeout needs a whole number of seconds, between 1 and 86400"]
  ])("message send %j is refused before anything is sent", async (words, message) => {
    let result: Awaited<ReturnType<typeof relay>> | undefined
    const sent = await textsSentBy(async () => (result = await relay(["message", "send", "--url", agent.baseUrl, ...words, "hi"])))
    expect(sent).toEqual([])
    expect(result!.code).toBe(2)
    expect(result!.stderr.split("\n")[0]).toBe(`error: ${message}`)
    expect(result!.stderr.split("\n")[1]).toMatch(/^hint: /)
  })

  it("counts, sizes and ports of other commands too", async () => {
    const cases: ReadonlyArray<readonly [ReadonlyArray<string>, string]> = [
      [["task", "list", "--url", agent.baseUrl, "--page-size", "500"], "--page-size needs a whole number of tasks, between 1 and 100"],
      [["notifications", "list", "--limit", "0"], "--limit needs a whole number of notifications, at least 1"],
      [["server", "agent", "--port", "70000"], "--port needs a port number, between 0 and 65535 (0 picks a free port)"],
      [["check", agent.baseUrl, "--timeout", "x"], "--timeout needs a whole number of seconds, not 'x'"]
    ]
    for (const [words, message] of cases) {
      const result = await relay(words)
      expect(result.code, words.join(" ")).toBe(2)
      expect(result.stderr.split("\n")[0], words.join(" ")).toBe(`error: ${message}`)
    }
  })
})

describe("message text from stdin", () => {
  it("is read when the text is '-' or absent and stdin is not a terminal", async () => {
    expect(await textsSentBy(() => relay(["message", "send", "--url", agent.baseUrl], "piped text\n"))).toEqual(["piped text\n"])
    expect(await textsSentBy(() => relay(["message", "send", "--url", agent.baseUrl, "-"], "dash text"))).toEqual(["dash text"])
  })

  it("an empty stdin is an empty message, refused as before", async () => {
    let result: Awaited<ReturnType<typeof relay>> | undefined
    expect(await textsSentBy(async () => (result = await relay(["message", "send", "--url", agent.baseUrl], "")))).toEqual([])
    expect(result!.code).toBe(2)
    expect(result!.stderr).toContain("The message is empty")
  })
})

describe("options that do not go together", () => {
  it("--context-id with --continue is a usage error naming both; nothing is sent", async () => {
    let result: Awaited<ReturnType<typeof relay>> | undefined
    const sent = await textsSentBy(
      async () => (result = await relay(["message", "send", "--url", agent.baseUrl, "--context-id", "c1", "--continue", "hi"]))
    )
    expect(sent).toEqual([])
    expect(result!.code).toBe(2)
    expect(result!.stderr.split("\n")[0]).toContain("--context-id and --continue do not go together")
  })
})
