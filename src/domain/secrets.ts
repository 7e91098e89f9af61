/**
 * Handling secrets: comparing a presented one with the expected one in constant time, and showing
 * secrets and URLs (which may carry them) without giving them away.
 */
import { createHash, timingSafeEqual } from "node:crypto"

const sha256 = (text: string) => createHash("sha256").update(text, "utf8").digest()

/**
 * A check against one expected secret; its digest is computed once. Both are hashed first, so the
 * comparison takes the same time whatever the presented secret's length or content.
 */
export const secretCheck = (expected: string) => {
  const digest = sha256(expected)
  return (presented: string): boolean => timingSafeEqual(digest, sha256(presented))
}

export const secretMatches = (expected: string, presented: string): boolean => secretCheck(expected)(presented)

/** Shows enough of a secret to recognise it (its last 4 characters), never enough to use it. */
export const maskSecret = (secret: string): string => (secret.length >= 16 ? `…${secret.slice(-4)}` : "****")

/** A URL fit to print: user info and query (where tokens hide) replaced by "***". */
export const redactUrl = (url: string): string => {
  try {
    const parsed = new URL(url)
    const userInfo = parsed.username !== "" || parsed.password !== "" ? "***@" : ""
    const path = parsed.pathname === "/" ? "" : parsed.pathname
    return `${parsed.protocol}//${userInfo}${parsed.host}${path}${parsed.search === "" ? "" : "?***"}`
  } catch {
    return "(not a URL)"
  }
}
