// `--store` / RELAY_STORE: each form it takes, and a refusal that never repeats what was given.
import { Either, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import { describeTaskStore, parseTaskStoreChoice } from "../../src/domain/taskStoreChoice.js"

const parse = (text: string) => parseTaskStoreChoice(Redacted.make(text))

describe("parseTaskStoreChoice", () => {
  it("takes memory, file, file:DIR and a postgres URL (kept redacted)", () => {
    expect(parse("memory")).toEqual(Either.right({ _tag: "memory" }))
    expect(parse("file")).toEqual(Either.right({ _tag: "file", dir: undefined }))
    expect(parse("file:./tasks")).toEqual(Either.right({ _tag: "file", dir: "./tasks" }))
    for (const url of ["postgres://relay:s3cret@db/relay", "postgresql://db/relay"]) {
      const chosen = Either.getOrThrow(parse(url))
      expect(chosen._tag).toBe("postgres")
      expect(chosen._tag === "postgres" && Redacted.value(chosen.url)).toBe(url)
      expect(String(chosen._tag === "postgres" && chosen.url)).not.toContain("s3cret")
      expect(chosen._tag === "postgres" && describeTaskStore(chosen)).toBe("PostgreSQL")
    }
  })

  it("refuses anything else without repeating it", () => {
    for (const text of ["", "file:", "mysql://u:s3cret@db", "memory2", "postgres:/u:s3cret@db"]) {
      const error = Either.flip(parse(text)).pipe(Either.getOrThrow)
      expect(error.message).toContain("must be memory, file, file:DIR or postgres://")
      expect(error.message).not.toContain("s3cret")
    }
  })
})
