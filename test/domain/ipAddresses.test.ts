import { describe, expect, it } from "vitest"
import { hostClasses, hostKinds, reachedAddresses } from "../../src/domain/ipAddresses.js"
import { METADATA_SPELLINGS } from "../helpers/addresses.js"

const reached = (literal: string) => reachedAddresses(literal)?.map((address) => address.toString())

describe("reachedAddresses", () => {
  it("normalises every textual IPv4 form to the dotted address", () => {
    for (
      const spelling of ["169.254.169.254", "0xa9.0xfe.0xa9.0xfe", "0251.0376.0251.0376", "2852039166", "169.254.43518", "169.16689662"]
    ) {
      expect(reached(spelling)).toEqual(["169.254.169.254"])
    }
    expect(reached("127.1")).toEqual(["127.0.0.1"])
    expect(reached("0x7f000001")).toEqual(["127.0.0.1"])
  })

  it("unwraps IPv6 addresses that carry an IPv4 address to that address", () => {
    for (const spelling of METADATA_SPELLINGS) expect(reached(spelling), spelling).toEqual(["169.254.169.254"])
    expect(reached("::ffff:0:a9fe:a9fe")).toEqual(["169.254.169.254"])
  })

  it("adds loopback to the unspecified address in every spelling: connecting to it reaches this machine", () => {
    for (const spelling of ["0.0.0.0", "0", "0x0", "0.0", "[::ffff:0.0.0.0]", "[::ffff:0:0]"]) {
      expect(reached(spelling), spelling).toEqual(["0.0.0.0", "127.0.0.1"])
    }
    for (const spelling of ["::", "[::]", "[0:0:0:0:0:0:0:0]"]) expect(reached(spelling), spelling).toEqual(["::", "::1"])
  })

  it("reads a Teredo address as its server and its de-obfuscated client", () => {
    // RFC 4380 §4: server 65.54.227.120, client 192.0.2.45 obfuscated as 3fff:fdd2.
    expect(reached("2001:0:4136:e378:8000:63bf:3fff:fdd2")).toEqual(["65.54.227.120", "192.0.2.45"])
  })

  it("leaves other IPv6 addresses alone and answers undefined for host names", () => {
    expect(reached("2606:4700:4700::1111")).toEqual(["2606:4700:4700::1111"])
    expect(reached("[::1]")).toEqual(["::1"])
    expect(reached("64:ff9b:1::a9fe:a9fe")).toEqual(["64:ff9b:1::a9fe:a9fe"])
    expect(reached("hooks.example.com")).toBeUndefined()
    expect(reached("169.254.169.254.nip.io")).toBeUndefined()
  })
})

describe("hostKinds", () => {
  const kinds = (host: string) => hostKinds(host)

  it("calls the metadata address private in every spelling", () => {
    for (const spelling of METADATA_SPELLINGS) expect(kinds(spelling), spelling).toEqual(["private"])
  })

  it("knows loopback in every spelling", () => {
    for (
      const host of [
        "127.0.0.1",
        "127.1",
        "2130706433",
        "0x7f.1",
        "[::1]",
        "::1",
        "[::ffff:127.0.0.1]",
        "[::ffff:7f00:1]",
        "[::ffff:0:7f00:1]",
        "[64:ff9b::7f00:1]",
        "[2002:7f00:1::]",
        "localhost",
        "LOCALHOST.",
        "api.localhost"
      ]
    ) {
      expect(kinds(host), host).toEqual(["loopback"])
    }
  })

  it("calls private, link-local, unique local, shared, reserved and unspecified ranges private", () => {
    for (
      const host of [
        "10.1.2.3",
        "172.16.0.1",
        "172.31.255.255",
        "192.168.0.1",
        "100.64.0.1",
        "0.0.0.0",
        "0",
        "224.0.0.1",
        "255.255.255.255",
        "240.0.0.1",
        "198.18.0.1",
        "192.0.2.1",
        "[fe80::1]",
        "fe80::1%eth0",
        "[fc00::1]",
        "[fd12:3456::1]",
        "[fec0::1]",
        "[ff02::1]",
        "[::]",
        "[64:ff9b:1::a00:1]",
        "[2001:db8::1]",
        "[::ffff:10.0.0.1]",
        "[64:ff9b::c0a8:1]",
        "[2002:c0a8:101::]",
        "[2001:0:4136:e378:8000:63bf:f5ff:fffe]",
        // IPv6 outside global unicast (2000::/3) and outside every named range: no public route reaches it.
        "[4000::1]",
        "[c000::1]",
        "[400::1]"
      ]
    ) {
      expect(kinds(host), host).toEqual(expect.arrayContaining(["private"]))
    }
  })

  it("calls global unicast public, whatever its spelling", () => {
    for (
      const host of [
        "93.184.216.34",
        "1.1.1.1",
        "[2606:4700:4700::1111]",
        "[::ffff:1.1.1.1]",
        "[64:ff9b::101:101]",
        "[2002:101:101::]",
        "172.32.0.1",
        "100.128.0.1"
      ]
    ) {
      expect(kinds(host), host).toEqual(["public"])
    }
  })

  it("leaves host names other than localhost to resolution", () => {
    for (const host of ["hooks.example.com", "metadata.google.internal", "localhost.example.com"]) expect(kinds(host)).toBeUndefined()
  })
})

describe("hostClasses (the interface rule's finer classes)", () => {
  it("tells cloud metadata services from the rest of link-local and private, in every spelling", () => {
    for (const spelling of METADATA_SPELLINGS) expect(hostClasses(spelling), spelling).toEqual(["metadata"])
    for (const host of ["169.254.170.2", "[fd00:ec2::254]", "fd00:0ec2:0:0::254", "100.100.100.200", "168.63.129.16"]) {
      expect(hostClasses(host), host).toEqual(["metadata"])
    }
    for (const host of ["169.254.1.1", "[fe80::1]", "[::ffff:169.254.0.7]"]) expect(hostClasses(host), host).toEqual(["link-local"])
    for (const host of ["10.1.2.3", "192.168.0.1", "[fd00:ec2::1]", "100.64.0.1"]) {
      expect(hostClasses(host), host).toEqual(["private"])
    }
    // Unspecified, and this machine: a private card cannot point at it to reach loopback services.
    for (const host of ["0.0.0.0", "[::]"]) expect(hostClasses(host), host).toEqual(["private", "loopback"])
    for (const host of ["127.0.0.2", "[::1]", "localhost"]) expect(hostClasses(host), host).toEqual(["loopback"])
    expect(hostClasses("93.184.216.34")).toEqual(["public"])
    expect(hostClasses("agent.example.com")).toBeUndefined()
  })

  it("keeps the webhook guard's coarser kinds: metadata and link-local are private there", () => {
    for (const host of ["169.254.169.254", "169.254.1.1", "[fd00:ec2::254]", "168.63.129.16"]) {
      expect(hostKinds(host), host).toEqual(["private"])
    }
  })
})
