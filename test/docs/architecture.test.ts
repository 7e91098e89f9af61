/**
 * docs/architecture.md draws the house: every path it names must exist, and every folder under
 * src/ must be drawn, so the notes cannot fall behind a move without a test saying so.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")
const doc = Fs.readFileSync(Path.join(root, "docs/architecture.md"), "utf8")

/** Every `src/…`, `test/…` or `scripts/…` path the notes name, without trailing punctuation. */
const namedPaths = (text: string): ReadonlyArray<string> => {
  const found = text.match(/(?<![\w./-])(?:src|test|scripts)\/[\w./-]*/g) ?? []
  return [...new Set(found.map((path) => path.replace(/[.,;:]+$/, "")))]
}

const foldersUnder = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(Path.join(root, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => {
      const folder = `${dir}/${entry.name}`
      return [folder, ...foldersUnder(folder)]
    })

describe("docs/architecture.md", () => {
  it("finds the paths in a line of prose, a diagram and a table", () => {
    expect(namedPaths("see `src/cli/root.ts`, then src/a2a/ and (test/docs/x.test.ts).\n| a | `scripts/bundle.mjs` |"))
      .toEqual(["src/cli/root.ts", "src/a2a/", "test/docs/x.test.ts", "scripts/bundle.mjs"])
  })

  it("names only paths that exist", () => {
    const paths = namedPaths(doc)
    // The notes name dozens of files; a handful would mean the pattern stopped matching.
    expect(paths.length).toBeGreaterThan(40)
    const missing = paths.filter((path) => !Fs.existsSync(Path.join(root, path)))
    expect(missing).toEqual([])
  })

  it("draws every folder under src/", () => {
    const drawn = new Set(namedPaths(doc).map((path) => path.replace(/\/$/, "")))
    // A folder counts as drawn when the notes name it or a file in it.
    const undrawn = foldersUnder("src").filter((folder) => ![...drawn].some((path) => path === folder || path.startsWith(`${folder}/`)))
    expect(undrawn).toEqual([])
  })
})
