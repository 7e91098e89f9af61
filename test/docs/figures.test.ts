/**
 * Speed figures live in bench/README.md (and README.md's Performance), where they are dated and
 * measured again; a code comment keeps the reason for a choice and points there, so that it cannot
 * state a time that has since changed (issue #30). This holds src/ to it for measured times
 * ("~N ms", "~N µs"); a limit or a default in a comment ("250 ms apart") is not a measurement.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

const sourcesUnder = (dir: string): ReadonlyArray<string> =>
  Fs.readdirSync(Path.join(root, dir), { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourcesUnder(`${dir}/${entry.name}`) : entry.name.endsWith(".ts") ? [`${dir}/${entry.name}`] : []
  )

const COMMENT = /^\s*(\/\/|\/\*\*|\*)/
const MEASURED_TIME = /~\s?\d[\d.,]*\s?(ms|µs)\b/

describe("performance figures", () => {
  it("finds a measured time in a comment, and not a limit", () => {
    expect(MEASURED_TIME.test(" * a read took ~0.3 ms")).toBe(true)
    expect(MEASURED_TIME.test(" * polls are 250 ms apart")).toBe(false)
  })

  it("no comment in src/ states a measured time: it points to bench/README.md instead", () => {
    const found = sourcesUnder("src").flatMap((file) =>
      Fs.readFileSync(Path.join(root, file), "utf8").split("\n").flatMap((line, index) =>
        COMMENT.test(line) && MEASURED_TIME.test(line) ? [`${file}:${index + 1}: ${line.trim()}`] : []
      )
    )
    expect(found).toEqual([])
  })
})
