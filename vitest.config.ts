import { defineConfig } from "vitest/config"

// Tests in tiers, chosen by folder so a new file lands in its tier by where it lives
// (docs/architecture.md: Tests and figures):
// - unit (`npm run test:unit`): the domain, the protocol model, the programs composed with test
//   layers, and the docs held to the tree; no build, no spawned CLI, well under 90 s.
// - integration: every other folder: the built CLI spawned, servers and peers on loopback, whole flows.
// `npm test` runs both; the heavy suites run apart in `npm run test:stress` (vitest.stress.config.ts).
const UNIT_FOLDERS = ["test/domain", "test/a2a", "test/programs", "test/docs"]

/** Integration files that replace a module (vi.mock): they get modules of their own. */
const OWN_MODULES = ["test/servers/webhook.test.ts"]

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 30_000,
    // Spawned CLIs and in-process peers share two cores; keep file parallelism modest.
    maxWorkers: 2,
    minWorkers: 1,
    projects: [
      {
        extends: true,
        test: { name: "unit", include: UNIT_FOLDERS.map((folder) => `${folder}/**/*.test.ts`) }
      },
      {
        extends: true,
        test: {
          name: "integration",
          include: ["test/**/*.test.ts"],
          exclude: [...UNIT_FOLDERS.map((folder) => `${folder}/**`), "test/stress/**", "**/node_modules/**", ...OWN_MODULES],
          // Files share a worker's modules: src/ and Effect are imported once per worker, not once per
          // file (2 cores: this tier's collect took 178 s alone; both tiers' now take 148 s, and the whole
          // of `vitest run` 6 min, ~1.5 less). A file's state is its own through its hooks
          // (test/servers/storeBackends.ts says how).
          isolate: false
        }
      },
      {
        extends: true,
        test: { name: "integration-isolated", include: OWN_MODULES }
      }
    ]
  }
})
