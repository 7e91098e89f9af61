import { Terminal } from "@effect/platform/Terminal"
import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { vi } from "vitest"
import * as LazyTerminal from "../../src/cli/lazyTerminal.js"

describe("the terminal made on first use (cli/lazyTerminal.ts)", () => {
  it.effect("answers as NodeTerminal does: size and TTY from stdout, display writes to stdout", () =>
    Effect.gen(function*() {
      const terminal = yield* Terminal
      expect(yield* terminal.isTTY).toBe(Boolean(process.stdout.isTTY))
      expect(yield* terminal.columns).toBe(process.stdout.columns ?? 0)
      const write = vi.spyOn(process.stdout, "write").mockImplementation((_text, done?: unknown) => {
        if (typeof done === "function") done()
        return true
      })
      try {
        yield* terminal.display("prompt> ")
        expect(write).toHaveBeenCalledWith("prompt> ", expect.any(Function))
      } finally {
        write.mockRestore()
      }
    }).pipe(Effect.scoped, Effect.provide(LazyTerminal.layer)))
})
