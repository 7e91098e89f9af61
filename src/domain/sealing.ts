/**
 * Secrets kept in a shared store (push tokens, webhook credentials) are sealed with AES-256-GCM under
 * a key from the environment: whoever reads the database without the key learns nothing from them,
 * and a sealed value moved to another row does not open (the row's name is authenticated with it).
 * Every instance sharing the store needs the same key.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from "node:crypto"

export const STORE_KEY_VARIABLE = "RELAY_STORE_KEY"

/** Fewer characters than this would make a key one can guess. */
export const MIN_STORE_KEY_CHARS = 16

const VERSION = "v1"
const IV_BYTES = 12
const TAG_BYTES = 16

export interface Sealer {
  readonly seal: (plain: string, row: string) => string
  /** Undefined when the text was not sealed under this key for this row. */
  readonly open: (sealed: string, row: string) => string | undefined
}

/** The row a push config's sealed secrets belong to: sealed text copied to another config does not open. */
export const pushConfigRow = (taskId: string, configId: string) => `${taskId}\u0000${configId}`

/** The sealer of a key text (any characters, at least MIN_STORE_KEY_CHARS of them). */
export const sealerOf = (keyText: string): Sealer => {
  const key = Buffer.from(hkdfSync("sha256", keyText, "relay-store", "push-configs", 32))
  return {
    seal: (plain, row) => {
      const iv = randomBytes(IV_BYTES)
      const cipher = createCipheriv("aes-256-gcm", key, iv).setAAD(Buffer.from(row, "utf8"))
      const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()])
      return `${VERSION}:${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64")}`
    },
    open: (sealed, row) => {
      if (!sealed.startsWith(`${VERSION}:`)) return undefined
      const bytes = Buffer.from(sealed.slice(VERSION.length + 1), "base64")
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES)).setAAD(Buffer.from(row, "utf8"))
        decipher.setAuthTag(bytes.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
        return Buffer.concat([decipher.update(bytes.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString("utf8")
      } catch {
        return undefined
      }
    }
  }
}
