import { describe, expect, it } from "vitest"
import { maskSecret, maskSecretsIn, scrubSecrets } from "../../src/domain/secrets.js"

const TOKEN = "token-0123456789abcdefWXYZ"

describe("scrubSecrets", () => {
  it("masks a secret in every string however deep, and leaves other values and short secrets alone", () => {
    const value = { text: `said ${TOKEN}`, parts: [{ data: { note: TOKEN, count: 2, none: null } }], short: "abc" }
    expect(scrubSecrets(value, [TOKEN, undefined, "abc"])).toEqual({
      text: `said ${maskSecret(TOKEN)}`,
      parts: [{ data: { note: maskSecret(TOKEN), count: 2, none: null } }],
      short: "abc"
    })
  })

  it("replaces a secret that holds another whole, whatever order they come in", () => {
    const inner = TOKEN.slice(0, 12)
    expect(scrubSecrets(`x${TOKEN}y`, [inner, TOKEN], { shown: () => "[redacted]" })).toBe("x[redacted]y")
    expect(maskSecretsIn(`x${TOKEN}y`, [inner, TOKEN])).toBe(`x${maskSecret(TOKEN)}y`)
  })

  it("copies plain objects and arrays only: a class instance, a Date or bytes come back as they are (their printed text is masked)", () => {
    class Held {
      constructor(readonly text: string) {}
    }
    const bytes = new Uint8Array(1024)
    const held = new Held(TOKEN)
    const when = new Date(0)
    const scrubbed = scrubSecrets({ bytes, held, when, list: [held], text: TOKEN }, [TOKEN]) as Record<string, unknown>
    expect(scrubbed["bytes"]).toBe(bytes)
    expect(scrubbed["held"]).toBe(held)
    expect(scrubbed["when"]).toBe(when)
    expect(scrubbed["list"]).toEqual([held])
    expect(scrubbed["text"]).toBe(maskSecret(TOKEN))
  })

  it("leaves the fields `keep` names as they are, and the value itself with no secret to look for", () => {
    const value = { data: TOKEN, name: TOKEN }
    expect(scrubSecrets(value, [TOKEN], { keep: (_, key) => key === "data" })).toEqual({ data: TOKEN, name: maskSecret(TOKEN) })
    expect(scrubSecrets(value, [])).toBe(value)
  })
})
