/**
 * What `npm pack` ships: the bundle (its entry, the chunks it loads on demand, their code caches
 * and source maps), README and package.json, and nothing to install beside them; its size as README.md gives it.
 * Installing and running the tarball with only Node is .ci/run's scripts/check-packed-install.mjs.
 */
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

describe("the npm package", () => {
  it(
    "holds only what runs: the bundled CLI, its chunks, their code caches and source maps, README and package.json, under 6 MB packed",
    () => {
      const [packed] = JSON.parse(execFileSync("npm", ["pack", "--dry-run", "--json"], { cwd: root, encoding: "utf8" })) as Array<
        { files: Array<{ path: string }>; size: number; unpackedSize: number }
      >
      const paths = packed!.files.map((file) => file.path)
      const chunks = paths.filter((path) => path.startsWith("dist/chunks/"))
      expect(paths.filter((path) => !path.startsWith("dist/chunks/")).sort()).toEqual([
        "README.md",
        "dist/completions/relay.bash",
        "dist/completions/relay.fish",
        "dist/completions/relay.zsh",
        "dist/main.cjs",
        "dist/main.cjs.map",
        "package.json"
      ])
      expect(chunks.length).toBeGreaterThan(5)
      // Every chunk the build wrote is shipped with its cache and its map, and the caches with the
      // name of the V8 that wrote them (a missing chunk fails only the command that loads it; a
      // missing cache makes it start slower, a missing map leaves its stack frames unmapped).
      const built = Fs.readdirSync(Path.join(root, "dist", "chunks")).filter((name) => name.endsWith(".cjs"))
      expect(chunks.sort()).toEqual([
        "dist/chunks/code-cache.json",
        ...built.flatMap((name) => [`dist/chunks/${name}`, `dist/chunks/${name}.cache`, `dist/chunks/${name}.map`])
      ].sort())
      // 6 MB since wave 3 added gRPC (grpc-js and the codec), PostgreSQL (pg) and the MCP v2 SDK beside the
      // v1 package (`-t sse`): 5.0 MB packed then; each loads only with the commands that use it.
      expect(packed!.size).toBeLessThan(6_000_000)
      // The sizes README.md gives (Quick start) are the package's, within 10 %.
      const stated = /about ([\d.]+) MB packed,\s+([\d.]+) MB installed/.exec(Fs.readFileSync(Path.join(root, "README.md"), "utf8"))
      expect(stated).not.toBeNull()
      expect(Math.abs(Number(stated![1]) * 1e6 - packed!.size) / packed!.size).toBeLessThan(0.1)
      expect(Math.abs(Number(stated![2]) * 1e6 - packed!.unpackedSize) / packed!.unpackedSize).toBeLessThan(0.1)
    },
    60_000
  )

  it("declares no runtime dependencies (everything is in the bundle) and the bin it ships", () => {
    const pkg = JSON.parse(Fs.readFileSync(Path.join(root, "package.json"), "utf8")) as Record<string, unknown>
    expect(pkg.dependencies).toBeUndefined()
    expect(pkg.bin).toEqual({ relay: "dist/main.cjs" })
    expect(Fs.readFileSync(Path.join(root, "dist", "main.cjs"), "utf8").startsWith("#!/usr/bin/env node")).toBe(true)
  })
})
