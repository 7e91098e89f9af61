/**
 * A scripted "browser" for login tests: follows redirects with a cookie jar and submits each
 * HTML form it meets (login, consent, device code), the way a person clicking through would.
 */

export interface BrowseOptions {
  /** Where the browse ends: the first response from another origin than this (relay's listener). */
  readonly providerOrigin: string
  /** Cancel at the first interaction page instead of consenting (oidc-provider's abort link). */
  readonly deny?: boolean
  readonly login?: string
}

const attribute = (tag: string, name: string) => new RegExp(`\\b${name}="([^"]*)"`).exec(tag)?.[1]

/** The first form of a page, with its fields filled: hidden values kept, the login form answered. */
const firstForm = (html: string, login: string) => {
  const form = /<form\b[^>]*>/.exec(html)?.[0]
  if (form === undefined) return undefined
  const fields = new URLSearchParams()
  for (const [input] of html.matchAll(/<input\b[^>]*>/g)) {
    const name = attribute(input, "name")
    if (name === undefined) continue
    fields.set(name, attribute(input, "value") ?? (name === "login" ? login : name === "password" ? "any-password" : ""))
  }
  return { action: attribute(form, "action") ?? "", fields }
}

/** Browses from `start` until a response comes from outside the provider; returns its status. */
export const browse = async (start: string, options: BrowseOptions): Promise<{ readonly status: number; readonly url: string }> => {
  const cookies = new Map<string, string>()
  let url = start
  let init: { method: string; body?: string } = { method: "GET" }
  for (let step = 0; step < 30; step++) {
    const response = await fetch(url, {
      ...init,
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
      headers: {
        cookie: [...cookies].map(([name, value]) => `${name}=${value}`).join("; "),
        ...(init.body === undefined ? {} : { "content-type": "application/x-www-form-urlencoded" })
      }
    })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = ""] = cookie.split(";")
      const index = pair.indexOf("=")
      cookies.set(pair.slice(0, index), pair.slice(index + 1))
    }
    if (new URL(url).origin !== options.providerOrigin) return { status: response.status, url }
    if (response.status >= 300 && response.status < 400) {
      url = new URL(response.headers.get("location") ?? "", url).href
      init = { method: "GET" }
      continue
    }
    const html = await response.text()
    if (options.deny === true && /\/interaction\/[^/]+$/.test(new URL(url).pathname)) {
      url = `${url}/abort`
      init = { method: "GET" }
      continue
    }
    const form = firstForm(html, options.login ?? "alice")
    if (form === undefined) return { status: response.status, url }
    url = new URL(form.action, url).href
    init = { method: "POST", body: form.fields.toString() }
  }
  throw new Error(`browse: too many steps from ${start}`)
}
