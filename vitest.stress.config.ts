import { defineConfig } from "vitest/config"

// The stress tier, `npm run test:stress` (README: Reliability): the heavy suites (load, floods,
// hostile corpora, many processes) and the suites that take over 20 s on a quiet 2-core machine.
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
