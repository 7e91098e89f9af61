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
