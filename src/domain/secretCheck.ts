/** Comparing a presented secret with the expected one in constant time. */
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
