/**
 * Names from an agent made safe to save a file under (a file an answer carries, the folder of a
 * task's files): one plain name inside the folder, whatever the agent wrote.
 *
 * - only the last segment of a path is kept (`../../x` is `x`, `C:\a\b.txt` is `b.txt`);
 * - control characters (NUL included), bidi controls and the characters Windows refuses
 *   (`<>:"|?*`) are replaced by `_`; leading dots and spaces, and trailing dots and spaces
 *   (Windows drops them) are removed, so no name is hidden (`.bashrc` is `bashrc`) or `..`;
 * - Windows' reserved device names (CON, NUL, COM1, …, and the console's CONIN$ and CONOUT$, with any
 *   extension) get a `_` before them;
 * - at most MAX_NAME_BYTES bytes of UTF-8, cut before the extension, never inside a character;
 * - a name of nothing but dots, spaces and such characters (or none) is the fallback.
 */

/** Longest name kept, in bytes of UTF-8: file systems allow 255, and a ` (12)` suffix may follow. */
export const MAX_NAME_BYTES = 200

/** Longest extension kept whole when a name is cut. */
const MAX_EXTENSION_CHARS = 16

const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069<>:"|?*]/g
const RESERVED = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i

const utf8Bytes = (text: string) => Buffer.byteLength(text, "utf8")

/** The longest start of `text` within `bytes` of UTF-8, cut between characters (code points). */
const cutToBytes = (text: string, bytes: number): string => {
  let kept = ""
  let used = 0
  for (const character of text) {
    used += utf8Bytes(character)
    if (used > bytes) break
    kept += character
  }
  return kept
}

/** `name.ext` → [`name`, `.ext`]; no extension for a dot-less name or one longer than MAX_EXTENSION_CHARS. */
const splitExtension = (name: string): readonly [string, string] => {
  const dot = name.lastIndexOf(".")
  if (dot <= 0 || name.length - dot > MAX_EXTENSION_CHARS + 1) return [name, ""]
  return [name.slice(0, dot), name.slice(dot)]
}

/** Within MAX_NAME_BYTES, the extension kept. */
const bounded = (name: string): string => {
  if (utf8Bytes(name) <= MAX_NAME_BYTES) return name
  const [stem, extension] = splitExtension(name)
  return `${cutToBytes(stem, MAX_NAME_BYTES - utf8Bytes(extension)).replace(/[. ]+$/, "")}${extension}`
}

/** The agent's `name` as a safe file (or folder) name, else `fallback` (itself safe). */
export const safeFileName = (name: string | null | undefined, fallback: string): string => {
  const lastSegment = (name ?? "").split(/[/\\]/).pop() ?? ""
  // A name of nothing but dots, spaces and unsafe characters says nothing: the fallback says more.
  if (lastSegment.replace(UNSAFE, "").replace(/[. ]/g, "") === "") return fallback
  const cleaned = lastSegment.normalize("NFC").replace(UNSAFE, "_").replace(/^[. ]+/, "").replace(/[. ]+$/, "")
  const safe = bounded(cleaned)
  return RESERVED.test(safe) ? `_${safe}` : safe
}

/** The name with ` (n)` before its extension: the n-th try at a name not taken yet. */
export const numberedName = (name: string, n: number): string => {
  const [stem, extension] = splitExtension(name)
  return `${stem} (${n})${extension}`
}
