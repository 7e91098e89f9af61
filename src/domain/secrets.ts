/**
 * Showing secrets and URLs (which may carry them) without giving them away. Comparing them is
 * secretCheck.ts: it needs node:crypto, which what only shows them (every listing) need not load.
 */
/** Shows enough of a secret to recognise it (its last 4 characters), never enough to use it. */
export const maskSecret = (secret: string): string => (secret.length >= 16 ? `…${secret.slice(-4)}` : "****")

/** Secrets shorter than this are not looked for in text (masked or scrubbed): they would match by chance. */
export const MIN_MASKED_LENGTH = 6

/** The secrets worth looking for, longest first: one that holds another is replaced whole. */
const lookedFor = (secrets: ReadonlyArray<string | undefined>): ReadonlyArray<string> =>
  [...new Set(secrets.filter((secret): secret is string => secret !== undefined && secret.length >= MIN_MASKED_LENGTH))]
    .sort((a, b) => b.length - a.length)

const replaced = (text: string, secrets: ReadonlyArray<string>, shown: (secret: string) => string) =>
  secrets.reduce((result, secret) => result.replaceAll(secret, shown(secret)), text)

/** `text` with every occurrence of each secret shown as maskSecret shows it (an agent may echo what it was sent). */
export const maskSecretsIn = (text: string, secrets: ReadonlyArray<string>): string => replaced(text, lookedFor(secrets), maskSecret)

const isPlainObject = (value: unknown): value is object => {
  if (typeof value !== "object" || value === null) return false
  const prototype: unknown = Object.getPrototypeOf(value)
  return prototype === Object.prototype || prototype === null
}

export interface ScrubOptions {
  /** What stands for a secret; maskSecret by default. */
  readonly shown?: (secret: string) => string
  /** A field left as it is (a file's base64 bytes: a secret is never typed there, and a chance match would corrupt it). */
  readonly keep?: (holder: object, key: string) => boolean
}

/**
 * `value` with every occurrence of each secret replaced in every string it holds, however deep: an
 * agent may echo what it was sent in any field (its text, a data part, a file's name or URL, an
 * error). Arrays and plain objects come back as copies; anything else (a class instance, a Date,
 * bytes) as it is, since a copy would lose what it is: where it is printed, its text is masked
 * instead. With no secret to look for, the value itself.
 */
export const scrubSecrets = (value: unknown, secrets: ReadonlyArray<string | undefined>, options: ScrubOptions = {}): unknown => {
  const present = lookedFor(secrets)
  if (present.length === 0) return value
  const shown = options.shown ?? maskSecret
  const keep = options.keep ?? (() => false)
  const walk = (inner: unknown): unknown => {
    if (typeof inner === "string") return replaced(inner, present, shown)
    if (Array.isArray(inner)) return inner.map(walk)
    if (isPlainObject(inner)) {
      return Object.fromEntries(Object.entries(inner).map(([key, field]) => [key, keep(inner, key) ? field : walk(field)]))
    }
    return inner
  }
  return walk(value)
}

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

/** `text` (an error's message, say) with `url` in it, as given or as parsed, shown as redactUrl shows it. */
export const redactUrlIn = (text: string, url: string): string => {
  const spellings = new Set([url])
  try {
    spellings.add(new URL(url).href)
  } catch {
    // Not a URL: only as given.
  }
  let shown = text
  for (const spelling of spellings) shown = shown.split(spelling).join(redactUrl(url))
  return shown
}
