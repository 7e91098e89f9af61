/**
 * The disk under MCP client configuration: read a file, write it atomically, keep a timestamped
 * backup; and the facts paths and entries are made of (platform, home, project folder, how to
 * start this relay).
 */
import { FileSystem, Path } from "@effect/platform"
import { Context, Effect, Layer, Option } from "effect"
import * as Os from "node:os"
import * as NodePath from "node:path"
import { ClientConfigUnavailable } from "../domain/errors.js"
import type { Launcher, Platform, Whereabouts } from "../domain/mcpClients.js"

export class ClientConfigFiles extends Context.Tag("relay/ClientConfigFiles")<ClientConfigFiles, {
  readonly where: Whereabouts
  /** How an MCP client starts this very relay, with absolute paths. */
  readonly launcher: Launcher
  /** The file's text, or none when it does not exist. */
  readonly read: (file: string) => Effect.Effect<Option.Option<string>, ClientConfigUnavailable>
  /** Replaces the file in one step (temporary file, then rename), creating its folder. */
  readonly write: (file: string, text: string) => Effect.Effect<void, ClientConfigUnavailable>
  /** Copies the file beside itself with a timestamp; returns the copy's path. */
  readonly backup: (file: string) => Effect.Effect<string, ClientConfigUnavailable>
  readonly exists: (file: string) => Effect.Effect<boolean>
}>() {}

/** 2026-01-02T03-04-05-678Z: sortable and valid in file names on every OS. */
export const backupStamp = (date: Date) => date.toISOString().replace(/[:.]/g, "-")

const platformOf = (name: string): Platform => name === "win32" || name === "darwin" ? name : "linux"

/** RELAY_HOME of the installing shell, made absolute, so the assistant's relay uses the terminal's store. */
const storeEnv = (path: Path.Path) => {
  const home = process.env.RELAY_HOME
  return home === undefined || home === "" ? {} : { env: { RELAY_HOME: path.resolve(home) } }
}

const findProgram = (fs: FileSystem.FileSystem, path: Path.Path) =>
  Effect.gen(function*() {
    const script = process.argv[1]
    if (script === undefined) return { command: process.execPath, args: ["mcp"] }
    const main = yield* fs.realPath(script).pipe(Effect.orElseSucceed(() => path.resolve(script)))
    if (process.platform !== "win32") {
      for (const dir of (process.env.PATH ?? "").split(NodePath.delimiter).filter((dir) => path.isAbsolute(dir))) {
        const candidate = path.join(dir, "relay")
        const target = yield* fs.realPath(candidate).pipe(Effect.option)
        if (Option.contains(target, main)) return { command: candidate, args: ["mcp"] }
      }
    }
    return { command: process.execPath, args: [main, "mcp"] }
  })

/** How to start this relay: the absolute `relay` on PATH when it is this installation, else node and this main file. */
const findLauncher = (fs: FileSystem.FileSystem, path: Path.Path) =>
  Effect.map(findProgram(fs, path), (program): Launcher => ({ ...program, ...storeEnv(path) }))

const make = Effect.gen(function*() {
  const fs = yield* FileSystem.FileSystem
  const path = yield* Path.Path
  const unavailable = (file: string, operation: string) => (error: { readonly message: string }) =>
    new ClientConfigUnavailable({ file, operation, reason: error.message })
  const read = (file: string) =>
    fs.exists(file).pipe(
      Effect.flatMap((exists) => exists ? Effect.map(fs.readFileString(file), Option.some) : Effect.succeed(Option.none())),
      Effect.mapError(unavailable(file, "read"))
    )
  const write = (file: string, text: string) =>
    Effect.gen(function*() {
      yield* fs.makeDirectory(path.dirname(file), { recursive: true })
      const temporary = `${file}.${process.pid}.tmp`
      yield* fs.writeFileString(temporary, text)
      // Keep the permissions of the file it replaces (some hold tokens of other servers).
      const mode = yield* fs.stat(file).pipe(Effect.map((info) => info.mode & 0o777), Effect.option)
      if (Option.isSome(mode)) yield* fs.chmod(temporary, mode.value)
      yield* fs.rename(temporary, file)
    }).pipe(Effect.mapError(unavailable(file, "write")))
  const backup = (file: string) => {
    const copy = `${file}.${backupStamp(new Date())}.bak`
    return fs.copyFile(file, copy).pipe(Effect.as(copy), Effect.mapError(unavailable(file, "back up")))
  }
  const exists = (file: string) => fs.exists(file).pipe(Effect.orElseSucceed(() => false))
  return ClientConfigFiles.of({
    where: { platform: platformOf(process.platform), home: Os.homedir(), cwd: process.cwd(), env: process.env },
    launcher: yield* findLauncher(fs, path),
    read,
    write,
    backup,
    exists
  })
})

export const layer = Layer.effect(ClientConfigFiles, make)

/** The real disk with other whereabouts and launcher: tests point home and project at temp folders. */
export const clientConfigFilesAt = (where: Whereabouts, launcher: Launcher) =>
  Layer.effect(ClientConfigFiles, Effect.map(make, (files) => ({ ...files, where, launcher })))
