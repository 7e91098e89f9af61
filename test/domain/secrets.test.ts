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

  it("leaves the fields `keep` names as they are, and the value itself with no secret to look for", () => {
    const value = { data: TOKEN, name: TOKEN }
    expect(scrubSecrets(value, [TOKEN], { keep: (_, key) => key === "data" })).toEqual({ data: TOKEN, name: maskSecret(TOKEN) })
    expect(scrubSecrets(value, [])).toBe(value)
  })
})
