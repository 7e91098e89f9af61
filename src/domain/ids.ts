/**
 * Random (version 4) UUIDs as flat strings, for the ids the agent server makes on every request
 * (tasks, contexts, artifacts, agent messages).
 *
 * node's crypto.randomUUID joins its text from pieces, and V8 keeps such a string as a tree of
 * them, many times its 36 characters, until something flattens it; ids are kept for as long as
 * their task and used as map keys, so the store had to flatten each. Written byte by byte into a
 * buffer and read back once, an id is one flat string from the start, for less CPU (figures:
 * bench/README.md). The randomness is node's, drawn from the same CSPRNG in blocks (as randomUUID does).
 */
import { randomFillSync } from "node:crypto"

const IDS_PER_FILL = 256
const random = Buffer.alloc(16 * IDS_PER_FILL)
let next = random.length
const text = Buffer.alloc(36)
const DASH = 0x2d
/** The two lower-case hex digits of each byte, as one 16-bit pair (low byte first). */
const HEX_PAIRS = Uint16Array.from({ length: 256 }, (_, byte) => {
  const digits = byte.toString(16).padStart(2, "0")
  return digits.charCodeAt(0) | (digits.charCodeAt(1) << 8)
})

/** A random UUID (RFC 9562 version 4, variant 10xx), lower-case: what crypto.randomUUID returns. */
export const randomId = (): string => {
  if (next === random.length) {
    randomFillSync(random)
    next = 0
  }
  const at = next
  next += 16
  random[at + 6] = (random[at + 6]! & 0x0f) | 0x40
  random[at + 8] = (random[at + 8]! & 0x3f) | 0x80
  let out = 0
  for (let index = 0; index < 16; index++) {
    if (index === 4 || index === 6 || index === 8 || index === 10) text[out++] = DASH
    const pair = HEX_PAIRS[random[at + index]!]!
    text[out++] = pair & 0xff
    text[out++] = pair >> 8
  }
  return text.toString("latin1", 0, 36)
}
