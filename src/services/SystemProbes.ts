/**
 * What `relay doctor` looks at beyond relay's own files: the Node runtime, the file modes of the
 * state directory, a freshly spawned `relay mcp`, and whether local ports are free.
 */
import { Context, Effect, Layer } from "effect"
import { spawn } from "node:child_process"
import * as Fs from "node:fs"
import * as Net from "node:net"
import * as NodePath from "node:path"
import { ensureDirectory, withFileLock } from "./StateDir.js"

export interface FileMode {
  readonly path: string
  readonly kind: "directory" | "file" | "other"
  /** Permission bits, e.g. 0o600. */
  readonly mode: number
  /** The owner's user id. */
  readonly uid: number
}

/** What a spawned `relay mcp` answered to initialize + tools/list. */
export interface McpProbe {
  readonly tools: number
  /** Lines on stdout that are not JSON-RPC messages (must be none). */
  readonly strayLines: ReadonlyArray<string>
}

export class SystemProbes extends Context.Tag("relay/SystemProbes")<SystemProbes, {
  readonly nodeVersion: string
  /** The directory and the files directly in it; none when the directory does not exist. */
  readonly modes: (dir: string) => Effect.Effect<ReadonlyArray<FileMode>>
  /** This process's user id (undefined where the OS has none, as on Windows). */
  readonly uid: number | undefined
  /**
   * Does in the state directory what every relay command does: creates it (0700) when missing, writes
   * and removes a file, takes and releases the store's lock. Fails with the reason in words.
   */
  readonly useStateDir: (dir: string, storeFile: string) => Effect.Effect<void, string>
  readonly readText: (file: string) => Effect.Effect<string | undefined>
  /** Spawns this relay's `mcp` on stdio and lists its tools; fails with the reason in words. */
  readonly probeMcp: Effect.Effect<McpProbe, string>
  /** Whether 127.0.0.1:port can be bound right now. */
  readonly portFree: (port: number) => Effect.Effect<boolean>
}>() {}

const MCP_PROBE_TIMEOUT_MS = 15_000

const kindOf = (stat: Fs.Stats): FileMode["kind"] => stat.isDirectory() ? "directory" : stat.isFile() ? "file" : "other"

const modes = (dir: string) =>
  Effect.sync(() => {
    if (!Fs.existsSync(dir)) return []
    const top = Fs.statSync(dir)
    const entries = top.isDirectory() ? Fs.readdirSync(dir).map((name) => NodePath.join(dir, name)) : []
    return [dir, ...entries].map((path) => {
      const stat = Fs.statSync(path)
      return { path, kind: kindOf(stat), mode: stat.mode & 0o777, uid: stat.uid }
    })
  }).pipe(Effect.orElseSucceed(() => []))

const requests = [
  {
    jsonrpc: "2.0",
    id: 1,
    method: "initialize",
    params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "relay-doctor", version: "1" } }
  },
  { jsonrpc: "2.0", method: "notifications/initialized" },
  { jsonrpc: "2.0", id: 2, method: "tools/list" }
]

const isJsonRpc = (line: string) => {
  try {
    return (JSON.parse(line) as { jsonrpc?: unknown }).jsonrpc === "2.0"
  } catch {
    return false
  }
}

/** Runs `relay mcp` as an MCP client would and reads its stdout line by line. */
const probeMcp = Effect.async<McpProbe, string>((resume) => {
  const script = process.argv[1]
  if (script === undefined) return resume(Effect.fail("cannot tell where relay's main file is"))
  const child = spawn(process.execPath, [script, "mcp"], { stdio: ["pipe", "pipe", "ignore"] })
  const strayLines: Array<string> = []
  let buffered = ""
  let settled = false
  const finish = (outcome: Effect.Effect<McpProbe, string>) => {
    if (settled) return
    settled = true
    clearTimeout(timer)
    child.kill()
    resume(outcome)
  }
  const timer = setTimeout(() => finish(Effect.fail(`no tools/list answer within ${MCP_PROBE_TIMEOUT_MS / 1000} s`)), MCP_PROBE_TIMEOUT_MS)
  child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
    buffered += chunk
    const lines = buffered.split("\n")
    buffered = lines.pop() ?? ""
    for (const line of lines.filter((line) => line.trim() !== "")) {
      if (!isJsonRpc(line)) {
        strayLines.push(line)
        continue
      }
      const message = JSON.parse(line) as { id?: unknown; result?: { tools?: ReadonlyArray<unknown> }; error?: { message?: string } }
      if (message.id !== 2) continue
      finish(
        message.result?.tools === undefined
          ? Effect.fail(`tools/list failed: ${message.error?.message ?? "no tools in the answer"}`)
          : Effect.succeed({ tools: message.result.tools.length, strayLines })
      )
    }
  })
  child.on("error", (error) => finish(Effect.fail(error.message)))
  child.on("exit", (code) => finish(Effect.fail(`relay mcp exited (code ${code}) before answering tools/list`)))
  child.stdin.on("error", () => undefined)
  child.stdin.write(requests.map((request) => JSON.stringify(request)).join("\n") + "\n")
  return Effect.sync(() => child.kill())
})

const portFree = (port: number) =>
  Effect.async<boolean>((resume) => {
    const server = Net.createServer()
    server.once("error", () => resume(Effect.succeed(false)))
    server.listen({ port, host: "127.0.0.1", exclusive: true }, () => server.close(() => resume(Effect.succeed(true))))
  })

const ERRNO_WORDS: Record<string, string> = {
  EACCES: "permission denied",
  EPERM: "operation not permitted",
  ENOTDIR: "a part of the path is a file, not a directory",
  EROFS: "read-only file system",
  ENOSPC: "no space left on the device"
}

/** "permission denied" for "EACCES: permission denied, mkdir '/x'": the errno's words, without the call and path. */
const reasonOf = (error: unknown) => {
  const message = error instanceof Error ? error.message : String(error)
  const code = (error as NodeJS.ErrnoException).code ?? /^(E[A-Z]+)\b/.exec(message)?.[1]
  return (code !== undefined && ERRNO_WORDS[code]) || message
}

const useStateDir = (dir: string, storeFile: string) =>
  Effect.gen(function*() {
    yield* Effect.mapError(ensureDirectory(dir), (error) => `cannot create or use it: ${reasonOf(error.reason)}`)
    const probe = NodePath.join(dir, `.doctor-${process.pid}.tmp`)
    yield* Effect.try({
      try: () => {
        Fs.writeFileSync(probe, "", { mode: 0o600 })
        Fs.rmSync(probe)
      },
      catch: (error) => `cannot write a file in it: ${reasonOf(error)}`
    })
    yield* Effect.mapError(withFileLock(storeFile, Effect.void), (error) => `cannot take the store's lock: ${reasonOf(error.reason)}`)
  })

const readText = (file: string) =>
  Effect.sync(() => Fs.existsSync(file) ? Fs.readFileSync(file, "utf8") : undefined).pipe(Effect.orElseSucceed(() => undefined))

export const layer = Layer.succeed(
  SystemProbes,
  SystemProbes.of({
    nodeVersion: process.versions.node,
    uid: process.getuid?.(),
    modes,
    useStateDir,
    readText,
    probeMcp,
    portFree
  })
)
