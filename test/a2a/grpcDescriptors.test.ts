// The generated descriptors (src/a2a/schemas/*_pb.ts) are what scripts/gen-grpc-descriptors.mjs
// makes of the vendored protos (proto/), byte for byte: a changed proto or generator shows here.
import { execFileSync } from "node:child_process"
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"

const out = mkdtempSync(join(tmpdir(), "relay-grpc-descriptors-"))
afterAll(() => rmSync(out, { recursive: true, force: true }))

describe("gRPC descriptors", () => {
  it("are the generator's output for the vendored protos", () => {
    execFileSync(process.execPath, ["scripts/gen-grpc-descriptors.mjs", out], { stdio: "pipe", timeout: 60_000 })
    const generated = readdirSync(out).sort()
    expect(generated).toEqual(["a2aV03_pb.ts", "a2aV1_pb.ts", "rpcErrorDetails_pb.ts", "rpcStatus_pb.ts"])
    for (const file of generated) {
      expect(readFileSync(join(out, file), "utf8"), file).toBe(readFileSync(join("src/a2a/schemas", file), "utf8"))
    }
  }, 60_000)
})
