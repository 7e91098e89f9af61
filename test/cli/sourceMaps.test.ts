/**
 * The package ships a source map beside each chunk (scripts/bundle.mjs), so that under
 * `node --enable-source-maps` a stack trace points into src/ (src/bundleLoader.ts then loads the
 * chunks with Node's require, which applies them); dependencies' frames keep their chunk's place.
 * The entry's file packs many chunks into one: its map must place each one's code at its source,
 * line for line.
 */
import { spawnSync } from "node:child_process"
import * as Fs from "node:fs"
import { SourceMap } from "node:module"
import * as Os from "node:os"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"

const dist = Path.dirname(relayBin)
const root = Path.dirname(dist)
const chunks = Path.join(dist, "chunks")

/** Where `text` first occurs in `code`, as a source map counts (lines and columns from 0). */
const positionOf = (code: string, text: string) => {
  const at = code.indexOf(text)
  expect(at, `${text} in the bundle`).toBeGreaterThanOrEqual(0)
  const before = code.slice(0, at).split("\n")
  return { line: before.length - 1, column: before.at(-1)!.length }
}

describe("source maps", () => {
  it("with --enable-source-maps, a failure's stack trace points into src/", () => {
    const copy = Path.join(Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-maps-")), "dist")
    Fs.cpSync(dist, copy, { recursive: true })
    // A command group's chunk gone: the failure's stack runs through the CLI's root (src/cli/root.ts).
    for (const name of Fs.readdirSync(Path.join(copy, "chunks")).filter((name) => /^sessionCommands-.*\.cjs$/.test(name))) {
      Fs.rmSync(Path.join(copy, "chunks", name))
    }
    const result = spawnSync(process.execPath, ["--enable-source-maps", Path.join(copy, "main.cjs"), "session", "list"], {
      env: { ...process.env, RELAY_HOME: Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-maps-home-")) },
      encoding: "utf8",
      timeout: 20_000
    })
    Fs.rmSync(Path.dirname(copy), { recursive: true, force: true })
    expect(result.status).toBe(1)
    const frames = result.stderr.split("\n").filter((line) => line.trim().startsWith("at "))
    expect(frames.some((frame) => /src\/cli\/root\.ts:\d+:\d+/.test(frame)), result.stderr).toBe(true)
  })

  it("every chunk names the map beside it, and the package ships them", () => {
    const files = Fs.readdirSync(chunks).filter((name) => name.endsWith(".cjs"))
    expect(files.length).toBeGreaterThan(10)
    for (const name of files) {
      expect(Fs.readFileSync(Path.join(chunks, name), "utf8").endsWith(`\n//# sourceMappingURL=${name}.map\n`), name).toBe(true)
      // Relay's own sources only: the dependencies' mappings were nine tenths of the maps.
      const { sources } = JSON.parse(Fs.readFileSync(Path.join(chunks, `${name}.map`), "utf8")) as { sources: Array<string> }
      expect(sources.filter((source) => source.includes("node_modules/")), `${name}.map`).toEqual([])
    }
    const packageFiles = (JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as { files: Array<string> }).files
    expect(packageFiles).toContain("dist/chunks/*.cjs.map")
  })

  // Names declared in chunks packed into the entry's file, and in the entry's own code (cli/root.ts, app.ts).
  it.each([
    ["jsonRequested", "src/cli/ending.ts"],
    ["plainWhenNotColored", "src/cli/output.ts"],
    ["escapeForTerminal", "src/domain/terminalText.ts"],
    ["runCli", "src/cli/root.ts"],
    ["BaseLayer", "src/app.ts"]
  ])("the entry's map places %s at its line in %s", (name, source) => {
    const code = Fs.readFileSync(Path.join(chunks, "app.cjs"), "utf8")
    const map = new SourceMap(JSON.parse(Fs.readFileSync(Path.join(chunks, "app.cjs.map"), "utf8")))
    const { line, column } = positionOf(code, `${name}=`)
    const entry = map.findEntry(line, column) as { originalSource?: string; originalLine?: number }
    expect(Path.resolve(chunks, entry.originalSource ?? "")).toBe(Path.resolve(root, source))
    const declared = Fs.readFileSync(Path.join(root, source), "utf8").split("\n").findIndex((text) => text.includes(`const ${name} =`))
    expect(entry.originalLine).toBe(declared)
  })
})
