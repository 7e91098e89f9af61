// Runs every benchmark in this directory (each top-level *.mjs file but this one), one after
// another, each in its own process. `npm run bench` builds first, then calls this.
import { spawnSync } from "node:child_process"
import { readdirSync } from "node:fs"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"

const here = dirname(fileURLToPath(import.meta.url))
const benches = readdirSync(here, { withFileTypes: true })
  .filter((entry) => entry.isFile() && entry.name.endsWith(".mjs") && entry.name !== "run.mjs")
  .map((entry) => entry.name)
  .sort()

let failed = 0
for (const bench of benches) {
  process.stdout.write(`\n# ${bench}\n`)
  const result = spawnSync(process.execPath, [join(here, bench)], { stdio: "inherit" })
  if (result.status !== 0) {
    failed++
    process.stderr.write(`${bench} failed (exit ${result.status ?? result.signal})\n`)
  }
}
process.exit(failed === 0 ? 0 : 1)
