// Files sent with a message are read only as the door's permission allowed them, judged on what was
// opened: what is put in a file's place after the permission looked (a symlink leading out, a FIFO, a
// directory on the way swapped for a link) is refused, never read, and never waited on. The swaps are
// made deterministically, inside the permission, right after it resolved the path.
import { afterAll, describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { execFileSync } from "node:child_process"
import * as Fs from "node:fs"
import * as Path from "node:path"
import { outgoingParts } from "../../src/programs/outgoingParts.js"
import { insideDirectories, type ReadPermission } from "../../src/programs/readPermission.js"
import { storeLayer, tempHome } from "../helpers/stateHome.js"

const home = tempHome()
afterAll(() => home.cleanup())

const root = Path.join(home.parent, "root")
const outside = Path.join(home.parent, "outside")
Fs.mkdirSync(Path.join(root, "sub"), { recursive: true })
Fs.mkdirSync(outside, { recursive: true })
const SECRET = "SECRET OUTSIDE THE ROOT"
Fs.writeFileSync(Path.join(outside, "f.txt"), SECRET)

/** The MCP door's permission over `root`, with `swap` done to the file system right after it allowed a path. */
const swappingAfterCheck = (swap: (realPath: string) => void): ReadPermission => (path) =>
  Effect.tap(insideDirectories(Effect.succeed([root]))(path), (realPath) => Effect.sync(() => swap(realPath)))

const send = (path: string, mayRead: ReadPermission) =>
  outgoingParts({ text: "", sources: [{ _tag: "FilePath", path }], maxRequestBytes: 1_000_000, mayRead }).pipe(
    Effect.provide(storeLayer(home.stateDir)),
    Effect.timeout("5 seconds"),
    Effect.flip
  )

const replaceWith = (target: string, make: (temporary: string) => void) => {
  const temporary = `${target}.swap`
  make(temporary)
  Fs.renameSync(temporary, target)
}

describe("files read to send, judged on what was opened", () => {
  it.live("a symlink leading out of the root, put in the file's place after the check, is refused, not read", () =>
    Effect.gen(function*() {
      const file = Path.join(root, "a.txt")
      Fs.writeFileSync(file, "harmless")
      const error = yield* send(
        file,
        swappingAfterCheck((real) => replaceWith(real, (tmp) => Fs.symlinkSync(Path.join(outside, "f.txt"), tmp)))
      )
      expect(error).toMatchObject({ _tag: "FileUnreadable", reason: expect.stringContaining("changed while it was being opened") })
    }))

  it.live("a FIFO put in the file's place after the check is refused at once, not waited on", () =>
    Effect.gen(function*() {
      const file = Path.join(root, "b.txt")
      Fs.writeFileSync(file, "harmless")
      const error = yield* send(file, swappingAfterCheck((real) => replaceWith(real, (tmp) => execFileSync("mkfifo", [tmp]))))
      expect(error).toMatchObject({ _tag: "FileUnreadable", reason: "it is not a regular file (FIFO)" })
    }))

  it.live("a directory on the way swapped for a link leading out of the root, after the check, is refused, not read", () =>
    Effect.gen(function*() {
      const file = Path.join(root, "sub", "f.txt")
      Fs.writeFileSync(file, "harmless")
      const sub = Path.join(root, "sub")
      const error = yield* send(
        file,
        swappingAfterCheck(() => {
          Fs.renameSync(sub, `${sub}.moved`)
          Fs.symlinkSync(outside, sub)
        })
      )
      expect(error).toMatchObject({ _tag: "FileUnreadable", reason: expect.stringContaining("changed while it was being opened") })
      expect(JSON.stringify(error)).not.toContain(SECRET)
    }))
})

describe("data sent exactly as given", () => {
  const dataOf = (source: { _tag: "DataText"; text: string } | { _tag: "DataFile"; path: string }) =>
    outgoingParts({ text: "", sources: [source], maxRequestBytes: 1_000_000, mayRead: insideDirectories(Effect.succeed([root])) }).pipe(
      Effect.provide(storeLayer(home.stateDir)),
      Effect.timeout("5 seconds")
    )

  it.live("a `__proto__` key in --data is kept as a key of the data, not dropped", () =>
    Effect.gen(function*() {
      const [part] = yield* dataOf({ _tag: "DataText", text: `{"__proto__": {"admin": true}, "name": "Ada"}` })
      expect(JSON.stringify(part)).toBe(`{"data":{"__proto__":{"admin":true},"name":"Ada"}}`)
    }))

  it.live("a `__proto__` key in --data @file is kept too", () =>
    Effect.gen(function*() {
      const file = Path.join(root, "form.json")
      Fs.writeFileSync(file, `[{"__proto__": 1}]`)
      const [part] = yield* dataOf({ _tag: "DataFile", path: file })
      expect(JSON.stringify(part)).toBe(`{"data":[{"__proto__":1}]}`)
    }))

  it.live("text that is not JSON is still refused with where it stops being JSON", () =>
    Effect.gen(function*() {
      const error = yield* Effect.flip(dataOf({ _tag: "DataText", text: `{"a": 1,}` }))
      expect(error).toMatchObject({ _tag: "InvalidInput", reason: expect.stringContaining("line 1, column") })
    }))
})

describe("a file that changes between being measured and read is refused, not sent cut", () => {
  /** The MCP door's permission over `root`, doing `change` when asked about `trigger` (after the first file was measured). */
  const changingOn = (trigger: string, change: () => void): ReadPermission => (path) =>
    Effect.tap(insideDirectories(Effect.succeed([root]))(path), () => Effect.sync(() => path === trigger && change()))

  const sendBoth = (first: string, second: string, mayRead: ReadPermission) =>
    outgoingParts({
      text: "",
      sources: [{ _tag: "FilePath", path: first }, { _tag: "FilePath", path: second }],
      maxRequestBytes: 1_000_000,
      mayRead
    }).pipe(Effect.provide(storeLayer(home.stateDir)), Effect.timeout("5 seconds"))

  for (
    const [how, change] of [
      ["grew", (file: string) => Fs.appendFileSync(file, " and the rest")],
      ["shrank", (file: string) => Fs.truncateSync(file, 3)]
    ] as const
  ) {
    it.live(`a file that ${how} is refused`, () =>
      Effect.gen(function*() {
        const file = Path.join(root, `${how}.log`)
        const other = Path.join(root, `${how}-other.txt`)
        Fs.writeFileSync(file, "the first half")
        Fs.writeFileSync(other, "other")
        const result = yield* Effect.either(sendBoth(file, other, changingOn(other, () => change(file))))
        expect(result._tag).toBe("Left")
        expect(result).toMatchObject({ left: { _tag: "FileUnreadable", path: file, reason: expect.stringContaining("changed") } })
      }))
  }
})
