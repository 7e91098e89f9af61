/**
 * A secret given as "-" (`--bearer-token -`, `--api-key -`, `--client-secret -`), so it stays out of
 * shell history and `ps`. Typed on a terminal: a prompt on stderr, echo off, ended by Enter. Piped
 * or redirected: the whole of stdin, trimmed.
 */
import { Effect } from "effect"
import { Writable } from "node:stream"
import type { InvalidInput } from "../domain/errors.js"
import { readStdin } from "./stdinInput.js"

/** No secret is anywhere near this long; a larger stdin is not a secret. */
const MAX_SECRET_BYTES = 64 * 1024

export const readSecretInput = (label: string): Effect.Effect<string, InvalidInput> =>
  process.stdin.isTTY === true
    ? promptWithoutEcho(label)
    : Effect.map(readStdin(MAX_SECRET_BYTES, `The ${label.toLowerCase()}`), (input) => input.trim())

/** Swallows what readline would echo: the typed characters never reach the screen. */
const nowhere = () => new Writable({ write: (_chunk, _encoding, done) => done() })

/**
 * readline in terminal mode (raw input: no echo by the terminal) writing its echo nowhere. Ctrl-C
 * arrives as a key in raw mode, so it is raised as the SIGINT it would have been; Ctrl-D on an
 * empty line ends with nothing typed.
 */
const promptWithoutEcho = (label: string): Effect.Effect<string> =>
  Effect.flatMap(Effect.promise(() => import("node:readline")), (readline) =>
    Effect.async<string>((resume) => {
      const input = readline.createInterface({ input: process.stdin, output: nowhere(), terminal: true })
      let typed = ""
      let interrupted = false
      input.on("line", (line) => {
        typed = line
        input.close()
      })
      input.on("SIGINT", () => {
        interrupted = true
        input.close()
        process.kill(process.pid, "SIGINT")
      })
      input.on("close", () => {
        process.stderr.write("\n")
        if (!interrupted) resume(Effect.succeed(typed.trim()))
      })
      process.stderr.write(`${label}: `)
      return Effect.sync(() => {
        interrupted = true
        input.close()
      })
    }))
