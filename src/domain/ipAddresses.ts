/**
 * Which kind of address a host reaches, for the guard against server-side request forgery.
 *
 * IP literals are parsed with ipaddr.js (every textual IPv4 form the WHATWG URL parser accepts:
 * decimal, octal, hex, short and 32-bit forms) and IPv6 addresses that carry an IPv4 address are
 * unwrapped to the IPv4 address the packets end up at before any range is judged: IPv4-mapped
 * (::ffff:a.b.c.d), IPv4-compatible (::a.b.c.d), IPv4-translated (::ffff:0:a.b.c.d, RFC 6145),
 * NAT64 (64:ff9b::/96, RFC 6052), 6to4 (2002::/16) and Teredo (2001::/32: its server and its
 * de-obfuscated client address). Only global unicast counts as public.
 */
import ipaddr from "ipaddr.js"

export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6

/** `loopback`: this machine; `private`: anything not globally routable (private, link-local, metadata, …). */
export type AddressKind = "loopback" | "private" | "public"

/**
 * The finer classes the interface rule compares (a card's interfaces stay in the class of the card's
 * host): `metadata` is a cloud's instance metadata service, `link-local` the rest of 169.254/16 and
 * fe80::/10, `private` every other address that is not global unicast.
 */
export type AddressClass = "loopback" | "private" | "link-local" | "metadata" | "public"

/** Instance metadata services: AWS (IMDS, ECS, EKS Pod Identity, also over IPv6), GCP, Azure, Alibaba Cloud. */
const METADATA_ADDRESSES: ReadonlySet<string> = new Set([
  "169.254.169.254",
  "169.254.170.2",
  "169.254.170.23",
  "168.63.129.16",
  "100.100.100.200",
  "fd00:ec2::254",
  "fd00:ec2::23"
])

const ipv4From = (high: number, low: number): ipaddr.IPv4 => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff])

const isZero = (parts: ReadonlyArray<number>) => parts.every((part) => part === 0)

/** The IPv4 addresses an IPv6 address hands its packets to, or none when it carries no IPv4 address. */
const embeddedIpv4 = (address: ipaddr.IPv6): ReadonlyArray<ipaddr.IPv4> => {
  const p = address.parts
  const last32 = () => ipv4From(p[6] ?? 0, p[7] ?? 0)
  switch (address.range()) {
    case "ipv4Mapped":
    case "rfc6145":
      return [last32()]
    case "rfc6052":
      // Only the well-known /96 prefix has a fixed layout; the local-use 64:ff9b:1::/48 stays private.
      return isZero(p.slice(2, 6)) ? [last32()] : []
    case "6to4":
      return [ipv4From(p[1] ?? 0, p[2] ?? 0)]
    case "teredo":
      return [ipv4From(p[2] ?? 0, p[3] ?? 0), ipv4From(~(p[6] ?? 0) & 0xffff, ~(p[7] ?? 0) & 0xffff)]
    case "unicast":
      // IPv4-compatible ::a.b.c.d (deprecated, but still routed by some stacks).
      return isZero(p.slice(0, 6)) ? [last32()] : []
    default:
      return []
  }
}

/**
 * The host as an http(s) URL names it: the WHATWG host parser is what clients connect with, so
 * `0x7f.1` or `2852039166` are judged as the dotted address they become. IPv6 comes back bare.
 */
const canonicalHost = (host: string): string => {
  const bracketed = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host
  let hostname: string
  try {
    hostname = new URL(`http://${bracketed}/`).hostname
  } catch {
    hostname = host.toLowerCase()
  }
  return hostname.replace(/^\[(.*)\]$/, "$1")
}

/**
 * The unspecified address with the loopback address it also reaches: a connection to 0.0.0.0 or ::
 * goes to this machine, so it must not pass where loopback may not.
 */
const withThisMachine = (address: IpAddress): ReadonlyArray<IpAddress> =>
  address.range() !== "unspecified"
    ? [address]
    : [address, address.kind() === "ipv4" ? ipaddr.parse("127.0.0.1") : ipaddr.parse("::1")]

/**
 * The addresses an IP literal reaches (the embedded IPv4 address for IPv6 forms that carry one;
 * loopback too for the unspecified address), or undefined when `literal` is not an IP address (a host name).
 */
export const reachedAddresses = (literal: string): ReadonlyArray<IpAddress> | undefined => {
  const bare = canonicalHost(literal)
  if (!ipaddr.isValid(bare)) return undefined
  const address = ipaddr.parse(bare)
  const embedded = address.kind() === "ipv4" ? [] : embeddedIpv4(address as ipaddr.IPv6)
  return (embedded.length === 0 ? [address] : embedded).flatMap(withThisMachine)
}

/**
 * IPv6's global unicast space (RFC 4291 §2.4, IANA): ipaddr.js calls every address outside its
 * special ranges `unicast`, unassigned space such as 4000::/3 too, which no public route reaches.
 */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR("2000::/3")

const isGlobalUnicast = (address: IpAddress) => address.kind() === "ipv4" || address.match(GLOBAL_UNICAST_V6)

/** The class of one address (IPv6 forms that carry an IPv4 address are judged by it: see reachedAddresses). */
export const addressClass = (address: IpAddress): AddressClass => {
  if (METADATA_ADDRESSES.has(address.toString())) return "metadata"
  switch (address.range()) {
    case "loopback":
      return "loopback"
    case "linkLocal":
      return "link-local"
    case "unicast":
      return isGlobalUnicast(address) ? "public" : "private"
    default:
      return "private"
  }
}

const kindOf = (kind: AddressClass): AddressKind => (kind === "loopback" || kind === "public" ? kind : "private")

/** Loopback, public (global unicast) or private (every other special-purpose range, metadata included). */
export const addressKind = (address: IpAddress): AddressKind => kindOf(addressClass(address))

const isLocalhostName = (name: string) => name === "localhost" || name.endsWith(".localhost")

/**
 * The kinds of address a host reaches without asking DNS: an IP literal by what it reaches,
 * `localhost` and `*.localhost` (RFC 6761) as loopback; undefined for other host names, which only
 * resolution can judge.
 */
export const hostKinds = (host: string): ReadonlyArray<AddressKind> | undefined => hostClasses(host)?.map(kindOf)

/** hostKinds in the finer classes of the interface rule. */
export const hostClasses = (host: string): ReadonlyArray<AddressClass> | undefined => {
  const name = canonicalHost(host).replace(/\.$/, "")
  if (isLocalhostName(name)) return ["loopback"]
  return reachedAddresses(name)?.map(addressClass)
}
