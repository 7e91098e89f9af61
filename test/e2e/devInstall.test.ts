/**
 * The development install: `npm ci` from package.json and package-lock.json warns about nothing a
 * user should worry about on the Node running it (CI's Node 20): no package whose engines refuse
 * it, no install script left undecided in allowScripts. The MCP inspector, which asks for Node 22,
 * is a package of its own under test/clients/inspector.
 */
import { execFile } from "node:child_process"
import * as Fs from "node:fs"
import * as Os from "node:os"
import * as Path from "node:path"
import { promisify } from "node:util"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

/** What `npm ci` would say, without installing or reaching the network: a dry run over a copy. */
const dryRunCi = async (packageDir: string) => {
  const scratch = Fs.mkdtempSync(Path.join(Os.tmpdir(), "relay-npm-ci-"))
  try {
    for (const file of ["package.json", "package-lock.json"]) Fs.copyFileSync(Path.join(packageDir, file), Path.join(scratch, file))
    // npm hands its settings to scripts as npm_config_*; a child npm must read only its own.
    const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_config_/i.test(key)))
    const { stderr } = await promisify(execFile)(
      "npm",
      ["ci", "--dry-run", "--offline", "--no-audit", "--no-fund", "--cache", Path.join(scratch, "cache")],
      { cwd: scratch, env, encoding: "utf8", timeout: 60_000 }
    )
    return stderr
  } finally {
    Fs.rmSync(scratch, { recursive: true, force: true })
  }
}

const warningsIn = (stderr: string) => stderr.split("\n").filter((line) => /^npm warn/i.test(line) && !/^npm warn deprecated/i.test(line))

type PackageFile = {
  dependencies?: Record<string, string>
  devDependencies?: Record<string, string>
  packages?: Record<string, { version: string }>
}

describe("the development install", () => {
  it("npm ci warns about no engine and no undecided install script", async () => {
    expect(warningsIn(await dryRunCi(root))).toEqual([])
  }, 60_000)

  it("keeps the MCP inspector the tests drive out of it, in a package of its own pinned to 2.12.0", () => {
    const read = (file: string) => JSON.parse(Fs.readFileSync(Path.join(root, file), "utf8")) as PackageFile
    expect(read("package.json").devDependencies).not.toHaveProperty(["@modelcontextprotocol/inspector"])
    expect(read("test/clients/inspector/package.json").dependencies).toEqual({ "@modelcontextprotocol/inspector": "2.12.0" })
    expect(read("test/clients/inspector/package-lock.json").packages?.["node_modules/@modelcontextprotocol/inspector"]?.version).toBe(
      "2.12.0"
    )
  })
})
