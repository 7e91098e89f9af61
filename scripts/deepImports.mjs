// An esbuild plugin: `import { Effect, Schema } from "effect"` in our sources becomes
// `import * as Effect from "effect/Effect"; import * as Schema from "effect/Schema"` before bundling.
//
// Why: esbuild cannot drop the unused modules behind a package's `export * as X` barrel, so a
// barrel import loads most of the package, and every command parses it at start-up (figures:
// bench/README.md).
// The sources keep the idiomatic barrel imports; the type checker and vitest read them as written.
import { existsSync } from "node:fs"
import { readFile } from "node:fs/promises"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"

const BARRELS = [
  "effect",
  "@effect/cli",
  "@effect/platform",
  "@effect/platform-node",
  "@effect/ai",
  "@effect/ai-openai",
  "@effect/experimental"
]
const require = createRequire(import.meta.url)

/** The directory of a package's ES modules, where `<pkg>/<Name>` resolves to `<Name>.js`. */
const esmDir = (pkg) => join(dirname(require.resolve(`${pkg}/package.json`)), "dist", "esm")
const moduleDirs = new Map(BARRELS.map((pkg) => [pkg, esmDir(pkg)]))

// The few names effect's barrel exports that are functions of effect/Function, not modules.
const FUNCTION_EXPORTS = new Set(["absurd", "flow", "hole", "identity", "pipe", "unsafeCoerce"])

const IMPORT = /import\s*\{([^}]*)\}\s*from\s*"(effect|@effect\/[a-z-]+)"/g

const rewrite = (statement, names, pkg) => {
  const dir = moduleDirs.get(pkg)
  if (dir === undefined) return statement
  const deep = []
  const rest = []
  for (const raw of names.split(",").map((name) => name.trim()).filter(Boolean)) {
    if (raw.startsWith("type ")) continue
    const [name, alias = name] = raw.split(/\s+as\s+/)
    if (pkg === "effect" && FUNCTION_EXPORTS.has(name)) deep.push(`import { ${name} as ${alias} } from "effect/Function"`)
    else if (existsSync(join(dir, `${name}.js`))) deep.push(`import * as ${alias} from "${pkg}/${name}"`)
    else rest.push(raw)
  }
  if (rest.length > 0) deep.push(`import { ${rest.join(", ")} } from "${pkg}"`)
  // Same number of lines as the original, so source maps still point at the right line.
  return deep.join("; ") + "\n".repeat(statement.split("\n").length - 1)
}

export const deepImports = {
  name: "deep-imports",
  setup(build) {
    build.onLoad({ filter: /[/\\]src[/\\].*\.ts$/ }, async (args) => {
      const source = await readFile(args.path, "utf8")
      return { contents: source.replace(IMPORT, (statement, names, pkg) => rewrite(statement, names, pkg)), loader: "ts" }
    })
  }
}
