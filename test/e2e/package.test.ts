/**
 * What `npm pack` ships: the bundle (its entry and the chunks it loads on demand), README and
 * package.json, and nothing to install beside them.
 * Installing and running the tarball with only Node is .ci/run's scripts/check-packed-install.mjs.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

describe("the npm package", () => {
  it("holds only what runs: the bundled CLI and its chunks, README and package.json, under 5 MB packed", () => {
    const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: root, encoding: "utf8" })) as Array<
      { files: Array<{ path: string }>; size: number }
    >
    const paths = packed!.files.map((file) => file.path)
    const chunks = paths.filter((path) => path.startsWith("dist/chunks/"))
    expect(paths.filter((path) => !path.startsWith("dist/chunks/")).sort()).toEqual(["README.md", "dist/main.js", "package.json"])
    expect(chunks.length).toBeGreaterThan(5)
    expect(chunks.every((path) => /^dist\/chunks\/[\w-]+\.js$/.test(path))).toBe(true)
    // Every chunk the build wrote is shipped (a missing one fails only the command that loads it).
    expect(chunks.sort()).toEqual(Fs.readdirSync(Path.join(root, "dist", "chunks")).filter((name) => name.endsWith(".js")).map((name) => `dist/chunks/${name}`).sort())
    expect(packed!.size).toBeLessThan(5_000_000)
  }, 60_000)

  it("declares no runtime dependencies (everything is in the bundle) and the bin it ships", () => {
    const pkg = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as Record<string, unknown>
    expect(pkg.dependencies).toBeUndefined()
    expect(pkg.bin).toEqual({ relay: "dist/main.js" })
    expect(Fs.readFileSync(Path.join(root, "dist", "main.js"), "utf8").startsWith("#!/usr/bin/env node")).toBe(true)
  })
})
