import { defineConfig } from "vitest/config"

// The heavy suites of `npm run test:stress` (README: Reliability): load, floods, hostile corpora.
// One file at a time: each measures the machine's two cores under its own load.
export default defineConfig({
  test: {
    include: ["test/stress/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 30_000,
    fileParallelism: false,
    pool: "forks",
    // Memory is compared between rounds after a full collection.
    poolOptions: { forks: { execArgv: ["--expose-gc"] } }
  }
})
