/**
 * Files and data an agent returns, at the terminal (the built CLI, `npm run build` first) against
 * a scripted agent: saved where promised (files/<task id>/ in the state directory, --save-dir,
 * none with --no-save), one line each, data whole and indented, `parts` in --json, and nothing
 * written outside the save folder whatever the agent sends (the folder tree is listed after).
 * --download fetches files given by URL with the credentials only on the agent's origin.
 */
import { createHash } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { headerOf } from "../helpers/a2aPrograms.js"
import { runRelay } from "../helpers/cli.js"
import { stateDirsFor } from "../helpers/stateHome.js"
import { DATA, ELSEWHERE, type FileAgent, HELLO, MANY, PNG, REPORT, startFileAgent } from "../peers/fileAgent.js"

let peer: FileAgent
const freshStateDir = stateDirsFor(afterAll)

beforeAll(async () => {
  peer = await startFileAgent()
})

afterAll(async () => {
  await peer?.close()
})

/** Every file and symlink under `dir`, relative to it, sorted. */
const tree = (dir: string): ReadonlyArray<string> =>
  Fs.existsSync(dir)
    ? (Fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((entry) => !Fs.lstatSync(Path.join(dir, entry)).isDirectory())
      .sort()
    : []

const relayIn = (stateDir: string, ...args: ReadonlyArray<string>) => runRelay(args, { stateDir, timeoutMs: 60_000 })
const sha256 = (content: string | Buffer) => createHash("sha256").update(content).digest("hex")

describe("files and data in an answer, at the terminal", () => {
  it("saves each file with bytes under files/<task id>/ (0600), one line each; data whole and indented; a URL as a link", async () => {
    const state = freshStateDir()
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "files")
    expect(result.code, result.stderr).toBe(0)
    const folder = Path.join(Fs.realpathSync(state), "files", "files")
    expect(result.stdout).toContain(
      `Here are your files\nsaved hello.txt (text/plain, ${HELLO.length} bytes) → ${Path.join(folder, "hello.txt")}`
    )
    expect(result.stdout).toContain(JSON.stringify(DATA, null, 2))
    expect(result.stdout).toContain(`saved (no name) (image/png, ${PNG.length} bytes) → ${Path.join(folder, "file-2.png")}`)
    expect(result.stdout).toContain("report.pdf (application/pdf) at https://files.example/report.pdf")
    expect(tree(state).filter((entry) => entry.startsWith("files"))).toEqual(["files/files/file-2.png", "files/files/hello.txt"])
    expect(Fs.readFileSync(Path.join(folder, "hello.txt"), "utf8")).toBe(HELLO)
    expect(Fs.readFileSync(Path.join(folder, "file-2.png"))).toEqual(PNG)
    expect(Fs.statSync(Path.join(folder, "hello.txt")).mode & 0o777).toBe(0o600)
    expect(Fs.statSync(folder).mode & 0o777).toBe(0o700)
    // Fetched again, the same files are where they were: not copied again.
    const again = await relayIn(state, "task", "get", "--url", peer.agent.baseUrl, "files")
    expect(again.code, again.stderr).toBe(0)
    expect(again.stdout).toContain(`→ ${Path.join(folder, "hello.txt")}\n`)
    expect(tree(folder)).toEqual(["file-2.png", "hello.txt"])
  })

  it("--json keeps the text and adds the parts, in order, with where each file went", async () => {
    const state = freshStateDir()
    const saveDir = Path.join(Path.dirname(state), "downloads")
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "files", "--save-dir", saveDir, "--json")
    expect(result.code, result.stderr).toBe(0)
    const json = JSON.parse(result.stdout)
    expect(json.text).toContain("[file: hello.txt (text/plain), 13 bytes]")
    const none = {
      text: null,
      name: null,
      media_type: null,
      size: null,
      sha256: null,
      path: null,
      url: null,
      data: null,
      artifact_id: "art-1",
      note: null
    }
    const real = Fs.realpathSync(saveDir)
    expect(json.parts).toEqual([
      { ...none, kind: "text", text: "Here are your files" },
      {
        ...none,
        kind: "file",
        name: "hello.txt",
        media_type: "text/plain",
        size: HELLO.length,
        sha256: sha256(HELLO),
        path: Path.join(real, "hello.txt")
      },
      { ...none, kind: "data", data: DATA },
      { ...none, kind: "file", media_type: "image/png", size: PNG.length, sha256: sha256(PNG), path: Path.join(real, "file-2.png") },
      { ...none, kind: "file", name: "report.pdf", media_type: "application/pdf", url: "https://files.example/report.pdf" }
    ])
    // One shape for every file relay reports: `relay notifications list --json` records pushed files with these keys too.
    expect(Object.keys(json.parts[1])).toEqual([
      "kind",
      "text",
      "name",
      "media_type",
      "size",
      "sha256",
      "path",
      "url",
      "note",
      "data",
      "artifact_id"
    ])
    expect(tree(saveDir)).toEqual(["file-2.png", "hello.txt"])
    expect(tree(state).filter((entry) => entry.startsWith("files"))).toEqual([])
  })

  it("--no-save lists the files and writes none; with --save-dir or --download it is a usage error", async () => {
    const state = freshStateDir()
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "files", "--no-save", "--json")
    expect(result.code, result.stderr).toBe(0)
    expect(JSON.parse(result.stdout).parts[1]).toMatchObject({ name: "hello.txt", size: HELLO.length, sha256: sha256(HELLO), path: null })
    expect(tree(state).filter((entry) => entry.startsWith("files"))).toEqual([])
    for (const other of [["--save-dir", Path.join(state, "x")], ["--download"]]) {
      const usage = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "files", "--no-save", ...other)
      expect(usage.code).toBe(2)
      expect(usage.stderr).toContain(`--no-save and ${other[0]} do not go together`)
    }
    const onTask = await relayIn(state, "task", "get", "--url", peer.agent.baseUrl, "files", "--no-save", "--download")
    expect(onTask.code).toBe(2)
  })

  it("message stream --json: each update line carries the file and data parts it added; the result line, where the files went", async () => {
    const state = freshStateDir()
    const result = await relayIn(state, "message", "stream", "--url", peer.agent.baseUrl, "files", "--json")
    expect(result.code, result.stderr).toBe(0)
    const lines = result.stdout.trim().split("\n").map((line) => JSON.parse(line))
    const updates = lines.filter((line) => line.kind === "update")
    expect(updates.every((line) => Array.isArray(line.parts))).toBe(true)
    const told = updates.flatMap((line) => line.parts)
    expect(told.map((part: { kind: string; name: string | null }) => [part.kind, part.name])).toEqual([
      ["file", "hello.txt"],
      ["data", null],
      ["file", null],
      ["file", "report.pdf"]
    ])
    expect(told.every((part: { path: string | null }) => part.path === null)).toBe(true)
    const final = lines.at(-1)
    expect(final.kind).toBe("task")
    expect(final.parts[1]).toMatchObject({ name: "hello.txt", path: Path.join(Fs.realpathSync(state), "files", "files", "hello.txt") })
    // The streamed text on a terminal is followed by the file lines.
    const human = await relayIn(state, "message", "stream", "--url", peer.agent.baseUrl, "files")
    expect(human.code, human.stderr).toBe(0)
    expect(human.stdout).toMatch(/saved hello\.txt \(text\/plain, 13 bytes\) → .*[/\\]hello\.txt\n/)
  })

  it("keeps hostile names inside the folder, says what is odd, and prints nothing raw", async () => {
    const state = freshStateDir()
    const home = Path.dirname(state)
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "hostile")
    expect(result.code, result.stderr).toBe(0)
    expect(tree(home)).toEqual([
      "state/files/hostile/_CON",
      "state/files/hostile/a_b",
      "state/files/hostile/bashrc",
      "state/files/hostile/cat.png",
      "state/files/hostile/file-8.txt",
      `state/files/hostile/${"n".repeat(196)}.txt`,
      "state/files/hostile/passwd",
      "state/files/hostile/red_[31m.txt",
      "state/files/hostile/x",
      "state/sessions.json"
    ].sort())
    expect(result.stdout).not.toMatch(/[\u0000-\u0008\u000b-\u001f]/)
    expect(result.stdout).toContain("saved red\\u001b[31m.txt (text/plain, 12 bytes) →")
    expect(result.stdout).toContain("saved cat.png (image/png, 25 bytes) →")
    expect(result.stdout).toContain("cat.png: its media type says image/png, but the bytes are not a PNG image")
    expect(result.stdout).toContain("broken.bin (application/octet-stream): not saved: its bytes are not base64")
  })

  it("saves 10 000 tiny files and lists 20 of them, then one line for the rest", async () => {
    const state = freshStateDir()
    const started = Date.now()
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "many")
    expect(result.code, result.stderr).toBe(0)
    expect(Date.now() - started).toBeLessThan(45_000)
    const folder = Path.join(Fs.realpathSync(state), "files", "many")
    expect(result.stdout.split("\n").filter((line) => line.startsWith("saved tiny.txt"))).toHaveLength(20)
    expect(result.stdout).toContain(`… and ${MANY - 20} more files saved in ${folder} (--json lists every one)`)
    expect(tree(folder)).toHaveLength(MANY)
    expect(Fs.readFileSync(Path.join(folder, `tiny (${MANY - 1}).txt`), "utf8")).toBe(String(MANY - 1))
  }, 60_000)

  it("refuses a 1.0 file part with both bytes and a URL as malformed, and writes nothing", async () => {
    const state = freshStateDir()
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "both")
    expect(result.code).toBe(1)
    expect(result.stderr).toContain("needs exactly one of text, raw, url or data, but has several")
    expect(tree(state).filter((entry) => entry.startsWith("files"))).toEqual([])
  })

  it("--download fetches files given by URL: the credentials go to the agent's origin only; other schemes are refused", async () => {
    const state = freshStateDir()
    const agentBefore = peer.agent.requests.length
    const filesBefore = peer.files.requests.length
    const token = "download-token-0123456789"
    const result = await relayIn(
      state,
      "message",
      "send",
      "--url",
      peer.agent.baseUrl,
      "links",
      "--download",
      "--bearer-token",
      token,
      "--json"
    )
    expect(result.code, result.stderr).toBe(0)
    const parts = JSON.parse(result.stdout).parts
    const folder = Path.join(Fs.realpathSync(state), "files", "links")
    expect(parts[0]).toMatchObject({
      name: "report.txt",
      size: REPORT.length,
      sha256: sha256(REPORT),
      path: Path.join(folder, "report.txt")
    })
    expect(parts[1]).toMatchObject({ name: "elsewhere.txt", size: ELSEWHERE.length, path: Path.join(folder, "elsewhere.txt") })
    expect(parts[2]).toMatchObject({ name: "passwd", path: null, note: expect.stringMatching(/^not downloaded: .*not http or https/) })
    expect(Fs.readFileSync(Path.join(folder, "report.txt"), "utf8")).toBe(REPORT)
    expect(Fs.readFileSync(Path.join(folder, "elsewhere.txt"), "utf8")).toBe(ELSEWHERE)
    const ownFile = peer.agent.requests.slice(agentBefore).find((request) => request.url === "/files/report.txt")
    expect(ownFile === undefined ? undefined : headerOf(ownFile, "authorization")).toBe(`Bearer ${token}`)
    const otherFile = peer.files.requests.slice(filesBefore)
    expect(otherFile).toHaveLength(1)
    expect(headerOf(otherFile[0]!, "authorization")).toBeUndefined()
    expect(result.stdout).not.toContain(token)
  })

  it("without --download, files given by URL are links and nothing is fetched", async () => {
    const state = freshStateDir()
    const filesBefore = peer.files.requests.length
    const result = await relayIn(state, "message", "send", "--url", peer.agent.baseUrl, "links")
    expect(result.code, result.stderr).toBe(0)
    expect(result.stdout).toContain(`elsewhere.txt (text/plain) at ${peer.files.baseUrl}/files/elsewhere.txt`)
    expect(peer.files.requests.length).toBe(filesBefore)
    expect(tree(state).filter((entry) => entry.startsWith("files"))).toEqual([])
  })
})
