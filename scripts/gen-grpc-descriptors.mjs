#!/usr/bin/env node
// Generates the protobuf descriptors relay's gRPC binding runs on, src/a2a/schemas/*_pb.ts, from
// the vendored protos in proto/ (proto/README.md says where each comes from), with buf and
// protoc-gen-es from node_modules: no network. The A2A protos' google/api annotations (HTTP
// routes, field behaviour) are stripped first: they change nothing on the wire, and leaving them
// would mean vendoring googleapis too.
//
// Usage: node scripts/gen-grpc-descriptors.mjs [output directory]   (default src/a2a/schemas)
// test/a2a/grpcDescriptors.test.ts runs it into a temporary directory and compares.
import { execFileSync } from "node:child_process"
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const output = resolve(process.argv[2] ?? join(root, "src/a2a/schemas"))

/** Vendored proto → the generated file's name in src/a2a/schemas. */
const FILES = {
  "lf/a2a/v1/a2a.proto": "a2aV1_pb.ts",
  "a2a/v1/a2a.proto": "a2aV03_pb.ts",
  "google/rpc/status.proto": "rpcStatus_pb.ts",
  "google/rpc/error_details.proto": "rpcErrorDetails_pb.ts"
}

/** Removes `option (google.api.…) = …;` (braced values included), field annotations and the imports. */
const stripGoogleApi = (proto) => {
  let text = proto.replace(/^import "google\/api\/[^"]+";\n/gm, "")
  for (;;) {
    const start = text.search(/option \(google\.api\.[a-z_]+\)\s*=/)
    if (start === -1) break
    let index = text.indexOf("=", start) + 1
    while (/\s/.test(text[index])) index++
    if (text[index] === "{") {
      let depth = 0
      for (; index < text.length; index++) {
        if (text[index] === "{") depth++
        else if (text[index] === "}" && --depth === 0) break
      }
    }
    const end = text.indexOf(";", index) + 1
    const lineStart = text.lastIndexOf("\n", start) + 1
    const onlyThis = text.slice(lineStart, start).trim() === "" && text[end] === "\n"
    text = onlyThis ? text.slice(0, lineStart) + text.slice(end + 1) : text.slice(0, start) + text.slice(end)
  }
  // `[(google.api.field_behavior) = REQUIRED]`, alone or beside other options such as json_name.
  text = text.replace(/\s*\[\s*\(google\.api\.field_behavior\)\s*=\s*[A-Z_]+\s*\]/g, "")
  text = text.replace(/\(google\.api\.field_behavior\)\s*=\s*[A-Z_]+\s*,\s*/g, "")
  // A `returns` left alone on its line by a removed option block ends with `{}` or `{\n  }`.
  text = text.replace(/\)\s*\{\s*\}/g, ");")
  return text
}

const work = mkdtempSync(join(tmpdir(), "relay-grpc-gen-"))
try {
  for (const file of Object.keys(FILES)) {
    const target = join(work, "proto", file)
    mkdirSync(dirname(target), { recursive: true })
    writeFileSync(target, stripGoogleApi(readFileSync(join(root, "proto", file), "utf8")))
  }
  writeFileSync(join(work, "proto", "buf.yaml"), "version: v2\n")
  const plugin = join(root, "node_modules/@bufbuild/protoc-gen-es/bin/protoc-gen-es")
  writeFileSync(
    join(work, "buf.gen.yaml"),
    [
      "version: v2",
      "plugins:",
      `  - local: ["node", ${JSON.stringify(plugin)}]`,
      "    out: out",
      "    opt: [target=ts, import_extension=js]",
      ""
    ].join("\n")
  )
  const buf = join(root, "node_modules/@bufbuild/buf/bin/buf")
  execFileSync(process.execPath, [buf, "generate", "proto", "--template", "buf.gen.yaml"], { cwd: work, stdio: "inherit" })
  mkdirSync(output, { recursive: true })
  for (const [file, name] of Object.entries(FILES)) {
    copyFileSync(join(work, "out", file.replace(/\.proto$/, "_pb.ts")), join(output, name))
  }
} finally {
  rmSync(work, { recursive: true, force: true })
}
