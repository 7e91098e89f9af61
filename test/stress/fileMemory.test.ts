/**
 * What a file costs `relay message send` in memory (issue 29, "Done when"): a 7 MiB random file
 * sent to relay's echo agent and saved again as it comes back raises the peak RSS of the command
 * by at most 5× the file's size over a text-only send to the same agent. Each send runs a few
 * times and the lowest peak counts (the machine is shared; a peak only grows by noise). The file
 * must come back byte for byte. Needs `npm run build`.
 */
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin } from "../helpers/cli.js"
import { reportFigures } from "../helpers/figures.js"
import { measure, type Measured } from "../helpers/peakMemory.js"
import { tempHome } from "../helpers/stateHome.js"
import { type AgentHandle, startAgent } from "../servers/agentHarness.js"

const MiB = 1024 * 1024
const FILE_BYTES = 7 * MiB
const ALLOWED_GROWTH = 5 * FILE_BYTES
const ROUNDS = 3

const home = tempHome()
const file = Path.join(home.parent, "seven.bin")
const bytes = randomBytes(FILE_BYTES)
const figures: Record<string, number> = {}
let echo: AgentHandle

beforeAll(async () => {
  if (!Fs.existsSync(relayBin)) throw new Error("dist/main.cjs is missing: run npm run build first")
  Fs.writeFileSync(file, bytes)
  echo = await startAgent({ model: "echo" })
})

afterAll(async () => {
  await echo?.close()
  home.cleanup()
  reportFigures("a 7 MiB file through the echo agent", figures)
})

const env = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }

/** The lowest peak RSS (kB) of `relay message send` over ROUNDS runs, and the last run's result. */
const lowestPeak = async (args: ReadonlyArray<string>): Promise<Measured> => {
  let best: Measured | undefined
  for (let round = 0; round < ROUNDS; round++) {
    const run = await measure(spawn(process.execPath, [relayBin, "message", "send", "--url", echo.baseUrl, ...args, "--json"], { env, stdio: "pipe" }), 60_000)
    expect(run.code, run.stderr).toBe(0)
    if (best === undefined || run.peakKb < best.peakKb) best = { ...run }
  }
  return best!
}

describe("memory of a file sent and received", () => {
  it("a 7 MiB file raises the peak RSS of message send by at most 5× its size", async () => {
    const text = await lowestPeak(["hello"])
    const withFile = await lowestPeak(["--file", file, "hello"])
    const result = JSON.parse(withFile.stdout) as { parts: Array<{ kind: string; path?: string; sha256?: string }> }
    const saved = result.parts.find((part) => part.kind === "file")
    expect(createHash("sha256").update(Fs.readFileSync(String(saved?.path))).digest("hex")).toBe(createHash("sha256").update(bytes).digest("hex"))

    const growthKb = withFile.peakKb - text.peakKb
    Object.assign(figures, {
      text_only_peak_rss_mib: Math.round(text.peakKb / 1024),
      with_file_peak_rss_mib: Math.round(withFile.peakKb / 1024),
      growth_mib: Math.round(growthKb / 1024),
      growth_per_file_byte: Number(((growthKb * 1024) / FILE_BYTES).toFixed(2))
    })
    expect(growthKb * 1024).toBeLessThanOrEqual(ALLOWED_GROWTH)
  })
})
