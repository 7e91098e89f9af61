import { describe, expect, it } from "vitest"
import { addCallSecret, secretSafeText } from "../../src/cli/output.js"
import { maskSecret } from "../../src/domain/secrets.js"

const TOKEN = "stream-secret-0123456789abcdef"
addCallSecret(TOKEN)

/** What a stream prints for the pieces, the held-back rest last. */
const printed = (pieces: ReadonlyArray<string>) => {
  const text = secretSafeText()
  return { during: pieces.map(text.take), rest: text.rest() }
}

describe("streamed text with a secret given for the call", () => {
  it("masks a secret split across pieces: the end that may begin it waits for the next piece", () => {
    const { during, rest } = printed(["the token is stream-sec", "ret-0123456789", "abcdef, done"])
    expect(during.join("") + rest).toBe(`the token is ${maskSecret(TOKEN)}, done`)
    expect(during[0]).toBe("the token is ")
    expect(during.join("")).not.toContain("stream-sec")
  })

  it("holds nothing back when no secret can begin at the end, and gives back what it held at the end of the stream", () => {
    expect(printed(["plain text ", "goes out at once\n"]).during).toEqual(["plain text ", "goes out at once\n"])
    const { during, rest } = printed(["ends with stream-s"])
    expect(during).toEqual(["ends with "])
    expect(rest).toBe("stream-s")
  })

  it("lets a near miss go once the next piece shows it is not the secret", () => {
    const { during, rest } = printed(["a stream-", "lined answer"])
    expect(during).toEqual(["a ", "stream-lined answer"])
    expect(rest).toBe("")
  })
})
