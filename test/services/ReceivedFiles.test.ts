/**
 * services/ReceivedFiles: an answer's files written where promised (files/<task id>/ in the state
 * directory, or --save-dir), private (0600 in 0700 folders), never over an existing file, and
 * never outside their folder whatever the agent named them.
 */
import { Effect } from "effect"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { afterEach, describe, expect, it } from "vitest"
import { type FileToSave, makeAt, RECEIVED_FILES_DIR, type SaveOutcome } from "../../src/services/ReceivedFiles.js"

const temporaryDirs: Array<string> = []
const freshDir = () => {
  const dir = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-received-"))
  temporaryDirs.push(dir)
  return dir
}
afterEach(() => {
  for (const dir of temporaryDirs.splice(0)) Fs.rmSync(dir, { recursive: true, force: true })
})

/** Every file under `dir`, relative to it. */
const tree = (dir: string): ReadonlyArray<string> =>
  (Fs.readdirSync(dir, { recursive: true }) as Array<string>).filter((entry) => Fs.statSync(Path.join(dir, entry)).isFile()).sort()

const file = (name: string | null, content: string, mediaType: string | null = "text/plain"): FileToSave => ({
  name,
  mediaType,
  bytes: Buffer.from(content)
})

/** Writes the files of one answer in order, as answerFiles.ts does; the outcome of each. */
const saveIn = (stateDir: string, files: ReadonlyArray<FileToSave>, dir?: string, answerId = "task-1") =>
  Effect.runPromise(
    Effect.flatMap(
      makeAt(Path.join(stateDir, RECEIVED_FILES_DIR)).open({ dir, answerId }),
      (folder) => Effect.forEach(files, (file, position) => folder.write(file, position))
    )
  )

const pathOf = (outcome: SaveOutcome | undefined) => {
  if (outcome === undefined || !("path" in outcome)) throw new Error(`not saved: ${JSON.stringify(outcome)}`)
  return outcome.path
}

describe("ReceivedFiles, an answer's folder", () => {
  it("saves under files/<task id>/ in the state directory: files 0600, folders 0700", async () => {
    const state = freshDir()
    const [saved] = await saveIn(state, [file("hello.txt", "Hello")])
    const path = pathOf(saved)
    expect(path).toBe(Path.join(Fs.realpathSync(state), "files", "task-1", "hello.txt"))
    expect(Fs.readFileSync(path, "utf8")).toBe("Hello")
    expect(Fs.statSync(path).mode & 0o777).toBe(0o600)
    expect(Fs.statSync(Path.join(state, "files")).mode & 0o777).toBe(0o700)
    expect(Fs.statSync(Path.join(state, "files", "task-1")).mode & 0o777).toBe(0o700)
  })

  it("never overwrites: a name taken gets a numbered suffix, and the old file keeps its content", async () => {
    const state = freshDir()
    const saveDir = Path.join(state, "out")
    Fs.mkdirSync(saveDir)
    Fs.writeFileSync(Path.join(saveDir, "hello.txt"), "mine")
    const outcomes = await saveIn(state, [file("hello.txt", "one"), file("hello.txt", "two")], saveDir)
    expect(outcomes.map(pathOf).map((path) => Path.basename(path))).toEqual(["hello (1).txt", "hello (2).txt"])
    expect(Fs.readFileSync(Path.join(saveDir, "hello.txt"), "utf8")).toBe("mine")
    expect(Fs.readFileSync(Path.join(saveDir, "hello (2).txt"), "utf8")).toBe("two")
  })

  it("reuses a file already saved with the same bytes: an answer fetched again is not copied again", async () => {
    const state = freshDir()
    const files = [file("a.txt", "same"), file("a.txt", "other"), file(null, "png", "image/png")]
    const first = (await saveIn(state, files)).map(pathOf)
    const second = (await saveIn(state, files)).map(pathOf)
    expect(second).toEqual(first)
    expect(tree(state)).toEqual(["files/task-1/a (1).txt", "files/task-1/a.txt", "files/task-1/file-3.png"])
    const changed = await saveIn(state, [file("a.txt", "changed")])
    expect(Path.basename(pathOf(changed[0]))).toBe("a (2).txt")
  })

  it("does not follow a symlink planted where a file would go", async () => {
    const state = freshDir()
    const saveDir = Path.join(state, "out")
    Fs.mkdirSync(saveDir)
    const victim = Path.join(state, "victim")
    // The same bytes as the answer's file: a symlink is still not taken for it.
    Fs.writeFileSync(victim, "payload")
    Fs.symlinkSync(victim, Path.join(saveDir, "x"))
    const [saved] = await saveIn(state, [file("x", "payload")], saveDir)
    expect(Path.basename(pathOf(saved))).toBe("x (1)")
    expect(Fs.lstatSync(Path.join(saveDir, "x")).isSymbolicLink()).toBe(true)
  })

  it("keeps hostile names and a hostile task id inside the folder", async () => {
    const state = freshDir()
    const names = ["../../x", ".bashrc", `${"n".repeat(300)}.txt`, "a\u0000b", "CON", "", "/etc/passwd", "..", "日本.txt"]
    const outcomes = await saveIn(state, names.map((name) => file(name, name)), undefined, "../../escape")
    expect(outcomes.every((outcome) => "path" in outcome)).toBe(true)
    expect(tree(state)).toEqual([
      "files/escape/_CON",
      "files/escape/a_b",
      "files/escape/bashrc",
      "files/escape/file-6.txt",
      "files/escape/file-8.txt",
      `files/escape/${"n".repeat(196)}.txt`,
      "files/escape/passwd",
      "files/escape/x",
      "files/escape/日本.txt"
    ].sort())
  })

  it("names a name-less file after its media type", async () => {
    const state = freshDir()
    const outcomes = await saveIn(state, [
      file(null, "png", "image/png"),
      file(null, "?", "application/x-unknown-thing"),
      file(null, "j", "Application/JSON; charset=utf-8")
    ])
    expect(outcomes.map(pathOf).map((path) => Path.basename(path))).toEqual(["file-1.png", "file-2.bin", "file-3.json"])
  })

  it("saves 10 000 files of one name, each tried once, in a few seconds", async () => {
    const state = freshDir()
    const started = Date.now()
    const outcomes = await saveIn(state, Array.from({ length: 10_000 }, (_, i) => file("same.txt", String(i))))
    expect(Date.now() - started).toBeLessThan(20_000)
    expect(outcomes.every((outcome) => "path" in outcome)).toBe(true)
    expect(new Set(outcomes.map(pathOf)).size).toBe(10_000)
    expect(Fs.readFileSync(Path.join(state, "files", "task-1", "same (9999).txt"), "utf8")).toBe("9999")
  }, 30_000)

  it("reports a folder it cannot make as a note on each file, without failing", async () => {
    const state = freshDir()
    const blocker = Path.join(state, "not-a-folder")
    Fs.writeFileSync(blocker, "")
    const outcomes = await saveIn(state, [file("a.txt", "a")], blocker)
    expect(outcomes).toEqual([{ note: expect.stringMatching(/^not saved: /) }])
  })

  it("refuses a task folder that is a symlink leading elsewhere", async () => {
    const state = freshDir()
    const elsewhere = freshDir()
    Fs.mkdirSync(Path.join(state, "files"), { mode: 0o700 })
    Fs.symlinkSync(elsewhere, Path.join(state, "files", "task-1"))
    const outcomes = await saveIn(state, [file("a.txt", "a")])
    expect(outcomes).toEqual([{ note: expect.stringMatching(/^not saved: .*leads outside/) }])
    expect(tree(elsewhere)).toEqual([])
  })
})
