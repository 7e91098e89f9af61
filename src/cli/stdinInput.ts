/**
 * Text read from stdin, for a message piped in (`echo hi | relay message send --url A`, or `-` as the
 * text) and for secrets given as `-` (secretInput.ts): at most `limit` bytes, so a runaway pipe
 * fails with a clear error instead of filling memory.
 */
import { Effect } from "effect"
import { InvalidInput } from "../domain/errors.js"

export const readStdin = (limit: number, what: string): Effect.Effect<string, InvalidInput> =>
  Effect.async<string, InvalidInput>((resume) => {
    const chunks: Array<Buffer> = []
    let size = 0
    const onData = (chunk: Buffer) => {
      size += chunk.length
      if (size > limit) {
        done()
        resume(Effect.fail(
          new InvalidInput({
            reason: `${what} on stdin is larger than ${limit} bytes`,
            suggestion: "Send a shorter text, or a file as a file part."
          })
        ))
        return
      }
      chunks.push(chunk)
    }
    const onEnd = () => {
      done()
      resume(Effect.succeed(Buffer.concat(chunks).toString("utf8")))
    }
    const done = () => {
      process.stdin.off("data", onData).off("end", onEnd).pause()
    }
    process.stdin.on("data", onData).once("end", onEnd)
    return Effect.sync(done)
  })
