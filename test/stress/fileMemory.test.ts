/**
 * What a file costs `relay message send` in memory (issue 29, "Done when"): a 7 MiB random file
 * sent to relay's echo agent and saved again as it comes back raises the peak RSS of the command
 * by at most 5× the file's size over a text-only send to the same agent, streamed (`--stream`) or
 * not. Each send runs a few times and the lowest peak counts (the machine is shared; a peak only
 * grows by noise). The file must come back byte for byte. Needs `npm run build`.
 */
import { spawn } from "node:child_process"
import { createHash, randomBytes } from "node:crypto"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { relayBin, requireBuiltRelay } from "../helpers/cli.js"
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
  requireBuiltRelay()
  Fs.writeFileSync(file, bytes)
  echo = await startAgent({ model: "echo" })
})

afterAll(async () => {
  await echo?.close()
  home.cleanup()
  reportFigures("a 7 MiB file through the echo agent", figures)
})

const env = { ...process.env, RELAY_HOME: home.stateDir, NO_COLOR: "1" }

/** The lowest peak RSS (kB) of `relay message send ARGS` over ROUNDS runs, and the last run's result. */
const lowestPeak = async (args: ReadonlyArray<string>): Promise<Measured> => {
  let best: Measured | undefined
  for (let round = 0; round < ROUNDS; round++) {
    const run = await measure(
      spawn(process.execPath, [relayBin, "message", "send", "--url", echo.baseUrl, ...args, "--json"], { env, stdio: "pipe" }),
      60_000
    )
    best = { ...run, peakKb: Math.min(run.peakKb, best?.peakKb ?? Infinity) }
  }
  return best!
}

const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex")

/** The file came back whole and was saved: the sha256 of the saved copy is the sent file's. */
const expectSavedWhole = (run: Measured) => {
  expect.soft(run.code, run.stderr).toBe(0)
  if (run.code !== 0) return
  // --json prints one indented object; with --stream, one line per update and the result last.
  const printed = run.stdout.trimEnd()
  const result = JSON.parse(printed.startsWith("{\n") ? printed : printed.split("\n").at(-1)!) as {
    parts: Array<{ kind: string; path: string | null }>
  }
  const saved = result.parts.find((part) => part.kind === "file")
  expect.soft(sha256(Fs.readFileSync(String(saved?.path)))).toBe(sha256(bytes))
}

describe("memory of a file sent and received", () => {
  it("a 7 MiB file raises the peak RSS of message send by at most 5× its size, streamed or not", async () => {
    const text = await lowestPeak(["hello"])
    expect(text.code, text.stderr).toBe(0)
    figures["text_only_peak_rss_mib"] = Math.round(text.peakKb / 1024)
    for (const [door, extra] of [["stream", ["--stream"]], ["send", []]] as const) {
      const run = await lowestPeak([...extra, "--file", file, "hello"])
      if (run.code === 0) {
        Object.assign(figures, {
          [`${door}_peak_rss_mib`]: Math.round(run.peakKb / 1024),
          [`${door}_growth_per_file_byte`]: Number(((run.peakKb - text.peakKb) * 1024 / FILE_BYTES).toFixed(1))
        })
      }
      // Each door's verdict is given, whatever the other's.
      expectSavedWhole(run)
      if (run.code === 0) expect.soft((run.peakKb - text.peakKb) * 1024, door).toBeLessThanOrEqual(ALLOWED_GROWTH)
    }
  })
})
