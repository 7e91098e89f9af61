/**
 * The house rules of docs/architecture.md ("The layers"), read from the imports of src/: imports
 * point down a floor or stay on it, never up; no module reaches itself through others; a door
 * imports another door only from the composition root the notes name. Type-only and dynamic
 * imports count too: a type import still ties a module to another's meaning, and a dynamic one
 * to its code.
 */
import * as Fs from "node:fs"
import * as Path from "node:path"
import ts from "typescript"
import { describe, expect, it } from "vitest"

const root = Path.resolve(import.meta.dirname, "../..")

/** The floors, lowest first; a file under src/ itself (main.ts, app.ts) is above them all, but version.ts, a constant. */
const FLOORS = ["a2a", "domain", "services", "programs", "doors"] as const
const DOORS = ["cli", "mcp", "servers"]

type Graph = ReadonlyMap<string, ReadonlyArray<string>>

const sourceFiles = (): ReadonlyArray<string> =>
  Fs.readdirSync(Path.join(root, "src"), { recursive: true, encoding: "utf8" })
    .filter((file) => file.endsWith(".ts"))
    .map((file) => `src/${file.split(Path.sep).join("/")}`)

/** Each file's imports of other files of src/, as paths from the repository root. */
const importGraph = (files: ReadonlyArray<string>): Graph =>
  new Map(files.map((file) => {
    const { importedFiles } = ts.preProcessFile(Fs.readFileSync(Path.join(root, file), "utf8"), true, true)
    const local = importedFiles.map((imported) => imported.fileName).filter((name) => name.startsWith("."))
    const paths = local.map((name) => Path.posix.normalize(Path.posix.join(Path.posix.dirname(file), name.replace(/\.js$/, ".ts"))))
    // What lies outside src/ (package.json for the version) is no floor of the house.
    return [file, paths.filter((path) => path.startsWith("src/"))]
  }))

const folderOf = (file: string): string => file.split("/")[1]!

/** A file's floor: its index in FLOORS, a door's the top one, src/'s own files above (version.ts at the bottom). */
const floorOf = (file: string): number => {
  if (file === "src/version.ts") return -1
  const folder = folderOf(file)
  if (folder.endsWith(".ts")) return FLOORS.length
  return DOORS.includes(folder) ? FLOORS.indexOf("doors") : FLOORS.indexOf(folder as (typeof FLOORS)[number])
}

const doorOf = (file: string): string | undefined => (DOORS.includes(folderOf(file)) ? folderOf(file) : undefined)

/** The files docs/architecture.md names as the composition root, where doors may meet. */
const compositionRoot = (): ReadonlyArray<string> => {
  const doc = Fs.readFileSync(Path.join(root, "docs/architecture.md"), "utf8")
  const paragraph = /\*\*The composition root\*\*[^\n]*(?:\n(?!\n)[^\n]*)*/.exec(doc)?.[0] ?? ""
  return paragraph.match(/src\/[\w./-]+\.ts/g) ?? []
}

const edges = (graph: Graph) => [...graph].flatMap(([from, targets]) => targets.map((to) => ({ from, to })))

const importsUp = (graph: Graph) =>
  edges(graph).filter(({ from, to }) => floorOf(to) > floorOf(from)).map(({ from, to }) => `${from} -> ${to}`)

const doorsSideways = (graph: Graph, allowed: ReadonlyArray<string>) =>
  edges(graph)
    .filter(({ from, to }) =>
      doorOf(from) !== undefined && doorOf(to) !== undefined && doorOf(from) !== doorOf(to) && !allowed.includes(from)
    )
    .map(({ from, to }) => `${from} -> ${to}`)

/** The groups of files that import each other round (Tarjan's strongly connected components of more than one file). */
const circles = (graph: Graph): ReadonlyArray<ReadonlyArray<string>> => {
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: Array<string> = []
  const onStack = new Set<string>()
  const found: Array<ReadonlyArray<string>> = []
  const visit = (file: string) => {
    index.set(file, index.size)
    low.set(file, index.get(file)!)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!graph.has(next)) continue
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!))
    }
    if (low.get(file) !== index.get(file)) return
    const group: Array<string> = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      group.push(member)
    } while (member !== file)
    if (group.length > 1) found.push(group.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return found
}

describe("the imports of src/", () => {
  const graph = importGraph(sourceFiles())

  it("reads every file and its imports, static, type-only and dynamic", () => {
    expect(graph.size).toBeGreaterThan(150)
    expect(graph.get("src/main.ts")).toContain("src/app.ts")
    expect(graph.get("src/cli/root.ts")).toContain("src/cli/messageCommands.ts")
  })

  it("finds what breaks each rule in a graph made to break them", () => {
    const broken: Graph = new Map([
      ["src/a2a/x.ts", ["src/domain/y.ts"]],
      ["src/domain/y.ts", ["src/domain/z.ts"]],
      ["src/domain/z.ts", ["src/domain/y.ts"]],
      ["src/mcp/t.ts", ["src/servers/s.ts"]],
      ["src/cli/c.ts", ["src/mcp/t.ts"]],
      ["src/servers/s.ts", []]
    ])
    expect(importsUp(broken)).toEqual(["src/a2a/x.ts -> src/domain/y.ts"])
    expect(circles(broken)).toEqual([["src/domain/y.ts", "src/domain/z.ts"]])
    expect(doorsSideways(broken, ["src/cli/c.ts"])).toEqual(["src/mcp/t.ts -> src/servers/s.ts"])
  })

  it("point down a floor or stay on it, never up", () => {
    expect(importsUp(graph)).toEqual([])
  })

  it("make no circles", () => {
    expect(circles(graph)).toEqual([])
  })

  it("join doors only in the composition root docs/architecture.md names", () => {
    const allowed = compositionRoot()
    expect(allowed.length).toBeGreaterThan(0)
    expect(allowed.every((file) => graph.has(file))).toBe(true)
    expect(doorsSideways(graph, allowed)).toEqual([])
  })
})
