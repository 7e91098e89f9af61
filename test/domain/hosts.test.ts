import { describe, expect, it } from "vitest"
import { isAllInterfaces, isLoopbackHost } from "../../src/domain/hosts.js"

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
})
