/** Writes a conformance report as JUnit XML to a file (for `relay check --junit FILE`). */
import { FileSystem } from "@effect/platform"
import { Effect } from "effect"
import type { CheckReport, FailOn } from "../../domain/conformance.js"
import { InvalidInput } from "../../domain/errors.js"
import { junitXml } from "../../domain/junitReport.js"

export const saveJunit = Effect.fn("saveJunit")(function*(path: string, report: CheckReport, failOn: FailOn) {
  const fs = yield* FileSystem.FileSystem
  yield* fs.writeFileString(path, junitXml(report, failOn)).pipe(
    Effect.mapError((error) =>
      new InvalidInput({
        reason: `Cannot write the JUnit report to ${path}: ${error._tag === "SystemError" ? error.reason : "bad argument"}`,
        suggestion: "Give --junit a path in a directory that exists and is writable."
      })
    )
  )
})
