/**
 * Which browser origins may drive the MCP HTTP transports: the rule httpGuards.ts applies, and the
 * `--allow-origin` parsing the CLI does before any HTTP code is loaded.
 */

/**
 * An origin as the `--allow-origin` flag takes it: an http(s) scheme, host and optional port,
 * nothing after; returned in the form browsers send (`new URL().origin`).
 */
export const parseOrigin = (text: string): string | undefined => {
  try {
    const url = new URL(text)
    const bare = url.pathname === "/" && url.search === "" && url.hash === "" && url.username === "" && url.password === ""
    return (url.protocol === "http:" || url.protocol === "https:") && bare && !text.trim().endsWith("/") ? url.origin : undefined
  } catch {
    return undefined
  }
}

const effectivePort = (url: URL) => Number(url.port || (url.protocol === "https:" ? 443 : 80))

/**
 * Whether a request's Origin may drive this server: none at all (not a browser), the origin this
 * server itself serves (http, a host name it answers to, the port the request came in on), or one
 * the user allowed with --allow-origin. Any other local port is a different origin.
 */
export const isAllowedOrigin = (
  origin: string | undefined,
  servedHosts: ReadonlyArray<string>,
  servedPort: number | undefined,
  allowedOrigins: ReadonlyArray<string>
): boolean => {
  if (origin === undefined) return true
  let url: URL
  try {
    url = new URL(origin)
  } catch {
    return false // "null" and other opaque origins
  }
  if (allowedOrigins.includes(url.origin)) return true
  return url.protocol === "http:" && servedHosts.includes(url.hostname) && effectivePort(url) === servedPort
}
