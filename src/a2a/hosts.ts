/** Host names and addresses, as `--host` takes them and URLs carry them (IPv6 with or without brackets). */

const unbracketed = (host: string) => host.toLowerCase().replace(/^\[|\]$/g, "")

/** localhost (and *.localhost), 127.0.0.0/8 and ::1: only this machine. */
export const isLoopbackHost = (host: string): boolean => {
  const bare = unbracketed(host)
  return bare === "localhost" || bare.endsWith(".localhost") || /^127\.\d+\.\d+\.\d+$/.test(bare) || bare === "::1"
}

/** 0.0.0.0 or ::, a bind to every interface. */
export const isAllInterfaces = (host: string): boolean => {
  const bare = unbracketed(host)
  return bare === "0.0.0.0" || bare === "::"
}

/**
 * A host as `--allow-interface-host` takes it (a name or an IP address, IPv6 with or without
 * brackets) in the one spelling URLs give it (lower case, IPv4 dotted, IPv6 compressed, no
 * brackets); undefined when the text is not a bare host (a scheme, a port or a path).
 */
export const canonicalHostName = (text: string): string | undefined => {
  const host = text.trim()
  try {
    const url = new URL(`http://${host.includes(":") && !host.startsWith("[") ? `[${host}]` : host}/`)
    const bare = url.port === "" && url.username === "" && url.password === "" && url.pathname === "/" && !/[?#]/.test(url.href)
    // A default port (`[::1]:80`) leaves no trace in the URL: refused by its text.
    return bare && host !== "" && !host.includes("]:") ? unbracketed(url.hostname) : undefined
  } catch {
    return undefined
  }
}

/** The origin of a URL (scheme, host and port); undefined when the text is not a URL. */
export const originOfUrl = (url: string): string | undefined => {
  try {
    return new URL(url).origin
  } catch {
    return undefined
  }
}

/** The host of a URL in canonicalHostName's spelling; undefined when the text is not a URL. */
export const hostOfUrl = (url: string): string | undefined => {
  try {
    return unbracketed(new URL(url).hostname)
  } catch {
    return undefined
  }
}
