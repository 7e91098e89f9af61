import { describe, expect, it } from "vitest"
import { canonicalHostName, isAllInterfaces, isLoopbackHost } from "../../src/a2a/hosts.js"

describe("hosts", () => {
  it("knows loopback hosts in every spelling", () => {
    for (const host of ["localhost", "LOCALHOST", "app.localhost", "127.0.0.1", "127.1.2.3", "::1", "[::1]"]) {
      expect(isLoopbackHost(host)).toBe(true)
    }
    for (const host of ["0.0.0.0", "::", "10.0.0.1", "128.0.0.1", "localhost.example.com", "example.com", "127.0.0", "[::2]"]) {
      expect(isLoopbackHost(host)).toBe(false)
    }
  })

  it("knows a bind to every interface", () => {
    for (const host of ["0.0.0.0", "::", "[::]"]) expect(isAllInterfaces(host)).toBe(true)
    for (const host of ["127.0.0.1", "::1", "localhost", "192.168.1.2"]) expect(isAllInterfaces(host)).toBe(false)
  })

  it("reads --allow-interface-host values in the spelling URLs give hosts, and refuses what is not a bare host", () => {
    expect(canonicalHostName("Internal.Example")).toBe("internal.example")
    for (const spelling of ["127.0.0.2", "0x7f.0.0.2", "2130706434"]) expect(canonicalHostName(spelling), spelling).toBe("127.0.0.2")
    for (const spelling of ["::1", "[::1]", "0:0:0:0:0:0:0:1"]) expect(canonicalHostName(spelling), spelling).toBe("::1")
    for (const text of ["", "host:8080", "http://host", "host/path", "user@host", "host?x", "a b", "[::1]:80"]) {
      expect(canonicalHostName(text), text).toBeUndefined()
    }
  })
})
