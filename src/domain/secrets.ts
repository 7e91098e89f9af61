/**
 * Showing secrets and URLs (which may carry them) without giving them away. Comparing them is
 * secretCheck.ts: it needs node:crypto, which what only shows them (every listing) need not load.
 */
/** Shows enough of a secret to recognise it (its last 4 characters), never enough to use it. */
export const maskSecret = (secret: string): string => (secret.length >= 16 ? `…${secret.slice(-4)}` : "****")

/** Secrets shorter than this are not looked for in text (masked or scrubbed): they would match by chance. */
export const MIN_MASKED_LENGTH = 6

/** `text` with every occurrence of each secret shown as maskSecret shows it (an agent may echo what it was sent). */
export const maskSecretsIn = (text: string, secrets: ReadonlyArray<string>): string =>
  secrets.reduce(
    (shown, secret) => (secret.length < MIN_MASKED_LENGTH ? shown : shown.replaceAll(secret, maskSecret(secret))),
    text
  )

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
